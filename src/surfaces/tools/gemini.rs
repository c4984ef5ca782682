//! The gemini dialect: Gemini CLI's `write_todos`, the whole list of `{description,
//! status}` with five statuses (pending, in_progress, completed, cancelled, blocked: the
//! store's own `blocked`). Refusals use Gemini's own messages; the model reads Gemini's
//! confirmation listing the plan, and the structured result is its display `{todos}`. The
//! list is the conversation's todos that are not archived (canceled ones too: Gemini shows
//! them); a finished item the list leaves out is archived (history), an open one deleted.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{error, error_message, failed, list_items, session, str_arg};
use crate::ops::whole_list::{self, Dropped, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

const STATUSES: [&str; 5] = ["pending", "in_progress", "completed", "cancelled", "blocked"];

static WRITE_TODOS: Tool = Tool {
    name: "write_todos",
    description: "Lists out the subtasks required to complete a complex user request, and tracks their progress. Each call sends the complete list, which replaces the existing one: mark a task in_progress when you start it (only one at a time), completed when done, cancelled when no longer needed, and blocked when it cannot proceed.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The complete list of todo items. This will replace the existing list.",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["description", "status"],
                        "properties": {
                            "description": {"type": "string", "description": "The description of the task."},
                            "status": {"type": "string", "enum": STATUSES}
                        }
                    }
                }
            }
        })
    },
    precheck: Some(check),
    run: write,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

/// Gemini CLI's own validation, in its order and words.
fn check(args: &Value) -> Option<Value> {
    let refuse = |m: &str| Some(error("invalid_arguments", m));
    let Some(todos) = args.get("todos").and_then(Value::as_array) else {
        return refuse("`todos` parameter must be an array");
    };
    for t in todos {
        if !t.is_object() {
            return refuse("Each todo item must be an object");
        }
        if t.get("description").and_then(Value::as_str).is_none_or(|d| d.trim().is_empty()) {
            return refuse("Each todo must have a non-empty description string");
        }
        if !t.get("status").and_then(Value::as_str).is_some_and(|s| STATUSES.contains(&s)) {
            return refuse(&format!("Each todo must have a valid status ({})", STATUSES.join(", ")));
        }
    }
    let running = todos.iter().filter(|t| t.get("status").and_then(Value::as_str) == Some("in_progress")).count();
    if running > 1 {
        return refuse("Invalid parameters: Only one task can be \"in_progress\" at a time.");
    }
    None
}

/// Gemini's spelling of a status.
fn status_name(s: Status) -> &'static str {
    match s {
        Status::Canceled => "cancelled",
        // it has blocked, not deferred or review
        Status::Blocked => "blocked",
        s => s.three_state().as_str(),
    }
}

/// The list in Gemini's shape: `{"todos": [{"description", "status"}]}`.
pub fn todos(rows: &[Todo]) -> Value {
    json!({"todos": rows.iter().map(|t| json!({"description": t.subject, "status": status_name(t.status)})).collect::<Vec<_>>()})
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "write_todos")?;
    let items = list_items(&args["todos"], "description", &[]);
    let rules = Rules { kept: Kept::All, dropped: Dropped::FinishedKept, blocked: true, forward_only: false };
    whole_list::replace(scope, conv, rules, &items).map_err(failed)?;
    Ok(json!({ "todos": args["todos"] }))
}

/// What Gemini CLI tells the model: the list it now holds, or that it was cleared; a
/// refusal's message.
fn text(out: &Value) -> String {
    if let Some(m) = error_message(out) {
        return m.to_string();
    }
    let todos = out["todos"].as_array().map(Vec::as_slice).unwrap_or_default();
    if todos.is_empty() {
        return "Successfully cleared the todo list.".into();
    }
    let lines: Vec<String> = todos
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}. [{}] {}", i + 1, str_arg(t, "status"), str_arg(t, "description")))
        .collect();
    format!("Successfully updated the todo list. The current list is now:\n{}", lines.join("\n"))
}

/// A conversation's list as Gemini CLI's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    todos(&whole_list::stored(scope, conv, Kept::All))
}

/// The gemini dialect.
pub static DIALECT: Dialect = Dialect {
    name: "gemini",
    aliases: &[],
    runtime: "Gemini CLI",
    description: "write_todos: the whole list, five statuses",
    tools: &[&WRITE_TODOS],
    list_as: Some(ListAs { shape: "`{\"todos\": [{description, status}]}`", read: list_as }),
};
