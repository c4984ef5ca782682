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
