//! The taskmaster dialect: Task Master's (task-master-ai's) MCP tools that need no model,
//! over the store. A project (`projectRoot`) is a set of lists, one per tag: the `master`
//! tag the list `project:<root>` (the list beads' `workspace_root` and `pg_todos mcp` started
//! in that directory use), another tag `project:<root>#<tag>`. A task is a todo of its tag's
//! list: its Task Master id (`5`) the todo's caller id (a todo written through a dialect
//! without caller ids shows its store id), its title the subject, `description`, `details`
//! the plan, `testStrategy` the completion criteria, `priority`; a subtask (`5.2`) a todo
//! of the same list under its task (`parent_id`), its caller id the dotted id. Dependencies
//! are real ones (`todo.dependencies`). Statuses: `pending`, `in-progress`, `done`
//! (completed), `cancelled`, `deferred`, `blocked` and `review`, each its own. Setting
//! `in-progress` is pg_todos' fenced claim for the agent in context; another agent's live
//! claim refuses it, and `next_task` skips a task another agent holds. A tag's description
//! and the project's current tag (`use_tag`) are the lists' properties. Results are Task
//! Master's envelope, `{data, version, tag}`, as `JSON.stringify(…, null, 2)` writes it;
//! refusals are its `Error: …` texts, with nothing written. The tools that call a model
//! answer that this server runs none.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::{caller_id, error, error_message, js_pretty, str_arg, Answer, Tool};
use crate::claims::Refusal;
use crate::error::Error;
use crate::formats::taskmaster::{status_of, status_word};
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::whole_list::{self, Kept};
use crate::ops::{claiming, dependencies, lists, Find, Scope};
use crate::status::Status;
use crate::store;
use crate::todo::Todo;

/// The release of task-master-ai whose tools these are.
const VERSION: &str = "0.43.1";
const NAME: &str = "task-master-ai";
/// The property of a tag's list that says the tag exists (its description, when it was made).
const TAG: &str = "taskmaster_tag";
/// The property of a project's list (its `master` tag) that names its current tag.
const CURRENT_TAG: &str = "taskmaster_current_tag";
/// The most tags `list_tags` reads.
const MAX_TAGS: i64 = 1000;

/// The key orders of Task Master's objects (see `js_pretty`): its newer tools' tasks
/// (`get_tasks`, under `tasks`) are built in another order than its older tools' (`get_task`,
/// `next_task`, results of writes).
const MODELS: &[super::JsModel] = &[
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
fn ok(data: Value, tag: &str) -> Answer {
    Ok(json!({"data": data, "version": {"version": VERSION, "name": NAME}, "tag": tag}))
}

/// A refusal as Task Master words it (`Error: …`, its version and name, and the tag when
/// one is known).
fn refused(message: impl std::fmt::Display, tag: Option<&str>) -> Value {
    let tag = tag.map(|t| format!("\nCurrent Tag: {t}")).unwrap_or_default();
    error("refused", format!("Error: {message}\nVersion: {VERSION}\nName: {NAME}{tag}"))
}

/// The text the model reads: the envelope as Node writes it, or a refusal's words.
fn text(out: &Value) -> String {
    match error_message(out) {
        Some(m) => m.to_string(),
        None => js_pretty(out, MODELS),
    }
}

/// The project a call works on: its root, its tag (the call's `tag`, else the project's
/// current one, else `master`), and the scope of that tag's list.
struct Project {
    root: String,
    tag: String,
    scope: Scope,
}

/// The list of a project's tag.
fn list_name(root: &str, tag: &str) -> String {
    if tag == "master" {
        format!("project:{root}")
    } else {
        format!("project:{root}#{tag}")
    }
}

fn root_of(args: &Value) -> String {
    let root = str_arg(args, "projectRoot").trim();
    match root.trim_end_matches('/') {
        "" if root.starts_with('/') => "/".to_string(),
        r => r.to_string(),
    }
}

/// The project's current tag (`use_tag`'s), else `master`.
fn current_tag(scope: &Scope, root: &str) -> String {
    store::lists::properties(&scope.tenant, &list_name(root, "master"))
        .get(CURRENT_TAG)
        .and_then(Value::as_str)
        .unwrap_or("master")
        .to_string()
}

fn project(scope: &Scope, args: &Value) -> Project {
    let root = root_of(args);
    let tag = match args.get("tag").and_then(Value::as_str).filter(|t| !t.is_empty()) {
        Some(t) => t.to_string(),
        None => current_tag(scope, &root),
    };
    let scope = Scope { conversation: Some(list_name(&root, &tag)), ..scope.clone() };
    Project { root, tag, scope }
}

/// Where Task Master would keep the project's tasks (its results name the file).
fn tasks_path(root: &str) -> String {
    format!("{root}/.taskmaster/tasks/tasks.json")
}

/// `add_task`'s priority: high, medium or low (anything else is medium, as Task Master
/// takes it).
fn priority_of(word: Option<&str>) -> &'static str {
    match word.map(str::to_lowercase).as_deref() {
        Some("high") => "high",
        Some("low") => "low",
        _ => "medium",
    }
}

/// A top-level task's number (a Task Master id is a number; a todo's store id shows as one).
fn number(id: &str) -> Option<i64> {
    id.parse::<i64>().ok().filter(|n| *n > 0)
}

/// An id as Task Master writes it: a number as a number (as text in its newer tools'
/// tasks, `as_text`), any other id (a subtask's `5.2`) as text.
fn tm_id(id: &str, as_text: bool) -> Value {
    match number(id) {
        Some(n) if !as_text => json!(n),
        _ => json!(id),
    }
}

/// A tag's tasks: its todos, top-level ones in list order each with its subtasks, and the
/// dependencies among them.
struct Tasks {
    todos: Vec<Todo>,
    /// (todo, waits for, the awaited one is open)
    edges: Vec<(i64, i64, bool)>,
    /// the top-level tasks, as indexes into `todos`, in list order
    tops: Vec<usize>,
    /// each top-level task's subtasks (by its index), in list order
    subs: HashMap<usize, Vec<usize>>,
    /// each subtask's task (by their indexes)
    parents: HashMap<usize, usize>,
    /// what each todo waits for, by store id, in the edges' order
    waits: HashMap<i64, Vec<i64>>,
    /// each todo by its Task Master id
    by_tm: HashMap<String, usize>,
    /// each todo by its store id
    at: HashMap<i64, usize>,
    /// the claims on them: holder and whether the lease runs
    claims: HashMap<i64, (String, bool)>,
}

impl Tasks {
    fn read(scope: &Scope) -> Tasks {
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

    fn find(&self, tm_id: &str) -> Option<&Todo> {
        self.by_tm.get(tm_id.trim()).map(|i| &self.todos[*i])
    }

    fn by_id(&self, id: i64) -> Option<&Todo> {
        self.at.get(&id).map(|i| &self.todos[*i])
    }

    fn is_subtask(&self, t: &Todo) -> bool {
        self.parent(t).is_some()
    }

    /// The top-level task a subtask is under.
    fn parent(&self, t: &Todo) -> Option<&Todo> {
        let p = self.parents.get(self.at.get(&t.id)?)?;
        Some(&self.todos[*p])
    }

    /// The todos `t` waits for (those of this list).
    fn awaited(&self, t: &Todo) -> impl Iterator<Item = Option<&Todo>> {
        self.waits.get(&t.id).into_iter().flatten().map(|b| self.by_id(*b))
    }

    fn subtasks(&self, t: &Todo) -> Vec<&Todo> {
        let i = self.at[&t.id];
        self.subs.get(&i).map(|s| s.iter().map(|j| &self.todos[*j]).collect()).unwrap_or_default()
    }

    /// The Task Master ids `t` depends on: a subtask by its dotted id, a task by its number
    /// (as text in the newer tools' tasks, `core`).
    fn dependencies(&self, t: &Todo, core: bool) -> Vec<Value> {
        self.awaited(t).flatten().map(|d| tm_id(&caller_id(d), core)).collect()
    }

    /// Whether every dependency of `t` is done.
    fn ready(&self, t: &Todo) -> bool {
        self.awaited(t).all(|d| d.is_some_and(|d| d.status == Status::Completed))
    }

    /// An operation's refusal naming the tasks by their Task Master ids, never the store's.
    fn said(&self, e: impl std::fmt::Display) -> String {
        crate::error::named_ids(&e.to_string(), |id| self.by_id(id).map(caller_id))
    }

    /// Whether another agent holds a live claim on `t`.
    fn held_by_other(&self, t: &Todo, agent: Option<&str>) -> Option<&str> {
        self.claims.get(&t.id).filter(|(h, live)| *live && Some(h.as_str()) != agent).map(|(h, _)| h.as_str())
    }

    /// A task with its subtasks as Task Master's tools give it: the newer tools' (`core`:
    /// `get_tasks`, ids as text) or the older ones' (`get_task`, `next_task`, the results of
    /// writes: ids as numbers).
    fn task(&self, t: &Todo, core: bool) -> Value {
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
    fn subtask(&self, s: &Todo, parent: &Todo, core: bool) -> Value {
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
fn with_metadata(mut task: Value, t: &Todo) -> Value {
    let meta = super::metadata(t);
    if !meta.is_empty() {
        task["metadata"] = Value::Object(meta);
    }
    task
}

/// The ids of a comma list (`15,15.2`), trimmed, empty ones left out.
fn id_list(ids: &str) -> Vec<&str> {
    ids.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
}

fn get_tasks(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let filter = args.get("status").and_then(Value::as_str).filter(|s| !s.is_empty() && *s != "all");
    let wanted: Option<Vec<&str>> = filter.map(|f| f.split(',').map(str::trim).collect());
    let with_subtasks = args.get("withSubtasks").and_then(Value::as_bool).unwrap_or(false);
    let shown: Vec<&Todo> = tasks
        .tops
        .iter()
        .map(|i| &tasks.todos[*i])
        .filter(|t| wanted.as_ref().is_none_or(|w| w.contains(&status_word(t.status))))
        .collect();
    let list: Vec<Value> = shown
        .iter()
        .map(|t| {
            let mut task = tasks.task(t, true);
            if !with_subtasks {
                task["subtasks"] = json!([]);
            }
            task
        })
        .collect();
    let count = |of: &[&Todo], word: &str| of.iter().filter(|t| status_word(t.status) == word).count();
    let total = tasks.tops.len();
    let percent = |done: usize, of: usize| if of == 0 { json!(0) } else { json!(done as f64 * 100.0 / of as f64) };
    let subs: Vec<&Todo> = shown.iter().flat_map(|t| tasks.subtasks(t)).collect();
    let stats = json!({
        "total": total, "completed": count(&shown, "done"), "inProgress": count(&shown, "in-progress"),
        "pending": count(&shown, "pending"), "blocked": count(&shown, "blocked"), "deferred": count(&shown, "deferred"),
        "cancelled": count(&shown, "cancelled"), "review": count(&shown, "review"),
        "completionPercentage": percent(count(&shown, "done"), total),
        "subtasks": {
            "total": subs.len(), "completed": count(&subs, "done"), "inProgress": count(&subs, "in-progress"),
            "pending": count(&subs, "pending"), "blocked": count(&subs, "blocked"), "deferred": count(&subs, "deferred"),
            "cancelled": count(&subs, "cancelled"), "completionPercentage": percent(count(&subs, "done"), subs.len())
        }
    });
    ok(json!({"tasks": list, "filter": filter.unwrap_or("all"), "stats": stats}), &p.tag)
}

fn get_task(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let ids = id_list(str_arg(args, "id"));
    let status = args.get("status").and_then(Value::as_str).filter(|s| !s.is_empty());
    let found: Vec<Value> = ids
        .iter()
        .filter_map(|id| tasks.find(id))
        .map(|t| match tasks.parent(t) {
            Some(parent) => tasks.subtask(t, parent, false),
            None => {
                let mut task = tasks.task(t, false);
                if let Some(s) = status {
                    let keep: Vec<&str> = s.split(',').map(str::trim).collect();
                    if let Some(list) = task["subtasks"].as_array_mut() {
                        list.retain(|st| keep.contains(&st["status"].as_str().unwrap_or_default()));
                    }
                }
                task
            }
        })
        .collect();
    if found.is_empty() {
        return Err(refused(format!("No tasks found for ID(s): {}", ids.join(",")), Some(&p.tag)));
    }
    if found.len() == 1 {
        return ok(found.into_iter().next().unwrap_or_default(), &p.tag);
    }
    ok(Value::Array(found), &p.tag)
}

const TASK_ADVICE: &str = "Tasks can be updated to reflect a change in the direction of the task, or to reformulate the task per your prompt. Research can be used when updating the task to collect up-to-date information. It is best to update subtasks as you work on them, and to update the task for more high-level changes that may affect pending subtasks or the general direction of the task.";
const SUBTASK_ADVICE: &str = "Subtasks can be updated with timestamped details as you implement them. This is useful for tracking progress, marking milestones and insights (of successful or successive falures in attempting to implement the subtask). Research can be used when updating the subtask to collect up-to-date information, and can be helpful to solve a repeating problem the agent is unable to solve. It is a good idea to get-task the parent task to collect the overall context of the task, and to get-task the subtask to collect the specific details of the subtask.";

/// Task Master's rank of a priority (high first).
fn rank(priority: Option<&str>) -> i64 {
    match priority.unwrap_or("medium") {
        "high" => 3,
        "low" => 1,
        _ => 2,
    }
}

/// Task Master's next task: a pending or in-progress subtask of an in-progress task whose
/// dependencies are done, else the best pending or in-progress top-level task whose
/// dependencies are done (by priority, fewer dependencies, lower id). A task another agent
/// holds a live claim on is not offered.
fn next_task(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let agent = scope.agent.as_deref();
    let open = |t: &Todo| matches!(t.status, Status::Pending | Status::InProgress);
    let eligible = |t: &Todo| open(t) && tasks.ready(t) && tasks.held_by_other(t, agent).is_none();
    let key = |t: &Todo| {
        let id = caller_id(t);
        let mut parts = id.split('.').map(|n| n.parse::<i64>().unwrap_or(i64::MAX));
        (parts.next().unwrap_or(i64::MAX), parts.next().unwrap_or(0))
    };
    let mut candidates: Vec<(&Todo, &Todo)> = tasks
        .tops
        .iter()
        .map(|i| &tasks.todos[*i])
        .filter(|t| t.status == Status::InProgress)
        .flat_map(|parent| tasks.subtasks(parent).into_iter().map(move |s| (s, parent)))
        .filter(|(s, _)| eligible(s))
        .collect();
    candidates.sort_by_key(|(s, parent)| {
        let priority = s.priority.as_deref().or(parent.priority.as_deref());
        (-rank(priority), tasks.dependencies(s, false).len(), key(s))
    });
    if let Some((s, parent)) = candidates.first() {
        let deps: Vec<Value> = tasks
            .dependencies(s, false)
            .into_iter()
            .map(|d| match d {
                Value::Number(n) => json!(n.to_string()),
                other => other,
            })
            .collect();
        let next = json!({"id": caller_id(s), "title": s.subject, "status": status_word(s.status),
                          "priority": s.priority.clone().or_else(|| parent.priority.clone()).unwrap_or_else(|| "medium".into()),
                          "dependencies": deps, "parentId": tm_id(&caller_id(parent), false)});
        let steps = format!(
            "When ready to work on the subtask, use set-status to set the status to \"in progress\" {SUBTASK_ADVICE}"
        );
        return ok(json!({"nextTask": next, "isSubtask": true, "nextSteps": steps}), &p.tag);
    }
    let mut top: Vec<&Todo> = tasks.tops.iter().map(|i| &tasks.todos[*i]).filter(|t| eligible(t)).collect();
    top.sort_by_key(|t| (-rank(t.priority.as_deref()), tasks.dependencies(t, false).len(), key(t)));
    match top.first() {
        Some(t) => {
            let steps = format!(
                "When ready to work on the task, use set-status to set the status to \"in progress\" {TASK_ADVICE}"
            );
            ok(json!({"nextTask": tasks.task(t, false), "isSubtask": false, "nextSteps": steps}), &p.tag)
        }
        None => ok(
            json!({"message": "No eligible next task found. All tasks are either completed or have unsatisfied dependencies",
                   "nextTask": null}),
            &p.tag,
        ),
    }
}

/// Sets one task's status, each decision taken on the task locked (not on what was read
/// before: another agent may have claimed or finished it since): `in-progress` is pg_todos'
/// claim for the agent in context (without an agent, a plain change), refused while another
/// agent holds it and on a finished task (a reopen is `pending` first); `done` and
/// `cancelled` finish it (refused under another agent's claim; a task already so is no
/// change); `pending` from the agent's own claim releases it; the rest are plain changes,
/// refused under another agent's claim.
fn set_one(scope: &Scope, tasks: &Tasks, t: &Todo, to: Status) -> Result<(), String> {
    let mine = tasks.claims.get(&t.id).is_some_and(|(h, live)| *live && Some(h.as_str()) == scope.agent.as_deref());
    let done = match to {
        Status::InProgress if scope.agent.is_some() => claiming::claim(scope, Some(t.id), None).map(|_| ()),
        Status::Completed | Status::Canceled => match claiming::finish(scope, t.id, None, to, None) {
            Err(Error::Claim(Refusal::NotOpen { status, .. })) if status == to => Ok(()),
            other => other.map(|_| ()),
        },
        Status::Pending if mine => claiming::release(scope, t.id, None).map(|_| ()),
        _ => single::change(
            scope,
            Find::Anywhere,
            t.id,
            Change { status: Some(to), via_reopen: true, ..Change::default() },
        )
        .map(|_| ()),
    };
    done.map_err(|e| match e {
        Error::Claim(Refusal::HeldBy { holder, .. }) => {
            format!(": task {} is in progress, claimed by {holder}", caller_id(t))
        }
        Error::Claim(Refusal::Blocked { .. }) => format!(": task {} waits for tasks that are not done", caller_id(t)),
        Error::Claim(Refusal::NotOpen { status, .. }) => {
            format!(": task {} is {} already; set it to pending first to reopen it", caller_id(t), status_word(status))
        }
        other => format!(": {}", tasks.said(other)),
    })
}

/// A task's status from its subtasks', as Task Master sets it after a subtask changes.
fn parent_status(subs: &[Status]) -> Option<Status> {
    if subs.is_empty() {
        return None;
    }
    if subs.iter().all(|s| *s == Status::Completed) {
        Some(Status::Completed)
    } else if subs.iter().any(|s| matches!(s, Status::InProgress | Status::Completed)) {
        Some(Status::InProgress)
    } else if subs.iter().all(|s| *s == Status::Pending) {
        Some(Status::Pending)
    } else {
        None
    }
}

fn set_task_status(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let word = str_arg(args, "status");
    let Some(to) = status_of(word).filter(|_| word != "completed") else {
        return Err(refused(
            format!("Failed to set task status: Invalid status \"{word}\". Valid statuses: pending, in-progress, done, deferred, cancelled, blocked, review"),
            Some(&p.tag),
        ));
    };
    let ids = id_list(str_arg(args, "id"));
    let mut results = Vec::new();
    for id in &ids {
        let tasks = Tasks::read(&p.scope);
        let fail = |why: String| {
            refused(format!("Failed to set task status: Failed to update task status for {id}{why}"), Some(&p.tag))
        };
        let Some(t) = tasks.find(id) else {
            return Err(fail(String::new()));
        };
        let old = t.status;
        set_one(&p.scope, &tasks, t, to).map_err(fail)?;
        if let Some(parent) = tasks.parent(t) {
            let tasks = Tasks::read(&p.scope);
            let subs: Vec<Status> = tasks.subtasks(parent).iter().map(|s| s.status).collect();
            if let Some(status) = parent_status(&subs).filter(|s| *s != parent.status) {
                let parent = tasks.find(&caller_id(parent)).cloned();
                if let Some(parent) = parent {
                    set_one(&p.scope, &tasks, &parent, status).map_err(fail)?;
                }
            }
        }
        results.push(json!({"success": true, "oldStatus": status_word(old), "newStatus": word, "taskId": id}));
    }
    ok(
        json!({"message": format!("Successfully updated {} task(s) to \"{word}\"", results.len()), "tasks": results}),
        &p.tag,
    )
}

/// The top-level tasks a comma list of dependencies names (numbers of tasks of this tag;
/// others are left out, as Task Master drops them).
fn named_tasks<'a>(tasks: &'a Tasks, list: &str) -> Vec<&'a Todo> {
    id_list(list).into_iter().filter_map(|d| tasks.find(d)).filter(|t| !tasks.is_subtask(t)).collect()
}

fn add_task(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let given = |key: &str| args.get(key).and_then(Value::as_str).filter(|t| !t.trim().is_empty());
    let (Some(title), Some(_)) = (given("title"), given("description")) else {
        return Err(if given("prompt").is_some() {
            no_model("add_task with a prompt", Some(&p.tag))
        } else {
            refused(
                "Either the prompt parameter or both title and description parameters are required for adding a task",
                Some(&p.tag),
            )
        });
    };
    let tasks = Tasks::read(&p.scope);
    // from the store, not from `tasks` (a read a long list cuts): one more than any number
    // the tag's list holds or has handed out, taken under the list's series row
    let n = lists::next_number(&p.scope, p.scope.conv().unwrap_or_default(), "", true, true);
    let deps = named_tasks(&tasks, args.get("dependencies").and_then(Value::as_str).unwrap_or_default());
    let fields = json_fields([
        ("conversation_id", json!(p.scope.conv())),
        ("subject", json!(title)),
        ("description", json!(args.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()))),
        ("plan", json!(args.get("details").and_then(Value::as_str).filter(|d| !d.is_empty()))),
        ("completion_criteria", json!(args.get("testStrategy").and_then(Value::as_str).filter(|d| !d.is_empty()))),
        ("priority", json!(priority_of(args.get("priority").and_then(Value::as_str)))),
        ("external_id", json!(n.to_string())),
    ]);
    let t = single::add(&p.scope, NewTodo { fields, ..NewTodo::default() })
        .map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
    for d in deps {
        dependencies::block(&p.scope, t.id, d.id).map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
    }
    ok(
        json!({"taskId": n, "message": format!("Successfully added new task #{n}"), "telemetryData": null, "tagInfo": null}),
        &p.tag,
    )
}

fn add_subtask(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let parent_id = str_arg(args, "id").trim();
    let parent = tasks
        .find(parent_id)
        .filter(|t| !tasks.is_subtask(t))
        .ok_or_else(|| refused(format!("Parent task with ID {parent_id} not found"), Some(&p.tag)))?;
    if args.get("taskId").and_then(Value::as_str).is_some_and(|s| !s.is_empty()) {
        return Err(refused(
            "Converting a task to a subtask (taskId) is not supported by this server: add the subtask with a title",
            Some(&p.tag),
        ));
    }
    let Some(title) = args.get("title").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) else {
        return Err(refused("Either taskId or title must be provided", Some(&p.tag)));
    };
    let n = lists::next_number(
        &p.scope,
        p.scope.conv().unwrap_or_default(),
        &format!("{}.", caller_id(parent)),
        false,
        true,
    );
    let id = format!("{}.{n}", caller_id(parent));
    let status = match args.get("status").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        None => Status::Pending,
        Some(s) => status_of(s).ok_or_else(|| refused(format!("Invalid status: {s}"), Some(&p.tag)))?,
    };
    let fields = json_fields([
        ("conversation_id", json!(p.scope.conv())),
        ("subject", json!(title)),
        ("description", json!(args.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()))),
        ("plan", json!(args.get("details").and_then(Value::as_str).filter(|d| !d.is_empty()))),
        ("status", json!(status.as_str())),
        ("external_id", json!(id)),
    ]);
    let t = single::add(&p.scope, NewTodo { parent: Some(parent.id), fields, ..NewTodo::default() })
        .map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
    // a dependency: a sibling by its number, else any task or subtask by its id
    for d in id_list(args.get("dependencies").and_then(Value::as_str).unwrap_or_default()) {
        let target = if d.contains('.') { tasks.find(d) } else { tasks.find(&format!("{}.{d}", caller_id(parent))) };
        if let Some(target) = target.or_else(|| tasks.find(d)) {
            dependencies::block(&p.scope, t.id, target.id).map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
        }
    }
    let tasks = Tasks::read(&p.scope);
    let sub = tasks.find(&id).map(|s| tasks.subtask(s, parent, false)).unwrap_or_default();
    ok(json!({"message": format!("New subtask {id} successfully created"), "subtask": sub}), &p.tag)
}

/// `update_subtask`: the prompt's words appended to the subtask's details as a timestamped
/// block (Task Master has a model write them; this server keeps them as written), and its
/// metadata merged.
fn update_subtask(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let prompt = args.get("prompt").and_then(Value::as_str).filter(|s| !s.trim().is_empty());
    let meta = match args.get("metadata").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        None => None,
        Some(m) => match serde_json::from_str::<Value>(m) {
            Ok(Value::Object(o)) => Some(o),
            Ok(_) => return Err(refused("Invalid metadata: must be a JSON object (not null or array)", None)),
            Err(e) => {
                return Err(refused(format!("Invalid metadata JSON: {e}. Provide a valid JSON object string."), None))
            }
        },
    };
    if prompt.is_none() && meta.is_none() {
        return Err(refused("Either prompt or metadata must be provided for update-subtask", None));
    }
    let id = str_arg(args, "id").trim();
    let tasks = Tasks::read(&p.scope);
    let Some((parent_id, _)) = id.split_once('.') else {
        return Err(refused(
            format!("Invalid subtask ID format: {id}. In solo mode, subtask ID must be in format \"parentId.subtaskId\" (e.g., \"5.2\")."),
            Some(&p.tag),
        ));
    };
    let Some(parent) = tasks.find(parent_id).filter(|t| !tasks.is_subtask(t)) else {
        return Err(refused(
            format!("Parent task with ID {parent_id} not found. Please verify the task ID and try again."),
            Some(&p.tag),
        ));
    };
    let Some(sub) = tasks.find(id).filter(|s| tasks.parent(s).is_some_and(|x| x.id == parent.id)) else {
        return Err(refused(
            format!("Subtask with ID {id} not found. Please verify the subtask ID and try again."),
            Some(&p.tag),
        ));
    };
    let mut change = Change::default();
    if let Some(prompt) = prompt {
        let stamp = crate::time::iso8601(crate::time::now_us());
        let block = format!("<info added on {stamp}>\n{}\n</info added on {stamp}>", prompt.trim());
        let details = match sub.plan.as_deref().filter(|d| !d.is_empty()) {
            Some(d) => format!("{d}\n{block}"),
            None => block,
        };
        change.fields.insert("plan".into(), json!(details));
    }
    if let Some(m) = meta {
        change.metadata = Some(m);
    }
    single::change(&p.scope, Find::Anywhere, sub.id, change).map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
    let tasks = Tasks::read(&p.scope);
    let updated = tasks.find(id).map(|s| tasks.subtask(s, parent, false)).unwrap_or_default();
    ok(
        json!({"message": format!("Successfully updated subtask with ID {id}"), "subtaskId": id,
               "parentId": parent_id, "subtask": updated, "tasksPath": tasks_path(&p.root),
               "useResearch": false, "telemetryData": null, "tagInfo": {"tag": p.tag}}),
        &p.tag,
    )
}

fn remove_task(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let ids = id_list(str_arg(args, "id"));
    let missing: Vec<&str> = ids.iter().copied().filter(|id| tasks.find(id).is_none()).collect();
    if !missing.is_empty() {
        return Err(refused(
            format!("The following tasks were not found in tag '{}': {}", p.tag, missing.join(", ")),
            Some(&p.tag),
        ));
    }
    let mut removed = Vec::new();
    let mut messages = Vec::new();
    for id in &ids {
        let Some(t) = tasks.find(id) else { continue };
        let shown = match tasks.parent(t) {
            Some(parent) => {
                let s = tasks.subtask(t, parent, false);
                messages.push(format!("Successfully removed subtask {id} from tag '{}'", p.tag));
                s
            }
            None => {
                for s in tasks.subtasks(t) {
                    single::delete(&p.scope, Find::Anywhere, s.id).map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
                }
                messages.push(format!("Successfully removed task {id} from tag '{}'", p.tag));
                tasks.task(t, false)
            }
        };
        single::delete(&p.scope, Find::Anywhere, t.id).map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
        removed.push(shown);
    }
    ok(
        json!({"totalTasks": ids.len(), "successful": removed.len(), "failed": 0, "removedTasks": removed,
               "message": messages.join("\n"), "tasksPath": tasks_path(&p.root), "tag": p.tag}),
        &p.tag,
    )
}

/// The task or subtask a dependency argument names.
fn dependency_end<'a>(tasks: &'a Tasks, id: &str) -> Option<&'a Todo> {
    tasks.find(id)
}

fn add_dependency(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let (id, on) = (str_arg(args, "id").trim(), str_arg(args, "dependsOn").trim());
    let kind = |s: &str| if s.contains('.') { "Subtask" } else { "Task" };
    let Some(from) = dependency_end(&tasks, id) else {
        return Err(refused(format!("{} {id} not found.", kind(id)), Some(&p.tag)));
    };
    let Some(to) = dependency_end(&tasks, on) else {
        return Err(refused(format!("Dependency target {on} does not exist in tasks.json"), Some(&p.tag)));
    };
    if from.id == to.id {
        return Err(refused(format!("{} {id} cannot depend on itself.", kind(id)), Some(&p.tag)));
    }
    match dependencies::block(&p.scope, from.id, to.id) {
        Ok(_) => {} // Task Master answers the same when it was there already
        Err(Error::Edge(_)) => {
            return Err(refused(
                format!("Cannot add dependency {on} to task {id} as it would create a circular dependency."),
                Some(&p.tag),
            ))
        }
        Err(e) => return Err(refused(tasks.said(e), Some(&p.tag))),
    }
    ok(
        json!({"message": format!("Successfully added dependency: Task {id} now depends on {on}"),
               "taskId": tm_id(id, false), "dependencyId": tm_id(on, false)}),
        &p.tag,
    )
}

fn remove_dependency(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let (id, on) = (str_arg(args, "id").trim(), str_arg(args, "dependsOn").trim());
    let kind = |s: &str| if s.contains('.') { "Subtask" } else { "Task" };
    let Some(from) = dependency_end(&tasks, id) else {
        return Err(refused(format!("{} {id} not found.", kind(id)), Some(&p.tag)));
    };
    // Task Master answers the same whether the dependency was there or not
    if let Some(to) = dependency_end(&tasks, on) {
        dependencies::unblock(&p.scope, from.id, to.id).map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
    }
    ok(
        json!({"message": format!("Successfully removed dependency: Task {id} no longer depends on {on}"),
               "taskId": tm_id(id, false), "dependencyId": tm_id(on, false)}),
        &p.tag,
    )
}

/// The store keeps dependencies valid (both ends exist, no cycles, no self-dependency), so
/// there is never anything to report.
fn validate_dependencies(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    ok(json!({"message": "Dependencies validated successfully", "tasksPath": tasks_path(&p.root)}), &p.tag)
}

/// The store refuses what `fix_dependencies` would remove (a missing task, a cycle, a task
/// waiting for itself), so there is nothing to fix.
fn fix_dependencies(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    ok(json!({"message": "Dependencies fixed successfully", "tasksPath": tasks_path(&p.root), "tag": p.tag}), &p.tag)
}

/// FastMCP's refusal of arguments Task Master's zod schema does not take (before the tool
/// runs), in zod's words: each field in the schema's order.
fn zod_check(tool: &str, args: &Value) -> Option<Value> {
    let raw = super::listed_schema_text(LISTED, tool);
    let schema: Value = serde_json::from_str(raw).ok()?;
    let props = schema.get("properties")?.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut keys: Vec<&String> = props.keys().collect();
    keys.sort_by_key(|k| raw.find(&format!("\"{k}\":")).unwrap_or(usize::MAX));
    let js_type = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    let mut issues = Vec::new();
    for k in keys {
        let p = &props[k.as_str()];
        let want = p.get("type").and_then(Value::as_str).unwrap_or("string");
        let issue = match args.get(k.as_str()) {
            None if required.contains(&k.as_str()) => {
                Some(format!("Invalid input: expected {want}, received undefined"))
            }
            None => None,
            Some(v) if js_type(v) != want => Some(format!("Invalid input: expected {want}, received {}", js_type(v))),
            Some(v) => {
                let s = v.as_str().unwrap_or_default();
                let options: Vec<&str> = p
                    .get("enum")
                    .and_then(Value::as_array)
                    .map(|e| e.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if !options.is_empty() && !options.contains(&s) {
                    let quoted: Vec<String> = options.iter().map(|o| format!("\"{o}\"")).collect();
                    Some(format!("Invalid option: expected one of {}", quoted.join("|")))
                } else if k == "id" && matches!(tool, "get_task" | "set_task_status") {
                    let valid = |id: &str| {
                        let dotted = id.split('.').all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
                        let display = id.trim_start_matches(|c: char| c.is_ascii_alphabetic());
                        let display = display.strip_prefix('-').unwrap_or(display);
                        dotted
                            || (display.len() < id.len()
                                && !display.is_empty()
                                && display.bytes().all(|b| b.is_ascii_digit()))
                    };
                    let ids: Vec<&str> = s.split(',').map(str::trim).filter(|i| !i.is_empty()).collect();
                    if s.is_empty() {
                        Some("Task ID(s) cannot be empty".to_string())
                    } else if ids.is_empty() || !ids.iter().all(|i| valid(i)) {
                        Some("Invalid task ID format. Expected numeric (e.g., '15'), subtask (e.g., '15.2'), or display ID (e.g., 'HAM-123'). Multiple IDs should be comma-separated.".to_string())
                    } else {
                        None
                    }
                } else {
                    None
                }
            }
        };
        if let Some(i) = issue {
            issues.push(format!("{k}: {i}"));
        }
    }
    (!issues.is_empty()).then(|| {
        error(
            "invalid_arguments",
            format!(
                "Tool '{tool}' parameter validation failed: {}. Please check the parameter types and values according to the tool's schema.",
                issues.join(", ")
            ),
        )
    })
}

/// A tag name as Task Master allows it: letters, digits, `-` and `_`, not a reserved one.
fn check_tag_name(name: &str, what: &str, tag: &str) -> Result<(), Value> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(refused(format!("{what} can only contain letters, numbers, hyphens, and underscores"), Some(tag)));
    }
    if ["master", "main", "default"].contains(&name.to_lowercase().as_str()) {
        return Err(refused(format!("\"{name}\" is a reserved tag name"), Some(tag)));
    }
    Ok(())
}

/// Today as JavaScript's `toLocaleDateString()` writes it in en-US (`11/26/2026`), in UTC.
fn locale_date() -> String {
    let iso = crate::time::iso8601(crate::time::now_us());
    let (y, m, d) = (&iso[0..4], &iso[5..7], &iso[8..10]);
    format!("{}/{}/{y}", m.trim_start_matches('0'), d.trim_start_matches('0'))
}

/// The project's tags: `master` and the others (those that hold tasks or were made), by name.
fn tags_of(scope: &Scope, root: &str) -> Vec<String> {
    let prefix = format!("{}#", list_name(root, "master"));
    let mut tags = vec!["master".to_string()];
    tags.extend(
        store::lists::named_lists(&scope.tenant, &prefix, TAG, MAX_TAGS)
            .into_iter()
            .filter_map(|l| l.strip_prefix(&prefix).map(str::to_string)),
    );
    tags
}

fn tag_scope(scope: &Scope, root: &str, tag: &str) -> Scope {
    Scope { conversation: Some(list_name(root, tag)), ..scope.clone() }
}

/// A tag's description and when it was made (Task Master's tag metadata).
fn tag_about(scope: &Scope, root: &str, tag: &str, tasks: &Tasks) -> (Value, Value) {
    let about = store::lists::properties(&scope.tenant, &list_name(root, tag)).get(TAG).cloned().unwrap_or_default();
    let created = about.get("created").cloned().unwrap_or_else(|| {
        let first = tasks.todos.iter().map(|t| t.created_us).min();
        json!(crate::time::iso8601(first.unwrap_or_else(crate::time::now_us)))
    });
    let description = about.get("description").cloned().unwrap_or_else(|| {
        json!(if tag == "master" { "Tasks for master context".to_string() } else { "No description".to_string() })
    });
    (created, description)
}

/// Counts of Task Master's status words, in the order they first appear.
fn breakdown<'a>(todos: impl Iterator<Item = &'a Todo>) -> Value {
    let mut counts: Vec<(&str, i64)> = Vec::new();
    for t in todos {
        let w = status_word(t.status);
        match counts.iter_mut().find(|(k, _)| *k == w) {
            Some(c) => c.1 += 1,
            None => counts.push((w, 1)),
        }
    }
    Value::Object(counts.into_iter().map(|(k, n)| (k.to_string(), json!(n))).collect())
}

fn list_tags(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let mut names = tags_of(scope, &root);
    names.sort_by_key(|a| (*a != current, a.to_lowercase()));
    let tags: Vec<Value> = names
        .iter()
        .map(|tag| {
            let tasks = Tasks::read(&tag_scope(scope, &root, tag));
            let tops: Vec<&Todo> = tasks.tops.iter().map(|i| &tasks.todos[*i]).collect();
            let subs: Vec<&Todo> = tops.iter().flat_map(|t| tasks.subtasks(t)).collect();
            let (created, description) = tag_about(scope, &root, tag, &tasks);
            json!({"name": tag, "isCurrent": *tag == current, "taskCount": tops.len(),
                   "completedTasks": tops.iter().filter(|t| t.status.is_terminal()).count(),
                   "statusBreakdown": breakdown(tops.iter().copied()),
                   "subtaskCounts": {"totalSubtasks": subs.len(), "subtasksByStatus": breakdown(subs.iter().copied())},
                   "created": created, "description": description})
        })
        .collect();
    let total = tags.len();
    ok(
        json!({"tags": tags, "currentTag": current, "totalTags": total, "message": format!("Found {total} tag(s)")}),
        &current,
    )
}

/// Records that a tag exists, with its description and when it was made.
fn make_tag(scope: &Scope, root: &str, tag: &str, description: &str) {
    let about = json!({"description": description, "created": crate::time::iso8601(crate::time::now_us())});
    store::lists::set_property(&scope.tenant, &list_name(root, tag), TAG, Some(&about));
}

/// Copies a tag's tasks (ids, dependencies and subtasks kept) into another tag's list.
fn copy_tasks(scope: &Scope, root: &str, from: &str, to: &str, tag: &str) -> Result<usize, Value> {
    let source = Tasks::read(&tag_scope(scope, root, from));
    let target = tag_scope(scope, root, to);
    let mut made: HashMap<i64, i64> = HashMap::new();
    let refuse = |e: Error| refused(source.said(e), Some(tag));
    for top in &source.tops {
        let t = &source.todos[*top];
        let copy = |t: &Todo, parent: Option<i64>| -> Result<Todo, Value> {
            let fields = json_fields([
                ("conversation_id", json!(target.conv())),
                ("subject", json!(t.subject)),
                ("description", json!(t.description)),
                ("plan", json!(t.plan)),
                ("completion_criteria", json!(t.completion_criteria)),
                ("priority", json!(t.priority)),
                ("status", json!(if t.status == Status::InProgress { Status::Pending } else { t.status }.as_str())),
                ("external_id", json!(caller_id(t))),
            ]);
            single::add(&target, NewTodo { parent, fields, ..NewTodo::default() }).map_err(refuse)
        };
        let new = copy(t, None)?;
        made.insert(t.id, new.id);
        for s in source.subtasks(t) {
            let sub = copy(s, Some(new.id))?;
            made.insert(s.id, sub.id);
        }
    }
    for (a, b, _) in &source.edges {
        if let (Some(x), Some(y)) = (made.get(a), made.get(b)) {
            dependencies::block(&target, *x, *y).map_err(refuse)?;
        }
    }
    Ok(source.tops.len())
}

fn add_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let name = str_arg(args, "name").trim();
    if args.get("fromBranch").and_then(Value::as_bool).unwrap_or(false) {
        return Err(refused("Not in a git repository. Cannot use fromBranch option.", Some(&current)));
    }
    check_tag_name(name, "Tag name", &current)?;
    let tags = tags_of(scope, &root);
    if tags.iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" already exists"), Some(&current)));
    }
    let from = match args.get("copyFromTag").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        Some(t) => Some(t.to_string()),
        None if args.get("copyFromCurrent").and_then(Value::as_bool).unwrap_or(false) => Some(current.clone()),
        None => None,
    };
    if let Some(from) = from.as_ref().filter(|f| !tags.contains(f)) {
        return Err(refused(format!("Source tag \"{from}\" does not exist"), Some(&current)));
    }
    let description = args
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map_or_else(|| format!("Tag created on {}", locale_date()), str::to_string);
    make_tag(scope, &root, name, &description);
    let copied = match &from {
        Some(f) => copy_tasks(scope, &root, f, name, &current)?,
        None => 0,
    };
    ok(
        json!({"tagName": name, "created": true, "tasksCopied": copied, "sourceTag": from, "description": description,
               "message": format!("Successfully created tag \"{name}\"")}),
        &current,
    )
}

fn delete_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let name = str_arg(args, "name").trim();
    if name == "master" {
        return Err(refused("Cannot delete the \"master\" tag", Some(&current)));
    }
    if !tags_of(scope, &root).iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" does not exist"), Some(&current)));
    }
    let was_current = current == name;
    if was_current {
        store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, None);
    }
    store::lists::set_property(&scope.tenant, &list_name(&root, name), TAG, None);
    let s = tag_scope(scope, &root, name);
    let tasks = Tasks::read(&s);
    for t in tasks.todos.iter().rev() {
        single::delete(&s, Find::Anywhere, t.id).map_err(|e| refused(tasks.said(e), Some(&current)))?;
    }
    ok(
        json!({"tagName": name, "deleted": true, "tasksDeleted": tasks.tops.len(), "wasCurrentTag": was_current,
               "switchedToMaster": was_current, "message": format!("Successfully deleted tag \"{name}\"")}),
        &current_tag(scope, &root),
    )
}

fn use_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let previous = current_tag(scope, &root);
    let name = str_arg(args, "name").trim();
    if !tags_of(scope, &root).iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" does not exist"), Some(&previous)));
    }
    let value = (name != "master").then(|| json!(name));
    store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, value.as_ref());
    let count = Tasks::read(&tag_scope(scope, &root, name)).tops.len();
    ok(
        json!({"tagName": name, "switched": true, "previousTag": previous, "taskCount": count,
               "message": format!("Successfully switched to tag \"{name}\"")}),
        name,
    )
}

fn rename_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let (old, new) = (str_arg(args, "oldName").trim(), str_arg(args, "newName").trim());
    if old == "master" {
        return Err(refused("Cannot rename the \"master\" tag", Some(&current)));
    }
    check_tag_name(new, "New tag name", &current)?;
    let tags = tags_of(scope, &root);
    if !tags.iter().any(|t| t == old) {
        return Err(refused(format!("Tag \"{old}\" does not exist"), Some(&current)));
    }
    if tags.iter().any(|t| t == new) {
        return Err(refused(format!("Tag \"{new}\" already exists"), Some(&current)));
    }
    let about = store::lists::properties(&scope.tenant, &list_name(&root, old)).get(TAG).cloned();
    let was_current = current == old;
    if was_current {
        store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, Some(&json!(new)));
    }
    store::lists::set_property(&scope.tenant, &list_name(&root, new), TAG, Some(&about.unwrap_or_else(|| json!({}))));
    store::lists::set_property(&scope.tenant, &list_name(&root, old), TAG, None);
    let tasks = Tasks::read(&tag_scope(scope, &root, old));
    let moved = json_fields([("conversation_id", json!(list_name(&root, new)))]);
    for t in &tasks.todos {
        single::change(scope, Find::Anywhere, t.id, Change::fields(moved.clone()))
            .map_err(|e| refused(tasks.said(e), Some(&current)))?;
    }
    ok(
        json!({"oldName": old, "newName": new, "renamed": true, "taskCount": tasks.tops.len(),
               "wasCurrentTag": was_current, "message": format!("Successfully renamed tag from \"{old}\" to \"{new}\"")}),
        &current_tag(scope, &root),
    )
}

fn copy_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let (source, target) = (str_arg(args, "sourceName").trim(), str_arg(args, "targetName").trim());
    check_tag_name(target, "Target tag name", &current)?;
    let tags = tags_of(scope, &root);
    if !tags.iter().any(|t| t == source) {
        return Err(refused(format!("Source tag \"{source}\" does not exist"), Some(&current)));
    }
    if tags.iter().any(|t| t == target) {
        return Err(refused(format!("Target tag \"{target}\" already exists"), Some(&current)));
    }
    let description = args
        .get("description")
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
        .map_or_else(|| format!("Copy of \"{source}\" created on {}", locale_date()), str::to_string);
    make_tag(scope, &root, target, &description);
    copy_tasks(scope, &root, source, target, &current)?;
    ok(
        json!({"sourceName": source, "targetName": target, "copied": true, "description": description,
               "message": format!("Successfully copied tag from \"{source}\" to \"{target}\"")}),
        &current,
    )
}

/// The refusal of a tool that would call a model.
fn no_model(what: &str, tag: Option<&str>) -> Value {
    refused(
        format!("{what} needs an AI model, and this server (pg_todos) runs none. Write the tasks with add_task and add_subtask (manual fields), or run Task Master itself for this step."),
        tag,
    )
}

fn model_tool(scope: &Scope, args: &Value, name: &str) -> Answer {
    let tag = args.get("projectRoot").and_then(Value::as_str).map(|_| project(scope, args).tag);
    Err(no_model(name, tag.as_deref()))
}

macro_rules! model_tools {
    ($($static:ident $name:literal $run:ident),* $(,)?) => {
        $(
            fn $run(scope: &Scope, args: &Value) -> Answer {
                model_tool(scope, args, $name)
            }
            static $static: Tool = Tool {
                name: $name,
                description: super::listed_description(LISTED, $name),
                input_schema: || super::listed_schema(LISTED, $name),
                precheck: None,
                run: $run,
                writes: false,
                text: Some(text),
                accepts: Some(|| json!({"type": "object"})),
            };
        )*
    };
}

macro_rules! tools {
    ($($static:ident $name:literal $run:ident $writes:literal),* $(,)?) => {
        $(
            static $static: Tool = Tool {
                name: $name,
                description: super::listed_description(LISTED, $name),
                input_schema: || super::listed_schema(LISTED, $name),
                precheck: Some(|args| zod_check($name, args)),
                run: $run,
                writes: $writes,
                text: Some(text),
                accepts: None,
            };
        )*
    };
}

tools! {
    GET_TASKS "get_tasks" get_tasks false,
    GET_TASK "get_task" get_task false,
    NEXT_TASK "next_task" next_task false,
    SET_TASK_STATUS "set_task_status" set_task_status true,
    ADD_TASK "add_task" add_task true,
    ADD_SUBTASK "add_subtask" add_subtask true,
    UPDATE_SUBTASK "update_subtask" update_subtask true,
    REMOVE_TASK "remove_task" remove_task true,
    ADD_DEPENDENCY "add_dependency" add_dependency true,
    REMOVE_DEPENDENCY "remove_dependency" remove_dependency true,
    VALIDATE_DEPENDENCIES "validate_dependencies" validate_dependencies false,
    FIX_DEPENDENCIES "fix_dependencies" fix_dependencies false,
    LIST_TAGS "list_tags" list_tags false,
    ADD_TAG "add_tag" add_tag true,
    DELETE_TAG "delete_tag" delete_tag true,
    USE_TAG "use_tag" use_tag true,
    RENAME_TAG "rename_tag" rename_tag true,
    COPY_TAG "copy_tag" copy_tag true,
}

model_tools! {
    PARSE_PRD "parse_prd" parse_prd,
    EXPAND_TASK "expand_task" expand_task,
    EXPAND_ALL "expand_all" expand_all,
    ANALYZE "analyze_project_complexity" analyze_project_complexity,
    UPDATE "update" update,
    UPDATE_TASK "update_task" update_task,
    SCOPE_UP "scope_up_task" scope_up_task,
    SCOPE_DOWN "scope_down_task" scope_down_task,
    RESEARCH "research" research,
}

/// Task Master's tool descriptions and input schemas, as its server lists them.
static LISTED: &super::Listed = &[
(
    "get_tasks",
    "Get all tasks from Task Master, optionally filtering by status and including subtasks.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"status":{"description":"Filter tasks by status (e.g., 'pending', 'done') or multiple statuses separated by commas (e.g., 'blocked,deferred')","type":"string"},"withSubtasks":{"description":"Include subtasks nested within their parent tasks in the response","type":"boolean"},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "get_task",
    "Get detailed information about a specific task",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","minLength":1,"description":"Task ID(s) to get (can be comma-separated for multiple tasks)"},"status":{"description":"Filter subtasks by status (e.g., 'pending', 'done')","type":"string"},"projectRoot":{"type":"string","description":"Absolute path to the project root directory (Optional, usually from session)"},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "next_task",
    "Find the next task to work on based on dependencies and status",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"file":{"description":"Absolute path to the tasks file","type":"string"},"complexityReport":{"description":"Path to the complexity report file (relative to project root or absolute)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "set_task_status",
    "Set the status of one or more tasks or subtasks.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","minLength":1,"description":"Task ID or subtask ID (e.g., '15', '15.2'). Can be comma-separated to update multiple tasks/subtasks at once."},"status":{"type":"string","enum":["pending","in-progress","done","deferred","cancelled","blocked","review"],"description":"New status to set (e.g., 'pending', 'done', 'in-progress', 'review', 'deferred', 'cancelled')."},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Optional tag context to operate on","type":"string"}},"required":["id","status","projectRoot"]}"#,
),
(
    "add_task",
    "Add a new task using AI",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"prompt":{"description":"Description of the task to add (required if not using manual fields)","type":"string"},"title":{"description":"Task title (for manual task creation)","type":"string"},"description":{"description":"Task description (for manual task creation)","type":"string"},"details":{"description":"Implementation details (for manual task creation)","type":"string"},"testStrategy":{"description":"Test strategy (for manual task creation)","type":"string"},"dependencies":{"description":"Comma-separated list of task IDs this task depends on","type":"string"},"priority":{"description":"Task priority (high, medium, low)","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"},"research":{"description":"Whether to use research capabilities for task creation","type":"boolean"}},"required":["projectRoot"]}"#,
),
(
    "add_subtask",
    "Add a subtask to an existing task",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"Parent task ID (required)"},"taskId":{"description":"Existing task ID to convert to subtask","type":"string"},"title":{"description":"Title for the new subtask (when creating a new subtask)","type":"string"},"description":{"description":"Description for the new subtask","type":"string"},"details":{"description":"Implementation details for the new subtask","type":"string"},"status":{"description":"Status for the new subtask (default: 'pending')","type":"string"},"dependencies":{"description":"Comma-separated list of dependency IDs for the new subtask","type":"string"},"file":{"description":"Absolute path to the tasks file (default: tasks/tasks.json)","type":"string"},"skipGenerate":{"description":"Skip regenerating task files","type":"boolean"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "update_subtask",
    "Appends timestamped information to a specific subtask without replacing existing content. If you just want to update the subtask status, use set_task_status instead.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of the subtask to update in format \"parentId.subtaskId\" (e.g., \"5.2\"). Parent ID is the ID of the task that contains the subtask."},"prompt":{"description":"Information to add to the subtask. Required unless only updating metadata.","type":"string"},"research":{"description":"Use Perplexity AI for research-backed updates","type":"boolean"},"metadata":{"description":"JSON string of metadata to merge into subtask metadata. Example: '{\"ticketId\": \"JIRA-456\", \"reviewed\": true}'. Requires TASK_MASTER_ALLOW_METADATA_UPDATES=true in MCP environment.","type":"string"},"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "remove_task",
    "Remove a task or subtask permanently from the tasks list",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of the task or subtask to remove (e.g., '5' or '5.2'). Can be comma-separated to update multiple tasks/subtasks at once."},"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"confirm":{"description":"Whether to skip confirmation prompt (default: false)","type":"boolean"},"tag":{"description":"Specify which tag context to operate on. Defaults to the current active tag.","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "add_dependency",
    "Add a dependency relationship between two tasks",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of task that will depend on another task"},"dependsOn":{"type":"string","description":"ID of task that will become a dependency"},"file":{"description":"Absolute path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","dependsOn","projectRoot"]}"#,
),
(
    "remove_dependency",
    "Remove a dependency from a task",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"Task ID to remove dependency from"},"dependsOn":{"type":"string","description":"Task ID to remove as a dependency"},"file":{"description":"Absolute path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","dependsOn","projectRoot"]}"#,
),
(
    "validate_dependencies",
    "Check tasks for dependency issues (like circular references or links to non-existent tasks) without making changes.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "fix_dependencies",
    "Fix invalid dependencies in tasks automatically",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "list_tags",
    "List all available tags with task counts and metadata",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"showMetadata":{"description":"Whether to include metadata in the output (default: false)","type":"boolean"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["projectRoot"]}"#,
),
(
    "add_tag",
    "Create a new tag for organizing tasks in different contexts",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"type":"string","description":"Name of the new tag to create"},"copyFromCurrent":{"description":"Whether to copy tasks from the current tag (default: false)","type":"boolean"},"copyFromTag":{"description":"Specific tag to copy tasks from","type":"string"},"fromBranch":{"description":"Create tag name from current git branch (ignores name parameter)","type":"boolean"},"description":{"description":"Optional description for the tag","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["name","projectRoot"]}"#,
),
(
    "delete_tag",
    "Delete an existing tag and all its tasks",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"type":"string","description":"Name of the tag to delete"},"yes":{"description":"Skip confirmation prompts (default: true for MCP)","type":"boolean"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["name","projectRoot"]}"#,
),
(
    "use_tag",
    "Switch to a different tag context for task operations",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"type":"string","description":"Name of the tag to switch to"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["name","projectRoot"]}"#,
),
(
    "rename_tag",
    "Rename an existing tag",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"oldName":{"type":"string","description":"Current name of the tag to rename"},"newName":{"type":"string","description":"New name for the tag"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["oldName","newName","projectRoot"]}"#,
),
(
    "copy_tag",
    "Copy an existing tag to create a new tag with all tasks and metadata",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"sourceName":{"type":"string","description":"Name of the source tag to copy from"},"targetName":{"type":"string","description":"Name of the new tag to create"},"description":{"description":"Optional description for the new tag","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."}},"required":["sourceName","targetName","projectRoot"]}"#,
),
(
    "parse_prd",
    "Parse a Product Requirements Document (PRD) text file to automatically generate initial tasks. Reinitializing the project is not necessary to run this tool. It is recommended to run parse-prd after initializing the project and creating/importing a prd.txt file in the project root's .taskmaster/docs directory.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"input":{"default":".taskmaster/docs/prd.txt","description":"Absolute path to the PRD document file (.txt, .md, etc.)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"},"output":{"description":"Output path for tasks.json file (default: .taskmaster/tasks/tasks.json)","type":"string"},"numTasks":{"description":"Approximate number of top-level tasks to generate (default: 10). As the agent, if you have enough information, ensure to enter a number of tasks that would logically scale with project complexity. Setting to 0 will allow Taskmaster to determine the appropriate number of tasks based on the complexity of the PRD. Avoid entering numbers above 50 due to context window limitations.","type":"string"},"force":{"default":false,"description":"Overwrite existing output file without prompting.","type":"boolean"},"research":{"description":"Enable Taskmaster to use the research role for potentially more informed task generation. Requires appropriate API key.","type":"boolean"},"append":{"description":"Append generated tasks to existing file.","type":"boolean"}},"required":["projectRoot"]}"#,
),
(
    "expand_task",
    "Expand a task into subtasks for detailed implementation",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of task to expand"},"num":{"description":"Number of subtasks to generate","type":"string"},"research":{"default":false,"description":"Use research role for generation","type":"boolean"},"prompt":{"description":"Additional context for subtask generation","type":"string"},"file":{"description":"Path to the tasks file relative to project root (e.g., tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"force":{"default":false,"description":"Force expansion even if subtasks exist","type":"boolean"},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "expand_all",
    "Expand all pending tasks into subtasks based on complexity or defaults",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"num":{"description":"Target number of subtasks per task (uses complexity/defaults otherwise)","type":"string"},"research":{"description":"Enable research-backed subtask generation (e.g., using Perplexity)","type":"boolean"},"prompt":{"description":"Additional context to guide subtask generation for all tasks","type":"string"},"force":{"description":"Force regeneration of subtasks for tasks that already have them","type":"boolean"},"file":{"description":"Absolute path to the tasks file in the /tasks folder inside the project root (default: tasks/tasks.json)","type":"string"},"projectRoot":{"description":"Absolute path to the project root directory (derived from session if possible)","type":"string"},"tag":{"description":"Tag context to operate on","type":"string"}}}"#,
),
(
    "analyze_project_complexity",
    "Analyze task complexity and generate expansion recommendations.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"threshold":{"default":5,"description":"Complexity score threshold (1-10) to recommend expansion.","type":"integer","minimum":1,"maximum":10},"research":{"default":false,"description":"Use Perplexity AI for research-backed analysis.","type":"boolean"},"output":{"description":"Output file path relative to project root (default: .taskmaster/reports/task-complexity-report.json).","type":"string"},"file":{"description":"Path to the tasks file relative to project root (default: tasks/tasks.json).","type":"string"},"ids":{"description":"Comma-separated list of task IDs to analyze specifically (e.g., \"1,3,5\").","type":"string"},"from":{"description":"Starting task ID in a range to analyze.","type":"integer","exclusiveMinimum":0,"maximum":9007199254740991},"to":{"description":"Ending task ID in a range to analyze.","type":"integer","exclusiveMinimum":0,"maximum":9007199254740991},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["projectRoot"]}"#,
),
(
    "update",
    "Update multiple upcoming tasks (with ID >= 'from' ID) based on new context or changes provided in the prompt. Use 'update_task' instead for a single specific task or 'update_subtask' for subtasks.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"from":{"type":"string","description":"Task ID from which to start updating (inclusive). IMPORTANT: This tool uses 'from', not 'id'"},"prompt":{"type":"string","description":"Explanation of changes or new context to apply"},"research":{"description":"Use Perplexity AI for research-backed updates","type":"boolean"},"file":{"description":"Path to the tasks file relative to project root","type":"string"},"projectRoot":{"description":"The directory of the project. (Optional, usually from session)","type":"string"},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["from","prompt"]}"#,
),
(
    "update_task",
    "Updates a single task by ID with new information or context provided in the prompt.",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"ID of the task (e.g., '15') to update. Subtasks are supported using the update-subtask tool."},"prompt":{"description":"New information or context to incorporate into the task. Required unless only updating metadata.","type":"string"},"research":{"description":"Use Perplexity AI for research-backed updates","type":"boolean"},"append":{"description":"Append timestamped information to task details instead of full update","type":"boolean"},"metadata":{"description":"JSON string of metadata to merge into task metadata. Example: '{\"githubIssue\": 42, \"sprint\": \"Q1-S3\"}'. Requires TASK_MASTER_ALLOW_METADATA_UPDATES=true in MCP environment.","type":"string"},"file":{"description":"Absolute path to the tasks file","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["id","projectRoot"]}"#,
),
(
    "scope_up_task",
    "Increase the complexity of one or more tasks using AI",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"Comma-separated list of task IDs to scope up (e.g., \"1,3,5\")"},"strength":{"description":"Strength level: light, regular, or heavy (default: regular)","type":"string"},"prompt":{"description":"Custom prompt for specific scoping adjustments","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"},"research":{"description":"Whether to use research capabilities for scoping","type":"boolean"}},"required":["id","projectRoot"]}"#,
),
(
    "scope_down_task",
    "Decrease the complexity of one or more tasks using AI",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"id":{"type":"string","description":"Comma-separated list of task IDs to scope down (e.g., \"1,3,5\")"},"strength":{"description":"Strength level: light, regular, or heavy (default: regular)","type":"string"},"prompt":{"description":"Custom prompt for specific scoping adjustments","type":"string"},"file":{"description":"Path to the tasks file (default: tasks/tasks.json)","type":"string"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"},"research":{"description":"Whether to use research capabilities for scoping","type":"boolean"}},"required":["id","projectRoot"]}"#,
),
(
    "research",
    "Perform AI-powered research queries with project context",
    r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"query":{"type":"string","description":"Research query/prompt (required)"},"taskIds":{"description":"Comma-separated list of task/subtask IDs for context (e.g., \"15,16.2,17\")","type":"string"},"filePaths":{"description":"Comma-separated list of file paths for context (e.g., \"src/api.js,docs/readme.md\")","type":"string"},"customContext":{"description":"Additional custom context text to include in the research","type":"string"},"includeProjectTree":{"description":"Include project file tree structure in context (default: false)","type":"boolean"},"detailLevel":{"description":"Detail level for the research response (default: medium)","type":"string","enum":["low","medium","high"]},"saveTo":{"description":"Automatically save research results to specified task/subtask ID (e.g., \"15\" or \"15.2\")","type":"string"},"saveToFile":{"description":"Save research results to .taskmaster/docs/research/ directory (default: false)","type":"boolean"},"projectRoot":{"type":"string","description":"The directory of the project. Must be an absolute path."},"tag":{"description":"Tag context to operate on","type":"string"}},"required":["query","projectRoot"]}"#,
),
];

/// A project's tasks (of the list's tag) as `get_tasks` gives them with their subtasks.
fn list_as(scope: &Scope, conv: &str) -> Value {
    let scope = Scope { conversation: Some(conv.to_string()), ..scope.clone() };
    let tasks = Tasks::read(&scope);
    tasks.tops.iter().map(|i| tasks.task(&tasks.todos[*i], true)).collect()
}

/// The taskmaster dialect.
pub static DIALECT: super::Dialect = super::Dialect {
    name: "taskmaster",
    aliases: &[],
    runtime: "Task Master (task-master-ai)",
    description: "a task tracker's tools: tasks and dotted subtasks, next task, statuses, dependencies, tags",
    tools: &[
        &GET_TASKS,
        &GET_TASK,
        &NEXT_TASK,
        &SET_TASK_STATUS,
        &ADD_TASK,
        &ADD_SUBTASK,
        &UPDATE_SUBTASK,
        &REMOVE_TASK,
        &ADD_DEPENDENCY,
        &REMOVE_DEPENDENCY,
        &VALIDATE_DEPENDENCIES,
        &FIX_DEPENDENCIES,
        &LIST_TAGS,
        &ADD_TAG,
        &DELETE_TAG,
        &USE_TAG,
        &RENAME_TAG,
        &COPY_TAG,
        &PARSE_PRD,
        &EXPAND_TASK,
        &EXPAND_ALL,
        &ANALYZE,
        &UPDATE,
        &UPDATE_TASK,
        &SCOPE_UP,
        &SCOPE_DOWN,
        &RESEARCH,
    ],
    list_as: Some(super::ListAs {
        shape: "its tasks as `get_tasks` gives them with their subtasks: `[{id, title, description, …, subtasks}]`",
        read: list_as,
    }),
};
