//! Replacing a conversation's whole list (OpenCode's `todowrite`, seed 003's
//! `todolist__set`, seed 004's task files): the list sent becomes the list stored, keeping
//! the identity of the todos it matches (`replace::plan`: by id, then content and place).

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::Scope;
use crate::checklist::{parse_document, render_document, stored_document, DocumentLine};
use crate::claims::EdgeError;
use crate::error::Error;
use crate::replace::{self, Incoming, Stored};
use crate::status::{check_transition, Status};
use crate::store::write::ListRow;
use crate::todo::Todo;
use crate::{session, store};

/// One item of a list sent whole: the id it names (None: none), its content (the subject),
/// its status, and the other text columns it sets (`store::write::WRITABLE` names; the same
/// keys for every item of a list).
pub struct Item {
    pub id: Option<i64>,
    pub content: String,
    pub status: Status,
    pub columns: Map<String, Value>,
}

/// Which of the conversation's todos form its list (archived ones never do: the store reads
/// a conversation's list without them).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    All,
    /// the dialects with no canceled status: canceled todos are not on the list and stay
    Uncanceled,
}

impl Kept {
    fn keeps(self, t: &Todo) -> bool {
        self == Kept::All || t.status != Status::Canceled
    }
}

/// What becomes of a stored todo the list sent leaves out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Dropped {
    /// it is deleted (the seeds' whole-list dialects)
    Deleted,
    /// a finished one (completed, canceled) is archived: kept as history, on no list; an
    /// open one is deleted (the runtimes' lists, which forget finished items)
    FinishedKept,
}

/// How a dialect's whole list maps onto the conversation's todos.
#[derive(Clone, Copy)]
pub struct Rules {
    pub kept: Kept,
    pub dropped: Dropped,
    /// whether the dialect has a blocked status: one that has none sends a blocked todo
    /// back as pending, and it stays blocked
    pub blocked: bool,
    /// only forward moves (pending → in_progress → completed, or none) for matched todos;
    /// a backward move is `Error::Invalid`, naming the item (1-based) and the move
    pub forward_only: bool,
}

impl Rules {
    /// The seeds' whole-list dialects: the list sent is the list stored.
    pub const fn seeds(kept: Kept) -> Rules {
        Rules { kept, dropped: Dropped::Deleted, blocked: false, forward_only: false }
    }

    /// The runtimes' whole-list tools: canceled todos are the dialect's business (`kept`);
    /// finished todos left out are kept as history.
    pub const fn runtime(kept: Kept) -> Rules {
        Rules { kept, dropped: Dropped::FinishedKept, blocked: false, forward_only: false }
    }
}

/// The list as stored (for surfaces that compare before writing).
pub fn stored(scope: &Scope, conversation: &str, kept: Kept) -> Vec<Todo> {
    let mut todos = store::read::todos(&scope.tenant, store::read::Find::Conversation(conversation));
    todos.retain(|t| kept.keeps(t));
    todos
}

/// Whether a todo in `stored` sent back as `sent` by a whole-list dialect keeps `stored`: the
/// dialect has no word for it and sent what it shows it as (blocked and deferred as pending,
/// review as in progress; blocked only for a dialect without blocked).
pub fn keeps(rules: Rules, stored: Status, sent: Status) -> bool {
    match stored {
        Status::Blocked => !rules.blocked && sent == Status::Pending,
        Status::Deferred => sent == Status::Pending,
        Status::Review => sent == Status::InProgress,
        _ => false,
    }
}

/// The place in the forward order pending → in_progress → completed (blocked counts as
/// pending); None for canceled.
fn forward_rank(s: Status) -> Option<u8> {
    match s {
        Status::Pending | Status::Blocked | Status::Deferred => Some(0),
        Status::Review => Some(1),
        Status::InProgress => Some(1),
        Status::Completed => Some(2),
        Status::Canceled => None,
    }
}

/// Replaces conversation `conversation`'s list with `items`; their ids, in order (an item that
/// is a read's note, `limits::is_list_note`, copied back from a cut read, is no todo: left
/// out, with no id). The list replaced is what a read of it shows now
/// (`store::read::lock_shown`: position order, at most `todo.max_read_todos` todos, no more
/// once their text passes `todo.max_output_size`): the todos past those limits, which the
/// writer could not have seen, are neither matched, changed, deleted nor archived, and how
/// many were kept is noted for the call's answer (`session::note_kept`). Locks, in the one
/// order: the list (two replaces of one list never interleave: the second reads the list the
/// first wrote), a range of ids with room for every item (when there are items), the todos
/// that read shows by id; then deletes the stored todos no item took, moves the matched
/// ones whose new status the lifecycle cannot reach in one step through pending, updates
/// the ones that change (status, place, a column) in one statement and inserts the new ones
/// (ids reserved at once) in one; the stored todos no item took are deleted or archived
/// (`rules.dropped`). Places: the positions the list's todos held (new ones: their ids) are
/// handed out again in list order, so the list keeps its place among the conversation's
/// other todos. Errors: `Invalid` for more than `schema::MAX_ITEMS` items (the bound every
/// list sent as JSON has; a markdown checklist has its lines counted here) or a backward move
/// under `rules.forward_only` (nothing written); `Rejected` when the table refuses a value or
/// a claim.
pub fn replace(scope: &Scope, conversation: &str, rules: Rules, items: &[Item]) -> Result<Vec<i64>, Error> {
    if items.len() > crate::schema::MAX_ITEMS {
        return Err(Error::Invalid(format!(
            "a list holds at most {} items, got {}",
            crate::schema::MAX_ITEMS,
            items.len()
        )));
    }
    // a read's note copied back as an item is no todo
    let items: Vec<&Item> = items.iter().filter(|i| !pg_todos_core::limits::is_list_note(&i.content)).collect();
    let tenant = scope.tenant.as_str();
    store::locks::lock_list(tenant, conversation);
    if !items.is_empty() {
        store::ids::hold_ids(tenant, items.len() as i64);
    }
    // only the todos a read of the list shows now are the writer's to change or drop; the
    // ones past the read's limits stay as they are
    let (mut stored, hidden) = store::read::lock_shown(tenant, conversation);
    stored.retain(|t| rules.kept.keeps(t));
    let plan = replace::plan(
        &stored.iter().map(|t| Stored { id: t.id, content: t.subject.clone() }).collect::<Vec<_>>(),
        &items.iter().map(|i| Incoming { id: i.id, content: i.content.clone() }).collect::<Vec<_>>(),
    );
    let found: Vec<Option<&Todo>> =
        plan.matched.iter().map(|m| m.and_then(|id| stored.iter().find(|t| t.id == id))).collect();
    let statuses = end_statuses(rules, &items, &found);
    if rules.forward_only {
        check_forward(&items, &found, &statuses)?;
    }
    drop_removed(tenant, rules, &plan.removed, &stored);
    let (ids, places) = ids_and_places(tenant, &found);
    write_items(tenant, conversation, &items, &found, &statuses, &ids, &places);
    for id in ids.iter().chain(&plan.removed) {
        session::touched(tenant, Some(conversation), *id);
    }
    if hidden > 0 {
        session::note_kept(hidden);
    }
    Ok(ids)
}

/// The status each item ends with: a todo sent back in the status a dialect that cannot say its
/// own shows it in keeps its own (blocked and deferred shown as pending, review as in
/// progress).
fn end_statuses(rules: Rules, items: &[&Item], found: &[Option<&Todo>]) -> Vec<Status> {
    items
        .iter()
        .zip(found)
        .map(|(item, f)| match f {
            Some(t) if keeps(rules, t.status, item.status) => t.status,
            _ => item.status,
        })
        .collect()
}

/// Under `rules.forward_only`: `Invalid` for the first item whose todo would move back.
fn check_forward(items: &[&Item], found: &[Option<&Todo>], statuses: &[Status]) -> Result<(), Error> {
    for (i, (f, to)) in found.iter().zip(statuses).enumerate() {
        if let Some(t) = f {
            if forward_rank(*to) < forward_rank(t.status) {
                return Err(Error::Invalid(format!(
                    "item {} \"{}\" cannot move from {} back to {}: only forward moves (pending → in_progress → completed) are allowed",
                    i + 1,
                    items[i].content,
                    t.status,
                    to
                )));
            }
        }
    }
    Ok(())
}

/// The stored todos no item took: archived when finished and `rules.dropped` keeps those,
/// else deleted.
fn drop_removed(tenant: &str, rules: Rules, removed: &[i64], stored: &[Todo]) {
    let (archived, deleted): (Vec<i64>, Vec<i64>) = removed.iter().partition(|id| {
        rules.dropped == Dropped::FinishedKept && stored.iter().any(|t| t.id == **id && t.status.is_terminal())
    });
    store::write::delete_many(tenant, &deleted);
    store::write::archive_many(tenant, &archived);
}

/// Each item's id (its todo's, or one reserved now for a new one) and its place: the
/// positions the list's todos held (new ones: their ids), handed out again in list order.
fn ids_and_places(tenant: &str, found: &[Option<&Todo>]) -> (Vec<i64>, Vec<i64>) {
    let fresh = found.iter().filter(|f| f.is_none()).count() as i64;
    let mut next = if fresh > 0 { store::ids::reserve_todo_ids(tenant, fresh) } else { 0 };
    let (mut ids, mut places) = (Vec::with_capacity(found.len()), Vec::with_capacity(found.len()));
    for f in found {
        let (id, position) = match f {
            Some(t) => (t.id, t.position),
            None => {
                next += 1;
                (next - 1, next - 1)
            }
        };
        ids.push(id);
        places.push(position);
    }
    places.sort_unstable();
    (ids, places)
}

/// Writes the items: the matched todos that change (status, place, a column) in one UPDATE,
/// after moving through pending those whose new status the lifecycle cannot reach in one step,
/// and the new ones in one INSERT.
fn write_items(
    tenant: &str,
    conversation: &str,
    items: &[&Item],
    found: &[Option<&Todo>],
    statuses: &[Status],
    ids: &[i64],
    places: &[i64],
) {
    // the columns every item sets besides its content (the subject)
    let names: Vec<&str> = items.first().map(|i| i.columns.keys().map(String::as_str).collect()).unwrap_or_default();
    let (mut inserts, mut updates, mut reopen) = (Vec::new(), Vec::new(), Vec::new());
    for (i, item) in items.iter().enumerate() {
        let row = ListRow {
            id: ids[i],
            status: statuses[i].as_str(),
            position: places[i],
            subject: &item.content,
            columns: &item.columns,
        };
        match found[i] {
            None => inserts.push(row),
            Some(t) => {
                let changed = t.status != statuses[i]
                    || t.position != places[i]
                    || t.subject != item.content
                    || item.columns.iter().any(|(k, v)| !holds(t, k, v));
                if changed {
                    if check_transition(t.status, statuses[i]).is_err() {
                        reopen.push(t.id);
                    }
                    updates.push(row);
                }
            }
        }
    }
    store::write::reopen_many(tenant, &reopen);
    store::write::update_many(tenant, &names, &updates);
    store::write::insert_many(tenant, conversation, &names, &inserts);
}

/// Whether stored todo `t` holds `value` in column `column` (one an item may set besides its
/// content; any other is taken as changed).
fn holds(t: &Todo, column: &str, value: &Value) -> bool {
    let stored = match column {
        "priority" => &t.priority,
        "active_form" => &t.active_form,
        "description" => &t.description,
        "external_id" => &t.external_id,
        _ => return false,
    };
    match (stored, value) {
        (None, Value::Null) => true,
        (Some(s), Value::String(v)) => s == v,
        _ => false,
    }
}

/// Replaces the list with a markdown checklist document (Goose's, Continue's): its checkbox
/// lines are the list's items (`replace`, matched by content and place), and the whole
/// document, notes included, is kept with the list so that `document` gives it back as it
/// was written. Errors: those of `replace`.
pub fn replace_document(scope: &Scope, conversation: &str, rules: Rules, md: &str) -> Result<Vec<i64>, Error> {
    let mut lines = parse_document(md);
    // a read's note copied back as a checkbox line is no todo (`replace`), nor kept
    lines.retain(|l| !matches!(l, DocumentLine::Checkbox(c) if pg_todos_core::limits::is_list_note(&c.content)));
    let items: Vec<Item> = lines
        .iter()
        .filter_map(|line| match line {
            DocumentLine::Checkbox(c) => {
                Some(Item { id: None, content: c.content.clone(), status: c.status(), columns: Map::new() })
            }
            DocumentLine::Text(_) => None,
        })
        .collect();
    let ids = replace(scope, conversation, rules, &items)?;
    store::lists::set_checklist(&scope.tenant, conversation, &stored_document(&lines, &ids));
    Ok(ids)
}

/// The list as a markdown checklist document: the one last written (its notes, each
/// checkbox line with its todo as it is now), todos added since through other dialects after
/// its last checkbox line; with no document, one `- [ ] ` line per todo.
pub fn document(scope: &Scope, conversation: &str, kept: Kept) -> String {
    let todos = stored(scope, conversation, kept);
    let rows: Vec<(i64, Status, &str)> = todos.iter().map(|t| (t.id, t.status, t.subject.as_str())).collect();
    let stored = store::lists::checklist(&scope.tenant, conversation).unwrap_or_else(|| json!([]));
    render_document(&stored, &rows)
}

/// For the runtimes that allow one write of the list per model turn (LangChain): false when
/// the list was already written this way in the context's turn; else records this turn and
/// answers true. Without a turn in context, always true. Takes the list's lock first.
pub fn first_write_in_turn(scope: &Scope, conversation: &str) -> bool {
    let Some(turn) = scope.turn.as_deref() else { return true };
    store::locks::lock_list(&scope.tenant, conversation);
    if store::lists::written_in_turn(&scope.tenant, conversation).as_deref() == Some(turn) {
        return false;
    }
    store::lists::set_written_in_turn(&scope.tenant, conversation, turn);
    true
}

/// Sets the dependencies among the todos `list` (a list just written): for each `(todo,
/// waits_for)`, the todos of `list` it waits for become exactly `waits_for` (its
/// dependencies on todos off the list stay). The caller has checked that `wanted` closes no
/// cycle among the list's todos. Removals first, then,
/// under the tenant's graph lock, each new edge: when a dependency or a subtask links the
/// list with a todo off it, checked for a cycle through the rest of the graph (`Edge` error,
/// naming the path); when none does, the list's own graph is the whole story and no search
/// is needed.
pub fn set_dependencies(
    scope: &Scope,
    conversation: &str,
    list: &[i64],
    wanted: &[(i64, Vec<i64>)],
) -> Result<(), Error> {
    let tenant = scope.tenant.as_str();
    store::locks::lock_dependencies(tenant);
    let on_list: HashSet<i64> = list.iter().copied().collect();
    let current: HashSet<(i64, i64)> =
        store::edges::touching(tenant, list).into_iter().map(|(t, o, _)| (t, o)).collect();
    let leaves_the_list = current.iter().any(|(t, o)| !on_list.contains(t) || !on_list.contains(o))
        || store::edges::has_subtask_links(tenant, list);
    let wanted_edges: HashSet<(i64, i64)> =
        wanted.iter().flat_map(|(id, want)| want.iter().map(move |on| (*id, *on))).collect();
    for (id, on) in &current {
        if on_list.contains(id) && on_list.contains(on) && !wanted_edges.contains(&(*id, *on)) {
            store::edges::remove_dependency(tenant, *id, *on);
        }
    }
    for (id, want) in wanted {
        for on in want.iter().filter(|on| !current.contains(&(*id, **on))) {
            if *on == *id {
                return Err(EdgeError::SelfLoop(*id).into());
            }
            if leaves_the_list {
                if let Some(path) = store::edges::dependency_path(tenant, *on, *id) {
                    return Err(EdgeError::Cycle { id: *id, on: *on, path }.into());
                }
            }
            store::edges::add_checked_dependency(tenant, *id, *on);
        }
        session::touched(tenant, Some(conversation), *id);
    }
    Ok(())
}

/// The todos of `list` each of its todos waits for, in `list`'s order.
pub fn dependencies_within(scope: &Scope, list: &[i64]) -> Vec<(i64, Vec<i64>)> {
    let on_list: HashSet<i64> = list.iter().copied().collect();
    let mut waits: HashMap<i64, Vec<i64>> = HashMap::new();
    for (t, o, _) in store::edges::touching(&scope.tenant, list) {
        if on_list.contains(&t) && on_list.contains(&o) {
            waits.entry(t).or_default().push(o);
        }
    }
    list.iter().map(|id| (*id, waits.remove(id).unwrap_or_default())).collect()
}
