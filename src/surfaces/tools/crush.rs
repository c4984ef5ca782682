//! The crush dialect: Charm Crush's `todos`, Claude Code's TodoWrite in snake_case: the
//! whole list of `{content, status, active_form}` each time. The status is a free string in
//! the schema; pending, in_progress and completed are accepted and anything else refused
//! with Crush's words. Items are matched to the stored list by content. The list is the
//! conversation's todos that are not canceled or archived; a finished item the list leaves
//! out is archived (history), an open one deleted. The answer is Crush's response metadata
//! (`is_new`, `todos`, `just_completed`, `just_started`, `completed`, `total`); the model reads
//! Crush's confirmation with the status counts.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{claude_status_name, error, error_message, failed, list_items, session, str_arg, CLAUDE_STATUSES};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::todo::Todo;

/// What Crush tells the model after the status line.
const WRITTEN: &str = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable.";

static TODOS: Tool = Tool {
    name: "todos",
    description: "Creates and manages a structured task list for the current session: send the whole list each time, every item with its content (imperative form), status (pending, in_progress or completed) and active_form (present continuous form). Keep exactly one item in_progress while working.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The updated todo list",
                    "items": {
                        "type": "object",
                        "required": ["content", "status", "active_form"],
                        "properties": {
                            "content": {"type": "string", "description": "What needs to be done (imperative form)"},
                            "status": {"type": "string", "description": "Task status: pending, in_progress, or completed"},
                            "active_form": {"type": "string", "description": "Present continuous form (e.g., 'Running tests')"}
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

/// Crush refuses a status outside its three, naming it and the item (Go's `%q`).
fn check(args: &Value) -> Option<Value> {
    for t in args.get("todos")?.as_array()? {
        let status = t.get("status").and_then(Value::as_str)?;
        if !CLAUDE_STATUSES.contains(&status) {
            return Some(error(
                "invalid_arguments",
                format!("invalid status {} for todo {}", json!(status), json!(str_arg(t, "content"))),
            ));
        }
    }
    None
}

/// The list in the tool's own item shape: `{"content", "status", "active_form"}`.
pub fn todos(rows: &[Todo]) -> Vec<Value> {
    rows.iter()
        .map(|t| {
            json!({"content": t.subject, "status": claude_status_name(t.status),
                   "active_form": t.active_form.as_deref().unwrap_or(&t.subject)})
        })
        .collect()
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todos")?;
    let wanted = args["todos"].as_array().cloned().unwrap_or_default();
    if let Some(i) = wanted.iter().position(|t| str_arg(t, "content").trim().is_empty()) {
        return Err(error("invalid_arguments", format!("todos: todos[{i}].content: must not be blank")));
    }
    let before = whole_list::stored(scope, conv, Kept::Uncanceled);
    let old_status = |content: &str| before.iter().find(|t| t.subject == content).map(|t| claude_status_name(t.status));
    let mut items = list_items(&args["todos"], "content", &[("active_form", "active_form")]);
    for item in &mut items {
        if item.columns["active_form"].as_str().is_some_and(|a| a.trim().is_empty()) {
            item.columns.insert("active_form".into(), Value::Null);
        }
    }
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    let (mut just_completed, mut just_started) = (Vec::new(), None);
    for t in &wanted {
        let (content, status) = (str_arg(t, "content"), str_arg(t, "status"));
        let old = old_status(content);
        if status == "completed" && old.is_some_and(|o| o != "completed") {
            just_completed.push(json!(content));
        }
        if status == "in_progress" && old != Some("in_progress") {
            let active = str_arg(t, "active_form");
            just_started = Some(if active.is_empty() { content } else { active });
        }
    }
    let completed = wanted.iter().filter(|t| str_arg(t, "status") == "completed").count();
    let mut out = json!({
        "is_new": before.is_empty(),
        "todos": wanted,
        "completed": completed,
        "total": wanted.len(),
    });
    if !just_completed.is_empty() {
        out["just_completed"] = json!(just_completed);
    }
    if let Some(started) = just_started {
        out["just_started"] = json!(started);
    }
    Ok(out)
}

fn text(out: &Value) -> String {
    if let Some(m) = error_message(out) {
        return m.to_string();
    }
    let todos = out["todos"].as_array().map(Vec::as_slice).unwrap_or_default();
    let count = |s: &str| todos.iter().filter(|t| str_arg(t, "status") == s).count();
    format!(
        "Todo list updated successfully.\n\nStatus: {} pending, {} in progress, {} completed\n{WRITTEN}",
        count("pending"),
        count("in_progress"),
        count("completed")
    )
}

/// A conversation's list as Charm Crush's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    json!({ "todos": todos(&whole_list::stored(scope, conv, Kept::Uncanceled)) })
}

/// The crush dialect.
pub static DIALECT: Dialect = Dialect {
    name: "crush",
    aliases: &[],
    runtime: "Charm Crush",
    description: "todos: the whole list with status counts",
    tools: &[&TODOS],
    list_as: Some(ListAs { shape: "`{\"todos\": [{content, status, active_form}]}`", read: list_as }),
};
