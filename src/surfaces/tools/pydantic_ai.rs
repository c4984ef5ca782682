//! The pydantic-ai dialect: pydantic-ai-todo's toolset (pydantic-ai agents, pydantic-deep):
//! `write_todos`, the whole list of `{content, status, active_form}` (pending, in_progress,
//! completed), and `read_todos`. The list is the conversation's todos that are not canceled
//! or archived; a finished item the list leaves out is archived (history), an open one
//! deleted. Both answer the model with the toolset's own sentences: `Updated N todos: …`
//! and `Current todos:` with one `N. [ ]`, `[*]` or `[x]` line per todo and the summary.
//! pydantic-ai checks types only; the store needs a subject, so a blank content is refused.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{claude_status_name, error, failed, list_items, sentence, session, str_arg};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

static WRITE_TODOS: Tool = Tool {
    name: "write_todos",
    description: "Use this tool to create and manage a structured task list for your current session.\nThis helps you track progress, organize complex tasks, and demonstrate thoroughness.\n\n## When to Use This Tool\nUse this tool in these scenarios:\n1. Complex multi-step tasks - When a task requires 3 or more distinct steps\n2. Non-trivial tasks - Tasks that require careful planning\n3. User provides multiple tasks - When users provide a list of things to be done\n4. After receiving new instructions - Capture user requirements as todos\n5. When starting a task - Mark it as in_progress BEFORE beginning work\n6. After completing a task - Mark it as completed immediately\n\n## Task States\n- pending: Task not yet started\n- in_progress: Currently working on (limit to ONE at a time)\n- completed: Task finished successfully\n\n## Important\n- Exactly ONE task should be in_progress at any time\n- Mark tasks complete IMMEDIATELY after finishing (don't batch completions)\n- If you encounter blockers, keep the task as in_progress and create a new task for the blocker",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "List of todo items with content, status, and active_form.",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["content", "status", "active_form"],
                        "properties": {
                            "content": {"type": "string", "description": "The task description in imperative form (e.g., 'Implement feature X')"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "Task status: pending, in_progress, or completed"},
                            "active_form": {"type": "string", "description": "Present continuous form during execution (e.g., 'Implementing feature X')"}
                        }
                    }
                }
            }
        })
    },
    precheck: None,
    run: write,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(sentence),
    accepts: None,
};

static READ_TODOS: Tool = Tool {
    name: "read_todos",
    description: "Read the current todo list state.\n\nUse this tool to check the current status of all tasks before:\n- Deciding what to work on next\n- Updating task statuses\n- Reporting progress to the user\n\nReturns all todos with their current status (pending, in_progress, completed).",
    input_schema: || json!({"type": "object", "additionalProperties": false, "properties": {}}),
    precheck: None,
    run: read,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(sentence),
    accepts: None,
};

/// `N completed, N in progress, N pending` of a list's statuses.
fn counts<'a>(statuses: impl Iterator<Item = &'a str>) -> String {
    let (mut done, mut doing, mut open) = (0, 0, 0);
    for s in statuses {
        match s {
            "completed" => done += 1,
            "in_progress" => doing += 1,
            _ => open += 1,
        }
    }
    format!("{done} completed, {doing} in progress, {open} pending")
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "write_todos")?;
    let wanted = args["todos"].as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(i) = wanted.iter().position(|t| str_arg(t, "content").trim().is_empty()) {
        return Err(error("invalid_arguments", format!("write_todos: todos[{i}].content: must not be blank")));
    }
    let mut items = list_items(&args["todos"], "content", &[("active_form", "active_form")]);
    for item in &mut items {
        if item.columns["active_form"].as_str().is_some_and(|a| a.trim().is_empty()) {
            item.columns.insert("active_form".into(), Value::Null);
        }
    }
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    Ok(json!(format!("Updated {} todos: {}", wanted.len(), counts(wanted.iter().map(|t| str_arg(t, "status"))))))
}

fn read(scope: &Scope, _args: &Value) -> Answer {
    let conv = session(scope, "read_todos")?;
    let rows = whole_list::stored(scope, conv, Kept::Uncanceled);
    if rows.is_empty() {
        return Ok(json!("No todos in the list. Use write_todos to create tasks."));
    }
    let mut lines = vec!["Current todos:".to_string()];
    for (i, t) in rows.iter().enumerate() {
        let icon = match t.status.three_state() {
            Status::InProgress => "[*]",
            Status::Completed => "[x]",
            _ => "[ ]",
        };
        lines.push(format!("{}. {icon} {}", i + 1, t.subject));
    }
    lines.push(String::new());
    lines.push(format!("Summary: {}", counts(rows.iter().map(|t| claude_status_name(t.status)))));
    Ok(json!(lines.join("\n")))
}

/// The list in the toolset's `Todo` shape: `{"content", "status", "active_form"}`.
fn todos(rows: &[Todo]) -> Value {
    let todos: Vec<Value> = rows
        .iter()
        .map(|t| {
            json!({"content": t.subject, "status": claude_status_name(t.status),
                   "active_form": t.active_form.as_deref().unwrap_or(&t.subject)})
        })
        .collect();
    json!({ "todos": todos })
}

/// A conversation's list as pydantic-ai-todo's storage holds it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    todos(&whole_list::stored(scope, conv, Kept::Uncanceled))
}

/// The pydantic-ai dialect.
pub static DIALECT: Dialect = Dialect {
    name: "pydantic-ai",
    aliases: &[],
    runtime: "pydantic-ai-todo (pydantic-ai, pydantic-deep)",
    description: "write_todos and read_todos: the whole list, and the list read back",
    tools: &[&WRITE_TODOS, &READ_TODOS],
    list_as: Some(ListAs { shape: "`{\"todos\": [{content, status, active_form}]}`", read: list_as }),
};
