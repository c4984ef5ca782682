//! Tenants and todo ids: whether a tenant is registered, and each tenant's id counter
//! (`todo.counters`), so ids reveal nothing about other tenants.

use std::cell::RefCell;

use pgrx::prelude::*;

use super::{exec, one};
use crate::errors;

thread_local! {
    /// The tenant found registered last, and the local transaction it was found in: a
    /// transaction asks once per tenant.
    static REGISTERED: RefCell<Option<(pg_sys::LocalTransactionId, String)>> = const { RefCell::new(None) };
}

fn local_xact() -> pg_sys::LocalTransactionId {
    // SAFETY: MyProc is set for every backend that runs SQL.
    unsafe { (*pg_sys::MyProc).lxid }
}

/// Raises 42704 unless `tenant` is a row of `todo.tenants` (as the caller can see it).
pub fn require_registered(tenant: &str) {
    let lxid = local_xact();
    if REGISTERED.with(|r| r.borrow().as_ref().is_some_and(|(x, t)| *x == lxid && t == tenant)) {
        return;
    }
    let found =
        one::<bool>("SELECT EXISTS (SELECT 1 FROM todo.tenants WHERE tenant_id = $1)", &[tenant.into()], false);
    if found != Some(true) {
        errors::unknown_tenant(tenant);
    }
    REGISTERED.with(|r| *r.borrow_mut() = Some((lxid, tenant.to_string())));
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
    one::<i64>(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = c.last_id + $2
         RETURNING last_id - $2 + 1",
        &[tenant.into(), n.into()],
        true,
    )
    .expect("RETURNING is never NULL")
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
    // a read, without touching the row, settles those.
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
