//! What the dialects share: the dispatcher's error objects, reading arguments, caller ids,
//! the session a list needs, the words of an answer, the
//! status names several runtimes share, the NOTICEs of a list cut at its limits. It reads no
//! dialect and not the registry.

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::ops::Scope;
use crate::session;
use crate::status::Status;

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

/// The statuses of the runtimes with three, Claude Code's way (`claude_status_name`).
pub const CLAUDE_STATUSES: [&str; 3] = ["pending", "in_progress", "completed"];

/// The statuses of the runtimes with Claude Code's three and `cancelled`
/// (`cancelled_status_name`).
pub const CANCELLED_STATUSES: [&str; 4] = ["pending", "in_progress", "completed", "cancelled"];

/// A status as the runtimes with three statuses spell it, Claude Code's way: `pending`,
/// `in_progress`, `completed` (a status they lack: its nearest of the three). Claude Code's
/// TodoWrite and Task tools, Crush, Droid, LangChain, Mastra, Pydantic AI, Qwen Code.
pub fn claude_status_name(s: Status) -> &'static str {
    s.three_state().as_str()
}

/// A status as the runtimes with Claude Code's three statuses and `cancelled` (two l's) spell
/// it: the seeds' plan, OpenCode, Cursor, Hermes, Mistral Vibe. They have no blocked, deferred
/// or review status: a blocked or deferred todo is pending to them, one in review in progress.
pub fn cancelled_status_name(s: Status) -> &'static str {
    match s {
        Status::Canceled => "cancelled",
        s => s.three_state().as_str(),
    }
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
/// their `no_session` error object, which says how to name a list (`name_a_list`).
pub fn session<'a>(scope: &'a Scope, tool: &str) -> Result<&'a str, Value> {
    scope.conv().ok_or_else(|| error("no_session", format!("{tool} needs a session: {}", name_a_list())))
}

/// How to put a list (a conversation) in context, for an error of a tool that needs one: the
/// ways of a request of `pg_todos serve` (`todo.via` = `http`: the URL, the header, the token's
/// default list), else SQL's (`todo.conversation`).
pub fn name_a_list() -> &'static str {
    if session::via_http() {
        "name the list with ?list=<id> on the /mcp URL or the X-Todo-List header, or use a token made with a default list (todo.create_token(..., default_list => '<id>'))"
    } else {
        "set the conversation in context (todo.conversation)"
    }
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

/// A list kept as one todo, its root (a plan, a named list), with its items under it: each
/// item a subtask of the root, written in the root's own turn (`item_turn`), so that the
/// items are found with their list. AgentScope's plans, Kiro's lists.
pub struct Rooted {
    pub root: crate::todo::Todo,
    pub items: Vec<crate::todo::Todo>,
}

/// The turn the items of root `root` are written in (`<kind>:<root id>`).
pub fn item_turn(kind: &str, root: i64) -> String {
    format!("{kind}:{root}")
}

/// A todo's metadata as an object (empty: none).
pub fn metadata(t: &crate::todo::Todo) -> Map<String, Value> {
    t.metadata.as_deref().and_then(|m| serde_json::from_str(m).ok()).unwrap_or_default()
}

/// A todo's metadata value of `key`, as text (None: no such key, or not text).
pub fn meta_text(t: &crate::todo::Todo, key: &str) -> Option<String> {
    metadata(t).get(key)?.as_str().map(str::to_string)
}

/// The strings of an array argument (not an array: none; its items that are not strings
/// left out).
pub fn strings(args: &Value, key: &str) -> Vec<String> {
    args.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// A value as compact JSON with each object's keys in `order`, as a runtime's own JSON writes
/// them (a `Value`'s object sorts them); keys `order` does not name come last, sorted. One
/// list serves every object of a result: each object's keys keep their relative order in it.
pub fn ordered_json(v: &Value, order: &[&str]) -> String {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort_by_key(|k| order.iter().position(|o| o == k).unwrap_or(usize::MAX));
            let fields: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", json!(k), ordered_json(&o[k.as_str()], order))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            format!("[{}]", items.iter().map(|i| ordered_json(i, order)).collect::<Vec<_>>().join(","))
        }
        other => other.to_string(),
    }
}

/// The conversation's rooted lists of `kind` whose root's metadata `key` is `value` (any
/// text value: None), in the order they were made, each with its items in list order.
pub fn rooted(scope: &Scope, conversation: &str, kind: &str, key: &str, value: Option<&str>) -> Vec<Rooted> {
    let todos = crate::store::read::todos(&scope.tenant, crate::ops::Find::Conversation(conversation));
    let mut roots: Vec<&crate::todo::Todo> =
        todos.iter().filter(|t| meta_text(t, key).is_some_and(|v| value.is_none_or(|want| v == want))).collect();
    roots.sort_by_key(|t| t.id);
    roots
        .into_iter()
        .map(|root| {
            let turn = item_turn(kind, root.id);
            let items = todos.iter().filter(|t| t.turn_id.as_deref() == Some(turn.as_str())).cloned().collect();
            Rooted { root: root.clone(), items }
        })
        .collect()
}

/// An object's key order in a Node runtime's answer: its keys, for objects nested under
/// member `within` at any depth ("": anywhere).
pub type JsModel = (&'static str, &'static [&'static str]);

/// A value as JavaScript's `JSON.stringify(value, null, 2)` writes it (a Node runtime's
/// answer; the writer is `formats::to_js_pretty`, the trackers' files'), each object's keys in
/// the order of the first of `models` that applies where it is nested and names them all
/// (none does: sorted), as the runtime's objects were built.
pub fn js_pretty<'v>(v: &'v Value, models: &'v [JsModel]) -> String {
    let order: &crate::formats::KeyOrder<'v> = &|within, object| {
        let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
        let applies = |m: &&JsModel| (m.0.is_empty() || within.contains(&m.0)) && keys.iter().all(|k| m.1.contains(k));
        if let Some((_, model)) = models.iter().find(applies) {
            keys.sort_by_key(|k| model.iter().position(|m| m == k));
        }
        keys
    };
    crate::formats::to_js_pretty_ordered(v, order)
}

/// A runtime's tools as its server lists them: (name, description, input schema as JSON
/// text), for the dialects that serve its schemas verbatim (Task Master's, Backlog.md's).
pub type Listed = [(&'static str, &'static str, &'static str)];

/// Whether two names are the same, in a `const fn`.
const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The description of tool `name` of `listed` (a `const fn`: a tool's static takes it).
pub const fn listed_description(listed: &'static Listed, name: &str) -> &'static str {
    let mut i = 0;
    while i < listed.len() {
        if same_name(listed[i].0, name) {
            return listed[i].1;
        }
        i += 1;
    }
    ""
}

/// The input schema of tool `name` of `listed`, as its text (the order of its properties is
/// the runtime's) and as JSON.
pub fn listed_schema_text(listed: &'static Listed, name: &str) -> &'static str {
    listed.iter().find(|t| t.0 == name).map_or("{\"type\":\"object\"}", |t| t.2)
}

pub fn listed_schema(listed: &'static Listed, name: &str) -> Value {
    serde_json::from_str(listed_schema_text(listed, name)).expect("a listed schema is JSON")
}

/// A NOTICE, for a program reading a tool's JSON through SQL, when the tool's list read
/// stopped at its limits (the JSON keeps the runtime's shape; `todo.call_mcp` says it in the
/// text the model reads instead).
pub fn notice_omitted(what: &str, omitted: Option<(usize, u64)>) {
    if let Some((shown, omitted)) = omitted {
        pgrx::notice!("{what}: {}", pg_todos_core::limits::omitted_note(shown, omitted));
    }
}

/// A NOTICE, for a program reading a tool's JSON through SQL, when a whole-list write kept
/// todos a read of its list does not show (`todo.call_mcp` says it in the text instead).
pub fn notice_kept(what: &str, kept: Option<u64>) {
    if let Some(kept) = kept {
        pgrx::notice!("{what}: {}", pg_todos_core::limits::kept_note(kept));
    }
}

/// A JSON value's type as JavaScript's schema checks name it (zod's for Task Master, and
/// Backlog.md's own): `null`, `boolean`, `number`, `string`, `array` or `object`.
pub fn js_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The statics of the tools a module lists in its `LISTED` table (their descriptions and
/// input schemas), each written with the module's `text`, checked first by `$check(name,
/// args)`, taking what `$accepts` says, with its `Effect` (by the variant's name). Backlog.md's tools are made the same way.
macro_rules! listed_tools {
    (precheck: $check:ident, accepts: $accepts:expr; $($static:ident $name:literal $run:ident $effect:ident),* $(,)?) => {
        $(
            static $static: Tool = Tool {
                name: $name,
                description: super::helpers::listed_description(LISTED, $name),
                input_schema: || super::helpers::listed_schema(LISTED, $name),
                precheck: Some(|args| $check($name, args)),
                run: $run,
                effect: super::dialect::Effect::$effect,
                output_schema: None,
                text: Some(text),
                accepts: $accepts,
            };
        )*
    };
}
pub(crate) use listed_tools;

/// A tool's output schema (MCP's `outputSchema`): an object with these `properties`, the
/// `required` ones in every answer that is no error. Other keys are allowed: a read cut at its
/// limits says so in one of its own (`pg_todos/omitted`).
pub fn output_schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// The schema of an array of objects with these `properties`, each of them there.
pub fn array_of(properties: Value) -> Value {
    let required: Vec<&String> = properties.as_object().map(|p| p.keys().collect()).unwrap_or_default();
    json!({ "type": "array", "items": { "type": "object", "properties": properties, "required": required } })
}
