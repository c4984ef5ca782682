//! The surfaces: each maps one dialect onto the operations, and only parses, calls
//! operations (writes through `runner::attempt`, inside `runner::call`) and renders.
//! - `writ`: the `/todo` writ, the open block and preamble (`todo.todo_writ`, …);
//! - `rest`: the `/v1/todos` routes as one function (`todo.rest`);
//! - `board`: the board's changes and detail read (`todo.board_act`, `todo.board_todo`);
//! - `board_feed`: the board's later reads, a list's next page and the changes since a read
//!   (`todo.board_page`, `todo.board_changes`);
//! - `tools`: every tool dialect in one registry (`todo.tools()`, `todo.call()`), and the
//!   dialects' own SQL functions (`todo.acp_plan`, `todo.export_tasks`, …);
//! - `functions`: the coordination operations as SQL functions (`todo.claim`, …);
//! - `context`: `todo.set_context` and `todo.current_tenant()` and its kin.
//!
//! The error a surface answers with comes from one table (`error::Error`: SQLSTATE, tool
//! code, HTTP status); a surface adds only its own words.

/// An earlier version's C symbol for a function whose Rust name (and so its pgrx wrapper's
/// symbol, `<name>_wrapper`) changed since: the SQL of that version — its frozen
/// `sql/pg_todos--X.sql`, the update scripts after it, and every database not yet updated —
/// names `$old` (and PostgreSQL looks up `$finfo`, `pg_finfo_` and `$old`, beside it). It
/// calls today's wrapper, `$new`, which takes the same arguments.
macro_rules! earlier_symbol {
    ($old:ident, $finfo:ident => $new:ident) => {
        /// An earlier version's name of a function's C symbol (`surfaces::earlier_symbol`).
        ///
        /// # Safety
        /// Called by PostgreSQL's function manager only, with the arguments of `$new`.
        #[unsafe(no_mangle)]
        #[doc(hidden)]
        pub unsafe extern "C-unwind" fn $old(fcinfo: ::pgrx::pg_sys::FunctionCallInfo) -> ::pgrx::pg_sys::Datum {
            // SAFETY: the same call as PostgreSQL makes to `$new`, with its arguments
            unsafe { $new(fcinfo) }
        }

        /// The version 1 calling convention record of `$old`.
        #[unsafe(no_mangle)]
        #[doc(hidden)]
        pub extern "C" fn $finfo() -> &'static ::pgrx::pg_sys::Pg_finfo_record {
            const V1_API: ::pgrx::pg_sys::Pg_finfo_record = ::pgrx::pg_sys::Pg_finfo_record { api_version: 1 };
            &V1_API
        }
    };
}
pub(crate) use earlier_symbol;

pub mod board;
pub mod board_feed;
pub mod context;
pub mod files;
pub mod functions;
pub mod rest;
pub mod tools;
pub mod writ;
