//! The operations: every change to a todo, written once, under every surface (the writ,
//! REST, each tool dialect, the SQL functions, and through them the MCP server).
//!
//! Each operation takes the scope (tenant, conversation, agent, turn) and typed input, takes
//! its locks in the one order `store::locks` documents, asks the pure rules (`status`,
//! `claims`, `replace`), writes through `store`, records the todos it touched for the
//! call's notification (`session::touched`) and returns a typed outcome or an `Error`.
//! Surfaces run each writing operation through `runner::attempt` and render the outcome or
//! the error in their own words.
//!
//! - `single`: add (a subtask too), change (status and columns; on what the caller read),
//!   archive and unarchive, delete;
//! - `whole_list`: replace a conversation's whole list;
//! - `claiming`: claim, heartbeat, release, finish; a person taking a claim back;
//! - `dependencies`: block, unblock;
//! - `lists`: make a list before it holds a todo;
//! - reads that surfaces share: `list` and `ready` (below).

pub mod annotations;
pub mod claiming;
pub mod dependencies;
pub mod lists;
pub mod moving;
pub mod records;
pub mod single;
pub mod waits;
pub mod whole_list;

use crate::error::Error;
use crate::session;
use crate::store;
use crate::writ::render::Row;

pub use crate::store::read::Find;

/// Who a call acts for, from the transaction's settings (never from the model's input).
#[derive(Clone, Debug)]
pub struct Scope {
    pub tenant: String,
    /// None: tenant-wide
    pub conversation: Option<String>,
    pub agent: Option<String>,
    pub turn: Option<String>,
}

impl Scope {
    /// The context's scope. Errors: 22023 when no tenant is set; 42704 when it is not
    /// registered.
    pub fn from_context() -> Scope {
        let tenant = store::scope::tenant();
        store::ids::require_registered(&tenant);
        Scope { tenant, conversation: session::conversation(), agent: store::scope::agent(), turn: session::turn() }
    }

    /// The context's tenant, for a read of `conversation` (None: the tenant-wide pool, or the
    /// whole tenant), without the context's conversation, agent and turn. Errors as
    /// `from_context`: every read finds its tenant the way every write does.
    pub fn reading(conversation: Option<&str>) -> Scope {
        let tenant = store::scope::tenant();
        store::ids::require_registered(&tenant);
        Scope { tenant, conversation: conversation.map(str::to_string), agent: None, turn: None }
    }

    pub fn conv(&self) -> Option<&str> {
        self.conversation.as_deref()
    }

    /// The writ's scope: the conversation's todos plus the tenant-wide pool.
    pub fn in_scope(&self) -> Find<'_> {
        Find::InScope(self.conv())
    }
}

/// Locks todo `id` (one `find` finds) for a change — `FOR UPDATE` when it will be deleted —
/// and returns it with its claim, or `NotFound`.
pub fn lock_one(scope: &Scope, find: Find<'_>, id: i64, delete: bool) -> Result<store::read::Locked, Error> {
    store::read::lock(&scope.tenant, find, &[id], delete).pop().ok_or(Error::NotFound { id })
}

/// The todos in scope (the conversation plus the pool), in position order; only the open
/// ones unless `all`; with their marks (claim, blockers, progress).
pub fn list(scope: &Scope, all: bool) -> Vec<Row> {
    store::read::scope_rows(&scope.tenant, scope.conv(), all)
}

/// The ready queue in scope, in claim order, at most `limit`.
pub fn ready(scope: &Scope, limit: i64) -> Vec<Row> {
    store::read::ready(&scope.tenant, scope.conv(), limit)
}
