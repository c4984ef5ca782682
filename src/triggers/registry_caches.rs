//! The statement triggers of `todo.tenants` and `todo.roles`: the backends that remember which
//! tenants are registered, and which roles are bound to a tenant, forget it when they change.

use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByRust, PgTrigger};

use crate::store;

/// `AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.tenants FOR EACH STATEMENT`: the
/// backends that remember which tenants are registered forget it (`store::ids`).
#[pg_trigger(sql = false)]
fn tenants_changed<'a>(
    _trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, pgrx::heap_tuple::PgHeapTupleError> {
    // by name, not the trigger's relation: on Citus it fires on a placement of the reference table
    store::ids::announce_tenants_changed(store::catalog::relid(c"tenants"));
    Ok(None)
}

/// `AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.roles FOR EACH STATEMENT`: the
/// backends that remember which roles are bound to a tenant forget it (`store::roles`).
#[pg_trigger(sql = false)]
fn roles_changed<'a>(
    _trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, pgrx::heap_tuple::PgHeapTupleError> {
    store::roles::announce_changed();
    Ok(None)
}
