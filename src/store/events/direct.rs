//! Appending an event straight to `todo.events`: the row into the heap and its keys into the
//! indexes, as PostgreSQL writes its own catalogs, instead of an INSERT statement per event
//! (planning aside, the executor's start, the foreign key's query on `todo.tenants` and the
//! CHECK constraint's parse cost more than the write itself).
//!
//! Only what the INSERT would have done: the values come from the row trigger, never from the
//! caller (the action is one of three, the tenant is the todo's, whose own foreign key holds
//! `todo.tenants`' row); the table must be exactly what the extension made it. When it is not
//! (a trigger or rule on it, a column the extension does not know, an index on an expression
//! or with a predicate, a deferred unique or exclusion constraint, a distributed store) the
//! caller's INSERT statement writes the event.

use std::rc::Rc;

use pgrx::prelude::*;
use serde_json::Value;

use super::change::{Changes, Key};
use crate::store::catalog::{self, Lookup};

/// The columns of `todo.events`, in the order of `Table::attnos`.
const COLUMNS: [&str; 12] = [
    "tenant_id",
    "todo_id",
    "version",
    "action",
    "conversation_id",
    "agent_id",
    "turn_id",
    "old_status",
    "new_status",
    "changes",
    "event_at",
    "xact",
];

/// `todo.events` as this backend found it: its oid, its number of attributes and where each
/// of `COLUMNS` is among them.
pub struct Table {
    relid: pg_sys::Oid,
    natts: usize,
    attnos: [usize; 12],
}

thread_local! {
    /// The table as found (None: not for direct appends, see the module's comment).
    static TABLE: Lookup<Table> = const { Lookup::new() };
}

/// A relation cache invalidation (an index, a trigger or a column added, the extension
/// updated) makes the table be looked at again.
pub fn relation_changed(relid: pg_sys::Oid) {
    TABLE.with(|t| t.forget(relid, |table| table.relid == relid));
}

/// The table, when events may be appended to it directly.
pub fn table() -> Option<Rc<Table>> {
    if super::super::distribution::distributed() {
        return None;
    }
    TABLE.with(|t| t.get(look_at))
}

fn look_at() -> Option<Table> {
    let relid = catalog::relid(c"events");
    if relid == pg_sys::InvalidOid {
        return None;
    }
    // SAFETY: opens the relation under the lock an INSERT takes, reads its descriptor, its
    // flags and its indexes' descriptions, and closes them.
    unsafe {
        let rel = pg_sys::table_open(relid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
        let desc = (*rel).rd_att;
        let natts = (*desc).natts as usize;
        let mut attnos = [usize::MAX; 12];
        let mut known = true;
        for (i, name, _) in crate::tupdesc::columns(desc) {
            match COLUMNS.iter().position(|c| c.as_bytes() == name.to_bytes()) {
                Some(k) => attnos[k] = i,
                None => known = false,
            }
        }
        known = known && attnos.iter().all(|a| *a != usize::MAX) && catalog::as_made(rel);
        pg_sys::table_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
        known.then_some(Table { relid, natts, attnos })
    }
}

impl Table {
    /// Appends one event: the row as the INSERT statement would have stored it (`event_at`
    /// the transaction's start, as `now()`; `xact` the top transaction's id, as
    /// `pg_current_xact_id()`), then its index entries (a second event of the same todo and
    /// version is refused by the primary key, 23505, as the statement's would be).
    pub fn append(&self, key: &Key, action: &str, old_status: Option<&str>, new_status: &str, changes: Changes) {
        let text = |s: Option<&str>| s.and_then(IntoDatum::into_datum);
        let changes = Some(crate::jsonb::datum(&Value::Object(changes.into_json())));
        // SAFETY: reads the transaction's start and id (assigning it: this transaction writes)
        let (now, xact) =
            unsafe { (pg_sys::GetCurrentTransactionStartTimestamp(), pg_sys::GetTopFullTransactionId().value) };
        let column_values: [Option<pg_sys::Datum>; 12] = [
            key.tenant.as_str().into_datum(),
            key.id.into_datum(),
            key.version.into_datum(),
            action.into_datum(),
            text(key.conversation.as_deref()),
            text(key.agent.as_deref()),
            text(key.turn.as_deref()),
            text(old_status),
            new_status.into_datum(),
            changes,
            Some(pg_sys::Datum::from(now)),
            Some(pg_sys::Datum::from(xact)),
        ];
        let mut values = vec![pg_sys::Datum::from(0); self.natts];
        let mut nulls = vec![true; self.natts];
        for (value, attno) in column_values.into_iter().zip(self.attnos) {
            if let Some(value) = value {
                values[attno] = value;
                nulls[attno] = false;
            }
        }
        // SAFETY: the table was found plain (`look_at`), its descriptor has `natts`
        // attributes, and each value is of its column's type; the lock is kept until the
        // transaction ends, as an INSERT keeps it.
        unsafe {
            let rel = pg_sys::table_open(self.relid, pg_sys::RowExclusiveLock as pg_sys::LOCKMODE);
            let tuple = pg_sys::heap_form_tuple((*rel).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr());
            let indexes = pg_sys::CatalogOpenIndexes(rel);
            pg_sys::CatalogTupleInsertWithInfo(rel, tuple, indexes);
            pg_sys::CatalogCloseIndexes(indexes);
            pg_sys::heap_freetuple(tuple);
            pg_sys::table_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE);
        }
    }
}
