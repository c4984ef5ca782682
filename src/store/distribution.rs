//! A store spread over Citus workers (`todo.distribute()`). The extension's functions run on
//! the coordinator and Citus sends each of their statements to the tenant's worker, where the
//! row triggers and row-level security run in another backend: what they read from this one
//! must travel with the transaction. Citus carries `SET LOCAL` statements to the workers (not
//! `set_config()` and not session `SET`s), so before each statement the extension runs,
//! `sync_context` re-states the context (tenant, conversation, agent, turn) and whether a
//! claim statement is running, as `SET LOCAL`s, whenever they differ from what the workers
//! were last told in this (sub)transaction. On one server none of this runs.

use std::cell::RefCell;

use pgrx::prelude::*;

use super::catalog::local_xact;
use crate::session;

thread_local! {
    /// Whether the store was found distributed, and in which transaction (a "no" is asked
    /// again in the next transaction; a "yes" is kept).
    static DISTRIBUTED: RefCell<Option<(pg_sys::LocalTransactionId, bool)>> = const { RefCell::new(None) };
    /// What the workers were last told, and in which (sub)transaction.
    static TOLD: RefCell<Option<Told>> = const { RefCell::new(None) };
}

#[derive(Clone)]
struct Told {
    lxid: pg_sys::LocalTransactionId,
    subxact: pg_sys::SubTransactionId,
    values: [String; 5],
}

/// Whether `todo.todos` is a Citus distributed table (in this database). Without Citus, a
/// catalog lookup by name; with Citus, one query per transaction until the answer is yes.
pub fn distributed() -> bool {
    let lxid = local_xact();
    if let Some((at, yes)) = DISTRIBUTED.with(|d| *d.borrow()) {
        if yes || at == lxid {
            return yes;
        }
    }
    // SAFETY: a catalog lookup by name (cached); InvalidOid when Citus is not installed
    let citus = unsafe {
        pg_sys::get_relname_relid(c"pg_dist_partition".as_ptr(), pg_sys::PG_CATALOG_NAMESPACE.into())
            != pg_sys::InvalidOid
    };
    let yes = citus
        && Spi::get_one::<bool>(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = 'todo.todos'::pg_catalog.regclass)",
        )
        .ok()
        .flatten()
        .unwrap_or(false);
    DISTRIBUTED.with(|d| *d.borrow_mut() = Some((lxid, yes)));
    yes
}

/// Tells the workers the context and the claim flag (see the module's comment) when they
/// differ from what they were last told in this (sub)transaction. Does nothing on one server.
pub fn sync_context() {
    if !distributed() || citus_internal() {
        return;
    }
    // SAFETY: reads this backend's current subtransaction id.
    let subxact = unsafe { pg_sys::GetCurrentSubTransactionId() };
    let granting = if crate::session::granting() { "on" } else { "off" };
    let values = [
        super::scope::tenant_if_set().unwrap_or_default(),
        session::conversation().unwrap_or_default(),
        session::agent().unwrap_or_default(),
        session::turn().unwrap_or_default(),
        granting.to_string(),
    ];
    let now = Told { lxid: local_xact(), subxact, values };
    let before = TOLD.with(|t| t.borrow().clone());
    let fresh = before.as_ref().is_none_or(|b| b.lxid != now.lxid || b.subxact != now.subxact);
    let mut sets = String::from("SET LOCAL citus.propagate_set_commands = 'local'; ");
    for (i, name) in ["todo.tenant", "todo.conversation", "todo.agent", "todo.turn", "todo.granting"].iter().enumerate()
    {
        if fresh || before.as_ref().is_some_and(|b| b.values[i] != now.values[i]) {
            sets.push_str(&format!("SET LOCAL {name} = {}; ", pgrx::spi::quote_literal(&now.values[i])));
        }
    }
    // Inside a DO block: Citus sends a SET LOCAL to the workers only in what it takes for a
    // multi-statement transaction, which a DO block is (a call in an implicit transaction,
    // e.g. `SELECT todo.todo_writ(…)` on its own, is not)
    let mut tag = String::from("$pg_todos$");
    while sets.contains(&tag) {
        tag.insert(tag.len() - 1, '_');
    }
    let block = format!("DO {tag} BEGIN {sets}END {tag}");
    Spi::connect_mut(|client| client.update(&block, None, &[]).map(|_| ()))
        .unwrap_or_else(|e| crate::errors::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("pg_todos: {e}"), ""));
    TOLD.with(|t| *t.borrow_mut() = Some(now));
}

/// Whether a read must run in a subtransaction for the context to reach the worker: on a
/// distributed store, outside a transaction block. Citus opens a remote transaction block
/// (which carries the `SET LOCAL`s) for a read only when `IsTransactionBlock()`, which an
/// implicit transaction (`SELECT todo.todo_writ('/todo list') FROM todo.set_context(…)` on
/// its own) is not and an internal subtransaction is. Writes always get a block (Citus takes
/// a function call for a multi-statement transaction).
pub fn read_needs_block() -> bool {
    // SAFETY: reads this backend's transaction state
    distributed() && !unsafe { pg_sys::IsTransactionBlock() } && !citus_internal()
}

/// Whether this backend serves a Citus coordinator's connection (on a worker): the context
/// arrived with the statement, and there is no one further to tell.
fn citus_internal() -> bool {
    // SAFETY: reads a setting every backend has
    let name = unsafe { pg_sys::GetConfigOption(c"application_name".as_ptr(), true, false) };
    // SAFETY: a NUL-terminated setting value, or NULL
    !name.is_null() && unsafe { std::ffi::CStr::from_ptr(name) }.to_bytes().starts_with(b"citus_internal")
}
