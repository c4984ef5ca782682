//! The tool catalog: every seed's tools (001–004) in one registry, listed by `todo.tools()`
//! in MCP's tool shape and run by `todo.call(tool, args)`. Each seed's tools live in their own
//! module and speak that seed's JSON exactly; all SQL goes through `store`.

pub mod coord;
pub mod plan;
pub mod replace;
pub mod schema;
pub mod session;
pub mod tasks;
pub mod todolist;

use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Map, Value};

use crate::status::Status;
use crate::{context, errors, store, subxact};

/// Who a tool call acts for; from the transaction's settings, never from the arguments.
pub struct Ctx {
    pub tenant: String,
    pub conversation: Option<String>,
    pub turn: Option<String>,
}

impl Ctx {
    /// The session of seeds 002 and 003 (the conversation in context), or their
    /// `no_session` error object.
    pub fn session(&self, tool: &str) -> Result<&str, Value> {
        self.conversation.as_deref().ok_or_else(|| {
            error("no_session", format!("{tool} needs a session: set the conversation in context (todo.conversation)"))
        })
    }

    fn from_settings() -> Ctx {
        let tenant = context::tenant();
        store::require_registered(&tenant);
        Ctx { tenant, conversation: context::conversation(), turn: context::turn() }
    }
}

/// One tool: its MCP description and schema, an optional seed-specific check that runs
/// before the schema (for seeds that define their own error codes), and what it does.
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    pub precheck: Option<fn(&Value) -> Option<Value>>,
    pub run: fn(&Ctx, &Value) -> Value,
    /// whether it may write (then it runs in a subtransaction and takes an xid first)
    pub writes: bool,
}

/// Every tool with its dialect (the seed it speaks, or `coord`), in catalog order.
pub fn catalog() -> Vec<(&'static str, &'static Tool)> {
    [("001", plan::TOOLS), ("002", session::TOOLS), ("003", todolist::TOOLS), ("004", tasks::TOOLS), ("coord", coord::TOOLS)]
        .into_iter()
        .flat_map(|(dialect, tools)| tools.iter().map(move |t| (dialect, *t)))
        .collect()
}

/// Every tool, in catalog order.
pub fn registry() -> Vec<&'static Tool> {
    catalog().into_iter().map(|(_, t)| t).collect()
}

/// The dispatcher's own error object (an unknown tool, arguments that break the schema).
pub fn error(code: &str, message: impl Into<String>) -> Value {
    json!({ "error": { "code": code, "message": message.into() } })
}

/// A conversation's todos that are not canceled, in order: the list of seeds 003 and 004,
/// which have no canceled status.
pub fn uncanceled(tenant: &str, conversation: &str) -> Vec<crate::model::Todo> {
    store::todos(tenant, store::Filter::Conversation(conversation))
        .into_iter()
        .filter(|t| t.status != Status::Canceled)
        .collect()
}

/// A string field of the arguments ("" when absent).
pub fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A JSON object from key/value pairs, for `store::insert` / `store::update`.
pub fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// A stored id as the seeds spell ids: a string.
pub fn parse_string_id(s: &str) -> Option<i64> {
    crate::writ::parse::parse_id(s).filter(|id| *id > 0)
}

/// Moves todo `id` from `from` to `to` for a surface that states statuses outright (a
/// whole-list replace, a task file): a move the transition table forbids in one step
/// (completed → in_progress, completed ↔ canceled) goes through pending, as a reopen.
pub fn set_status(tenant: &str, id: i64, from: Status, to: Status, extra: Map<String, Value>) {
    if from != to && crate::status::check_transition(from, to).is_err() {
        store::update(tenant, id, &fields([("status", json!("pending"))]));
    }
    let mut f = extra;
    if from != to {
        f.insert("status".into(), json!(to.as_str()));
    }
    if !f.is_empty() {
        store::update(tenant, id, &f);
    }
}

/// Every tool as `{"name", "description", "inputSchema", "_meta": {"pg_todos/dialect"}}`
/// (MCP's tool shape; the dialect is `001` … `004` or `coord`, for servers that expose one
/// seed's set), in catalog
/// order: seed 001 `create_todo`, `list_todo`, `complete_todo`; seed 002 `todowrite`,
/// `todoread`; seed 003 `todolist__get`, `todolist__set`; seed 004 `ListTasks`, `AddTask`,
/// `CompleteTask`, `UncompleteTask`, `DeleteTask`; coordination (issue #7) `claim_todo`,
/// `heartbeat_todo`, `release_todo`, `finish_todo`, `block_todo`, `unblock_todo`,
/// `ready_todos`, `add_subtask`. Raises nothing.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn tools() -> JsonB {
    JsonB(Value::Array(
        catalog()
            .iter()
            .map(|(dialect, t)| {
                json!({ "name": t.name, "description": t.description, "inputSchema": (t.input_schema)(),
                        "_meta": { "pg_todos/dialect": dialect } })
            })
            .collect(),
    ))
}

/// Runs one tool by name with its input object, in the context's tenant, conversation and
/// turn, and returns the tool's output object. SQL: `todo.call(tool text, args jsonb
/// DEFAULT '{}') → jsonb`, a wrapper over this function that hands the arguments over as
/// text, so that arguments nested too deeply to convert still get an error object. An unknown tool gives
/// `{"error": {"code": "unknown_tool", …}}`; arguments that break the tool's schema give
/// `{"error": {"code": "invalid_arguments", …}}` (seed 003's tools: its own codes); a data
/// error inside a tool gives `{"error": {"code": "rejected", …}}`. In every error case
/// nothing is written.
///
/// Errors (SQL): 22023 when no tenant is in context; 42704 when it is not registered; and
/// any error that is not about the data (serialization failures, deadlocks, …), so the
/// caller can retry.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn call_json(tool: &str, args: Option<&str>) -> JsonB {
    match parse_args(tool, args) {
        Ok(args) => JsonB(dispatch(tool, &args)),
        Err(e) => JsonB(e),
    }
}

extension_sql!(
    r#"
CREATE FUNCTION todo.call(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, todo, pg_temp
AS $$ SELECT todo.call_json(tool, args::text) $$;
COMMENT ON FUNCTION todo.call(text, jsonb) IS
    'Runs one tool of todo.tools() by name with its input object and returns its output object.';
"#,
    name = "call",
    requires = [call_json]
);

/// 0.1.0's `todo.call(text, jsonb)` was this C function (symbol `call_wrapper`). Kept, with
/// no SQL of its own, so that a database still at 0.1.0 keeps working with this library until
/// `ALTER EXTENSION pg_todos UPDATE` replaces it with the wrapper above.
#[pg_extern(sql = false)]
fn call(tool: &str, args: Option<JsonB>) -> JsonB {
    JsonB(dispatch(tool, &args.map(|a| a.0).unwrap_or(Value::Null)))
}

/// A JSON argument handed over as text (NULL: JSON null). The text is valid JSON (it came
/// from jsonb); the only way to fail is nesting beyond serde_json's recursion limit.
fn parse_args(tool: &str, text: Option<&str>) -> Result<Value, Value> {
    match text {
        None => Ok(Value::Null),
        Some(t) => serde_json::from_str(t).map_err(|_| {
            error("invalid_arguments", format!("{tool}: arguments are nested more than {} levels deep", schema::MAX_DEPTH))
        }),
    }
}

pub fn dispatch(name: &str, args: &Value) -> Value {
    let Some(tool) = registry().into_iter().find(|t| t.name == name) else {
        return error("unknown_tool", format!("unknown tool \"{name}\"; todo.tools() lists the tools"));
    };
    let ctx = Ctx::from_settings();
    if let Some(found) = tool.precheck.and_then(|check| check(args)) {
        return found;
    }
    if let Err(why) = schema::validate(&(tool.input_schema)(), args) {
        return error("invalid_arguments", format!("{name}: {why}"));
    }
    if !tool.writes {
        return (tool.run)(&ctx, args);
    }
    let outcome = subxact::attempt(|| {
        store::begin_write();
        let out = (tool.run)(&ctx, args);
        // a tool's own error object: roll back whatever it may have written
        if out.get("error").is_some_and(|e| e.is_object()) || out.get("ok") == Some(&json!(false)) {
            Err(out)
        } else {
            Ok(out)
        }
    });
    match outcome {
        Ok(Ok(out)) | Ok(Err(out)) => out,
        Err(caught) if is_data_error(caught.code) => error("rejected", caught.message),
        Err(caught) => errors::raise(caught.code, caught.message, ""),
    }
}

/// SQLSTATE classes 22 (data exception), 23 (integrity constraint) and 55 (object not in
/// prerequisite state: the lifecycle): the tool's input was wrong, not the database.
fn is_data_error(code: PgSqlErrorCode) -> bool {
    let state = code as i32;
    // PostgreSQL packs SQLSTATE characters 6 bits each; the class is the first two.
    let class = |a: u8, b: u8| -> i32 { ((a - b'0') as i32 & 0x3F) | (((b - b'0') as i32 & 0x3F) << 6) };
    let mask = 0x3F | (0x3F << 6);
    [class(b'2', b'2'), class(b'2', b'3'), class(b'5', b'5')].contains(&(state & mask))
}
