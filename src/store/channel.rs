//! Change notifications: the tenant's LISTEN channel and the NOTIFY itself. `runner` sends
//! one per channel at the end of each call.

use super::{exec, one};

/// The LISTEN channel of a tenant's change notifications: `todo_` and the md5 of its id.
pub fn channel(tenant: &str) -> String {
    one::<String>("SELECT 'todo_' || md5($1)", &[tenant.into()], false).expect("md5 is never NULL")
}

/// Queues a change notification on the tenant's channel; PostgreSQL delivers it at commit
/// (never after a rollback). The payload carries ids only: `{"conversation_id": …, "ids": […]}`.
pub fn notify(tenant: &str, conversation: Option<&str>, ids: &[i64]) {
    let payload = serde_json::json!({ "conversation_id": conversation, "ids": ids }).to_string();
    exec("SELECT pg_notify('todo_' || md5($1), $2)", &[tenant.into(), payload.into()]);
}
