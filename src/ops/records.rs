//! A list as trackers' records (`interchange::Record`) and back: what `todo.export` writes
//! into a tracker's files and what `todo.import` reads from them. A record is a todo of the
//! list named by its caller id (`external_id`), with its subtasks (`parent_id`), its
//! dependencies within the list, its checkable lists and comments; what the record holds that
//! no column keeps is the todo's metadata. An import matches records to todos by caller id,
//! so importing the same files again changes nothing.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use super::single::{self, json_fields, Change, NewTodo};
use super::{annotations, dependencies, Find, Scope};
use crate::error::Error;
use crate::interchange::{ChecklistItem, ChecklistKind, Comment, Record};
use crate::store;
use crate::todo::Todo;

/// The record of a todo: `ids` gives each todo of the list its record id (its caller id, else
/// its store id).
fn record_of(
    t: &Todo,
    ids: &HashMap<i64, String>,
    waits_for: &[i64],
    checklist: Vec<ChecklistItem>,
    comments: Vec<Comment>,
) -> Record {
    let extra: Map<String, Value> =
        t.metadata.as_deref().and_then(|m| serde_json::from_str(m).ok()).unwrap_or_default();
    Record {
        id: ids[&t.id].clone(),
        parent: t.parent_id.and_then(|p| ids.get(&p).cloned()),
        list: None,
        title: t.subject.clone(),
        description: t.description.clone(),
        status: t.status,
        priority: t.priority.clone(),
        labels: t.labels.clone(),
        issue_type: t.issue_type.clone(),
        assignee: t.owner.clone(),
        due_us: t.due_us,
        notes: t.notes.clone(),
        plan: t.plan.clone(),
        criteria: t.completion_criteria.clone(),
        outcome: t.outcome.clone(),
        active_form: t.active_form.clone(),
        dependencies: waits_for.iter().filter_map(|d| ids.get(d).cloned()).collect(),
        checklist,
        comments,
        created_us: Some(t.created_us),
        // a tracker writes when a task changed only once it has (Backlog.md's updated_date)
        updated_us: (t.updated_us != t.created_us).then_some(t.updated_us),
        completed_us: t.completed_us,
        archived: t.archived_us.is_some(),
        extra,
    }
}

/// A list's todos (archived ones too) with their records, in list order.
pub fn read(scope: &Scope, conversation: &str) -> Vec<(Todo, Record)> {
    let todos = store::read::todos_with_archived(&scope.tenant, conversation);
    let ids: HashMap<i64, String> =
        todos.iter().map(|t| (t.id, t.external_id.clone().unwrap_or_else(|| t.id.to_string()))).collect();
    let all: Vec<i64> = todos.iter().map(|t| t.id).collect();
    let mut waits: HashMap<i64, Vec<i64>> = HashMap::new();
    for (a, b, _) in store::edges::touching(&scope.tenant, &all) {
        if ids.contains_key(&a) {
            waits.entry(a).or_default().push(b);
        }
    }
    let mut checklists: HashMap<i64, Vec<ChecklistItem>> = HashMap::new();
    for (id, item) in store::annotations::checklists(&scope.tenant, &all) {
        checklists.entry(id).or_default().push(item);
    }
    let mut comments: HashMap<i64, Vec<Comment>> = HashMap::new();
    for (id, c) in store::annotations::comments(&scope.tenant, &all) {
        comments.entry(id).or_default().push(c);
    }
    todos
        .into_iter()
        .map(|t| {
            let r = record_of(
                &t,
                &ids,
                waits.get(&t.id).map(Vec::as_slice).unwrap_or_default(),
                checklists.remove(&t.id).unwrap_or_default(),
                comments.remove(&t.id).unwrap_or_default(),
            );
            (t, r)
        })
        .collect()
}

/// What an import did (or, in a dry run, would do) to one record's todo.
pub struct Outcome {
    pub id: String,
    pub conversation: String,
    /// `added`, `changed`, `unchanged`, or `kept`: a todo of the list a read of it does not
    /// show (past `todo.max_read_todos` or `todo.max_output_size`), left as it is
    pub action: &'static str,
    /// the fields it changed (for `changed`)
    pub fields: Vec<&'static str>,
}

/// The columns of a record, as `single::add` and `single::change` take them.
fn columns(r: &Record, conversation: &str) -> Map<String, Value> {
    let opt = |s: &Option<String>| json!(s.as_deref().filter(|s| !s.is_empty()));
    json_fields([
        ("conversation_id", json!(conversation)),
        ("subject", json!(r.title)),
        ("description", opt(&r.description)),
        ("priority", opt(&r.priority)),
        ("labels", if r.labels.is_empty() { Value::Null } else { json!(r.labels) }),
        ("issue_type", opt(&r.issue_type)),
        ("owner", opt(&r.assignee)),
        ("due_at", json!(r.due_us.map(crate::time::iso8601))),
        ("notes", opt(&r.notes)),
        ("plan", opt(&r.plan)),
        ("completion_criteria", opt(&r.criteria)),
        ("outcome", opt(&r.outcome)),
        ("active_form", opt(&r.active_form)),
        ("external_id", json!(r.id)),
        ("metadata", if r.extra.is_empty() { Value::Null } else { Value::Object(r.extra.clone()) }),
    ])
}

/// The fields of `new` that differ from `old` (times aside: the store keeps its own).
fn differences(old: &Record, new: &Record) -> Vec<&'static str> {
    let mut out = Vec::new();
    let blank = |s: &Option<String>| s.clone().filter(|s| !s.is_empty());
    let checks: [(&'static str, bool); 16] = [
        ("title", old.title != new.title),
        ("description", blank(&old.description) != blank(&new.description)),
        ("status", old.status != new.status),
        ("priority", blank(&old.priority) != blank(&new.priority)),
        ("labels", old.labels != new.labels),
        ("issue_type", blank(&old.issue_type) != blank(&new.issue_type)),
        ("assignee", blank(&old.assignee) != blank(&new.assignee)),
        ("due", old.due_us != new.due_us),
        ("notes", blank(&old.notes) != blank(&new.notes)),
        ("plan", blank(&old.plan) != blank(&new.plan)),
        ("criteria", blank(&old.criteria) != blank(&new.criteria)),
        ("outcome", blank(&old.outcome) != blank(&new.outcome)),
        ("active_form", blank(&old.active_form) != blank(&new.active_form)),
        ("extra", old.extra != new.extra),
        ("archived", old.archived != new.archived),
        ("checklist", old.checklist != new.checklist),
    ];
    out.extend(checks.iter().filter(|(_, d)| *d).map(|(f, _)| *f));
    if old.parent != new.parent {
        out.push("parent");
    }
    let mut a = old.dependencies.clone();
    let mut b = new.dependencies.clone();
    a.sort();
    b.sort();
    if a != b {
        out.push("dependencies");
    }
    let missing = new.comments.iter().any(|c| !old.comments.iter().any(|o| o.body == c.body && o.author == c.author));
    if missing {
        out.push("comments");
    }
    out
}

/// Writes `records` into the lists they name (`conversation_of(record)`): a record whose
/// caller id a todo of that list has changes it where it differs, any other is added; a
/// record whose todo a read of its list does not show (past `todo.max_read_todos` or
/// `todo.max_output_size`) leaves it as it is (`kept`), neither changed nor added again; then
/// each one's parent, dependencies (exactly the record's, within its list), checkable lists
/// and comments (the record's that the todo lacks) follow. Errors: those of the operations
/// (a claim another agent holds, a value the table refuses, a dependency that would close a
/// cycle), with nothing written (the caller runs it in one attempt).
pub fn import(
    scope: &Scope,
    records: &[Record],
    conversation_of: &dyn Fn(&Record) -> String,
) -> Result<Vec<Outcome>, Error> {
    import_onto(scope, records, conversation_of, HashMap::new())
}

/// `import` onto the lists the caller has read already (`read`'s, by conversation; a tool
/// that has its list need not read it again); the others are read here.
pub fn import_onto(
    scope: &Scope,
    records: &[Record],
    conversation_of: &dyn Fn(&Record) -> String,
    lists: HashMap<String, Vec<(Todo, Record)>>,
) -> Result<Vec<Outcome>, Error> {
    let before = ListsRead::of(scope, records, conversation_of, lists);
    // (conversation, record id) → store id, for parents and dependencies
    let mut store_id: HashMap<(String, String), i64> = HashMap::new();
    for (conv, list) in &before.lists {
        for (t, r) in list {
            store_id.insert((conv.clone(), r.id.clone()), t.id);
        }
    }
    let now = crate::time::iso8601(crate::time::now_us());
    let mut outcomes = Vec::new();
    for r in records {
        let conv = conversation_of(r);
        let outcome = write_record(scope, r, conv, &before, &now)?;
        if let Some(id) = outcome.1 {
            store_id.insert((outcome.0.conversation.clone(), r.id.clone()), id);
        }
        outcomes.push(outcome.0);
    }
    // parents, dependencies, checkable lists and comments, once every record has its todo
    for (r, outcome) in records.iter().zip(&outcomes) {
        if outcome.action == "unchanged" || outcome.action == "kept" {
            continue;
        }
        let conv = &outcome.conversation;
        let id = store_id[&(conv.clone(), r.id.clone())];
        let old = before.as_read(conv, &r.id).map(|(_, o)| o);
        let list_scope = Scope { conversation: Some(conv.clone()), ..scope.clone() };
        let in_list = |rid: &String| store_id.get(&(conv.clone(), rid.clone())).copied();
        follow_edges(&list_scope, id, r, old, &in_list)?;
        follow_annotations(&list_scope, id, r, old)?;
        // last: the writes above stamp the time of the change
        // (a record changed in the minute it was made still says it changed: 1 µs later)
        if let Some(created) = r.created_us.filter(|_| outcome.action == "added") {
            let updated = r.updated_us.map_or(created, |u| if u == created { u + 1 } else { u });
            single::set_times(&list_scope, Find::Anywhere, id, created, updated)?;
        }
    }
    Ok(outcomes)
}

/// The lists an import writes onto, as they were before it: each list's todos as a read shows
/// them (by conversation), where each record id first stands in its list, and the record ids of
/// each list's todos that read does not show.
struct ListsRead {
    lists: HashMap<String, Vec<(Todo, Record)>>,
    read_at: HashMap<(String, String), usize>,
    unseen: HashMap<String, HashSet<String>>,
}

impl ListsRead {
    /// The lists `records` name, `lists` (read already) and the others read now.
    fn of(
        scope: &Scope,
        records: &[Record],
        conversation_of: &dyn Fn(&Record) -> String,
        mut lists: HashMap<String, Vec<(Todo, Record)>>,
    ) -> ListsRead {
        let mut unseen: HashMap<String, HashSet<String>> = HashMap::new();
        for r in records {
            let conv = conversation_of(r);
            lists.entry(conv.clone()).or_insert_with_key(|conv| read(scope, conv));
            unseen.entry(conv.clone()).or_insert_with(|| {
                let shown: HashSet<&str> = lists[&conv].iter().map(|(_, r)| r.id.as_str()).collect();
                let all = store::read::record_ids(&scope.tenant, &conv);
                all.into_iter().filter(|id| !shown.contains(id.as_str())).collect()
            });
        }
        let mut read_at: HashMap<(String, String), usize> = HashMap::new();
        for (conv, list) in &lists {
            for (i, (_, r)) in list.iter().enumerate() {
                read_at.entry((conv.clone(), r.id.clone())).or_insert(i);
            }
        }
        ListsRead { lists, read_at, unseen }
    }

    /// The todo (and its record) of record id `id` in list `conv`, as read.
    fn as_read(&self, conv: &str, id: &str) -> Option<&(Todo, Record)> {
        self.read_at.get(&(conv.to_string(), id.to_string())).map(|i| &self.lists[conv][*i])
    }
}

/// Writes record `r` into list `conv`: added when no todo of the list has its id, changed where
/// it differs from its todo, kept when a todo no read shows has it. Returns its outcome, and the
/// id of the todo it added.
fn write_record(
    scope: &Scope,
    r: &Record,
    conv: String,
    before: &ListsRead,
    now: &str,
) -> Result<(Outcome, Option<i64>), Error> {
    let list_scope = Scope { conversation: Some(conv.clone()), ..scope.clone() };
    let mut fields = columns(r, &conv);
    let outcome = |conversation: String, action: &'static str, fields: Vec<&'static str>| Outcome {
        id: r.id.clone(),
        conversation,
        action,
        fields,
    };
    match before.as_read(&conv, &r.id) {
        // a todo no read of the list shows: not the importer's to change (nor to add again)
        None if before.unseen[&conv].contains(&r.id) => Ok((outcome(conv, "kept", Vec::new()), None)),
        None => {
            fields.insert("status".into(), json!(r.status.as_str()));
            if r.archived {
                fields.insert("archived_at".into(), json!(now));
            }
            let t = single::add(&list_scope, NewTodo { fields, ..NewTodo::default() })?;
            Ok((outcome(conv, "added", Vec::new()), Some(t.id)))
        }
        Some((t, old)) => {
            let changed = differences(old, r);
            if changed.is_empty() {
                return Ok((outcome(conv, "unchanged", changed), None));
            }
            if old.archived != r.archived {
                fields.insert("archived_at".into(), if r.archived { json!(now) } else { Value::Null });
            }
            let change = Change {
                status: (old.status != r.status).then_some(r.status),
                via_reopen: true,
                fields,
                ..Change::default()
            };
            single::change(&list_scope, Find::Anywhere, t.id, change)?;
            Ok((outcome(conv, "changed", changed), None))
        }
    }
}

/// The parent and the dependencies of todo `id` become record `r`'s (`old`: the record its todo
/// was; `in_list`: the store id of a record id of the list).
fn follow_edges(
    scope: &Scope,
    id: i64,
    r: &Record,
    old: Option<&Record>,
    in_list: &dyn Fn(&String) -> Option<i64>,
) -> Result<(), Error> {
    let parent = r.parent.as_ref().and_then(in_list);
    if old.map(|o| o.parent.clone()) != Some(r.parent.clone()) {
        single::set_parent(scope, Find::Anywhere, id, parent)?;
    }
    let wanted: Vec<i64> = r.dependencies.iter().filter_map(in_list).collect();
    let had: Vec<i64> = old.map(|o| o.dependencies.iter().filter_map(in_list).collect()).unwrap_or_default();
    for on in wanted.iter().filter(|w| !had.contains(w)) {
        dependencies::block(scope, id, *on)?;
    }
    for on in had.iter().filter(|h| !wanted.contains(h)) {
        dependencies::unblock(scope, id, *on)?;
    }
    Ok(())
}

/// The checkable lists of todo `id` become record `r`'s, and the record's comments its todo
/// lacks are added.
fn follow_annotations(scope: &Scope, id: i64, r: &Record, old: Option<&Record>) -> Result<(), Error> {
    for kind in [ChecklistKind::Acceptance, ChecklistKind::Done] {
        let items: Vec<ChecklistItem> = r.checklist.iter().filter(|i| i.kind == kind).cloned().collect();
        let before: Vec<ChecklistItem> =
            old.map(|o| o.checklist.iter().filter(|i| i.kind == kind).cloned().collect()).unwrap_or_default();
        if items != before {
            annotations::set_checklist(scope, Find::Anywhere, id, kind, &items)?;
        }
    }
    for c in &r.comments {
        let known = old.is_some_and(|o| o.comments.iter().any(|x| x.body == c.body && x.author == c.author));
        if !known {
            let at = (c.created_us != 0).then_some(c.created_us);
            annotations::add_comment(scope, Find::Anywhere, id, c.author.as_deref(), &c.body, at)?;
        }
    }
    Ok(())
}
