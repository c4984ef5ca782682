//! What is derived from the registry of dialects (`super::DIALECTS`; what a dialect is:
//! `super::dialect`): the catalog of tools (`todo.tools()`), the dialects themselves
//! (`todo.dialects()`) and how a tool's name finds its tool.

use pgrx::prelude::*;
use serde_json::{json, Value};

use super::dialect::{Dialect, Tool};
use super::DIALECTS;
use crate::jsonb::Jsonb;

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

/// Every tool as MCP lists it: `{"name", "description", "inputSchema", "outputSchema"?,
/// "annotations", "_meta": {"pg_todos/dialect"}}` (the dialect's name, for servers that
/// expose some dialects only), in catalog order: the dialects in `todo.dialects()`'s order,
/// each dialect's tools in its own. `annotations` are MCP's hints (`readOnlyHint`,
/// `destructiveHint`, `idempotentHint`, `openWorldHint`: `Effect::annotations`);
/// `outputSchema` is there for the tools whose result is JSON of one known shape. Raises
/// nothing.
#[pg_extern(immutable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn tools() -> Jsonb {
    Jsonb(Value::Array(catalog().map(|(dialect, t)| listed(dialect, t)).collect()))
}

/// One tool as `todo.tools()` lists it.
fn listed(dialect: &str, t: &Tool) -> Value {
    let mut tool = json!({ "name": t.name, "description": t.description, "inputSchema": (t.input_schema)() });
    if let Some(schema) = t.output_schema {
        tool["outputSchema"] = schema();
    }
    tool["annotations"] = t.effect.annotations();
    tool["_meta"] = json!({ "pg_todos/dialect": dialect });
    tool
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
