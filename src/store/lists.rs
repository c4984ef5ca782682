//! What a list keeps besides its todos, on its lock row (`list:<conversation>` of
//! `todo.locks`, which every whole-list replace of the list locks first): the markdown
//! document Goose's and Continue's tools write (`checklist`: its notes, and where each todo's
//! checkbox line goes) and the turn of the list's last LangChain `write_todos`
//! (`written_in_turn`). Written only under the list's lock (`locks::lock_list`).

use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::Value;

use super::{exec, one, roles};

fn name(conversation: &str) -> String {
    format!("list:{conversation}")
}

/// A database still at a version before 0.9.0 has no `todo.locks`: what needs it is refused
/// with 0A000 until the extension is updated.
fn require_table(what: &str) {
    if !super::locks::has_lock_rows() {
        crate::errors::raise(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("{what} needs the pg_todos 0.9.0 schema"),
            "run ALTER EXTENSION pg_todos UPDATE",
        );
    }
}

/// The list's stored checklist document (None: none was written).
pub fn checklist(tenant: &str, conversation: &str) -> Option<Value> {
    if !super::locks::has_lock_rows() {
        return None;
    }
    roles::as_owner(|| {
        one::<JsonB>(
            "SELECT l.checklist FROM todo.locks l WHERE l.tenant_id = $1 AND l.name = $2",
            &[tenant.into(), name(conversation).into()],
            false,
        )
        .map(|j| j.0)
    })
}

/// Stores the list's checklist document; the list's lock is held (its row exists).
pub fn set_checklist(tenant: &str, conversation: &str, document: &Value) {
    require_table("a checklist document");
    roles::as_owner(|| {
        exec(
            "UPDATE todo.locks SET checklist = $3 WHERE tenant_id = $1 AND name = $2",
            &[tenant.into(), name(conversation).into(), JsonB(document.clone()).into()],
        )
    });
}

/// The turn of the list's last LangChain write (None: none, or none in a turn).
pub fn written_in_turn(tenant: &str, conversation: &str) -> Option<String> {
    if !super::locks::has_lock_rows() {
        return None;
    }
    roles::as_owner(|| {
        one::<String>(
            "SELECT l.written_in_turn FROM todo.locks l WHERE l.tenant_id = $1 AND l.name = $2",
            &[tenant.into(), name(conversation).into()],
            false,
        )
    })
}

/// Records the turn of a LangChain write; the list's lock is held (its row exists).
pub fn set_written_in_turn(tenant: &str, conversation: &str, turn: &str) {
    require_table("LangChain's one write per turn");
    roles::as_owner(|| {
        exec(
            "UPDATE todo.locks SET written_in_turn = $3 WHERE tenant_id = $1 AND name = $2",
            &[tenant.into(), name(conversation).into(), turn.into()],
        )
    });
}

/// What dialects keep about the list as a whole (its lock row's `properties`: Task Master's
/// tag description and the project's current tag); empty: nothing.
pub fn properties(tenant: &str, conversation: &str) -> serde_json::Map<String, Value> {
    if !super::read::has_1_0_columns() {
        return serde_json::Map::new();
    }
    let found = roles::as_owner(|| {
        one::<JsonB>(
            "SELECT l.properties FROM todo.locks l WHERE l.tenant_id = $1 AND l.name = $2",
            &[tenant.into(), name(conversation).into()],
            false,
        )
    });
    match found {
        Some(JsonB(Value::Object(o))) => o,
        _ => serde_json::Map::new(),
    }
}

/// Sets (a value) or removes (None) one key of the list's properties: under the list's lock
/// (its row, added the first time: `locks::lock_list`, which a call takes before it locks any
/// todo), read, merged here and written back as one value (Citus allows no function but an
/// IMMUTABLE one in an upsert's `DO UPDATE`).
pub fn set_property(tenant: &str, conversation: &str, key: &str, value: Option<&Value>) {
    super::read::require_1_0("a list's properties");
    super::locks::lock_list(tenant, conversation);
    let mut props = properties(tenant, conversation);
    match value {
        Some(v) => {
            props.insert(key.to_string(), v.clone());
        }
        None => {
            props.remove(key);
        }
    }
    let props = (!props.is_empty()).then_some(JsonB(Value::Object(props)));
    roles::as_owner(|| {
        exec(
            "UPDATE todo.locks SET properties = $3 WHERE tenant_id = $1 AND name = $2",
            &[tenant.into(), name(conversation).into(), props.into()],
        )
    });
}

/// The tenant's lists whose name starts with `prefix`: those that hold todos (archived ones
/// aside) and those whose properties have `key`, sorted by name, at most `limit`.
pub fn named_lists(tenant: &str, prefix: &str, key: &str, limit: i64) -> Vec<String> {
    if !super::read::has_1_0_columns() {
        return Vec::new();
    }
    roles::as_owner(|| {
        super::with_plan(
            "SELECT n FROM (
                 SELECT DISTINCT t.conversation_id AS n FROM todo.todos t
                  WHERE t.tenant_id = $1 AND starts_with(t.conversation_id, $2) AND t.archived_at IS NULL
                 UNION
                 SELECT substr(l.name, 6) FROM todo.locks l
                  WHERE l.tenant_id = $1 AND starts_with(l.name, 'list:' || $2) AND l.properties ? $3) x
              ORDER BY n LIMIT $4",
            &[tenant.into(), prefix.into(), key.into(), limit.into()],
            false,
            |n| super::rows(n, |r| r.text(1).unwrap_or_default().to_string()),
        )
    })
}

/// The position after the last todo of list `conversation` (None: the tenant-wide pool) of
/// `tenant` that is not archived: where a todo moved to the list goes. One probe of the end of
/// the list's index.
pub fn end_position(tenant: &str, conversation: Option<&str>) -> i64 {
    let sql = if conversation.is_some() {
        "SELECT coalesce(max(t.position), 0) + 1 FROM todo.todos t
          WHERE t.tenant_id = $1 AND t.conversation_id = $2 AND t.archived_at IS NULL"
    } else {
        "SELECT coalesce(max(t.position), 0) + 1 FROM todo.todos t
          WHERE t.tenant_id = $1 AND t.conversation_id IS NULL AND $2::text IS NULL AND t.archived_at IS NULL"
    };
    one::<i64>(sql, &[tenant.into(), conversation.into()], false).unwrap_or(1)
}
