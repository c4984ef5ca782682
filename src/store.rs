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

/// Call first in a (sub)transaction that is going to write. pgrx runs SPI read-only, on the
/// snapshot of the calling statement, until the current (sub)transaction has an xid; a write
/// command inside a fresh subtransaction would then not see what the commands before it in
/// the same message wrote. Taking the xid up front makes its lookups see them.
pub fn begin_write() {
    // SAFETY: assigns the current (sub)transaction's xid, or raises (e.g. on a standby).
    unsafe {
        pg_sys::GetCurrentTransactionId();
    }
}

// ---- the todos in a conversation's scope (the writ, the open block) ----

use crate::status::Status;
use crate::writ::render::Row;

/// Scope: the conversation's rows plus the tenant-wide pool; with no conversation, the pool.
const SCOPE: &str = "tenant_id = $1 AND (conversation_id = $2 OR conversation_id IS NULL)";

fn rows(sql: &str, args: &[pgrx::datum::DatumWithOid<'_>]) -> Vec<Row> {
    Spi::connect(|client| {
        client
            .select(sql, None, args)?
            .map(|r| {
                let status: String = r.get(3)?.unwrap_or_default();
                Ok(Row {
                    id: r.get(1)?.unwrap_or_default(),
                    subject: r.get(2)?.unwrap_or_default(),
                    status: Status::parse(&status).unwrap_or(Status::Pending),
                    tenant_wide: r.get(4)?.unwrap_or(false),
                })
            })
            .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
    .unwrap_or_else(|e| spi_error(e))
}

/// The todos in scope, in position order; only the open ones unless `all`.
pub fn scope_rows(tenant: &str, conversation: Option<&str>, all: bool) -> Vec<Row> {
    let sql = format!(
        "SELECT id, subject, status, conversation_id IS NULL FROM todo.todos
          WHERE {SCOPE} {} ORDER BY position, id",
        if all { "" } else { "AND status IN ('pending', 'in_progress')" }
    );
    rows(&sql, &[tenant.into(), conversation.into()])
}

/// One todo in scope, whatever its status.
pub fn find_in_scope(tenant: &str, conversation: Option<&str>, id: i64) -> Option<Row> {
    let sql = format!(
        "SELECT id, subject, status, conversation_id IS NULL FROM todo.todos WHERE {SCOPE} AND id = $3"
    );
    rows(&sql, &[tenant.into(), conversation.into(), id.into()]).pop()
}

/// Inserts a todo (agent and turn from the context) and returns its id.
pub fn insert_todo(tenant: &str, conversation: Option<&str>, subject: &str, description: Option<&str>) -> i64 {
    Spi::get_one_with_args::<i64>(
        "INSERT INTO todo.todos (tenant_id, conversation_id, subject, description)
         VALUES ($1, $2, $3, $4) RETURNING id",
        &[tenant.into(), conversation.into(), subject.into(), description.into()],
    )
    .unwrap_or_else(|e| spi_error(e))
    .expect("RETURNING id is never NULL")
}

pub fn set_status(tenant: &str, id: i64, status: Status) {
    Spi::run_with_args(
        "UPDATE todo.todos SET status = $3 WHERE tenant_id = $1 AND id = $2",
        &[tenant.into(), id.into(), status.as_str().into()],
    )
    .unwrap_or_else(|e| spi_error(e));
}

pub fn set_subject(tenant: &str, id: i64, text: &str) {
    Spi::run_with_args(
        "UPDATE todo.todos SET subject = $3 WHERE tenant_id = $1 AND id = $2",
        &[tenant.into(), id.into(), text.into()],
    )
    .unwrap_or_else(|e| spi_error(e));
}

pub fn set_description(tenant: &str, id: i64, text: &str) {
    Spi::run_with_args(
        "UPDATE todo.todos SET description = $3 WHERE tenant_id = $1 AND id = $2",
        &[tenant.into(), id.into(), text.into()],
    )
    .unwrap_or_else(|e| spi_error(e));
}

pub fn delete_todo(tenant: &str, id: i64) {
    Spi::run_with_args("DELETE FROM todo.todos WHERE tenant_id = $1 AND id = $2", &[tenant.into(), id.into()])
        .unwrap_or_else(|e| spi_error(e));
}
