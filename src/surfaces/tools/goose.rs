//! The goose dialect: Block Goose's `todo__todo_write` (the `todo` extension's tool, named
//! with its extension's prefix): one markdown text that replaces the whole list. Its
//! checkbox lines (`- [ ]`, `- [x]`; `[-]` or `[~]` in progress) are the conversation's todos
//! (not canceled or archived), matched by content and place; the whole text, notes included,
//! is kept with the list, so that `todo.list_as('goose', …)` gives it back unchanged while its
//! todos change through any dialect. A finished item the text leaves out is archived
//! (history), an open one deleted. The model reads `Updated (N chars)`; a text over 50,000
//! characters or none at all is refused with Goose's words.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{session, str_arg};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;

/// Goose's limit on the text, in characters.
const MAX_CHARS: usize = 50_000;

static TODO_WRITE: Tool = Tool {
    name: "todo__todo_write",
    description: "Overwrite the entire TODO list with new content. Write it in markdown: one task a checkbox line (- [ ] to do, - [x] done), with any notes between; the whole text replaces the previous one.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["content"],
            "properties": {"content": {"type": "string"}}
        })
    },
    precheck: Some(check),
    run: write,
    effect: Effect::Replaces,
    output_schema: None,
    text: None,
    accepts: None,
};

/// Goose's own refusals, as the text its model reads.
fn check(args: &Value) -> Option<Value> {
    let Some(content) = args.get("content").and_then(Value::as_str) else {
        return Some(json!("Error: Missing required parameter: content"));
    };
    let chars = content.chars().count();
    (chars > MAX_CHARS).then(|| json!(format!("Error: Todo list too large: {chars} chars (max: {MAX_CHARS})")))
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todo__todo_write")?;
    let content = str_arg(args, "content");
    whole_list::replace_document(scope, conv, Rules::runtime(Kept::Uncanceled), content)
        .map_err(|e| json!(format!("Error: {e}")))?;
    Ok(json!(format!("Updated ({} chars)", content.chars().count())))
}

/// The text as last written, with each todo as it is now.
pub fn text(scope: &Scope, conv: &str) -> Value {
    json!(whole_list::document(scope, conv, Kept::Uncanceled))
}

/// A conversation's list as Block Goose's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    text(scope, conv)
}

/// The goose dialect.
pub static DIALECT: Dialect = Dialect {
    name: "goose",
    aliases: &[],
    runtime: "Block Goose",
    description: "todo__todo_write: the list as one markdown text",
    tools: &[&TODO_WRITE],
    list_as: Some(ListAs {
        shape: "the markdown text as last written, with its todos as they are now, as a JSON string",
        read: list_as,
    }),
};
