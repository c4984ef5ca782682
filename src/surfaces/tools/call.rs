//! Running a tool: `todo.call` (the tool's output object), `todo.call_mcp` (MCP's
//! `CallToolResult`), and the text-argument twins earlier versions had. Arguments are
//! measured before they are parsed, checked against the tool's schema, and a tool that writes runs through
//! `runner::attempt` (one per call), inside `runner::call`.

use pgrx::prelude::*;
use serde_json::{json, Value};

use super::catalog::find;
use super::dialect::Tool;
use super::helpers::{error, failed, notice_kept, notice_omitted};
use crate::error::Error;
use crate::jsonb::{Jsonb, Unreadable, NUMBER_OUT_OF_RANGE};
use crate::ops::Scope;
use crate::{limits, runner, schema, session};
use pg_todos_core::limits::Setting;

/// Runs one tool by name with its input object, in the context's tenant, conversation and
/// turn, and returns the tool's output object. SQL: `todo.call(tool text, args jsonb
/// DEFAULT '{}') → jsonb` (SQL below): the arguments are measured as JSON text before they
/// are printed (over `todo.max_arguments_size`: `too_large`), so that a number like
/// `1e131071` (131,072 digits from a few bytes of jsonb) is refused, not printed, and
/// arguments nested too deeply to convert still get an error object. An unknown tool gives
/// `{"error": {"code": "unknown_tool", …}}`; arguments that break the tool's schema give
/// `{"error": {"code": "invalid_arguments", …}}` (the todolist dialect: its own codes); a
/// value the database refuses (a column over its limit too) gives `{"error": {"code":
/// "rejected", …}}`; arguments over `todo.max_arguments_size` bytes give `{"error": {"code":
/// "too_large", …}}`, before they are parsed. In every error case nothing is written.
///
/// Errors (SQL): 22004 a NULL tool; 22023 when no tenant is in context; 42704 when it is not
/// registered; and every error that is not about the arguments' data (a cancel or timeout, a
/// deadlock, a serialization failure, a lock timeout, out of memory or disk), raised as it is
/// with nothing of the call committed, so the caller can retry.
#[pg_extern(sql = false)]
fn call(tool: Option<&str>, fcinfo: pg_sys::FunctionCallInfo) -> Jsonb {
    let tool = crate::errors::required(tool, "todo.call: tool");
    // SAFETY: argument 1 of todo.call is its jsonb arguments (the SQL below)
    let args = unsafe { limits::jsonb_value_arg(fcinfo, 1, Setting::ArgumentsSize, &format!("{tool}: arguments")) };
    let (out, omitted) = session::with_omitted(|| run_jsonb(find(tool), tool, args));
    notice_omitted(tool, omitted);
    notice_kept(tool, session::take_kept());
    Jsonb(out)
}

/// The text-argument twin of `todo.call`, `todo.call_json(tool text, args text)`, from
/// 0.2.0 to 0.10.0 (1.0.0 dropped it: cast the text to jsonb). Kept, with no SQL of its own,
/// for the SQL of those versions and the databases not yet updated.
#[pg_extern(sql = false)]
fn call_json(tool: Option<&str>, args: Option<&str>) -> Jsonb {
    let tool = crate::errors::required(tool, "todo.call_json: tool");
    let (out, omitted) = session::with_omitted(|| run_text(find(tool), tool, args));
    notice_omitted(tool, omitted);
    notice_kept(tool, session::take_kept());
    Jsonb(out)
}

extension_sql!(
    r#"
CREATE FUNCTION todo.call(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_wrapper';
COMMENT ON FUNCTION todo.call(text, jsonb) IS
    'Runs one tool of todo.tools() by name with its input object and returns its output object; a refusal (an unknown tool, arguments that break its schema or pass todo.max_arguments_size, a value the database refuses) is an error object, and nothing is written. Errors: 22004 a NULL tool; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; a cancel, timeout, deadlock, serialization failure or lock timeout is raised with nothing committed.';
"#,
    name = "call"
);

// From 0.9.0 to 0.10.0 todo.call's symbol was call_jsonb_wrapper (0.1.0's was call_wrapper,
// the one it has again).
crate::surfaces::earlier_symbol!(call_jsonb_wrapper, pg_finfo_call_jsonb_wrapper => call_wrapper);

/// Runs one tool like `todo.call` and returns its answer as an MCP `CallToolResult`:
/// `{"content": [{"type": "text", "text"}], "structuredContent"?, "isError"}`. The text is
/// what the tool's runtime shows its model (Claude Code's `Task #1 created successfully: …`,
/// Codex's `Plan updated`, Gemini's list); for the seeds' dialects, the output's JSON. An
/// output object is also the structured content. `isError` marks the catalog's error shapes
/// (`{"error": {…}}`, `{"ok": false, …}`, seed 004's `Error: …` text); a result a runtime
/// gives as a normal answer (Claude Code's `Task not found`) is not one. SQL:
/// `todo.call_mcp(tool text, args jsonb DEFAULT '{}') → jsonb` (SQL below), its arguments
/// measured before they are printed, as `todo.call`'s.
///
/// Errors (SQL): those of `todo.call`.
#[pg_extern(sql = false)]
fn call_mcp(tool: Option<&str>, fcinfo: pg_sys::FunctionCallInfo) -> Jsonb {
    let tool = crate::errors::required(tool, "todo.call_mcp: tool");
    let found = find(tool);
    // SAFETY: argument 1 of todo.call_mcp is its jsonb arguments (the SQL below)
    let args = unsafe { limits::jsonb_value_arg(fcinfo, 1, Setting::ArgumentsSize, &format!("{tool}: arguments")) };
    let (out, omitted) = session::with_omitted(|| run_jsonb(found, tool, args));
    Jsonb(mcp_result(found, out, omitted, session::take_kept()))
}

/// The text-argument twin of `todo.call_mcp`, `todo.call_mcp_json(tool text, args text)`,
/// from 0.5.0 to 0.10.0 (1.0.0 dropped it). Kept, with no SQL of its own, for the SQL of
/// those versions.
#[pg_extern(sql = false)]
fn call_mcp_json(tool: Option<&str>, args: Option<&str>) -> Jsonb {
    let tool = crate::errors::required(tool, "todo.call_mcp_json: tool");
    let found = find(tool);
    let (out, omitted) = session::with_omitted(|| run_text(found, tool, args));
    Jsonb(mcp_result(found, out, omitted, session::take_kept()))
}

extension_sql!(
    r#"
CREATE FUNCTION todo.call_mcp(tool text, args jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'call_mcp_wrapper';
COMMENT ON FUNCTION todo.call_mcp(text, jsonb) IS
    'Runs one tool of todo.tools() like todo.call and returns an MCP CallToolResult: the text its runtime shows the model, the output object as structured content, and isError. Errors: 22004 a NULL tool; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; a cancel, timeout, deadlock, serialization failure or lock timeout is raised with nothing committed.';
"#,
    name = "call_mcp"
);

// From 0.9.0 to 0.10.0 todo.call_mcp's symbol was call_mcp_jsonb_wrapper.
crate::surfaces::earlier_symbol!(call_mcp_jsonb_wrapper, pg_finfo_call_mcp_jsonb_wrapper => call_mcp_wrapper);

/// Whether an output is one of the catalog's error shapes.
fn is_error(out: &Value) -> bool {
    out.get("error").is_some_and(Value::is_object)
        || out.get("ok") == Some(&Value::Bool(false))
        || out.get("isError") == Some(&Value::Bool(true))
        || out.as_str().is_some_and(|s| s.starts_with("Error:"))
}

/// An output as MCP's `CallToolResult` (see `call_mcp`); its text is cut at
/// `todo.max_output_size` bytes, with a last line that says so. `kept`: the todos a
/// whole-list write kept because a read of its list does not show them, said in the text's
/// last line (`limits::kept_note`) and in `_meta` (`{"pg_todos/kept": N}`).
pub fn mcp_result(tool: Option<&Tool>, out: Value, omitted: Option<(usize, u64)>, kept: Option<u64>) -> Value {
    let text = match (tool.and_then(|t| t.text), &out) {
        (Some(render), _) => render(&out),
        (None, Value::String(s)) => s.clone(),
        (None, other) => other.to_string(),
    };
    let kept = kept.filter(|_| !is_error(&out));
    // a list read that stopped at its limits (`omitted`): the model reads how many it does
    // not see, as the text's last line (kept when the text itself is cut), and a client in
    // `_meta`; a whole-list write that kept todos no read shows (`kept`) says so the same way
    let limit = limits::get(Setting::OutputSize);
    let notes: Vec<(&str, String)> = omitted
        .map(|(shown, left_out)| (OMITTED_KEY, pg_todos_core::limits::omitted_note(shown, left_out)))
        .into_iter()
        .chain(kept.map(|n| (KEPT_KEY, pg_todos_core::limits::kept_note(n))))
        .collect();
    let text = match notes.is_empty() {
        true => pg_todos_core::limits::cap_text(&text, limit),
        false => noted(&text, &notes, limit),
    };
    // a runtime that answers with several text items (Backlog.md's task_list, a status group
    // each) puts them in `texts`: they go out as they are while the whole fits the limit
    let items: Vec<&str> = out
        .get("texts")
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |a| a.iter().filter_map(Value::as_str).collect());
    let content: Vec<Value> =
        if items.len() > 1 && notes.is_empty() && items.iter().map(|t| t.len()).sum::<usize>() <= limit {
            items.iter().map(|t| json!({ "type": "text", "text": t })).collect()
        } else {
            vec![json!({ "type": "text", "text": text })]
        };
    let mut result = json!({ "content": content, "isError": is_error(&out) });
    if let Some((shown, left_out)) = omitted {
        result["_meta"] = json!({ "pg_todos/list": { "shown": shown, "omitted": left_out } });
    }
    if let Some(kept) = kept {
        result["_meta"]["pg_todos/kept"] = json!(kept);
    }
    if out.is_object() {
        result["structuredContent"] = out;
    }
    result
}

/// The key of a JSON answer's object that says its list read was cut (`mcp_result`).
const OMITTED_KEY: &str = "pg_todos/omitted";
/// The key of a JSON answer's object that says a whole-list write kept todos no read shows.
const KEPT_KEY: &str = "pg_todos/kept";

/// `text`, when it is a JSON object, with a note as its last field (`"key": note`), written in the text's own layout (pretty-printed or on one line), so the answer
/// still parses; None for any other text.
fn noted_json(text: &str, key: &str, note: &str) -> Option<String> {
    let body = text.trim_end();
    // an object: its text starts with `{` and parses (checked without building it: a list's
    // answer can be a megabyte)
    if !body.trim_start().starts_with('{') || serde_json::from_str::<serde::de::IgnoredAny>(body).is_err() {
        return None;
    }
    let head = body.strip_suffix('}')?.trim_end();
    let field = format!("{}: {}", json!(key), json!(note));
    let comma = if head.ends_with('{') { "" } else { "," };
    Some(match body.contains('\n') {
        true => format!("{head}{comma}\n  {field}\n}}"),
        false => format!("{head}{comma}{field}}}"),
    })
}

/// A tool's text with its notes (a cut read's `omitted`, a whole-list write's `kept`), within
/// `limit` bytes: an answer in JSON (Task Master's) stays JSON, each note a field of it; any
/// other text ends with the notes, a line each, kept whole when the text before them is cut.
fn noted(text: &str, notes: &[(&str, String)], limit: usize) -> String {
    let json = notes.iter().try_fold(text.to_owned(), |t, (key, note)| noted_json(&t, key, note));
    match json {
        Some(json) if json.len() <= limit => json,
        _ => {
            let lines: Vec<&str> = notes.iter().map(|(_, n)| n.as_str()).collect();
            let room = limit.saturating_sub(lines.iter().map(|n| n.len() + 1).sum());
            format!("{}\n{}", pg_todos_core::limits::cap_text(text, room), lines.join("\n"))
        }
    }
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

/// Runs `tool` (what `name` found) with `args` in the context's scope; its output or error
/// object.
fn answer(tool: Option<&'static Tool>, name: &str, args: &Value) -> Value {
    answer_in(tool, name, args, Scope::from_context)
}

/// `answer` in the scope `scope` gives (a waiting claim's: its agent and list).
pub fn answer_in(tool: Option<&'static Tool>, name: &str, args: &Value, scope: impl FnOnce() -> Scope) -> Value {
    runner::call(|| {
        let Some(tool) = tool else {
            return error("unknown_tool", format!("unknown tool \"{name}\"; todo.tools() lists the tools"));
        };
        let scope = scope();
        if let Some(found) = tool.precheck.and_then(|check| check(args)) {
            return found;
        }
        if let Err(why) = schema::validate(accepted(tool), args) {
            return error("invalid_arguments", format!("{name}: {why}"));
        }
        let answer = if tool.writes() {
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
