//! Seed 002: OpenCode's session todos. `todowrite` replaces the session's whole list (the
//! conversation in context is the session) and `todoread` reads it; both return what
//! OpenCode's tools return: `{"title": "<n> todos", "output": <the list as JSON, 2-space
//! indented>, "metadata": {"todos": [...]}}`, n counting the items that are not completed.
//! Every committed write notifies the tenant's channel. `todo.acp_plan(conversation)`
//! renders the list as Agent Client Protocol plan entries.

use pgrx::prelude::*;
use pgrx::JsonB;
use serde::Serialize;
use serde_json::{json, Map, Value};

use super::replace::{self, Incoming, Stored};
use super::{error, fields, parse_string_id, str_arg, Ctx, Tool};
use crate::model::Todo;
use crate::status::Status;
use crate::store::{self, Filter};
use crate::context;

pub static TOOLS: &[&Tool] = &[&WRITE, &READ];

fn todo_item_schema() -> Value {
    json!({
        "type": "object",
        "required": ["content", "status", "priority"],
        "additionalProperties": false,
        "properties": {
            "content": {"type": "string", "minLength": 1, "description": "Brief description of the task"},
            "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"], "description": "Current status of the task: pending, in_progress, completed, cancelled"},
            "priority": {"type": "string", "enum": ["high", "medium", "low"], "description": "Priority level of the task: high, medium, low"},
            "id": {"type": "string", "description": "Unique identifier for the todo item"}
        }
    })
}

static WRITE: Tool = Tool {
    name: "todowrite",
    description: "Use this tool to create and manage a structured task list for your current coding session. The list you send replaces the session's whole list: keep only one task in_progress at a time, mark tasks completed as soon as they are done, and use cancelled for tasks that are no longer needed.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todos"],
            "additionalProperties": false,
            "properties": {"todos": {"type": "array", "items": todo_item_schema(), "description": "The updated todo list"}}
        })
    },
    precheck: None,
    run: write,
    writes: true,
};

static READ: Tool = Tool {
    name: "todoread",
    description: "Use this tool to read your todo list for the current session.",
    input_schema: || json!({"type": "object", "additionalProperties": false, "properties": {}}),
    precheck: None,
    run: read,
    writes: false,
};

/// One todo as OpenCode stores it; the field order is the order its `output` prints.
#[derive(Serialize)]
struct Item<'a> {
    content: &'a str,
    status: &'a str,
    priority: &'a str,
    id: String,
}

fn status_name(s: Status) -> &'static str {
    super::plan::status_name(s)
}

fn items(rows: &[Todo]) -> Vec<Item<'_>> {
    rows.iter()
        .map(|t| Item {
            content: &t.subject,
            status: status_name(t.status),
            priority: t.priority.as_deref().unwrap_or("medium"),
            id: t.id.to_string(),
        })
        .collect()
}

/// `{"title", "output", "metadata": {"todos"}}`; the title counts the items not completed.
fn result(items: &[Item<'_>]) -> Value {
    let open = items.iter().filter(|t| t.status != "completed").count();
    let output = serde_json::to_string_pretty(items).expect("plain strings serialize");
    json!({ "title": format!("{open} todos"), "output": output, "metadata": { "todos": items } })
}

fn read(ctx: &Ctx, _args: &Value) -> Value {
    match ctx.session("todoread") {
        Ok(conv) => result(&items(&store::todos(&ctx.tenant, Filter::Conversation(conv)))),
        Err(e) => e,
    }
}

fn write(ctx: &Ctx, args: &Value) -> Value {
    let conv = match ctx.session("todowrite") {
        Ok(c) => c,
        Err(e) => return e,
    };
    let wanted = args["todos"].as_array().cloned().unwrap_or_default();
    if let Some(i) = wanted.iter().position(|t| str_arg(t, "content").trim().is_empty()) {
        return error("invalid_arguments", format!("todowrite: todos[{i}].content: must not be blank"));
    }
    store::lock_list(&ctx.tenant, conv);
    let stored = store::todos(&ctx.tenant, Filter::Conversation(conv));
    let plan = replace::plan(
        &stored.iter().map(|t| Stored { id: t.id, content: t.subject.clone() }).collect::<Vec<_>>(),
        &wanted
            .iter()
            .map(|t| Incoming { id: parse_string_id(str_arg(t, "id")), content: str_arg(t, "content").to_string() })
            .collect::<Vec<_>>(),
    );
    let ids = apply(ctx, conv, &stored, &wanted, &plan.matched, &plan.removed, |t| {
        fields([("subject", t["content"].clone()), ("priority", t["priority"].clone())])
    });
    // the session's list is now exactly the list written, with these ids
    let written: Vec<Item<'_>> = wanted
        .iter()
        .zip(&ids)
        .map(|(t, id)| Item {
            content: str_arg(t, "content"),
            status: str_arg(t, "status"),
            priority: str_arg(t, "priority"),
            id: id.to_string(),
        })
        .collect();
    result(&written)
}

/// Applies a whole-list replace of conversation `conv`, in at most five statements: deletes
/// the stored todos no item took; reopens the matched ones whose new status the lifecycle
/// cannot reach in one step (completed → in_progress goes through pending); updates the
/// matched ones that change (status, place, or one of `extra`'s columns) in one UPDATE;
/// inserts the new ones, with ids reserved at once, in one INSERT; notifies. Places: the
/// positions the list's todos hold (new ones: their ids) are handed out again in list order,
/// so the list keeps its place among the conversation's other todos. `extra(item)` gives the
/// text columns an item sets besides its status, the same keys for every item. Returns the
/// list's ids, in order.
pub fn apply(
    ctx: &Ctx,
    conv: &str,
    stored: &[Todo],
    wanted: &[Value],
    matched: &[Option<i64>],
    removed: &[i64],
    extra: impl Fn(&Value) -> Map<String, Value>,
) -> Vec<i64> {
    let tenant = ctx.tenant.as_str();
    store::delete_many(tenant, removed);
    let cols: Vec<Map<String, Value>> = wanted.iter().map(&extra).collect();
    let names: Vec<&str> = cols.first().map(|c| c.keys().map(String::as_str).collect()).unwrap_or_default();
    let found: Vec<Option<&Todo>> = matched.iter().map(|m| m.and_then(|id| stored.iter().find(|t| t.id == id))).collect();
    let fresh = found.iter().filter(|f| f.is_none()).count() as i64;
    let mut next = if fresh > 0 { store::reserve_todo_ids(tenant, fresh) } else { 0 };
    let (mut ids, mut slots) = (Vec::with_capacity(wanted.len()), Vec::with_capacity(wanted.len()));
    for f in &found {
        let (id, position) = match f {
            Some(t) => (t.id, t.position),
            None => {
                next += 1;
                (next - 1, next - 1)
            }
        };
        ids.push(id);
        slots.push(position);
    }
    slots.sort_unstable();
    let (mut inserts, mut updates, mut reopen) = (Vec::new(), Vec::new(), Vec::new());
    for (i, item) in wanted.iter().enumerate() {
        let to = Status::parse(str_arg(item, "status")).unwrap_or(Status::Pending);
        let mut row = cols[i].clone();
        row.insert("id".into(), json!(ids[i]));
        row.insert("status".into(), json!(to.as_str()));
        row.insert("position".into(), json!(slots[i]));
        match found[i] {
            None => inserts.push(Value::Object(row)),
            Some(t) => {
                let current = t_columns(t);
                let changed = t.status != to
                    || t.position != slots[i]
                    || cols[i].iter().any(|(k, v)| current.get(k) != Some(v));
                if changed {
                    if crate::status::check_transition(t.status, to).is_err() {
                        reopen.push(t.id);
                    }
                    updates.push(Value::Object(row));
                }
            }
        }
    }
    store::reopen_many(tenant, &reopen);
    store::update_many(tenant, &names, &updates);
    store::insert_many(tenant, conv, &names, &inserts);
    let mut touched = ids.clone();
    touched.extend_from_slice(removed);
    store::notify(tenant, Some(conv), &touched);
    ids
}

/// The columns of a stored todo a replace may set, for comparing.
fn t_columns(t: &Todo) -> Value {
    json!({
        "subject": t.subject,
        "priority": t.priority,
        "active_form": t.active_form,
        "description": t.description,
    })
}

/// The session's list as the `update` of an Agent Client Protocol v1 `session/update`
/// notification: `{"sessionUpdate": "plan", "entries": [{"content", "priority", "status"}]}`.
/// ACP v1 has no cancelled status: a canceled todo is shown `completed`. An in-progress todo
/// with an active form is shown by it (as ACP adapters show Claude Code's TodoWrite);
/// priority defaults to `medium`.
///
/// Errors: 22023 when no tenant is in context.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn acp_plan(conversation: &str) -> JsonB {
    let tenant = context::tenant();
    let entries: Vec<Value> = store::todos(&tenant, Filter::Conversation(conversation))
        .iter()
        .map(|t| {
            let content = match (t.status, &t.active_form) {
                (Status::InProgress, Some(active)) => active.as_str(),
                _ => t.subject.as_str(),
            };
            let status = match t.status {
                Status::Canceled => "completed",
                s => s.as_str(),
            };
            json!({"content": content, "priority": t.priority.as_deref().unwrap_or("medium"), "status": status})
        })
        .collect();
    JsonB(json!({ "sessionUpdate": "plan", "entries": entries }))
}

/// The LISTEN channel of the tenant in context: `todo_` followed by the md5 of the tenant id.
/// Every committed write through a pg_todos function sends a notification on it, with the
/// payload `{"conversation_id": <conversation or null>, "ids": [<todo ids>]}`: ids only,
/// listeners re-read. A rolled-back write sends nothing.
///
/// Errors: 22023 when no tenant is in context.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn channel() -> String {
    store::channel(&context::tenant())
}
