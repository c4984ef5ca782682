//! The before-write trigger of `todo.todos` (`todos_before_write`): ids, the lifecycle (the
//! transition table in `status.rs`), the stamps, the claim guard, and the row rules
//! (`row_checks`), for the extension's functions and plain SQL alike. It touches only the row
//! itself and its tenant's counter row.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByRust, PgTrigger};

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

use super::row::{attno, datum, get, maybe, metadata, on_shard, restoring, rows, subject_to_rls, Changed, Running};

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
        store::write::vetted(id, Vetted::Refused);
        return true;
    }
    let before = StoredTodo(old).todo();
    let unchanged = status_only && from == to;
    store::write::vetted(id, if unchanged { Vetted::Unchanged(before) } else { Vetted::Before(before) });
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
    let now = stamp_time(old.as_ref());
    let to = normalize_status(&new, &mut changed);
    let tenant: Option<String> = get(&new, "tenant_id");
    let Some(tenant) = tenant else {
        return Ok(Some(changed.apply(trigger, new_row, &mut new))); // NOT NULL rejects it with the standard message
    };
    let from = match &old {
        None => {
            insert_identity(trigger, &new, &tenant, &mut changed);
            None
        }
        Some(old) => Some(update_lifecycle(old, &new, &tenant, to, &mut changed, shard)),
    };
    if shard && !restoring() {
        check_parent_on_shard(&tenant, old.as_ref(), &new);
    }
    stamp(old.as_ref(), &new, from, to, now, &mut changed, shard);
    let new_row = changed.apply(trigger, new_row, &mut new);
    check_rules(trigger, &new);
    Ok(Some(new_row))
}

/// The time a write stamps: the transaction's start, but never before the row's own last
/// stamp: a transaction that began before another inserted (or changed) this row and committed
/// must not stamp the row as changed before it was created (READ COMMITTED sees the row in a
/// later statement).
fn stamp_time(old: Option<&Deformed>) -> TimestampWithTimeZone {
    let start = pgrx::datetime::now();
    let last = old.and_then(|o| get::<TimestampWithTimeZone>(o, "updated_at"));
    match last {
        Some(last) if last > start => last,
        _ => start,
    }
}

/// An INSERT's id and position: the id from the tenant's counter when NULL, else the one given
/// (accepted by `explicit_id`, or as it is in a restore); the position the id when NULL. The
/// claim columns must not be set.
fn insert_identity(trigger: &PgTrigger<'_>, new: &Deformed, tenant: &str, changed: &mut Changed) {
    // Before the counter is touched: a writer under row-level security may only add
    // rows of the tenant in context. Checked here, with the policy's own words, so
    // that the counter table's answer can never tell whether another tenant exists.
    if subject_to_rls(trigger) && tenant != store::scope::tenant() {
        errors::rls_violation("todos");
    }
    // ids come from the tenant's counter, which no granted role may write: the
    // statements run as the extension's owner
    let id = match get::<i64>(new, "id") {
        // a restore brings the counters from the dump, before or after the todos
        Some(id) if restoring() => id,
        // a writer under row-level security (an app's plain SQL) never picks an id the
        // counter has not handed out: one near the top of bigint would leave the
        // tenant none to add
        // (an id reserved here is fresh from the counter: no todo had it). An id is
        // never given to a second todo: one with events is refused
        Some(id) => {
            let fresh = store::ids::reserved_here(tenant, id);
            let may_raise = !subject_to_rls(trigger);
            if !fresh {
                explicit_id(tenant, id, may_raise);
            }
            store::ids::note_new_row(tenant, id, fresh);
            id
        }
        None => {
            let id = store::roles::as_owner(|| store::ids::next_todo_id(tenant));
            changed.set("id", id);
            store::ids::note_new_row(tenant, id, true);
            id
        }
    };
    if get::<i64>(new, "position").is_none() {
        changed.set("position", id);
    }
    guard_claim_columns(None, new, id, on_shard(trigger));
}

/// An UPDATE's checks: the tenant and id unchanged, the change of status one the transition
/// table allows, the claim columns and the claim guarded; a todo leaving in_progress ends its
/// claim. Returns the status the row had.
fn update_lifecycle(
    old: &Deformed,
    new: &Deformed,
    tenant: &str,
    to: Status,
    changed: &mut Changed,
    shard: bool,
) -> Status {
    let id: i64 = get(old, "id").expect("id is NOT NULL");
    if get::<String>(old, "tenant_id").as_deref() != Some(tenant) || get::<i64>(new, "id") != Some(id) {
        errors::identity_changed(id);
    }
    let from_raw: String = get(old, "status").expect("status is NOT NULL");
    let from = Status::parse(&from_raw).unwrap_or_else(|| errors::invalid_status(&from_raw));
    status::check_transition(from, to).unwrap_or_else(|f| errors::forbidden_transition(id, f));
    guard_claim_columns(Some(old), new, id, shard);
    guard_claim(old, new, id, from, to);
    if to != Status::InProgress && maybe::<String>(new, "claimed_by").is_some() {
        // a claim ends when its todo leaves in_progress (finished, released, reopened)
        changed.set("claimed_by", Option::<String>::None);
        changed.set("lease_expires_at", Option::<TimestampWithTimeZone>::None);
    }
    from
}

/// On a Citus worker the subtask foreign key is gone (Citus refuses its ON DELETE SET NULL):
/// a new parent must exist, as the key would check (todos_log_event orphans the subtasks of a
/// deleted todo).
fn check_parent_on_shard(tenant: &str, old: Option<&Deformed>, new: &Deformed) {
    let parent: Option<i64> = get(new, "parent_id");
    let changed = old.is_none_or(|o| get::<i64>(o, "parent_id") != parent);
    if let (Some(parent), true) = (parent, changed) {
        if !store::read::exists(tenant, parent) {
            errors::raise(
                PgSqlErrorCode::ERRCODE_FOREIGN_KEY_VIOLATION,
                format!("insert or update on table \"todos\" violates foreign key constraint \"todos_parent_fkey\": no todo #{parent}"),
                "a subtask's parent_id is a todo of the same tenant",
            );
        }
    }
}

/// The stamps of a change from `from` (None: an INSERT) to `to`, each unless the writer set it:
/// `started_at`, `completed_at` (set, or cleared on reopen, with `archived_at`), and on UPDATE
/// `updated_at` (not for a lease renewal) and the next `version`.
fn stamp(
    old: Option<&Deformed>,
    new: &Deformed,
    from: Option<Status>,
    to: Status,
    now: TimestampWithTimeZone,
    changed: &mut Changed,
    shard: bool,
) {
    // "The writer set it": on INSERT a non-NULL value, on UPDATE a value different from OLD's.
    let written = |col: &'static str| -> bool {
        let value: Option<TimestampWithTimeZone> = get(new, col);
        match old {
            None => value.is_some(),
            Some(old) => value != get::<TimestampWithTimeZone>(old, col),
        }
    };
    let stamps = status::stamps(from, to);
    if stamps.start && !written("started_at") {
        changed.set("started_at", now);
    }
    if stamps.complete && !written("completed_at") {
        changed.set("completed_at", now);
    }
    if stamps.clear_completed {
        changed.set("completed_at", Option::<TimestampWithTimeZone>::None);
        // an open todo is on its list again (a 0.4.0 table has no such column)
        if maybe::<TimestampWithTimeZone>(new, "archived_at").is_some() {
            changed.set("archived_at", Option::<TimestampWithTimeZone>::None);
        }
    }
    if let Some(old) = old {
        // a lease renewal (todo.heartbeat: a claim statement that keeps the fence) is not a
        // change of the todo: updated_at stays, so no indexed column changes and PostgreSQL
        // can make the update a HOT one
        let renewal = (granting() || (shard && session::granting_setting()))
            && get::<i64>(old, "fence") == get::<i64>(new, "fence");
        if !renewal && !written("updated_at") {
            changed.set("updated_at", now);
        }
        let version: i32 = get(old, "version").unwrap_or(0);
        changed.set("version", version + 1);
    }
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
