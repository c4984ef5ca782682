//! Change notifications: the tenant's LISTEN channel and the NOTIFY itself. `runner` sends
//! one per channel at the end of each call.

use std::cell::RefCell;
use std::ffi::CString;

use pgrx::pg_sys;

use super::one;

extern "C-unwind" {
    /// `commands/async.h`: what `pg_notify()` calls, without a statement around it.
    fn Async_Notify(channel: *const std::ffi::c_char, payload: *const std::ffi::c_char);
}

thread_local! {
    /// The last tenant whose channel was asked for, and that channel.
    static LAST: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// The LISTEN channel of a tenant's change notifications: `todo_` and the md5 of its id.
pub fn channel(tenant: &str) -> String {
    if let Some(channel) = LAST.with(|l| l.borrow().as_ref().filter(|(t, _)| t == tenant).map(|(_, c)| c.clone())) {
        return channel;
    }
    let channel = one::<String>("SELECT 'todo_' || md5($1)", &[tenant.into()], false).expect("md5 is never NULL");
    LAST.with(|l| *l.borrow_mut() = Some((tenant.to_string(), channel.clone())));
    channel
}

/// Queues a change notification on the tenant's channel; PostgreSQL delivers it at commit
/// (never after a rollback). The payload carries ids only: `{"conversation_id": …, "ids": […]}`.
pub fn notify(tenant: &str, conversation: Option<&str>, ids: &[i64]) {
    let payload = serde_json::json!({ "conversation_id": conversation, "ids": ids }).to_string();
    let channel = CString::new(channel(tenant)).expect("an md5 has no NUL");
    // a conversation id with a NUL byte never reaches here: text cannot hold one
    let payload = CString::new(payload).expect("JSON text has no NUL");
    // SAFETY: what pg_notify() does: refuse on a standby, then queue; Async_Notify copies the
    // two NUL-terminated strings and raises (through the guard) on a payload too long.
    unsafe {
        pg_sys::PreventCommandDuringRecovery(c"NOTIFY".as_ptr());
        pg_sys::ffi::pg_guard_ffi_boundary(|| Async_Notify(channel.as_ptr(), payload.as_ptr()))
    }
}
