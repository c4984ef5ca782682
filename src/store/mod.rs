//! The one module that runs SQL against the extension's tables, split by concern: `ids` and
//! `id_ranges` (tenants and id counters), `numbers` (the trackers' task numbers), `read` (rows
//! as the surfaces read them, and locking what a read shows for a change), `write` (inserts,
//! updates, deletes), `events` (the event log and the change feed), `lease` (claim statements
//! and the ready queue), `edges` (the dependency graph), `annotations` (checklists,
//! comments), `lists` (what a list keeps besides its todos), `board` (the board's reads), `catalog`
//! (the extension's tables as this backend found them), `locks` (advisory locks and the order every call takes its locks
//! in), `channel` (change notifications), `distribution` (Citus), `roles` and `scope` (which
//! tenant the caller may act for). Every statement names its relations with the schema and
//! filters by tenant explicitly: superusers bypass row-level security, and the extension must
//! not. Every statement runs through a plan saved once per backend, its generic plan on one
//! server (`with_plan`). The columns of `todo.todos` the statements name come from the one
//! column table, `columns` (the pure crate's).

pub mod annotations;
pub mod board;
pub mod catalog;
pub mod channel;
pub mod distribution;
pub mod edges;
pub mod events;
pub mod id_ranges;
pub mod ids;
pub mod lease;
pub mod lists;
pub mod locks;
pub mod numbers;
pub mod offers;
pub mod read;
pub mod roles;
pub mod scope;
pub mod waits;
pub mod write;

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;

use crate::errors;

fn spi_error(e: pgrx::spi::Error) -> ! {
    errors::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("pg_todos: {e}"), "")
}

/// A statement prepared once per backend and kept (`SPI_keepplan`; PostgreSQL's plan cache
/// plans it again after DDL or ANALYZE).
struct Saved(std::ptr::NonNull<pg_sys::_SPI_plan>);

thread_local! {
    /// Every statement this module runs, by its text: those prepared for one server, then
    /// those prepared for a distributed store (see `prepared`). The statements are a fixed
    /// set of texts.
    static PLANS: RefCell<[HashMap<String, Saved>; 2]> = RefCell::new([HashMap::new(), HashMap::new()]);
}

/// `sql`'s kept plan, prepared on first use. On one server it is prepared with
/// `CURSOR_OPT_GENERIC_PLAN`: every statement here finds a tenant's rows through an index
/// that every value uses the same way, so its generic plan is the plan. Left to choose,
/// PostgreSQL's plan cache plans again for each call's values whenever the generic plan's
/// estimate is the higher, which it is for a few rows of one tenant among many: a call then
/// pays the planner on every statement, and whether it does depends on the values of its
/// first five calls and on the statistics. On a distributed store Citus plans the
/// statements: it routes a statement by its tenant's value, and one it cannot route with the
/// value unknown gets a custom plan, so there the plan cache chooses.
fn prepared(sql: &str, args: &[DatumWithOid<'_>]) -> *mut pg_sys::_SPI_plan {
    let distributed = distribution::distributed();
    if let Some(plan) = PLANS.with(|p| p.borrow()[distributed as usize].get(sql).map(|g| g.0.as_ptr())) {
        return plan;
    }
    let text = std::ffi::CString::new(sql).expect("statement texts hold no NUL");
    let mut types: Vec<pg_sys::Oid> = args.iter().map(|a| a.oid()).collect();
    let options = if distributed { 0 } else { pg_sys::CURSOR_OPT_GENERIC_PLAN as i32 };
    // SAFETY: a statement and its argument types; SPI is connected (the caller's Spi::connect)
    let plan = unsafe { pg_sys::SPI_prepare_cursor(text.as_ptr(), types.len() as i32, types.as_mut_ptr(), options) };
    let Some(plan) = std::ptr::NonNull::new(plan) else {
        // SAFETY: SPI_result is SPI's status of the prepare that just failed
        spi_error(
            pgrx::spi::Spi::check_status(unsafe { pg_sys::SPI_result }).err().unwrap_or(pgrx::spi::Error::NoTupleTable),
        )
    };
    // SAFETY: a plan SPI_prepare_cursor just made: moved out of SPI's memory, kept for the backend
    unsafe { pg_sys::SPI_keepplan(plan.as_ptr()) };
    PLANS.with(|p| p.borrow_mut()[distributed as usize].insert(sql.to_string(), Saved(plan)));
    plan.as_ptr()
}

/// Over every statement this backend has kept (`prepared`): how many times the plan cache
/// planned one for a call's values (custom plans), and how many times it ran one's generic
/// plan. For the tests: on one server the first is always 0.
pub fn plans_made() -> (i64, i64) {
    let mut counts = (0, 0);
    PLANS.with(|p| {
        for saved in p.borrow().iter().flat_map(HashMap::values) {
            // SAFETY: a kept plan's list of plan sources (one per statement of its text), each
            // a valid CachedPlanSource while the plan is kept
            unsafe {
                let sources = pg_sys::SPI_plan_get_plan_sources(saved.0.as_ptr());
                let len = if sources.is_null() { 0 } else { (*sources).length as usize };
                for i in 0..len {
                    let source = (*(*sources).elements.add(i)).ptr_value as *const pg_sys::CachedPlanSource;
                    counts.0 += (*source).num_custom_plans;
                    counts.1 += (*source).num_generic_plans;
                }
            }
        }
    });
    counts
}

/// Runs `sql` through its kept plan (`prepared`) and hands `f` the number of rows it
/// returned (read them with `rows`, inside `f`). A read (`write` false) runs read-only until
/// the transaction has an xid (see `begin_write`), so it works on a standby.
pub(crate) fn with_plan<R>(sql: &str, args: &[DatumWithOid<'_>], write: bool, f: impl FnOnce(usize) -> R) -> R {
    with_plan_limited(sql, args, write, 0, f)
}

/// `with_plan` that stops the statement once it has returned `limit` rows (0: no limit), as
/// SPI's `tcount` does: the rows past it are never produced.
pub(crate) fn with_plan_limited<R>(
    sql: &str,
    args: &[DatumWithOid<'_>],
    write: bool,
    limit: i64,
    f: impl FnOnce(usize) -> R,
) -> R {
    if !write && distribution::read_needs_block() {
        return crate::session::isolated(|| run_plan(sql, args, write, limit, f));
    }
    run_plan(sql, args, write, limit, f)
}

fn run_plan<R>(sql: &str, args: &[DatumWithOid<'_>], write: bool, limit: i64, f: impl FnOnce(usize) -> R) -> R {
    distribution::sync_context();
    Spi::connect_mut(|_client| {
        let plan = prepared(sql, args);
        let mut values: Vec<pg_sys::Datum> = Vec::with_capacity(args.len());
        let mut nulls: Vec<std::ffi::c_char> = Vec::with_capacity(args.len());
        for arg in args {
            match arg.datum() {
                Some(d) => {
                    values.push(d.sans_lifetime());
                    nulls.push(b' ' as std::ffi::c_char);
                }
                None => {
                    values.push(pg_sys::Datum::from(0usize));
                    nulls.push(b'n' as std::ffi::c_char);
                }
            }
        }
        // SAFETY: a kept plan with these argument types (the statement text fixes them) and
        // its values; SPI is connected. Read-only as pgrx runs a read: until the transaction
        // has an xid (see `begin_write`)
        let rows = unsafe {
            pg_sys::SPI_tuptable = std::ptr::null_mut();
            let read_only = !write && pg_sys::GetCurrentTransactionIdIfAny() == pg_sys::InvalidTransactionId;
            let status = pg_sys::SPI_execute_plan(plan, values.as_mut_ptr(), nulls.as_mut_ptr(), read_only, limit);
            pgrx::spi::Spi::check_status(status)?;
            pg_sys::SPI_processed as usize
        };
        Ok::<_, pgrx::spi::Error>(f(rows))
    })
    .unwrap_or_else(|e| spi_error(e))
}

/// The first column of the first row (None: no row, or NULL).
pub(crate) fn one<T: FromDatum + IntoDatum>(sql: &str, args: &[DatumWithOid<'_>], write: bool) -> Option<T> {
    with_plan(sql, args, write, |n| rows(n.min(1), |r| r.get::<T>(1)).into_iter().next().flatten())
}

/// Runs a statement; the number of rows it returned.
pub(crate) fn exec(sql: &str, args: &[DatumWithOid<'_>]) -> usize {
    with_plan(sql, args, true, |n| n)
}

/// Call first in a (sub)transaction that is going to write. pgrx runs SPI read-only, on the
/// snapshot of the calling statement, until the current (sub)transaction has an xid; a write
/// command inside a fresh subtransaction would then not see what the commands before it in
/// the same message wrote. Taking the xid up front makes its lookups see them.
pub fn begin_write() {
    // SAFETY: assigns the current (sub)transaction's xid, or raises (e.g. on a standby).
    unsafe {
        pg_sys::GetCurrentTransactionId();
    }
}

/// One row of the statement just run, taken apart once (`heap_deform_tuple`), its columns
/// read by position (from 1) as the types the statement gives them: pgrx's rows read each
/// column with a walk of the tuple up to it and copy it through a memory context.
pub(crate) struct Tuple<'t> {
    types: &'t [pg_sys::Oid],
    row: &'t crate::tupdesc::Deformed,
}

impl<'t> Tuple<'t> {
    /// Column `i`'s value (None: NULL); it must be of type `oid`.
    fn datum(&self, i: usize, oid: pg_sys::Oid) -> Option<pg_sys::Datum> {
        let found = self.types.get(i - 1).copied();
        if found != Some(oid) {
            errors::raise(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!("pg_todos: column {i} of a statement's row is not of type {oid:?} but {found:?}"),
                "",
            );
        }
        self.row.get(i - 1)
    }

    /// Column `i`'s value as any type pgrx converts it to (an array, jsonb, …); the column's
    /// type must be one `T` reads.
    pub(crate) fn get<T: FromDatum + IntoDatum>(&self, i: usize) -> Option<T> {
        let oid = self.types.get(i - 1).copied().unwrap_or(pg_sys::InvalidOid);
        let datum = self.row.get(i - 1)?;
        // SAFETY: a datum of column `i`, of type `oid`, alive while the statement's rows are
        unsafe { T::try_from_datum(datum, false, oid) }.unwrap_or_else(|e| {
            errors::raise(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!("pg_todos: column {i} of a statement's row: {e}"),
                "",
            )
        })
    }

    /// How many columns the row has.
    pub(crate) fn width(&self) -> usize {
        self.types.len()
    }

    pub(crate) fn int(&self, i: usize) -> Option<i64> {
        // SAFETY: an int8 datum, by value
        self.datum(i, pg_sys::INT8OID).map(|d| unsafe { i64::from_datum(d, false) }.unwrap_or_default())
    }

    pub(crate) fn bool(&self, i: usize) -> Option<bool> {
        self.datum(i, pg_sys::BOOLOID).map(|d| d.value() != 0)
    }

    /// A text column, borrowed from the row (or its detoasted copy, in the statement's memory).
    pub(crate) fn text(&self, i: usize) -> Option<&'t str> {
        let datum = self.datum(i, pg_sys::TEXTOID)?;
        // SAFETY: a text datum; its detoasted form lives as long as the statement's results
        unsafe {
            let text = pg_sys::pg_detoast_datum_packed(datum.cast_mut_ptr());
            let bytes = std::slice::from_raw_parts(
                pgrx::varlena::vardata_any(text) as *const u8,
                pgrx::varlena::varsize_any_exhdr(text),
            );
            Some(std::str::from_utf8(bytes).unwrap_or_else(|e| {
                errors::raise(PgSqlErrorCode::ERRCODE_CHARACTER_NOT_IN_REPERTOIRE, format!("pg_todos: {e}"), "")
            }))
        }
    }

    pub(crate) fn stamp(&self, i: usize) -> Option<i64> {
        // SAFETY: a timestamptz datum, by value
        self.datum(i, pg_sys::TIMESTAMPTZOID)
            .and_then(|d| unsafe { pgrx::datum::TimestampWithTimeZone::from_datum(d, false) })
            .map(crate::time::unix_us)
    }
}

/// `f` of each of the `len` rows of the statement just run (SPI's tuple table), in order.
pub(crate) fn rows<R>(len: usize, f: impl FnMut(&Tuple<'_>) -> R) -> Vec<R> {
    rows_at(0..len, f)
}

/// `rows` of the statement just run, the rows at `at` (positions from 0, in that order; past
/// the last row: none).
pub(crate) fn rows_at<R>(at: impl IntoIterator<Item = usize>, mut f: impl FnMut(&Tuple<'_>) -> R) -> Vec<R> {
    let mut out = Vec::new();
    // SAFETY: SPI's global tuple table holds the `len` rows of the statement just run (nothing
    // has replaced it since), of its descriptor
    unsafe {
        let spi = pg_sys::SPI_tuptable;
        if spi.is_null() {
            return out;
        }
        let desc = (*spi).tupdesc;
        let types = crate::tupdesc::types(desc);
        let mut row = crate::tupdesc::Deformed::room(desc);
        let held = (*spi).numvals as usize;
        for k in at.into_iter().filter(|k| *k < held) {
            row.fill(*(*spi).vals.add(k), desc);
            out.push(f(&Tuple { types: &types, row: &row }));
        }
    }
    out
}
