//! Dependencies between todos: "`id` waits for `on`". The graph stays acyclic through
//! dependencies and subtasks (a parent waits for its subtasks).

use super::Scope;
use crate::claims::EdgeError;
use crate::error::Error;
use crate::{session, store};

/// Both todos in scope, or `NotFound` for the first that is not; the conversation of `id`.
fn both_in_scope(scope: &Scope, id: i64, on: i64) -> Result<Option<String>, Error> {
    let mut conversation = None;
    for t in [id, on] {
        let row = store::read::find_in_scope(&scope.tenant, scope.conv(), t).ok_or(Error::NotFound { id: t })?;
        if t == id && !row.tenant_wide {
            conversation = scope.conversation.clone();
        }
    }
    Ok(conversation)
}

/// Makes `id` wait for `on` (both in scope). `Ok(false)`: it already did. Refuses a todo
/// waiting for itself and an edge that would close a cycle; the tenant's graph lock makes
/// the check and the insert one step, so concurrent blocks cannot build a cycle between
/// them. The check runs once: the row trigger of `todo.dependencies` skips the edge this
/// call has checked (`store::edges::add_checked_dependency`). Errors: `NotFound`, `Edge`.
pub fn block(scope: &Scope, id: i64, on: i64) -> Result<bool, Error> {
    let conversation = both_in_scope(scope, id, on)?;
    if id == on {
        return Err(EdgeError::SelfLoop(id).into());
    }
    store::locks::lock_dependencies(&scope.tenant);
    if let Some(path) = store::edges::dependency_path(&scope.tenant, on, id) {
        return Err(EdgeError::Cycle { id, on, path }.into());
    }
    let added = store::edges::add_checked_dependency(&scope.tenant, id, on);
    session::touched(&scope.tenant, conversation.as_deref(), id);
    Ok(added)
}

/// Removes "`id` waits for `on`". `Ok(false)`: it did not. Errors: `NotFound`.
pub fn unblock(scope: &Scope, id: i64, on: i64) -> Result<bool, Error> {
    let conversation = both_in_scope(scope, id, on)?;
    let removed = store::edges::remove_dependency(&scope.tenant, id, on);
    session::touched(&scope.tenant, conversation.as_deref(), id);
    Ok(removed)
}
