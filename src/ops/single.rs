//! One todo at a time: add (a subtask too), change its status and columns, delete.

use serde_json::{json, Map, Value};

use super::{Find, Scope};
use crate::claims::{self, Need};
use crate::error::Error;
use crate::status::{check_transition, Status};
use crate::todo::Todo;
use crate::{session, store, time};

/// A todo to add: its columns (`store::write::WRITABLE` names; the rest take their
/// defaults, the context's agent and turn among them), the id reserved for it (None: the
/// tenant's next) and its parent (a todo in scope).
#[derive(Default)]
pub struct NewTodo {
    pub id: Option<i64>,
    pub parent: Option<i64>,
    pub fields: Map<String, Value>,
}

impl NewTodo {
    /// A todo of the conversation in context with this subject and description.
    pub fn titled(scope: &Scope, subject: &str, description: Option<&str>) -> NewTodo {
        let fields = json_fields([
            ("conversation_id", json!(scope.conv())),
            ("subject", json!(subject)),
            ("description", json!(description)),
        ]);
        NewTodo { fields, ..NewTodo::default() }
    }
}

/// Adds a todo. Errors: `NotFound` for a parent not in scope; `Rejected` when the table
/// refuses a value (a blank subject, a bad status).
pub fn add(scope: &Scope, new: NewTodo) -> Result<Todo, Error> {
    if let Some(parent) = new.parent {
        store::read::find_in_scope(&scope.tenant, scope.conv(), parent).ok_or(Error::NotFound { id: parent })?;
    }
    let todo = store::write::insert(&scope.tenant, new.id, new.parent, &new.fields);
    session::touched(&scope.tenant, todo.conversation_id.as_deref(), todo.id);
    Ok(todo)
}

/// A change to one todo: a new status (optional) and other columns.
#[derive(Default)]
pub struct Change {
    pub status: Option<Status>,
    /// a surface that states statuses outright (a whole list, a task file) moves a todo
    /// where the lifecycle allows no single step (completed → in_progress, completed ↔
    /// canceled) through pending, as a reopen; others get `Error::Transition`
    pub via_reopen: bool,
    pub fields: Map<String, Value>,
    /// keys to merge into the todo's metadata object once it is locked (a null value
    /// removes its key; an object left empty is stored as NULL)
    pub metadata: Option<Map<String, Value>>,
    /// the owner to set when the todo moves to in_progress and has none (Claude Code gives
    /// a started task to the agent that starts it)
    pub default_owner: Option<String>,
}

impl Change {
    pub fn status(to: Status) -> Change {
        Change { status: Some(to), ..Change::default() }
    }

    pub fn fields(fields: Map<String, Value>) -> Change {
        Change { fields, ..Change::default() }
    }
}

/// A todo before and after a change.
pub struct Changed {
    pub before: Todo,
    pub after: Todo,
}

/// Changes todo `id` (one `find` finds): locks it, checks the lifecycle and its claim (a
/// change of status of a todo under another agent's live claim is refused, as is the
/// actor's own lapsed claim), writes. A status equal to the current one is no change.
/// Errors: `NotFound`, `Transition`, `Claim`, `Rejected`.
pub fn change(scope: &Scope, find: Find<'_>, id: i64, change: Change) -> Result<Changed, Error> {
    // Most changes are allowed and need nothing of the todo but its checks: one statement
    // locks, checks (the row trigger, as below) and writes. Refused, not found, or a change
    // that reads the todo first (metadata merged in, an owner by default): the long way.
    if change.metadata.is_none() && change.default_owner.is_none() {
        let mut fields = change.fields.clone();
        if let Some(to) = change.status {
            fields.insert("status".into(), json!(to.as_str()));
        }
        if let Some((before, after)) =
            store::write::update_vetted(&scope.tenant, find, id, &fields, store::write::Vet::CHANGE)
        {
            session::touched(&scope.tenant, after.conversation_id.as_deref(), id);
            return Ok(Changed { before, after });
        }
    }
    let locked = super::lock_one(scope, find, id, false)?;
    let before = locked.todo;
    let mut fields = change.fields;
    if let Some(to) = change.status.filter(|to| *to != before.status) {
        let forbidden = check_transition(before.status, to).err();
        if let Some(forbidden) = forbidden.filter(|_| !change.via_reopen) {
            return Err(Error::transition(id, forbidden));
        }
        claims::check(&locked.claim, scope.agent.as_deref(), None, Need::Status, time::now_us())?;
        if forbidden.is_some() {
            store::write::update(&scope.tenant, id, &json_fields([("status", json!("pending"))]));
        }
        fields.insert("status".into(), json!(to.as_str()));
    }
    if let Some(patch) = change.metadata {
        let current: Map<String, Value> =
            before.metadata.as_deref().and_then(|m| serde_json::from_str(m).ok()).unwrap_or_default();
        let mut merged = current.clone();
        for (k, v) in patch {
            if v.is_null() {
                merged.remove(&k);
            } else {
                merged.insert(k, v);
            }
        }
        if merged != current {
            fields.insert("metadata".into(), if merged.is_empty() { Value::Null } else { Value::Object(merged) });
        }
    }
    let starts = fields.get("status").and_then(Value::as_str) == Some(Status::InProgress.as_str());
    if let Some(owner) =
        change.default_owner.filter(|_| starts && before.owner.is_none() && !fields.contains_key("owner"))
    {
        fields.insert("owner".into(), json!(owner));
    }
    let after = if fields.is_empty() {
        before.clone()
    } else {
        store::write::update(&scope.tenant, id, &fields).expect("the row is locked")
    };
    session::touched(&scope.tenant, after.conversation_id.as_deref(), id);
    Ok(Changed { before, after })
}

/// `change` of todo `id` (anywhere in the tenant) made on what its caller read of it at
/// version `read` (a person editing on the board): applied only if no change was recorded
/// since (an event of a later version in `todo.events`), so an edit never overwrites a change
/// its author did not see; a lease renewal, which records no event, is no such change.
/// Errors: `Stale` (with the version it is at now), and those of `change`.
pub fn change_read_at(scope: &Scope, id: i64, read: i64, change: Change) -> Result<Changed, Error> {
    lock_read_at(scope, id, read)?;
    self::change(scope, Find::Anywhere, id, change)
}

/// Locks todo `id` (anywhere in the tenant) for a change made on what its caller read of it
/// at version `read`, and returns it with its claim; `Stale` when a change was recorded since
/// (an event of a later version in `todo.events`). Errors: `Stale`, `NotFound`.
pub fn lock_read_at(scope: &Scope, id: i64, read: i64) -> Result<store::read::Locked, Error> {
    let locked = super::lock_one(scope, Find::Anywhere, id, false)?;
    // a change recorded since: an event of a later version (a lease renewal bumps the version
    // but records nothing, and is no change to what the caller read)
    let (now, changed) = store::board::versions(&scope.tenant, id).ok_or(Error::NotFound { id })?;
    // (a version the todo never had is no version anyone read)
    if read > now || changed > read {
        return Err(Error::Stale { id, read, now });
    }
    Ok(locked)
}

/// Takes todo `id` (one `find` finds) off its list, kept as history (archived); an open todo
/// is canceled first, under the claim rules of any change of status. The todo as it was
/// (what an undo restores: `unarchive` with its status). An archived todo stays as it is.
/// Errors: `NotFound`, `Claim` (under another agent's live claim).
pub fn archive(scope: &Scope, find: Find<'_>, id: i64) -> Result<Todo, Error> {
    let locked = super::lock_one(scope, find, id, false)?;
    let before = locked.todo;
    if before.archived_us.is_some() {
        return Ok(before);
    }
    let mut fields = json_fields([("archived_at", json!(time::iso8601(time::now_us())))]);
    if !before.status.is_terminal() {
        claims::check(&locked.claim, scope.agent.as_deref(), None, Need::Status, time::now_us())?;
        fields.insert("status".into(), json!(Status::Canceled.as_str()));
    }
    store::write::update(&scope.tenant, id, &fields);
    session::touched(&scope.tenant, before.conversation_id.as_deref(), id);
    Ok(before)
}

/// Puts archived todo `id` (one `find` finds) back on its list, with status `status` when
/// given (the one it had before `archive`; a canceled todo moves there as a reopen). The todo
/// as it is then. Errors: `NotFound`; `Invalid` for a todo that is not archived; `Transition`,
/// `Rejected`.
pub fn unarchive(scope: &Scope, find: Find<'_>, id: i64, status: Option<Status>) -> Result<Todo, Error> {
    let locked = super::lock_one(scope, find, id, false)?;
    if locked.todo.archived_us.is_none() {
        return Err(Error::Invalid(format!("todo #{id} is not archived: there is nothing to put back")));
    }
    let change =
        Change { status, via_reopen: true, fields: json_fields([("archived_at", Value::Null)]), ..Change::default() };
    Ok(self::change(scope, find, id, change)?.after)
}

/// Deletes todo `id` (one `find` finds); the todo as it was. Errors: `NotFound`.
pub fn delete(scope: &Scope, find: Find<'_>, id: i64) -> Result<Todo, Error> {
    let locked = super::lock_one(scope, find, id, true)?;
    store::write::delete(&scope.tenant, id);
    session::touched(&scope.tenant, locked.todo.conversation_id.as_deref(), id);
    Ok(locked.todo)
}

/// A JSON object from key/value pairs: the columns of `NewTodo` and `Change`.
pub fn json_fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Puts todos `ids` (of the tenant) in this order, reusing the positions they hold, so they
/// keep their place among the others; locks them in id order first.
pub fn reorder(scope: &Scope, ids: &[i64]) {
    store::locks::rows(&scope.tenant, ids);
    store::write::reorder(&scope.tenant, ids);
}

/// Makes todo `id` (one `find` finds) a subtask of `parent` (None: of no todo). Errors:
/// `NotFound`; `Rejected` for a parent the table refuses (another tenant's, a cycle).
pub fn set_parent(scope: &Scope, find: Find<'_>, id: i64, parent: Option<i64>) -> Result<(), Error> {
    let locked = super::lock_one(scope, find, id, false)?;
    store::write::set_parent(&scope.tenant, id, parent);
    session::touched(&scope.tenant, locked.todo.conversation_id.as_deref(), id);
    Ok(())
}

/// Sets when todo `id` (one `find` finds) was made and last changed: an import keeps the
/// times of the tracker's file. Errors: `NotFound`.
pub fn set_times(scope: &Scope, find: Find<'_>, id: i64, created_us: i64, updated_us: i64) -> Result<(), Error> {
    super::lock_one(scope, find, id, false)?;
    store::write::set_times(&scope.tenant, id, created_us, updated_us);
    Ok(())
}
