//! The tool dialects: each runtime's or tracker's tools, one module each, speaking its JSON
//! and words exactly; changes are operations (`ops`), run by `runner::attempt` (one per
//! call). Each module ends in one value, its `DIALECT` (`catalog::Dialect`: name, runtime,
//! tools, list shape, description), and is registered by one line of `registry!` below.
//! Everything else that names dialects is derived from that list:
//! - `catalog`: the `Dialect` and `Tool` types, `todo.tools()`, `todo.dialects()`, finding a
//!   tool by name;
//! - `call`: `todo.call` and `todo.call_mcp` (and their text twins), which run a tool;
//! - `list_as`: `todo.list_as`, a list in a dialect's shape;
//! - `helpers`: what the dialects' modules share.

mod call;
mod catalog;
mod helpers;
mod list_as;

pub use call::{mcp_result, notice_kept, notice_omitted};
pub use catalog::{catalog, dialect, find, Answer, Dialect, ListAs, Tool};
pub use helpers::*;

/// Declares each dialect's module and registers its `DIALECT`, in catalog order: the order
/// `todo.tools()` lists tools in, and so which dialect's tool a bare name shared by several
/// means (the first's).
macro_rules! registry {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*

        /// Every dialect, in catalog order.
        pub static DIALECTS: &[&Dialect] = &[$(&$module::DIALECT),*];
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
