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
//! - The subtransaction mechanism itself is `session`'s (`session::isolated` runs `f` in one
//!   and raises what it raises).
//! - `best_effort(f)` is the open block's rule: a failure of the probe becomes `None` with a
//!   WARNING; a cancel or anything the caller must retry is raised.

use pgrx::pg_sys::panic::CaughtError;
use pgrx::prelude::*;

use crate::error::{best_effort_swallows, disposition, Disposition, Error};
use crate::errors::sqlstate_text;
use crate::session::{self, subtransaction};
use crate::store;

/// Runs one SQL function call and then sends its notifications: one per tenant channel,
/// `{"conversation_id": <the conversation every touched todo is in, else null>, "ids":
/// [<each touched id once, in the order touched>]}` (a call that touched so many todos that
/// their ids pass PostgreSQL's payload limit sends them in as few notifications as fit).
/// Nested calls send nothing of their own. When `f` raises, nothing is sent (the
/// transaction aborts).
pub fn call<T>(f: impl FnOnce() -> T) -> T {
    let depth = session::enter_call();
    let out = f();
    if session::outermost_call() {
        let touched = session::take_touched();
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
    let mark = session::touched_mark();
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
        session::forget_touched_after(mark);
    }
    result
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
