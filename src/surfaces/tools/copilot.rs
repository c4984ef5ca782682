//! The copilot dialect: GitHub Copilot's `manage_todo_list` in VS Code (its write-only form):
//! the whole list of `{id, title, status}` each time, numeric ids the model chooses (kept as
//! the todos' caller ids), statuses `not-started`, `in-progress`, `completed`. The list is
//! the conversation's todos that are not canceled or archived; a todo written through a
//! dialect without caller ids shows its store id. A finished item the list leaves out is
//! archived (history), an open one deleted. The model reads `Successfully wrote todo list`
//! and, after a blank line, VS Code's warnings: a list under 3 or over 10 items, and more
//! than 3 items changed (compared index by index with the previous list). Copilot does not
//! check that ids are unique; the store keeps one todo per id, so a list that repeats an id is
//! refused.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{caller_id, error_message, failed, session, str_arg, CallerIds};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

static MANAGE_TODO_LIST: Tool = Tool {
    name: "manage_todo_list",
    description: "Manage a structured todo list to track progress and plan tasks throughout your coding session. Use this tool VERY frequently to ensure task visibility and proper planning.\n\nCRITICAL workflow:\n1. Plan tasks by writing todo list with specific, actionable items\n2. Mark ONE todo as in-progress before starting work\n3. Complete the work for that specific todo\n4. Mark that todo as completed IMMEDIATELY\n5. Move to next todo and repeat\n\nTodo states:\n- not-started: Todo not yet begun\n- in-progress: Currently working (limit ONE at a time)\n- completed: Finished successfully\n\nIMPORTANT: Mark todos completed as soon as they are done. Do not batch completions.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todoList"],
            "properties": {
                "todoList": {
                    "type": "array",
                    "description": "Complete array of all todo items. Must include ALL items - both existing and new.",
                    "items": {
                        "type": "object",
                        "required": ["id", "title", "status"],
                        "properties": {
                            "id": {"type": "number", "description": "Unique identifier for the todo. Use sequential numbers starting from 1."},
                            "title": {"type": "string", "description": "Concise action-oriented todo label (3-7 words). Displayed in UI."},
                            "status": {"type": "string", "enum": ["not-started", "in-progress", "completed"],
                                       "description": "not-started: Not begun | in-progress: Currently working (max 1) | completed: Fully finished with no blockers"}
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

const SMALL: &str = "Warning: Small todo list (<3 items). This task might not need a todo list.";
const LARGE: &str = "Warning: Large todo list (>10 items). Consider keeping the list focused and actionable.";
const MANY: &str =
    "Warning: Did you mean to update so many todos at the same time? Consider working on them one by one.";

/// VS Code's answer to a call without the list.
fn check(args: &Value) -> Option<Value> {
    args.get("todoList").is_none_or(Value::is_null).then(|| json!("Error: todoList is required for write operation"))
}

/// Copilot's spelling of a status (a blocked todo is not started).
fn status_name(s: Status) -> &'static str {
    match s.three_state() {
        Status::InProgress => "in-progress",
        Status::Completed => "completed",
        _ => "not-started",
    }
}

/// A todo's id as Copilot sees it: a number (its caller id when that is one, else the
/// store's id).
fn number_id(t: &Todo) -> Value {
    serde_json::from_str::<serde_json::Number>(&caller_id(t)).map_or_else(|_| json!(t.id), Value::Number)
}

/// The list in the tool's own shape: `{"todoList": [{"id", "title", "status"}]}`.
pub fn todo_list(rows: &[Todo]) -> Value {
    json!({"todoList": rows.iter().map(|t| json!({"id": number_id(t), "title": t.subject, "status": status_name(t.status)})).collect::<Vec<_>>()})
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "manage_todo_list")?;
    let wanted = args["todoList"].as_array().map(Vec::as_slice).unwrap_or_default();
    let mut seen = HashSet::new();
    for t in wanted {
        let id = t["id"].to_string();
        if !seen.insert(id.clone()) {
            return Err(json!(format!("Error: todo ids must be unique: id {id} appears more than once")));
        }
        if str_arg(t, "title").trim().is_empty() {
            return Err(json!(format!("Error: the title of todo {id} must not be blank")));
        }
    }
    let before = whole_list::stored(scope, conv, Kept::Uncanceled);
    let old = todo_list(&before)["todoList"].as_array().cloned().unwrap_or_default();
    let ids = CallerIds::new(&before);
    let items: Vec<_> = wanted
        .iter()
        .map(|t| {
            let status = match str_arg(t, "status") {
                "in-progress" => Status::InProgress,
                "completed" => Status::Completed,
                _ => Status::Pending,
            };
            ids.item(Some(&t["id"].to_string()), str_arg(t, "title"), status, Default::default())
        })
        .collect();
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    let modified =
        old.iter().zip(wanted).filter(|(o, n)| o["title"] != n["title"] || o["status"] != n["status"]).count();
    let changes = modified + wanted.len().abs_diff(old.len());
    let mut warnings = Vec::new();
    if wanted.len() < 3 {
        warnings.push(SMALL);
    } else if wanted.len() > 10 {
        warnings.push(LARGE);
    }
    if changes > 3 {
        warnings.push(MANY);
    }
    let mut out = todo_list(&whole_list::stored(scope, conv, Kept::Uncanceled));
    out["warnings"] = json!(warnings);
    Ok(out)
}

fn text(out: &Value) -> String {
    if let Some(m) = error_message(out).or(out.as_str()) {
        return m.to_string();
    }
    let warnings: Vec<&str> =
        out["warnings"].as_array().map(Vec::as_slice).unwrap_or_default().iter().filter_map(Value::as_str).collect();
    if warnings.is_empty() {
        "Successfully wrote todo list".into()
    } else {
        format!("Successfully wrote todo list\n\n{}", warnings.join("\n"))
    }
}

/// A conversation's list as GitHub Copilot (VS Code)'s tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    todo_list(&whole_list::stored(scope, conv, Kept::Uncanceled))
}

/// The copilot dialect.
pub static DIALECT: Dialect = Dialect {
    name: "copilot",
    aliases: &[],
    runtime: "GitHub Copilot (VS Code)",
    description: "manage_todo_list: the whole list with numeric ids",
    tools: &[&MANAGE_TODO_LIST],
    list_as: Some(ListAs { shape: "`{\"todoList\": [{id, title, status}]}`", read: list_as }),
};
