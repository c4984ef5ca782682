//! The tools that write tasks: `set_task_status` (with the parent's status that follows its
//! subtasks'), `add_task`, `add_subtask`, `update_subtask` and `remove_task`.

use serde_json::{json, Value};

use super::super::dialect::Answer;
use super::super::helpers::{caller_id, str_arg};
use super::tasks::{id_list, no_model, ok, priority_of, project, refused, tasks_path, Tasks};
use crate::claims::Refusal;
use crate::error::Error;
use crate::formats::taskmaster::{status_of, status_word};
use crate::ops::single::{json_fields, Change, NewTodo};
use crate::ops::{claiming, dependencies, lists, single, Find, Scope};
use crate::status::Status;
use crate::todo::Todo;

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

pub(super) fn set_task_status(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn add_task(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn add_subtask(scope: &Scope, args: &Value) -> Answer {
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
pub(super) fn update_subtask(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn remove_task(scope: &Scope, args: &Value) -> Answer {
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
