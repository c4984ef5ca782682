//! The openhands dialect: OpenHands' `task_tracker`, `view` (the default) or `plan` (the
//! whole list of `{title, notes, status}`: todo, in_progress, done). Notes are the todos'
//! descriptions. The list is the conversation's todos that are not canceled or archived; a
//! finished item a plan leaves out is archived (history), an open one deleted. The model
//! reads OpenHands' texts: `Task list has been updated with N item(s).`, and the view: `#
//! Task List`, then per item `N. <icon> <title>` (⏳ todo, 🔄 in progress, ✅ done) with its
//! notes on the next line indented by three spaces, items a blank line apart.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{error, error_message, failed, session, str_arg};
use crate::ops::whole_list::{self, Item, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

static TASK_TRACKER: Tool = Tool {
    name: "task_tracker",
    description: "This tool provides structured task management for development workflows: view shows the task list, plan replaces it with task_list (every task with its title, notes and status: todo, in_progress or done). Keep one task in_progress while working and mark tasks done as soon as they are finished.",
    input_schema: || {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "enum": ["view", "plan"], "default": "view",
                            "description": "The command to execute. `view` shows the current task list. `plan` creates or updates the task list based on provided requirements and progress. Always `view` the current list before making changes."},
                "task_list": {
                    "type": "array",
                    "description": "The full task list. Required parameter of `plan` command.",
                    "items": {
                        "type": "object",
                        "required": ["title"],
                        "properties": {
                            "title": {"type": "string", "description": "A brief title for the task."},
                            "notes": {"type": "string", "default": "", "description": "Additional details or notes about the task."},
                            "status": {"type": "string", "enum": ["todo", "in_progress", "done"], "default": "todo",
                                       "description": "The current status of the task. One of 'todo', 'in_progress', or 'done'."}
                        }
                    }
                },
                "summary": {"type": "string", "description": "A concise summary (approximately 10 words) describing what this specific action does, in the present tense."}
            }
        })
    },
    precheck: Some(check),
    run: track,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

/// OpenHands' answer to a command it does not know.
fn check(args: &Value) -> Option<Value> {
    let command = args.get("command")?.as_str()?;
    (!["view", "plan"].contains(&command)).then(|| {
        error("invalid_arguments", format!("Unknown command: {command}. Supported commands are \"view\" and \"plan\"."))
    })
}

/// OpenHands' spelling of a status.
fn status_name(s: Status) -> &'static str {
    match s.three_state() {
        Status::InProgress => "in_progress",
        Status::Completed => "done",
        _ => "todo",
    }
}

/// The list in the tool's own shape: `{"task_list": [{"title", "notes", "status"}]}`.
pub fn task_list(rows: &[Todo]) -> Value {
    json!({"task_list": rows.iter().map(|t| json!({"title": t.subject, "notes": t.description.as_deref().unwrap_or(""), "status": status_name(t.status)})).collect::<Vec<_>>()})
}

fn track(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "task_tracker")?;
    if args.get("command").and_then(Value::as_str) != Some("plan") {
        let mut out = task_list(&whole_list::stored(scope, conv, Kept::Uncanceled));
        out["command"] = json!("view");
        return Ok(out);
    }
    let Some(wanted) = args.get("task_list").and_then(Value::as_array) else {
        return Err(error("invalid_arguments", "task_list is required for the \"plan\" command."));
    };
    let mut items = Vec::with_capacity(wanted.len());
    for (i, t) in wanted.iter().enumerate() {
        let title = str_arg(t, "title");
        if title.trim().is_empty() {
            return Err(error("invalid_arguments", format!("task_list[{i}].title must not be empty")));
        }
        let status = match str_arg(t, "status") {
            "in_progress" => Status::InProgress,
            "done" => Status::Completed,
            _ => Status::Pending,
        };
        let notes = str_arg(t, "notes");
        let description = if notes.is_empty() { Value::Null } else { json!(notes) };
        items.push(Item {
            id: None,
            content: title.to_string(),
            status,
            columns: [("description".to_string(), description)].into_iter().collect(),
        });
    }
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    let mut out = task_list(&whole_list::stored(scope, conv, Kept::Uncanceled));
    out["command"] = json!("plan");
    Ok(out)
}

fn text(out: &Value) -> String {
    if let Some(m) = error_message(out) {
        return m.to_string();
    }
    let tasks = out["task_list"].as_array().map(Vec::as_slice).unwrap_or_default();
    if out["command"] == "plan" {
        return format!("Task list has been updated with {} item(s).", tasks.len());
    }
    if tasks.is_empty() {
        return "No task list found. Use the \"plan\" command to create one.".into();
    }
    let items: Vec<String> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let icon = match str_arg(t, "status") {
                "in_progress" => "🔄",
                "done" => "✅",
                _ => "⏳",
            };
            let notes = str_arg(t, "notes");
            let mut item = format!("{}. {icon} {}", i + 1, str_arg(t, "title"));
            if !notes.is_empty() {
                item.push_str(&format!("\n   {notes}"));
            }
            item
        })
        .collect();
    format!("# Task List\n\n{}", items.join("\n\n"))
}

/// A conversation's list as OpenHands's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    task_list(&whole_list::stored(scope, conv, Kept::Uncanceled))
}

/// The openhands dialect.
pub static DIALECT: Dialect = Dialect {
    name: "openhands",
    aliases: &[],
    runtime: "OpenHands",
    description: "task_tracker: view or plan the task list",
    tools: &[&TASK_TRACKER],
    list_as: Some(ListAs { shape: "`{\"task_list\": [{title, notes, status}]}`", read: list_as }),
};
