//! The tool catalog: every dialect's tools in one registry, listed by `todo.tools()` in MCP's
//! tool shape and run by `todo.call(tool, args)`. Each dialect is one module of parsing and
//! rendering that speaks its seed's JSON exactly; changes are operations (`ops`), run by
//! `runner::attempt` (one per call).

pub mod claude_tasks;
pub mod claude_todowrite;
pub mod codex;
pub mod continue_cli;
pub mod coord;
pub mod copilot;
pub mod crush;
pub mod cursor;
pub mod gemini;
pub mod goose;
pub mod hermes;
pub mod kimi;
pub mod langchain;
pub mod opencode;
pub mod openhands;
pub mod plan;
pub mod qwen;
pub mod roo;
pub mod tasks;
pub mod todolist;
pub mod vibe;
pub mod zed;

use pgrx::prelude::*;
use pgrx::JsonB;

use serde_json::{json, Value};

use crate::dialects;
use crate::error::Error;
use crate::jsonb::{Jsonb, Unreadable, NUMBER_OUT_OF_RANGE};
use crate::ops::Scope;
use crate::{limits, runner, schema, session};
use pg_todos_core::limits::Setting;

/// What a tool answers: its output object, or (`Err`) its error object — then nothing it
/// wrote is kept.
pub type Answer = Result<Value, Value>;

/// One tool: its MCP description and schema, an optional dialect-specific check that runs
/// before the schema (for dialects that define their own error codes), and what it does.
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    pub input_schema: fn() -> Value,
    pub precheck: Option<fn(&Value) -> Option<Value>>,
    pub run: fn(&Scope, &Value) -> Answer,
    /// whether it may write (then it runs through `runner::attempt`)
    pub writes: bool,
    /// the text the model reads for an output (or error) object, for the runtimes whose
    /// tools show the model words rather than the object; None: the object's JSON text
    pub text: Option<fn(&Value) -> String>,
    /// the schema arguments are checked against when it differs from the one listed (a
    /// runtime whose listed schema is stricter than what it accepts)
    pub accepts: Option<fn() -> Value>,
}

/// Every tool with its dialect (`dialects::DIALECTS`), in catalog order.
pub fn catalog() -> Vec<(&'static str, &'static Tool)> {
    [
        plan::TOOLS,
        opencode::TOOLS,
        todolist::TOOLS,
        tasks::TOOLS,
        coord::TOOLS,
        claude_tasks::TOOLS,
        claude_todowrite::TOOLS,
        codex::TOOLS,
        gemini::TOOLS,
        cursor::TOOLS,
        roo::TOOLS,
        copilot::TOOLS,
        langchain::TOOLS,
        openhands::TOOLS,
        qwen::TOOLS,
        goose::TOOLS,
        hermes::TOOLS,
        crush::TOOLS,
        kimi::TOOLS,
        vibe::TOOLS,
        zed::TOOLS,
        continue_cli::TOOLS,
    ]
    .into_iter()
    .zip(dialects::DIALECTS.iter().map(|(name, _, _)| *name))
    .flat_map(|(tools, dialect)| tools.iter().map(move |t| (dialect, *t)))
    .collect()
}

/// The tool a name means: a bare name (the first of that name in catalog order), or
/// `dialect/name` for one dialect's tool (the dialect by its name or alias), for when two
/// dialects use one name.
pub fn find(name: &str) -> Option<&'static Tool> {
    let (dialect, bare) = match name.split_once('/') {
        Some((d, n)) => (Some(dialects::canonical(d)?), n),
        None => (None, name),
    };
    catalog().into_iter().find(|(d, t)| t.name == bare && dialect.is_none_or(|want| want == *d)).map(|(_, t)| t)
}

/// The dispatcher's own error object (an unknown tool, arguments that break the schema, a
/// value the database refused): `{"error": {"code", "message"}}`.
pub fn error(code: &str, message: impl Into<String>) -> Value {
    json!({ "error": { "code": code, "message": message.into() } })
}

/// An operation's error as the error object of the dialects that have no words of their
/// own: its code from the one table (`Error::code`) and its message.
pub fn failed(e: Error) -> Value {
    error(e.code(), e.to_string())
}

/// A string field of the arguments ("" when absent).
pub fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The items of a whole list sent as a JSON array (`list`; not an array: none), each with
/// no id, its content from `content`, its status (validated before; pending if absent) and
/// the columns `column` names from its other keys (`(column, key)` pairs).
pub fn list_items(list: &Value, content: &str, columns: &[(&str, &str)]) -> Vec<crate::ops::whole_list::Item> {
    list.as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|t| crate::ops::whole_list::Item {
            id: None,
            content: str_arg(t, content).to_string(),
            status: crate::status::Status::parse(str_arg(t, "status")).unwrap_or(crate::status::Status::Pending),
            columns: columns.iter().map(|(column, key)| (column.to_string(), t[*key].clone())).collect(),
        })
        .collect()
}

/// A todo's id as the runtimes whose callers choose ids see it (Cursor, Copilot, Qwen Code,
/// Hermes, Mistral Vibe): the caller's (`external_id`), else the store's.
pub fn caller_id(t: &crate::todo::Todo) -> String {
    t.external_id.clone().unwrap_or_else(|| t.id.to_string())
}

/// A list's todos by the ids callers name them with, built once per call so that finding
/// each item of a long list costs the same: a todo by its caller id (`external_id`), else,
/// for a todo written through a dialect without caller ids, by its store id.
pub struct CallerIds<'a> {
    by_caller: std::collections::HashMap<&'a str, &'a crate::todo::Todo>,
    by_store: std::collections::HashMap<String, &'a crate::todo::Todo>,
}

impl<'a> CallerIds<'a> {
    pub fn new(list: &'a [crate::todo::Todo]) -> CallerIds<'a> {
        CallerIds {
            by_caller: list.iter().filter_map(|t| Some((t.external_id.as_deref()?, t))).collect(),
            by_store: list.iter().filter(|t| t.external_id.is_none()).map(|t| (t.id.to_string(), t)).collect(),
        }
    }

    /// The todo a caller's id names.
    pub fn find(&self, id: &str) -> Option<&'a crate::todo::Todo> {
        self.by_caller.get(id).or_else(|| self.by_store.get(id)).copied()
    }

    /// An item of a whole list that names its todo by a caller's id, with its other columns:
    /// a todo found by its store id keeps having no caller id; `id` None (an item the
    /// runtime sent without one) sets none.
    pub fn item(
        &self,
        id: Option<&str>,
        content: &str,
        status: crate::status::Status,
        mut columns: serde_json::Map<String, Value>,
    ) -> crate::ops::whole_list::Item {
        let found = id.and_then(|id| self.find(id));
        let external = match (id, found) {
            (None, _) => Value::Null,
            (Some(_), Some(f)) if f.external_id.is_none() => Value::Null,
            (Some(id), _) => json!(id),
        };
        columns.insert("external_id".into(), external);
        crate::ops::whole_list::Item { id: found.map(|f| f.id), content: content.to_string(), status, columns }
    }
}

/// A stored id as the dialects spell ids: a string.
pub fn parse_string_id(s: &str) -> Option<i64> {
    crate::writ::parse::parse_id(s).filter(|id| *id > 0)
}

/// The session of the opencode and todolist dialects (the conversation in context), or
/// their `no_session` error object.
pub fn session<'a>(scope: &'a Scope, tool: &str) -> Result<&'a str, Value> {
    scope.conv().ok_or_else(|| {
        error("no_session", format!("{tool} needs a session: set the conversation in context (todo.conversation)"))
    })
}

/// Every tool as `{"name", "description", "inputSchema", "_meta": {"pg_todos/dialect"}}`
/// (MCP's tool shape; the dialect is `plan`, `opencode`, `todolist`, `tasks` or `coord`, for
/// servers that expose some sets only), in catalog order: plan `create_todo`, `list_todo`,
/// `complete_todo`; opencode `todowrite`, `todoread`; todolist `todolist__get`,
/// `todolist__set`; tasks `ListTasks`, `AddTask`, `CompleteTask`, `UncompleteTask`,
/// `DeleteTask`; coord `claim_todo`, `heartbeat_todo`, `release_todo`, `finish_todo`,
/// `block_todo`, `unblock_todo`, `ready_todos`, `add_subtask`. Raises nothing.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn tools() -> Jsonb {
    Jsonb(Value::Array(
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
/// DEFAULT '{}') → jsonb` (`call_jsonb`), which hands the arguments over as text, so that
/// arguments nested too deeply to convert still get an error object. An unknown tool gives
/// `{"error": {"code": "unknown_tool", …}}`; arguments that break the tool's schema give
/// `{"error": {"code": "invalid_arguments", …}}` (the todolist dialect: its own codes); a
/// value the database refuses (a column over its limit too) gives `{"error": {"code":
/// "rejected", …}}`; arguments over `todo.max_arguments_size` bytes (as JSON text) give
/// `{"error": {"code": "too_large", …}}`, before they are parsed. In every error case
/// nothing is written.
///
/// Errors (SQL): 22023 when no tenant is in context; 42704 when it is not registered; and
/// every error that is not about the arguments' data (a cancel or timeout, a deadlock, a
/// serialization failure, a lock timeout, out of memory or disk), raised as it is with
/// nothing of the call committed, so the caller can retry.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn call_json(tool: Option<&str>, args: Option<&str>) -> Jsonb {
    let tool = crate::errors::required(tool, "todo.call_json: tool");
    let (out, omitted) = session::with_omitted(|| run_text(find(tool), tool, args));
    notice_omitted(tool, omitted);
    Jsonb(out)
}

/// `todo.call(tool text, args jsonb DEFAULT '{}') → jsonb` (SQL below): `call_json` with the
/// arguments measured as JSON text before they are printed (over `todo.max_arguments_size`:
/// `too_large`), so that a number like `1e131071` (131,072 digits from a few bytes of jsonb)
/// is refused, not printed.
#[pg_extern(sql = false)]
fn call_jsonb(tool: Option<&str>, fcinfo: pg_sys::FunctionCallInfo) -> Jsonb {
    let tool = crate::errors::required(tool, "todo.call: tool");
    // SAFETY: argument 1 of todo.call is its jsonb arguments (the SQL below)
    let args = unsafe { limits::jsonb_value_arg(fcinfo, 1, Setting::ArgumentsSize, &format!("{tool}: arguments")) };
    let (out, omitted) = session::with_omitted(|| run_jsonb(find(tool), tool, args));
    notice_omitted(tool, omitted);
    Jsonb(out)
}

/// A NOTICE, for a program reading a tool's JSON through SQL, when the tool's list read
/// stopped at its limits (the JSON keeps the runtime's shape; `todo.call_mcp` says it in the
/// text the model reads instead).
pub fn notice_omitted(what: &str, omitted: Option<(usize, u64)>) {
    if let Some((shown, omitted)) = omitted {
        pgrx::notice!("{what}: {}", pg_todos_core::limits::omitted_note(shown, omitted));
    }
}

extension_sql!(
    r#"
CREATE FUNCTION todo.call(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_jsonb_wrapper';
COMMENT ON FUNCTION todo.call(text, jsonb) IS
    'Runs one tool of todo.tools() by name with its input object and returns its output object.';
"#,
    name = "call",
    requires = [call_json]
);

/// Runs one tool like `todo.call` and returns its answer as an MCP `CallToolResult`:
/// `{"content": [{"type": "text", "text"}], "structuredContent"?, "isError"}`. The text is
/// what the tool's runtime shows its model (Claude Code's `Task #1 created successfully: …`,
/// Codex's `Plan updated`, Gemini's list); for the seeds' dialects, the output's JSON. An
/// output object is also the structured content. `isError` marks the catalog's error shapes
/// (`{"error": {…}}`, `{"ok": false, …}`, seed 004's `Error: …` text); a result a runtime
/// gives as a normal answer (Claude Code's `Task not found`) is not one. SQL:
/// `todo.call_mcp(tool text, args jsonb DEFAULT '{}') → jsonb` (`call_mcp_jsonb`).
///
/// Errors (SQL): those of `todo.call`.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn call_mcp_json(tool: Option<&str>, args: Option<&str>) -> Jsonb {
    let tool = crate::errors::required(tool, "todo.call_mcp_json: tool");
    let found = find(tool);
    let (out, omitted) = session::with_omitted(|| run_text(found, tool, args));
    Jsonb(mcp_result(found, out, omitted))
}

/// `todo.call_mcp(tool text, args jsonb DEFAULT '{}') → jsonb` (SQL below): `call_mcp_json`
/// with the arguments measured before they are printed, as `call_jsonb`.
#[pg_extern(sql = false)]
fn call_mcp_jsonb(tool: Option<&str>, fcinfo: pg_sys::FunctionCallInfo) -> Jsonb {
    let tool = crate::errors::required(tool, "todo.call_mcp: tool");
    let found = find(tool);
    // SAFETY: argument 1 of todo.call_mcp is its jsonb arguments (the SQL below)
    let args = unsafe { limits::jsonb_value_arg(fcinfo, 1, Setting::ArgumentsSize, &format!("{tool}: arguments")) };
    let (out, omitted) = session::with_omitted(|| run_jsonb(found, tool, args));
    Jsonb(mcp_result(found, out, omitted))
}

extension_sql!(
    r#"
CREATE FUNCTION todo.call_mcp(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_mcp_jsonb_wrapper';
COMMENT ON FUNCTION todo.call_mcp(text, jsonb) IS
    'Runs one tool of todo.tools() like todo.call and returns an MCP CallToolResult: the text its runtime shows the model, the output object as structured content, and isError.';
"#,
    name = "call_mcp",
    requires = [call_mcp_json]
);

/// A conversation's list (in the context's tenant) as a runtime's tools show it, so that a
/// list written through any dialect can be read in another's shape: `opencode` → OpenCode's
/// todos `[{content, status, priority, id}]` (its `GET /session/:id/todo`); `claude-tasks` →
/// TaskList's `{"tasks"}`; `claude-todowrite` → `{"todos": [{content, status,
/// activeForm}]}`; `codex` → the `turn/plan/updated` notification's `{"explanation",
/// "plan"}`; `gemini` → `{"todos": [{description, status}]}`; `cursor` → `{"todos": [{id,
/// content, status}]}`; `roo` → the markdown checklist, as a JSON string; `copilot` →
/// `{"todoList": [{id, title, status}]}`; `langchain` → `{"todos": [{content, status}]}`;
/// `openhands` → `{"task_list": [{title, notes, status}]}`; `qwen` → `{"todos": [{content,
/// status, id, blockedBy}]}`; `goose` and `continue` → the markdown document as last written,
/// with its todos as they are now, as a JSON string; `hermes` → its answer `{"todos",
/// "summary"}`; `crush` → `{"todos": [{content, status, active_form}]}`; `kimi` →
/// `{"todos": [{title, status}]}`; `vibe` → `{"todos": [{id, content, status, priority}]}`;
/// `zed` → `{"plan": [{step, status, priority}]}`. Each shows what
/// its runtime can: a blocked todo is pending where there is no blocked status; canceled
/// todos only where there is a canceled one; archived todos nowhere.
///
/// Errors: 22023 for a dialect that is not one of these (the other seeds' dialects have read
/// tools: `todo.call`), or when no tenant is in context; 42704 when it is not registered.
#[pg_extern(stable, parallel_restricted, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn list_as(dialect: &str, conversation: &str) -> Jsonb {
    let (out, omitted) = session::with_omitted(|| list_shape(dialect, conversation));
    notice_omitted("todo.list_as", omitted);
    Jsonb(out)
}

/// `list_as`' list, in `dialect`'s shape.
fn list_shape(dialect: &str, conversation: &str) -> Value {
    let scope = Scope::reading(Some(conversation));
    let rows = |kept| crate::ops::whole_list::stored(&scope, conversation, kept);
    use crate::ops::whole_list::Kept;
    match dialects::canonical(dialect) {
        Some("opencode") => opencode::list(&scope.tenant, Some(conversation)),
        Some("claude-tasks") => claude_tasks::task_list(&scope, conversation),
        Some("claude-todowrite") => json!({ "todos": claude_todowrite::todos(&rows(Kept::Uncanceled)) }),
        Some("codex") => codex::plan(&rows(Kept::Uncanceled)),
        Some("gemini") => gemini::todos(&rows(Kept::All)),
        Some("cursor") => cursor::todos(&rows(Kept::All)),
        Some("roo") => json!(roo::checklist(&rows(Kept::Uncanceled))),
        Some("copilot") => copilot::todo_list(&rows(Kept::Uncanceled)),
        Some("langchain") => langchain::todos(&rows(Kept::Uncanceled)),
        Some("openhands") => openhands::task_list(&rows(Kept::Uncanceled)),
        Some("qwen") => json!({ "todos": qwen::todos(&scope, &rows(Kept::Uncanceled)) }),
        Some("goose") => goose::text(&scope, conversation),
        Some("hermes") => hermes::answer(&rows(Kept::All)),
        Some("crush") => json!({ "todos": crush::todos(&rows(Kept::Uncanceled)) }),
        Some("kimi") => kimi::todos(&rows(Kept::Uncanceled)),
        Some("vibe") => json!({ "todos": vibe::todos(&rows(Kept::All)) }),
        Some("zed") => zed::plan(&rows(Kept::Uncanceled)),
        Some("continue") => continue_cli::checklist(&scope, conversation),
        _ => crate::errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("todo.list_as: no list shape for dialect \"{dialect}\""),
            format!("use one of {LIST_SHAPES} (the seeds' dialects read their lists with their own tools through todo.call)"),
        ),
    }
}

/// The dialects `list_as` reads a list in.
const LIST_SHAPES: &str = "opencode, claude-tasks, claude-todowrite, codex, gemini, cursor, roo, copilot, langchain, openhands, qwen, goose, hermes, crush, kimi, vibe, zed or continue";

extension_sql!(
    r#"
COMMENT ON FUNCTION todo.list_as(text, text) IS
    'A conversation''s list in a runtime''s shape: opencode, claude-tasks, claude-todowrite, codex, gemini, cursor, roo, copilot, langchain, openhands, qwen, goose, hermes, crush, kimi, vibe, zed or continue.';
"#,
    name = "list_as_comment",
    requires = [list_as]
);

/// Whether an output is one of the catalog's error shapes.
fn is_error(out: &Value) -> bool {
    out.get("error").is_some_and(Value::is_object)
        || out.get("ok") == Some(&Value::Bool(false))
        || out.as_str().is_some_and(|s| s.starts_with("Error:"))
}

/// An output as MCP's `CallToolResult` (see `call_mcp_json`); its text is cut at
/// `todo.max_output_size` bytes, with a last line that says so.
pub fn mcp_result(tool: Option<&Tool>, out: Value, omitted: Option<(usize, u64)>) -> Value {
    let text = match (tool.and_then(|t| t.text), &out) {
        (Some(render), _) => render(&out),
        (None, Value::String(s)) => s.clone(),
        (None, other) => other.to_string(),
    };
    // a list read that stopped at its limits (`omitted`): the model reads how many it does
    // not see, as the text's last line (kept when the text itself is cut), and a client in
    // `_meta`
    let limit = limits::get(Setting::OutputSize);
    let text = match omitted {
        Some((shown, left_out)) => {
            let note = pg_todos_core::limits::omitted_note(shown, left_out);
            let text = pg_todos_core::limits::cap_text(&text, limit.saturating_sub(note.len() + 1));
            format!("{text}\n{note}")
        }
        None => pg_todos_core::limits::cap_text(&text, limit),
    };
    let mut result = json!({ "content": [{ "type": "text", "text": text }], "isError": is_error(&out) });
    if let Some((shown, left_out)) = omitted {
        result["_meta"] = json!({ "pg_todos/list": { "shown": shown, "omitted": left_out } });
    }
    if out.is_object() {
        result["structuredContent"] = out;
    }
    result
}

/// The words of an answer that is a sentence (Codex's `Plan updated`, Roo's confirmation):
/// an error object's message, else the answer's text.
pub fn sentence(out: &Value) -> String {
    error_message(out).or(out.as_str()).unwrap_or_default().to_string()
}

/// The message of an error object (`{"error": {"message"}}`), for the runtimes that show
/// the model an error's words only.
pub fn error_message(out: &Value) -> Option<&str> {
    out.get("error")?.get("message")?.as_str()
}

/// 0.1.0's `todo.call(text, jsonb)` was this C function (symbol `call_wrapper`). Kept, with
/// no SQL of its own, so that a database still at 0.1.0 keeps working with this library until
/// `ALTER EXTENSION pg_todos UPDATE` replaces it with the wrapper above.
#[pg_extern(sql = false)]
fn call(tool: &str, args: Option<JsonB>) -> Jsonb {
    Jsonb(dispatch(tool, &args.map(|a| a.0).unwrap_or(Value::Null)))
}

/// A JSON argument handed over as text (NULL: JSON null). The text is valid JSON (it came
/// from jsonb); the only way to fail is nesting beyond serde_json's recursion limit.
fn parse_args(tool: &str, text: Option<&str>) -> Result<Value, Value> {
    match text {
        None => Ok(Value::Null),
        Some(t) => serde_json::from_str(t).map_err(|e| unreadable(tool, Unreadable::of(&e))),
    }
}

/// The error object of arguments serde_json does not read: nested past its limit (the
/// schema's bound of `schema::MAX_DEPTH` levels is the one to name), or a number out of its
/// range.
fn unreadable(tool: &str, why: Unreadable) -> Value {
    let what = match why {
        Unreadable::TooDeep => format!("are nested more than {} levels deep", schema::MAX_DEPTH),
        Unreadable::Number => format!("hold {NUMBER_OUT_OF_RANGE}"),
    };
    error("invalid_arguments", format!("{tool}: arguments {what}"))
}

/// Runs tool `name` (found as `tool`) with jsonb arguments read in place; its output or
/// error object, as `run_text` gives for their text.
fn run_jsonb(
    tool: Option<&'static Tool>,
    name: &str,
    args: Result<limits::JsonArg, pg_todos_core::limits::Exceeded>,
) -> Value {
    match args {
        Err(e) => error("too_large", e.to_string()),
        Ok(limits::JsonArg::Null) => answer(tool, name, &Value::Null),
        Ok(limits::JsonArg::Value(args)) => answer(tool, name, &args),
        Ok(limits::JsonArg::Unreadable(why)) => unreadable(name, why),
    }
}

/// Runs tool `name` (found as `tool`) with arguments handed over as text; its output or
/// error object (arguments over `todo.max_arguments_size`: `too_large`, before they are
/// parsed; nested too deeply: `invalid_arguments`).
fn run_text(tool: Option<&'static Tool>, name: &str, args: Option<&str>) -> Value {
    if let Err(e) = limits::check(Setting::ArgumentsSize, &format!("{name}: arguments"), args.map_or(0, str::len)) {
        return error("too_large", e.to_string());
    }
    match parse_args(name, args) {
        Ok(args) => answer(tool, name, &args),
        Err(e) => e,
    }
}

/// Runs tool `name` with `args` in the context's scope; its output or error object.
pub fn dispatch(name: &str, args: &Value) -> Value {
    answer(find(name), name, args)
}

/// Runs `tool` (what `name` found) with `args` in the context's scope; its output or error
/// object.
fn answer(tool: Option<&'static Tool>, name: &str, args: &Value) -> Value {
    runner::call(|| {
        let Some(tool) = tool else {
            return error("unknown_tool", format!("unknown tool \"{name}\"; todo.tools() lists the tools"));
        };
        let scope = Scope::from_context();
        if let Some(found) = tool.precheck.and_then(|check| check(args)) {
            return found;
        }
        if let Err(why) = schema::validate(accepted(tool), args) {
            return error("invalid_arguments", format!("{name}: {why}"));
        }
        let answer = if tool.writes {
            runner::attempt(|| (tool.run)(&scope, args).map_err(Refused)).map_err(|r| r.0)
        } else {
            (tool.run)(&scope, args)
        };
        answer.unwrap_or_else(|e| e)
    })
}

/// The schema `tool`'s arguments are checked against (`accepts`, else its input schema),
/// built once per backend.
fn accepted(tool: &'static Tool) -> &'static Value {
    thread_local! {
        static ACCEPTED: std::cell::RefCell<std::collections::HashMap<usize, &'static Value>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    let key = std::ptr::from_ref(tool) as usize;
    ACCEPTED.with(|a| {
        *a.borrow_mut().entry(key).or_insert_with(|| Box::leak(Box::new((tool.accepts.unwrap_or(tool.input_schema))())))
    })
}

/// A tool's error object, or an operation's error the database raised (`rejected`).
struct Refused(Value);

impl From<Error> for Refused {
    fn from(e: Error) -> Refused {
        Refused(failed(e))
    }
}
