//! The continue dialect: Continue CLI's `Checklist`, the whole list as one markdown
//! checklist (`- [ ]` open, `- [x]` done; `[-]` or `[~]` in progress, as Roo writes it).
//! Its checkbox lines are the conversation's todos (not canceled or archived), matched by
//! content and place; the whole checklist, notes included, is kept with the list, so that
//! `todo.list_as('continue', …)` gives it back as written, with each todo as it is now. A
//! finished item the checklist leaves out is archived (history), an open one deleted. The
//! model reads `Task list status:`, a line break and the checklist as given.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{error_message, failed, session, str_arg};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;

static CHECKLIST: Tool = Tool {
    name: "Checklist",
    description: "Create or update a task checklist. Send the complete checklist in markdown each time: one task a line, - [ ] for open and - [x] for done; other lines are kept as notes.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["checklist"],
            "properties": {
                "checklist": {"type": "string", "description": "The complete checklist in markdown format using - [ ] for incomplete and - [x] for complete items"}
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

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "Checklist")?;
    let checklist = str_arg(args, "checklist");
    whole_list::replace_document(scope, conv, Rules::runtime(Kept::Uncanceled), checklist).map_err(failed)?;
    Ok(json!({ "checklist": checklist }))
}

fn text(out: &Value) -> String {
    error_message(out).map_or_else(|| format!("Task list status:\n{}", str_arg(out, "checklist")), str::to_string)
}

/// The checklist as last written, with each todo as it is now.
pub fn checklist(scope: &Scope, conv: &str) -> Value {
    json!(whole_list::document(scope, conv, Kept::Uncanceled))
}

/// A conversation's list as Continue CLI's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    checklist(scope, conv)
}

/// The continue dialect.
pub static DIALECT: Dialect = Dialect {
    name: "continue",
    aliases: &[],
    runtime: "Continue CLI",
    description: "Checklist: the list as one markdown checklist",
    tools: &[&CHECKLIST],
    list_as: Some(ListAs {
        shape: "the checklist as last written, with its todos as they are now, as a JSON string",
        read: list_as,
    }),
};
