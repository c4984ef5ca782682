//! The todolist dialect (seed 003): the MCP toolset `todolist__get` / `todolist__set`. One list per session (the
//! conversation in context): its todos that are not canceled (the seed has no canceled
//! status), identified by place. `todolist__set` replaces the whole list after validating
//! all of it; any error returns `{"error": {"code", "message"}}` and writes nothing.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, Tool};
use super::helpers::{array_of, error, failed, list_items, output_schema, session, CLAUDE_STATUSES};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;

static GET: Tool = Tool {
    name: "todolist__get",
    description: "Get the current state of the todo list.",
    input_schema: || json!({"type": "object", "additionalProperties": false, "properties": {}}),
    precheck: None,
    run: get,
    effect: Effect::Reads,
    output_schema: Some(|| {
        output_schema(
            json!({"todos": array_of(json!({"content": {"type": "string"}, "status": {"type": "string"}, "activeForm": {"type": "string"}})), "summary": summary_schema()}),
            &["todos", "summary"],
        )
    }),
    text: None,
    accepts: None,
};

static SET: Tool = Tool {
    name: "todolist__set",
    description: "Replace the entire todo list. Server validates all constraints: content and activeForm must not be empty, status is pending, in_progress or completed, and at most one item is in_progress.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todos"],
            "additionalProperties": false,
            "properties": {
                "todos": {
                    "type": "array",
                                        "items": {
                        "type": "object",
                        "required": ["content", "status", "activeForm"],
                        "additionalProperties": false,
                        "properties": {
                            "content": {"type": "string", "minLength": 1},
                            "status": {"type": "string", "enum": CLAUDE_STATUSES},
                            "activeForm": {"type": "string", "minLength": 1}
                        }
                    }
                }
            }
        })
    },
    precheck: Some(check),
    run: set,
    effect: Effect::Replaces,
    output_schema: Some(|| output_schema(json!({"summary": summary_schema()}), &["summary"])),
    text: None,
    accepts: None,
};

/// The seed's validation, before the generic schema check: the first item with a problem
/// (status, then content, then activeForm), then more than one in_progress. Values of the
/// wrong type are left to the schema check.
fn check(args: &Value) -> Option<Value> {
    let items = args.get("todos")?.as_array()?;
    for (i, item) in items.iter().enumerate() {
        if let Some(s) = item.get("status").and_then(Value::as_str) {
            if !CLAUDE_STATUSES.contains(&s) {
                return Some(error(
                    "invalid_status",
                    format!("todos[{i}].status \"{s}\" is not one of pending, in_progress, completed"),
                ));
            }
        }
        if item.get("content").and_then(Value::as_str).is_some_and(|c| c.trim().is_empty()) {
            return Some(error("empty_content", format!("todos[{i}].content is empty or whitespace")));
        }
        if item.get("activeForm").and_then(Value::as_str).is_some_and(|c| c.trim().is_empty()) {
            return Some(error("empty_active_form", format!("todos[{i}].activeForm is empty or whitespace")));
        }
    }
    let running: Vec<String> = items
        .iter()
        .enumerate()
        .filter(|(_, t)| t.get("status").and_then(Value::as_str) == Some("in_progress"))
        .map(|(i, _)| format!("todos[{i}]"))
        .collect();
    (running.len() > 1).then(|| {
        error(
            "multiple_in_progress",
            format!("{} items are in_progress ({}); at most one may be", running.len(), running.join(", ")),
        )
    })
}

/// The seed's spelling: it has no blocked, deferred or review status (a blocked or deferred
/// todo is pending to it, one in review in progress, and each stays as it is when sent back
/// so).
fn status_name(s: Status) -> &'static str {
    match s {
        Status::Canceled => "canceled",
        s => s.three_state().as_str(),
    }
}

/// The schema of a `summary`.
fn summary_schema() -> Value {
    let i = json!({"type": "integer"});
    output_schema(
        json!({"total": i, "pending": i, "in_progress": i, "completed": i}),
        &["total", "pending", "in_progress", "completed"],
    )
}

fn summary(statuses: &[Status]) -> Value {
    let count = |s: Status| statuses.iter().filter(|t| status_name(**t) == s.as_str()).count();
    json!({
        "total": statuses.len(),
        "pending": count(Status::Pending),
        "in_progress": count(Status::InProgress),
        "completed": count(Status::Completed),
    })
}

fn get(scope: &Scope, _args: &Value) -> Answer {
    let conv = session(scope, "todolist__get")?;
    let rows = whole_list::stored(scope, conv, Kept::Uncanceled);
    let todos: Vec<Value> = rows
        .iter()
        .map(|t| {
            json!({
                "content": t.subject,
                "status": status_name(t.status),
                "activeForm": t.active_form.as_deref().unwrap_or(&t.subject),
            })
        })
        .collect();
    Ok(json!({ "todos": todos, "summary": summary(&rows.iter().map(|t| t.status).collect::<Vec<_>>()) }))
}

fn set(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todolist__set")?;
    let items = list_items(&args["todos"], "content", &[("active_form", "activeForm")]);
    whole_list::replace(scope, conv, Rules::seeds(Kept::Uncanceled), &items).map_err(failed)?;
    // the session's list is now exactly the list written
    Ok(json!({ "summary": summary(&items.iter().map(|i| i.status).collect::<Vec<_>>()) }))
}

/// The todolist dialect.
pub static DIALECT: Dialect = Dialect {
    name: "todolist",
    aliases: &["003"],
    runtime: "the todolist MCP toolset",
    description: "a session's checklist, read and written whole",
    tools: &[&GET, &SET],
    list_as: None,
};
