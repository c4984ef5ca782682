//! The beads dialect: the tools of beads-mcp (the `bd` issue tracker's MCP server), over the
//! store. An issue is a todo of the list: its beads id the todo's caller id (`bd-` and a
//! base36 hash, as beads makes them; a todo written through a dialect without caller ids
//! shows its store id), its title the subject, `description`, `design` the plan, `acceptance`
//! the completion criteria, `notes`, `labels`, `issue_type`, the assignee the owner, its
//! `external_ref` in its metadata. Statuses: `open` pending, `in_progress`, `blocked`,
//! `deferred`, `closed` completed (a canceled todo is closed too). Priorities 0–4: 0 and 1 are
//! high, 2 medium, 3 and 4 low, the number itself kept in the metadata while it agrees. A
//! `blocks` dependency is a real dependency (`todo.dependencies`); the other kinds are kept
//! as links in the metadata. `claim` is pg_todos' fenced claim, with the agent as assignee.
//! `workspace_root` names the list: `project:<path>`, the list `pg_todos mcp` started in that
//! directory uses; without it, the list in context. Results are beads-mcp's, compact JSON in
//! its models' key order (`{"result": …}` as structured content where FastMCP wraps them);
//! refusals are its texts (`Error calling tool '<tool>': …`), with nothing written.

mod catalogs;
mod issues;
mod read;
mod table;
mod write;

use issues::*;
use table::{
    BLOCKED, CLAIM, CLOSE, CONTEXT, CREATE, DEP, DISCOVER_TOOLS, GET_TOOL_INFO, LIST, READY, REOPEN, SHOW, STATS,
    UPDATE,
};

/// The beads dialect.
pub static DIALECT: super::dialect::Dialect = super::dialect::Dialect {
    name: "beads",
    aliases: &[],
    runtime: "beads (beads-mcp)",
    description: "an issue tracker's tools: ready, claim, dependencies, blocked, stats",
    tools: &[
        &DISCOVER_TOOLS,
        &GET_TOOL_INFO,
        &CONTEXT,
        &READY,
        &LIST,
        &SHOW,
        &CREATE,
        &CLAIM,
        &UPDATE,
        &CLOSE,
        &REOPEN,
        &DEP,
        &STATS,
        &BLOCKED,
    ],
    list_as: Some(super::dialect::ListAs {
        shape: "its issues as `show` gives each: `[{id, title, …, dependencies, dependents}]`",
        read: list_as,
    }),
};
