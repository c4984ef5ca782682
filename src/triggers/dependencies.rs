//! The before-insert trigger of `todo.dependencies`: the graph of waits stays acyclic,
//! whoever writes it.

use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByRust, PgTrigger};

use crate::claims;
use crate::errors;
use crate::store;

use super::row::{get, restoring, rows, subject_to_rls, Running};

/// `BEFORE INSERT ON todo.dependencies FOR EACH ROW`: the graph stays acyclic whoever writes
/// it (the surfaces check first, for their own error codes; this holds for plain SQL too).
/// Takes the tenant's dependency lock until the transaction ends, then refuses an edge that
/// would close a cycle through dependencies or subtasks (22023, the path in the message).
/// The edge `ops::dependencies::block` has just checked under that lock is not searched
/// again (`store::edges::checked_by_operation`). Under REPEATABLE READ the snapshot
/// predates the lock and could miss a concurrent edge: refused (0A000), whoever inserts.
/// A restore (`row_security = off`) brings the graph as it was.
#[pg_trigger(sql = false)]
fn dependencies_before_insert<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, pgrx::heap_tuple::PgHeapTupleError> {
    let _running = Running::on(trigger);
    let new = trigger.new().expect("BEFORE INSERT row trigger has NEW").into_owned();
    if restoring() {
        return Ok(Some(new));
    }
    let cols = rows(trigger).1.expect("BEFORE INSERT row trigger has NEW");
    let (tenant, id, on): (Option<String>, Option<i64>, Option<i64>) =
        (get(&cols, "tenant_id"), get(&cols, "todo_id"), get(&cols, "depends_on"));
    let (Some(tenant), Some(id), Some(on)) = (tenant, id, on) else {
        return Ok(Some(new)); // NOT NULL rejects it
    };
    // Before any lock: a writer under row-level security may only add edges of the tenant in
    // context, refused with the policy's own words, so that neither the lock (a wait while
    // that tenant edits) nor a foreign key's answer tells whether another tenant exists.
    if subject_to_rls(trigger) && tenant != store::scope::tenant() {
        errors::rls_violation("dependencies");
    }
    if id == on {
        return Ok(Some(new)); // the CHECK constraint rejects it
    }
    // SAFETY: reads this backend's isolation level.
    if unsafe { pg_sys::XactIsoLevel } == pg_sys::XACT_REPEATABLE_READ as i32 {
        errors::raise(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            "todo.dependencies: a dependency cannot be added in a REPEATABLE READ transaction",
            "its snapshot could miss a concurrent dependency that closes a cycle: use READ COMMITTED or SERIALIZABLE",
        );
    }
    if store::edges::checked_by_operation(&tenant, id, on) {
        return Ok(Some(new)); // checked by the operation inserting it, which holds the lock
    }
    store::locks::lock_dependencies(&tenant);
    if let Some(path) = store::edges::dependency_path(&tenant, on, id) {
        errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            claims::EdgeError::Cycle { id, on, path }.to_string(),
            "todo.dependencies lists the edges",
        );
    }
    Ok(Some(new))
}
