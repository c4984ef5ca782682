//! The plan dialect (seed 001): the supervisor's per-turn plan. `create_todo` (batch, `order` = 1-indexed place),
//! `list_todo` (status filter, items and summary), `complete_todo` (outcome, remaining), all
//! scoped to the turn in context (`todo.turn`) of the conversation in context (runtimes
//! number turns per conversation: two conversations' turn "1" are two plans). Ids are strings; `cancelled` is spelled so;
//! `priority` is the 0-indexed place in the turn's plan; timestamps are ISO 8601 (UTC).

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, Tool};
use super::helpers::{array_of, cancelled_status_name, error, failed, output_schema, parse_string_id, str_arg};
use crate::error::Error;
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::{Find, Scope};
use crate::status::Status;
use crate::store;
use crate::time::iso8601;
use crate::todo::Todo;

static CREATE: Tool = Tool {
    name: "create_todo",
    description: "Creates one or more TODO items for the current turn. Use it to lay out a plan of several steps in one call; `order` is a 1-indexed position (default: append).",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["items"],
            "additionalProperties": false,
            "properties": {
                "items": {
                    "type": "array",
                                        "items": {
                        "type": "object",
                        "required": ["title"],
                        "additionalProperties": false,
                        "properties": {
                            "title": {"type": "string", "minLength": 1, "description": "required — human-readable task name"},
                            "context": {"type": "string", "description": "relevant background info"},
                            "completionCriteria": {"type": "string", "description": "definition of done"},
                            "agentType": {"type": "string", "description": "specialist type to delegate to"},
                            "order": {"type": "integer", "minimum": 1, "description": "1-indexed position (default: append)"}
                        }
                    }
                }
            }
        })
    },
    precheck: None,
    run: create,
    effect: Effect::Adds,
    output_schema: Some(|| output_schema(json!({"created": array_of(json!({"id": {"type": "string"}, "title": {"type": "string"}, "order": {"type": "integer"}})), "totalPending": {"type": "integer"}}), &["created", "totalPending"])),
    text: None,
    accepts: None,
};

static LIST: Tool = Tool {
    name: "list_todo",
    description: "Lists TODO items for the current turn, filtered by status (default: the remaining items, pending and in_progress), with a summary of the whole turn.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled", "all"]}
            }
        })
    },
    precheck: None,
    run: list,
    effect: Effect::Reads,
    output_schema: Some(|| {
        output_schema(json!({"items": {"type": "array", "items": item_schema()}, "summary": summary_schema()}), &["items", "summary"])
    }),
    text: None,
    accepts: None,
};

static COMPLETE: Tool = Tool {
    name: "complete_todo",
    description: "Marks a TODO item of the current turn as completed (or cancelled), with its outcome: what was done, or why it was cancelled.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todoId", "outcome"],
            "additionalProperties": false,
            "properties": {
                "todoId": {"type": "string"},
                "outcome": {"type": "string", "description": "required — what was done / why cancelled"},
                "status": {"type": "string", "enum": ["completed", "cancelled"]}
            }
        })
    },
    precheck: None,
    run: complete,
    effect: Effect::Replaces,
    output_schema: Some(|| output_schema(json!({"id": {"type": "string"}, "title": {"type": "string"}, "status": {"type": "string"}, "outcome": {"type": ["string", "null"]}, "completedAt": {"type": ["string", "null"]}, "remaining": {"type": "integer"}}), &["id", "title", "status", "remaining"])),
    text: None,
    accepts: None,
};

fn turn<'a>(scope: &'a Scope, tool: &str) -> Result<&'a str, Value> {
    scope.turn.as_deref().ok_or_else(|| error("no_turn", format!("{tool} needs a turn in context (todo.turn)")))
}

fn opt_str(v: Option<&str>) -> Value {
    v.map_or(Value::Null, |s| json!(s))
}

/// The schema of a listed item (`item`).
fn item_schema() -> Value {
    let (s, i, ns) = (json!({"type": "string"}), json!({"type": "integer"}), json!({"type": ["string", "null"]}));
    json!({"type": "object",
           "required": ["id", "title", "context", "completionCriteria", "agentType", "status", "priority", "outcome",
                        "createdAt", "startedAt", "completedAt"],
           "properties": {"id": s, "title": s, "context": s, "completionCriteria": s, "agentType": ns, "status": s,
                          "priority": i, "outcome": ns, "createdAt": s, "startedAt": ns, "completedAt": ns}})
}

fn item(t: &Todo, priority: usize) -> Value {
    json!({
        "id": t.id.to_string(),
        "title": t.subject,
        "context": t.description.as_deref().unwrap_or(""),
        "completionCriteria": t.completion_criteria.as_deref().unwrap_or(""),
        "agentType": opt_str(t.agent_type.as_deref()),
        "status": cancelled_status_name(t.status),
        "priority": priority,
        "outcome": opt_str(t.outcome.as_deref()),
        "createdAt": iso8601(t.created_us),
        "startedAt": t.started_us.map_or(Value::Null, |us| json!(iso8601(us))),
        "completedAt": t.completed_us.map_or(Value::Null, |us| json!(iso8601(us))),
    })
}

/// How many of `rows` the seed calls `s` (a blocked todo counts as pending).
fn count(rows: &[Todo], s: Status) -> usize {
    rows.iter().filter(|t| cancelled_status_name(t.status) == cancelled_status_name(s)).count()
}

fn create(scope: &Scope, args: &Value) -> Answer {
    let turn = turn(scope, "create_todo")?;
    let items = args["items"].as_array().cloned().unwrap_or_default();
    if let Some(i) = items.iter().position(|it| str_arg(it, "title").trim().is_empty()) {
        return Err(error("invalid_arguments", format!("create_todo: items[{i}].title: must not be blank")));
    }
    let mut order: Vec<i64> = store::read::todos(&scope.tenant, Find::Turn { conversation: scope.conv(), turn })
        .iter()
        .map(|t| t.id)
        .collect();
    let mut created = Vec::new();
    for it in &items {
        let fields = json_fields([
            ("conversation_id", opt_str(scope.conv())),
            ("turn_id", json!(turn)),
            ("subject", it["title"].clone()),
            ("description", it.get("context").cloned().unwrap_or(Value::Null)),
            ("completion_criteria", it.get("completionCriteria").cloned().unwrap_or(Value::Null)),
            ("agent_type", it.get("agentType").cloned().unwrap_or(Value::Null)),
        ]);
        let t = single::add(scope, NewTodo { fields, ..NewTodo::default() }).map_err(failed)?;
        let at = it["order"].as_u64().map_or(order.len(), |o| (o as usize - 1).min(order.len()));
        order.insert(at, t.id);
        created.push(t);
    }
    single::reorder(scope, &order);
    let rows = store::read::todos(&scope.tenant, Find::Turn { conversation: scope.conv(), turn });
    let place = |id: i64| order.iter().position(|o| *o == id).unwrap_or(0) + 1;
    Ok(json!({
        "created": created.iter().map(|t| json!({"id": t.id.to_string(), "title": t.subject, "order": place(t.id)})).collect::<Vec<_>>(),
        "totalPending": count(&rows, Status::Pending),
    }))
}

/// The schema of a `summary`.
fn summary_schema() -> Value {
    let i = json!({"type": "integer"});
    output_schema(
        json!({"total": i, "pending": i, "inProgress": i, "completed": i, "cancelled": i}),
        &["total", "pending", "inProgress", "completed", "cancelled"],
    )
}

fn summary(rows: &[Todo]) -> Value {
    json!({
        "total": rows.len(),
        "pending": count(rows, Status::Pending),
        "inProgress": count(rows, Status::InProgress),
        "completed": count(rows, Status::Completed),
        "cancelled": count(rows, Status::Canceled),
    })
}

fn list(scope: &Scope, args: &Value) -> Answer {
    let turn = turn(scope, "list_todo")?;
    let rows = store::read::todos(&scope.tenant, Find::Turn { conversation: scope.conv(), turn });
    let wanted = |s: Status| match args.get("status").and_then(Value::as_str) {
        None => s.is_open(),
        Some("all") => true,
        Some(name) => cancelled_status_name(s) == name,
    };
    let items: Vec<Value> =
        rows.iter().enumerate().filter(|(_, t)| wanted(t.status)).map(|(i, t)| item(t, i)).collect();
    Ok(json!({ "items": items, "summary": summary(&rows) }))
}

fn complete(scope: &Scope, args: &Value) -> Answer {
    let turn = turn(scope, "complete_todo")?;
    let todo_id = str_arg(args, "todoId");
    let not_found = || error("not_found", format!("no todo \"{todo_id}\" in this turn"));
    let id = parse_string_id(todo_id).ok_or_else(not_found)?;
    let to = if str_arg(args, "status") == "cancelled" { Status::Canceled } else { Status::Completed };
    let change =
        Change { status: Some(to), fields: json_fields([("outcome", args["outcome"].clone())]), ..Change::default() };
    let done = match single::change(scope, Find::Turn { conversation: scope.conv(), turn }, id, change) {
        Ok(changed) => changed.after,
        Err(Error::NotFound { .. }) => return Err(not_found()),
        Err(Error::Transition { forbidden, .. }) => {
            return Err(error(
                "invalid_transition",
                format!(
                    "todo \"{todo_id}\" is {}; it cannot become {}",
                    cancelled_status_name(forbidden.from),
                    cancelled_status_name(forbidden.to)
                ),
            ))
        }
        Err(e) => return Err(failed(e)),
    };
    let remaining = store::read::todos(&scope.tenant, Find::Turn { conversation: scope.conv(), turn })
        .iter()
        .filter(|t| t.status.is_open())
        .count();
    Ok(json!({
        "id": done.id.to_string(),
        "title": done.subject,
        "status": cancelled_status_name(done.status),
        "outcome": done.outcome,
        "completedAt": done.completed_us.map(iso8601),
        "remaining": remaining,
    }))
}

/// The plan dialect.
pub static DIALECT: Dialect = Dialect {
    name: "plan",
    aliases: &["001"],
    runtime: "seed 001",
    description: "a supervisor's per-turn plan",
    tools: &[&CREATE, &LIST, &COMPLETE],
    list_as: None,
};
