//! The qwen dialect: Qwen Code's `todo_write`, the whole list of `{content, status, id,
//! blockedBy}` each time: ids the model chooses (the todos' caller ids) and `blockedBy`, the
//! ids of the list's todos an item waits for, stored as real dependencies (`todo.block`'s).
//! While the stored list has an unfinished todo, an item that leaves `blockedBy` out keeps
//! its dependencies; `[]` removes them. Every refusal is Qwen Code's, word for word (a blank
//! or over-long id, blank content, a bad status, repeated ids, a repeated, self or unknown
//! dependency, a cycle), and writes nothing. The list is the conversation's todos that are
//! not canceled or archived; a finished item the list leaves out is archived (history), an
//! open one deleted. The model reads Qwen Code's confirmation and its system reminder with
//! the list as JSON. It shares its name with Cursor's tool: a server kept to this dialect
//! offers this one, and `todo.call('qwen/todo_write', …)` names it.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{
    caller_id, claude_status_name, error, error_message, failed, session, str_arg, CallerIds, CLAUDE_STATUSES,
};
use crate::error::Error;
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;
use pg_todos_core::printed::js_stringify;

const WRITTEN: &str = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable";

/// The keys of an item, in the order Qwen Code writes them.
const ORDER: &[&str] = &["content", "status", "id", "blockedBy"];

static TODO_WRITE: Tool = Tool {
    name: "todo_write",
    description: "Creates and manages a concise, user-visible task list for complex or multi-step work.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todos"],
            "properties": {
                "todos": {
                    "type": "array",
                    "description": "The updated todo list",
                    "items": {
                        "type": "object",
                        "required": ["content", "status", "id"],
                        "additionalProperties": false,
                        "properties": {
                            "content": {"type": "string", "minLength": 1},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "id": {"type": "string", "maxLength": 500},
                            "blockedBy": {"type": "array", "items": {"type": "string", "maxLength": 500}, "uniqueItems": true,
                                          "description": "Todo IDs that must be completed before this item. Active-plan updates preserve omitted dependencies for existing IDs; use [] to remove them."}
                        }
                    }
                }
            }
        })
    },
    precheck: Some(check),
    run: write,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

/// Qwen Code checks the list before its schema does, with its own words.
fn check(args: &Value) -> Option<Value> {
    match args.get("todos").and_then(Value::as_array) {
        None => Some(refuse("Parameter \"todos\" must be an array.")),
        Some(todos) => validate(todos).err(),
    }
}

/// The ids an item waits for (`blockedBy`).
fn deps(t: &Value) -> Vec<&str> {
    t.get("blockedBy")
        .and_then(Value::as_array)
        .map(|d| d.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn refuse(message: impl Into<String>) -> Value {
    error("invalid_arguments", message)
}

/// Qwen Code's checks of a list (after omitted dependencies are filled in), in its order.
fn validate(todos: &[Value]) -> Result<(), Value> {
    if todos.iter().any(|t| !t.is_object()) {
        return Err(refuse("Each todo must be an object."));
    }
    for t in todos {
        let id = t.get("id").and_then(Value::as_str);
        if id.is_none_or(|id| id.trim().is_empty() || id.encode_utf16().count() > 500) {
            return Err(refuse("Each todo must have a non-empty \"id\" string of at most 500 characters."));
        }
        if t.get("content").and_then(Value::as_str).is_none_or(|c| c.trim().is_empty()) {
            return Err(refuse("Each todo must have a non-empty \"content\" string."));
        }
        if !t.get("status").and_then(Value::as_str).is_some_and(|s| CLAUDE_STATUSES.contains(&s)) {
            return Err(refuse("Each todo must have a valid \"status\" (pending, in_progress, completed)."));
        }
        if let Some(deps) = t.get("blockedBy") {
            let ok = deps.as_array().is_some_and(|d| {
                d.iter().all(|x| x.as_str().is_some_and(|x| !x.trim().is_empty() && x.encode_utf16().count() <= 500))
            });
            if !ok {
                return Err(refuse(
                    "Each todo \"blockedBy\" value must be an array of non-empty Todo IDs of at most 500 characters.",
                ));
            }
        }
    }
    let ids: Vec<&str> = todos.iter().map(|t| str_arg(t, "id")).collect();
    let unique: HashSet<&str> = ids.iter().copied().collect();
    if unique.len() != ids.len() {
        return Err(refuse("Todo IDs must be unique within the array."));
    }
    for t in todos {
        let (id, d) = (str_arg(t, "id"), deps(t));
        if d.iter().collect::<HashSet<_>>().len() != d.len() {
            return Err(refuse(format!("Todo \"{id}\" must not contain duplicate blockedBy references.")));
        }
        if d.contains(&id) {
            return Err(refuse(format!("Todo \"{id}\" must not depend on itself.")));
        }
        if let Some(missing) = d.iter().find(|x| !unique.contains(*x)) {
            return Err(refuse(format!("Todo \"{id}\" references unknown dependency \"{missing}\".")));
        }
    }
    // Kahn's algorithm: every todo is reached once its dependencies are
    let mut remaining: HashMap<&str, usize> = todos.iter().map(|t| (str_arg(t, "id"), deps(t).len())).collect();
    let mut dependents: HashMap<&str, Vec<&str>> = HashMap::new();
    for t in todos {
        for d in deps(t) {
            dependents.entry(d).or_default().push(str_arg(t, "id"));
        }
    }
    let mut queue: Vec<&str> = ids.iter().copied().filter(|id| remaining[id] == 0).collect();
    let mut i = 0;
    while i < queue.len() {
        for dependent in dependents.get(queue[i]).map(Vec::as_slice).unwrap_or_default() {
            let left = remaining.entry(dependent).or_insert(1);
            *left -= 1;
            if *left == 0 {
                queue.push(dependent);
            }
        }
        i += 1;
    }
    if queue.len() != todos.len() {
        return Err(refuse("Todo dependencies must not contain a cycle."));
    }
    Ok(())
}

/// The list in the tool's own item shape: `{content, status, id, blockedBy}` (`blockedBy`
/// only for a todo that waits for others of the list).
pub fn todos(scope: &Scope, rows: &[Todo]) -> Vec<Value> {
    let ids: Vec<i64> = rows.iter().map(|t| t.id).collect();
    let deps = whole_list::dependencies_within(scope, &ids);
    let named: HashMap<i64, String> = rows.iter().map(|t| (t.id, caller_id(t))).collect();
    rows.iter()
        .zip(deps)
        .map(|(t, (_, on))| {
            let mut item = json!({"content": t.subject, "status": claude_status_name(t.status), "id": caller_id(t)});
            if !on.is_empty() {
                item["blockedBy"] = json!(on.iter().filter_map(|o| named.get(o)).collect::<Vec<_>>());
            }
            item
        })
        .collect()
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todo_write")?;
    let before = whole_list::stored(scope, conv, Kept::Uncanceled);
    let old = todos(scope, &before);
    let active = before.iter().any(|t| t.status.three_state() != Status::Completed);
    let old_deps: HashMap<&str, &Value> =
        old.iter().filter_map(|o| Some((o["id"].as_str()?, o.get("blockedBy")?))).collect();
    // an item that leaves blockedBy out keeps the dependencies its id had, while a plan is active
    let candidate: Vec<Value> = args["todos"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        // a read's note copied back is no todo (`whole_list::replace` leaves it out, with no id)
        .filter(|t| !pg_todos_core::limits::is_list_note(str_arg(t, "content")))
        .map(|t| {
            let mut t = t.clone();
            if active && t.get("blockedBy").is_none() {
                if let Some(kept) = old_deps.get(str_arg(&t, "id")) {
                    t["blockedBy"] = (*kept).clone();
                }
            }
            t
        })
        .collect();
    validate(&candidate)?;
    let ids = CallerIds::new(&before);
    let items: Vec<_> = candidate
        .iter()
        .map(|t| {
            let status = Status::parse(str_arg(t, "status")).unwrap_or(Status::Pending);
            ids.item(Some(str_arg(t, "id")), str_arg(t, "content"), status, Default::default())
        })
        .collect();
    let ids = whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    let by_caller: HashMap<&str, i64> = candidate.iter().map(|t| str_arg(t, "id")).zip(ids.iter().copied()).collect();
    let store_id = |caller: &str| by_caller.get(caller).copied();
    let wanted: Vec<(i64, Vec<i64>)> = candidate
        .iter()
        .zip(&ids)
        .map(|(t, id)| {
            let on = t.get("blockedBy").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            (*id, on.iter().filter_map(|o| o.as_str().and_then(store_id)).collect())
        })
        .collect();
    // a cycle through todos off the list (the store's check) is refused as Qwen Code refuses one
    whole_list::set_dependencies(scope, conv, &ids, &wanted).map_err(|e| match e {
        Error::Edge(_) => refuse("Todo dependencies must not contain a cycle."),
        e => failed(e),
    })?;
    Ok(json!({ "todos": candidate }))
}

fn text(out: &Value) -> String {
    if let Some(m) = error_message(out) {
        return m.to_string();
    }
    let list = out["todos"].as_array().map(Vec::as_slice).unwrap_or_default();
    if list.is_empty() {
        return "Todo list has been cleared.\n\n<system-reminder>\nYour todo list is now empty. DO NOT mention this explicitly to the user. You have no pending tasks in your todo list.\n</system-reminder>".into();
    }
    format!(
        "{WRITTEN}\n\n<system-reminder>\nYour todo list has changed. DO NOT mention this explicitly to the user. Here are the latest contents of your todo list:\n\n{}. Continue on with the tasks at hand if applicable.\n</system-reminder>",
        js_stringify(&out["todos"], ORDER)
    )
}

/// A conversation's list as Qwen Code's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    json!({ "todos": todos(scope, &whole_list::stored(scope, conv, Kept::Uncanceled)) })
}

/// The qwen dialect.
pub static DIALECT: Dialect = Dialect {
    name: "qwen",
    aliases: &[],
    runtime: "Qwen Code",
    description: "todo_write: the whole list with ids and dependencies",
    tools: &[&TODO_WRITE],
    list_as: Some(ListAs { shape: "`{\"todos\": [{content, status, id, blockedBy}]}`", read: list_as }),
};
