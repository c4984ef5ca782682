//! The tasks dialect (seed 004): the conversation's task list, `ListTasks`, `AddTask`, `CompleteTask`,
//! `UncompleteTask`, `DeleteTask`, with the seed's JSON results and error strings, plus
//! `todo.export_tasks` / `todo.import_tasks` for its task-file format `{"tasks": [...]}`.
//! A task is a todo of the conversation that is not canceled; `done` is `completed`.

use pgrx::prelude::*;
use pgrx::JsonB;

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, Tool};
use super::helpers::{failed, notice_kept, notice_omitted, output_schema, parse_string_id, str_arg};
use crate::error::Error;
use crate::jsonb::Jsonb;
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::whole_list::{self, Item, Kept, Rules};
use crate::ops::{Find, Scope};
use crate::status::Status;
use crate::todo::Todo;
use crate::{errors, runner};

const NO_CONVERSATION: &str = "Error: Task list is not available (no conversation context).";

fn task_id_schema() -> Value {
    json!({
        "type": "object",
        "required": ["taskId"],
        "additionalProperties": false,
        "properties": {"taskId": {"type": "string", "description": "The task's id, as ListTasks shows it"}}
    })
}

static LIST: Tool = Tool {
    name: "ListTasks",
    description: "List the current conversation's tasks with their ids and whether each is done.",
    input_schema: || json!({"type": "object", "additionalProperties": false, "properties": {}}),
    precheck: None,
    run: list,
    effect: Effect::Reads,
    output_schema: Some(|| output_schema(json!({"tasks": {"type": "array", "items": task_schema()}}), &["tasks"])),
    text: None,
    accepts: None,
};

static ADD: Tool = Tool {
    name: "AddTask",
    description: "Add a task to the current conversation's task list; use it to add or break down work.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["title"],
            "additionalProperties": false,
            "properties": {
                "title": {"type": "string", "minLength": 1},
                "description": {"type": "string", "description": "Brief description of the task (default \"\")"}
            }
        })
    },
    precheck: None,
    run: add,
    effect: Effect::Adds,
    output_schema: Some(task_schema),
    text: None,
    accepts: None,
};

static COMPLETE: Tool = Tool {
    name: "CompleteTask",
    description: "Mark a task of the current conversation as done.",
    input_schema: task_id_schema,
    precheck: None,
    run: complete,
    effect: Effect::Replaces,
    output_schema: Some(|| output_schema(json!({"ok": {"type": "boolean"}, "task": task_schema()}), &["ok", "task"])),
    text: None,
    accepts: None,
};

static UNCOMPLETE: Tool = Tool {
    name: "UncompleteTask",
    description: "Mark a task of the current conversation as not done.",
    input_schema: task_id_schema,
    precheck: None,
    run: uncomplete,
    effect: Effect::Replaces,
    output_schema: Some(|| output_schema(json!({"ok": {"type": "boolean"}, "task": task_schema()}), &["ok", "task"])),
    text: None,
    accepts: None,
};

static DELETE: Tool = Tool {
    name: "DeleteTask",
    description: "Remove a task from the current conversation's task list (use it to drop cancelled items).",
    input_schema: task_id_schema,
    precheck: None,
    run: delete,
    effect: Effect::Replaces,
    output_schema: Some(|| output_schema(json!({"ok": {"type": "boolean"}}), &["ok"])),
    text: None,
    accepts: None,
};

/// The schema of a task (`task`).
fn task_schema() -> Value {
    let (s, b) = (json!({"type": "string"}), json!({"type": "boolean"}));
    output_schema(json!({"id": s, "title": s, "description": s, "done": b}), &["id", "title", "description", "done"])
}

fn task(t: &Todo) -> Value {
    json!({
        "id": t.id.to_string(),
        "title": t.subject,
        "description": t.description.as_deref().unwrap_or(""),
        "done": t.status == Status::Completed,
    })
}

fn file(scope: &Scope, conv: &str) -> Value {
    json!({ "tasks": whole_list::stored(scope, conv, Kept::Uncanceled).iter().map(task).collect::<Vec<_>>() })
}

/// A task file with what its read left out (`"omitted"`) and what the write before it kept
/// (`"kept"`), each the sentence a model reads (`limits::omitted_note`, `kept_note`), as
/// top-level fields: a task file's extra fields are ignored when it is loaded again.
fn with_notes(mut file: Value, omitted: Option<(usize, u64)>, kept: Option<u64>) -> Value {
    if let Some((shown, left_out)) = omitted {
        file["omitted"] = json!(pg_todos_core::limits::omitted_note(shown, left_out));
    }
    if let Some(kept) = kept {
        file["kept"] = json!(pg_todos_core::limits::kept_note(kept));
    }
    file
}

/// The conversation in context, or the dialect's error string.
fn conversation(scope: &Scope) -> Result<&str, Value> {
    scope.conv().ok_or_else(|| json!(NO_CONVERSATION))
}

fn not_found() -> Value {
    json!({"ok": false, "error": "Task not found"})
}

fn list(scope: &Scope, _args: &Value) -> Answer {
    Ok(file(scope, conversation(scope)?))
}

fn add(scope: &Scope, args: &Value) -> Answer {
    conversation(scope)?; // a task joins the conversation in context: there must be one
    if str_arg(args, "title").trim().is_empty() {
        return Err(json!("Error: title must not be empty."));
    }
    let new = NewTodo::titled(scope, str_arg(args, "title"), Some(str_arg(args, "description")));
    Ok(task(&single::add(scope, new).map_err(failed)?))
}

/// The task `taskId` names: a todo of the conversation that is not canceled.
fn find(scope: &Scope, conv: &str, args: &Value) -> Result<Todo, Value> {
    parse_string_id(str_arg(args, "taskId"))
        .and_then(|id| whole_list::stored(scope, conv, Kept::Uncanceled).into_iter().find(|t| t.id == id))
        .ok_or_else(not_found)
}

/// Marks the task done (completed) or not done (pending); one that is not done stays as it
/// is when asked to be not done.
fn mark(scope: &Scope, args: &Value, to: Status) -> Answer {
    let conv = conversation(scope)?;
    let t = find(scope, conv, args)?;
    if to == Status::Pending && t.status != Status::Completed {
        return Ok(json!({"ok": true, "task": task(&t)}));
    }
    let change = Change { status: Some(to), via_reopen: true, ..Change::default() };
    match single::change(scope, Find::Conversation(conv), t.id, change) {
        Ok(changed) => Ok(json!({"ok": true, "task": task(&changed.after)})),
        Err(Error::NotFound { .. }) => Err(not_found()),
        Err(e) => Err(failed(e)),
    }
}

fn complete(scope: &Scope, args: &Value) -> Answer {
    mark(scope, args, Status::Completed)
}

fn uncomplete(scope: &Scope, args: &Value) -> Answer {
    mark(scope, args, Status::Pending)
}

fn delete(scope: &Scope, args: &Value) -> Answer {
    let conv = conversation(scope)?;
    let t = find(scope, conv, args)?;
    match single::delete(scope, Find::Conversation(conv), t.id) {
        Ok(_) => Ok(json!({"ok": true})),
        Err(Error::NotFound { .. }) => Err(not_found()),
        Err(e) => Err(failed(e)),
    }
}

/// Seed 004's task file for `conversation` in the context's tenant: `{"tasks": [{"id",
/// "title", "description", "done"}]}`, the conversation's todos that are not canceled.
///
/// Errors: 22004 a NULL conversation; 22023 when no tenant is in context; 42704 when it is
/// not registered.
#[pg_extern(stable, parallel_restricted, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn export_tasks(conversation: Option<&str>) -> Jsonb {
    let conversation = errors::required(conversation, "todo.export_tasks: conversation");
    let scope = Scope::reading(None);
    let (out, omitted) = crate::session::with_omitted(|| file(&scope, conversation));
    notice_omitted("todo.export_tasks", omitted);
    Jsonb(with_notes(out, omitted, None))
}

/// Loads a seed 004 task file into `conversation`, replacing its task list: a task whose id
/// names one of the conversation's tasks updates it, others match by title and place or are
/// added; tasks the file leaves out are deleted; `done` sets completed / pending. Extra
/// top-level fields are ignored, as the seed allows. Returns the conversation's file after.
///
/// Errors: 22023 with "task file is corrupt or invalid: …" when the file is not an object
/// with a `tasks` array of `{title: string, done: boolean, id?, description?}`; 22023 when no
/// tenant is in context; 42704 when it is not registered; 22004 a NULL conversation or file.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn import_tasks(conversation: Option<&str>, file_json: Option<JsonB>) -> Jsonb {
    let conversation = errors::required(conversation, "todo.import_tasks: conversation");
    let file_json = errors::required(file_json, "todo.import_tasks: file_json");
    runner::call(|| {
        let scope = Scope { conversation: Some(conversation.to_string()), ..Scope::from_context() };
        let corrupt = |why: &str| -> ! {
            errors::raise(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("task file is corrupt or invalid: {why}"),
                "a task file is {\"tasks\": [{\"id\": \"1\", \"title\": \"…\", \"description\": \"\", \"done\": false}]}",
            )
        };
        let Some(tasks) = file_json.0.get("tasks").and_then(Value::as_array).cloned() else {
            corrupt("no \"tasks\" array")
        };
        let mut items = Vec::with_capacity(tasks.len());
        for (i, t) in tasks.iter().enumerate() {
            let title = t.get("title").and_then(Value::as_str).filter(|s| !s.trim().is_empty());
            let done = t.get("done").and_then(Value::as_bool);
            let (Some(title), Some(done)) = (title, done) else {
                corrupt(&format!("tasks[{i}] needs a non-empty string \"title\" and a boolean \"done\""))
            };
            let description = t.get("description").and_then(Value::as_str).unwrap_or("");
            let id = match t.get("id") {
                Some(Value::String(s)) => parse_string_id(s),
                Some(Value::Number(n)) => n.as_i64(),
                _ => None,
            };
            items.push(Item {
                id,
                content: title.to_string(),
                status: if done { Status::Completed } else { Status::Pending },
                columns: json_fields([("description", json!(description))]),
            });
        }
        crate::session::take_kept();
        whole_list::replace(&scope, conversation, Rules::seeds(Kept::Uncanceled), &items)
            .unwrap_or_else(|e| errors::raise_error(&e));
        let kept = crate::session::take_kept();
        notice_kept("todo.import_tasks", kept);
        let (out, omitted) = crate::session::unnoted(|| file(&scope, conversation));
        notice_omitted("todo.import_tasks", omitted);
        Jsonb(with_notes(out, omitted, kept))
    })
}

/// The tasks dialect.
pub static DIALECT: Dialect = Dialect {
    name: "tasks",
    aliases: &["004"],
    runtime: "seed 004",
    description: "a conversation's task list, one task at a time",
    tools: &[&LIST, &ADD, &COMPLETE, &UNCOMPLETE, &DELETE],
    list_as: None,
};
