//! The vibe dialect: Mistral Vibe's `todo`, `read` or `write` (the whole list of `{id,
//! content, status, priority}`: ids the model chooses, kept as the todos' caller ids;
//! statuses pending, in_progress, completed, cancelled, pending when left out; priority low,
//! medium or high, medium when left out). At most 100 todos, ids unique: Vibe's refusals, in
//! its words, write nothing. The list is the conversation's todos that are not archived; a
//! finished item a write leaves out is archived (history), an open one deleted. The answer
//! is Vibe's `{message, todos, total_count}`; the model reads one `key: value` line per field,
//! the todos as Python's `json.dumps` prints them (how Vibe renders that line is not
//! published; this is the choice). It shares its name with Hermes' tool: a server kept to
//! this dialect offers this one, and `todo.call('vibe/todo', …)` names it.

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{
    caller_id, cancelled_status_name, error, error_message, failed, session, str_arg, CallerIds, CANCELLED_STATUSES,
};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;
use pg_todos_core::printed::python_dumps;

/// Vibe's limit on the list.
const MAX_TODOS: usize = 100;

static TODO: Tool = Tool {
    name: "todo",
    description: "Manage todos. Use action='read' to view the list, action='write' with the complete list to update it. Each todo has an id, content, status (pending, in_progress, completed or cancelled) and priority (low, medium or high).",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {"type": "string", "description": "Either 'read' or 'write'"},
                "todos": {
                    "type": ["array", "null"],
                    "description": "Complete list of todos when writing.",
                    "items": {
                        "type": "object",
                        "required": ["id", "content"],
                        "properties": {
                            "id": {"type": "string"},
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": CANCELLED_STATUSES, "default": "pending"},
                            "priority": {"type": "string", "enum": ["low", "medium", "high"], "default": "medium"}
                        }
                    }
                }
            }
        })
    },
    precheck: Some(check),
    run: todo,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

/// Vibe's refusals, in its words.
fn check(args: &Value) -> Option<Value> {
    let action = args.get("action").and_then(Value::as_str)?;
    if !["read", "write"].contains(&action) {
        return Some(error("invalid_arguments", format!("Invalid action '{action}'. Use 'read' or 'write'.")));
    }
    let todos = args.get("todos").and_then(Value::as_array).filter(|_| action == "write")?;
    if todos.len() > MAX_TODOS {
        return Some(error("invalid_arguments", format!("Cannot store more than {MAX_TODOS} todos")));
    }
    let ids: HashSet<&str> = todos.iter().map(|t| str_arg(t, "id")).collect();
    (ids.len() != todos.len()).then(|| error("invalid_arguments", "Todo IDs must be unique"))
}

/// The list in the tool's own item shape: `{id, content, status, priority}`.
pub fn todos(rows: &[Todo]) -> Vec<Value> {
    rows.iter()
        .map(|t| {
            json!({"id": caller_id(t), "content": t.subject, "status": cancelled_status_name(t.status),
                   "priority": t.priority.as_deref().unwrap_or("medium")})
        })
        .collect()
}

fn todo(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todo")?;
    if str_arg(args, "action") == "read" {
        let list = todos(&whole_list::stored(scope, conv, Kept::All));
        return Ok(
            json!({"message": format!("Retrieved {} todos", list.len()), "todos": list, "total_count": list.len()}),
        );
    }
    let sent = args.get("todos").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    if let Some(i) = sent.iter().position(|t| str_arg(t, "content").trim().is_empty()) {
        return Err(error("invalid_arguments", format!("todos[{i}].content must not be blank")));
    }
    let before = whole_list::stored(scope, conv, Kept::All);
    let ids = CallerIds::new(&before);
    let items: Vec<_> = sent
        .iter()
        .map(|t| {
            let status =
                Status::parse(t.get("status").and_then(Value::as_str).unwrap_or("pending")).unwrap_or(Status::Pending);
            let priority = t.get("priority").and_then(Value::as_str).unwrap_or("medium");
            let columns: Map<String, Value> = [("priority".to_string(), json!(priority))].into_iter().collect();
            ids.item(Some(str_arg(t, "id")), str_arg(t, "content"), status, columns)
        })
        .collect();
    whole_list::replace(scope, conv, Rules::runtime(Kept::All), &items).map_err(failed)?;
    let list = todos(&whole_list::stored(scope, conv, Kept::All));
    Ok(json!({"message": format!("Updated {} todos", list.len()), "todos": list, "total_count": list.len()}))
}

fn text(out: &Value) -> String {
    if let Some(m) = error_message(out) {
        return m.to_string();
    }
    format!(
        "message: {}\ntodos: {}\ntotal_count: {}",
        str_arg(out, "message"),
        python_dumps(&out["todos"], &["id", "content", "status", "priority"]),
        out["total_count"]
    )
}

/// A conversation's list as Mistral Vibe's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    json!({ "todos": todos(&whole_list::stored(scope, conv, Kept::All)) })
}

/// The vibe dialect.
pub static DIALECT: Dialect = Dialect {
    name: "vibe",
    aliases: &[],
    runtime: "Mistral Vibe",
    description: "todo: read or write the list with ids and priorities",
    tools: &[&TODO],
    list_as: Some(ListAs { shape: "`{\"todos\": [{id, content, status, priority}]}`", read: list_as }),
};
