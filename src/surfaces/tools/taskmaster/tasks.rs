//! A Task Master project as its tools see it: its tags' lists, a tag's tasks (`Tasks`) with their subtasks and dependencies, Task Master's envelope and refusals, and its ids.

use super::super::dialect::Answer;
use super::super::helpers::{caller_id, error, error_message, js_pretty, str_arg};
use crate::formats::taskmaster::status_word;
use crate::ops::whole_list::{self, Kept};
use crate::ops::Scope;
use crate::status::Status;
use crate::store;
use crate::todo::Todo;
use serde_json::{json, Value};
use std::collections::HashMap;

/// The release of task-master-ai whose tools these are.
pub(super) const VERSION: &str = "0.43.1";
pub(super) const NAME: &str = "task-master-ai";
/// The property of a tag's list that says the tag exists (its description, when it was made).
pub(super) const TAG: &str = "taskmaster_tag";
/// The property of a project's list (its `master` tag) that names its current tag.
pub(super) const CURRENT_TAG: &str = "taskmaster_current_tag";
/// The most tags `list_tags` reads.
pub(super) const MAX_TAGS: i64 = 1000;

/// The key orders of Task Master's objects (see `js_pretty`): its newer tools' tasks
/// (`get_tasks`, under `tasks`) are built in another order than its older tools' (`get_task`,
/// `next_task`, results of writes).
pub(super) const MODELS: &[super::super::helpers::JsModel] = &[
    ("", &["data", "version", "tag"]),
    ("", &["version", "name"]),
    ("", &["id", "title", "status", "priority", "dependencies", "parentId"]),
    (
        "tasks",
        &[
            "id",
            "title",
            "description",
            "status",
            "priority",
            "dependencies",
            "details",
            "testStrategy",
            "subtasks",
            "metadata",
        ],
    ),
    ("", &["id", "title", "description", "details", "status", "dependencies", "parentTaskId", "metadata"]),
    (
        "",
        &[
            "id",
            "title",
            "description",
            "details",
            "testStrategy",
            "status",
            "dependencies",
            "priority",
            "subtasks",
            "metadata",
        ],
    ),
    ("", &["tasks", "filter", "stats"]),
    (
        "",
        &[
            "total",
            "completed",
            "inProgress",
            "pending",
            "blocked",
            "deferred",
            "cancelled",
            "review",
            "completionPercentage",
            "subtasks",
        ],
    ),
    ("", &["message", "nextTask"]),
    ("", &["nextTask", "isSubtask", "nextSteps"]),
    ("", &["message", "tasks"]),
    ("", &["success", "oldStatus", "newStatus", "taskId"]),
    ("", &["taskId", "message", "telemetryData", "tagInfo"]),
    ("", &["message", "subtask"]),
    ("", &["message", "subtaskId", "parentId", "subtask", "tasksPath", "useResearch", "telemetryData", "tagInfo"]),
    ("", &["totalTasks", "successful", "failed", "removedTasks", "message", "tasksPath", "tag"]),
    ("", &["message", "taskId", "dependencyId"]),
    ("", &["message", "tasksPath"]),
    ("", &["tags", "currentTag", "totalTags", "message"]),
    (
        "",
        &[
            "name",
            "isCurrent",
            "taskCount",
            "completedTasks",
            "statusBreakdown",
            "subtaskCounts",
            "created",
            "description",
        ],
    ),
    ("", &["totalSubtasks", "subtasksByStatus"]),
    ("", &["tagName", "created", "tasksCopied", "sourceTag", "description", "message"]),
    ("", &["tagName", "deleted", "tasksDeleted", "wasCurrentTag", "switchedToMaster", "message"]),
    ("", &["tagName", "switched", "previousTag", "taskCount", "message"]),
    ("", &["oldName", "newName", "renamed", "taskCount", "wasCurrentTag", "message"]),
    ("", &["sourceName", "targetName", "copied", "description", "message"]),
];

/// A result: Task Master's envelope around `data`.
pub(super) fn ok(data: Value, tag: &str) -> Answer {
    // `data` moved in, not copied as `json!` would copy it: a tag's tasks can be a megabyte
    let mut envelope = json!({"version": {"version": VERSION, "name": NAME}, "tag": tag});
    envelope["data"] = data;
    Ok(envelope)
}

/// A refusal as Task Master words it (`Error: …`, its version and name, and the tag when
/// one is known).
pub(super) fn refused(message: impl std::fmt::Display, tag: Option<&str>) -> Value {
    let tag = tag.map(|t| format!("\nCurrent Tag: {t}")).unwrap_or_default();
    error("refused", format!("Error: {message}\nVersion: {VERSION}\nName: {NAME}{tag}"))
}

/// The text the model reads: the envelope as Node writes it, or a refusal's words.
pub(super) fn text(out: &Value) -> String {
    match error_message(out) {
        Some(m) => m.to_string(),
        None => js_pretty(out, MODELS),
    }
}

/// The project a call works on: its root, its tag (the call's `tag`, else the project's
/// current one, else `master`), and the scope of that tag's list.
pub(super) struct Project {
    pub(super) root: String,
    pub(super) tag: String,
    pub(super) scope: Scope,
}

/// The list of a project's tag: the `master` tag's is the project's list, `project:<root>`
/// (the list the connection is bound to instead, when it is bound: `session::bound_list`),
/// another tag's that list's name and `#<tag>`.
pub(super) fn list_name(root: &str, tag: &str) -> String {
    let project = crate::session::bound_list().unwrap_or_else(|| format!("project:{root}"));
    if tag == "master" {
        project
    } else {
        format!("{project}#{tag}")
    }
}

pub(super) fn root_of(args: &Value) -> String {
    let root = str_arg(args, "projectRoot").trim();
    match root.trim_end_matches('/') {
        "" if root.starts_with('/') => "/".to_string(),
        r => r.to_string(),
    }
}

/// The project's current tag (`use_tag`'s), else `master`.
pub(super) fn current_tag(scope: &Scope, root: &str) -> String {
    store::lists::properties(&scope.tenant, &list_name(root, "master"))
        .get(CURRENT_TAG)
        .and_then(Value::as_str)
        .unwrap_or("master")
        .to_string()
}

pub(super) fn project(scope: &Scope, args: &Value) -> Project {
    let root = root_of(args);
    let tag = match args.get("tag").and_then(Value::as_str).filter(|t| !t.is_empty()) {
        Some(t) => t.to_string(),
        None => current_tag(scope, &root),
    };
    let scope = Scope { conversation: Some(list_name(&root, &tag)), ..scope.clone() };
    Project { root, tag, scope }
}

/// Where Task Master would keep the project's tasks (its results name the file).
pub(super) fn tasks_path(root: &str) -> String {
    format!("{root}/.taskmaster/tasks/tasks.json")
}

/// `add_task`'s priority: high, medium or low (anything else is medium, as Task Master
/// takes it).
pub(super) fn priority_of(word: Option<&str>) -> &'static str {
    match word.map(str::to_lowercase).as_deref() {
        Some("high") => "high",
        Some("low") => "low",
        _ => "medium",
    }
}

/// A top-level task's number (a Task Master id is a number; a todo's store id shows as one).
pub(super) fn number(id: &str) -> Option<i64> {
    id.parse::<i64>().ok().filter(|n| *n > 0)
}

/// An id as Task Master writes it: a number as a number (as text in its newer tools'
/// tasks, `as_text`), any other id (a subtask's `5.2`) as text.
pub(super) fn tm_id(id: &str, as_text: bool) -> Value {
    match number(id) {
        Some(n) if !as_text => json!(n),
        _ => json!(id),
    }
}

/// A tag's tasks: its todos, top-level ones in list order each with its subtasks, and the
/// dependencies among them.
pub(super) struct Tasks {
    pub(super) todos: Vec<Todo>,
    /// (todo, waits for, the awaited one is open)
    pub(super) edges: Vec<(i64, i64, bool)>,
    /// the top-level tasks, as indexes into `todos`, in list order
    pub(super) tops: Vec<usize>,
    /// each top-level task's subtasks (by its index), in list order
    pub(super) subs: HashMap<usize, Vec<usize>>,
    /// each subtask's task (by their indexes)
    pub(super) parents: HashMap<usize, usize>,
    /// what each todo waits for, by store id, in the edges' order
    pub(super) waits: HashMap<i64, Vec<i64>>,
    /// each todo by its Task Master id
    pub(super) by_tm: HashMap<String, usize>,
    /// each todo by its store id
    pub(super) at: HashMap<i64, usize>,
    /// the claims on them: holder and whether the lease runs
    pub(super) claims: HashMap<i64, (String, bool)>,
}

impl Tasks {
    pub(super) fn read(scope: &Scope) -> Tasks {
        let todos = whole_list::stored(scope, scope.conv().unwrap_or_default(), Kept::All);
        let ids: Vec<i64> = todos.iter().map(|t| t.id).collect();
        let edges = if ids.is_empty() { Vec::new() } else { store::edges::touching(&scope.tenant, &ids) };
        let claims =
            store::read::claims(&scope.tenant, &ids).into_iter().map(|(id, h, live)| (id, (h, live))).collect();
        let mut by_tm: HashMap<String, usize> = HashMap::new();
        for (i, t) in todos.iter().enumerate().filter(|(_, t)| t.external_id.is_none()) {
            by_tm.insert(t.id.to_string(), i);
        }
        for (i, t) in todos.iter().enumerate() {
            if let Some(e) = &t.external_id {
                by_tm.insert(e.clone(), i);
            }
        }
        let parent_of = |t: &Todo| -> Option<usize> {
            let (p, s) = t.external_id.as_deref()?.split_once('.')?;
            number(s)?;
            by_tm.get(p).copied().filter(|i| !todos[*i].external_id.as_deref().unwrap_or("").contains('.'))
        };
        let mut tops = Vec::new();
        let mut subs: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut parents = HashMap::new();
        for (i, t) in todos.iter().enumerate() {
            match parent_of(t) {
                Some(p) => {
                    subs.entry(p).or_default().push(i);
                    parents.insert(i, p);
                }
                None => tops.push(i),
            }
        }
        let mut waits: HashMap<i64, Vec<i64>> = HashMap::new();
        for (a, b, _) in &edges {
            waits.entry(*a).or_default().push(*b);
        }
        let at = todos.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
        Tasks { todos, edges, tops, subs, parents, waits, by_tm, at, claims }
    }

    pub(super) fn find(&self, tm_id: &str) -> Option<&Todo> {
        self.by_tm.get(tm_id.trim()).map(|i| &self.todos[*i])
    }

    pub(super) fn by_id(&self, id: i64) -> Option<&Todo> {
        self.at.get(&id).map(|i| &self.todos[*i])
    }

    pub(super) fn is_subtask(&self, t: &Todo) -> bool {
        self.parent(t).is_some()
    }

    /// The top-level task a subtask is under.
    pub(super) fn parent(&self, t: &Todo) -> Option<&Todo> {
        let p = self.parents.get(self.at.get(&t.id)?)?;
        Some(&self.todos[*p])
    }

    /// The todos `t` waits for (those of this list).
    pub(super) fn awaited(&self, t: &Todo) -> impl Iterator<Item = Option<&Todo>> {
        self.waits.get(&t.id).into_iter().flatten().map(|b| self.by_id(*b))
    }

    pub(super) fn subtasks(&self, t: &Todo) -> Vec<&Todo> {
        let i = self.at[&t.id];
        self.subs.get(&i).map(|s| s.iter().map(|j| &self.todos[*j]).collect()).unwrap_or_default()
    }

    /// The Task Master ids `t` depends on: a subtask by its dotted id, a task by its number
    /// (as text in the newer tools' tasks, `core`).
    pub(super) fn dependencies(&self, t: &Todo, core: bool) -> Vec<Value> {
        self.awaited(t).flatten().map(|d| tm_id(&caller_id(d), core)).collect()
    }

    /// Whether every dependency of `t` is done.
    pub(super) fn ready(&self, t: &Todo) -> bool {
        self.awaited(t).all(|d| d.is_some_and(|d| d.status == Status::Completed))
    }

    /// An operation's refusal naming the tasks by their Task Master ids, never the store's.
    pub(super) fn said(&self, e: impl std::fmt::Display) -> String {
        crate::error::named_ids(&e.to_string(), |id| self.by_id(id).map(caller_id))
    }

    /// Whether another agent holds a live claim on `t`.
    pub(super) fn held_by_other(&self, t: &Todo, agent: Option<&str>) -> Option<&str> {
        self.claims.get(&t.id).filter(|(h, live)| *live && Some(h.as_str()) != agent).map(|(h, _)| h.as_str())
    }

    /// A task with its subtasks as Task Master's tools give it: the newer tools' (`core`:
    /// `get_tasks`, ids as text) or the older ones' (`get_task`, `next_task`, the results of
    /// writes: ids as numbers).
    pub(super) fn task(&self, t: &Todo, core: bool) -> Value {
        let subtasks: Vec<Value> = self.subtasks(t).iter().map(|s| self.subtask(s, t, core)).collect();
        with_metadata(
            json!({
                "id": tm_id(&caller_id(t), core), "title": t.subject,
                "description": t.description.clone().unwrap_or_default(),
                "details": t.plan.clone().unwrap_or_default(),
                "testStrategy": t.completion_criteria.clone().unwrap_or_default(),
                "status": status_word(t.status), "dependencies": self.dependencies(t, core),
                "priority": t.priority.clone().unwrap_or_else(|| "medium".into()), "subtasks": subtasks,
            }),
            t,
        )
    }

    /// A subtask of `parent`: its number within its task, and its task's number.
    pub(super) fn subtask(&self, s: &Todo, parent: &Todo, core: bool) -> Value {
        let id = caller_id(s);
        let n = id.rsplit_once('.').map_or(id.as_str(), |(_, n)| n);
        with_metadata(
            json!({
                "id": tm_id(n, core), "title": s.subject,
                "description": s.description.clone().unwrap_or_default(),
                "details": s.plan.clone().unwrap_or_default(),
                "status": status_word(s.status), "dependencies": self.dependencies(s, false),
                "parentTaskId": tm_id(&caller_id(parent), false),
            }),
            s,
        )
    }
}

/// A task object with the todo's metadata (Task Master's user metadata), when it has some.
pub(super) fn with_metadata(mut task: Value, t: &Todo) -> Value {
    let meta = super::super::helpers::metadata(t);
    if !meta.is_empty() {
        task["metadata"] = Value::Object(meta);
    }
    task
}

/// The ids of a comma list (`15,15.2`), trimmed, empty ones left out.
pub(super) fn id_list(ids: &str) -> Vec<&str> {
    ids.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// The refusal of a tool that would call a model.
pub(super) fn no_model(what: &str, tag: Option<&str>) -> Value {
    refused(
        format!("{what} needs an AI model, and this server (pg_todos) runs none. Write the tasks with add_task and add_subtask (manual fields), or run Task Master itself for this step."),
        tag,
    )
}

pub(super) fn model_tool(scope: &Scope, args: &Value, name: &str) -> Answer {
    let tag = args.get("projectRoot").and_then(Value::as_str).map(|_| project(scope, args).tag);
    Err(no_model(name, tag.as_deref()))
}
