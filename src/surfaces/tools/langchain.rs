//! The langchain dialect: `write_todos` of LangChain's TodoListMiddleware (and deepagents,
//! which uses it): the whole list of `{content, status}` (pending, in_progress, completed;
//! several in progress at once allowed). The list is the conversation's todos that are not
//! canceled or archived; a finished item the list leaves out is archived (history), an open
//! one deleted. The model reads `Updated todo list to ` and the Python repr of the list.
//! LangChain refuses two writes in one model turn: with a turn in context, a second
//! `write_todos` of the list in that turn is refused with its message and writes nothing (the
//! first, already answered, stands). It shares its name with Gemini CLI's tool: a server kept
//! to this dialect offers this one, and `todo.call('langchain/write_todos', …)` names it.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{claude_status_name, error, error_message, failed, list_items, session, str_arg};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::todo::Todo;
use pg_todos_core::printed::python_repr;

/// LangChain's refusal of a second write in one model turn.
const TWICE: &str = "Error: The `write_todos` tool should never be called multiple times in parallel. Please call it only once per model invocation to update the todo list.";

static WRITE_TODOS: Tool = Tool {
    name: "write_todos",
    description: "Use this tool to create and manage a structured task list for your current work session. Send the whole list each time, every item with its content and status (pending, in_progress or completed); mark items completed as soon as they are done. Call it at most once per turn.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["content", "status"],
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

/// The list in the tool's own shape: `{"todos": [{"content", "status"}]}`.
pub fn todos(rows: &[Todo]) -> Value {
    json!({"todos": rows.iter().map(|t| json!({"content": t.subject, "status": claude_status_name(t.status)})).collect::<Vec<_>>()})
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "write_todos")?;
    let wanted = args["todos"].as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(i) = wanted.iter().position(|t| str_arg(t, "content").trim().is_empty()) {
        return Err(error("invalid_arguments", format!("write_todos: todos[{i}].content: must not be blank")));
    }
    if !whole_list::first_write_in_turn(scope, conv) {
        return Err(json!(TWICE));
    }
    let items = list_items(&args["todos"], "content", &[]);
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    let list: Vec<Value> =
        wanted.iter().map(|t| json!({"content": str_arg(t, "content"), "status": str_arg(t, "status")})).collect();
    Ok(json!({ "todos": list }))
}

fn text(out: &Value) -> String {
    match (error_message(out), out.as_str()) {
        (Some(m), _) => m.to_string(),
        (None, Some(s)) => s.to_string(),
        _ => format!("Updated todo list to {}", python_repr(&out["todos"], &["content", "status"])),
    }
}

/// A conversation's list as LangChain and deepagents's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    todos(&whole_list::stored(scope, conv, Kept::Uncanceled))
}

/// The langchain dialect.
pub static DIALECT: Dialect = Dialect {
    name: "langchain",
    aliases: &[],
    runtime: "LangChain and deepagents",
    description: "write_todos of the TodoListMiddleware",
    tools: &[&WRITE_TODOS],
    list_as: Some(ListAs { shape: "`{\"todos\": [{content, status}]}`", read: list_as }),
};
