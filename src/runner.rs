//! The one runner around every call that writes: the only subtransaction wrapper, the only
//! policy for caught errors (`pg_todos_core::error::disposition`), and the change hints
//! (`todo.notify = hint`), sent once per tenant at the call's end.
//!
//! - `call(f)` wraps a whole SQL function call: operations record the todos they touch
//!   (`touched`), and when `f` returns, each tenant touched gets one hint (none with the
//!   default `todo.notify = off`). PostgreSQL delivers it at commit, never after a rollback.
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

/// Runs one SQL function call and then, with `todo.notify = hint`, hints the channel of each
/// tenant it touched (`store::channel::hint`). Nested calls send nothing of their own. When
/// `f` raises, nothing is sent (the transaction aborts).
pub fn call<T>(f: impl FnOnce() -> T) -> T {
    let depth = session::enter_call();
    let out = f();
    if session::outermost_call() {
        let mut tenants: Vec<String> = Vec::new();
        for (tenant, _, _) in session::take_touched() {
            if !tenants.contains(&tenant) {
                tenants.push(tenant);
            }
        }
        tenants.iter().for_each(|t| store::channel::hint(t));
    }
    drop(depth);
    out
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
