//! The backlog dialect: Backlog.md's task tools (`task_create`, `task_list`, `task_search`,
//! `task_view`, `task_edit`, `task_complete`, `task_archive`), over the store. The project is
//! the list in context (`pg_todos mcp` started in a directory: `project:<path>`, whose path
//! the results print the files under). A task is a todo of the list, its id (`TASK-3`, a
//! subtask `TASK-3.1`) the todo's caller id (a todo written through another dialect shows
//! `TASK-<store id>`, or its own number); its acceptance criteria and definition of done are
//! `todo.checklist_items`, its comments `todo.comments` with their author, its plan, notes
//! and final summary (the outcome) their columns; what only Backlog.md has (ordinal,
//! milestone, references, documentation, modified files, several assignees, the file's name)
//! is kept in the metadata. Statuses: `To Do` pending, `In Progress` (pg_todos' claim for the
//! agent in context), `Done` completed, `Draft` deferred. `task_complete` moves a Done task
//! off the list (archived, as Backlog.md moves it to `completed/`); `task_archive` archives
//! one (a task that was not done is canceled, its word kept). Every write goes through
//! `ops::records`, as `pg_todos import` does, so the tools and the files agree. Results are
//! Backlog.md's plain texts (`core::backlog_view`), refusals its words, with nothing written.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::{error, error_message, str_arg, strings, Answer, Tool};
use crate::backlog_view::{self as view, GraphTask, Link, TaskLine, TaskView};
use crate::claims::Refusal;
use crate::error::named_ids;
use crate::error::Error;
use crate::formats::backlog as files;
use crate::interchange::{ChecklistItem, ChecklistKind, Comment, Record};
use crate::ops::records;
use crate::ops::single::{self, Change};
use crate::ops::{claiming, lists, Find, Scope};
use crate::status::Status;
use crate::todo::Todo;

/// The list's tasks, with what the tools print them with.
struct Project {
    /// where the files are printed (`/home/me/app` of `project:/home/me/app`; else `.`)
    root: String,
    scope: Scope,
    conversation: String,
    tasks: Vec<(Todo, Record)>,
    /// each task's Backlog.md id (`bid`), by its place in `tasks`
    bids: Vec<String>,
    /// each task's place in `tasks` by its record's id (a todo's caller id, else store id)
    by_raw: HashMap<String, usize>,
}

/// A refusal as Backlog.md gives it (its text; the code in the structured content).
fn refused(code: &str, message: impl Into<String>) -> Value {
    error(code, message)
}

fn text(out: &Value) -> String {
    if let Some(m) = error_message(out) {
        return m.to_string();
    }
    match out.get("texts").and_then(Value::as_array) {
        // several content items (task_list's groups): `mcp_result` sends each as its own;
        // this text is what a reader of one text gets
        Some(items) => items.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("\n\n"),
        None => out.get("text").and_then(Value::as_str).unwrap_or_default().to_string(),
    }
}

fn answer(text: String) -> Answer {
    Ok(json!({ "text": text }))
}

impl Project {
    fn read(scope: &Scope) -> Result<Project, Value> {
        let conversation = scope.conv().ok_or_else(|| {
            let how = match crate::session::via_http() {
                true => super::name_a_list(),
                false => "set the conversation in context (pg_todos mcp names the project's)",
            };
            refused("VALIDATION_ERROR", format!("No Backlog.md project: {how}"))
        })?;
        let root = conversation.strip_prefix("project:").unwrap_or(".").to_string();
        let tasks = records::read(scope, conversation);
        let bids = tasks.iter().map(|(t, r)| Self::bid(t, r)).collect();
        let mut by_raw = HashMap::new();
        for (i, (_, r)) in tasks.iter().enumerate() {
            by_raw.entry(r.id.clone()).or_insert(i);
        }
        Ok(Project { root, scope: scope.clone(), conversation: conversation.to_string(), tasks, bids, by_raw })
    }

    /// A task's Backlog.md id: its caller id as Backlog.md writes ids, else `TASK-<store id>`.
    fn bid(t: &Todo, r: &Record) -> String {
        view::parse_id(&r.id).unwrap_or_else(|| format!("TASK-{}", t.id))
    }

    /// The task an id names (`task-1`, `TASK-1`, `1`), archived ones too.
    fn find(&self, given: &str) -> Option<usize> {
        let wanted = view::parse_id(given)?;
        self.bids.iter().position(|b| *b == wanted)
    }

    /// Whether a task is in Backlog.md's archive (not found by its tools).
    fn in_archive(r: &Record) -> bool {
        r.archived && files::folder_of(r).starts_with("archive")
    }

    /// The task `given` names that Backlog.md's tools find (not archived away).
    fn visible(&self, given: &str) -> Option<usize> {
        self.find(given).filter(|i| !Self::in_archive(&self.tasks[*i].1))
    }

    /// A record as Backlog.md shows it: its ids (its own, its parent's, its dependencies')
    /// Backlog.md's.
    fn shown(&self, i: usize) -> Record {
        let r = &self.tasks[i].1;
        let by_raw = |raw: &str| self.by_raw.get(raw).map_or_else(|| raw.to_string(), |j| self.bids[*j].clone());
        let mut shown = r.clone();
        shown.id = self.bids[i].clone();
        shown.parent = r.parent.as_deref().map(by_raw);
        shown.dependencies = r.dependencies.iter().map(|d| by_raw(d)).collect();
        shown
    }

    /// The task's text: `in_view` as task_view prints it (subtasks, the parent's title).
    fn text_of(&self, i: usize, in_view: bool) -> String {
        let shown = self.shown(i);
        let file = format!("{}/{}", self.root, files::file_path(&shown));
        let mut v = TaskView::from_record(&shown, &file);
        if let Some(p) = shown.parent.as_deref().and_then(|p| self.find(p)) {
            v.parent_title = Some(self.tasks[p].1.title.clone());
        }
        let raw = &self.tasks[i].1.id;
        let mut subtasks: Vec<Link> = (0..self.tasks.len())
            .filter(|j| {
                self.tasks[*j].1.parent.as_deref() == Some(raw.as_str()) && !Self::in_archive(&self.tasks[*j].1)
            })
            .map(|j| Link { id: self.bids[j].clone(), title: self.tasks[j].1.title.clone() })
            .collect();
        subtasks.sort_by(|a, b| view::compare_ids(&a.id, &b.id));
        v.subtasks = subtasks;
        let graph: Vec<GraphTask> = (0..self.tasks.len())
            .filter(|j| !Self::in_archive(&self.tasks[*j].1))
            .map(|j| {
                let s = self.shown(j);
                GraphTask {
                    finished: s.status == Status::Completed,
                    status: files::status_word(&s),
                    id: s.id,
                    title: s.title,
                    dependencies: s.dependencies,
                }
            })
            .collect();
        let (on, by) = view::dependency_graph(&shown.id, &graph);
        v.depends_on = on;
        v.dependents = by;
        view::task_text(&v, in_view)
    }

    /// Writes a record through `ops::records` (as an import of one task), onto the list as
    /// this call read it.
    fn save(self, r: &Record) -> Result<(), Value> {
        let conv = self.conversation.clone();
        let names = self.names();
        let read = HashMap::from([(conv.clone(), self.tasks)]);
        records::import_onto(&self.scope, std::slice::from_ref(r), &|_| conv.clone(), read)
            .map(|_| ())
            .map_err(|e| failed(&names, e))
    }

    /// Where task `r`, just written, is in the list: a list longer than its read shows holds
    /// it past the cut, so it is added as written (the answer shows what was stored).
    fn place_of(&mut self, r: &Record) -> Option<usize> {
        if let Some(i) = self.find(&r.id) {
            return Some(i);
        }
        let mut t = self.tasks.first()?.0.clone();
        t.id = 0;
        t.external_id = Some(r.id.clone());
        self.bids.push(view::parse_id(&r.id)?);
        self.by_raw.entry(r.id.clone()).or_insert(self.tasks.len());
        self.tasks.push((t, r.clone()));
        Some(self.tasks.len() - 1)
    }

    /// Each task's Backlog.md id by its store id (what a refusal names it by).
    fn names(&self) -> HashMap<i64, String> {
        self.tasks.iter().zip(&self.bids).map(|((t, _), b)| (t.id, b.clone())).collect()
    }
}

/// An operation's refusal in Backlog.md's shape, naming tasks by their Backlog.md ids
/// (`names`), never by the store's.
fn failed(names: &HashMap<i64, String>, e: Error) -> Value {
    match e {
        Error::Claim(Refusal::HeldBy { holder, .. }) => {
            refused("OPERATION_FAILED", format!("The task is In Progress, claimed by {holder}"))
        }
        Error::Claim(Refusal::Blocked { .. }) => {
            refused("OPERATION_FAILED", "The task waits for dependencies that are not Done")
        }
        other => refused("OPERATION_FAILED", named_ids(&other.to_string(), |id| names.get(&id).cloned())),
    }
}

/// A due date as Backlog.md takes it: a day (`2026-12-01`), or a time it cuts to its day.
fn due(s: &str) -> Result<i64, Value> {
    let day = s.get(..10).and_then(files::parse_date);
    match day {
        Some(d) if s.len() == 10 || s[10..].starts_with(['T', ' ']) => Ok(d),
        _ => Err(refused("VALIDATION_ERROR", view::DUE_DATE_INVALID)),
    }
}

fn words(args: &Value, key: &str) -> Option<Vec<String>> {
    args.get(key).and_then(Value::as_array).map(|_| strings(args, key))
}

fn given<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// Sets the list-valued extras a create or an edit names.
fn set_extra_list(extra: &mut Map<String, Value>, key: &str, items: Vec<String>) {
    if items.is_empty() {
        extra.remove(key);
    } else {
        extra.insert(key.into(), json!(items));
    }
}

fn set_assignees(r: &mut Record, list: Vec<String>) {
    r.assignee = list.first().cloned();
    if list.len() > 1 {
        r.extra.insert("assignee".into(), json!(list));
    } else {
        r.extra.remove("assignee");
    }
}

/// The tasks the ids name, or Backlog.md's refusal naming the ones no task has.
fn dependencies_of(p: &Project, ids: &[String], own: Option<&str>) -> Result<Vec<String>, Value> {
    let missing: Vec<&str> = ids.iter().map(String::as_str).filter(|d| p.visible(d).is_none()).collect();
    if !missing.is_empty() {
        return Err(refused("VALIDATION_ERROR", view::missing_dependencies(&missing)));
    }
    let mut raw = Vec::new();
    for d in ids {
        let i = p.visible(d).unwrap_or_default();
        if let Some(own) = own.filter(|o| p.bids[i] == *o) {
            return Err(refused("VALIDATION_ERROR", view::self_dependency(own, d)));
        }
        raw.push(p.tasks[i].1.id.clone());
    }
    Ok(raw)
}

/// The next free number under `parent` (None: of the top-level tasks), from the store: one
/// more than any the list holds (archived tasks too) or has handed out, so Backlog.md's
/// rule (a number is never reused) holds however long the list and however many agents
/// create at once. A todo without a caller id counts as `TASK-<store id>`, as it shows.
fn next_id(p: &Project, parent: Option<&str>) -> String {
    let prefix = parent.map_or_else(|| "TASK-".to_string(), |p| format!("{p}."));
    let n = lists::next_number(&p.scope, &p.conversation, &prefix, parent.is_none(), false);
    format!("{prefix}{n}")
}

fn task_create(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let (status, custom) = files::status_from_word(given(args, "status").unwrap_or(files::STATUS_TODO));
    let parent = match given(args, "parentTaskId").filter(|s| !s.is_empty()) {
        None => None,
        Some(id) => {
            let canon = view::parse_id(id).unwrap_or_else(|| id.to_uppercase());
            let i = p.visible(id).ok_or_else(|| refused("VALIDATION_ERROR", view::missing_parent(&canon)))?;
            Some(i)
        }
    };
    let parent_bid = parent.map(|i| p.bids[i].clone());
    let id = next_id(&p, parent_bid.as_deref());
    let deps = dependencies_of(&p, &strings(args, "dependencies"), Some(&id))?;
    let due_us = given(args, "dueDate").filter(|s| !s.is_empty()).map(due).transpose()?;
    let ordinal = args.get("ordinal").and_then(Value::as_f64).unwrap_or_else(|| {
        p.tasks.iter().filter_map(|(_, r)| r.extra.get("ordinal").and_then(Value::as_f64)).fold(0.0, f64::max) + 1000.0
    });
    let mut r = Record {
        id: id.clone(),
        parent: parent.map(|i| p.tasks[i].1.id.clone()),
        title: str_arg(args, "title").trim().to_string(),
        description: given(args, "description").map(str::to_string).filter(|d| !d.is_empty()),
        status,
        priority: given(args, "priority").map(str::to_lowercase),
        labels: strings(args, "labels"),
        issue_type: given(args, "type").map(str::to_lowercase),
        due_us,
        outcome: given(args, "finalSummary").map(str::to_string).filter(|d| !d.is_empty()),
        dependencies: deps,
        created_us: Some(crate::time::now_us()),
        ..Record::default()
    };
    set_assignees(&mut r, strings(args, "assignee"));
    if custom {
        r.extra.insert("status".into(), json!(given(args, "status")));
    }
    r.extra.insert("ordinal".into(), json!(ordinal));
    if let Some(m) = given(args, "milestone").map(str::trim).filter(|m| !m.is_empty()) {
        r.extra.insert("milestone".into(), json!(m));
    }
    for key in ["references", "documentation", "modifiedFiles"] {
        set_extra_list(&mut r.extra, key, strings(args, key));
    }
    let item = |kind, text: String| ChecklistItem { kind, text, checked: false };
    r.checklist.extend(strings(args, "acceptanceCriteria").into_iter().map(|t| item(ChecklistKind::Acceptance, t)));
    r.checklist.extend(strings(args, "definitionOfDoneAdd").into_iter().map(|t| item(ChecklistKind::Done, t)));
    // the file keeps the name it is made with (Backlog.md does not rename it)
    let name = files::file_path(&r);
    r.extra.insert("file".into(), json!(name.rsplit('/').next().unwrap_or_default()));
    p.save(&r)?;
    let mut p = Project::read(scope)?;
    let i = p.place_of(&r).ok_or_else(|| refused("OPERATION_FAILED", "the task was not written"))?;
    // a create's result prints the parent by id only
    let mut text = p.text_of(i, false);
    if let (Some(pb), Some(pi)) = (parent_bid, parent) {
        text = text.replacen(&format!("Parent: {pb} - {}\n", p.tasks[pi].1.title), &format!("Parent: {pb}\n"), 1);
    }
    answer(text)
}

/// The lines of tasks for task_list and task_search.
fn line_of(p: &Project, i: usize) -> TaskLine {
    TaskLine::from_record(&p.shown(i))
}

fn task_list(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    if args.get("unassigned").and_then(Value::as_bool) == Some(true) && given(args, "assignee").is_some() {
        return Err(refused("VALIDATION_ERROR", view::UNASSIGNED_WITH_ASSIGNEE));
    }
    let status = given(args, "status").map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase());
    let types: Vec<String> = strings(args, "type").iter().map(|t| t.to_lowercase()).collect();
    let labels = strings(args, "labels");
    let search = given(args, "search").map(str::to_lowercase);
    let ready = args.get("ready").and_then(Value::as_bool).unwrap_or(false);
    let done = |raw: &str| p.tasks.iter().any(|(_, r)| r.id == raw && r.status == Status::Completed);
    let shown: Vec<TaskLine> = (0..p.tasks.len())
        .filter(|i| {
            let (_, r) = &p.tasks[*i];
            !r.archived && r.status != Status::Deferred
        })
        .filter(|i| {
            let r = &p.tasks[*i].1;
            let word = files::status_word(r).to_lowercase();
            status.as_ref().is_none_or(|s| *s == word)
                && (types.is_empty() || r.issue_type.as_ref().is_some_and(|t| types.contains(&t.to_lowercase())))
                && given(args, "assignee").is_none_or(|a| files::assignees(r).iter().any(|x| x == a))
                && (args.get("unassigned").and_then(Value::as_bool) != Some(true) || files::assignees(r).is_empty())
                && given(args, "milestone").is_none_or(|m| r.extra.get("milestone").and_then(Value::as_str) == Some(m))
                && labels.iter().all(|l| r.labels.contains(l))
                && search.as_ref().is_none_or(|q| {
                    r.title.to_lowercase().contains(q)
                        || r.description.as_deref().unwrap_or_default().to_lowercase().contains(q)
                })
                && (!ready || r.dependencies.iter().all(|d| done(d)))
        })
        .map(|i| line_of(&p, i))
        .collect();
    let limit = args.get("limit").and_then(Value::as_f64).map(|l| l as usize);
    let groups = view::list_groups(&shown, &view::DEFAULT_STATUSES, limit);
    Ok(json!({ "texts": groups }))
}

fn task_search(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let query = given(args, "query").unwrap_or_default();
    let types: Vec<String> = strings(args, "type").iter().map(|t| t.to_lowercase()).collect();
    let files_wanted: Vec<String> = strings(args, "modifiedFiles").iter().map(|f| f.to_lowercase()).collect();
    if query.trim().is_empty() && types.is_empty() && files_wanted.is_empty() {
        return Err(refused("VALIDATION_ERROR", view::SEARCH_NEEDS_QUERY));
    }
    let q = query.to_lowercase();
    let status = given(args, "status").map(str::to_lowercase);
    let priority = given(args, "priority").map(str::to_lowercase);
    let mut found: Vec<TaskLine> = (0..p.tasks.len())
        .filter(|i| !Project::in_archive(&p.tasks[*i].1))
        .filter(|i| {
            let r = &p.tasks[*i].1;
            let modified: Vec<String> = r
                .extra
                .get("modifiedFiles")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_lowercase).collect())
                .unwrap_or_default();
            (q.is_empty()
                || r.title.to_lowercase().contains(&q)
                || r.description.as_deref().unwrap_or_default().to_lowercase().contains(&q))
                && (types.is_empty() || r.issue_type.as_ref().is_some_and(|t| types.contains(&t.to_lowercase())))
                && files_wanted.iter().all(|f| modified.iter().any(|m| m.contains(f)))
                && status.as_ref().is_none_or(|s| files::status_word(r).to_lowercase() == *s)
                && priority.as_ref().is_none_or(|pr| r.priority.as_deref() == Some(pr.as_str()))
        })
        .map(|i| line_of(&p, i))
        .collect();
    found.truncate(args.get("limit").and_then(Value::as_f64).map_or(usize::MAX, |l| l as usize));
    answer(view::search_text(query, &found))
}

fn task_view(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let id = str_arg(args, "id");
    let i = p.visible(id).ok_or_else(|| refused("TASK_NOT_FOUND", view::task_not_found(id)))?;
    answer(p.text_of(i, true))
}

/// Applies the checkable-list edits of one list (`<prefix>Set|Add|Remove|Check|Uncheck`).
fn edit_checklist(r: &mut Record, args: &Value, kind: ChecklistKind, prefix: &str) -> Result<(), Value> {
    let mut items: Vec<ChecklistItem> = r.checklist.iter().filter(|i| i.kind == kind).cloned().collect();
    let others: Vec<ChecklistItem> = r.checklist.iter().filter(|i| i.kind != kind).cloned().collect();
    let indexes = |key: &str| -> Vec<usize> {
        args.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_f64).map(|n| n as usize).collect())
            .unwrap_or_default()
    };
    if let Some(set) = words(args, &format!("{prefix}Set")) {
        items = set.into_iter().map(|text| ChecklistItem { kind, text, checked: false }).collect();
    }
    items.extend(strings(args, &format!("{prefix}Add")).into_iter().map(|text| ChecklistItem {
        kind,
        text,
        checked: false,
    }));
    for (key, checked) in [(format!("{prefix}Check"), true), (format!("{prefix}Uncheck"), false)] {
        let asked = indexes(&key);
        let missing: Vec<usize> = asked.iter().copied().filter(|n| *n == 0 || *n > items.len()).collect();
        if !missing.is_empty() {
            return Err(refused("VALIDATION_ERROR", view::checklist_index_error(kind, &missing, items.len())));
        }
        for n in asked {
            items[n - 1].checked = checked;
        }
    }
    let mut remove = indexes(&format!("{prefix}Remove"));
    let missing: Vec<usize> = remove.iter().copied().filter(|n| *n == 0 || *n > items.len()).collect();
    if !missing.is_empty() {
        return Err(refused("VALIDATION_ERROR", view::checklist_index_error(kind, &missing, items.len())));
    }
    remove.sort_unstable();
    remove.dedup();
    for n in remove.into_iter().rev() {
        items.remove(n - 1);
    }
    r.checklist = match kind {
        ChecklistKind::Acceptance => items.into_iter().chain(others).collect(),
        ChecklistKind::Done => others.into_iter().chain(items).collect(),
    };
    Ok(())
}

/// A text section's edits: `<name>Set` (or `set_key`), `<name>Append` (joined with a blank
/// line), `<name>Clear`.
fn edit_text(field: &mut Option<String>, args: &Value, set_keys: &[&str], append: &str, clear: &str) {
    for key in set_keys {
        if let Some(s) = given(args, key) {
            *field = Some(s.to_string()).filter(|s| !s.is_empty());
        }
    }
    if args.get(clear).and_then(Value::as_bool) == Some(true) {
        *field = None;
    }
    let more = strings(args, append);
    if !more.is_empty() {
        let mut parts: Vec<String> = field.iter().filter(|s| !s.is_empty()).cloned().collect();
        parts.extend(more);
        *field = Some(parts.join("\n\n"));
    }
}

fn task_edit(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let id = str_arg(args, "id");
    // task_edit works on the tasks of the board only (not those completed or archived)
    let i = p.find(id).filter(|i| !p.tasks[*i].1.archived);
    let i = i.ok_or_else(|| refused("VALIDATION_ERROR", view::task_not_found(id)))?;
    let (todo, old) = &p.tasks[i];
    let bid = p.bids[i].clone();
    let mut r = old.clone();
    if let Some(t) = given(args, "title").map(str::trim).filter(|t| !t.is_empty()) {
        r.title = t.to_string();
    }
    if let Some(d) = given(args, "description") {
        r.description = Some(d.to_string()).filter(|d| !d.is_empty());
    }
    let mut new_status = None;
    if let Some(s) = given(args, "status") {
        let (status, custom) = files::status_from_word(s);
        if custom {
            r.extra.insert("status".into(), json!(s));
        } else {
            r.extra.remove("status");
        }
        new_status = Some(status);
    }
    match args.get("dueDate") {
        Some(Value::Null) => r.due_us = None,
        Some(Value::String(s)) if !s.is_empty() => r.due_us = Some(due(s)?),
        _ => {}
    }
    if let Some(pr) = given(args, "priority") {
        r.priority = Some(pr.to_lowercase());
    }
    if let Some(t) = given(args, "type") {
        r.issue_type = Some(t.to_lowercase());
    }
    if let Some(o) = args.get("ordinal").and_then(Value::as_f64) {
        r.extra.insert("ordinal".into(), json!(o));
    }
    match args.get("milestone") {
        Some(Value::Null) => {
            r.extra.remove("milestone");
        }
        Some(Value::String(m)) => {
            r.extra.insert("milestone".into(), json!(m.trim()));
        }
        _ => {}
    }
    if let Some(l) = words(args, "labels") {
        r.labels = l;
    }
    if let Some(a) = words(args, "assignee") {
        set_assignees(&mut r, a);
    }
    if let Some(d) = words(args, "dependencies") {
        r.dependencies = dependencies_of(&p, &d, Some(&bid))?;
    }
    for (key, add, remove) in [
        ("references", "addReferences", "removeReferences"),
        ("documentation", "addDocumentation", "removeDocumentation"),
    ] {
        let mut list: Vec<String> = r
            .extra
            .get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        if let Some(set) = words(args, key) {
            list = set;
        }
        for x in strings(args, add) {
            if !list.contains(&x) {
                list.push(x);
            }
        }
        let gone = strings(args, remove);
        list.retain(|x| !gone.contains(x));
        set_extra_list(&mut r.extra, key, list);
    }
    if let Some(m) = words(args, "modifiedFiles") {
        set_extra_list(&mut r.extra, "modifiedFiles", m);
    }
    edit_text(&mut r.notes, args, &["notesSet", "implementationNotes"], "notesAppend", "notesClear");
    edit_text(&mut r.plan, args, &["planSet"], "planAppend", "planClear");
    edit_text(&mut r.outcome, args, &["finalSummary"], "finalSummaryAppend", "finalSummaryClear");
    edit_checklist(&mut r, args, ChecklistKind::Acceptance, "acceptanceCriteria")?;
    edit_checklist(&mut r, args, ChecklistKind::Done, "definitionOfDone")?;
    let author = given(args, "commentAuthor").map(str::to_string).filter(|a| !a.is_empty());
    for body in strings(args, "commentsAppend") {
        r.comments.push(Comment { author: author.clone(), created_us: 0, body });
    }
    // In Progress is the agent's claim, Done finishes it: decided on the task locked
    match new_status {
        Some(Status::InProgress) if scope.agent.is_some() => {
            // Backlog.md moves a Done task back to In Progress: reopened, then claimed
            if todo.status.is_terminal() {
                let reopen = Change { status: Some(Status::Pending), via_reopen: true, ..Change::default() };
                single::change(scope, Find::Anywhere, todo.id, reopen).map_err(|e| failed(&p.names(), e))?;
            }
            claiming::claim(scope, Some(todo.id), None).map_err(|e| failed(&p.names(), e))?;
            r.status = Status::InProgress;
        }
        Some(s @ (Status::Completed | Status::Canceled)) if old.status == Status::InProgress => {
            match claiming::finish(scope, todo.id, None, s, None) {
                Ok(_) | Err(Error::Claim(Refusal::NotOpen { .. })) => {}
                Err(e) => return Err(failed(&p.names(), e)),
            }
            r.status = s;
        }
        Some(s) => r.status = s,
        None => {}
    }
    p.save(&r)?;
    let p = Project::read(scope)?;
    let i = p.find(&bid).ok_or_else(|| refused("OPERATION_FAILED", "the task was not written"))?;
    answer(p.text_of(i, false))
}

fn task_complete(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let id = str_arg(args, "id");
    let i = p.find(id).ok_or_else(|| refused("TASK_NOT_FOUND", view::task_not_found(id)))?;
    let old = &p.tasks[i].1;
    if old.archived {
        return Err(refused("OPERATION_FAILED", view::complete_failed(id)));
    }
    let bid = p.bids[i].clone();
    if old.status != Status::Completed {
        return Err(refused("VALIDATION_ERROR", view::not_done(&bid)));
    }
    let mut r = old.clone();
    r.archived = true;
    r.extra.insert("folder".into(), json!("completed"));
    p.save(&r)?;
    let p = Project::read(scope)?;
    let i = p.find(&bid).ok_or_else(|| refused("OPERATION_FAILED", "the task was not written"))?;
    answer(format!("Completed task {bid}.\n\n{}", p.text_of(i, false)))
}

fn task_archive(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let id = str_arg(args, "id");
    let i = p.visible(id).ok_or_else(|| refused("TASK_NOT_FOUND", view::task_not_found(id)))?;
    // the result prints the task as it was, at the path it had
    let before = p.text_of(i, false);
    let (todo, old) = &p.tasks[i];
    if todo.status == Status::InProgress {
        if let Err(e) = claiming::release(scope, todo.id, None) {
            if !matches!(e, Error::Claim(Refusal::NotClaimed { .. } | Refusal::NoAgent)) {
                return Err(failed(&p.names(), e));
            }
        }
    }
    let mut r = old.clone();
    if !r.status.is_terminal() {
        r.extra.insert("archived_status".into(), json!(files::status_word(old)));
        r.status = Status::Canceled;
    }
    r.archived = true;
    r.extra.insert("folder".into(), json!("archive/tasks"));
    p.save(&r)?;
    answer(before)
}

/// Backlog.md's tool descriptions and input schemas, as its server lists them.
static LISTED: &super::Listed = &[
    (
        "task_create",
        "Create a new task using Backlog.md",
        r#"{"type":"object","properties":{"title":{"type":"string","minLength":1,"maxLength":200},"description":{"type":"string","maxLength":10000},"status":{"type":"string","maxLength":100,"enum":["Draft","To Do","In Progress","Done"],"enumCaseInsensitive":true,"enumNormalizeWhitespace":true,"default":"To Do","description":"Status value (case-insensitive). Valid values: Draft, To Do, In Progress, Done"},"dueDate":{"type":"string","maxLength":64,"description":"Optional task due date. Use a date such as 2026-08-10. A due date names a day and carries no time."},"priority":{"type":"string","maxLength":50,"enum":["High","Medium","Low"],"enumCaseInsensitive":true,"description":"Optional task priority (case-insensitive). Valid values: High, Medium, Low"},"type":{"type":"string","maxLength":50,"enum":["bug","feature","enhancement","task","chore","docs","spike"],"enumCaseInsensitive":true,"description":"Optional task type (case-insensitive). Valid values: bug, feature, enhancement, task, chore, docs, spike"},"ordinal":{"type":"number","minimum":0,"description":"Optional non-negative ordering value for manual task ordering. Lower values sort earlier. Prefer spaced integers such as 1000, 2000, 3000 to leave room for inserts."},"milestone":{"type":"string","minLength":1,"maxLength":100,"description":"Optional milestone label (trimmed)."},"labels":{"type":"array","items":{"type":"string","maxLength":50}},"assignee":{"type":"array","items":{"type":"string","maxLength":100},"description":"Optional assignees. When omitted, the project's configured defaultAssignee applies; pass an empty array to leave the task unassigned."},"dependencies":{"type":"array","items":{"type":"string","maxLength":50}},"references":{"type":"array","items":{"type":"string","maxLength":500},"description":"Reference URLs or file paths related to this task"},"documentation":{"type":"array","items":{"type":"string","maxLength":500},"description":"Documentation URLs or file paths for understanding this task"},"modifiedFiles":{"type":"array","items":{"type":"string","maxLength":500},"description":"Project-root-relative file paths modified by this task"},"finalSummary":{"type":"string","maxLength":20000,"description":"Final summary for PR-style completion notes. Write this only when the task is complete."},"acceptanceCriteria":{"type":"array","items":{"type":"string","maxLength":500}},"definitionOfDoneAdd":{"type":"array","items":{"type":"string","maxLength":500},"description":"Task-specific Definition of Done items to append for this task only. Do not copy project defaults here."},"disableDefinitionOfDoneDefaults":{"type":"boolean","description":"Disable project-level Definition of Done defaults for this task creation. Use definition_of_done_defaults_upsert to change project defaults."},"parentTaskId":{"type":"string","maxLength":50,"description":"Existing parent task ID for a subtask. Do not pass milestone IDs here; use milestone instead."}},"required":["title"],"additionalProperties":false}"#,
    ),
    (
        "task_list",
        "List Backlog.md tasks with optional filtering by status, type, project, assignee (or unassigned: true for tasks with no assignee), milestone, labels, and search",
        r#"{"type":"object","properties":{"status":{"type":"string","maxLength":100},"type":{"type":"array","items":{"type":"string","maxLength":50,"enum":["bug","feature","enhancement","task","chore","docs","spike"],"enumCaseInsensitive":true,"description":"Optional task type (case-insensitive). Valid values: bug, feature, enhancement, task, chore, docs, spike"},"maxItems":50,"description":"Filter tasks by one or more configured task types (OR semantics)."},"assignee":{"type":"string","maxLength":100},"unassigned":{"type":"boolean","description":"When true, only return tasks with no assignee. Cannot be combined with assignee."},"milestone":{"type":"string","maxLength":100},"labels":{"type":"array","items":{"type":"string","maxLength":50}},"search":{"type":"string","maxLength":200},"ready":{"type":"boolean","description":"When true, filter tasks that are ready for work (all dependencies satisfied/completed)."},"limit":{"type":"number","minimum":1,"maximum":1000}},"required":[],"additionalProperties":false}"#,
    ),
    (
        "task_search",
        "Search Backlog.md tasks by title, description, task type, project, and modified file path filters",
        r#"{"type":"object","properties":{"query":{"type":"string","maxLength":200},"status":{"type":"string","maxLength":100},"type":{"type":"array","items":{"type":"string","maxLength":50,"enum":["bug","feature","enhancement","task","chore","docs","spike"],"enumCaseInsensitive":true,"description":"Optional task type (case-insensitive). Valid values: bug, feature, enhancement, task, chore, docs, spike"},"maxItems":50,"description":"Filter tasks by one or more configured task types (OR semantics)."},"priority":{"type":"string","maxLength":50,"enum":["High","Medium","Low"],"enumCaseInsensitive":true,"description":"Optional task priority (case-insensitive). Valid values: High, Medium, Low"},"modifiedFiles":{"type":"array","items":{"type":"string","maxLength":500},"description":"Filter tasks by case-insensitive substring match against modified file paths"},"limit":{"type":"number","minimum":1,"maximum":100}},"required":[],"additionalProperties":false}"#,
    ),
    (
        "task_edit",
        "Edit a Backlog.md task, including metadata (status, priority, type, project), implementation plan/notes, dependencies, acceptance criteria, and task-specific Definition of Done items",
        r#"{"type":"object","properties":{"id":{"type":"string","minLength":1,"maxLength":50},"title":{"type":"string","maxLength":200},"description":{"type":"string","maxLength":10000},"status":{"type":"string","maxLength":100,"enum":["Draft","To Do","In Progress","Done"],"enumCaseInsensitive":true,"enumNormalizeWhitespace":true,"default":"To Do","description":"Status value (case-insensitive). Valid values: Draft, To Do, In Progress, Done"},"dueDate":{"type":["string","null"],"maxLength":64,"description":"Set the task due date, or pass null to clear it. Use a date such as 2026-08-10. A due date names a day and carries no time."},"priority":{"type":"string","maxLength":50,"enum":["High","Medium","Low"],"enumCaseInsensitive":true,"description":"Optional task priority (case-insensitive). Valid values: High, Medium, Low"},"type":{"type":"string","maxLength":50,"enum":["bug","feature","enhancement","task","chore","docs","spike"],"enumCaseInsensitive":true,"description":"Optional task type (case-insensitive). Valid values: bug, feature, enhancement, task, chore, docs, spike"},"ordinal":{"type":"number","minimum":0,"description":"Set task ordinal for manual ordering. Lower values sort earlier. Prefer spaced integers such as 1000, 2000, 3000 to leave room for inserts."},"milestone":{"type":"string","minLength":1,"maxLength":100,"description":"Set milestone label (string) or clear it (null)."},"labels":{"type":"array","items":{"type":"string","maxLength":50}},"assignee":{"type":"array","items":{"type":"string","maxLength":100},"description":"Replace all assignees. Pass an empty array to clear them."},"dependencies":{"type":"array","items":{"type":"string","maxLength":50}},"references":{"type":"array","items":{"type":"string","maxLength":500},"description":"Set reference URLs or file paths (replaces existing)"},"addReferences":{"type":"array","items":{"type":"string","maxLength":500},"description":"Add reference URLs or file paths"},"removeReferences":{"type":"array","items":{"type":"string","maxLength":500},"description":"Remove reference URLs or file paths"},"documentation":{"type":"array","items":{"type":"string","maxLength":500},"description":"Set documentation URLs or file paths (replaces existing)"},"addDocumentation":{"type":"array","items":{"type":"string","maxLength":500},"description":"Add documentation URLs or file paths"},"removeDocumentation":{"type":"array","items":{"type":"string","maxLength":500},"description":"Remove documentation URLs or file paths"},"modifiedFiles":{"type":"array","items":{"type":"string","maxLength":500},"description":"Set project-root-relative modified file paths (replaces existing)"},"implementationNotes":{"type":"string","maxLength":10000},"finalSummary":{"type":"string","maxLength":20000,"description":"Final summary for PR-style completion notes. Write this only when the task is complete."},"finalSummaryAppend":{"type":"array","items":{"type":"string","maxLength":5000},"maxItems":20},"finalSummaryClear":{"type":"boolean"},"notesSet":{"type":"string","maxLength":20000},"notesAppend":{"type":"array","items":{"type":"string","maxLength":5000},"maxItems":20},"notesClear":{"type":"boolean"},"commentsAppend":{"type":"array","items":{"type":"string","maxLength":5000},"maxItems":20,"description":"Append comments to the task. Comment bodies may contain Markdown, but standalone '---' lines are reserved as comment delimiters."},"commentAuthor":{"type":"string","maxLength":100,"description":"Optional author label to store with appended comments."},"planSet":{"type":"string","maxLength":20000},"planAppend":{"type":"array","items":{"type":"string","maxLength":5000},"maxItems":20},"planClear":{"type":"boolean"},"acceptanceCriteriaSet":{"type":"array","items":{"type":"string","maxLength":500},"maxItems":50},"acceptanceCriteriaAdd":{"type":"array","items":{"type":"string","maxLength":500},"maxItems":50},"acceptanceCriteriaRemove":{"type":"array","items":{"type":"number","minimum":1},"maxItems":50},"acceptanceCriteriaCheck":{"type":"array","items":{"type":"number","minimum":1},"maxItems":50},"acceptanceCriteriaUncheck":{"type":"array","items":{"type":"number","minimum":1},"maxItems":50},"definitionOfDoneAdd":{"type":"array","items":{"type":"string","maxLength":500},"maxItems":50,"description":"Task-specific Definition of Done items to add for this task only. Use definition_of_done_defaults_upsert to change project defaults."},"definitionOfDoneRemove":{"type":"array","items":{"type":"number","minimum":1},"maxItems":50,"description":"Remove task-specific Definition of Done items by 1-based index on this task."},"definitionOfDoneCheck":{"type":"array","items":{"type":"number","minimum":1},"maxItems":50,"description":"Mark task-specific Definition of Done items as complete by 1-based index on this task."},"definitionOfDoneUncheck":{"type":"array","items":{"type":"number","minimum":1},"maxItems":50,"description":"Mark task-specific Definition of Done items as incomplete by 1-based index on this task."}},"required":["id"],"additionalProperties":false}"#,
    ),
    (
        "task_view",
        "View a Backlog.md task details",
        r#"{"type":"object","properties":{"id":{"type":"string","minLength":1,"maxLength":50}},"required":["id"],"additionalProperties":false}"#,
    ),
    (
        "task_archive",
        "Archive a Backlog.md task",
        r#"{"type":"object","properties":{"id":{"type":"string","minLength":1,"maxLength":50}},"required":["id"],"additionalProperties":false}"#,
    ),
    (
        "task_complete",
        "Complete a Backlog.md task (move it to the completed folder)",
        r#"{"type":"object","properties":{"id":{"type":"string","minLength":1,"maxLength":50}},"required":["id"],"additionalProperties":false}"#,
    ),
];

macro_rules! tools {
    ($($static:ident $name:literal $run:ident $writes:literal),* $(,)?) => {
        $(
            static $static: Tool = Tool {
                name: $name,
                description: super::listed_description(LISTED, $name),
                input_schema: || super::listed_schema(LISTED, $name),
                precheck: Some(|args| precheck($name, args)),
                run: $run,
                writes: $writes,
                text: Some(text),
                accepts: Some(|| json!({"type": "object"})),
            };
        )*
    };
}

tools! {
    TASK_CREATE "task_create" task_create true,
    TASK_LIST "task_list" task_list false,
    TASK_SEARCH "task_search" task_search false,
    TASK_EDIT "task_edit" task_edit true,
    TASK_VIEW "task_view" task_view false,
    TASK_ARCHIVE "task_archive" task_archive true,
    TASK_COMPLETE "task_complete" task_complete true,
}

/// Backlog.md's own check of a tool's arguments (before it runs): `Validation failed:
/// <detail>` with the first detail, as its server words them.
fn precheck(name: &str, args: &Value) -> Option<Value> {
    let schema = super::listed_schema(LISTED, name);
    let detail = view_check(&schema, args)?;
    Some(refused("VALIDATION_ERROR", view::validation_failed(&detail)))
}

/// The first thing `args` breaks of `schema`, in Backlog.md's words.
fn view_check(schema: &Value, args: &Value) -> Option<String> {
    let props = schema.get("properties")?.as_object()?;
    let Some(obj) = args.as_object() else { return Some("Arguments must be an object".into()) };
    if let Some(unknown) = obj.keys().find(|k| !props.contains_key(*k)) {
        return Some(format!("Unknown field '{unknown}' is not allowed"));
    }
    for req in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        if obj.get(req).is_none_or(Value::is_null) {
            return Some(format!("Required field '{req}' is missing or null"));
        }
    }
    for (key, value) in obj {
        let p = &props[key];
        let types: Vec<&str> = match p.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let kind = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        if !types.is_empty() && !types.contains(&kind) {
            let want = if types[0] == "array" { "an array".to_string() } else { format!("a {}", types[0]) };
            return Some(format!("Field '{key}' must be {want}"));
        }
        if let Value::String(s) = value {
            if let Some(min) = p.get("minLength").and_then(Value::as_u64).filter(|m| (s.chars().count() as u64) < *m) {
                return Some(format!("Field '{key}' must be at least {min} characters long"));
            }
            if let Some(max) = p.get("maxLength").and_then(Value::as_u64).filter(|m| (s.chars().count() as u64) > *m) {
                return Some(format!("Field '{key}' must be at most {max} characters long"));
            }
            if let Some(options) = p.get("enum").and_then(Value::as_array) {
                let norm = |x: &str| x.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
                if !options.iter().filter_map(Value::as_str).any(|o| norm(o) == norm(s)) {
                    let list: Vec<&str> = options.iter().filter_map(Value::as_str).collect();
                    return Some(format!("Field '{key}' must be one of: {}", list.join(", ")));
                }
            }
        }
        if let (Value::Array(items), Some(item)) = (value, p.get("items")) {
            for (n, v) in items.iter().enumerate() {
                if let (Some(min), Some(x)) = (item.get("minimum").and_then(Value::as_f64), v.as_f64()) {
                    if x < min {
                        return Some(format!("Field '{key}[{n}]' must be at least {min}"));
                    }
                }
            }
        }
    }
    None
}

/// A project's tasks as task_view prints each, in list order (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    let scope = Scope { conversation: Some(conv.to_string()), ..scope.clone() };
    let Ok(p) = Project::read(&scope) else { return json!([]) };
    (0..p.tasks.len()).filter(|i| !Project::in_archive(&p.tasks[*i].1)).map(|i| json!(p.text_of(i, true))).collect()
}

/// The backlog dialect.
pub static DIALECT: super::Dialect = super::Dialect {
    name: "backlog",
    aliases: &[],
    runtime: "Backlog.md",
    description: "a task tracker's tools: tasks with acceptance criteria, definition of done, plan, notes and comments",
    tools: &[&TASK_CREATE, &TASK_LIST, &TASK_SEARCH, &TASK_EDIT, &TASK_VIEW, &TASK_ARCHIVE, &TASK_COMPLETE],
    list_as: Some(super::ListAs {
        shape: "its tasks as task_view prints each: `[\"File: …\\n\\nTask TASK-1 - …\"]`",
        read: list_as,
    }),
};
