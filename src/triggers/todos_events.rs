//! The after-write trigger of `todo.todos` (`todos_log_event`): every change leaves its event
//! in `todo.events` (insert, update with the changed columns, delete), and a write by plain
//! SQL hints the tenant's listeners.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::heap_tuple::PgHeapTuple;
use pgrx::prelude::*;
use pgrx::{AllocatedByRust, PgTrigger};

use crate::session;
use crate::store;
use crate::time::unix_us;
use crate::tupdesc::Deformed;

use super::row::{get, maybe, metadata, on_shard, restoring, rows, Running};

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
