//! Change hints (`todo.notify = hint`): a tenant's private LISTEN channel and the NOTIFY
//! itself. Off by default: the change feed is the log (`todo.events`, read with
//! `todo.changes_since`'s cursor), and a write takes no lock another tenant's write waits on.
//! PostgreSQL's NOTIFY takes one lock for the whole cluster at commit and holds it through
//! the commit's flush, so with hints on, every writer that sends one commits in turn.
//!
//! - The channel is `todo_` and 40 hex digits of HMAC-SHA-256 of the tenant id, keyed with this
//!   installation's secret (`todo.channel_key`, readable by no role but the owner):
//!   nobody can derive another tenant's channel; `todo.channel()` tells it to a role acting
//!   for that tenant.
//! - A hint carries nothing (an empty payload): no id, no conversation. A listener reads what
//!   changed with its cursor.
//! - At most one per tenant per `HINT_EVERY` per backend: a hint held back is not sent later,
//!   so a listener also reads the feed now and then (`docs/reliability.md`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;
use std::time::{Duration, Instant};

use hmac::{Hmac, KeyInit, Mac};
use pgrx::pg_sys;
use sha2::Sha256;

extern "C-unwind" {
    /// `commands/async.h`: what `pg_notify()` calls, without a statement around it.
    fn Async_Notify(channel: *const std::ffi::c_char, payload: *const std::ffi::c_char);
}

/// The shortest time between two hints of one tenant from one backend.
pub const HINT_EVERY: Duration = Duration::from_millis(100);

/// How many tenants' channels and last hints a backend keeps; past it, it forgets them all.
const KEPT: usize = 256;

#[derive(Default)]
struct Known {
    /// this installation's key, read once
    key: Option<Vec<u8>>,
    /// each tenant's channel
    channels: HashMap<String, String>,
    /// when each tenant's last hint was sent
    sent: HashMap<String, Instant>,
}

thread_local! {
    static KNOWN: RefCell<Known> = RefCell::new(Known::default());
}

/// The installation's key, as the owner reads it (no other role can).
fn key() -> Vec<u8> {
    if let Some(key) = KNOWN.with(|k| k.borrow().key.clone()) {
        return key;
    }
    let key: Vec<u8> = super::roles::as_owner(|| super::one("SELECT k.key FROM todo.channel_key k", &[], false))
        .unwrap_or_else(|| {
            crate::errors::raise(
                pgrx::PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                "pg_todos: the channel key (todo.channel_key) is missing",
                "ALTER EXTENSION pg_todos UPDATE, or restore the row the extension made",
            )
        });
    KNOWN.with(|k| k.borrow_mut().key = Some(key.clone()));
    key
}

/// The name of `tenant`'s channel under `key`: `todo_` and 40 hex digits of HMAC-SHA-256.
pub fn keyed(key: &[u8], tenant: &str) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(tenant.as_bytes());
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().take(20).map(|b| format!("{b:02x}")).collect();
    format!("todo_{hex}")
}

/// The LISTEN channel of `tenant`'s change hints.
pub fn channel(tenant: &str) -> String {
    if let Some(known) = KNOWN.with(|k| k.borrow().channels.get(tenant).cloned()) {
        return known;
    }
    let channel = keyed(&key(), tenant);
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.channels.len() >= KEPT {
            k.channels.clear();
        }
        k.channels.insert(tenant.to_string(), channel.clone());
    });
    channel
}

/// Whether `tenant` may be hinted now (none sent by this backend within `HINT_EVERY`); if
/// so, it counts as sent.
fn due(tenant: &str) -> bool {
    let now = Instant::now();
    KNOWN.with(|k| {
        let mut k = k.borrow_mut();
        if k.sent.get(tenant).is_some_and(|at| now.duration_since(*at) < HINT_EVERY) {
            return false;
        }
        if k.sent.len() >= KEPT {
            k.sent.retain(|_, at| now.duration_since(*at) < HINT_EVERY);
        }
        k.sent.insert(tenant.to_string(), now);
        true
    })
}

/// Queues a hint on the tenant's channel, when `todo.notify = hint` and none went out from this
/// backend within `HINT_EVERY`; PostgreSQL delivers it at commit (never after a rollback).
pub fn hint(tenant: &str) {
    if !crate::session::hints() || !due(tenant) {
        return;
    }
    let channel = CString::new(channel(tenant)).expect("hex digits have no NUL");
    // SAFETY: what pg_notify() does: refuse on a standby, then queue; Async_Notify copies the
    // two NUL-terminated strings.
    unsafe {
        pg_sys::PreventCommandDuringRecovery(c"NOTIFY".as_ptr());
        pg_sys::ffi::pg_guard_ffi_boundary(|| Async_Notify(channel.as_ptr(), c"".as_ptr()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_channel_depends_on_the_key_and_the_tenant() {
        let a = keyed(b"key one", "acme");
        assert_eq!(a.len(), 45);
        assert!(a.starts_with("todo_") && a[5..].bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, keyed(b"key two", "acme"));
        assert_ne!(a, keyed(b"key one", "globex"));
        assert_eq!(a, keyed(b"key one", "acme"));
        // RFC 4231 test case 2: HMAC-SHA-256("Jefe", "what do ya want for nothing?")
        assert_eq!(keyed(b"Jefe", "what do ya want for nothing?"), "todo_5bdcc146bf60754e6a042426089575c75a003f08");
    }
}
