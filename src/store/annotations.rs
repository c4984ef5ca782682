//! What a todo carries in rows of its own: its checkable lists (`todo.checklist_items`:
//! acceptance criteria, definition of done) and its comments (`todo.comments`). A schema
//! before 1.0.0 has neither table: reads find nothing there, writes are refused (0A000)
//! until the extension is updated.

use pgrx::datum::DatumWithOid;

use super::{exec, with_plan};
use crate::interchange::{ChecklistItem, ChecklistKind, Comment};

/// The checklist items of todos `ids` of `tenant`: (todo, item), by todo, list and position.
pub fn checklists(tenant: &str, ids: &[i64]) -> Vec<(i64, ChecklistItem)> {
    if ids.is_empty() || !super::read::has_1_0_columns() {
        return Vec::new();
    }
    with_plan(
        "SELECT c.todo_id, c.kind, c.text, c.checked FROM todo.checklist_items c
          WHERE c.tenant_id = $1 AND c.todo_id = ANY($2) ORDER BY c.todo_id, c.kind, c.position",
        &[tenant.into(), ids.to_vec().into()],
        false,
        |n| {
            super::rows(n, |r| {
                let kind = ChecklistKind::parse(r.text(2).unwrap_or_default()).unwrap_or(ChecklistKind::Acceptance);
                let item = ChecklistItem {
                    kind,
                    text: r.text(3).unwrap_or_default().to_string(),
                    checked: r.bool(4).unwrap_or(false),
                };
                (r.int(1).unwrap_or(0), item)
            })
        },
    )
}

/// Replaces list `kind` of todo `id` with `items`, in order (the caller holds the todo's lock).
pub fn set_checklist(tenant: &str, id: i64, kind: ChecklistKind, items: &[ChecklistItem]) {
    super::read::require_1_0("a checklist");
    exec(
        "DELETE FROM todo.checklist_items c WHERE c.tenant_id = $1 AND c.todo_id = $2 AND c.kind = $3",
        &[tenant.into(), id.into(), kind.as_str().into()],
    );
    if items.is_empty() {
        return;
    }
    let texts: Vec<String> = items.iter().map(|i| i.text.clone()).collect();
    let checked: Vec<bool> = items.iter().map(|i| i.checked).collect();
    let args: Vec<DatumWithOid<'_>> =
        vec![tenant.into(), id.into(), kind.as_str().into(), texts.into(), checked.into()];
    exec(
        "INSERT INTO todo.checklist_items (tenant_id, todo_id, kind, position, text, checked)
         SELECT $1, $2, $3, i.n, i.text, i.checked FROM unnest($4::text[], $5::bool[]) WITH ORDINALITY AS i(text, checked, n)",
        &args,
    );
}

/// The comments on todos `ids` of `tenant`: (todo, comment), by todo, in the order written.
pub fn comments(tenant: &str, ids: &[i64]) -> Vec<(i64, Comment)> {
    if ids.is_empty() || !super::read::has_1_0_columns() {
        return Vec::new();
    }
    with_plan(
        "SELECT c.todo_id, c.author, c.body, c.created_at FROM todo.comments c
          WHERE c.tenant_id = $1 AND c.todo_id = ANY($2) ORDER BY c.todo_id, c.position",
        &[tenant.into(), ids.to_vec().into()],
        false,
        |n| {
            super::rows(n, |r| {
                let comment = Comment {
                    author: r.text(2).map(str::to_string),
                    body: r.text(3).unwrap_or_default().to_string(),
                    created_us: r.stamp(4).unwrap_or(0),
                };
                (r.int(1).unwrap_or(0), comment)
            })
        },
    )
}

/// Adds a comment to todo `id` after its others (the caller holds the todo's lock); when it
/// was written (None: now).
pub fn add_comment(tenant: &str, id: i64, author: Option<&str>, body: &str, created_us: Option<i64>) {
    super::read::require_1_0("a comment");
    let created = created_us.map(crate::time::timestamptz);
    exec(
        "INSERT INTO todo.comments (tenant_id, todo_id, position, author, body, created_at)
         SELECT $1, $2, coalesce(max(c.position), 0) + 1, $3, $4, coalesce($5, now())
           FROM todo.comments c WHERE c.tenant_id = $1 AND c.todo_id = $2",
        &[tenant.into(), id.into(), author.into(), body.into(), created.into()],
    );
}

/// Records a change of todo `id`'s comments or checklists (the caller holds its lock): the
/// todo's version goes up (its `updated_at` is now) and an `update` event says `changes`, as
/// an event of the row trigger says the columns a write changed, with the agent and turn in
/// context. Readers of the log (the board, the change feed) see it as a change of the todo.
pub fn record(tenant: &str, id: i64, changes: serde_json::Map<String, serde_json::Value>) {
    let row = with_plan(
        "UPDATE todo.todos t SET updated_at = now() WHERE t.tenant_id = $1 AND t.id = $2
         RETURNING t.version, t.status, t.conversation_id",
        &[tenant.into(), id.into()],
        true,
        |n| {
            super::rows(n.min(1), |r| {
                (r.get::<i32>(1).unwrap_or(0), r.text(2).unwrap_or_default().to_string(), r.text(3).map(str::to_string))
            })
        },
    );
    let Some((version, status, conversation)) = row.into_iter().next() else { return };
    let key = super::events::Key {
        tenant: tenant.to_string(),
        id,
        version,
        conversation,
        agent: super::scope::agent(),
        turn: crate::session::turn(),
    };
    super::events::updated(&key, &status, &status, super::events::Changes { values: changes, stamps: [None; 5] });
}

/// Sets item `position` (from 1) of list `kind` of todo `id` checked or not, if its text is
/// `text` (the caller holds the todo's lock); false when no such item has that text.
pub fn check_item(tenant: &str, id: i64, kind: ChecklistKind, position: i64, text: &str, checked: bool) -> bool {
    super::read::require_1_0("a checklist");
    exec(
        "UPDATE todo.checklist_items c SET checked = $6
          WHERE c.tenant_id = $1 AND c.todo_id = $2 AND c.kind = $3 AND c.position = $4 AND c.text = $5",
        &[tenant.into(), id.into(), kind.as_str().into(), position.into(), text.into(), checked.into()],
    ) == 1
}
