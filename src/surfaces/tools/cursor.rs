//! The cursor dialect: Cursor's `todo_write`, todos with ids the caller chooses (stored as
//! `external_id`, unique within the conversation). `merge: true` upserts by id: a todo
//! with that id gets the fields given (absent ones unchanged), a new id is appended (it
//! needs content; status defaults to pending); `merge: false` replaces the whole list. The
//! list is the conversation's todos that are not archived; a todo written through another
//! dialect has no id of Cursor's and is shown (and found) by its own id. A finished todo a
//! replace leaves out is archived (history), an open one deleted. The result is the list
//! after the write, `{"todos": [{"id", "content", "status"}]}` (what Cursor's tool answers
//! is not published: the list is what its model needs next).

use std::collections::HashSet;

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{
    caller_id, cancelled_status_name, error, failed, session, str_arg, CallerIds, CANCELLED_STATUSES,
};
use crate::error::Error;
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::{Find, Scope};
use crate::status::Status;
use crate::todo::Todo;

static TODO_WRITE: Tool = Tool {
    name: "todo_write",
    description: "Use this tool to create and manage a structured task list for your current coding session. Each todo has an id you choose, its content and a status; with merge, only the todos sent (by id) change and new ids are added, without merge the todos sent replace the list.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["merge", "todos"],
            "properties": {
                "merge": {"type": "boolean", "description": "If true, the todos will be merged into the existing todos based on the id field. You can leave unchanged properties undefined. If false, the new todos will replace the existing todos."},
                "todos": {
                    "type": "array",
                    "minItems": 2,
                    "items": {
                        "type": "object",
                        "required": ["content", "status", "id"],
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": CANCELLED_STATUSES},
                            "id": {"type": "string"}
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
    // what the description promises: with merge, unchanged properties may be left out; one
    // todo is as welcome as two
    accepts: Some(|| {
        json!({
            "type": "object",
            "required": ["merge", "todos"],
            "properties": {
                "merge": {"type": "boolean"},
                "todos": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["id"],
                        "properties": {
                            "content": {"type": "string"},
                            "status": {"type": "string", "enum": CANCELLED_STATUSES},
                            "id": {"type": "string", "minLength": 1}
                        }
                    }
                }
            }
        })
    }),
};

/// The list in Cursor's shape.
pub fn todos(rows: &[Todo]) -> Value {
    json!({"todos": rows.iter().map(|t| json!({"id": caller_id(t), "content": t.subject, "status": cancelled_status_name(t.status)})).collect::<Vec<_>>()})
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todo_write")?;
    let wanted = args["todos"].as_array().cloned().unwrap_or_default();
    let mut seen = HashSet::new();
    for (i, t) in wanted.iter().enumerate() {
        if !seen.insert(str_arg(t, "id")) {
            return Err(error(
                "invalid_arguments",
                format!("todo_write: todos[{i}].id \"{}\" is sent twice", str_arg(t, "id")),
            ));
        }
        if t.get("content").is_some_and(|c| c.as_str().is_some_and(|c| c.trim().is_empty())) {
            return Err(error("invalid_arguments", format!("todo_write: todos[{i}].content: must not be blank")));
        }
    }
    let list = whole_list::stored(scope, conv, Kept::All);
    let ids = CallerIds::new(&list);
    let status_of = |t: &Value| t.get("status").and_then(Value::as_str).and_then(Status::parse);
    if args["merge"] == json!(true) {
        for (i, t) in wanted.iter().enumerate() {
            let id = str_arg(t, "id");
            match ids.find(id) {
                Some(found) => {
                    let mut fields = serde_json::Map::new();
                    if let Some(c) = t.get("content").and_then(Value::as_str) {
                        fields.insert("subject".into(), json!(c));
                    }
                    let change = Change { status: status_of(t), via_reopen: true, fields, ..Change::default() };
                    match single::change(scope, Find::Conversation(conv), found.id, change) {
                        Ok(_) => {}
                        Err(Error::NotFound { .. }) => {
                            return Err(error("not_found", format!("todo_write: todo \"{id}\" was deleted meanwhile")))
                        }
                        Err(e) => return Err(failed(e)),
                    }
                }
                None => {
                    let Some(content) = t.get("content").and_then(Value::as_str) else {
                        return Err(error(
                            "invalid_arguments",
                            format!("todo_write: todos[{i}] adds todo \"{id}\" and needs its content"),
                        ));
                    };
                    let fields = json_fields([
                        ("conversation_id", json!(conv)),
                        ("subject", json!(content)),
                        ("status", json!(status_of(t).unwrap_or(Status::Pending).as_str())),
                        ("external_id", json!(id)),
                    ]);
                    single::add(scope, NewTodo { fields, ..NewTodo::default() }).map_err(failed)?;
                }
            }
        }
    } else {
        let mut items = Vec::with_capacity(wanted.len());
        for (i, t) in wanted.iter().enumerate() {
            let (Some(content), Some(status)) = (t.get("content").and_then(Value::as_str), status_of(t)) else {
                return Err(error(
                    "invalid_arguments",
                    format!("todo_write: todos[{i}] needs content and status when merge is false"),
                ));
            };
            items.push(ids.item(Some(str_arg(t, "id")), content, status, Default::default()));
        }
        whole_list::replace(scope, conv, Rules::runtime(Kept::All), &items).map_err(failed)?;
    }
    Ok(todos(&whole_list::stored(scope, conv, Kept::All)))
}

/// A conversation's list as Cursor's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    todos(&whole_list::stored(scope, conv, Kept::All))
}

/// The cursor dialect.
pub static DIALECT: Dialect = Dialect {
    name: "cursor",
    aliases: &[],
    runtime: "Cursor",
    description: "todo_write: caller ids, merged or replaced",
    tools: &[&TODO_WRITE],
    list_as: Some(ListAs { shape: "`{\"todos\": [{id, content, status}]}`", read: list_as }),
};
