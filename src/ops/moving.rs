//! Moving a todo: to another list (or the tenant-wide pool), under another parent (or none).
//! A move is made on what its caller read (a version, as `single::change_read_at`), takes the
//! locks a whole-list write of either list takes, and keeps the graph's rules: a todo waits
//! only for todos of its own list or of the pool, and a parent never waits, through its
//! subtasks, for itself.

use serde_json::json;

use super::Scope;
use crate::claims::{self, EdgeError, Need};
use crate::error::Error;
use crate::todo::Todo;
use crate::{session, store, time};

/// Where a move takes a todo: each None leaves that as it is.
#[derive(Default)]
pub struct Destination {
    /// Some(None): the tenant-wide pool; Some(Some(name)): that list
    pub list: Option<Option<String>>,
    /// Some(None): a subtask of no todo; Some(Some(id)): of that todo (and on its list)
    pub parent: Option<Option<i64>>,
}

/// Moves todo `id` (anywhere in the tenant), read at version `read`, to `to`: to the end of
/// another list, under another parent. A todo moved under a parent goes to the parent's list
/// (a list named too must be that one). Its subtasks, comments and checklists stay with it as
/// they are. A todo under another agent's live claim moves to another list only once the claim
/// is released, as its status would change. The todo as it is after. Errors: `Stale` (a change
/// since `read`), `Claim`, `NotFound`
/// (the todo, the parent), `Invalid` (a move that names nothing, a parent archived or the todo
/// itself, a list named besides the parent's, a dependency the move would take across lists, a
/// bad list name), `Edge` (a parent that already waits for the todo), `Rejected` (a name too long).
pub fn move_to(scope: &Scope, id: i64, read: i64, to: Destination) -> Result<Todo, Error> {
    if to.list.is_none() && to.parent.is_none() {
        return Err(Error::Invalid("a move names a list or a parent (or both)".into()));
    }
    if let Some(Some(name)) = &to.list {
        super::lists::check_name(name)?;
    }
    let seen = store::read::todo(&scope.tenant, id).ok_or(Error::NotFound { id })?;
    let list = match to.parent {
        Some(Some(parent)) => Some(parent_list(scope, id, parent, to.list.as_ref())?),
        _ => to.list,
    };
    // the lists' locks before the todo's, as a whole-list write takes them
    lock_lists(scope, [seen.conversation_id.as_deref(), list.as_ref().and_then(Option::as_deref)]);
    let locked = super::single::lock_read_at(scope, id, read)?;
    let before = locked.todo;
    let moves_list = list.filter(|l| *l != before.conversation_id);
    if moves_list.is_some() {
        // off the list its agent works from: held to the rule of a change of status (release
        // another agent's live claim first)
        claims::check(&locked.claim, scope.agent.as_deref(), None, Need::Status, time::now_us())?;
    }
    let new_parent = to.parent.filter(|p| *p != before.parent_id);
    if moves_list.is_some() || new_parent.is_some() {
        store::locks::lock_dependencies(&scope.tenant);
    }
    if let Some(l) = &moves_list {
        check_across(scope, id, l.as_deref())?;
    }
    if let Some(Some(p)) = new_parent {
        if let Some(path) = store::edges::dependency_path(&scope.tenant, id, p) {
            return Err(EdgeError::Subtask { id, parent: p, path }.into());
        }
    }
    if let Some(l) = &moves_list {
        let end = store::lists::end_position(&scope.tenant, l.as_deref());
        let fields = super::single::json_fields([("conversation_id", json!(l)), ("position", json!(end))]);
        store::write::update(&scope.tenant, id, &fields);
    }
    if let Some(p) = new_parent {
        store::write::set_parent(&scope.tenant, id, p);
    }
    session::touched(&scope.tenant, before.conversation_id.as_deref(), id);
    let after = store::read::todo(&scope.tenant, id).ok_or(Error::NotFound { id })?;
    session::touched(&scope.tenant, after.conversation_id.as_deref(), id);
    Ok(after)
}

/// The list of `parent`, which todo `id` may become a subtask of: not itself, not archived,
/// and on `list` when one is named. Errors: `NotFound`, `Invalid`.
fn parent_list(scope: &Scope, id: i64, parent: i64, list: Option<&Option<String>>) -> Result<Option<String>, Error> {
    if parent == id {
        return Err(Error::Invalid(format!("#{id} cannot be a subtask of itself")));
    }
    let p = store::read::todo(&scope.tenant, parent).ok_or(Error::NotFound { id: parent })?;
    if p.archived_us.is_some() {
        return Err(Error::Invalid(format!("#{parent} is archived: put it back before moving todos under it")));
    }
    if list.is_some_and(|l| *l != p.conversation_id) {
        return Err(Error::Invalid(format!(
            "a subtask moves to its parent's list: #{parent} is on {}; name that list or none",
            shown_list(p.conversation_id.as_deref())
        )));
    }
    Ok(p.conversation_id)
}

/// Locks the named lists (the pool has no lock), in name order.
fn lock_lists<const N: usize>(scope: &Scope, lists: [Option<&str>; N]) {
    let mut names: Vec<&str> = lists.into_iter().flatten().collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        store::locks::lock_list(&scope.tenant, name);
    }
}

/// Refuses a move of todo `id` to `list` (None: the pool) that would leave a dependency across
/// lists. Errors: `Invalid`, naming the dependency.
fn check_across(scope: &Scope, id: i64, list: Option<&str>) -> Result<(), Error> {
    match store::edges::across(&scope.tenant, id, list) {
        None => Ok(()),
        Some((waiter, on)) => Err(Error::Invalid(format!(
            "#{waiter} waits for #{on}: moving #{id} to {} would make a todo wait for a todo of another list (a todo waits only for todos of its list or of the tenant-wide pool); unblock them first",
            shown_list(list)
        ))),
    }
}

/// A list as an error names it.
fn shown_list(list: Option<&str>) -> String {
    list.map_or("the tenant-wide pool".to_string(), |l| format!("list \"{l}\""))
}
