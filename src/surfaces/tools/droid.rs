//! The droid dialect: Factory Droid's `TodoWrite`, the whole list each time, sent either as
//! its markdown string (`1. [completed] Scaffold` lines) or as an array of `{content,
//! status}`; a `[status]` written at the start of an item's content (as Droid often does,
//! leaving the status pending) is the item's status. Statuses: pending, in_progress,
//! completed. The list is the conversation's todos that are not canceled or archived; a
//! finished item the list leaves out is archived (history), an open one deleted. The answer
//! is Droid's todo state, `{"todos": "<the numbered lines>"}`, and the model reads the lines
//! (Droid's own result text is not published; its todo state is).

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{claude_status_name, error, error_message, failed, session, str_arg};
use crate::ops::whole_list::{self, Item, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

static TODO_WRITE: Tool = Tool {
    name: "TodoWrite",
    description: "Create and update the todo list for the current task. Send the whole list each time, either as numbered lines \"1. [status] task\" or as an array of {content, status}; status is pending, in_progress or completed. Keep one task in_progress while working on it and mark each completed as soon as it is done.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": ["string", "array"],
                    "description": "The whole todo list: numbered lines \"1. [completed] Scaffold\", or [{content, status}]",
                    "items": {
                        "type": "object",
                        "required": ["content"],
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}
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
    text: Some(text),
    accepts: None,
};

/// A status as Droid spells it, None for another word.
fn parse_status(s: &str) -> Option<Status> {
    match s.trim() {
        "pending" => Some(Status::Pending),
        "in_progress" => Some(Status::InProgress),
        "completed" => Some(Status::Completed),
        _ => None,
    }
}

/// Content that starts with `[status]`: that status and the rest; else None.
fn bracketed(content: &str) -> Option<(Status, &str)> {
    let rest = content.trim_start().strip_prefix('[')?;
    let (word, text) = rest.split_once(']')?;
    Some((parse_status(word)?, text.trim_start()))
}

/// One line of the markdown string: `N. [status] text` (or `N. text`: pending). None for a
/// line that is no item.
fn line_item(line: &str) -> Option<(Status, &str)> {
    let line = line.trim();
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = line[digits..].strip_prefix('.').filter(|_| digits > 0)?.trim_start();
    Some(bracketed(rest).unwrap_or((Status::Pending, rest)))
}

/// The items the arguments send, or the error object of the first bad one.
fn items(todos: &Value) -> Result<Vec<Item>, Value> {
    let item =
        |status, content: &str| Item { id: None, content: content.to_string(), status, columns: Default::default() };
    let mut items = Vec::new();
    match todos {
        Value::String(text) => {
            for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
                let Some((status, content)) = line_item(line) else {
                    return Err(error(
                        "invalid_arguments",
                        format!("TodoWrite: todos line {}: write each todo as \"N. [status] task\", status pending, in_progress or completed", n + 1),
                    ));
                };
                items.push(item(status, content));
            }
        }
        Value::Array(list) => {
            for t in list {
                let content = str_arg(t, "content");
                let (status, content) = match (t.get("status").and_then(Value::as_str), bracketed(content)) {
                    // the content's own [status] wins over a status left pending
                    (None | Some("pending"), Some(found)) => found,
                    (status, _) => (status.and_then(parse_status).unwrap_or(Status::Pending), content),
                };
                items.push(item(status, content));
            }
        }
        _ => {}
    }
    if let Some(i) = items.iter().position(|i| i.content.trim().is_empty()) {
        return Err(error("invalid_arguments", format!("TodoWrite: todos[{i}]: the task must not be blank")));
    }
    Ok(items)
}

/// The list as Droid's numbered lines.
fn lines(rows: &[Todo]) -> String {
    let lines: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(i, t)| format!("{}. [{}] {}", i + 1, claude_status_name(t.status), t.subject))
        .collect();
    lines.join("\n")
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "TodoWrite")?;
    let items = items(&args["todos"])?;
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    Ok(json!({ "todos": lines(&whole_list::stored(scope, conv, Kept::Uncanceled)) }))
}

fn text(out: &Value) -> String {
    match error_message(out) {
        Some(m) => m.to_string(),
        None => str_arg(out, "todos").to_string(),
    }
}

/// A conversation's list as Droid's todo state holds it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    json!({ "todos": lines(&whole_list::stored(scope, conv, Kept::Uncanceled)) })
}

/// The droid dialect.
pub static DIALECT: Dialect = Dialect {
    name: "droid",
    aliases: &[],
    runtime: "Factory Droid",
    description: "TodoWrite: the whole list as numbered [status] lines or an array",
    tools: &[&TODO_WRITE],
    list_as: Some(ListAs { shape: "its todo state `{\"todos\": \"1. [status] task\\n…\"}`", read: list_as }),
};
