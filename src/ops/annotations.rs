//! A todo's checkable lists and comments (`store::annotations`): each change locks the todo
//! first, as every change to it does, and checks the limits the tables hold (at most 100
//! items a list of at most 10,000 bytes each; a comment of at most 10,000 bytes, its author
//! at most 200), so that a refusal names the limit.

use super::{Find, Scope};
use crate::error::Error;
use crate::interchange::{ChecklistItem, ChecklistKind};
use crate::todo::Todo;
use crate::{session, store};

/// The most items of one checkable list of a todo.
pub const MAX_ITEMS: usize = 100;
/// The most bytes of an item's text and of a comment's body.
pub const MAX_TEXT_BYTES: usize = 10_000;
/// The most bytes of a comment's author.
pub const MAX_AUTHOR_BYTES: usize = 200;

/// Replaces list `kind` of todo `id` (one `find` finds) with `items`. Errors: `NotFound`;
/// `Invalid` for too many items, or an item blank or too long.
pub fn set_checklist(
    scope: &Scope,
    find: Find<'_>,
    id: i64,
    kind: ChecklistKind,
    items: &[ChecklistItem],
) -> Result<(), Error> {
    check_items(items)?;
    let locked = super::lock_one(scope, find, id, false)?;
    replace_locked(scope, &locked.todo, kind, items);
    Ok(())
}

/// A checklist's items within its limits, or the error that names the limit.
fn check_items(items: &[ChecklistItem]) -> Result<(), Error> {
    if items.len() > MAX_ITEMS {
        return Err(Error::Invalid(format!("a checklist holds at most {MAX_ITEMS} items; got {}", items.len())));
    }
    if let Some(bad) = items.iter().find(|i| i.text.trim().is_empty() || i.text.len() > MAX_TEXT_BYTES) {
        return Err(Error::Invalid(format!(
            "a checklist item is 1 to {MAX_TEXT_BYTES} bytes of text, not blank; got {} bytes",
            bad.text.len()
        )));
    }
    Ok(())
}

/// Replaces list `kind` of `todo`, which the caller has locked, with `items` (`check_items`
/// passed them).
fn replace_locked(scope: &Scope, todo: &Todo, kind: ChecklistKind, items: &[ChecklistItem]) {
    store::annotations::set_checklist(&scope.tenant, todo.id, kind, items);
    session::touched(&scope.tenant, todo.conversation_id.as_deref(), todo.id);
}

/// Adds a comment to todo `id` (one `find` finds), written at `created_us` (None: now).
/// Errors: `NotFound`; `Invalid` for a blank or too long body or author.
pub fn add_comment(
    scope: &Scope,
    find: Find<'_>,
    id: i64,
    author: Option<&str>,
    body: &str,
    created_us: Option<i64>,
) -> Result<(), Error> {
    if body.trim().is_empty() || body.len() > MAX_TEXT_BYTES {
        return Err(Error::Invalid(format!(
            "a comment is 1 to {MAX_TEXT_BYTES} bytes of text, not blank; got {} bytes",
            body.len()
        )));
    }
    if author.is_some_and(|a| a.len() > MAX_AUTHOR_BYTES) {
        return Err(Error::Invalid(format!("a comment's author is at most {MAX_AUTHOR_BYTES} bytes")));
    }
    let locked = super::lock_one(scope, find, id, false)?;
    store::annotations::add_comment(&scope.tenant, id, author, body, created_us);
    session::touched(&scope.tenant, locked.todo.conversation_id.as_deref(), id);
    Ok(())
}

/// The most characters of a comment or an item an event quotes.
const QUOTED: usize = 200;

/// `text` as an event quotes it: at most `QUOTED` characters, `…` when cut.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A person's or an agent's comment on todo `id` (anywhere in the tenant), by the agent in
/// context, recorded as a change of the todo (`{"comment": <its start>}`). Errors: as
/// `add_comment`.
pub fn comment(scope: &Scope, id: i64, body: &str) -> Result<(), Error> {
    add_comment(scope, Find::Anywhere, id, scope.agent.as_deref(), body, None)?;
    let changes = super::single::json_fields([("comment", quoted(body.trim()).into())]);
    store::annotations::record(&scope.tenant, id, changes);
    Ok(())
}

/// Checks (or unchecks) item `position` (from 1) of list `kind` of todo `id`, if it still
/// reads `text` (what its caller read), recorded as a change of the todo (`{"checked": <the
/// item>}` or `{"unchecked": …}`). Errors: `NotFound`; `Rejected` (55000) when the list no
/// longer has that item there.
pub fn check_item(
    scope: &Scope,
    id: i64,
    kind: ChecklistKind,
    position: i64,
    text: &str,
    checked: bool,
) -> Result<(), Error> {
    super::lock_one(scope, Find::Anywhere, id, false)?;
    if !store::annotations::check_item(&scope.tenant, id, kind, position, text, checked) {
        return Err(Error::Rejected {
            sqlstate: "55000".into(),
            message: format!(
                "item {position} of #{id}'s {} is not \"{}\" any more: the list changed since you read it; read it again",
                kind_words(kind),
                quoted(text)
            ),
        });
    }
    let word = if checked { "checked" } else { "unchecked" };
    store::annotations::record(&scope.tenant, id, super::single::json_fields([(word, quoted(text).into())]));
    Ok(())
}

/// Adds an item to the end of list `kind` of todo `id`, recorded as a change of the todo
/// (`{"added": <the item>}`). Errors: `NotFound`; `Invalid` as `set_checklist`.
pub fn add_item(scope: &Scope, id: i64, kind: ChecklistKind, text: &str) -> Result<(), Error> {
    let locked = super::lock_one(scope, Find::Anywhere, id, false)?;
    let mut items: Vec<ChecklistItem> = store::annotations::checklists(&scope.tenant, &[id])
        .into_iter()
        .map(|(_, item)| item)
        .filter(|item| item.kind == kind)
        .collect();
    items.push(ChecklistItem { kind, text: text.trim().to_string(), checked: false });
    check_items(&items)?;
    replace_locked(scope, &locked.todo, kind, &items);
    store::annotations::record(&scope.tenant, id, super::single::json_fields([("added", quoted(text.trim()).into())]));
    Ok(())
}

/// A checklist's name in sentences.
fn kind_words(kind: ChecklistKind) -> &'static str {
    match kind {
        ChecklistKind::Acceptance => "acceptance criteria",
        ChecklistKind::Done => "definition of done",
    }
}
