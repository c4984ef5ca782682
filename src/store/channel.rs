//! Change notifications: the tenant's LISTEN channel and the NOTIFY itself. `runner` sends
//! one per channel at the end of each call.

use std::ffi::CString;

use pgrx::pg_sys;

extern "C-unwind" {
    /// `commands/async.h`: what `pg_notify()` calls, without a statement around it.
    fn Async_Notify(channel: *const std::ffi::c_char, payload: *const std::ffi::c_char);
    /// `common/md5.h`: what `md5()` calls; 32 hex digits and a NUL into `hexsum`.
    fn pg_md5_hash(
        buff: *const std::ffi::c_void,
        len: usize,
        hexsum: *mut std::ffi::c_char,
        errstr: *mut *const std::ffi::c_char,
    ) -> bool;
}

thread_local! {
    /// The channels of the tenants this backend named last (at most `KEPT`): the md5
    /// through OpenSSL costs more than the rest of a notification, and a pooled backend
    /// serves the same tenants again and again.
    static KNOWN: std::cell::RefCell<std::collections::HashMap<String, String>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// How many tenants' channels a backend keeps; past it, it forgets them all and starts over.
const KEPT: usize = 256;

/// The LISTEN channel of a tenant's change notifications: `todo_` and the md5 of its id (as
/// `'todo_' || md5(tenant_id)` in SQL).
pub fn channel(tenant: &str) -> String {
    if let Some(known) = KNOWN.with(|k| k.borrow().get(tenant).cloned()) {
        return known;
    }
    let channel = hashed(tenant);
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.len() >= KEPT {
            k.clear();
        }
        k.insert(tenant.to_string(), channel.clone());
    });
    channel
}

fn hashed(tenant: &str) -> String {
    let mut hex = [0 as std::ffi::c_char; 33];
    let mut errstr: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: hashes the tenant's bytes into a 33-byte buffer, as md5() does; it reports
    // failure (out of memory) through its result, never by raising.
    let ok = unsafe { pg_md5_hash(tenant.as_ptr().cast(), tenant.len(), hex.as_mut_ptr(), &mut errstr) };
    if !ok {
        crate::errors::raise(
            pgrx::PgSqlErrorCode::ERRCODE_OUT_OF_MEMORY,
            "pg_todos: could not compute an md5 hash",
            "",
        );
    }
    // SAFETY: NUL-terminated by pg_md5_hash
    let hex = unsafe { std::ffi::CStr::from_ptr(hex.as_ptr()) };
    format!("todo_{}", hex.to_str().expect("hex digits"))
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
