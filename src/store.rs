//! The one module that runs SQL against the extension's tables. Every statement names its
//! relations with the schema and filters by tenant explicitly: superusers bypass row-level
//! security, and the extension must not.

use pgrx::prelude::*;

use crate::errors;

fn spi_error(e: pgrx::spi::Error) -> ! {
    errors::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("pg_todos: {e}"), "")
}

/// Raises 42704 unless `tenant` is a row of `todo.tenants` (as the caller can see it).
pub fn require_registered(tenant: &str) {
    let found = Spi::get_one_with_args::<bool>(
        "SELECT EXISTS (SELECT 1 FROM todo.tenants WHERE tenant_id = $1)",
        &[tenant.into()],
    )
    .unwrap_or_else(|e| spi_error(e));
    if found != Some(true) {
        errors::unknown_tenant(tenant);
    }
}

/// The next todo id of `tenant`: one more than the last it was given. Ids are counted per
/// tenant in `todo.counters`, so they reveal nothing about other tenants. The counter row
/// stays locked until the transaction ends, which serializes id allocation within one tenant
/// (and only within it).
pub fn next_todo_id(tenant: &str) -> i64 {
    Spi::get_one_with_args::<i64>(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, 1)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = c.last_id + 1
         RETURNING last_id",
        &[tenant.into()],
    )
    .unwrap_or_else(|e| spi_error(e))
    .expect("RETURNING last_id is never NULL")
}

/// Moves `tenant`'s counter past an id the writer chose itself (an import or a restore), so
/// the next allocated id never collides with it.
pub fn claim_todo_id(tenant: &str, id: i64) {
    Spi::run_with_args(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = greatest(c.last_id, excluded.last_id)
         WHERE c.last_id < excluded.last_id",
        &[tenant.into(), id.into()],
    )
    .unwrap_or_else(|e| spi_error(e));
}
