//! The event log (`todo.events`): one row per change of a todo, written by the row trigger
//! `todos_log_event` after the change.

use pgrx::pg_sys;
use serde_json::Value;

use super::exec;

mod change;
pub(in crate::store) mod direct;

pub use change::{Changes, Key, STAMPS};

/// An event statement: the key and old status (`Key::args`), then `changes` ($8, the whole
/// object: `Changes::into_json`) and the new status ($9).
fn insert_sql(action: &str) -> String {
    format!(
        "INSERT INTO todo.events (tenant_id, todo_id, version, action, conversation_id,
                                  agent_id, turn_id, old_status, new_status, changes)
         VALUES ($1, $2, $3, '{action}', $4, $5, $6, $7, $9, $8)"
    )
}

/// A deleted todo's last event, unless its whole tenant is being deleted (its counter row is
/// gone first: there is no history left to append to).
const DELETE: &str = "INSERT INTO todo.events (tenant_id, todo_id, version, action, conversation_id,
                                   agent_id, turn_id, old_status, new_status, changes)
    SELECT $1, $2, $3, 'delete', $4, $5, $6, $7, NULL, NULL
     WHERE EXISTS (SELECT 1 FROM todo.counters c WHERE c.tenant_id = $1)";

/// A relation cache invalidation (`relation_changed` in lib.rs).
pub fn relation_changed(relid: pg_sys::Oid) {
    direct::relation_changed(relid);
}

/// Writes the event; the number of rows written.
fn write(sql: &str, key: &Key, old_status: Option<&str>, new_status: &str, changes: Changes) -> usize {
    let mut args = key.args(old_status);
    args.push(pgrx::JsonB(Value::Object(changes.into_json())).into());
    args.push(new_status.into());
    super::roles::as_owner(|| exec(sql, &args))
}

/// The insert event (`changes`: the new row's non-NULL columns); `first`: the row is the
/// first ever with its id (`ids::first_row`), so there is no earlier event to meet. Another
/// event of the id at that version (another todo's: the row trigger refuses an id with
/// events, but one written by a transaction that committed after it looked) refuses the row
/// (23505, `errors::id_reused`): a row without its own insert event could never be changed.
pub fn inserted(key: &Key, status: &str, changes: Changes, first: bool) {
    thread_local! {
        static SQL: String = format!("{} ON CONFLICT DO NOTHING", insert_sql("insert"));
    }
    let changes = if first { appended(key, "insert", None, status, changes) } else { Some(changes) };
    if let Some(changes) = changes {
        if SQL.with(|sql| write(sql, key, None, status, changes)) == 0 {
            crate::errors::id_reused(key.id, false);
        }
    }
}

/// An update event: `changes` has the new values of the changed columns.
pub fn updated(key: &Key, old_status: &str, new_status: &str, changes: Changes) {
    thread_local! {
        static SQL: String = insert_sql("update");
    }
    if let Some(changes) = appended(key, "update", Some(old_status), new_status, changes) {
        SQL.with(|sql| write(sql, key, Some(old_status), new_status, changes));
    }
}

/// Appends the event straight to the table and its indexes when that is all the INSERT would
/// do (see `direct`); hands `changes` back when it is not (the statement then writes it).
fn appended(key: &Key, action: &str, old_status: Option<&str>, new_status: &str, changes: Changes) -> Option<Changes> {
    match direct::table() {
        Some(table) => {
            table.append(key, action, old_status, new_status, changes);
            None
        }
        None => Some(changes),
    }
}

/// The delete event (version one past the row's last).
pub fn deleted(key: &Key, old_status: &str) {
    super::roles::as_owner(|| exec(DELETE, &key.args(Some(old_status))));
}

/// Where a reader of the log stands: the snapshot of the statement that reads (as text, e.g.
/// `783:790:785`), and the conversations (None: the tenant-wide pool) with an event that
/// `since` (a cursor an earlier call returned) did not see: written by a transaction that was
/// not committed, or had not begun, when `since` was taken. Each event records its
/// transaction (`xact`), so a transaction that commits late is still found; a conversation
/// may come again in the next call (readers get whole lists: that is harmless), never be
/// missed. `since` None: no conversations, only the cursor. A malformed `since` raises 22P02.
pub fn changed_since(tenant: &str, since: Option<&str>) -> (String, Vec<Option<String>>) {
    // the cursor is taken first: every list read after it is at least as new
    // On a distributed store the events' transactions are the tenant's worker's, so the
    // snapshot must be that worker's too: read beside a row of the tenant (its counter; a
    // tenant without one has no events yet, and the cursor that sees nothing committed
    // makes the next call report every conversation once)
    let cursor: String = if super::distribution::distributed() {
        super::one(
            "SELECT pg_catalog.pg_current_snapshot()::text FROM todo.counters c WHERE c.tenant_id = $1",
            &[tenant.into()],
            false,
        )
        .unwrap_or_else(|| "1:1:".to_string())
    } else {
        super::one("SELECT pg_catalog.pg_current_snapshot()::text", &[], false).expect("a statement has a snapshot")
    };
    let Some(since) = since else { return (cursor, Vec::new()) };
    require_cursor(since);
    let conversations = super::with_plan(
        "SELECT DISTINCT e.conversation_id FROM todo.events e
          WHERE e.tenant_id = $1 AND e.xact >= pg_catalog.pg_snapshot_xmin($2::pg_snapshot)
            AND NOT pg_catalog.pg_visible_in_snapshot(e.xact, $2::pg_snapshot)
          ORDER BY 1 NULLS FIRST",
        &[tenant.into(), since.into()],
        false,
        |n| super::rows(n, |r| r.text(1).map(str::to_string)),
    );
    (cursor, conversations)
}

/// The most tenants `changed_tenants` asks about in one call.
pub const MAX_WATCHED: usize = 10_000;

/// Which of `watched` (tenant, cursor) have an event their cursor did not see (see
/// `changed_since`), in the order given: for each, acting for it (the tenant setting set to
/// it, and the calling role's binding checked: 42501 for a tenant it may not act for), one
/// index probe of its events. What a service following the log asks once per tick for every
/// tenant it streams. Raises 22P02 for a malformed cursor.
pub fn changed_tenants(watched: &[(&str, &str)]) -> Vec<String> {
    const PROBE: &str = "SELECT EXISTS (SELECT 1 FROM todo.events e
          WHERE e.tenant_id = $1 AND e.xact >= pg_catalog.pg_snapshot_xmin($2::pg_snapshot)
            AND NOT pg_catalog.pg_visible_in_snapshot(e.xact, $2::pg_snapshot))";
    let mut changed = Vec::new();
    for (at, (tenant, cursor)) in watched.iter().enumerate() {
        require_watched_cursor(at + 1, cursor);
        crate::session::set_local(c"todo.tenant", Some(tenant));
        let tenant = super::scope::tenant();
        if super::one::<bool>(PROBE, &[tenant.as_str().into(), (*cursor).into()], false).unwrap_or(false) {
            changed.push(tenant);
        }
    }
    changed
}

/// Raises 22P02 unless `since` is a cursor as `changed_since` hands them out, before
/// PostgreSQL's `pg_snapshot` input would refuse it in words about its own internals.
fn require_cursor(since: &str) {
    if !crate::cursor::is_cursor(since) {
        crate::errors::raise(
            pgrx::PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            "todo.changes_since: since is not a cursor this function returned",
            "a cursor is the text of a pg_snapshot, xmin:xmax:running transactions (e.g. 783:790:785), as a call handed it out: pass the \"cursor\" of an earlier todo.changes_since call unchanged, or NULL to get only a cursor",
        );
    }
}

/// `require_cursor` for `todo.changed_tenants`' cursor number `at` (from 1).
fn require_watched_cursor(at: usize, cursor: &str) {
    if !crate::cursor::is_cursor(cursor) {
        crate::errors::raise(
            pgrx::PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
            format!("todo.changed_tenants: cursor {at} is not one todo.changes_since returned"),
            "a cursor is the text of a pg_snapshot, xmin:xmax:running transactions (e.g. 783:790:785), as a call handed it out: pass the \"cursor\" of an earlier todo.changes_since call unchanged",
        );
    }
}

/// The conversations with an event `since` did not see (see `changed_since`),
/// after `after` in the page order (by id bytewise, the pool, None, last; `after` None: from the
/// start), at most `size`; and whether there are more. Raises 22P02 for a malformed `since`.
pub fn changed_since_page(tenant: &str, since: &str, after: Option<&str>, size: usize) -> (Vec<Option<String>>, bool) {
    require_cursor(since);
    let mut rows = super::with_plan(
        "SELECT DISTINCT e.conversation_id COLLATE \"C\" AS conversation_id FROM todo.events e
          WHERE e.tenant_id = $1 AND e.xact >= pg_catalog.pg_snapshot_xmin($2::pg_snapshot)
            AND NOT pg_catalog.pg_visible_in_snapshot(e.xact, $2::pg_snapshot)
            AND ($3::text IS NULL OR e.conversation_id COLLATE \"C\" > $3::text COLLATE \"C\" OR e.conversation_id IS NULL)
          ORDER BY 1 NULLS LAST
          LIMIT $4",
        &[tenant.into(), since.into(), after.into(), (size as i64 + 1).into()],
        false,
        |n| super::rows(n, |r| r.text(1).map(str::to_string)),
    );
    let more = rows.len() > size;
    rows.truncate(size);
    (rows, more)
}

/// The todos with an event `since` did not see (see `changed_since`), and the todos whose
/// rows on the board those changes alter without an event of their own: their parents
/// (subtask progress) and the todos waiting for them (their open blockers). At most `size`;
/// `true` when there were more (a reader then reads its view whole). Raises 22P02 for a
/// malformed `since`.
pub fn changed_todos(tenant: &str, since: &str, size: usize) -> (Vec<i64>, bool) {
    require_cursor(since);
    let limit = size as i64 + 1;
    let mut ids: Vec<i64> = super::with_plan(
        "SELECT DISTINCT e.todo_id FROM todo.events e
          WHERE e.tenant_id = $1 AND e.xact >= pg_catalog.pg_snapshot_xmin($2::pg_snapshot)
            AND NOT pg_catalog.pg_visible_in_snapshot(e.xact, $2::pg_snapshot)
          LIMIT $3",
        &[tenant.into(), since.into(), limit.into()],
        false,
        |n| super::rows(n, |r| r.get::<i64>(1)).into_iter().flatten().collect(),
    );
    if ids.len() > size || ids.is_empty() {
        return (Vec::new(), !ids.is_empty());
    }
    let related: Vec<i64> = super::with_plan(
        "SELECT t.parent_id FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = ANY($2) AND t.parent_id IS NOT NULL
         UNION
         (SELECT d.todo_id FROM todo.dependencies d WHERE d.tenant_id = $1 AND d.depends_on = ANY($2) LIMIT $3)",
        &[tenant.into(), ids.clone().into(), limit.into()],
        false,
        |n| super::rows(n, |r| r.get::<i64>(1)).into_iter().flatten().collect(),
    );
    ids.extend(related);
    ids.sort_unstable();
    ids.dedup();
    let more = ids.len() > size;
    if more {
        ids.clear();
    }
    (ids, more)
}
