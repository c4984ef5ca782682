//! The coordination tools (issue #7): claims with leases and fencing, dependencies, the ready
//! queue and subtasks, for agents that speak tools rather than the writ. Same operations as
//! the writ's `/todo claim …` verbs and the `todo.claim` … SQL functions (`coord`). Ids are
//! numbers (`#14` is 14); the acting agent is `todo.agent`. A refusal is
//! `{"error": {"code": claimed | stale_claim | blocked | not_open | cycle | not_found |
//! no_agent | invalid_arguments, "message"}}` and changes nothing.

use serde_json::{json, Value};

use super::{error, Ctx, Tool};
use crate::coord::{self, Why};
use crate::model::iso8601;
use crate::status::Status;
use crate::store;

pub static TOOLS: &[&Tool] = &[&CLAIM, &HEARTBEAT, &RELEASE, &FINISH, &BLOCK, &UNBLOCK, &READY, &SUBTASK];

fn id_prop(what: &str) -> Value {
    json!({"type": "integer", "minimum": 1, "description": what})
}

const FENCE: &str = "the fencing number your claim returned; when given, the action is refused unless that claim is still yours and live";
const LEASE: &str = "seconds the claim lasts without a heartbeat (default todo.lease_default, at most todo.lease_max)";

static CLAIM: Tool = Tool {
    name: "claim_todo",
    description: "Claims a todo for you and marks it in progress: the given id, or else the next ready one (open, unclaimed, not blocked; by priority then position). The claim lasts for a lease; renew it with heartbeat_todo while you work, and pass its fence to finish_todo. Returns {\"claimed\": false} when nothing is ready.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"id": id_prop("the todo to claim (default: the next ready one)"), "lease_seconds": id_prop(LEASE)}
        })
    },
    precheck: None,
    run: claim,
    writes: true,
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
    writes: true,
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
    writes: true,
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
    writes: true,
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
    description: "Makes todo `id` wait for todo `on`: it is not ready while `on` is open. Refused if it would make a cycle.",
    input_schema: edge_schema,
    precheck: None,
    run: block,
    writes: true,
};

static UNBLOCK: Tool = Tool {
    name: "unblock_todo",
    description: "Removes the wait of todo `id` for todo `on`.",
    input_schema: edge_schema,
    precheck: None,
    run: unblock,
    writes: true,
};

static READY: Tool = Tool {
    name: "ready_todos",
    description: "Lists the todos you could claim now (open, unclaimed, not blocked, no open subtasks), in claim order.",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "default 50"}}
        })
    },
    precheck: None,
    run: ready,
    writes: false,
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
    writes: true,
};

fn int(args: &Value, key: &str) -> Option<i64> {
    args.get(key).and_then(Value::as_i64)
}

/// The answer of an operation: its object and the todo to notify about, or its error object.
fn answer(ctx: &Ctx, result: Result<(Value, Option<i64>), Why>) -> Value {
    match result {
        Ok((out, id)) => {
            if let Some(id) = id {
                store::notify(&ctx.tenant, ctx.conversation.as_deref(), &[id]);
            }
            out
        }
        Err(why) => error(why.code(), why.message()),
    }
}

fn claim(ctx: &Ctx, args: &Value) -> Value {
    let result = coord::claim(&ctx.tenant, ctx.conversation.as_deref(), int(args, "id"), int(args, "lease_seconds"));
    answer(
        ctx,
        result.map(|c| match c {
            None => (json!({"claimed": false}), None),
            Some(c) => {
                let g = c.granted;
                let out = json!({"claimed": true, "id": g.id, "subject": g.subject, "fence": g.fence,
                                 "lease_expires_at": iso8601(g.expires_us)});
                (out, Some(g.id))
            }
        }),
    )
}

fn heartbeat(ctx: &Ctx, args: &Value) -> Value {
    let id = int(args, "id").unwrap_or(0);
    let result = coord::heartbeat(&ctx.tenant, ctx.conversation.as_deref(), id, int(args, "fence"), int(args, "lease_seconds"));
    answer(
        ctx,
        result.map(|c| (json!({"id": id, "fence": c.granted.fence, "lease_expires_at": iso8601(c.granted.expires_us)}), None)),
    )
}

fn release(ctx: &Ctx, args: &Value) -> Value {
    let id = int(args, "id").unwrap_or(0);
    let result = coord::release(&ctx.tenant, ctx.conversation.as_deref(), id, int(args, "fence"));
    answer(ctx, result.map(|_| (json!({"id": id, "status": "pending"}), Some(id))))
}

fn finish(ctx: &Ctx, args: &Value) -> Value {
    let id = int(args, "id").unwrap_or(0);
    let to = Status::parse(super::str_arg(args, "status")).unwrap_or(Status::Completed);
    let outcome = args.get("outcome").and_then(Value::as_str);
    let result = coord::finish(&ctx.tenant, ctx.conversation.as_deref(), id, int(args, "fence"), to, outcome);
    answer(ctx, result.map(|_| (json!({"id": id, "status": to.as_str()}), Some(id))))
}

fn block(ctx: &Ctx, args: &Value) -> Value {
    let (id, on) = (int(args, "id").unwrap_or(0), int(args, "on").unwrap_or(0));
    let result = coord::block(&ctx.tenant, ctx.conversation.as_deref(), id, on);
    answer(ctx, result.map(|added| (json!({"id": id, "on": on, "added": added}), Some(id))))
}

fn unblock(ctx: &Ctx, args: &Value) -> Value {
    let (id, on) = (int(args, "id").unwrap_or(0), int(args, "on").unwrap_or(0));
    let result = coord::unblock(&ctx.tenant, ctx.conversation.as_deref(), id, on);
    answer(ctx, result.map(|removed| (json!({"id": id, "on": on, "removed": removed}), Some(id))))
}

fn ready(ctx: &Ctx, args: &Value) -> Value {
    let rows = store::ready(&ctx.tenant, ctx.conversation.as_deref(), int(args, "limit").unwrap_or(50));
    let todos: Vec<Value> = rows
        .iter()
        .map(|r| json!({"id": r.id, "subject": r.subject, "status": r.status.as_str(), "tenant_wide": r.tenant_wide}))
        .collect();
    json!({ "todos": todos })
}

fn subtask(ctx: &Ctx, args: &Value) -> Value {
    let parent = int(args, "parent").unwrap_or(0);
    let description = args.get("description").and_then(Value::as_str);
    let subject = super::str_arg(args, "subject");
    let result = coord::add_subtask(&ctx.tenant, ctx.conversation.as_deref(), None, parent, subject, description);
    answer(ctx, result.map(|id| (json!({"id": id, "parent": parent}), Some(id))))
}
