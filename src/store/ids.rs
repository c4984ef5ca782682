//! Tenants and todo ids: whether a tenant is registered, and each tenant's id counter
//! (`todo.counters`), so ids reveal nothing about other tenants.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::prelude::*;

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
        pg_sys::CacheRegisterRelcacheCallback(Some(forget_registered), pg_sys::Datum::from(0));
    }
}

/// A relation cache invalidation: `todo.tenants` changed (or every relation: a reset).
unsafe extern "C-unwind" fn forget_registered(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
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
    }
}

fn local_xact() -> pg_sys::LocalTransactionId {
    // SAFETY: MyProc is set for every backend that runs SQL.
    unsafe { (*pg_sys::MyProc).lxid }
}

/// Raises 42704 unless `tenant` is a row of `todo.tenants` (as the calling user can see it).
/// A tenant found registered is not looked up again until `todo.tenants` changes.
pub fn require_registered(tenant: &str) {
    // SAFETY: reads the current user id.
    let user = unsafe { pg_sys::GetUserId() };
    if REGISTERED.with(|r| r.borrow().tenants.get(tenant).is_some_and(|users| users.contains(&user))) {
        return;
    }
    let found =
        one::<bool>("SELECT EXISTS (SELECT 1 FROM todo.tenants WHERE tenant_id = $1)", &[tenant.into()], false);
    if found != Some(true) {
        errors::unknown_tenant(tenant);
    }
    let relid = tenants_relid();
    REGISTERED.with(|r| {
        let mut r = r.borrow_mut();
        r.relid = Some(relid);
        if r.tenants.len() >= REGISTERED_MAX {
            r.tenants.clear();
        }
        r.tenants.entry(tenant.to_string()).or_default().push(user);
    });
}

fn tenants_relid() -> pg_sys::Oid {
    // SAFETY: catalog lookups by name; the extension's schema and table exist (the query
    // above just read the table).
    unsafe { pg_sys::get_relname_relid(c"tenants".as_ptr(), pg_sys::get_namespace_oid(c"todo".as_ptr(), false)) }
}

/// Tells every backend that the registered tenants changed (see `require_registered`): a
/// relation cache invalidation of `todo.tenants` (`relid`), sent at commit, or handed back
/// to this backend when the change rolls back.
pub fn announce_tenants_changed(relid: pg_sys::Oid) {
    // SAFETY: queues an invalidation of an existing relation.
    unsafe { pg_sys::CacheInvalidateRelcacheByRelid(relid) };
}

/// The next todo id of `tenant`: one more than the last it was given. Ids are counted per
/// tenant in `todo.counters`, so they reveal nothing about other tenants. The counter row
/// stays locked until the transaction ends, which serializes id allocation within one tenant
/// (and only within it).
pub fn next_todo_id(tenant: &str) -> i64 {
    one::<i64>(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, 1)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = c.last_id + 1
         RETURNING last_id",
        &[tenant.into()],
        true,
    )
    .expect("RETURNING last_id is never NULL")
}

/// Reserves `n` consecutive todo ids of `tenant` with one update of its counter and returns
/// the first. A message of many `/todo add`s takes its ids this way: one counter update per
/// todo, each in its own subtransaction, would make every later update of the counter row in
/// the transaction walk a longer chain of row versions. An id whose add then fails is not
/// used again (ids may have gaps; they never repeat).
pub fn reserve_todo_ids(tenant: &str, n: i64) -> i64 {
    let first = one::<i64>(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = c.last_id + $2
         RETURNING last_id - $2 + 1",
        &[tenant.into(), n.into()],
        true,
    )
    .expect("RETURNING is never NULL");
    // SAFETY: reads this backend's current subtransaction id.
    let subxact = unsafe { pg_sys::GetCurrentSubTransactionId() };
    let reserved = Reserved { lxid: local_xact(), subxact, tenant: tenant.to_string(), ids: first..=first + n - 1 };
    RESERVED.with(|r| *r.borrow_mut() = Some(reserved));
    first
}

/// Locks `tenant`'s id counter until the transaction ends, without taking an id: a call that
/// may add todos takes it before it locks any todo (see `locks`). A tenant that never had a
/// todo has no counter row yet: its first insert creates it.
pub fn lock_counter(tenant: &str) {
    exec("SELECT c.last_id FROM todo.counters c WHERE c.tenant_id = $1 FOR UPDATE", &[tenant.into()]);
}

/// Moves `tenant`'s counter past an id the writer chose itself (an import or a restore), so
/// the next allocated id never collides with it.
pub fn claim_todo_id(tenant: &str, id: i64) {
    // Most explicit ids were reserved from this counter already (see `reserve_todo_ids`):
    // the ones this transaction reserved need nothing, a read settles the others.
    let lxid = local_xact();
    if RESERVED.with(|r| r.borrow().as_ref().is_some_and(|res| res.lxid == lxid && res.tenant == tenant && res.ids.contains(&id))) {
        return;
    }
    let last = one::<i64>("SELECT last_id FROM todo.counters WHERE tenant_id = $1", &[tenant.into()], false);
    if last.is_some_and(|last| last >= id) {
        return;
    }
    exec(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = greatest(c.last_id, excluded.last_id)
         WHERE c.last_id < excluded.last_id",
        &[tenant.into(), id.into()],
    );
}
