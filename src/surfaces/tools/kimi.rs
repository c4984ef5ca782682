//! The kimi dialect: Moonshot Kimi CLI's `SetTodoList`, the whole list of `{title, status}`
//! (pending, in_progress, done). `todos` omitted or null reads the list; `[]` clears it. The
//! list is the conversation's todos that are not canceled or archived; a finished item the
//! list leaves out is archived (history), an open one deleted. The model reads `Todo list
//! updated`, or the list: `Current todo list:` and one `- [status] title` line per item, or
//! `Todo list is empty.`.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{error, error_message, failed, session, str_arg};
use crate::ops::whole_list::{self, Item, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

static SET_TODO_LIST: Tool = Tool {
    name: "SetTodoList",
    description: "Update the whole todo list: send every item, each with its title and status (pending, in_progress or done). Omit todos (or send null) to read the current list; send [] to clear it.",
    input_schema: || {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": ["array", "null"],
                    "description": "The updated todo list. If not provided, returns the current todo list without making changes.",
                    "items": {
                        "type": "object",
                        "required": ["title", "status"],
                        "properties": {
                            "title": {"type": "string", "minLength": 1, "description": "The title of the todo"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "done"], "description": "The status of the todo"}
                        }
                    }
                }
            }
        })
    },
    precheck: None,
    run: set_todo_list,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

/// Kimi's spelling of a status.
fn status_name(s: Status) -> &'static str {
    match s.three_state() {
        Status::Completed => "done",
        s => s.as_str(),
    }
}

/// The list in the tool's own shape: `{"todos": [{"title", "status"}]}`.
pub fn todos(rows: &[Todo]) -> Value {
    json!({"todos": rows.iter().map(|t| json!({"title": t.subject, "status": status_name(t.status)})).collect::<Vec<_>>()})
}

fn set_todo_list(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "SetTodoList")?;
    let Some(wanted) = args.get("todos").and_then(Value::as_array) else {
        return Ok(todos(&whole_list::stored(scope, conv, Kept::Uncanceled)));
    };
    let mut items = Vec::with_capacity(wanted.len());
    for (i, t) in wanted.iter().enumerate() {
        let title = str_arg(t, "title");
        if title.trim().is_empty() {
            return Err(error("invalid_arguments", format!("SetTodoList: todos[{i}].title: must not be blank")));
        }
        let status = match str_arg(t, "status") {
            "done" => Status::Completed,
            s => Status::parse(s).unwrap_or(Status::Pending),
        };
        items.push(Item { id: None, content: title.to_string(), status, columns: Default::default() });
    }
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    Ok(json!("Todo list updated"))
}

fn text(out: &Value) -> String {
    if let Some(m) = error_message(out) {
        return m.to_string();
    }
    let Some(list) = out.get("todos").and_then(Value::as_array) else {
        return out.as_str().unwrap_or_default().to_string();
    };
    if list.is_empty() {
        return "Todo list is empty.".into();
    }
    let lines: Vec<String> =
        list.iter().map(|t| format!("- [{}] {}", str_arg(t, "status"), str_arg(t, "title"))).collect();
    format!("Current todo list:\n{}", lines.join("\n"))
}

/// A conversation's list as Moonshot Kimi CLI's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    todos(&whole_list::stored(scope, conv, Kept::Uncanceled))
}

/// The kimi dialect.
pub static DIALECT: Dialect = Dialect {
    name: "kimi",
    aliases: &[],
    runtime: "Moonshot Kimi CLI",
    description: "SetTodoList: read or replace the whole list",
    tools: &[&SET_TODO_LIST],
    list_as: Some(ListAs { shape: "`{\"todos\": [{title, status}]}`", read: list_as }),
};
