//! Lists as a whole: a list made before it holds a todo (the board's "New list").

use serde_json::json;

use super::Scope;
use crate::error::Error;
use crate::limits;
use crate::{store, time};
use pg_todos_core::limits::Setting;

/// The property of a list's lock row that says who made it on the board, and when: such a
/// list shows on the board while it holds no todo.
pub const MADE: &str = "board";

/// Makes list `name` (a conversation id) for the tenant, so that it shows on the board before
/// it holds a todo: `false` when it was made already. Errors: `Invalid` for a blank name or
/// one with a control character; `Rejected` (22001) for one longer than `todo.max_name_length`.
pub fn create(scope: &Scope, name: &str) -> Result<bool, Error> {
    check_name(name)?;
    if store::lists::properties(&scope.tenant, name).contains_key(MADE) {
        return Ok(false);
    }
    let made = json!({ "by": scope.agent, "at": time::iso8601(time::now_us()) });
    store::lists::set_property(&scope.tenant, name, MADE, Some(&made));
    Ok(true)
}

/// Checks a new list's name (a list made, or a todo moved to one). Errors: `Invalid` for a
/// blank name or one with a control character; `Rejected` (22001) for one longer than
/// `todo.max_name_length`.
pub fn check_name(name: &str) -> Result<(), Error> {
    if name.trim().is_empty() || name != name.trim() {
        return Err(Error::Invalid("a list's name must not be blank or start or end with a space".into()));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::Invalid("a list's name must not hold a control character (a line break, a tab)".into()));
    }
    limits::check(Setting::NameLength, "the list's name", name.chars().count())
        .map_err(|e| Error::Rejected { sqlstate: e.sqlstate().to_string(), message: e.to_string() })
}

/// The next number of a tracker's series of caller ids in list `conversation` (Task Master's
/// tasks: prefix `""`; the subtasks of task 5: `"5."`; Backlog.md's tasks: `"TASK-"`), taken
/// from the store: one more than the largest the list holds (or, without `reuse`, than any
/// handed out, if larger), so that
/// agents creating at once never take the same one, however long the list. With
/// `store_ids`, a todo of the list without a caller id counts as `<prefix><its store id>`;
/// with `reuse`, a number no task holds any more comes again (Task Master's rule: the largest
/// held, plus one), else never (Backlog.md's).
pub fn next_number(scope: &Scope, conversation: &str, prefix: &str, store_ids: bool, reuse: bool) -> i64 {
    store::numbers::next(&scope.tenant, conversation, &store::numbers::Series { prefix, store_ids, reuse })
}
