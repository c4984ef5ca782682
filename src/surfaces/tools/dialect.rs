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
    /// what it does to the store: whether it may write (then it runs through
    /// `runner::attempt`), and MCP's annotations (`Effect::annotations`)
    pub effect: Effect,
    /// the JSON Schema of its output object, for the tools whose result is JSON of one known
    /// shape (MCP's `outputSchema`; a client checks each result that is no error against it)
    pub output_schema: Option<fn() -> Value>,
    /// the text the model reads for an output (or error) object, for the runtimes whose
    /// tools show the model words rather than the object; None: the object's JSON text
    pub text: Option<fn(&Value) -> String>,
    /// the schema arguments are checked against when it differs from the one listed (a
    /// runtime whose listed schema is stricter than what it accepts)
    pub accepts: Option<fn() -> Value>,
}

impl Tool {
    /// Whether it may write.
    pub fn writes(&self) -> bool {
        !matches!(self.effect, Effect::Reads)
    }
}

/// What a tool does to the store, as MCP's tool annotations say it to a host (which may ask a
/// person before a destructive call, or retry an idempotent one): `readOnlyHint`,
/// `destructiveHint`, `idempotentHint`; `openWorldHint` is false for every tool (each acts on
/// the store alone). A tool that does several things by a `command` argument has the effect of
/// its most far-reaching one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// reads only
    Reads,
    /// adds (a todo, a subtask, a note) or takes the next ready todo: each call does it again,
    /// and nothing there is overwritten
    Adds,
    /// sets a mark a repeat leaves as it is, overwriting nothing: a claim of a named todo, a
    /// dependency, a lease renewed, the current tag
    Marks,
    /// overwrites or removes what is there, the same way again on a repeat: a whole-list
    /// write, a status or a field set, a todo removed, a claim released
    Replaces,
    /// overwrites or removes, and a repeat changes more (commands that add and remove)
    Changes,
}

impl Effect {
    /// MCP's `annotations` object of a tool with this effect.
    pub fn annotations(self) -> Value {
        let (read_only, destructive, idempotent) = match self {
            Effect::Reads => (true, false, true),
            Effect::Adds => (false, false, false),
            Effect::Marks => (false, false, true),
            Effect::Replaces => (false, true, true),
            Effect::Changes => (false, true, false),
        };
        serde_json::json!({"readOnlyHint": read_only, "destructiveHint": destructive,
                           "idempotentHint": idempotent, "openWorldHint": false})
    }
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
