//! A todo's checkable lists and comments (`store::annotations`): each change locks the todo
//! first, as every change to it does, and checks the limits the tables hold (at most 100
//! items a list of at most 10,000 bytes each; a comment of at most 10,000 bytes, its author
//! at most 200), so that a refusal names the limit.

use super::{Find, Scope};
use crate::error::Error;
use crate::interchange::{ChecklistItem, ChecklistKind};
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
    if items.len() > MAX_ITEMS {
        return Err(Error::Invalid(format!("a checklist holds at most {MAX_ITEMS} items; got {}", items.len())));
    }
    if let Some(bad) = items.iter().find(|i| i.text.trim().is_empty() || i.text.len() > MAX_TEXT_BYTES) {
        return Err(Error::Invalid(format!(
            "a checklist item is 1 to {MAX_TEXT_BYTES} bytes of text, not blank; got {} bytes",
            bad.text.len()
        )));
    }
    let locked = super::lock_one(scope, find, id, false)?;
    store::annotations::set_checklist(&scope.tenant, id, kind, items);
    session::touched(&scope.tenant, locked.todo.conversation_id.as_deref(), id);
    Ok(())
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
