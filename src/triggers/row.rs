//! Reading and writing the row a trigger fired for: the attribute numbers of the relation's
//! columns (found once per backend, `Layout`), typed reads of a column (`get`, `maybe` for one
//! a table not yet updated lacks), the columns the before-write trigger sets (`Changed`), and
//! what the triggers ask of their situation (a restore, a Citus shard, row-level security).

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::num::NonZeroUsize;
use std::rc::Rc;

use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByPostgres, AllocatedByRust, PgTrigger};

use crate::errors;
use crate::tupdesc::Deformed;

type Tuple<'a> = PgHeapTuple<'a, AllocatedByRust>;

/// The attribute numbers of a relation's columns (`todo.todos` or one of its Citus shards),
/// found once per backend: looking a column up by name in the tuple descriptor on every read
/// cost more than the rest of the trigger.
struct Layout {
    relid: pg_sys::Oid,
    /// each column's attribute number and type
    columns: HashMap<String, (NonZeroUsize, pg_sys::Oid), BuildHasherDefault<NameHasher>>,
    /// the names looked up last, by address: a trigger looks up about a hundred names per row,
    /// always the same string constants (`column`)
    recent: RefCell<[Option<Recent>; 64]>,
}

/// A name looked up by `Layout::column`: its address and length, and what it found.
type Recent = ((usize, usize), Option<(NonZeroUsize, pg_sys::Oid)>);

impl Layout {
    fn of(relation: pg_sys::Relation) -> Layout {
        let mut columns = HashMap::default();
        // SAFETY: a row trigger's relation and its descriptor are valid while it runs.
        unsafe {
            for (i, name, att) in crate::tupdesc::columns((*relation).rd_att) {
                let name = name.to_string_lossy().into_owned();
                columns.insert(name, (NonZeroUsize::new(i + 1).expect("attribute numbers start at 1"), att.atttypid));
            }
            Layout { relid: (*relation).rd_id, columns, recent: RefCell::new([None; 64]) }
        }
    }

    /// Column `col`'s attribute number and type. A name is a string constant (`'static`):
    /// its address and length tell it from any other, so a name seen before is found by them
    /// without hashing its text.
    fn column(&self, col: &'static str) -> Option<(NonZeroUsize, pg_sys::Oid)> {
        let key = (col.as_ptr() as usize, col.len());
        let slot = ((key.0 >> 3) ^ key.1) % 64;
        let mut recent = self.recent.borrow_mut();
        if let Some((seen, found)) = recent[slot] {
            if seen == key {
                return found;
            }
        }
        let found = self.columns.get(col).copied();
        recent[slot] = Some((key, found));
        found
    }
}

/// The hash of a column name in a `Layout` (rustc's FxHash): a few instructions for a short
/// name, where the standard hasher takes over a hundred; a trigger looks up about a hundred
/// names per row. The names are the table's own, not input.
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

thread_local! {
    /// Each relation's layout, kept until a relation cache invalidation names it (an ALTER
    /// TABLE, an update of the extension).
    static LAYOUTS: RefCell<Vec<Rc<Layout>>> = const { RefCell::new(Vec::new()) };
    /// The layout of the relation whose trigger is running (set by `Running`).
    static CURRENT: RefCell<Option<Rc<Layout>>> = const { RefCell::new(None) };
}

/// A relation cache invalidation (`relation_changed` in lib.rs): forgets the layout of the
/// relation that changed (every layout: a reset).
pub fn relation_changed(relid: pg_sys::Oid) {
    LAYOUTS.with(|l| l.borrow_mut().retain(|layout| relid != pg_sys::InvalidOid && layout.relid != relid));
}

/// While it lives, `get`, `set` and `maybe` read the columns of `trigger`'s relation; the
/// layout of an outer trigger (one that wrote another relation's rows) comes back after it.
pub(super) struct Running(Option<Rc<Layout>>);

impl Running {
    pub(super) fn on(trigger: &PgTrigger<'_>) -> Running {
        let relation = trigger.trigger_data().tg_relation;
        // SAFETY: a trigger's relation is valid while it runs.
        let relid = unsafe { (*relation).rd_id };
        let layout = LAYOUTS.with(|l| {
            let mut l = l.borrow_mut();
            if let Some(found) = l.iter().find(|layout| layout.relid == relid) {
                return found.clone();
            }
            let layout = Rc::new(Layout::of(relation));
            l.push(layout.clone());
            layout
        });
        Running(CURRENT.with(|c| c.replace(Some(layout))))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let outer = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = outer);
    }
}

/// The attribute number and type of `col` in the running trigger's relation.
pub(super) fn column(col: &'static str) -> Option<(NonZeroUsize, pg_sys::Oid)> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|layout| layout.column(col)))
}

/// The attribute number of `col` in the running trigger's relation.
pub(super) fn attno(col: &'static str) -> Option<NonZeroUsize> {
    column(col).map(|(attno, _)| attno)
}

/// The value of attribute `attno` of `row` (None: NULL, or past the row's columns).
pub(super) fn datum(row: &Deformed, attno: NonZeroUsize) -> Option<pg_sys::Datum> {
    row.get(attno.get() - 1)
}

/// The rows `trigger` fired for, taken apart: (OLD, NEW), each where its event has one.
pub(super) fn rows(trigger: &PgTrigger<'_>) -> (Option<Deformed>, Option<Deformed>) {
    use pgrx::trigger_support::{trigger_fired_by_delete, trigger_fired_by_insert, trigger_fired_by_update};
    let data = trigger.trigger_data();
    // SAFETY: a row trigger's relation, descriptor and tuples are valid while it runs; an
    // insert's row is `tg_trigtuple`, an update's `tg_trigtuple` (OLD) and `tg_newtuple`, a
    // delete's `tg_trigtuple`.
    unsafe {
        let desc = (*data.tg_relation).rd_att;
        let of = |tuple| Some(Deformed::of(tuple, desc));
        match data.tg_event {
            e if trigger_fired_by_insert(e) => (None, of(data.tg_trigtuple)),
            e if trigger_fired_by_update(e) => (of(data.tg_trigtuple), of(data.tg_newtuple)),
            e if trigger_fired_by_delete(e) => (of(data.tg_trigtuple), None),
            _ => (None, None),
        }
    }
}

pub(super) fn get<T: FromDatum + IntoDatum>(row: &Deformed, col: &'static str) -> Option<T> {
    let Some((attno, typoid)) = column(col) else { column_error(col, "no such column") };
    let datum = datum(row, attno)?;
    // SAFETY: the datum is of the column's type, `typoid`, which `try_from_datum` checks T against
    unsafe { T::try_from_datum(datum, false, typoid) }.unwrap_or_else(|e| column_error(col, e))
}

fn column_error(col: &str, e: impl std::fmt::Display) -> ! {
    errors::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("todo.todos.{col}: {e}"), "")
}

/// The columns the before-write trigger sets in the row it returns, applied at once when it
/// is done (`apply`): setting each in turn would rebuild the whole row every time.
#[derive(Default)]
pub(super) struct Changed(Vec<(NonZeroUsize, Option<pg_sys::Datum>)>);

impl Changed {
    /// Sets `col` to `value` in the row to return. The row read by `get` keeps the value it
    /// came with.
    pub(super) fn set<T: IntoDatum>(&mut self, col: &'static str, value: T) {
        let Some(attno) = attno(col) else { column_error(col, "no such column") };
        self.0.retain(|(a, _)| *a != attno);
        self.0.push((attno, value.into_datum()));
    }

    /// The row `trigger` fired for with the columns set; `cols`, that row taken apart, gets
    /// them too.
    pub(super) fn apply<'a>(
        self,
        trigger: &'a PgTrigger<'a>,
        new: PgHeapTuple<'a, AllocatedByPostgres>,
        cols: &mut Deformed,
    ) -> Tuple<'a> {
        if self.0.is_empty() {
            return new.into_owned();
        }
        for (attno, value) in &self.0 {
            cols.set(attno.get() - 1, *value);
        }
        let data = trigger.trigger_data();
        let row = if pgrx::trigger_support::trigger_fired_by_update(data.tg_event) {
            data.tg_newtuple
        } else {
            data.tg_trigtuple
        };
        let mut cols: Vec<std::ffi::c_int> = self.0.iter().map(|(a, _)| a.get() as std::ffi::c_int).collect();
        let mut values: Vec<pg_sys::Datum> = self.0.iter().map(|(_, v)| v.unwrap_or(pg_sys::Datum::from(0))).collect();
        let mut nulls: Vec<bool> = self.0.iter().map(|(_, v)| v.is_none()).collect();
        // SAFETY: a row trigger's relation, descriptor and tuple are valid while it runs; each
        // value is of its column's type (the trigger's own values), the attribute numbers
        // are the relation's (`Layout`)
        unsafe {
            let desc = (*data.tg_relation).rd_att;
            let changed = pg_sys::heap_modify_tuple_by_cols(
                row,
                desc,
                cols.len() as std::ffi::c_int,
                cols.as_mut_ptr(),
                values.as_mut_ptr(),
                nulls.as_mut_ptr(),
            );
            PgHeapTuple::from_heap_tuple(pgrx::PgTupleDesc::from_pg_unchecked(desc), changed).into_owned()
        }
    }
}

/// Whether rows are being restored: pg_restore (and psql replaying a plain dump) run with
/// `row_security = off` as a role that bypasses row-level security. An application role
/// never can (its reads would fail), nor through a pg_todos function (SECURITY DEFINER):
/// the role that counts is the one outside any such function.
pub(super) fn restoring() -> bool {
    // SAFETY: reads a GUC variable of this backend; a catalog lookup of the outer role.
    unsafe { !pg_sys::row_security && pg_sys::has_bypassrls_privilege(pg_sys::GetOuterUserId()) }
}

/// Whether the trigger fires on a Citus shard of `todo.todos` (`todos_<shard id>`, on a
/// worker of a distributed store, see `store::distribution`) rather than on the table itself.
/// The open relation's name: no catalog lookup on the write path.
pub(super) fn on_shard(trigger: &PgTrigger<'_>) -> bool {
    trigger.relation().is_ok_and(|r| r.name() != "todos")
}

/// Whether row-level security applies to the current user on the trigger's table.
pub(super) fn subject_to_rls(trigger: &PgTrigger<'_>) -> bool {
    let relid = trigger.relid().expect("a row trigger has a relation");
    // SAFETY: a plain catalog lookup; noError = true
    let rls = unsafe { pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, true) };
    rls == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
}

/// A column that may be missing from the table (`LOGGED_TEXT_0_5`, `metadata`,
/// `archived_at`): None then.
pub(super) fn maybe<T: FromDatum + IntoDatum>(row: &Deformed, col: &'static str) -> Option<T> {
    column(col)?;
    get(row, col)
}

/// The row's metadata as JSON (None: NULL or no such column).
pub(super) fn metadata(row: &Deformed) -> Option<serde_json::Value> {
    maybe::<pgrx::JsonB>(row, "metadata").map(|j| j.0)
}
