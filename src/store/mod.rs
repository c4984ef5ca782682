//! The one module that runs SQL against the extension's tables, split by concern: `ids`
//! (tenants and id counters), `read` (rows as the surfaces read them, and locking them for a
//! change), `write` (inserts, updates, deletes), `lease` (claim statements and the ready
//! queue), `edges` (the dependency graph), `locks` (advisory locks and the order every call
//! takes its locks in) and `channel` (change notifications). Every statement names its
//! relations with the schema and filters by tenant explicitly: superusers bypass row-level
//! security, and the extension must not. Every statement runs through a plan saved once per
//! backend (`with_plan`).

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
pub mod read;
pub mod roles;
pub mod scope;
pub mod write;

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::prelude::*;
use pgrx::spi::{OwnedPreparedStatement, SpiClient, SpiTupleTable};

use crate::errors;

fn spi_error(e: pgrx::spi::Error) -> ! {
    errors::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("pg_todos: {e}"), "")
}

thread_local! {
    /// Every statement this module runs, prepared once per backend and kept (PostgreSQL's
    /// plan cache re-plans them after DDL). The statements are a fixed set of texts.
    static PLANS: RefCell<HashMap<String, &'static OwnedPreparedStatement>> = RefCell::new(HashMap::new());
}

fn saved(client: &SpiClient<'_>, sql: &str, args: &[DatumWithOid<'_>], write: bool) -> &'static OwnedPreparedStatement {
    if let Some(plan) = PLANS.with(|p| p.borrow().get(sql).copied()) {
        return plan;
    }
    let types: Vec<pgrx::PgOid> = args.iter().map(|a| pgrx::PgOid::from(a.oid())).collect();
    let prepared = if write { client.prepare_mut(sql, &types) } else { client.prepare(sql, &types) };
    let plan: &'static OwnedPreparedStatement = Box::leak(Box::new(prepared.unwrap_or_else(|e| spi_error(e)).keep()));
    PLANS.with(|p| p.borrow_mut().insert(sql.to_string(), plan));
    plan
}

/// Runs `sql` through its saved plan and hands the rows to `f`. A read (`write` false) runs
/// read-only until the transaction has an xid (see `begin_write`), so it works on a standby.
pub(crate) fn with_plan<R>(
    sql: &str,
    args: &[DatumWithOid<'_>],
    write: bool,
    f: impl FnOnce(SpiTupleTable<'_>) -> Result<R, pgrx::spi::Error>,
) -> R {
    if !write && distribution::read_needs_block() {
        return crate::session::isolated(|| run_plan(sql, args, write, f));
    }
    run_plan(sql, args, write, f)
}

fn run_plan<R>(
    sql: &str,
    args: &[DatumWithOid<'_>],
    write: bool,
    f: impl FnOnce(SpiTupleTable<'_>) -> Result<R, pgrx::spi::Error>,
) -> R {
    distribution::sync_context();
    let result = if write {
        Spi::connect_mut(|client| {
            let plan = saved(client, sql, args, true);
            f(client.update(plan, None, args)?)
        })
    } else {
        Spi::connect(|client| {
            let plan = saved(client, sql, args, false);
            f(client.select(plan, None, args)?)
        })
    };
    result.unwrap_or_else(|e| spi_error(e))
}

/// The first column of the first row (None: no row, or NULL).
pub(crate) fn one<T: FromDatum + IntoDatum>(sql: &str, args: &[DatumWithOid<'_>], write: bool) -> Option<T> {
    with_plan(sql, args, write, |rows| if rows.is_empty() { Ok(None) } else { rows.first().get_one::<T>() })
}

/// Runs a statement; the number of rows it returned.
pub(crate) fn exec(sql: &str, args: &[DatumWithOid<'_>]) -> usize {
    with_plan(sql, args, true, |rows| Ok(rows.len()))
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

/// `f` of each row of the statement just run (`table`, SPI's tuple table), in order.
pub(crate) fn tuples<R>(table: &SpiTupleTable<'_>, mut f: impl FnMut(&Tuple<'_>) -> R) -> Vec<R> {
    let mut out = Vec::with_capacity(table.len());
    // SAFETY: `table` is SPI's result of the statement just run (its global tuple table, which
    // nothing has replaced since), with `len` rows of its descriptor
    unsafe {
        let spi = pg_sys::SPI_tuptable;
        if spi.is_null() || table.is_empty() {
            return out;
        }
        let desc = (*spi).tupdesc;
        let types = crate::tupdesc::types(desc);
        let mut row = crate::tupdesc::Deformed::room(desc);
        for k in 0..table.len() {
            row.fill(*(*spi).vals.add(k), desc);
            out.push(f(&Tuple { types: &types, row: &row }));
        }
    }
    out
}
