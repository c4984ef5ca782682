//! The tool dialects: each runtime's or tracker's tools, one module each, speaking its JSON
//! and words exactly; changes are operations (`ops`), run by `runner::attempt` (one per
//! call). Each module ends in one value, its `DIALECT` (`dialect::Dialect`: name, runtime,
//! tools, list shape, description), and is registered by one line of `registry!` below.
//! Everything else that names dialects is derived from that list:
//! - `dialect`: the `Dialect` and `Tool` types, which every dialect's module reads;
//! - `catalog`: `todo.tools()`, `todo.dialects()`, finding a tool by name;
//! - `call`: `todo.call` and `todo.call_mcp` (and their text twins), which run a tool;
//! - `list_as`: `todo.list_as`, a list in a dialect's shape;
//! - `helpers`: what the dialects' modules share.
//!
//! The imports go one way: `call` and `list_as` read `catalog`, which reads the registry
//! (`DIALECTS`); the registry reads the dialects; the dialects read `dialect` and `helpers`, which read
//! neither the registry nor any dialect. A dialect reads no other dialect.

mod call;
mod catalog;
pub mod dialect;
pub mod helpers;
mod list_as;
mod waits;

/// Declares each dialect's module and registers its `DIALECT`, in catalog order: the order
/// `todo.tools()` lists tools in, and so which dialect's tool a bare name shared by several
/// means (the first's).
macro_rules! registry {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every dialect, in catalog order.
        pub static DIALECTS: &[&dialect::Dialect] = &[$(&$module::DIALECT),*];
    };
}

registry! {
    plan,
    opencode,
    todolist,
    tasks,
    coord,
    claude_tasks,
    claude_todowrite,
    codex,
    gemini,
    cursor,
    roo,
    copilot,
    langchain,
    openhands,
    qwen,
    goose,
    hermes,
    crush,
    kimi,
    vibe,
    zed,
    continue_cli,
    codebuff,
    pydantic_ai,
    droid,
    mastra,
    agentscope,
    kiro,
    beads,
    taskmaster,
    backlog,
}
