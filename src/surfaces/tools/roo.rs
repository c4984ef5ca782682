//! The roo dialect: Roo Code's `update_todo_list`, the whole list as a markdown checklist,
//! one item a line in execution order: `[ ]` pending, `[x]` completed, `[-]` or `[~]` in
//! progress, an optional leading `- `; other lines are ignored, as Roo ignores them. The
//! list is the conversation's todos that are not canceled or archived, matched by content;
//! a matched todo only moves forward (pending → in_progress → completed, or stays). A
//! finished item the list leaves out is archived (history), an open one deleted. The model
//! reads `Todo list updated successfully.`.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{error, failed, sentence, session, str_arg};
use crate::checklist::parse_checklist;
use crate::error::Error;
use crate::ops::whole_list::{self, Dropped, Item, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

static UPDATE_TODO_LIST: Tool = Tool {
    name: "update_todo_list",
    description: "Replace the entire TODO list with an updated checklist reflecting the current state. Always provide the full list; the system will overwrite the previous one. One item a line, in execution order: [ ] pending, [x] completed, [-] in progress. Status moves only forward: pending, then in progress, then completed.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["todos"],
            "properties": {"todos": {"type": "string", "description": "Full markdown checklist in execution order, using [ ] for pending, [x] for completed, and [-] for in progress"}}
        })
    },
    precheck: None,
    run: update,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(sentence),
    accepts: None,
};

/// The list as Roo writes it: `[ ]`, `[-]`, `[x]` lines (a blocked todo is pending).
pub fn checklist(rows: &[Todo]) -> String {
    rows.iter()
        .map(|t| {
            let mark = match t.status.three_state() {
                Status::InProgress => "[-]",
                Status::Completed => "[x]",
                _ => "[ ]",
            };
            format!("{mark} {}", t.subject)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn update(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "update_todo_list")?;
    let items: Vec<Item> = parse_checklist(str_arg(args, "todos"))
        .into_iter()
        .map(|(content, status)| Item { id: None, content, status, columns: Default::default() })
        .collect();
    let rules = Rules { kept: Kept::Uncanceled, dropped: Dropped::FinishedKept, blocked: false, forward_only: true };
    if items.len() > crate::schema::MAX_ITEMS {
        return Err(error(
            "invalid_arguments",
            format!("update_todo_list: a list holds at most {} items, got {}", crate::schema::MAX_ITEMS, items.len()),
        ));
    }
    match whole_list::replace(scope, conv, rules, &items) {
        Ok(_) => Ok(json!("Todo list updated successfully.")),
        Err(Error::Invalid(m)) => Err(error("invalid_move", m)),
        Err(e) => Err(failed(e)),
    }
}

/// A conversation's list as Roo Code's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    json!(checklist(&whole_list::stored(scope, conv, Kept::Uncanceled)))
}

/// The roo dialect.
pub static DIALECT: Dialect = Dialect {
    name: "roo",
    aliases: &[],
    runtime: "Roo Code",
    description: "update_todo_list: a markdown checklist",
    tools: &[&UPDATE_TODO_LIST],
    list_as: Some(ListAs { shape: "the markdown checklist, as a JSON string", read: list_as }),
};
