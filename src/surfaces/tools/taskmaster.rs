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

use serde_json::{json, Map, Value};

use super::{caller_id, error, error_message, js_pretty, str_arg, Answer, Tool};
use crate::claims::Refusal;
use crate::error::Error;
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::whole_list::{self, Kept};
use crate::ops::{claiming, dependencies, Find, Scope};
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

/// The key orders of Task Master's objects, most specific first (see `js_pretty`).
const MODELS: &[&[&str]] = &[
    &["data", "version", "tag"],
    &["version", "name"],
    &["id", "title", "status", "priority", "dependencies", "parentId"],
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
        "parentTaskId",
        "parentId",
        "createdAt",
        "updatedAt",
    ],
    &["tasks", "filter", "stats"],
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
    &["message", "nextTask", "isSubtask", "nextSteps"],
    &["nextTask", "isSubtask", "nextSteps"],
    &["taskId", "message", "telemetryData", "tagInfo"],
    &["message", "subtask"],
    &[
        "message",
        "subtaskId",
        "parentId",
        "subtask",
        "tasksPath",
        "useResearch",
        "telemetryData",
        "tagInfo",
    ],
    &["totalTasks", "successful", "failed", "removedTasks", "message", "tasksPath", "tag"],
    &["message", "taskId", "dependencyId"],
    &["message", "tasksPath"],
    &["tags", "currentTag", "totalTags"],
    &["name", "isCurrent", "completedTasks", "tasks", "created", "description", "taskCount", "statusBreakdown"],
    &["tagName", "created", "tasksCopied", "sourceTag", "description", "message"],
    &["tagName", "deleted", "tasksDeleted", "wasCurrentTag", "switchedToMaster", "message"],
    &["previousTag", "currentTag", "switched", "taskCount", "message"],
    &["oldName", "newName", "renamed", "taskCount", "wasCurrentTag", "message"],
    &["sourceName", "targetName", "copied", "tasksCopied", "description", "message"],
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

/// Task Master's word for a status.
fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pending => "pending",
        Status::InProgress => "in-progress",
        Status::Completed => "done",
        Status::Canceled => "cancelled",
        Status::Deferred => "deferred",
        Status::Blocked => "blocked",
        Status::Review => "review",
    }
}

fn status_of(word: &str) -> Option<Status> {
    Some(match word {
        "pending" => Status::Pending,
        "in-progress" => Status::InProgress,
        "done" | "completed" => Status::Completed,
        "cancelled" => Status::Canceled,
        "deferred" => Status::Deferred,
        "blocked" => Status::Blocked,
        "review" => Status::Review,
        _ => return None,
    })
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
        let claims = store::read::claims(&scope.tenant, &ids).into_iter().map(|(id, h, live)| (id, (h, live))).collect();
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
        for (i, t) in todos.iter().enumerate() {
            match parent_of(t) {
                Some(p) => subs.entry(p).or_default().push(i),
                None => tops.push(i),
            }
        }
        let at = todos.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
        Tasks { todos, edges, tops, subs, by_tm, at, claims }
    }

    fn find(&self, tm_id: &str) -> Option<&Todo> {
        self.by_tm.get(tm_id.trim()).map(|i| &self.todos[*i])
    }

    fn by_id(&self, id: i64) -> Option<&Todo> {
        self.at.get(&id).map(|i| &self.todos[*i])
    }

    fn is_subtask(&self, t: &Todo) -> bool {
        !self.tops.iter().any(|i| self.todos[*i].id == t.id)
    }

    /// The top-level task a subtask is under.
    fn parent(&self, t: &Todo) -> Option<&Todo> {
        let p = self.subs.iter().find(|(_, s)| s.iter().any(|i| self.todos[*i].id == t.id))?.0;
        Some(&self.todos[*p])
    }

    fn subtasks(&self, t: &Todo) -> Vec<&Todo> {
        let i = self.at[&t.id];
        self.subs.get(&i).map(|s| s.iter().map(|j| &self.todos[*j]).collect()).unwrap_or_default()
    }

    /// The Task Master ids `t` depends on: a sibling subtask by its number, others by id
    /// (a top-level task's as a number).
    fn dependencies(&self, t: &Todo) -> Vec<Value> {
        let parent = self.parent(t).map(caller_id);
        self.edges
            .iter()
            .filter(|(a, _, _)| *a == t.id)
            .filter_map(|(_, b, _)| self.by_id(*b))
            .map(|d| {
                let id = caller_id(d);
                match (id.split_once('.'), &parent) {
                    (Some((p, s)), Some(mine)) if p == mine => number(s).map_or_else(|| json!(id), |n| json!(n)),
                    (Some(_), _) => json!(id),
                    (None, _) => number(&id).map_or_else(|| json!(id), |n| json!(n)),
                }
            })
            .collect()
    }

    /// Whether every dependency of `t` is done.
    fn ready(&self, t: &Todo) -> bool {
        self.edges
            .iter()
            .filter(|(a, _, _)| *a == t.id)
            .all(|(_, b, _)| self.by_id(*b).is_some_and(|d| d.status == Status::Completed))
    }

    /// Whether another agent holds a live claim on `t`.
    fn held_by_other(&self, t: &Todo, agent: Option<&str>) -> Option<&str> {
        self.claims.get(&t.id).filter(|(h, live)| *live && Some(h.as_str()) != agent).map(|(h, _)| h.as_str())
    }

    /// A task (with its subtasks) as Task Master's tools give it.
    fn task(&self, t: &Todo) -> Value {
        let mut o = self.fields(t);
        o.insert("subtasks".into(), self.subtasks(t).iter().map(|s| self.subtask(s, t)).collect());
        Value::Object(o)
    }

    /// A subtask of `parent`: its number within its task, and its parent's id.
    fn subtask(&self, s: &Todo, parent: &Todo) -> Value {
        let mut o = self.fields(s);
        let id = caller_id(s);
        let n = id.split_once('.').and_then(|(_, n)| number(n));
        o.insert("id".into(), n.map_or_else(|| json!(id), |n| json!(n)));
        o.insert("parentId".into(), json!(caller_id(parent)));
        Value::Object(o)
    }

    fn fields(&self, t: &Todo) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("id".into(), json!(caller_id(t)));
        o.insert("title".into(), json!(t.subject));
        o.insert("description".into(), json!(t.description.clone().unwrap_or_default()));
        o.insert("details".into(), json!(t.plan.clone().unwrap_or_default()));
        o.insert("testStrategy".into(), json!(t.completion_criteria.clone().unwrap_or_default()));
        o.insert("status".into(), json!(status_word(t.status)));
        o.insert("dependencies".into(), Value::Array(self.dependencies(t)));
        o.insert("priority".into(), json!(t.priority.clone().unwrap_or_else(|| "medium".into())));
        o.insert("updatedAt".into(), json!(crate::time::iso8601(t.updated_us)));
        o
    }

    /// The next top-level task number of the tag.
    fn next_number(&self) -> i64 {
        self.tops.iter().filter_map(|i| number(&caller_id(&self.todos[*i]))).max().unwrap_or(0) + 1
    }
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
            let mut task = tasks.task(t);
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
            Some(parent) => tasks.subtask(t, parent),
            None => {
                let mut task = tasks.task(t);
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
        (-rank(priority), tasks.dependencies(s).len(), key(s))
    });
    if let Some((s, parent)) = candidates.first() {
        let deps: Vec<Value> = tasks
            .dependencies(s)
            .into_iter()
            .map(|d| match d {
                Value::Number(n) => json!(format!("{}.{n}", caller_id(parent))),
                other => other,
            })
            .collect();
        let next = json!({"id": caller_id(s), "title": s.subject, "status": status_word(s.status),
                          "priority": s.priority.clone().or_else(|| parent.priority.clone()).unwrap_or_else(|| "medium".into()),
                          "dependencies": deps, "parentId": number(&caller_id(parent)).map_or_else(|| json!(caller_id(parent)), |n| json!(n))});
        let steps = format!("When ready to work on the subtask, use set-status to set the status to \"in progress\" {SUBTASK_ADVICE}");
        return ok(json!({"nextTask": next, "isSubtask": true, "nextSteps": steps}), &p.tag);
    }
    let mut top: Vec<&Todo> = tasks.tops.iter().map(|i| &tasks.todos[*i]).filter(|t| eligible(t)).collect();
    top.sort_by_key(|t| (-rank(t.priority.as_deref()), tasks.dependencies(t).len(), key(t)));
    match top.first() {
        Some(t) => {
            let steps = format!("When ready to work on the task, use set-status to set the status to \"in progress\" {TASK_ADVICE}");
            ok(json!({"nextTask": tasks.task(t), "isSubtask": false, "nextSteps": steps}), &p.tag)
        }
        None => ok(
            json!({"message": "No eligible next task found. All tasks are either completed or have unsatisfied dependencies",
                   "nextTask": null}),
            &p.tag,
        ),
    }
}

/// Sets one task's status: `in-progress` claims it for the agent in context (fenced; without
/// an agent, a plain change), `done` or `pending` from the agent's own claim finishes or
/// releases it; a status it has already is no change. A subtask's status sets its task's:
/// all done, done; any started or done, in progress; else pending.
fn set_one(scope: &Scope, tasks: &Tasks, t: &Todo, to: Status) -> Result<(), String> {
    if t.status == to {
        return Ok(());
    }
    let mine = tasks.claims.get(&t.id).is_some_and(|(h, live)| *live && Some(h.as_str()) == scope.agent.as_deref());
    if let Some(holder) = tasks.held_by_other(t, scope.agent.as_deref()) {
        return Err(format!("task {} is in progress, claimed by {holder}", caller_id(t)));
    }
    let done = match (to, t.status) {
        (Status::InProgress, Status::Pending) if scope.agent.is_some() => {
            claiming::claim(scope, Some(t.id), None).map(|_| ())
        }
        (Status::Completed | Status::Canceled, Status::InProgress) if mine => {
            claiming::finish(scope, t.id, None, to, None).map(|_| ())
        }
        (Status::Pending, Status::InProgress) if mine => claiming::release(scope, t.id, None).map(|_| ()),
        _ => single::change(scope, Find::Anywhere, t.id, Change { status: Some(to), via_reopen: true, ..Change::default() })
            .map(|_| ()),
    };
    done.map_err(|e| match e {
        Error::Claim(Refusal::HeldBy { holder, .. }) => {
            format!("task {} is in progress, claimed by {holder}", caller_id(t))
        }
        Error::Claim(Refusal::Blocked { .. }) => format!("task {} waits for tasks that are not done", caller_id(t)),
        other => other.to_string(),
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
            refused(format!("Failed to set task status: Failed to update task status for {id}: {why}"), Some(&p.tag))
        };
        let Some(t) = tasks.find(id) else {
            let what = match id.split_once('.') {
                Some((parent, _)) if tasks.find(parent).is_none() => format!("Parent task {parent} not found"),
                Some((parent, _)) => format!("Subtask {id} not found in parent task {parent}"),
                None => format!("Task {id} not found"),
            };
            return Err(fail(what));
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
    let title = args.get("title").and_then(Value::as_str).filter(|t| !t.trim().is_empty());
    let Some(title) = title else {
        return Err(if args.get("prompt").and_then(Value::as_str).is_some_and(|s| !s.is_empty()) {
            no_model("add_task with a prompt", Some(&p.tag))
        } else {
            refused("Either the prompt parameter or both title and description parameters are required for adding a task", Some(&p.tag))
        });
    };
    let tasks = Tasks::read(&p.scope);
    let n = tasks.next_number();
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
    let t = single::add(&p.scope, NewTodo { fields, ..NewTodo::default() }).map_err(|e| refused(e, Some(&p.tag)))?;
    for d in deps {
        dependencies::block(&p.scope, t.id, d.id).map_err(|e| refused(e, Some(&p.tag)))?;
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
    let n = tasks
        .subtasks(parent)
        .iter()
        .filter_map(|s| caller_id(s).split_once('.').and_then(|(_, n)| number(n)))
        .max()
        .unwrap_or(0)
        + 1;
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
        .map_err(|e| refused(e, Some(&p.tag)))?;
    // a dependency: a sibling by its number, else any task or subtask by its id
    for d in id_list(args.get("dependencies").and_then(Value::as_str).unwrap_or_default()) {
        let target = if d.contains('.') { tasks.find(d) } else { tasks.find(&format!("{}.{d}", caller_id(parent))) };
        if let Some(target) = target.or_else(|| tasks.find(d)) {
            dependencies::block(&p.scope, t.id, target.id).map_err(|e| refused(e, Some(&p.tag)))?;
        }
    }
    let tasks = Tasks::read(&p.scope);
    let sub = tasks.find(&id).map(|s| tasks.subtask(s, parent)).unwrap_or_default();
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
    single::change(&p.scope, Find::Anywhere, sub.id, change).map_err(|e| refused(e, Some(&p.tag)))?;
    let tasks = Tasks::read(&p.scope);
    let updated = tasks.find(id).map(|s| tasks.subtask(s, parent)).unwrap_or_default();
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
                let mut s = tasks.subtask(t, parent);
                s["parentTaskId"] = number(&caller_id(parent)).map_or_else(|| json!(caller_id(parent)), |n| json!(n));
                messages.push(format!("Successfully removed subtask {id} from tag '{}'", p.tag));
                s
            }
            None => {
                for s in tasks.subtasks(t) {
                    single::delete(&p.scope, Find::Anywhere, s.id).map_err(|e| refused(e, Some(&p.tag)))?;
                }
                messages.push(format!("Successfully removed task {id} from tag '{}'", p.tag));
                tasks.task(t)
            }
        };
        single::delete(&p.scope, Find::Anywhere, t.id).map_err(|e| refused(e, Some(&p.tag)))?;
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
        Ok(true) => {}
        Ok(false) => {
            return Err(refused(format!("Dependency {on} already exists in task {id}."), Some(&p.tag)));
        }
        Err(Error::Edge(_)) => {
            return Err(refused(
                format!("Cannot add dependency {on} to task {id} as it would create a circular dependency."),
                Some(&p.tag),
            ))
        }
        Err(e) => return Err(refused(e, Some(&p.tag))),
    }
    let as_id = |s: &str| number(s).map_or_else(|| json!(s), |n| json!(n));
    ok(
        json!({"message": format!("Successfully added dependency: Task {id} now depends on {on}"),
               "taskId": as_id(id), "dependencyId": as_id(on)}),
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
    let removed = match dependency_end(&tasks, on) {
        Some(to) => dependencies::unblock(&p.scope, from.id, to.id).map_err(|e| refused(e, Some(&p.tag)))?,
        None => false,
    };
    if !removed {
        return Err(refused(format!("Task {id} does not depend on {on}, no changes made."), Some(&p.tag)));
    }
    let as_id = |s: &str| number(s).map_or_else(|| json!(s), |n| json!(n));
    ok(
        json!({"message": format!("Successfully removed dependency: Task {id} no longer depends on {on}"),
               "taskId": as_id(id), "dependencyId": as_id(on)}),
        &p.tag,
    )
}

/// The store keeps dependencies valid (both ends exist, no cycles, no self-dependency), so
/// there is never anything to report.
fn validate_dependencies(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    ok(
        json!({"message": "Dependencies validated successfully", "tasksPath": tasks_path(&p.root)}),
        &p.tag,
    )
}

/// A tag name as Task Master allows it: letters, digits, `-` and `_`.
fn check_tag_name(name: &str) -> Result<(), Value> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(refused("Tag name can only contain letters, numbers, hyphens, and underscores", None));
    }
    Ok(())
}

/// The project's tags: `master`, then the others by name.
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

fn list_tags(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let show_metadata = args.get("showMetadata").and_then(Value::as_bool).unwrap_or(false);
    let tags: Vec<Value> = tags_of(scope, &root)
        .iter()
        .map(|tag| {
            let tasks = Tasks::read(&tag_scope(scope, &root, tag));
            let tops: Vec<&Todo> = tasks.tops.iter().map(|i| &tasks.todos[*i]).collect();
            let done = tops.iter().filter(|t| t.status.is_terminal()).count();
            let about = store::lists::properties(&scope.tenant, &list_name(&root, tag));
            let about = about.get(TAG).cloned().unwrap_or_default();
            let mut o = json!({"name": tag, "isCurrent": *tag == current, "completedTasks": done, "tasks": [],
                               "taskCount": tops.len()});
            if show_metadata {
                o["created"] = about.get("created").cloned().unwrap_or(Value::Null);
                o["description"] = about.get("description").cloned().unwrap_or_else(|| json!(""));
                let mut breakdown = Map::new();
                for t in &tops {
                    let e = breakdown.entry(status_word(t.status)).or_insert(json!(0));
                    *e = json!(e.as_i64().unwrap_or(0) + 1);
                }
                o["statusBreakdown"] = Value::Object(breakdown);
            }
            o
        })
        .collect();
    let total = tags.len();
    ok(json!({"tags": tags, "currentTag": current, "totalTags": total}), &current)
}

/// Records that a tag exists, with its description and when it was made.
fn make_tag(scope: &Scope, root: &str, tag: &str, description: &str) {
    let about = json!({"description": description, "created": crate::time::iso8601(crate::time::now_us())});
    store::lists::set_property(&scope.tenant, &list_name(root, tag), TAG, Some(&about));
}

/// Copies a tag's tasks (ids, dependencies and subtasks kept) into another tag's list.
fn copy_tasks(scope: &Scope, root: &str, from: &str, to: &str) -> Result<usize, Value> {
    let source = Tasks::read(&tag_scope(scope, root, from));
    let target = tag_scope(scope, root, to);
    let mut made: HashMap<i64, i64> = HashMap::new();
    let refuse = |e: Error| refused(e, None);
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
    let name = str_arg(args, "name").trim();
    check_tag_name(name)?;
    if args.get("fromBranch").and_then(Value::as_bool).unwrap_or(false) {
        return Err(refused("Creating a tag from a git branch is not supported by this server: name the tag", None));
    }
    if tags_of(scope, &root).iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" already exists"), None));
    }
    let description = args.get("description").and_then(Value::as_str).map(str::to_string);
    let from = match args.get("copyFromTag").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        Some(t) => Some(t.to_string()),
        None if args.get("copyFromCurrent").and_then(Value::as_bool).unwrap_or(false) => {
            Some(current_tag(scope, &root))
        }
        None => None,
    };
    if let Some(from) = &from {
        if !tags_of(scope, &root).contains(from) {
            return Err(refused(format!("Source tag \"{from}\" does not exist"), None));
        }
    }
    let description = description.unwrap_or_else(|| match &from {
        Some(f) => format!("Copy of \"{f}\" tag"),
        None => format!("Tag created on {}", crate::time::iso8601(crate::time::now_us())),
    });
    make_tag(scope, &root, name, &description);
    let copied = match &from {
        Some(f) => copy_tasks(scope, &root, f, name)?,
        None => 0,
    };
    let about = store::lists::properties(&scope.tenant, &list_name(&root, name));
    let created = about.get(TAG).and_then(|a| a.get("created")).cloned().unwrap_or(Value::Null);
    let mut data = json!({"tagName": name, "created": created, "tasksCopied": copied, "description": description,
                          "message": format!("Successfully created tag \"{name}\"")});
    if let Some(f) = from {
        data["sourceTag"] = json!(f);
    }
    ok(data, &current_tag(scope, &root))
}

fn delete_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let name = str_arg(args, "name").trim();
    if name == "master" {
        return Err(refused("Cannot delete the \"master\" tag", None));
    }
    if !tags_of(scope, &root).iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" does not exist"), None));
    }
    let current = current_tag(scope, &root);
    let was_current = current == name;
    if was_current {
        store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, None);
    }
    store::lists::set_property(&scope.tenant, &list_name(&root, name), TAG, None);
    let tasks = Tasks::read(&tag_scope(scope, &root, name));
    let count = tasks.tops.len();
    let s = tag_scope(scope, &root, name);
    for t in tasks.todos.iter().rev() {
        single::delete(&s, Find::Anywhere, t.id).map_err(|e| refused(e, None))?;
    }
    ok(
        json!({"tagName": name, "deleted": true, "tasksDeleted": count, "wasCurrentTag": was_current,
               "switchedToMaster": was_current, "message": format!("Successfully deleted tag \"{name}\"")}),
        &current_tag(scope, &root),
    )
}

fn use_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let name = str_arg(args, "name").trim();
    if !tags_of(scope, &root).iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" does not exist"), None));
    }
    let previous = current_tag(scope, &root);
    let value = (name != "master").then(|| json!(name));
    store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, value.as_ref());
    let count = Tasks::read(&tag_scope(scope, &root, name)).tops.len();
    ok(
        json!({"previousTag": previous, "currentTag": name, "switched": true, "taskCount": count,
               "message": format!("Successfully switched to tag \"{name}\"")}),
        name,
    )
}

fn rename_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let (old, new) = (str_arg(args, "oldName").trim(), str_arg(args, "newName").trim());
    if old == "master" {
        return Err(refused("Cannot rename the \"master\" tag", None));
    }
    check_tag_name(new)?;
    let tags = tags_of(scope, &root);
    if !tags.iter().any(|t| t == old) {
        return Err(refused(format!("Tag \"{old}\" does not exist"), None));
    }
    if tags.iter().any(|t| t == new) {
        return Err(refused(format!("Tag \"{new}\" already exists"), None));
    }
    let about = store::lists::properties(&scope.tenant, &list_name(&root, old)).get(TAG).cloned();
    let was_current = current_tag(scope, &root) == old;
    if was_current {
        store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, Some(&json!(new)));
    }
    store::lists::set_property(&scope.tenant, &list_name(&root, new), TAG, Some(&about.unwrap_or_else(|| json!({}))));
    store::lists::set_property(&scope.tenant, &list_name(&root, old), TAG, None);
    let tasks = Tasks::read(&tag_scope(scope, &root, old));
    let moved = json_fields([("conversation_id", json!(list_name(&root, new)))]);
    for t in &tasks.todos {
        single::change(scope, Find::Anywhere, t.id, Change::fields(moved.clone())).map_err(|e| refused(e, None))?;
    }
    ok(
        json!({"oldName": old, "newName": new, "renamed": true, "taskCount": tasks.tops.len(),
               "wasCurrentTag": was_current, "message": format!("Successfully renamed tag from \"{old}\" to \"{new}\"")}),
        &current_tag(scope, &root),
    )
}

fn copy_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let (source, target) = (str_arg(args, "sourceName").trim(), str_arg(args, "targetName").trim());
    check_tag_name(target)?;
    let tags = tags_of(scope, &root);
    if !tags.iter().any(|t| t == source) {
        return Err(refused(format!("Source tag \"{source}\" does not exist"), None));
    }
    if tags.iter().any(|t| t == target) {
        return Err(refused(format!("Target tag \"{target}\" already exists"), None));
    }
    let description = args
        .get("description")
        .and_then(Value::as_str)
        .map_or_else(|| format!("Copy of \"{source}\" created on {}", crate::time::iso8601(crate::time::now_us())), str::to_string);
    make_tag(scope, &root, target, &description);
    let copied = copy_tasks(scope, &root, source, target)?;
    ok(
        json!({"sourceName": source, "targetName": target, "copied": true, "tasksCopied": copied,
               "description": description,
               "message": format!("Successfully copied tag from \"{source}\" to \"{target}\"")}),
        &current_tag(scope, &root),
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
                description: schemas::description($name),
                input_schema: || schemas::schema($name),
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
                description: schemas::description($name),
                input_schema: || schemas::schema($name),
                precheck: None,
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
mod schemas {
    use serde_json::Value;

    /// (name, description, input schema)
    const TOOLS: &[(&str, &str, &str)] = &[];

    /// Whether two names are the same (a `const fn`: the tools' statics take their
    /// descriptions from `TOOLS`).
    const fn same(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    pub const fn description(name: &str) -> &'static str {
        let mut i = 0;
        while i < TOOLS.len() {
            if same(TOOLS[i].0, name) {
                return TOOLS[i].1;
            }
            i += 1;
        }
        ""
    }

    pub fn schema(name: &str) -> Value {
        let raw = TOOLS.iter().find(|t| t.0 == name).map_or("{\"type\":\"object\"}", |t| t.2);
        serde_json::from_str(raw).expect("Task Master's schema is JSON")
    }
}

/// A project's tasks (of the list's tag) as `get_tasks` gives them with their subtasks.
fn list_as(scope: &Scope, conv: &str) -> Value {
    let scope = Scope { conversation: Some(conv.to_string()), ..scope.clone() };
    let tasks = Tasks::read(&scope);
    tasks.tops.iter().map(|i| tasks.task(&tasks.todos[*i])).collect()
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
