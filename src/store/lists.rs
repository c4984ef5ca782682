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
