//! The hermes dialect: Nous Hermes agent's `todo`. `todos` left out reads the list; sent, it
//! replaces the whole list (`merge` false, the default) or, with `merge: true`, updates the
//! todos it names by id (only the fields given) and appends new ones. Ids are the model's
//! own (the todos' caller ids); statuses pending, in_progress, completed, cancelled. Lenient
//! as Hermes is: an unknown status is pending, missing content `(no description)`, an item
//! that is not an object `(invalid item)`, an id sent twice keeps its last item (at that
//! item's place); an item without an id gets the store's id (Hermes would call it `?`), and
//! merge skips it. The list is the conversation's todos that are not archived; a finished
//! item a replace leaves out is archived (history), an open one deleted. The answer is
//! always `{"todos", "summary": {"total", "pending", "in_progress", "completed",
//! "cancelled"}}`, and the model reads it as Hermes prints it (Python's `json.dumps`).

use serde_json::{json, Map, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{caller_id, cancelled_status_name, error_message, failed, session, CallerIds, CANCELLED_STATUSES};
use crate::error::Error;
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::{Find, Scope};
use crate::status::Status;
use crate::todo::Todo;
use pg_todos_core::printed::python_dumps;

/// The keys of the answer, in the order Hermes writes them.
const ORDER: &[&str] =
    &["todos", "summary", "id", "content", "status", "total", "pending", "in_progress", "completed", "cancelled"];

static TODO: Tool = Tool {
    name: "todo",
    description: "Manage your task list for the current session. Use for complex tasks with 3+ steps or when the user provides multiple tasks. Call with no parameters to read the current list. Writing: provide todos to replace the list, or set merge to true to update existing items by id and add new ones. Each item: {id, content, status}; status is pending, in_progress, completed or cancelled. List order is priority; keep only one item in_progress at a time.",
    input_schema: || {
        json!({
            "type": "object",
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "Task items to write. Omit to read current list.",
                    "items": {
                        "type": "object",
                        "required": ["id", "content", "status"],
                        "properties": {
                            "id": {"type": "string", "description": "Unique item identifier"},
                            "content": {"type": "string", "description": "Task description"},
                            "status": {"type": "string", "enum": CANCELLED_STATUSES, "description": "Current status"}
                        }
                    }
                },
                "merge": {"type": "boolean", "default": false,
                          "description": "true: update existing items by id, add new ones. false (default): replace the entire list."}
            }
        })
    },
    precheck: None,
    run: todo,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    // lenient as Hermes: items of any shape, null for either field
    accepts: Some(|| {
        json!({
            "type": "object",
            "properties": {"todos": {"type": ["array", "null"]}, "merge": {"type": ["boolean", "null"]}}
        })
    }),
};

/// A field as Python's `str(...).strip()` reads it (None: absent, null or blank).
fn text_of(t: &Value, key: &str) -> Option<String> {
    let s = match t.get(key)? {
        Value::Null => return None,
        Value::String(s) => s.trim().to_string(),
        Value::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        other => other.to_string(),
    };
    (!s.is_empty()).then_some(s)
}

/// An item as Hermes validates it: (id, content, status).
fn validated(t: &Value) -> (Option<String>, String, Status) {
    if !t.is_object() {
        return (None, "(invalid item)".into(), Status::Pending);
    }
    let status = text_of(t, "status")
        .map(|s| s.to_lowercase())
        .filter(|s| CANCELLED_STATUSES.contains(&s.as_str()))
        .and_then(|s| Status::parse(&s))
        .unwrap_or(Status::Pending);
    (text_of(t, "id"), text_of(t, "content").unwrap_or_else(|| "(no description)".into()), status)
}

/// The items with an id sent twice collapsed to the last (at its place); items without an id
/// all kept.
fn deduplicated(todos: &[Value]) -> Vec<&Value> {
    let id = |t: &Value| t.is_object().then(|| text_of(t, "id")).flatten();
    let last: std::collections::HashMap<String, usize> =
        todos.iter().enumerate().filter_map(|(i, t)| Some((id(t)?, i))).collect();
    todos.iter().enumerate().filter(|(i, t)| id(t).is_none_or(|id| last[&id] == *i)).map(|(_, t)| t).collect()
}

/// The answer: the list and its counts by status.
pub fn answer(rows: &[Todo]) -> Value {
    let todos: Vec<Value> = rows
        .iter()
        .map(|t| json!({"id": caller_id(t), "content": t.subject, "status": cancelled_status_name(t.status)}))
        .collect();
    let count = |s: &str| todos.iter().filter(|t| t["status"] == s).count();
    json!({
        "todos": todos,
        "summary": {"total": todos.len(), "pending": count("pending"), "in_progress": count("in_progress"),
                    "completed": count("completed"), "cancelled": count("cancelled")}
    })
}

fn todo(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todo")?;
    let Some(sent) = args.get("todos").and_then(Value::as_array) else {
        return Ok(answer(&whole_list::stored(scope, conv, Kept::All)));
    };
    let sent = deduplicated(sent);
    let list = whole_list::stored(scope, conv, Kept::All);
    let ids = CallerIds::new(&list);
    if args.get("merge") == Some(&Value::Bool(true)) {
        for t in sent {
            let Some(id) = t.is_object().then(|| text_of(t, "id")).flatten() else { continue };
            match ids.find(&id) {
                Some(found) => {
                    let mut fields = Map::new();
                    if let Some(c) = text_of(t, "content") {
                        fields.insert("subject".into(), json!(c));
                    }
                    // Hermes has no blocked, deferred or review status: what it shows one as, sent
                    // back, keeps it
                    let status = text_of(t, "status")
                        .map(|s| s.to_lowercase())
                        .and_then(|s| Status::parse(&s))
                        .filter(|s| !whole_list::keeps(Rules::runtime(Kept::All), found.status, *s));
                    let change = Change { status, via_reopen: true, fields, ..Change::default() };
                    match single::change(scope, Find::Conversation(conv), found.id, change) {
                        Ok(_) | Err(Error::NotFound { .. }) => {}
                        Err(e) => return Err(failed(e)),
                    }
                }
                None => {
                    let (_, content, status) = validated(t);
                    let fields = json_fields([
                        ("conversation_id", json!(conv)),
                        ("subject", json!(content)),
                        ("status", json!(status.as_str())),
                        ("external_id", json!(id)),
                    ]);
                    single::add(scope, NewTodo { fields, ..NewTodo::default() }).map_err(failed)?;
                }
            }
        }
    } else {
        let items: Vec<_> = sent
            .iter()
            .map(|t| {
                let (id, content, status) = validated(t);
                ids.item(id.as_deref(), &content, status, Map::new())
            })
            .collect();
        whole_list::replace(scope, conv, Rules::runtime(Kept::All), &items).map_err(failed)?;
    }
    Ok(answer(&whole_list::stored(scope, conv, Kept::All)))
}

fn text(out: &Value) -> String {
    error_message(out).map_or_else(|| python_dumps(out, ORDER), str::to_string)
}

/// A conversation's list as Nous Hermes agent's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    answer(&whole_list::stored(scope, conv, Kept::All))
}

/// The hermes dialect.
pub static DIALECT: Dialect = Dialect {
    name: "hermes",
    aliases: &[],
    runtime: "Nous Hermes agent",
    description: "todo: read, replace or merge the list",
    tools: &[&TODO],
    list_as: Some(ListAs { shape: "its answer `{\"todos\", \"summary\"}`", read: list_as }),
};
