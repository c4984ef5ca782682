//! Taking ids from one of a tenant's ranges straight from `todo.id_ranges`' index and heap:
//! the range with room and the smallest next id that no other transaction holds, locked as
//! `FOR UPDATE SKIP LOCKED` locks it, then its next id moved on, as `ids::FROM_RANGE` does in
//! one statement (whose planning aside, executor start and scans of a table this small cost
//! more than the take itself).
//!
//! Only where the statement would do exactly this: the table as the extension made it (no
//! trigger but its foreign key's checks, no rule, plain indexes, its primary key on
//! `(tenant_id, slot)`), not distributed, a read-write transaction that is not SERIALIZABLE
//! (whose reads take predicate locks), and the tenant the context's, which is all that
//! row-level security lets the statement see. Anything unexpected on the way (a range updated
//! since the snapshot was taken) leaves the take to the statement, which handles it.

use pgrx::prelude::*;

use super::catalog::{self, Lookup};

/// `todo.id_ranges` as this backend found it.
struct Table {
    relid: pg_sys::Oid,
    /// its primary key, `(tenant_id, slot)`
    key: pg_sys::Oid,
    /// the attribute numbers (from 1) of tenant_id, next_id and last_id
    tenant: i16,
    next: i16,
    last: i16,
}

thread_local! {
    /// The table as found (None: not for direct takes, see the module's comment).
    static TABLE: Lookup<Table> = const { Lookup::new() };
    /// The range this transaction took ids from last, where its newest version is.
    static HELD: std::cell::RefCell<Option<Held>> = const { std::cell::RefCell::new(None) };
}

/// A range this transaction holds (it locked the row, and only it may change it until it
/// ends) and the place of the row's version it wrote last. Each take writes a new version of
/// the row, and the versions one transaction writes cannot be pruned before it ends: found by
/// its key, the row is the end of a chain as long as the ids taken so far (one INSERT of
/// 40,000 rows walked 40,000-long chains for each row). Found by its place, it costs the same
/// for the last row as for the first.
struct Held {
    lxid: pg_sys::LocalTransactionId,
    subxact: pg_sys::SubTransactionId,
    tenant: String,
    tid: pg_sys::ItemPointerData,
    next: i64,
    last: i64,
}

/// A subtransaction rolls back (`ids::forget_rolled_back`): the range's version it wrote is
/// gone with it, if it or one it ran in wrote the one held.
pub fn forget_rolled_back(subxact: pg_sys::SubTransactionId) {
    HELD.with(|h| {
        let mut h = h.borrow_mut();
        if h.as_ref().is_some_and(|held| held.subxact >= subxact) {
            *h = None;
        }
    });
}

/// A relation cache invalidation (`relation_changed` in lib.rs): the table is looked at again.
pub fn relation_changed(relid: pg_sys::Oid) {
    TABLE.with(|t| t.forget(relid, |table| table.relid == relid || table.key == relid));
}

/// Takes `n` ids (0: only holds the range) from a range of `tenant` with room for `room`: the
/// first id, or Some(None) when no range that no other transaction holds has room. None: not
/// taken here (see the module's comment): the caller runs the statement.
pub fn take(tenant: &str, n: i64, room: i64) -> Option<Option<i64>> {
    let table = TABLE.with(|t| t.get(look_at))?;
    // SAFETY: reads this backend's transaction state
    let writable = unsafe { !pg_sys::XactReadOnly && pg_sys::XactIsoLevel != pg_sys::XACT_SERIALIZABLE as i32 };
    if !writable || super::distribution::distributed() || super::scope::tenant_if_set().as_deref() != Some(tenant) {
        return None;
    }
    // SAFETY: see each step
    unsafe {
        if let Some(first) = table.take_held(tenant, n, room) {
            return Some(Some(first));
        }
        table.take(tenant, n, room)
    }
}

/// This transaction's held range of `tenant`, if it has room for `room`.
fn held(tenant: &str, room: i64) -> Option<(pg_sys::ItemPointerData, i64, i64)> {
    let lxid = super::catalog::local_xact();
    HELD.with(|h| {
        let h = h.borrow();
        let held = h.as_ref()?;
        (held.lxid == lxid && held.tenant == tenant && held.last - held.next + 1 >= room)
            .then_some((held.tid, held.next, held.last))
    })
}

/// Notes that this transaction holds `tenant`'s range whose newest version is at `tid`.
fn note_held(tenant: &str, tid: pg_sys::ItemPointerData, next: i64, last: i64) {
    // SAFETY: reads this backend's current subtransaction id.
    let subxact = unsafe { pg_sys::GetCurrentSubTransactionId() };
    let lxid = super::catalog::local_xact();
    HELD.with(|h| *h.borrow_mut() = Some(Held { lxid, subxact, tenant: tenant.to_string(), tid, next, last }));
}

fn look_at() -> Option<Table> {
    let relid = catalog::relid(c"id_ranges");
    if relid == pg_sys::InvalidOid {
        return None;
    }
    // SAFETY: opens the relation under the lock an UPDATE takes, reads its descriptor, flags,
    // primary key and indexes, and closes it.
    unsafe {
        let rel = pg_sys::table_open(relid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
        let attno = |name: &str| {
            crate::tupdesc::columns((*rel).rd_att)
                .find(|(_, n, _)| n.to_bytes() == name.as_bytes())
                .map(|(i, _, _)| i as i16 + 1)
        };
        let (tenant, next, last, slot) = (attno("tenant_id"), attno("next_id"), attno("last_id"), attno("slot"));
        #[cfg(not(feature = "pg18"))]
        let key = pg_sys::RelationGetPrimaryKeyIndex(rel);
        #[cfg(feature = "pg18")]
        let key = pg_sys::RelationGetPrimaryKeyIndex(rel, false);
        let keyed = key != pg_sys::InvalidOid && {
            let index = pg_sys::index_open(key, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            let columns = &(*(*index).rd_index).indkey;
            let on = (columns.dim1 == 2).then(|| [*columns.values.as_ptr(), *columns.values.as_ptr().add(1)]);
            pg_sys::index_close(index, pg_sys::AccessShareLock as pg_sys::LOCKMODE);
            tenant.zip(slot).is_some_and(|(t, s)| on == Some([t, s]))
        };
        let plain = keyed && catalog::as_made(rel);
        pg_sys::table_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
        match (plain, tenant, next, last) {
            (true, Some(tenant), Some(next), Some(last)) => Some(Table { relid, key, tenant, next, last }),
            _ => None,
        }
    }
}

/// A range found with room: its row (a copy), next id and (found by the scan) last id.
struct Found {
    tuple: pg_sys::HeapTuple,
    next: i64,
    last: Option<i64>,
}

impl Table {
    /// Takes `n` ids from the range this transaction holds and took from last (`Held`), read
    /// at the place of its newest version: the first id, or None (no such range with room,
    /// or the row is not there as noted: a statement changed it since; the scan then finds it).
    ///
    /// # Safety
    /// As `take`.
    unsafe fn take_held(&self, tenant: &str, n: i64, room: i64) -> Option<i64> {
        let (tid, next, last) = held(tenant, room)?;
        HELD.with(|h| *h.borrow_mut() = None);
        unsafe {
            pg_sys::CommandCounterIncrement();
            let rel = pg_sys::table_open(self.relid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
            let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetTransactionSnapshot());
            let mut tuple = pg_sys::HeapTupleData { t_self: tid, ..Default::default() };
            let mut buffer: pg_sys::Buffer = 0;
            let visible = pg_sys::heap_fetch(rel, snapshot, &mut tuple, &mut buffer, false);
            let tp: *mut pg_sys::HeapTupleData = &mut tuple;
            let copy = if visible && self.as_noted(rel, tp, tenant, next, last) {
                pg_sys::heap_copytuple(tp)
            } else {
                std::ptr::null_mut()
            };
            if buffer != 0 {
                pg_sys::ReleaseBuffer(buffer);
            }
            pg_sys::UnregisterSnapshot(snapshot);
            let taken = (!copy.is_null()).then(|| {
                let found = Found { tuple: copy, next, last: None };
                let tid = if n != 0 { self.move_on(rel, &found, n) } else { tid };
                note_held(tenant, tid, next + n, last);
                pg_sys::heap_freetuple(copy);
                next
            });
            pg_sys::table_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
            taken
        }
    }

    /// Whether `tuple` is the held range as noted: `tenant`'s, with these ids, written (or
    /// locked) by this transaction.
    ///
    /// # Safety
    /// `rel` is the open table, `tuple` one of its rows, fetched and pinned.
    unsafe fn as_noted(
        &self,
        rel: pg_sys::Relation,
        tuple: *mut pg_sys::HeapTupleData,
        tenant: &str,
        next: i64,
        last: i64,
    ) -> bool {
        unsafe {
            let desc = (*rel).rd_att;
            let get = |attno: i16| {
                let mut null = false;
                let datum = pg_sys::heap_getattr(tuple, attno as i32, desc, &mut null);
                (!null).then_some(datum)
            };
            let int = |attno: i16| get(attno).map(|d| d.value() as i64);
            let owner = get(self.tenant).and_then(|d| String::from_datum(d, false));
            let xmin = (*(*tuple).t_data).t_choice.t_heap.t_xmin;
            owner.as_deref() == Some(tenant)
                && pg_sys::TransactionIdIsCurrentTransactionId(xmin)
                && int(self.next) == Some(next)
                && int(self.last) == Some(last)
        }
    }

    /// # Safety
    /// The table was found as the module requires (`look_at`), and the transaction may write it.
    unsafe fn take(&self, tenant: &str, n: i64, room: i64) -> Option<Option<i64>> {
        unsafe {
            // as a statement of its own: it sees what this transaction wrote before
            pg_sys::CommandCounterIncrement();
            let rel = pg_sys::table_open(self.relid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
            let desc = (*rel).rd_att;
            let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetTransactionSnapshot());
            // the tenant's ranges with room, by the primary key
            let mut key = pg_sys::ScanKeyData::default();
            let tenant_text = tenant.into_datum().expect("a text datum");
            pg_sys::ScanKeyInit(
                &mut key,
                self.tenant,
                pg_sys::BTEqualStrategyNumber as pg_sys::StrategyNumber,
                pg_sys::F_TEXTEQ.into(),
                tenant_text,
            );
            let scan = pg_sys::systable_beginscan(rel, self.key, true, snapshot, 1, &mut key);
            let mut found = Vec::new();
            loop {
                let tuple = pg_sys::systable_getnext(scan);
                if tuple.is_null() {
                    break;
                }
                let int = |attno: i16| {
                    let mut null = false;
                    let datum = pg_sys::heap_getattr(tuple, attno as i32, desc, &mut null);
                    (!null).then(|| datum.value() as i64)
                };
                if let (Some(next), Some(last)) = (int(self.next), int(self.last)) {
                    if last - next + 1 >= room {
                        found.push(Found { tuple: pg_sys::heap_copytuple(tuple), next, last: Some(last) });
                    }
                }
            }
            pg_sys::systable_endscan(scan);
            pg_sys::UnregisterSnapshot(snapshot);
            found.sort_by_key(|f| f.next);
            let mut taken = Some(None);
            for f in &found {
                match self.lock(rel, f.tuple) {
                    pg_sys::TM_Result::TM_Ok => {
                        let tid = if n != 0 { self.move_on(rel, f, n) } else { (*f.tuple).t_self };
                        if let Some(last) = f.last {
                            note_held(tenant, tid, f.next + n, last);
                        }
                        taken = Some(Some(f.next));
                        break;
                    }
                    // held by another transaction: the next range
                    pg_sys::TM_Result::TM_WouldBlock => continue,
                    // changed since the snapshot (or otherwise unexpected): the statement's way
                    _ => {
                        taken = None;
                        break;
                    }
                }
            }
            for f in found {
                pg_sys::heap_freetuple(f.tuple);
            }
            pg_sys::table_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
            taken
        }
    }

    /// Locks the row `FOR UPDATE`, not waiting for another transaction that holds it.
    ///
    /// # Safety
    /// `rel` is the open table, `tuple` a copy of one of its rows.
    unsafe fn lock(&self, rel: pg_sys::Relation, tuple: pg_sys::HeapTuple) -> pg_sys::TM_Result::Type {
        unsafe {
            let mut locked = pg_sys::HeapTupleData { t_self: (*tuple).t_self, ..Default::default() };
            let mut buffer: pg_sys::Buffer = 0;
            let mut failure = pg_sys::TM_FailureData::default();
            let result = pg_sys::heap_lock_tuple(
                rel,
                &mut locked,
                pg_sys::GetCurrentCommandId(true),
                pg_sys::LockTupleMode::LockTupleExclusive,
                pg_sys::LockWaitPolicy::LockWaitSkip,
                false,
                &mut buffer,
                &mut failure,
            );
            if buffer != 0 {
                pg_sys::ReleaseBuffer(buffer);
            }
            result
        }
    }

    /// Moves the locked range's next id on by `n`, as the statement's UPDATE does (its indexes
    /// too, unless the update is HOT); the change is seen by the next command. Returns where
    /// the new version is.
    ///
    /// # Safety
    /// `rel` is the open table, `f.tuple` a copy of a row this transaction has locked.
    unsafe fn move_on(&self, rel: pg_sys::Relation, f: &Found, n: i64) -> pg_sys::ItemPointerData {
        unsafe {
            let mut column = [self.next as std::ffi::c_int];
            let mut value = [pg_sys::Datum::from(f.next + n)];
            let mut null = [false];
            let changed = pg_sys::heap_modify_tuple_by_cols(
                f.tuple,
                (*rel).rd_att,
                1,
                column.as_mut_ptr(),
                value.as_mut_ptr(),
                null.as_mut_ptr(),
            );
            let indexes = pg_sys::CatalogOpenIndexes(rel);
            pg_sys::CatalogTupleUpdateWithInfo(rel, &mut (*f.tuple).t_self, changed, indexes);
            pg_sys::CatalogCloseIndexes(indexes);
            let tid = (*changed).t_self;
            pg_sys::heap_freetuple(changed);
            pg_sys::CommandCounterIncrement();
            tid
        }
    }
}
