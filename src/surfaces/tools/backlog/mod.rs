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

use super::taskmaster::listed_tools;
use super::dialect::{Answer, Tool};
use super::helpers::{error, error_message, strings};
use crate::backlog_view::{self as view, GraphTask, Link, TaskView};
use crate::claims::Refusal;
use crate::error::named_ids;
use crate::error::Error;
use crate::formats::backlog as files;
use crate::interchange::Record;
use crate::ops::records;
use crate::ops::{lists, Scope};
use crate::status::Status;
use crate::todo::Todo;

mod edit;
mod listed;
mod read;
mod validation;
mod write;

use edit::task_edit;
use listed::LISTED;
use read::{task_list, task_search, task_view};
use validation::precheck;
use write::{task_archive, task_complete, task_create};

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
                true => super::helpers::name_a_list(),
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

listed_tools! {
    precheck: precheck, accepts: Some(|| json!({"type": "object"}));
    TASK_CREATE "task_create" task_create true,
    TASK_LIST "task_list" task_list false,
    TASK_SEARCH "task_search" task_search false,
    TASK_EDIT "task_edit" task_edit true,
    TASK_VIEW "task_view" task_view false,
    TASK_ARCHIVE "task_archive" task_archive true,
    TASK_COMPLETE "task_complete" task_complete true,
}

/// A project's tasks as task_view prints each, in list order (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    let scope = Scope { conversation: Some(conv.to_string()), ..scope.clone() };
    let Ok(p) = Project::read(&scope) else { return json!([]) };
    (0..p.tasks.len()).filter(|i| !Project::in_archive(&p.tasks[*i].1)).map(|i| json!(p.text_of(i, true))).collect()
}

/// The backlog dialect.
pub static DIALECT: super::dialect::Dialect = super::dialect::Dialect {
    name: "backlog",
    aliases: &[],
    runtime: "Backlog.md",
    description: "a task tracker's tools: tasks with acceptance criteria, definition of done, plan, notes and comments",
    tools: &[&TASK_CREATE, &TASK_LIST, &TASK_SEARCH, &TASK_EDIT, &TASK_VIEW, &TASK_ARCHIVE, &TASK_COMPLETE],
    list_as: Some(super::dialect::ListAs {
        shape: "its tasks as task_view prints each: `[\"File: …\\n\\nTask TASK-1 - …\"]`",
        read: list_as,
    }),
};
