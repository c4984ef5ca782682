//! The claude-todowrite dialect: Claude Code's `TodoWrite` (its current form), the whole
//! list of `{content, status, activeForm}` sent each time. The list is the conversation's
//! todos that are not canceled or archived; the result is `{"oldTodos", "newTodos"}` and
//! the model reads Claude Code's confirmation. Claude Code itself forgets a list once every
//! item is completed; here a completed item the list leaves out is archived (kept in the
//! store as history, on no list), never lost. An open item left out is deleted.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{claude_status_name, error, error_message, failed, list_items, session, str_arg};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::todo::Todo;

/// What Claude Code's TodoWrite tells the model after a write.
const WRITTEN: &str = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable";

static WRITE: Tool = Tool {
    name: "TodoWrite",
    description: "Use this tool to create and manage a structured task list for your current coding session. The list you send replaces the whole list: each item has content (imperative form), activeForm (present continuous form) and a status; keep exactly one task in_progress while working and mark tasks completed as soon as they are done.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The updated todo list",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["content", "status", "activeForm"],
                        "properties": {
                            "content": {"type": "string", "minLength": 1},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "activeForm": {"type": "string", "minLength": 1}
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

/// The conversation's list in TodoWrite's item shape.
pub fn todos(rows: &[Todo]) -> Vec<Value> {
    rows.iter()
        .map(|t| {
            json!({
                "content": t.subject,
                "status": claude_status_name(t.status),
                "activeForm": t.active_form.as_deref().unwrap_or(&t.subject),
            })
        })
        .collect()
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "TodoWrite")?;
    let wanted = args["todos"].as_array().cloned().unwrap_or_default();
    for (i, t) in wanted.iter().enumerate() {
        for key in ["content", "activeForm"] {
            if str_arg(t, key).trim().is_empty() {
                return Err(error("invalid_arguments", format!("TodoWrite: todos[{i}].{key}: must not be blank")));
            }
        }
    }
    let old = todos(&whole_list::stored(scope, conv, Kept::Uncanceled));
    let items = list_items(&args["todos"], "content", &[("active_form", "activeForm")]);
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    Ok(json!({ "oldTodos": old, "newTodos": wanted }))
}

fn text(out: &Value) -> String {
    match error_message(out) {
        Some(m) => m.to_string(),
        None => WRITTEN.to_string(),
    }
}

/// A conversation's list as Claude Code's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    json!({ "todos": todos(&whole_list::stored(scope, conv, Kept::Uncanceled)) })
}

/// The claude-todowrite dialect.
pub static DIALECT: Dialect = Dialect {
    name: "claude-todowrite",
    aliases: &[],
    runtime: "Claude Code",
    description: "TodoWrite: the whole list each time",
    tools: &[&WRITE],
    list_as: Some(ListAs { shape: "`{\"todos\": [{content, status, activeForm}]}`", read: list_as }),
};
