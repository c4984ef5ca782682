//! What a dialect is (`Dialect`: its name, runtime, tools, list shape and description, one
//! value at the end of its file) and what its tools are (`Tool`, `Answer`). Every dialect's
//! module reads these types; this module reads no dialect and not the registry, so that the
//! imports go one way: catalog and call → registry → dialects → these types and `helpers`.

use serde_json::Value;

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
/// registered by its module in the registry (`DIALECTS`, `mod.rs`). Everything that names dialects is derived
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
