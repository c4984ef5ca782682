//! Seed 004: the conversation's task list, `ListTasks`, `AddTask`, `CompleteTask`,
//! `UncompleteTask`, `DeleteTask`, with the seed's JSON results and error strings, plus
//! `todo.export_tasks` / `todo.import_tasks` for its task-file format `{"tasks": [...]}`.
//! A task is a todo of the conversation that is not canceled; `done` is `completed`.

use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

use super::replace::{self, Incoming, Stored};
use super::{fields, parse_string_id, str_arg, uncanceled, Ctx, Tool};
use crate::model::Todo;
use crate::status::Status;
use crate::store::{self, Filter};
use crate::{context, errors};

pub static TOOLS: &[&Tool] = &[&LIST, &ADD, &COMPLETE, &UNCOMPLETE, &DELETE];

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
    writes: false,
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
    writes: true,
};

static COMPLETE: Tool = Tool {
    name: "CompleteTask",
    description: "Mark a task of the current conversation as done.",
    input_schema: task_id_schema,
    precheck: None,
    run: complete,
    writes: true,
};

static UNCOMPLETE: Tool = Tool {
    name: "UncompleteTask",
    description: "Mark a task of the current conversation as not done.",
    input_schema: task_id_schema,
    precheck: None,
    run: uncomplete,
    writes: true,
};

static DELETE: Tool = Tool {
    name: "DeleteTask",
    description: "Remove a task from the current conversation's task list (use it to drop cancelled items).",
    input_schema: task_id_schema,
    precheck: None,
    run: delete,
    writes: true,
};

fn task(t: &Todo) -> Value {
    json!({
        "id": t.id.to_string(),
        "title": t.subject,
        "description": t.description.as_deref().unwrap_or(""),
        "done": t.status == Status::Completed,
    })
}

fn file(tenant: &str, conv: &str) -> Value {
    json!({ "tasks": uncanceled(tenant, conv).iter().map(task).collect::<Vec<_>>() })
}

fn list(ctx: &Ctx, _args: &Value) -> Value {
    match &ctx.conversation {
        None => json!(NO_CONVERSATION),
        Some(conv) => file(&ctx.tenant, conv),
    }
}

fn add(ctx: &Ctx, args: &Value) -> Value {
    let Some(conv) = &ctx.conversation else { return json!(NO_CONVERSATION) };
    if str_arg(args, "title").trim().is_empty() {
        return json!("Error: title must not be empty.");
    }
    let t = store::insert(
        &ctx.tenant,
        &fields([
            ("conversation_id", json!(conv)),
            ("subject", args["title"].clone()),
            ("description", json!(str_arg(args, "description"))),
        ]),
    );
    store::notify(&ctx.tenant, Some(conv), &[t.id]);
    task(&t)
}

/// The task named by `taskId` in the conversation, or the seed's not-found object.
fn find(ctx: &Ctx, conv: &str, args: &Value) -> Result<Todo, Value> {
    parse_string_id(str_arg(args, "taskId"))
        .and_then(|id| uncanceled(&ctx.tenant, conv).into_iter().find(|t| t.id == id))
        .ok_or_else(|| json!({"ok": false, "error": "Task not found"}))
}

fn mark(ctx: &Ctx, args: &Value, to: Status) -> Value {
    let Some(conv) = &ctx.conversation else { return json!(NO_CONVERSATION) };
    let t = match find(ctx, conv, args) {
        Ok(t) => t,
        Err(e) => return e,
    };
    super::set_status(&ctx.tenant, t.id, t.status, to, Default::default());
    store::notify(&ctx.tenant, Some(conv), &[t.id]);
    match store::todos(&ctx.tenant, Filter::Id(t.id)).pop() {
        Some(t) => json!({"ok": true, "task": task(&t)}),
        None => json!({"ok": false, "error": "Task not found"}), // deleted concurrently
    }
}

fn complete(ctx: &Ctx, args: &Value) -> Value {
    mark(ctx, args, Status::Completed)
}

fn uncomplete(ctx: &Ctx, args: &Value) -> Value {
    let Some(conv) = &ctx.conversation else { return json!(NO_CONVERSATION) };
    // a task that is not done stays as it is (pending or in progress)
    match find(ctx, conv, args) {
        Ok(t) if t.status != Status::Completed => json!({"ok": true, "task": task(&t)}),
        Ok(_) => mark(ctx, args, Status::Pending),
        Err(e) => e,
    }
}

fn delete(ctx: &Ctx, args: &Value) -> Value {
    let Some(conv) = &ctx.conversation else { return json!(NO_CONVERSATION) };
    match find(ctx, conv, args) {
        Ok(t) => {
            store::delete(&ctx.tenant, t.id);
            store::notify(&ctx.tenant, Some(conv), &[t.id]);
            json!({"ok": true})
        }
        Err(e) => e,
    }
}

/// Seed 004's task file for `conversation` in the context's tenant: `{"tasks": [{"id",
/// "title", "description", "done"}]}`, the conversation's todos that are not canceled.
///
/// Errors: 22023 when no tenant is in context.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn export_tasks(conversation: &str) -> JsonB {
    JsonB(file(&context::tenant(), conversation))
}

/// Loads a seed 004 task file into `conversation`, replacing its task list: a task whose id
/// names one of the conversation's tasks updates it, others match by title and place or are
/// added; tasks the file leaves out are deleted; `done` sets completed / pending. Extra
/// top-level fields are ignored, as the seed allows. Returns the conversation's file after.
///
/// Errors: 22023 with "task file is corrupt or invalid: …" when the file is not an object
/// with a `tasks` array of `{title: string, done: boolean, id?, description?}`; 22023 when no
/// tenant is in context; 42704 when it is not registered.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn import_tasks(conversation: &str, file_json: JsonB) -> JsonB {
    let ctx = Ctx { tenant: context::tenant(), conversation: Some(conversation.to_string()), turn: None };
    store::require_registered(&ctx.tenant);
    let corrupt = |why: &str| -> ! {
        errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("task file is corrupt or invalid: {why}"),
            "a task file is {\"tasks\": [{\"id\": \"1\", \"title\": \"…\", \"description\": \"\", \"done\": false}]}",
        )
    };
    let Some(items) = file_json.0.get("tasks").and_then(Value::as_array).cloned() else {
        corrupt("no \"tasks\" array")
    };
    let mut wanted = Vec::with_capacity(items.len());
    for (i, t) in items.iter().enumerate() {
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
        wanted.push((id, json!({"content": title, "description": description,
            "status": if done { "completed" } else { "pending" }})));
    }
    store::begin_write();
    store::lock_list(&ctx.tenant, conversation);
    let stored = uncanceled(&ctx.tenant, conversation);
    let plan = replace::plan(
        &stored.iter().map(|t| Stored { id: t.id, content: t.subject.clone() }).collect::<Vec<_>>(),
        &wanted.iter().map(|(id, t)| Incoming { id: *id, content: str_arg(t, "content").to_string() }).collect::<Vec<_>>(),
    );
    let items: Vec<Value> = wanted.into_iter().map(|(_, t)| t).collect();
    super::session::apply(&ctx, conversation, &stored, &items, &plan.matched, &plan.removed, |t| {
        fields([("subject", t["content"].clone()), ("description", t["description"].clone())])
    });
    JsonB(file(&ctx.tenant, conversation))
}
