//! The offers of a list's next task (`offers`: the rules) kept in the list's offers lock row,
//! `offers:<list>` of `todo.locks` (`offers` for the tenant-wide pool): the callers asking
//! for the next task of one list take turns on it, so each sees the offers made before.

use pgrx::JsonB;
use serde_json::Value;

use super::exec;

/// The lock row's name of the offers of list `conversation` (None: the pool).
fn row_name(conversation: Option<&str>) -> String {
    conversation.map_or_else(|| "offers".to_string(), |c| format!("offers:{c}"))
}

/// Locks the offers of list `conversation` of `tenant` until the transaction ends (adding the
/// row the first time, `locks::locked_row`) and reads them: a JSON object (`offers`). None when the transaction
/// may not write (read only) or the database has no lock rows yet: then no offer is made.
pub fn lock(tenant: &str, conversation: Option<&str>) -> Option<Value> {
    // SAFETY: reads whether the current transaction is read only.
    if unsafe { pgrx::pg_sys::XactReadOnly } || !super::locks::has_lock_rows() {
        return None;
    }
    let name = row_name(conversation);
    let lock =
        "SELECT coalesce(l.properties, '{}') FROM todo.locks l WHERE l.tenant_id = $1 AND l.name = $2 FOR UPDATE";
    Some(super::locks::locked_row::<JsonB>(tenant, &name, lock).0)
}

/// Writes the offers of list `conversation` of `tenant` (locked by `lock`).
pub fn write(tenant: &str, conversation: Option<&str>, offers: Value) {
    let name = row_name(conversation);
    super::roles::as_owner(|| {
        exec(
            "UPDATE todo.locks SET properties = $3 WHERE tenant_id = $1 AND name = $2 RETURNING true",
            &[tenant.into(), name.as_str().into(), JsonB(offers).into()],
        )
    });
}
