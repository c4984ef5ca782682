//! The coord dialect: claims with leases and fencing, dependencies, the ready queue and
//! subtasks, for agents that speak tools rather than the writ. The same operations as the
//! writ's `/todo claim …` verbs and the `todo.claim` … SQL functions (`ops::claiming`,
//! `ops::dependencies`). Ids are numbers (`#14` is 14); the acting agent is `todo.agent`. A
//! refusal is `{"error": {"code": claimed | stale_claim | blocked | not_open | cycle |
//! not_found | no_agent | invalid_arguments, "message"}}` (`Error::code`) and changes
//! nothing.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, Tool};
use super::helpers::{array_of, failed, output_schema, str_arg};
use crate::ops::single::{self, NewTodo};
use crate::ops::{self, claiming, dependencies, Scope};
use crate::status::Status;
use crate::time::iso8601;

fn id_prop(what: &str) -> Value {
    json!({"type": "integer", "minimum": 1, "description": what})
}

const FENCE: &str = "the fencing number your claim returned; when given, the action is refused unless that claim is still yours and live";
const WAIT: &str = "seconds to keep trying while nothing is ready (or the todo asked for is claimed or blocked): from an MCP client that speaks the Tasks extension the call answers a task at once, which claims as soon as it can; anywhere else it is one try";
const LEASE: &str = "seconds the claim lasts without a heartbeat (default todo.lease_default, at most todo.lease_max)";

static CLAIM: Tool = Tool {
    name: "claim_todo",
    description: "Claims a todo for you and marks it in progress: the given id, or else the next ready one (open, unclaimed, not blocked; by priority then position). The claim lasts for a lease; renew it with heartbeat_todo while you work, and pass its fence to finish_todo. Returns {\"claimed\": false} when nothing is ready.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"id": id_prop("the todo to claim (default: the next ready one)"), "lease_seconds": id_prop(LEASE), "wait_seconds": {"type": "integer", "minimum": 1, "maximum": 3600, "description": WAIT}}
        })
    },
    precheck: None,
    run: claim,
    effect: Effect::Adds,
    output_schema: Some(|| output_schema(json!({"claimed": {"type": "boolean"}, "id": {"type": "integer"}, "subject": {"type": "string"}, "fence": {"type": "integer"}, "lease_expires_at": {"type": "string"}}), &["claimed"])),
    text: None,
    accepts: None,
};

static HEARTBEAT: Tool = Tool {
    name: "heartbeat_todo",
    description: "Renews your claim on a todo: its lease runs again from now.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["id"],
            "additionalProperties": false,
            "properties": {"id": id_prop("the claimed todo"), "fence": id_prop(FENCE), "lease_seconds": id_prop(LEASE)}
        })
    },
    precheck: None,
    run: heartbeat,
    effect: Effect::Marks,
    output_schema: Some(|| {
        output_schema(
            json!({"id": {"type": "integer"}, "fence": {"type": "integer"}, "lease_expires_at": {"type": "string"}}),
            &["id", "fence", "lease_expires_at"],
        )
    }),
    text: None,
    accepts: None,
};

static RELEASE: Tool = Tool {
    name: "release_todo",
    description: "Gives back a todo you claimed: it returns to pending, ready for another agent.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["id"],
            "additionalProperties": false,
            "properties": {"id": id_prop("the claimed todo"), "fence": id_prop(FENCE)}
        })
    },
    precheck: None,
    run: release,
    effect: Effect::Replaces,
    output_schema: Some(|| {
        output_schema(json!({"id": {"type": "integer"}, "status": {"type": "string"}}), &["id", "status"])
    }),
    text: None,
    accepts: None,
};

static FINISH: Tool = Tool {
    name: "finish_todo",
    description: "Completes (or cancels) a todo, with an optional outcome. Refused when another agent holds it, or when your claim has lapsed or been taken over.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["id"],
            "additionalProperties": false,
            "properties": {
                "id": id_prop("the todo"),
                "fence": id_prop(FENCE),
                "status": {"type": "string", "enum": ["completed", "canceled", "cancelled"], "description": "default completed"},
                "outcome": {"type": "string", "description": "what was done, or why it was dropped"}
            }
        })
    },
    precheck: None,
    run: finish,
    effect: Effect::Replaces,
    output_schema: Some(|| output_schema(json!({"id": {"type": "integer"}, "status": {"type": "string"}}), &["id", "status"])),
    text: None,
    accepts: None,
};

fn edge_schema() -> Value {
    json!({
        "type": "object",
        "required": ["id", "on"],
        "additionalProperties": false,
        "properties": {"id": id_prop("the todo that waits"), "on": id_prop("the todo it waits for")}
    })
}

static BLOCK: Tool = Tool {
    name: "block_todo",
    description:
        "Makes todo `id` wait for todo `on`: it is not ready while `on` is open. Refused if it would make a cycle.",
    input_schema: edge_schema,
    precheck: None,
    run: block,
    effect: Effect::Marks,
    output_schema: Some(|| {
        output_schema(
            json!({"id": {"type": "integer"}, "on": {"type": "integer"}, "added": {"type": "boolean"}}),
            &["id", "on", "added"],
        )
    }),
    text: None,
    accepts: None,
};

static UNBLOCK: Tool = Tool {
    name: "unblock_todo",
    description: "Removes the wait of todo `id` for todo `on`.",
    input_schema: edge_schema,
    precheck: None,
    run: unblock,
    effect: Effect::Replaces,
    output_schema: Some(|| {
        output_schema(
            json!({"id": {"type": "integer"}, "on": {"type": "integer"}, "removed": {"type": "boolean"}}),
            &["id", "on", "removed"],
        )
    }),
    text: None,
    accepts: None,
};

static READY: Tool = Tool {
    name: "ready_todos",
    description:
        "Lists the todos you could claim now (open, unclaimed, not blocked, no open subtasks), in claim order.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "default 50"}}
        })
    },
    precheck: None,
    run: ready,
    effect: Effect::Reads,
    output_schema: Some(|| {
        output_schema(
            json!({"todos": array_of(json!({"id": {"type": "integer"}, "subject": {"type": "string"}, "status": {"type": "string"}, "tenant_wide": {"type": "boolean"}}))}),
            &["todos"],
        )
    }),
    text: None,
    accepts: None,
};

static SUBTASK: Tool = Tool {
    name: "add_subtask",
    description: "Adds a subtask under a todo; the parent's line in the open-todos block shows its subtasks' progress (2/5 done).",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["parent", "subject"],
            "additionalProperties": false,
            "properties": {
                "parent": id_prop("the parent todo"),
                "subject": {"type": "string", "minLength": 1, "pattern": "\\S"},
                "description": {"type": "string"}
            }
        })
    },
    precheck: None,
    run: subtask,
    effect: Effect::Adds,
    output_schema: Some(|| output_schema(json!({"id": {"type": "integer"}, "parent": {"type": "integer"}}), &["id", "parent"])),
    text: None,
    accepts: None,
};

fn int(args: &Value, key: &str) -> Option<i64> {
    args.get(key).and_then(Value::as_i64)
}

fn claim(scope: &Scope, args: &Value) -> Answer {
    Ok(match claiming::claim(scope, int(args, "id"), int(args, "lease_seconds")).map_err(failed)? {
        None => json!({"claimed": false}),
        Some(c) => {
            let g = c.granted;
            json!({"claimed": true, "id": g.id, "subject": g.subject, "fence": g.fence,
                   "lease_expires_at": iso8601(g.expires_us)})
        }
    })
}

fn heartbeat(scope: &Scope, args: &Value) -> Answer {
    let id = int(args, "id").unwrap_or(0);
    let c = claiming::heartbeat(scope, id, int(args, "fence"), int(args, "lease_seconds")).map_err(failed)?;
    Ok(json!({"id": id, "fence": c.granted.fence, "lease_expires_at": iso8601(c.granted.expires_us)}))
}

fn release(scope: &Scope, args: &Value) -> Answer {
    let id = int(args, "id").unwrap_or(0);
    claiming::release(scope, id, int(args, "fence")).map_err(failed)?;
    Ok(json!({"id": id, "status": "pending"}))
}

fn finish(scope: &Scope, args: &Value) -> Answer {
    let id = int(args, "id").unwrap_or(0);
    let to = Status::parse(str_arg(args, "status")).unwrap_or(Status::Completed);
    let outcome = args.get("outcome").and_then(Value::as_str);
    claiming::finish(scope, id, int(args, "fence"), to, outcome).map_err(failed)?;
    Ok(json!({"id": id, "status": to.as_str()}))
}

fn block(scope: &Scope, args: &Value) -> Answer {
    let (id, on) = (int(args, "id").unwrap_or(0), int(args, "on").unwrap_or(0));
    let added = dependencies::block(scope, id, on).map_err(failed)?;
    Ok(json!({"id": id, "on": on, "added": added}))
}

fn unblock(scope: &Scope, args: &Value) -> Answer {
    let (id, on) = (int(args, "id").unwrap_or(0), int(args, "on").unwrap_or(0));
    let removed = dependencies::unblock(scope, id, on).map_err(failed)?;
    Ok(json!({"id": id, "on": on, "removed": removed}))
}

fn ready(scope: &Scope, args: &Value) -> Answer {
    let rows = ops::ready(scope, int(args, "limit").unwrap_or(50));
    let todos: Vec<Value> = rows
        .iter()
        .map(|r| json!({"id": r.id, "subject": r.subject, "status": r.status.as_str(), "tenant_wide": r.tenant_wide}))
        .collect();
    Ok(json!({ "todos": todos }))
}

fn subtask(scope: &Scope, args: &Value) -> Answer {
    let parent = int(args, "parent").unwrap_or(0);
    let description = args.get("description").and_then(Value::as_str);
    let new = NewTodo { parent: Some(parent), ..NewTodo::titled(scope, str_arg(args, "subject"), description) };
    let t = single::add(scope, new).map_err(failed)?;
    Ok(json!({"id": t.id, "parent": parent}))
}

/// The coord dialect.
pub static DIALECT: Dialect = Dialect {
    name: "coord",
    aliases: &[],
    runtime: "pg_todos",
    description: "multi-agent coordination: claims, leases, dependencies, the ready queue, subtasks",
    tools: &[&CLAIM, &HEARTBEAT, &RELEASE, &FINISH, &BLOCK, &UNBLOCK, &READY, &SUBTASK],
    list_as: None,
};
