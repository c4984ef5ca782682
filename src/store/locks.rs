//! Every lock a call takes, and the one order it takes them in, so that writers of one tenant
//! never deadlock each other:
//!
//! 1. the list lock of a whole-list replace (`lock_list`: advisory, per tenant and
//!    conversation);
//! 2. a range of the tenant's ids (`ids::reserve_todo_ids`, `ids::hold_ids`), taken with
//!    SKIP LOCKED (never waiting), and only when no range has room the tenant's counter row:
//!    a call that will add todos takes them before it locks any todo;
//! 3. todo rows, in ascending id order (`rows`, `read::lock`): a call that changes several
//!    todos locks them all at once, `FOR NO KEY UPDATE` (which never conflicts with the key
//!    share locks that inserting a subtask or a dependency takes on its todos);
//! 4. the tenant's dependency-graph lock (`lock_dependencies`: advisory), last.
//!
//! Claim-next takes its row with SKIP LOCKED and never waits for one.

use super::exec;

/// Serializes whole-list replaces of one list (a tenant's conversation) until the
/// transaction ends, so two concurrent replaces never interleave: the second reads the list
/// the first wrote. A transaction-level advisory lock on (hash of tenant, hash of
/// conversation); a hash collision only makes two unrelated replaces wait for each other.
pub fn lock_list(tenant: &str, conversation: &str) {
    exec("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", &[tenant.into(), conversation.into()]);
}

/// Serializes changes to a tenant's dependency graph until the transaction ends, so that two
/// concurrent blocks can never close a cycle between them (a one-key advisory lock: a
/// different lock space from `lock_list`'s two-key locks).
pub fn lock_dependencies(tenant: &str) {
    exec("SELECT pg_advisory_xact_lock(hashtextextended('todo.dependencies ' || $1, 0))", &[tenant.into()]);
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
