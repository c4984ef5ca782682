//! Every lock a call takes, and the one order it takes them in, so that writers of one tenant
//! never deadlock each other:
//!
//! 1. the list lock of a whole-list replace (`lock_list`: a row of `todo.locks`, per tenant
//!    and conversation);
//! 2. a range of the tenant's ids (`ids::reserve_todo_ids`, `ids::hold_ids`), taken with
//!    SKIP LOCKED (never waiting), and only when no range has room the tenant's counter row:
//!    a call that will add todos takes them before it locks any todo;
//! 3. todo rows, in ascending id order (`rows`, `read::lock`): a call that changes several
//!    todos locks them all at once, `FOR NO KEY UPDATE` (which never conflicts with the key
//!    share locks that inserting a subtask or a dependency takes on its todos);
//! 4. the tenant's dependency-graph lock (`lock_dependencies`: a row of `todo.locks`), last.
//!
//! Claim-next takes its row with SKIP LOCKED and never waits for one. A tracker's "next task"
//! (`offers::lock`) takes the list's offers row and no other lock.

use pgrx::prelude::*;

use super::{exec, one};

/// Serializes whole-list replaces of one list (a tenant's conversation) until the
/// transaction ends, so two concurrent replaces never interleave: the second reads the list
/// the first wrote. The lock row `list:<conversation>` of the tenant (`lock_row`).
pub fn lock_list(tenant: &str, conversation: &str) {
    lock_row(tenant, &format!("list:{conversation}"), || {
        exec("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", &[tenant.into(), conversation.into()]);
    });
}

/// Serializes changes to a tenant's dependency graph until the transaction ends, so that two
/// concurrent blocks can never close a cycle between them: the lock row `dependencies` of the
/// tenant (`lock_row`).
pub fn lock_dependencies(tenant: &str) {
    lock_row(tenant, "dependencies", || {
        exec("SELECT pg_advisory_xact_lock(hashtextextended('todo.dependencies ' || $1, 0))", &[tenant.into()]);
    });
}

/// Locks row `name` of `tenant` in `todo.locks` (`FOR UPDATE`, until the transaction ends),
/// adding it the first time. A row lock, not an advisory lock: no other role can take it
/// (only the extension's owner reads the table), so no one can hold another tenant's lock,
/// by accident of a hash or on purpose. A database not yet updated to 0.9.0 has no such
/// table: `advisory` takes the lock the old way.
///
/// Two writers adding the same row: the second's INSERT waits for the first to end and then
/// finds it, and locks it (READ COMMITTED: the last statement sees it; REPEATABLE READ and
/// SERIALIZABLE: the INSERT raises a serialization failure, to retry).
fn lock_row(tenant: &str, name: &str, advisory: impl FnOnce()) {
    if !has_lock_rows() {
        return advisory();
    }
    let _: bool =
        locked_row(tenant, name, "SELECT true FROM todo.locks l WHERE l.tenant_id = $1 AND l.name = $2 FOR UPDATE");
}

/// Locks row `name` of the tenant's lock rows as `lock_row` does (adding it the first time)
/// with `lock`, a SELECT of it (`$1` the tenant, `$2` the name) `FOR UPDATE`, and gives what
/// `lock` selects. The database must have lock rows (`has_lock_rows`).
pub(super) fn locked_row<T: FromDatum + IntoDatum>(tenant: &str, name: &str, lock: &str) -> T {
    super::roles::as_owner(|| {
        if let Some(found) = one::<T>(lock, &[tenant.into(), name.into()], true) {
            return found;
        }
        exec(
            "INSERT INTO todo.locks (tenant_id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING true",
            &[tenant.into(), name.into()],
        );
        one::<T>(lock, &[tenant.into(), name.into()], true).unwrap_or_else(|| {
            crate::errors::raise(
                PgSqlErrorCode::ERRCODE_T_R_SERIALIZATION_FAILURE,
                format!("could not take the lock \"{name}\" of tenant \"{tenant}\""),
                "retry the transaction",
            )
        })
    })
}

/// Whether the database has `todo.locks` (a database not yet updated to 0.9.0 has not).
pub fn has_lock_rows() -> bool {
    super::catalog::relid(c"locks") != pg_sys::InvalidOid
}

/// Locks the todos `ids` of the tenant (those that exist) in ascending id order, `FOR NO KEY
/// UPDATE`, until the transaction ends: a call that will change several todos takes them all
/// first, in one order.
pub fn rows(tenant: &str, ids: &[i64]) {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() > 1 {
        exec(
            "SELECT t.id FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = ANY($2) ORDER BY t.id FOR NO KEY UPDATE",
            &[tenant.into(), ids.into()],
        );
    }
}
