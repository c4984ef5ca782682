//! What a dialect is (`Dialect`: its name, runtime, tools, list shape and description, one
//! value at the end of its file) and what is derived from the registry of them
//! (`super::DIALECTS`): the catalog of tools (`todo.tools()`), the dialects themselves
//! (`todo.dialects()`) and how a tool's name finds its tool.

use pgrx::prelude::*;
use serde_json::{json, Value};

use super::DIALECTS;
use crate::jsonb::Jsonb;
use crate::ops::Scope;

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

/// A dialect: one runtime's or tracker's tools, declared once, at the end of its file, and
/// registered by its module in `super::DIALECTS`. Everything that names dialects is derived
/// from that list: `todo.tools()`, `todo.dialects()`, `todo.list_as`, the MCP server's
/// `--tools` and the docs' table.
pub struct Dialect {
    /// its name: `_meta."pg_todos/dialect"`, `--tools`, `dialect/tool` in `todo.call`
    pub name: &'static str,
    /// earlier names still accepted for it (the seeds' numbers)
    pub aliases: &'static [&'static str],
    /// the runtime or tracker whose tools these are, as its makers name it
    pub runtime: &'static str,
    /// one line: what its tools do
    pub description: &'static str,
    /// its tools, in the order they are listed
    pub tools: &'static [&'static Tool],
    /// how `todo.list_as(name, conversation)` reads a list in its shape; None: it has none
    /// (its own read tools through `todo.call` read lists)
    pub list_as: Option<ListAs>,
}

/// A dialect's list shape: what it is (for `todo.dialects()` and the docs) and how a
/// conversation's list is read in it.
pub struct ListAs {
    pub shape: &'static str,
    pub read: fn(&Scope, &str) -> Value,
}

/// The dialect a name or alias means (`"003"` → the todolist dialect); None for neither.
pub fn dialect(name: &str) -> Option<&'static Dialect> {
    DIALECTS.iter().copied().find(|d| d.name == name || d.aliases.contains(&name))
}

/// Every tool with its dialect's name, in catalog order (the registry's, then each
/// dialect's own).
pub fn catalog() -> impl Iterator<Item = (&'static str, &'static Tool)> {
    DIALECTS.iter().flat_map(|d| d.tools.iter().map(move |t| (d.name, *t)))
}

/// The tool a name means: a bare name (the first of that name in catalog order), or
/// `dialect/name` for one dialect's tool (the dialect by its name or alias), for when two
/// dialects use one name.
pub fn find(name: &str) -> Option<&'static Tool> {
    match name.split_once('/') {
        Some((d, bare)) => dialect(d)?.tools.iter().copied().find(|t| t.name == bare),
        None => catalog().find(|(_, t)| t.name == name).map(|(_, t)| t),
    }
}

/// Every tool as `{"name", "description", "inputSchema", "_meta": {"pg_todos/dialect"}}`
/// (MCP's tool shape; the dialect's name, for servers that expose some dialects only), in
/// catalog order: the dialects in `todo.dialects()`'s order, each dialect's tools in its
/// own. Raises nothing.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn tools() -> Jsonb {
    Jsonb(Value::Array(
        catalog()
            .map(|(dialect, t)| {
                json!({ "name": t.name, "description": t.description, "inputSchema": (t.input_schema)(),
                        "_meta": { "pg_todos/dialect": dialect } })
            })
            .collect(),
    ))
}

/// Every dialect, one row each in catalog order: its name (what `pg_todos mcp --tools`,
/// `/mcp?tools=` and `todo.call('dialect/tool', …)` take), the earlier names still accepted
/// for it, the runtime or tracker whose tools it speaks, what its tools do, their names, and
/// the shape `todo.list_as(name, …)` reads a list in (NULL: none; its own read tools do).
/// Raises nothing.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
#[allow(clippy::type_complexity)] // pgrx reads the columns' names from this signature
fn dialects() -> TableIterator<
    'static,
    (
        name!(name, String),
        name!(aliases, Vec<String>),
        name!(runtime, String),
        name!(description, String),
        name!(tools, Vec<String>),
        name!(list_shape, Option<String>),
    ),
> {
    TableIterator::new(DIALECTS.iter().map(|d| {
        (
            d.name.to_string(),
            d.aliases.iter().map(|a| a.to_string()).collect(),
            d.runtime.to_string(),
            d.description.to_string(),
            d.tools.iter().map(|t| t.name.to_string()).collect(),
            d.list_as.as_ref().map(|l| l.shape.to_string()),
        )
    }))
}
