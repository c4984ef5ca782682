//! The claude-tasks dialect: Claude Code's task tools `TaskCreate`, `TaskGet`, `TaskList`,
//! `TaskUpdate`, with their input schemas, results and the text the model reads. A task is
//! a todo of the conversation in context (its list: Claude Code's task list) that is not
//! canceled or archived; its id is the todo's id as a string (never reused); `blocks` and
//! `blockedBy` are dependencies (`todo.dependencies`), `owner` and `metadata` columns of
//! their own. Claude Code has no blocked or canceled status: a blocked todo is `pending` to
//! it, a canceled one is not on its list.

use serde_json::{json, Map, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{claude_status_name, error, error_message, failed, metadata, parse_string_id, session, str_arg};
use crate::error::Error;
use crate::ops::single::{self, Change, NewTodo};
use crate::ops::whole_list::{self, Kept};
use crate::ops::{dependencies, Find, Scope};
use crate::status::Status;
use crate::store;
use crate::todo::Todo;

static CREATE: Tool = Tool {
    name: "TaskCreate",
    description: "Create a task in the task list. Use it to plan and track multi-step work; a new task is pending, with no owner and no dependencies.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["subject", "description"],
            "properties": {
                "subject": {"type": "string", "description": "A brief title for the task"},
                "description": {"type": "string", "description": "What needs to be done"},
                "activeForm": {"type": "string", "description": "Present continuous form shown in spinner when in_progress (e.g., \"Running tests\")"},
                "metadata": {"type": "object", "additionalProperties": true, "description": "Arbitrary metadata to attach to the task"}
            }
        })
    },
    precheck: None,
    run: create,
    effect: Effect::Adds,
    output_schema: None,
    text: Some(create_text),
    accepts: None,
};

static GET: Tool = Tool {
    name: "TaskGet",
    description: "Get a task from the task list by its id, with its description and dependencies.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["taskId"],
            "properties": {"taskId": {"type": "string", "description": "The ID of the task to retrieve"}}
        })
    },
    precheck: None,
    run: get,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(get_text),
    accepts: None,
};

static LIST: Tool = Tool {
    name: "TaskList",
    description: "List all tasks in the task list, with their status, owner and what blocks them.",
    input_schema: || json!({"type": "object", "additionalProperties": false, "properties": {}}),
    precheck: None,
    run: list,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(list_text),
    accepts: None,
};

static UPDATE: Tool = Tool {
    name: "TaskUpdate",
    description: "Update a task in the task list: its subject, description, activeForm, status (deleted removes it), owner, metadata, or what it blocks and is blocked by.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["taskId"],
            "properties": {
                "taskId": {"type": "string", "description": "The ID of the task to update"},
                "subject": {"type": "string"},
                "description": {"type": "string"},
                "activeForm": {"type": "string"},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "deleted"]},
                "addBlocks": {"type": "array", "items": {"type": "string"}, "description": "Task IDs that this task blocks"},
                "addBlockedBy": {"type": "array", "items": {"type": "string"}, "description": "Task IDs that block this task"},
                "owner": {"type": "string"},
                "metadata": {"type": "object", "description": "Metadata keys to merge into the task. Set a key to null to delete it."}
            }
        })
    },
    precheck: None,
    run: update,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(update_text),
    accepts: None,
};

fn id_string(id: i64) -> Value {
    json!(id.to_string())
}

/// The conversation's tasks, in id order.
fn tasks(scope: &Scope, conv: &str) -> Vec<Todo> {
    let mut todos = whole_list::stored(scope, conv, Kept::Uncanceled);
    todos.sort_by_key(|t| t.id);
    todos
}

/// Each task's dependencies: (blocks, blockedBy, blockedBy still open), ids in order.
struct Edges(Vec<(i64, i64, bool)>);

impl Edges {
    fn of(scope: &Scope, ids: &[i64]) -> Edges {
        Edges(if ids.is_empty() { Vec::new() } else { store::edges::touching(&scope.tenant, ids) })
    }

    fn blocks(&self, id: i64) -> Vec<Value> {
        let mut ids: Vec<i64> = self.0.iter().filter(|(_, on, _)| *on == id).map(|(t, _, _)| *t).collect();
        ids.sort_unstable();
        ids.into_iter().map(id_string).collect()
    }

    fn blocked_by(&self, id: i64, open_only: bool) -> Vec<Value> {
        self.0
            .iter()
            .filter(|(t, _, open)| *t == id && (*open || !open_only))
            .map(|(_, on, _)| id_string(*on))
            .collect()
    }
}

/// Hidden from TaskList: a task whose metadata marks it `_internal`.
fn internal(t: &Todo) -> bool {
    metadata(t).get("_internal").is_some_and(|v| !v.is_null() && *v != json!(false))
}

/// The conversation's task list as TaskList returns it (`{"tasks": [...]}`): id order,
/// `_internal` tasks hidden, `owner` only when set, `blockedBy` only the blockers still
/// open.
pub fn task_list(scope: &Scope, conv: &str) -> Value {
    let all = tasks(scope, conv);
    let edges = Edges::of(scope, &all.iter().map(|t| t.id).collect::<Vec<_>>());
    let shown: Vec<Value> = all
        .iter()
        .filter(|t| !internal(t))
        .map(|t| {
            let mut task = json!({"id": id_string(t.id), "subject": t.subject, "status": claude_status_name(t.status)});
            if let Some(owner) = &t.owner {
                task["owner"] = json!(owner);
            }
            task["blockedBy"] = json!(edges.blocked_by(t.id, true));
            task
        })
        .collect();
    json!({ "tasks": shown })
}

fn create(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "TaskCreate")?;
    if str_arg(args, "subject").trim().is_empty() {
        return Err(error("invalid_arguments", "TaskCreate: subject must not be empty"));
    }
    let meta: Map<String, Value> = args
        .get("metadata")
        .and_then(Value::as_object)
        .map(|m| m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default();
    let mut new = NewTodo::titled(scope, str_arg(args, "subject"), Some(str_arg(args, "description")));
    new.fields.insert("conversation_id".into(), json!(conv));
    if let Some(active) = args.get("activeForm").and_then(Value::as_str).filter(|a| !a.trim().is_empty()) {
        new.fields.insert("active_form".into(), json!(active));
    }
    if !meta.is_empty() {
        new.fields.insert("metadata".into(), Value::Object(meta));
    }
    let t = single::add(scope, new).map_err(failed)?;
    Ok(json!({"task": {"id": id_string(t.id), "subject": t.subject}}))
}

fn create_text(out: &Value) -> String {
    match out.get("task") {
        Some(task) => format!("Task #{} created successfully: {}", str_arg(task, "id"), str_arg(task, "subject")),
        None => error_message(out).unwrap_or("TaskCreate failed").to_string(),
    }
}

/// The task `task_id` names in the list, if any.
fn find<'a>(list: &'a [Todo], task_id: &str) -> Option<&'a Todo> {
    let id = parse_string_id(task_id)?;
    list.iter().find(|t| t.id == id)
}

fn get(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "TaskGet")?;
    let list = tasks(scope, conv);
    let Some(t) = find(&list, str_arg(args, "taskId")) else {
        return Ok(json!({"task": null}));
    };
    let edges = Edges::of(scope, &[t.id]);
    Ok(json!({"task": {
        "id": id_string(t.id),
        "subject": t.subject,
        "description": t.description.as_deref().unwrap_or(""),
        "status": claude_status_name(t.status),
        "blocks": edges.blocks(t.id),
        "blockedBy": edges.blocked_by(t.id, false),
    }}))
}

/// `#2, #5`
fn hash_ids(ids: &Value) -> String {
    ids.as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|i| format!("#{}", i.as_str().unwrap_or("")))
        .collect::<Vec<_>>()
        .join(", ")
}

fn non_empty(v: &Value) -> bool {
    v.as_array().is_some_and(|a| !a.is_empty())
}

fn get_text(out: &Value) -> String {
    let Some(task) = out.get("task").filter(|t| t.is_object()) else {
        return error_message(out).unwrap_or("Task not found").to_string();
    };
    let mut lines = vec![
        format!("Task #{}: {}", str_arg(task, "id"), str_arg(task, "subject")),
        format!("Status: {}", str_arg(task, "status")),
        format!("Description: {}", str_arg(task, "description")),
    ];
    if non_empty(&task["blockedBy"]) {
        lines.push(format!("Blocked by: {}", hash_ids(&task["blockedBy"])));
    }
    if non_empty(&task["blocks"]) {
        lines.push(format!("Blocks: {}", hash_ids(&task["blocks"])));
    }
    lines.join("\n")
}

fn list(scope: &Scope, _args: &Value) -> Answer {
    Ok(task_list(scope, session(scope, "TaskList")?))
}

fn list_text(out: &Value) -> String {
    let Some(tasks) = out.get("tasks").and_then(Value::as_array) else {
        return error_message(out).unwrap_or("TaskList failed").to_string();
    };
    if tasks.is_empty() {
        return "No tasks found".into();
    }
    tasks
        .iter()
        .map(|t| {
            let owner = t.get("owner").and_then(Value::as_str).map(|o| format!(" ({o})")).unwrap_or_default();
            let blocked = if non_empty(&t["blockedBy"]) {
                format!(" [blocked by {}]", hash_ids(&t["blockedBy"]))
            } else {
                String::new()
            };
            format!("#{} [{}] {}{owner}{blocked}", str_arg(t, "id"), str_arg(t, "status"), str_arg(t, "subject"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// TaskUpdate's refusal: a normal result (`success: false`), nothing written.
fn refused(task_id: &str, why: impl Into<String>) -> Value {
    json!({"success": false, "taskId": task_id, "updatedFields": [], "error": why.into()})
}

/// The ids of `key` (an array of task ids), each a task of the list, or the refusal.
fn task_ids(args: &Value, key: &str, list: &[Todo], task_id: &str) -> Result<Vec<i64>, Value> {
    let mut ids = Vec::new();
    for v in args.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default() {
        let s = v.as_str().unwrap_or("");
        match find(list, s).map(|t| t.id) {
            Some(id) if !ids.contains(&id) => ids.push(id),
            Some(_) => {}
            None => return Err(refused(task_id, format!("Task #{s} not found"))),
        }
    }
    Ok(ids)
}

fn update(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "TaskUpdate")?;
    let task_id = str_arg(args, "taskId");
    let list = tasks(scope, conv);
    let Some(t) = find(&list, task_id).cloned() else {
        return Err(refused(task_id, "Task not found"));
    };
    let status = args.get("status").and_then(Value::as_str);
    if status == Some("deleted") {
        return match single::delete(scope, Find::Conversation(conv), t.id) {
            Ok(_) => Ok(json!({"success": true, "taskId": task_id, "updatedFields": ["deleted"],
                                "statusChange": {"from": claude_status_name(t.status), "to": "deleted"}})),
            Err(Error::NotFound { .. }) => Err(refused(task_id, "Task not found")),
            Err(e) => Err(refused(task_id, e.to_string())),
        };
    }
    let blocks = task_ids(args, "addBlocks", &list, task_id)?;
    let blocked_by = task_ids(args, "addBlockedBy", &list, task_id)?;
    // only what differs is written (and reported)
    let mut fields = Map::new();
    for (key, column, current) in [
        ("subject", "subject", Some(t.subject.as_str())),
        ("description", "description", t.description.as_deref()),
        ("activeForm", "active_form", t.active_form.as_deref()),
        ("owner", "owner", t.owner.as_deref()),
    ] {
        if let Some(v) = args.get(key).and_then(Value::as_str).filter(|v| Some(*v) != current) {
            fields.insert(column.into(), json!(v));
        }
    }
    // Claude Code's pending is also the store's blocked: pending leaves a blocked todo be
    let to = status.and_then(Status::parse).filter(|s| claude_status_name(*s) != claude_status_name(t.status));
    let change = Change {
        status: to,
        via_reopen: true,
        fields,
        metadata: args.get("metadata").and_then(Value::as_object).cloned(),
        default_owner: scope.agent.clone(),
    };
    let changed = match single::change(scope, Find::Conversation(conv), t.id, change) {
        Ok(changed) => changed,
        Err(Error::NotFound { .. }) => return Err(refused(task_id, "Task not found")),
        Err(e) => return Err(refused(task_id, e.to_string())),
    };
    let mut added = [false, false];
    for (i, (id, on)) in blocks.iter().map(|b| (*b, t.id)).chain(blocked_by.iter().map(|b| (t.id, *b))).enumerate() {
        match dependencies::block(scope, id, on) {
            Ok(new) => added[usize::from(i >= blocks.len())] |= new,
            Err(e) => return Err(refused(task_id, e.to_string())),
        }
    }
    let (before, after) = (&changed.before, &changed.after);
    let mut updated: Vec<&str> = [
        ("subject", before.subject != after.subject),
        ("description", before.description != after.description),
        ("activeForm", before.active_form != after.active_form),
        ("status", before.status != after.status),
        ("owner", before.owner != after.owner),
        ("metadata", before.metadata != after.metadata),
    ]
    .into_iter()
    .filter(|(_, changed)| *changed)
    .map(|(name, _)| name)
    .collect();
    if added[0] {
        updated.push("blocks");
    }
    if added[1] {
        updated.push("blockedBy");
    }
    let mut out = json!({"success": true, "taskId": task_id, "updatedFields": updated});
    if before.status != after.status {
        out["statusChange"] =
            json!({"from": claude_status_name(before.status), "to": claude_status_name(after.status)});
    }
    Ok(out)
}

fn update_text(out: &Value) -> String {
    if out.get("success") != Some(&Value::Bool(true)) {
        return out
            .get("error")
            .and_then(Value::as_str)
            .or_else(|| error_message(out))
            .unwrap_or("Task not found")
            .to_string();
    }
    let fields: Vec<&str> = out["updatedFields"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let head = format!("Updated task #{}", str_arg(out, "taskId"));
    if fields.is_empty() {
        head
    } else {
        format!("{head} {}", fields.join(", "))
    }
}

/// A conversation's list as Claude Code's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    task_list(scope, conv)
}

/// The claude-tasks dialect.
pub static DIALECT: Dialect = Dialect {
    name: "claude-tasks",
    aliases: &[],
    runtime: "Claude Code",
    description: "task tools: a shared task list with owners and dependencies",
    tools: &[&CREATE, &GET, &LIST, &UPDATE],
    list_as: Some(ListAs { shape: "TaskList's `{\"tasks\"}`", read: list_as }),
};
