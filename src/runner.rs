//! The one runner around every call that writes: the only subtransaction wrapper, the only
//! policy for caught errors (`pg_todos_core::error::disposition`), and the change
//! notifications, collected while the call runs and sent once per channel at its end.
//!
//! - `call(f)` wraps a whole SQL function call: operations record the todos they touch
//!   (`touched`), and when `f` returns, one NOTIFY per tenant channel carries them all.
//!   PostgreSQL delivers it at commit, never after a rollback.
//! - `attempt(f)` runs one write in a subtransaction, as PL/pgSQL's `BEGIN … EXCEPTION`
//!   does: kept when `f` succeeds; rolled back when it returns an error (a rule said no) or
//!   raises one. A raised error about the caller's data comes back as
//!   `Error::Rejected`; any other (a cancel or timeout, a deadlock, a serialization failure,
//!   a lock timeout, out of memory, …) is raised again as it was, so the caller's
//!   transaction aborts and nothing of the call commits.
//! - `isolated(f)` runs `f` in a subtransaction and raises what it raises (see
//!   `store::distribution::read_needs_block`).
//! - `best_effort(f)` is the open block's rule: a failure of the probe becomes `None` with a
//!   WARNING; a cancel or anything the caller must retry is raised.

use std::cell::RefCell;
use std::panic::AssertUnwindSafe;

use pgrx::pg_sys;
use pgrx::pg_sys::panic::CaughtError;
use pgrx::prelude::*;
use pgrx::PgTryBuilder;

use crate::error::{best_effort_swallows, disposition, Disposition, Error};
use crate::errors::sqlstate_text;
use crate::store;

/// The todos touched by the running call: (tenant, conversation of the todo, id), in order.
struct Calls {
    depth: u32,
    touched: Vec<(String, Option<String>, i64)>,
}

thread_local! {
    static CALLS: RefCell<Calls> = const { RefCell::new(Calls { depth: 0, touched: Vec::new() }) };
}

/// Records that the running call changed todo `id` of `tenant` (in `conversation`, None:
/// tenant-wide); it is in the call's notification.
pub fn touched(tenant: &str, conversation: Option<&str>, id: i64) {
    CALLS.with(|c| c.borrow_mut().touched.push((tenant.to_string(), conversation.map(str::to_string), id)));
}

/// Whether a pg_todos function call is running (its notifications are sent when it returns);
/// outside one, a write is plain SQL and the row trigger notifies for it.
pub fn in_call() -> bool {
    CALLS.with(|c| c.borrow().depth > 0)
}

/// Runs one SQL function call and then sends its notifications: one per tenant channel,
/// `{"conversation_id": <the conversation every touched todo is in, else null>, "ids":
/// [<each touched id once, in the order touched>]}` (a call that touched so many todos that
/// their ids pass PostgreSQL's payload limit sends them in as few notifications as fit).
/// Nested calls send nothing of their own. When `f` raises, nothing is sent (the
/// transaction aborts).
pub fn call<T>(f: impl FnOnce() -> T) -> T {
    struct Depth;
    impl Drop for Depth {
        fn drop(&mut self) {
            CALLS.with(|c| {
                let mut c = c.borrow_mut();
                c.depth -= 1;
                if c.depth == 0 {
                    c.touched.clear();
                }
            });
        }
    }
    CALLS.with(|c| c.borrow_mut().depth += 1);
    let depth = Depth;
    let out = f();
    let outermost = CALLS.with(|c| c.borrow().depth == 1);
    if outermost {
        let touched = CALLS.with(|c| std::mem::take(&mut c.borrow_mut().touched));
        for (tenant, conversation, ids) in by_channel(touched) {
            for part in payload_parts(&ids) {
                store::channel::notify(&tenant, conversation.as_deref(), part);
            }
        }
    }
    drop(depth);
    out
}

/// PostgreSQL refuses a payload of 8000 bytes or more; the ids of one notification stay well
/// under it with the rest of the payload (a conversation id is at most this long too).
const MAX_IDS_BYTES: usize = 3000;

/// `ids` in runs whose JSON fits one notification.
fn payload_parts(ids: &[i64]) -> Vec<&[i64]> {
    let mut parts = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, id) in ids.iter().enumerate() {
        let len = id.to_string().len() + 1;
        if bytes + len > MAX_IDS_BYTES && i > start {
            parts.push(&ids[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += len;
    }
    if start < ids.len() {
        parts.push(&ids[start..]);
    }
    parts
}

/// Groups touched todos by tenant, in first-touched order: the common conversation (or
/// None) and the ids, each once.
fn by_channel(touched: Vec<(String, Option<String>, i64)>) -> Vec<(String, Option<String>, Vec<i64>)> {
    let mut out: Vec<(String, Option<Option<String>>, Vec<i64>)> = Vec::new();
    for (tenant, conversation, id) in touched {
        let at = match out.iter().position(|(t, _, _)| *t == tenant) {
            Some(at) => at,
            None => {
                out.push((tenant, Some(conversation.clone()), Vec::new()));
                out.len() - 1
            }
        };
        let (_, common, ids) = &mut out[at];
        if common.as_ref().is_some_and(|c| *c != conversation) {
            *common = Some(None);
        }
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    out.into_iter().map(|(t, c, ids)| (t, c.flatten(), ids)).collect()
}

/// Runs `f` in a subtransaction, with an xid taken first (so its reads see what earlier
/// writes of the same call did). `Ok` keeps what it wrote; an `Err` it returns (an
/// operation's `Error`, or a dialect's own error object) rolls it back and comes back as is;
/// an error it raises rolls it back and, when it is about the caller's data, comes back as
/// `Error::Rejected` — any other error is raised again, unchanged.
/// The todos it touched are forgotten when it rolls back.
pub fn attempt<T, E: From<Error>>(f: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let mark = CALLS.with(|c| c.borrow().touched.len());
    let outcome = subtransaction(|| {
        store::begin_write();
        f()
    });
    let result = match outcome {
        Ok(r) => r,
        Err(caught) => {
            let (sqlstate, message) = describe(&caught);
            match disposition(&sqlstate) {
                Disposition::Answer => Err(Error::Rejected { sqlstate, message }.into()),
                Disposition::Raise => caught.rethrow(),
            }
        }
    };
    if result.is_err() {
        CALLS.with(|c| c.borrow_mut().touched.truncate(mark));
    }
    result
}

/// Runs `f` in a subtransaction that is released when it returns; an error it raises rolls
/// the subtransaction back and is raised again, unchanged.
pub fn isolated<T>(f: impl FnOnce() -> T) -> T {
    match subtransaction(|| Ok::<T, ()>(f())) {
        Ok(Ok(v)) => v,
        Ok(Err(())) => unreachable!("f cannot return an error"),
        Err(caught) => caught.rethrow(),
    }
}

/// Runs a best-effort read in a subtransaction: its value, or None (with a WARNING naming
/// `what`) when it fails for a reason of its own — no tenant, no privileges. A cancel, a
/// timeout, a deadlock or running out of resources is raised: the caller asked for it or
/// must retry.
pub fn best_effort<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Option<T> {
    match subtransaction(f) {
        Ok(Ok(v)) => Some(v),
        Ok(Err(why)) => {
            warning!("{what}: {why}; returning an empty block");
            None
        }
        Err(caught) => {
            let (sqlstate, message) = describe(&caught);
            if !best_effort_swallows(&sqlstate) {
                caught.rethrow();
            }
            warning!("{what}: {message}; returning an empty block");
            None
        }
    }
}

fn describe(caught: &CaughtError) -> (String, String) {
    match caught {
        CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) | CaughtError::RustPanic { ereport: r, .. } => {
            (sqlstate_text(r.sql_error_code()), r.message().to_string())
        }
    }
}

/// The subtransaction itself: `Ok(f())`, released when that is `Ok`, rolled back otherwise;
/// `Err(caught)` when `f` raised (rolled back). The caught error is boxed: pgrx's
/// `CaughtError` is large (over 200 bytes), and only a raised error pays for the box.
fn subtransaction<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<Result<T, E>, Box<CaughtError>> {
    // SAFETY: the same sequence PL/pgSQL's exec_stmt_block uses around a protected block.
    let (cx, owner) = unsafe {
        let saved = (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner);
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(saved.0);
        saved
    };
    let outcome = PgTryBuilder::new(AssertUnwindSafe(move || Ok(f()))).catch_others(|e| Err(Box::new(e))).execute();
    unsafe {
        if matches!(outcome, Ok(Ok(_))) {
            pg_sys::ReleaseCurrentSubTransaction();
        } else {
            pg_sys::RollbackAndReleaseCurrentSubTransaction();
        }
        pg_sys::MemoryContextSwitchTo(cx);
        pg_sys::CurrentResourceOwner = owner;
    }
    outcome
}
