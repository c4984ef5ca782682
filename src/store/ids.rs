//! Tenants and todo ids: whether a tenant is registered, and each tenant's ids, from its
//! counter (`todo.counters`) through ranges (`todo.id_ranges`), so ids reveal nothing about
//! other tenants and writers of one tenant do not wait for each other.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::prelude::*;

use super::catalog::{local_xact, relid};
use super::{exec, one};
use crate::errors;

thread_local! {
    /// Tenants found registered, with the users they were found registered for. Kept across
    /// transactions until `todo.tenants` changes: its trigger `tenants_changed` sends a
    /// relation cache invalidation, which every backend (this one at the end of the
    /// command, others at their next transaction) hands to `forget_registered`.
    static REGISTERED: RefCell<Registered> = RefCell::new(Registered::default());
    /// The ids reserved last (`reserve_todo_ids`): while the (sub)transaction that reserved
    /// them lives, an insert with one of them needs no look at the counter.
    static RESERVED: RefCell<Option<Reserved>> = const { RefCell::new(None) };
    /// The ids given to new rows in this transaction (see `note_new_row`).
    static NEW_ROWS: RefCell<NewRows> = RefCell::new(NewRows::default());
}

/// The ids the row trigger gave to new rows in the current transaction, and which of them came
/// fresh from the counter: a row with such an id is the first with it ever, so it has no
/// history in the event log yet.
#[derive(Default)]
struct NewRows {
    lxid: pg_sys::LocalTransactionId,
    /// every id given to a new row in the transaction, by tenant, and whether it is fresh and
    /// unlogged (about 20 bytes an id)
    ids: HashMap<String, HashMap<i64, bool>>,
    /// how many ids `ids` holds
    count: usize,
}

/// A transaction that adds more rows than this keeps no more (their inserts are logged by an
/// INSERT statement each, which costs several times the direct append: `first_row` answers
/// false). About 4 MB at most.
const NEW_ROWS_MAX: usize = 200_000;

/// Notes that the row trigger gives `id` to a new row of `tenant`; `fresh`: the id comes from
/// the counter in this transaction (allocated, or reserved by `reserve_todo_ids`). An id given
/// twice in one transaction is fresh for neither row.
pub fn note_new_row(tenant: &str, id: i64, fresh: bool) {
    let lxid = local_xact();
    NEW_ROWS.with(|n| {
        let mut n = n.borrow_mut();
        if n.lxid != lxid {
            n.lxid = lxid;
            n.ids.clear();
            n.count = 0;
        }
        if n.count >= NEW_ROWS_MAX {
            return;
        }
        if !n.ids.contains_key(tenant) {
            n.ids.insert(tenant.to_string(), HashMap::new());
        }
        let ids = n.ids.get_mut(tenant).expect("inserted above");
        let again = ids.insert(id, fresh).is_some();
        if again {
            ids.insert(id, false);
        } else {
            n.count += 1;
        }
    });
}

/// Whether the new row `id` of `tenant` is the first row ever with that id (its insert event
/// can be appended without looking for an earlier one); answers true once.
pub fn first_row(tenant: &str, id: i64) -> bool {
    let lxid = local_xact();
    NEW_ROWS.with(|n| {
        let mut n = n.borrow_mut();
        if n.lxid != lxid {
            return false;
        }
        match n.ids.get_mut(tenant).and_then(|ids| ids.get_mut(&id)) {
            Some(fresh) => std::mem::replace(fresh, false),
            None => false,
        }
    })
}

/// Whether `id` of `tenant` is among the ids this transaction reserved.
pub fn reserved_here(tenant: &str, id: i64) -> bool {
    let lxid = local_xact();
    RESERVED.with(|r| {
        r.borrow().as_ref().is_some_and(|res| res.lxid == lxid && res.tenant == tenant && res.ids.contains(&id))
    })
}

#[derive(Default)]
struct Registered {
    /// `todo.tenants`' oid once looked up (the invalidation names relations by oid)
    relid: Option<pg_sys::Oid>,
    tenants: HashMap<String, Vec<pg_sys::Oid>>,
}

/// A backend serving many tenants keeps at most this many.
const REGISTERED_MAX: usize = 4096;

struct Reserved {
    lxid: pg_sys::LocalTransactionId,
    subxact: pg_sys::SubTransactionId,
    tenant: String,
    ids: std::ops::RangeInclusive<i64>,
}

/// Registered once per backend: forgets the reserved ids when the subtransaction that
/// reserved them (or one it runs in) rolls back, taking the counter's update with it.
pub fn init() {
    // SAFETY: registers plain functions; they only touch this module's thread-locals.
    unsafe {
        pg_sys::RegisterSubXactCallback(Some(forget_rolled_back), std::ptr::null_mut());
    }
}

/// A relation cache invalidation (`relation_changed` in lib.rs): `todo.tenants` changed (or
/// every relation: a reset).
pub fn relation_changed(relid: pg_sys::Oid) {
    REGISTERED.with(|r| {
        let mut r = r.borrow_mut();
        if relid == pg_sys::InvalidOid || r.relid == Some(relid) {
            r.tenants.clear();
        }
    });
}

unsafe extern "C-unwind" fn forget_rolled_back(
    event: pg_sys::SubXactEvent::Type,
    subxact: pg_sys::SubTransactionId,
    _parent: pg_sys::SubTransactionId,
    _arg: *mut std::ffi::c_void,
) {
    if event == pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB {
        // subtransaction ids grow: the one rolling back is the reserver or one of its
        // ancestors exactly when its id is not larger (a sibling that ended before has no
        // events left)
        RESERVED.with(|r| {
            let mut r = r.borrow_mut();
            if r.as_ref().is_some_and(|res| res.subxact >= subxact) {
                *r = None;
            }
        });
        super::id_ranges::forget_rolled_back(subxact);
    }
}

/// Raises 42704 unless `tenant` is a row of `todo.tenants` (as the calling user can see it).
/// A tenant found registered is not looked up again until `todo.tenants` changes.
pub fn require_registered(tenant: &str) {
    // SAFETY: reads the current user id.
    let user = unsafe { pg_sys::GetUserId() };
    if REGISTERED.with(|r| r.borrow().tenants.get(tenant).is_some_and(|users| users.contains(&user))) {
        return;
    }
    let found = one::<bool>("SELECT EXISTS (SELECT 1 FROM todo.tenants WHERE tenant_id = $1)", &[tenant.into()], false);
    if found != Some(true) {
        errors::unknown_tenant(tenant);
    }
    if !schema_0_4() {
        return; // no trigger tells this backend when todo.tenants changes
    }
    let relid = relid(c"tenants");
    REGISTERED.with(|r| {
        let mut r = r.borrow_mut();
        r.relid = Some(relid);
        if r.tenants.len() >= REGISTERED_MAX {
            r.tenants.clear();
        }
        r.tenants.entry(tenant.to_string()).or_default().push(user);
    });
}

/// Whether the database's schema is 0.4.0's or later (it has `todo.id_ranges` and the trigger
/// on `todo.tenants`). The library serves a database still at an older version between
/// installing it and `ALTER EXTENSION pg_todos UPDATE`: ids then come from the counter alone.
fn schema_0_4() -> bool {
    relid(c"id_ranges") != pg_sys::InvalidOid
}

/// Tells every backend that the registered tenants changed (see `require_registered`): a
/// relation cache invalidation of `todo.tenants` (`relid`), sent at commit, or handed back
/// to this backend when the change rolls back.
pub fn announce_tenants_changed(relid: pg_sys::Oid) {
    // SAFETY: queues an invalidation of an existing relation.
    unsafe { pg_sys::CacheInvalidateRelcacheByRelid(relid) };
}

/// How many ids a new range takes from the counter (more when a call needs more at once, or
/// the transaction has taken many already: `run_size`).
const BLOCK: i64 = 32;

/// The most ids a new range takes because its transaction has taken many already.
const MAX_RUN: i64 = 4096;

thread_local! {
    /// How many ids the current transaction has taken of one tenant (the last it took from).
    static TAKEN: RefCell<(pg_sys::LocalTransactionId, String, i64)> = const { RefCell::new((0, String::new(), 0)) };
}

/// Counts `n` ids taken of `tenant` in this transaction, and returns how many it took before.
fn count_taken(tenant: &str, n: i64) -> i64 {
    let lxid = local_xact();
    TAKEN.with(|t| {
        let mut t = t.borrow_mut();
        if t.0 != lxid || t.1 != tenant {
            *t = (lxid, tenant.to_string(), 0);
        }
        let before = t.2;
        t.2 += n;
        before
    })
}

/// How many ids a new run from the counter holds: at least `room`, at least `BLOCK`, and as
/// many as the transaction took of the tenant before (up to `MAX_RUN`), so one INSERT of many
/// rows refills a range a logarithmic number of times, not once per 32 rows (each refill is a
/// statement that reads the range and the counter, rows this transaction has written over
/// and over). The ids a transaction does not use stay in the range for the next writer.
fn run_size(room: i64, taken_before: i64) -> i64 {
    BLOCK.max(room).max(taken_before.min(MAX_RUN))
}

/// Takes `n` ids of a range of `tenant` that has room and that no other transaction holds
/// (never waiting: SKIP LOCKED; a range this transaction holds qualifies), leaving it held
/// until the transaction ends; `n` may be 0 (only hold it). None: no such range.
const FROM_RANGE: &str = "UPDATE todo.id_ranges r SET next_id = r.next_id + $2
   WHERE r.tenant_id = $1
     AND r.slot = (SELECT f.slot FROM todo.id_ranges f WHERE f.tenant_id = $1 AND f.last_id - f.next_id + 1 >= $3
                    ORDER BY f.next_id LIMIT 1 FOR UPDATE SKIP LOCKED)
   RETURNING r.next_id - $2";

/// Refills one emptied range of `$1` that no other transaction holds with the ids `$2` to
/// `$3`. The range is picked once, by a scalar subquery (an InitPlan): joined as `FROM
/// (… LIMIT 1 FOR UPDATE SKIP LOCKED)`, the planner may run the subquery again for each
/// range it visits, and that second run, skipping the row just locked, picks another empty
/// range and gives both ranges the same ids.
const REFILL: &str = "UPDATE todo.id_ranges r SET next_id = $2, last_id = $3
   WHERE r.tenant_id = $1
     AND r.slot = (SELECT f.slot FROM todo.id_ranges f WHERE f.tenant_id = $1 AND f.next_id > f.last_id
                    ORDER BY f.slot LIMIT 1 FOR UPDATE SKIP LOCKED)
   RETURNING r.slot";

/// Todo ids come from ranges (`todo.id_ranges`): each range is a run of the tenant's ids
/// taken from its counter (`todo.counters`, the last id given to any range) and handed out
/// in order. A writer takes ids from a range no other transaction holds and holds it until
/// it ends, so writers of one tenant never wait for each other; only a writer that finds no
/// range with room takes a new run from the counter, whose row it then holds until it ends.
/// Ids are counted per tenant, so they reveal nothing about other tenants. With one writer
/// at a time ids come in order with no gaps; concurrent writers take them from different
/// ranges, so an id can be smaller than one given out earlier, and a range's unused ids stay
/// unused until some writer takes them.
///
/// Reserves `n` ids of `tenant` (consecutive) and returns the first. A message of many
/// `/todo add`s takes its ids this way, at once. An id whose add then fails is not used
/// again (ids may have gaps; they never repeat).
pub fn reserve_todo_ids(tenant: &str, n: i64) -> i64 {
    let first = take(tenant, n, n);
    // SAFETY: reads this backend's current subtransaction id.
    let subxact = unsafe { pg_sys::GetCurrentSubTransactionId() };
    let reserved = Reserved { lxid: local_xact(), subxact, tenant: tenant.to_string(), ids: first..=first + n - 1 };
    RESERVED.with(|r| *r.borrow_mut() = Some(reserved));
    first
}

/// The next id of `tenant` (the row trigger's, for an insert without one).
pub fn next_todo_id(tenant: &str) -> i64 {
    take(tenant, 1, 1)
}

/// Makes this transaction hold a range of `tenant` with room for `n` ids, so that a later
/// `reserve_todo_ids` of at most `n` waits for no one: a call that may add todos takes it
/// before it locks any todo (see `locks`).
pub fn hold_ids(tenant: &str, n: i64) {
    take(tenant, 0, n.max(1));
}

/// Takes `n` ids from a range with room for `room` (≥ n) and returns the first.
fn take(tenant: &str, n: i64, room: i64) -> i64 {
    if !schema_0_4() {
        return from_counter(tenant, n.max(1));
    }
    let taken_before = count_taken(tenant, n);
    // straight from the table where it can (`id_ranges`), else the statement
    let taken = match super::id_ranges::take(tenant, n, room) {
        Some(taken) => taken,
        None => one::<i64>(FROM_RANGE, &[tenant.into(), n.into(), room.into()], true),
    };
    if let Some(first) = taken {
        return first;
    }
    // no range with room that no one holds: a new run from the counter (waiting for a
    // writer that took one before), the ids after the `n` taken into a range this
    // transaction holds (an emptied one that no one holds, else a new one)
    let size = run_size(room, taken_before);
    let first = from_counter(tenant, size);
    let (next, last) = (first + n, first + size - 1);
    let refilled = exec(REFILL, &[tenant.into(), next.into(), last.into()]);
    if refilled == 0 {
        // new ranges are numbered under the counter's lock: two writers never pick one slot
        // (two statements: Citus runs an INSERT … SELECT of a constant tenant through the
        // coordinator, by COPY, which row-level security refuses)
        let slot = one::<i32>(
            "SELECT coalesce(max(r.slot), 0) + 1 FROM todo.id_ranges r WHERE r.tenant_id = $1",
            &[tenant.into()],
            true,
        )
        .unwrap_or(1);
        exec(
            "INSERT INTO todo.id_ranges (tenant_id, slot, next_id, last_id) VALUES ($1, $2, $3, $4)",
            &[tenant.into(), slot.into(), next.into(), last.into()],
        );
    }
    first
}

/// Takes the next `n` ids of `tenant`'s counter (creating it) and returns the first; the
/// counter row stays locked until the transaction ends.
fn from_counter(tenant: &str, n: i64) -> i64 {
    one::<i64>(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = c.last_id + $2
         RETURNING last_id - $2 + 1",
        &[tenant.into(), n.into()],
        true,
    )
    .expect("RETURNING is never NULL")
}

/// Whether `id` of `tenant` was ever given to a todo: the event log holds an event of it (one
/// probe of `events_pkey`, `(tenant_id, todo_id, version)`). Every todo's first event is its
/// insert and a deleted todo's events stay, so a todo deleted long ago counts too; on Citus
/// the events are colocated with the tenant's todos, so the probe runs on its worker.
pub fn given_before(tenant: &str, id: i64) -> bool {
    one::<bool>(
        "SELECT EXISTS (SELECT 1 FROM todo.events e WHERE e.tenant_id = $1 AND e.todo_id = $2)",
        &[tenant.into(), id.into()],
        false,
    )
    .unwrap_or(false)
}

/// Whether `tenant` has a todo `id` now (for the words of a refusal).
pub fn in_use(tenant: &str, id: i64) -> bool {
    one::<bool>(
        "SELECT EXISTS (SELECT 1 FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = $2)",
        &[tenant.into(), id.into()],
        false,
    )
    .unwrap_or(false)
}

/// Moves `tenant`'s counter past an id the writer chose itself (an import or a restore), so
/// the next allocated id never collides with it. With `may_raise` false (a writer under
/// row-level security: an app's plain SQL, or a Citus worker's part of a call) an id past
/// the counter is refused instead: false. Such a writer may only name an id the counter has
/// handed out already (as pg_todos' own calls do, with the ids they reserved).
pub fn claim_todo_id(tenant: &str, id: i64, may_raise: bool) -> bool {
    // Most explicit ids were reserved from this counter already (see `reserve_todo_ids`):
    // the caller asks `reserved_here` first (those need nothing), a read settles the others.
    let last = one::<i64>("SELECT last_id FROM todo.counters WHERE tenant_id = $1", &[tenant.into()], false);
    if last.is_some_and(|last| last >= id) {
        if !schema_0_4() {
            return true;
        }
        // given to a range already: if that range has not handed it out yet, it must not
        exec(
            "UPDATE todo.id_ranges SET next_id = $2 + 1 WHERE tenant_id = $1 AND next_id <= $2 AND last_id >= $2",
            &[tenant.into(), id.into()],
        );
        return true;
    }
    if !may_raise {
        return false;
    }
    exec(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = greatest(c.last_id, excluded.last_id)
         WHERE c.last_id < excluded.last_id",
        &[tenant.into(), id.into()],
    );
    true
}
