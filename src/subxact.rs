//! Internal subtransactions, as PL/pgSQL's `BEGIN … EXCEPTION` uses them: run a closure so
//! that whatever it wrote is kept only when it succeeds, and an error it raises comes back as
//! a value instead of aborting the caller's transaction.

use std::panic::AssertUnwindSafe;

use pgrx::pg_sys;
use pgrx::pg_sys::panic::CaughtError;
use pgrx::PgTryBuilder;

/// An error caught inside the subtransaction: its SQLSTATE and message.
#[derive(Debug)]
pub struct Caught {
    pub code: pgrx::PgSqlErrorCode,
    pub message: String,
}

fn caught(e: CaughtError) -> Caught {
    match e {
        CaughtError::PostgresError(r) | CaughtError::ErrorReport(r) | CaughtError::RustPanic { ereport: r, .. } => {
            Caught { code: r.sql_error_code(), message: r.message().to_string() }
        }
    }
}

/// Runs `f` in a subtransaction. `Ok(Ok(v))` commits it; `Ok(Err(e))` (an error the closure
/// decided on) and `Err(caught)` (an error raised inside) roll everything it did back.
pub fn attempt<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<Result<T, E>, Caught> {
    // SAFETY: the same sequence PL/pgSQL's exec_stmt_block uses around a protected block.
    let (cx, owner) = unsafe {
        let saved = (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner);
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(saved.0);
        saved
    };
    let outcome = PgTryBuilder::new(AssertUnwindSafe(move || Ok(f())))
        .catch_others(|e| Err(caught(e)))
        .execute();
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
