//! Waiting claims in SQL: `todo.claim_wait`, `todo.claim_wait_get`, `todo.claim_wait_cancel`
//! (`ops::waits`). A try is the coord dialect's `claim_todo` with the wait's arguments, its
//! answer MCP's CallToolResult as `todo.call_mcp` gives it; a wait is answered as MCP's task
//! (the Tasks extension's `DetailedTask`: `taskId`, `status`, `statusMessage`, `createdAt`,
//! `lastUpdatedAt`, `ttlMs`, `pollIntervalMs`, and `result` once completed), which
//! `pg_todos mcp` and `/mcp` hand over as they are.

use pgrx::prelude::*;
use serde_json::{json, Value};

use super::call::{answer_in, mcp_result};
use super::catalog::find;
use crate::jsonb::Jsonb;
use crate::ops::waits::{self, Tried};
use crate::ops::Scope;
use crate::store::waits::{Wait, KEPT_HOURS};
use crate::time::iso8601;
use crate::{errors, limits};
use pg_todos_core::limits::Setting;

/// The tool a try runs.
const CLAIM: &str = "coord/claim_todo";
/// How often a client is asked to look again, in milliseconds.
const POLL_MS: i64 = 1000;

/// One try of the claim, as the wait's agent on its list: the answer ends the wait when a
/// todo was claimed, or when it refused for a reason waiting does not change (anything but
/// another agent's claim or a blocker of the todo asked for).
fn attempt(scope: &Scope, arguments: &Value) -> Tried {
    let tool = find(CLAIM);
    let out = answer_in(tool, CLAIM, arguments, || scope.clone());
    let waiting = match out["error"]["code"].as_str() {
        Some(code) => matches!(code, "claimed" | "blocked"),
        None => out["claimed"] == json!(false),
    };
    Tried { answer: mcp_result(tool, out, None, None), ends: !waiting }
}

/// What the task says of itself.
fn status_message(wait: &Wait) -> String {
    let structured = wait.result.as_ref().map(|r| &r["structuredContent"]);
    match (wait.status.as_str(), structured) {
        ("working", _) => format!("waiting for a todo to claim until {}", iso8601(wait.deadline_us)),
        ("cancelled", _) => "cancelled".into(),
        (_, Some(s)) if s["claimed"] == json!(true) => format!("claimed #{}", s["id"]),
        (_, Some(s)) if s["claimed"] == json!(false) => "nothing was ready to claim before the deadline".into(),
        (_, Some(s)) => s["error"]["message"].as_str().unwrap_or("refused").to_string(),
        (_, None) => "ended".into(),
    }
}

/// A wait as MCP's task.
fn task(wait: &Wait) -> Value {
    let ttl_ms = (wait.deadline_us - wait.created_us) / 1000 + KEPT_HOURS * 3_600_000;
    let mut task = json!({
        "taskId": wait.id,
        "status": wait.status,
        "statusMessage": status_message(wait),
        "createdAt": iso8601(wait.created_us),
        "lastUpdatedAt": iso8601(wait.updated_us),
        "ttlMs": ttl_ms,
        "pollIntervalMs": POLL_MS,
    });
    if let Some(result) = &wait.result {
        task["result"] = result.clone();
    }
    task
}

/// An operation's wait as the task the functions answer; its error raised.
fn answered(wait: Result<Wait, crate::error::Error>) -> Jsonb {
    match wait {
        Ok(wait) => Jsonb(task(&wait)),
        Err(e) => errors::raise_error(&e),
    }
}

/// The wait's id argument, or the error for a NULL one.
fn required_id<'a>(id: Option<&'a str>, function: &str) -> &'a str {
    errors::required(id, &format!("{function}: task_id"))
}

/// Starts a waiting claim (SQL below): tries now, and stores the wait, completed when the
/// try ended it; the task. Errors: 22004 NULL arguments; 22023 no tenant or agent in
/// context, or a `wait_seconds` missing or outside 1 to 3600; 54000 the agent has 100 waits
/// trying, or arguments over `todo.max_arguments_size`; 42704 tenant not registered.
#[pg_extern(sql = false)]
fn claim_wait(fcinfo: pg_sys::FunctionCallInfo) -> Jsonb {
    // SAFETY: argument 0 of todo.claim_wait is its jsonb arguments (the SQL below)
    let args = unsafe { limits::jsonb_value_arg(fcinfo, 0, Setting::ArgumentsSize, "todo.claim_wait: arguments") };
    let args = match args {
        Ok(limits::JsonArg::Value(v @ Value::Object(_))) => v,
        Ok(limits::JsonArg::Null) => errors::raise(
            PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
            "todo.claim_wait: arguments must not be NULL",
            "pass claim_todo's arguments with wait_seconds, e.g. '{\"wait_seconds\": 60}'",
        ),
        Ok(_) => errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "todo.claim_wait: arguments must be a JSON object (claim_todo's: id, lease_seconds, wait_seconds)",
            "",
        ),
        Err(e) => errors::raise(PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED, e.to_string(), ""),
    };
    let wait_s = args["wait_seconds"].as_i64().unwrap_or(0);
    crate::runner::call(|| {
        let scope = Scope::from_context();
        answered(waits::start(&scope, &args, wait_s, &attempt))
    })
}

/// The waiting claim `task_id` of the tenant in context, tried again while it is working
/// (SQL below): the task. Errors: 22004 a NULL id; P0002 no such wait; 22023 no tenant.
#[pg_extern(sql = false)]
fn claim_wait_get(task_id: Option<&str>) -> Jsonb {
    let id = required_id(task_id, "todo.claim_wait_get");
    crate::runner::call(|| answered(waits::poll(&Scope::from_context(), id, &attempt)))
}

/// Cancels the waiting claim `task_id` when it is still working (SQL below): the task.
/// Errors: as `todo.claim_wait_get`'s.
#[pg_extern(sql = false)]
fn claim_wait_cancel(task_id: Option<&str>) -> Jsonb {
    let id = required_id(task_id, "todo.claim_wait_cancel");
    crate::runner::call(|| answered(waits::cancel(&Scope::from_context(), id)))
}

extension_sql!(
    r#"
CREATE FUNCTION todo.claim_wait(args jsonb) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'claim_wait_wrapper';
COMMENT ON FUNCTION todo.claim_wait(jsonb) IS
    'Starts a waiting claim for the agent in context: args are coord''s claim_todo arguments (id, lease_seconds) with wait_seconds (1 to 3600). Tries the claim now and stores the wait (todo.claim_waits), completed when the try claimed a todo or was refused for good, else working until the deadline; answers it as an MCP task (taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs, result once completed). Errors: 22004 NULL args; 22023 no tenant or agent in context, wait_seconds missing or out of range; 54000 the agent has 100 waits working, or args over todo.max_arguments_size; 42704 tenant not registered.';
CREATE FUNCTION todo.claim_wait_get(task_id text) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'claim_wait_get_wrapper';
COMMENT ON FUNCTION todo.claim_wait_get(text) IS
    'The waiting claim task_id of the tenant in context as an MCP task; while it is working the claim is tried again (as the agent that started it, on its list), and it completes with that answer when a todo was claimed, the claim was refused for good, or the deadline passed. Errors: 22004 a NULL task_id; P0002 no such wait in this tenant (ended waits are kept an hour); 22023 no tenant in context.';
CREATE FUNCTION todo.claim_wait_cancel(task_id text) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'claim_wait_cancel_wrapper';
COMMENT ON FUNCTION todo.claim_wait_cancel(text) IS
    'Cancels the waiting claim task_id of the tenant in context when it is still working (one that ended stays as it is); the task. Errors: 22004 a NULL task_id; P0002 no such wait in this tenant; 22023 no tenant in context.';
"#,
    name = "claim_waits",
    requires = ["bootstrap"]
);
