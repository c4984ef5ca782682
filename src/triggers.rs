//! The row trigger on `todo.todos`: it allocates ids, keeps the lifecycle (the transition
//! table in `status.rs`) and stamps the timestamps, for the extension's functions and plain
//! SQL alike. It touches only the row itself and its tenant's counter row.
//!
//! The trigger functions are no one's API: `sql/bootstrap.sql` creates them in the
//! extension's private schema `todo_internal` (no role but the owner may use it; a trigger
//! fires whatever its caller's privileges), beside their triggers, hence `sql = false`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::num::NonZeroUsize;
use std::rc::Rc;

use pgrx::datum::TimestampWithTimeZone;
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByPostgres, AllocatedByRust, PgTrigger};

use crate::claims::{self, Need};
use crate::error::Error;
use crate::errors;
use crate::row_checks;
use crate::session;
use crate::session::granting;
use crate::status::{self, Status};
use crate::store;
use crate::store::write::Vetted;
use crate::time::{now_us, unix_us};
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
struct Running(Option<Rc<Layout>>);

impl Running {
    fn on(trigger: &PgTrigger<'_>) -> Running {
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
fn column(col: &'static str) -> Option<(NonZeroUsize, pg_sys::Oid)> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(|layout| layout.column(col)))
}

/// The attribute number of `col` in the running trigger's relation.
fn attno(col: &'static str) -> Option<NonZeroUsize> {
    column(col).map(|(attno, _)| attno)
}

/// The value of attribute `attno` of `row` (None: NULL, or past the row's columns).
fn datum(row: &Deformed, attno: NonZeroUsize) -> Option<pg_sys::Datum> {
    row.get(attno.get() - 1)
}

/// The rows `trigger` fired for, taken apart: (OLD, NEW), each where its event has one.
fn rows(trigger: &PgTrigger<'_>) -> (Option<Deformed>, Option<Deformed>) {
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

fn get<T: FromDatum + IntoDatum>(row: &Deformed, col: &'static str) -> Option<T> {
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
struct Changed(Vec<(NonZeroUsize, Option<pg_sys::Datum>)>);

impl Changed {
    /// Sets `col` to `value` in the row to return. The row read by `get` keeps the value it
    /// came with.
    fn set<T: IntoDatum>(&mut self, col: &'static str, value: T) {
        let Some(attno) = attno(col) else { column_error(col, "no such column") };
        self.0.retain(|(a, _)| *a != attno);
        self.0.push((attno, value.into_datum()));
    }

    /// The row `trigger` fired for with the columns set; `cols`, that row taken apart, gets
    /// them too.
    fn apply<'a>(
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

/// Reads NEW.status, accepting `cancelled`, and stores the internal spelling back.
fn normalize_status(row: &Deformed, changed: &mut Changed) -> Status {
    let raw: Option<String> = get(row, "status");
    let status = match raw.as_deref() {
        None => Status::Pending,
        Some(s) => Status::parse(s).unwrap_or_else(|| errors::invalid_status(s)),
    };
    if raw.as_deref() != Some(status.as_str()) {
        changed.set("status", status.as_str());
    }
    status
}

/// Whether rows are being restored: pg_restore (and psql replaying a plain dump) run with
/// `row_security = off` as a role that bypasses row-level security. An application role
/// never can (its reads would fail), nor through a pg_todos function (SECURITY DEFINER):
/// the role that counts is the one outside any such function.
fn restoring() -> bool {
    // SAFETY: reads a GUC variable of this backend; a catalog lookup of the outer role.
    unsafe { !pg_sys::row_security && pg_sys::has_bypassrls_privilege(pg_sys::GetOuterUserId()) }
}

/// Whether the trigger fires on a Citus shard of `todo.todos` (`todos_<shard id>`, on a
/// worker of a distributed store, see `store::distribution`) rather than on the table itself.
/// The open relation's name: no catalog lookup on the write path.
fn on_shard(trigger: &PgTrigger<'_>) -> bool {
    trigger.relation().is_ok_and(|r| r.name() != "todos")
}

/// Whether row-level security applies to the current user on the trigger's table.
fn subject_to_rls(trigger: &PgTrigger<'_>) -> bool {
    let relid = trigger.relid().expect("a row trigger has a relation");
    // SAFETY: a plain catalog lookup; noError = true
    let rls = unsafe { pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, true) };
    rls == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
}

/// A change of status of a claimed todo must come from its claim's holder while the lease
/// runs (`claims::check`, no fence: the surfaces that take a fence check it before they
/// write). A new claim (the fence moves) was checked by `ops::claiming::claim` under the row lock.
/// A schema older than 0.3.0 has no claim columns: nothing to check.
fn guard_claim(old: &Deformed, new: &Deformed, id: i64, from: Status, to: Status) {
    if let Some(refusal) = claim_refusal(old, new, id, from, to) {
        errors::raise_error(&Error::Claim(refusal));
    }
}

/// Why `guard_claim` refuses the change, if it does.
fn claim_refusal(old: &Deformed, new: &Deformed, id: i64, from: Status, to: Status) -> Option<claims::Refusal> {
    if from == to {
        return None;
    }
    let state = claim_state(old, id, from);
    if state.claim.is_none() || get::<i64>(new, "fence").unwrap_or(0) != state.fence {
        return None;
    }
    claims::check(&state, store::scope::agent().as_deref(), None, Need::Status, now_us()).err()
}

/// The claim of a row as it was (no claim columns, before 0.3.0: unclaimed).
fn claim_state(old: &Deformed, id: i64, status: Status) -> claims::State {
    let holder = maybe::<String>(old, "claimed_by");
    let expires_us = maybe::<TimestampWithTimeZone>(old, "lease_expires_at").map_or(0, unix_us);
    let fence = maybe::<i64>(old, "fence").unwrap_or(0);
    claims::State { id, status, claim: holder.map(|holder| claims::Claim { holder, expires_us }), fence }
}

/// An update `store::write::update_vetted` runs (one statement where an operation would lock
/// the todo, check it, then update it: `ops::single::change`, a release, a finish): checks the
/// change as that operation does (the lifecycle; the claim as its `Vet` says: a change of
/// status, the actor's live claim, the fence presented; an open todo), and hands the todo as
/// it was to the operation, or the refusal (`store::write::Vetted`). True: leave the row as it
/// is — the change is refused (the operation then takes its longer way, for its own error),
/// or it writes the todo's own status and nothing else.
fn vet_update(old: &Deformed, new: &Deformed) -> bool {
    if !store::write::vetting_any() {
        return false;
    }
    let (Some(tenant), Some(id)) = (get::<String>(old, "tenant_id"), get::<i64>(old, "id")) else {
        return false;
    };
    let Some((status_only, vet)) = store::write::vetting(&tenant, id) else { return false };
    let status = |row: &Deformed| get::<String>(row, "status").and_then(|s| Status::parse(&s));
    let (Some(from), Some(to)) = (status(old), status(new)) else {
        return false; // the trigger raises its error
    };
    let refused = if vet == store::write::Vet::CHANGE {
        claim_refusal(old, new, id, from, to).is_some()
    } else {
        (vet.open && from.is_terminal())
            || claims::check(
                &claim_state(old, id, from),
                store::scope::agent().as_deref(),
                vet.fence,
                vet.need,
                now_us(),
            )
            .is_err()
    };
    if refused || status::check_transition(from, to).is_err() {
        store::write::vetted(Vetted::Refused);
        return true;
    }
    let before = StoredTodo(old).todo();
    let unchanged = status_only && from == to;
    store::write::vetted(if unchanged { Vetted::Unchanged(before) } else { Vetted::Before(before) });
    unchanged
}

/// A row the trigger fired for, read as a `Todo` (`store::read::TodoColumns`).
struct StoredTodo<'r>(&'r Deformed);

impl StoredTodo<'_> {
    fn todo(&self) -> crate::todo::Todo {
        match store::read::todo_from(self) {
            Ok(todo) => todo,
            Err(never) => match never {},
        }
    }
}

impl store::read::TodoColumns for StoredTodo<'_> {
    type Error = std::convert::Infallible;
    fn text(&self, i: usize) -> Result<Option<String>, Self::Error> {
        let col = store::read::todo_name(i);
        if col != "metadata" {
            return Ok(maybe(self.0, col));
        }
        // as `metadata::text` gives it (not re-serialized: callers compare the texts)
        let Some(datum) = attno(col).and_then(|attno| datum(self.0, attno)) else { return Ok(None) };
        // SAFETY: a value of the jsonb column; jsonb_out returns a palloc'd C string.
        Ok(unsafe {
            pgrx::direct_function_call::<&std::ffi::CStr>(pg_sys::jsonb_out, &[Some(datum)])
                .map(|text| text.to_string_lossy().into_owned())
        })
    }
    fn int(&self, i: usize) -> Result<Option<i64>, Self::Error> {
        Ok(maybe(self.0, store::read::todo_name(i)))
    }
    fn texts(&self, i: usize) -> Result<Vec<String>, Self::Error> {
        let labels = maybe::<Vec<Option<String>>>(self.0, store::read::todo_name(i));
        Ok(labels.unwrap_or_default().into_iter().flatten().collect())
    }
    fn stamp(&self, i: usize) -> Result<Option<i64>, Self::Error> {
        Ok(maybe::<TimestampWithTimeZone>(self.0, store::read::todo_name(i)).map(unix_us))
    }
}

/// A claim is set, moved or renewed only by `ops::claiming`'s own statements (`todo.claim`,
/// `todo.heartbeat` and their writ and tool forms), never by writing the columns: a plain
/// INSERT or UPDATE may clear a claim or bring its lease end forward (an administrator
/// taking a todo back, or letting it lapse now) but not set, move or extend one.
/// A restore brings the columns as they were. A schema older than 0.3.0 has no such columns.
///
/// On a distributed store the trigger runs on a worker, in another backend than the claim
/// statement's: there the coordinator's `todo.granting` stands for `granting()`.
fn guard_claim_columns(old: Option<&Deformed>, new: &Deformed, id: i64, shard: bool) {
    if granting() || restoring() || (shard && session::granting_setting()) {
        return;
    }
    if attno("claimed_by").is_none() {
        return;
    }
    let holder = maybe::<String>(new, "claimed_by");
    let fence: i64 = get(new, "fence").unwrap_or(0);
    let lease: Option<TimestampWithTimeZone> = get(new, "lease_expires_at");
    let (old_holder, old_fence, old_lease) = match old {
        Some(o) => (get::<String>(o, "claimed_by"), get::<i64>(o, "fence").unwrap_or(0), get(o, "lease_expires_at")),
        None => (None, 0, None),
    };
    let extends = match (lease, old_lease) {
        (Some(new), Some(old)) => unix_us(new) > unix_us(old),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let sets = fence != old_fence || (holder.is_some() && holder != old_holder) || extends;
    if sets {
        errors::raise(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("todo #{id}: claims are taken with todo.claim() and renewed with todo.heartbeat(), not by writing claimed_by, lease_expires_at or fence"),
            "to take a todo back from an agent, clear its claim: UPDATE todo.todos SET claimed_by = NULL, lease_expires_at = NULL WHERE …",
        );
    }
}

/// Accepts an id an INSERT names (not one reserved in this transaction) or raises: 23505 when
/// a todo has or had it (`store::ids::given_before`: one index probe of the event log), 428C9
/// when a writer under row-level security names one the tenant's counter has not handed out;
/// else the counter (and the range that would hand it out) moves past it.
fn explicit_id(tenant: &str, id: i64, may_raise: bool) {
    store::roles::as_owner(|| {
        if store::ids::given_before(tenant, id) {
            errors::id_reused(id, store::ids::in_use(tenant, id));
        }
        if !store::ids::claim_todo_id(tenant, id, may_raise) {
            errors::id_assigned();
        }
    })
}

/// `BEFORE INSERT OR UPDATE ON todo.todos FOR EACH ROW`.
///
/// On INSERT: allocates `id` from the tenant's counter when it is NULL (or moves the counter
/// past an explicit one, except in a restore: `row_security = off`; an explicit id a todo has
/// or had is refused, 23505), sets `position` to the id when NULL, and stamps `started_at` /
/// `completed_at` for a row born in progress or terminal (unless given).
/// On UPDATE: rejects a change of `tenant_id` or `id` (0A000) and any status change the
/// transition table forbids (55000); stamps `started_at` on entering in_progress and
/// `completed_at` on entering completed/canceled unless the writer set them, clears
/// `completed_at` on reopen, stamps `updated_at` unless the writer set it, bumps `version`;
/// refuses a change of status of a todo under another agent's live claim (55006) or under
/// the actor's own lapsed claim (55000), and ends the claim when the todo leaves in_progress.
/// Both: claim columns set by anything but `ops::claiming`'s claim statements raise 55000.
/// Both: `cancelled` is stored as `canceled`; an unknown status raises 22023.
#[pg_trigger(sql = false)]
fn todos_before_write<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, pgrx::heap_tuple::PgHeapTupleError> {
    let _running = Running::on(trigger);
    let new_row = trigger.new().expect("BEFORE INSERT/UPDATE row trigger has NEW");
    let (old, new) = rows(trigger);
    let mut new = new.expect("BEFORE INSERT/UPDATE row trigger has NEW");
    if old.as_ref().is_some_and(|old| vet_update(old, &new)) {
        return Ok(None);
    }
    // SAFETY: the trigger's relation is valid while it runs; the values are its row's
    unsafe {
        let desc = (*trigger.trigger_data().tg_relation).rd_att;
        crate::limits::check_row(desc, &new, old.as_ref());
    }
    let mut changed = Changed::default();
    let shard = on_shard(trigger);
    // The transaction's start, but never before the row's own last stamp: a transaction that
    // began before another inserted (or changed) this row and committed must not stamp the row
    // as changed before it was created (READ COMMITTED sees the row in a later statement).
    let now = {
        let start = pgrx::datetime::now();
        let last = old.as_ref().and_then(|o| get::<TimestampWithTimeZone>(o, "updated_at"));
        match last {
            Some(last) if last > start => last,
            _ => start,
        }
    };
    let to = normalize_status(&new, &mut changed);
    let tenant: Option<String> = get(&new, "tenant_id");
    let Some(tenant) = tenant else {
        return Ok(Some(changed.apply(trigger, new_row, &mut new))); // NOT NULL rejects it with the standard message
    };

    let from = match &old {
        None => {
            // Before the counter is touched: a writer under row-level security may only add
            // rows of the tenant in context. Checked here, with the policy's own words, so
            // that the counter table's answer can never tell whether another tenant exists.
            if subject_to_rls(trigger) && tenant != store::scope::tenant() {
                errors::rls_violation("todos");
            }
            // ids come from the tenant's counter, which no granted role may write: the
            // statements run as the extension's owner
            let id = match get::<i64>(&new, "id") {
                // a restore brings the counters from the dump, before or after the todos
                Some(id) if restoring() => id,
                // a writer under row-level security (an app's plain SQL) never picks an id the
                // counter has not handed out: one near the top of bigint would leave the
                // tenant none to add
                // (an id reserved here is fresh from the counter: no todo had it). An id is
                // never given to a second todo: one with events is refused
                Some(id) => {
                    let fresh = store::ids::reserved_here(&tenant, id);
                    let may_raise = !subject_to_rls(trigger);
                    if !fresh {
                        explicit_id(&tenant, id, may_raise);
                    }
                    store::ids::note_new_row(&tenant, id, fresh);
                    id
                }
                None => {
                    let id = store::roles::as_owner(|| store::ids::next_todo_id(&tenant));
                    changed.set("id", id);
                    store::ids::note_new_row(&tenant, id, true);
                    id
                }
            };
            if get::<i64>(&new, "position").is_none() {
                changed.set("position", id);
            }
            guard_claim_columns(None, &new, id, shard);
            None
        }
        Some(old) => {
            let id: i64 = get(old, "id").expect("id is NOT NULL");
            if get::<String>(old, "tenant_id") != Some(tenant.clone()) || get::<i64>(&new, "id") != Some(id) {
                errors::identity_changed(id);
            }
            let from_raw: String = get(old, "status").expect("status is NOT NULL");
            let from = Status::parse(&from_raw).unwrap_or_else(|| errors::invalid_status(&from_raw));
            status::check_transition(from, to).unwrap_or_else(|f| errors::forbidden_transition(id, f));
            guard_claim_columns(Some(old), &new, id, shard);
            guard_claim(old, &new, id, from, to);
            if to != Status::InProgress && maybe::<String>(&new, "claimed_by").is_some() {
                // a claim ends when its todo leaves in_progress (finished, released, reopened)
                changed.set("claimed_by", Option::<String>::None);
                changed.set("lease_expires_at", Option::<TimestampWithTimeZone>::None);
            }
            Some(from)
        }
    };

    // On a Citus worker the subtask foreign key is gone (Citus refuses its ON DELETE SET
    // NULL): a new parent must exist, as the key would check (todos_log_event orphans the
    // subtasks of a deleted todo).
    if shard && !restoring() {
        let parent: Option<i64> = get(&new, "parent_id");
        let changed = old.as_ref().is_none_or(|o| get::<i64>(o, "parent_id") != parent);
        if let (Some(parent), true) = (parent, changed) {
            if !store::read::exists(&tenant, parent) {
                errors::raise(
                    PgSqlErrorCode::ERRCODE_FOREIGN_KEY_VIOLATION,
                    format!("insert or update on table \"todos\" violates foreign key constraint \"todos_parent_fkey\": no todo #{parent}"),
                    "a subtask's parent_id is a todo of the same tenant",
                );
            }
        }
    }

    // "The writer set it": on INSERT a non-NULL value, on UPDATE a value different from OLD's.
    let written = |col: &'static str, new: &Deformed| -> bool {
        let value: Option<TimestampWithTimeZone> = get(new, col);
        match &old {
            None => value.is_some(),
            Some(old) => value != get::<TimestampWithTimeZone>(old, col),
        }
    };
    let stamps = status::stamps(from, to);
    if stamps.start && !written("started_at", &new) {
        changed.set("started_at", now);
    }
    if stamps.complete && !written("completed_at", &new) {
        changed.set("completed_at", now);
    }
    if stamps.clear_completed {
        changed.set("completed_at", Option::<TimestampWithTimeZone>::None);
        // an open todo is on its list again (a 0.4.0 table has no such column)
        if maybe::<TimestampWithTimeZone>(&new, "archived_at").is_some() {
            changed.set("archived_at", Option::<TimestampWithTimeZone>::None);
        }
    }
    if let Some(old) = &old {
        // a lease renewal (todo.heartbeat: a claim statement that keeps the fence) is not a
        // change of the todo: updated_at stays, so no indexed column changes and PostgreSQL
        // can make the update a HOT one
        let renewal = (granting() || (shard && session::granting_setting()))
            && get::<i64>(old, "fence") == get::<i64>(&new, "fence");
        if !renewal && !written("updated_at", &new) {
            changed.set("updated_at", now);
        }
        let version: i32 = get(old, "version").unwrap_or(0);
        changed.set("version", version + 1);
    }
    let new_row = changed.apply(trigger, new_row, &mut new);
    check_rules(trigger, &new);
    Ok(Some(new_row))
}

/// Raises 23514, as the CHECK constraint it replaces did, when the row about to be stored
/// breaks one of `row_checks`' rules. A row with a NOT NULL column NULL is left to
/// PostgreSQL, whose message comes first (it checked NOT NULL before the CHECK constraints).
fn check_rules(trigger: &PgTrigger<'_>, new: &Deformed) {
    type Stamp = TimestampWithTimeZone;
    let (id, position): (Option<i64>, Option<i64>) = (get(new, "id"), get(new, "position"));
    let (tenant, subject, status): (Option<String>, Option<String>, Option<String>) =
        (get(new, "tenant_id"), get(new, "subject"), get(new, "status"));
    let (created, updated): (Option<Stamp>, Option<Stamp>) = (get(new, "created_at"), get(new, "updated_at"));
    let version: Option<i32> = get(new, "version");
    // (a table older than 0.3.0 has no fence)
    let no_fence = attno("fence").is_some() && maybe::<i64>(new, "fence").is_none();
    if id.is_none()
        || position.is_none()
        || no_fence
        || tenant.is_none()
        || subject.is_none()
        || status.is_none()
        || created.is_none()
        || updated.is_none()
        || version.is_none()
    {
        return;
    }
    let (conversation_id, priority, external_id): (Option<String>, Option<String>, Option<String>) =
        (get(new, "conversation_id"), get(new, "priority"), maybe(new, "external_id"));
    let row = row_checks::Row {
        id,
        conversation_id: conversation_id.as_deref(),
        subject: subject.as_deref(),
        status: status.as_deref(),
        priority: priority.as_deref(),
        metadata_is_object: metadata(new).map(|m| m.is_object()),
        external_id: external_id.as_deref(),
        archived: maybe::<Stamp>(new, "archived_at").is_some(),
        completed: get::<Stamp>(new, "completed_at").is_some(),
        parent_id: maybe(new, "parent_id"),
        claimed: maybe::<String>(new, "claimed_by").is_some(),
        leased: maybe::<Stamp>(new, "lease_expires_at").is_some(),
    };
    if let Some(violation) = row_checks::first_violation(&row) {
        let relation = trigger.relation().map(|r| r.name().to_string()).unwrap_or_else(|_| "todos".into());
        errors::raise(
            PgSqlErrorCode::ERRCODE_CHECK_VIOLATION,
            row_checks::message(&relation, &violation),
            violation.hint,
        );
    }
}

/// `BEFORE INSERT ON todo.dependencies FOR EACH ROW`: the graph stays acyclic whoever writes
/// it (the surfaces check first, for their own error codes; this holds for plain SQL too).
/// Takes the tenant's dependency lock until the transaction ends, then refuses an edge that
/// would close a cycle through dependencies or subtasks (22023, the path in the message).
/// The edge `ops::dependencies::block` has just checked under that lock is not searched
/// again (`store::edges::checked_by_operation`). Under REPEATABLE READ the snapshot
/// predates the lock and could miss a concurrent edge: refused (0A000), whoever inserts.
/// A restore (`row_security = off`) brings the graph as it was.
#[pg_trigger(sql = false)]
fn dependencies_before_insert<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, pgrx::heap_tuple::PgHeapTupleError> {
    let _running = Running::on(trigger);
    let new = trigger.new().expect("BEFORE INSERT row trigger has NEW").into_owned();
    if restoring() {
        return Ok(Some(new));
    }
    let cols = rows(trigger).1.expect("BEFORE INSERT row trigger has NEW");
    let (tenant, id, on): (Option<String>, Option<i64>, Option<i64>) =
        (get(&cols, "tenant_id"), get(&cols, "todo_id"), get(&cols, "depends_on"));
    let (Some(tenant), Some(id), Some(on)) = (tenant, id, on) else {
        return Ok(Some(new)); // NOT NULL rejects it
    };
    // Before any lock: a writer under row-level security may only add edges of the tenant in
    // context, refused with the policy's own words, so that neither the lock (a wait while
    // that tenant edits) nor a foreign key's answer tells whether another tenant exists.
    if subject_to_rls(trigger) && tenant != store::scope::tenant() {
        errors::rls_violation("dependencies");
    }
    if id == on {
        return Ok(Some(new)); // the CHECK constraint rejects it
    }
    // SAFETY: reads this backend's isolation level.
    if unsafe { pg_sys::XactIsoLevel } == pg_sys::XACT_REPEATABLE_READ as i32 {
        errors::raise(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            "todo.dependencies: a dependency cannot be added in a REPEATABLE READ transaction",
            "its snapshot could miss a concurrent dependency that closes a cycle: use READ COMMITTED or SERIALIZABLE",
        );
    }
    if store::edges::checked_by_operation(&tenant, id, on) {
        return Ok(Some(new)); // checked by the operation inserting it, which holds the lock
    }
    store::locks::lock_dependencies(&tenant);
    if let Some(path) = store::edges::dependency_path(&tenant, on, id) {
        errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            claims::EdgeError::Cycle { id, on, path }.to_string(),
            "todo.dependencies lists the edges",
        );
    }
    Ok(Some(new))
}

/// The columns an event records (the key, version, `updated_at` aside): text, bigint, and
/// the timestamps in `store::events::Changes`' order. An insert event leaves out `fence`
/// and `created_at`; an update event, `lease_expires_at`.
const LOGGED_TEXT: &[&str] = &[
    "conversation_id",
    "turn_id",
    "agent_id",
    "subject",
    "description",
    "active_form",
    "status",
    "priority",
    "completion_criteria",
    "agent_type",
    "outcome",
    "claimed_by",
];
const LOGGED_BIGINT: &[&str] = &["position", "parent_id", "fence"];
const LOGGED_TIME: [&str; 5] = store::events::STAMPS;
/// Columns added in 0.5.0: logged when the table has them (a database not yet updated
/// runs this trigger too).
const LOGGED_TEXT_0_5: &[&str] = &["owner", "external_id"];
/// Text columns added in 1.0.0, logged as those of 0.5.0.
const LOGGED_TEXT_1_0: &[&str] = &["issue_type", "notes", "plan"];

/// The 1.0.0 columns that are not text, as JSON (None: NULL or no such column): `labels` an
/// array of strings, `due_at` its time as ISO 8601 in UTC.
fn columns_1_0(row: &Deformed) -> [(&'static str, Option<serde_json::Value>); 2] {
    [
        ("labels", maybe::<Vec<Option<String>>>(row, "labels").map(|l| serde_json::json!(l))),
        ("due_at", maybe::<TimestampWithTimeZone>(row, "due_at").map(|t| crate::time::iso8601(unix_us(t)).into())),
    ]
}

/// A column that may be missing from the table (`LOGGED_TEXT_0_5`, `metadata`,
/// `archived_at`): None then.
fn maybe<T: FromDatum + IntoDatum>(row: &Deformed, col: &'static str) -> Option<T> {
    column(col)?;
    get(row, col)
}

/// The row's metadata as JSON (None: NULL or no such column).
fn metadata(row: &Deformed) -> Option<serde_json::Value> {
    maybe::<pgrx::JsonB>(row, "metadata").map(|j| j.0)
}

/// An insert event's changes: the row's non-NULL columns.
fn inserted_columns(new: &Deformed) -> store::events::Changes {
    let mut values = serde_json::Map::new();
    for col in LOGGED_TEXT {
        if let Some(v) = get::<String>(new, col) {
            values.insert(col.to_string(), v.into());
        }
    }
    for col in LOGGED_TEXT_0_5.iter().chain(LOGGED_TEXT_1_0) {
        if let Some(v) = maybe::<String>(new, col) {
            values.insert(col.to_string(), v.into());
        }
    }
    for (col, v) in columns_1_0(new) {
        if let Some(v) = v {
            values.insert(col.to_string(), v);
        }
    }
    if let Some(v) = metadata(new) {
        values.insert("metadata".into(), v);
    }
    for col in LOGGED_BIGINT.iter().filter(|c| **c != "fence") {
        if let Some(v) = get::<i64>(new, col) {
            values.insert(col.to_string(), v.into());
        }
    }
    let stamps =
        LOGGED_TIME.map(|col| maybe::<TimestampWithTimeZone>(new, col).filter(|_| col != "created_at").map(Some));
    store::events::Changes { values, stamps }
}

/// An update event's changes: the new values of the columns that differ from `old`'s.
fn changed_columns(old: &Deformed, new: &Deformed) -> store::events::Changes {
    let mut values = serde_json::Map::new();
    for col in LOGGED_TEXT {
        let v = get::<String>(new, col);
        if get::<String>(old, col) != v {
            values.insert(col.to_string(), v.into());
        }
    }
    for col in LOGGED_TEXT_0_5.iter().chain(LOGGED_TEXT_1_0) {
        let v = maybe::<String>(new, col);
        if maybe::<String>(old, col) != v {
            values.insert(col.to_string(), v.into());
        }
    }
    for ((col, before), (_, after)) in columns_1_0(old).into_iter().zip(columns_1_0(new)) {
        if before != after {
            values.insert(col.to_string(), after.unwrap_or(serde_json::Value::Null));
        }
    }
    let meta = metadata(new);
    if metadata(old) != meta {
        values.insert("metadata".into(), meta.unwrap_or(serde_json::Value::Null));
    }
    for col in LOGGED_BIGINT {
        let v = get::<i64>(new, col);
        if get::<i64>(old, col) != v {
            values.insert(col.to_string(), v.into());
        }
    }
    let stamps = LOGGED_TIME.map(|col| {
        let v = maybe::<TimestampWithTimeZone>(new, col);
        (col != "lease_expires_at" && maybe::<TimestampWithTimeZone>(old, col) != v).then_some(v)
    });
    store::events::Changes { values, stamps }
}

/// The key of an event about `row` (its tenant, id and conversation), at `version`.
fn event_key(row: &Deformed, version: i32, agent: Option<String>, turn: Option<String>) -> store::events::Key {
    store::events::Key {
        tenant: get(row, "tenant_id").unwrap_or_default(),
        id: get(row, "id").unwrap_or(0),
        version,
        conversation: get(row, "conversation_id"),
        agent,
        turn,
    }
}

/// `AFTER INSERT OR UPDATE OR DELETE ON todo.todos FOR EACH ROW`: the event log, written
/// after each row change, so it records what was really stored.
///
/// INSERT: an `insert` event whose `changes` are the row's non-NULL columns (not the key,
/// version, stamps or fence); the agent and turn are the context's, else the row's. A restore
/// (`row_security = off`) brings each row's history from the dump instead; an insert event
/// already there (an id used again) is kept.
/// UPDATE: an `update` event with the new values of the changed columns, when any changed.
/// DELETE: a `delete` event, unless the whole tenant is being deleted.
#[pg_trigger(sql = false)]
fn todos_log_event<'a>(
    trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, pgrx::heap_tuple::PgHeapTupleError> {
    let _running = Running::on(trigger);
    let (agent, turn) = (store::scope::agent(), session::turn());
    let status = |row: &Deformed| get::<String>(row, "status").unwrap_or_default();
    let key = match rows(trigger) {
        (None, Some(new)) => {
            if restoring() {
                return Ok(None);
            }
            let agent = agent.or_else(|| get(&new, "agent_id"));
            let turn = turn.or_else(|| get(&new, "turn_id"));
            let key = event_key(&new, get(&new, "version").unwrap_or(1), agent, turn);
            let first = store::ids::first_row(&key.tenant, key.id);
            store::events::inserted(&key, &status(&new), inserted_columns(&new), first);
            key
        }
        (Some(old), Some(new)) => {
            let changes = changed_columns(&old, &new);
            if changes.values.is_empty() && changes.stamps.iter().all(Option::is_none) {
                return Ok(None);
            }
            let key = event_key(&new, get(&new, "version").unwrap_or(1), agent, turn);
            store::events::updated(&key, &status(&old), &status(&new), changes);
            key
        }
        (Some(old), None) => {
            let key = event_key(&old, get::<i32>(&old, "version").unwrap_or(0) + 1, agent, turn);
            store::events::deleted(&key, &status(&old));
            if on_shard(trigger) {
                // what the subtask foreign key's ON DELETE SET NULL does on one server
                store::write::orphan_subtasks(&key.tenant, key.id);
            }
            key
        }
        (None, None) => return Ok(None),
    };
    // a write by plain SQL (not through a pg_todos function, which hints once per call when
    // it returns) hints the tenant's listeners itself (with todo.notify = hint; throttled);
    // not on a Citus worker, where a NOTIFY would break the two-phase commit (and reach no
    // listener)
    if !session::in_call() && !on_shard(trigger) {
        store::channel::hint(&key.tenant);
    }
    Ok(None)
}

/// `AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.tenants FOR EACH STATEMENT`: the
/// backends that remember which tenants are registered forget it (`store::ids`).
#[pg_trigger(sql = false)]
fn tenants_changed<'a>(
    _trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, pgrx::heap_tuple::PgHeapTupleError> {
    // by name, not the trigger's relation: on Citus it fires on a placement of the reference table
    store::ids::announce_tenants_changed(store::catalog::relid(c"tenants"));
    Ok(None)
}

/// `AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON todo.roles FOR EACH STATEMENT`: the
/// backends that remember which roles are bound to a tenant forget it (`store::roles`).
#[pg_trigger(sql = false)]
fn roles_changed<'a>(
    _trigger: &'a PgTrigger<'a>,
) -> Result<Option<PgHeapTuple<'a, AllocatedByRust>>, pgrx::heap_tuple::PgHeapTupleError> {
    store::roles::announce_changed();
    Ok(None)
}
