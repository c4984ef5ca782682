//! The codebuff dialect: Codebuff's `write_todos`, the whole list of `{task, completed}`
//! each time. The list is the conversation's todos that are not canceled or archived; a
//! finished item the list leaves out is archived (history), an open one deleted. An item
//! not completed keeps the status its todo has (in progress through another dialect stays
//! in progress); a new one is pending. The answer is Codebuff's tool output, the list
//! written, `{"todos": [{task, completed}]}`, which its model reads as JSON.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{error, failed, session, str_arg};
use crate::ops::whole_list::{self, Item, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

static WRITE_TODOS: Tool = Tool {
    name: "write_todos",
    description: "Write a todo list to track tasks for multi-step implementations. Use this frequently to maintain an updated step-by-step plan.",
    input_schema: || {
        json!({
            "type": "object",
            "description": "Write a todo list to track tasks for multi-step implementations. Use this frequently to maintain an updated step-by-step plan.",
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "List of todos with their completion status. Add ALL of the applicable tasks to the list, so you don't forget to do anything. Try to order the todos the same way you will complete them. Do not mark todos as completed if you have not completed them yet!",
                    "items": {
                        "type": "object",
                        "required": ["task", "completed"],
                        "properties": {
                            "task": {"type": "string", "description": "Description of the task"},
                            "completed": {"type": "boolean", "description": "Whether the task is completed"}
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
    text: None,
    accepts: None,
};

/// The list in the tool's shape: `{"todos": [{"task", "completed"}]}`.
fn todos(rows: &[Todo]) -> Value {
    let todos: Vec<Value> =
        rows.iter().map(|t| json!({"task": t.subject, "completed": t.status == Status::Completed})).collect();
    json!({ "todos": todos })
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "write_todos")?;
    let wanted = args["todos"].as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(i) = wanted.iter().position(|t| str_arg(t, "task").trim().is_empty()) {
        return Err(error("invalid_arguments", format!("write_todos: todos[{i}].task: must not be blank")));
    }
    let stored = whole_list::stored(scope, conv, Kept::Uncanceled);
    let open: HashMap<&str, Status> =
        stored.iter().filter(|t| t.status != Status::Completed).map(|t| (t.subject.as_str(), t.status)).collect();
    let items: Vec<Item> = wanted
        .iter()
        .map(|t| {
            let task = str_arg(t, "task");
            let status = match t["completed"].as_bool() {
                Some(true) => Status::Completed,
                _ => open.get(task).copied().unwrap_or(Status::Pending),
            };
            Item { id: None, content: task.to_string(), status, columns: Default::default() }
        })
        .collect();
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    let written: Vec<Value> =
        items.iter().map(|i| json!({"task": i.content, "completed": i.status == Status::Completed})).collect();
    Ok(json!({ "todos": written }))
}

/// A conversation's list as Codebuff's tool shows it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    todos(&whole_list::stored(scope, conv, Kept::Uncanceled))
}

/// The codebuff dialect.
pub static DIALECT: Dialect = Dialect {
    name: "codebuff",
    aliases: &[],
    runtime: "Codebuff",
    description: "write_todos: the whole list of tasks, each completed or not",
    tools: &[&WRITE_TODOS],
    list_as: Some(ListAs { shape: "`{\"todos\": [{task, completed}]}`", read: list_as }),
};
