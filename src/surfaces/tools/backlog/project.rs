//! A Backlog.md project as its tools see it: the list's tasks (`Project`), how they print, and what the tools share (refusals, due dates, assignees, dependencies, the next task number).

use super::super::dialect::Answer;
use super::super::helpers::{error, error_message, strings};
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
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The list's tasks, with what the tools print them with.
pub(super) struct Project {
    /// where the files are printed (`/home/me/app` of `project:/home/me/app`; else `.`)
    pub(super) root: String,
    pub(super) scope: Scope,
    pub(super) conversation: String,
    pub(super) tasks: Vec<(Todo, Record)>,
    /// each task's Backlog.md id (`bid`), by its place in `tasks`
    pub(super) bids: Vec<String>,
    /// each task's place in `tasks` by its record's id (a todo's caller id, else store id)
    pub(super) by_raw: HashMap<String, usize>,
}

/// A refusal as Backlog.md gives it (its text; the code in the structured content).
pub(super) fn refused(code: &str, message: impl Into<String>) -> Value {
    error(code, message)
}

pub(super) fn text(out: &Value) -> String {
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

pub(super) fn answer(text: String) -> Answer {
    Ok(json!({ "text": text }))
}

impl Project {
    pub(super) fn read(scope: &Scope) -> Result<Project, Value> {
        let conversation = scope.conv().ok_or_else(|| {
            let how = match crate::session::via_http() {
                true => super::super::helpers::name_a_list(),
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
    pub(super) fn bid(t: &Todo, r: &Record) -> String {
        view::parse_id(&r.id).unwrap_or_else(|| format!("TASK-{}", t.id))
    }

    /// The task an id names (`task-1`, `TASK-1`, `1`), archived ones too.
    pub(super) fn find(&self, given: &str) -> Option<usize> {
        let wanted = view::parse_id(given)?;
        self.bids.iter().position(|b| *b == wanted)
    }

    /// Whether a task is in Backlog.md's archive (not found by its tools).
    pub(super) fn in_archive(r: &Record) -> bool {
        r.archived && files::folder_of(r).starts_with("archive")
    }

    /// The task `given` names that Backlog.md's tools find (not archived away).
    pub(super) fn visible(&self, given: &str) -> Option<usize> {
        self.find(given).filter(|i| !Self::in_archive(&self.tasks[*i].1))
    }

    /// A record as Backlog.md shows it: its ids (its own, its parent's, its dependencies')
    /// Backlog.md's.
    pub(super) fn shown(&self, i: usize) -> Record {
        let r = &self.tasks[i].1;
        let by_raw = |raw: &str| self.by_raw.get(raw).map_or_else(|| raw.to_string(), |j| self.bids[*j].clone());
        let mut shown = r.clone();
        shown.id = self.bids[i].clone();
        shown.parent = r.parent.as_deref().map(by_raw);
        shown.dependencies = r.dependencies.iter().map(|d| by_raw(d)).collect();
        shown
    }

    /// The task's text: `in_view` as task_view prints it (subtasks, the parent's title).
    pub(super) fn text_of(&self, i: usize, in_view: bool) -> String {
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
    pub(super) fn save(self, r: &Record) -> Result<(), Value> {
        let conv = self.conversation.clone();
        let names = self.names();
        let read = HashMap::from([(conv.clone(), self.tasks)]);
        records::import_onto(&self.scope, std::slice::from_ref(r), &|_| conv.clone(), read)
            .map(|_| ())
            .map_err(|e| failed(&names, e))
    }

    /// Where task `r`, just written, is in the list: a list longer than its read shows holds
    /// it past the cut, so it is added as written (the answer shows what was stored).
    pub(super) fn place_of(&mut self, r: &Record) -> Option<usize> {
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
    pub(super) fn names(&self) -> HashMap<i64, String> {
        self.tasks.iter().zip(&self.bids).map(|((t, _), b)| (t.id, b.clone())).collect()
    }
}

/// An operation's refusal in Backlog.md's shape, naming tasks by their Backlog.md ids
/// (`names`), never by the store's.
pub(super) fn failed(names: &HashMap<i64, String>, e: Error) -> Value {
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
pub(super) fn due(s: &str) -> Result<i64, Value> {
    let day = s.get(..10).and_then(files::parse_date);
    match day {
        Some(d) if s.len() == 10 || s[10..].starts_with(['T', ' ']) => Ok(d),
        _ => Err(refused("VALIDATION_ERROR", view::DUE_DATE_INVALID)),
    }
}

pub(super) fn words(args: &Value, key: &str) -> Option<Vec<String>> {
    args.get(key).and_then(Value::as_array).map(|_| strings(args, key))
}

pub(super) fn given<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// Sets the list-valued extras a create or an edit names.
pub(super) fn set_extra_list(extra: &mut Map<String, Value>, key: &str, items: Vec<String>) {
    if items.is_empty() {
        extra.remove(key);
    } else {
        extra.insert(key.into(), json!(items));
    }
}

pub(super) fn set_assignees(r: &mut Record, list: Vec<String>) {
    r.assignee = list.first().cloned();
    if list.len() > 1 {
        r.extra.insert("assignee".into(), json!(list));
    } else {
        r.extra.remove("assignee");
    }
}

/// The tasks the ids name, or Backlog.md's refusal naming the ones no task has.
pub(super) fn dependencies_of(p: &Project, ids: &[String], own: Option<&str>) -> Result<Vec<String>, Value> {
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
pub(super) fn next_id(p: &Project, parent: Option<&str>) -> String {
    let prefix = parent.map_or_else(|| "TASK-".to_string(), |p| format!("{p}."));
    let n = lists::next_number(&p.scope, &p.conversation, &prefix, parent.is_none(), false);
    format!("{prefix}{n}")
}
