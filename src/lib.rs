//! pg_todos: the durable todo store for AI agents, as a PostgreSQL extension.
//!
//! Layers, top to bottom:
//! - `surfaces`: each dialect only parses, calls operations and renders — the writ, REST,
//!   the tool dialects (`todo.tools()` / `todo.call()`) and the SQL functions;
//! - `runner`: the one wrapper around every writing call (subtransactions, the policy for
//!   caught errors, one notification per channel at the end);
//! - `ops`: every change, written once (locks, rules, writes, touched todos);
//! - `store`: all SQL against the tables, split by concern;
//! - `session`: the leaf every layer reads — the settings (who is calling, for this
//!   transaction), the claim flag, the subtransaction mechanism;
//! - beside them: `triggers` (the row triggers, for plain SQL too: an entry point, like the
//!   surfaces; `utility`, the hook that keeps table locks from other roles), `limits` (the input size limits), `time`, `tupdesc` (a relation's columns),
//!   `errors` (raising with real SQLSTATEs).
//!
//! Every import points down (surfaces, triggers → runner → ops → store → session → core);
//! `bin/lint` checks it.
//!
//! The pure rules (grammar, renderer, status machine, claim rules, replace matching,
//! routing, schema checking, the row rules, the error type and policy) are the `pg_todos_core` crate,
//! re-exported here under their own names. The schema itself is `sql/bootstrap.sql`.

use pgrx::prelude::*;

pub use pg_todos_core::open_statuses;
pub use pg_todos_core::{
    backlog_view, checklist, claims, cursor, error, file_names, formats, interchange, offers, replace, route,
    row_checks, schema, slug_ids, status, todo, writ,
};

pub mod errors;
pub mod jsonb;
pub mod limits;
pub mod ops;
pub mod runner;
pub mod session;
pub mod store;
pub mod surfaces;
pub mod time;
pub mod triggers;
pub mod tupdesc;
pub mod utility;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!(
    "../sql/bootstrap.sql",
    name = "bootstrap",
    requires = [
        surfaces::context::current_tenant,
        surfaces::context::current_conversation,
        surfaces::context::current_agent,
        surfaces::context::current_turn,
    ]
);

extension_sql_file!("../sql/verify.sql", name = "verify", requires = ["bootstrap"]);
extension_sql_file!("../sql/service.sql", name = "service", requires = ["bootstrap"]);
extension_sql_file!("../sql/distribute.sql", name = "distribute", requires = ["bootstrap", "service"]);
extension_sql_file!("../sql/comments.sql", name = "comments", finalize);
extension_sql_file!("../sql/privileges.sql", name = "privileges", requires = ["comments"]);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    session::init();
    limits::init();
    store::ids::init();
    utility::init();
    // SAFETY: registers plain functions that only touch the library's thread-locals.
    unsafe {
        pg_sys::CacheRegisterRelcacheCallback(Some(relation_changed), pg_sys::Datum::from(0));
        for cache in [pg_sys::SysCacheIdentifier::AUTHOID, pg_sys::SysCacheIdentifier::AUTHMEMROLEMEM] {
            pg_sys::CacheRegisterSyscacheCallback(cache as i32, Some(role_changed), pg_sys::Datum::from(0));
        }
    }
}

/// A role (`pg_authid`) or a membership (`pg_auth_members`) changed: who is bound to which
/// tenant is looked up again.
unsafe extern "C-unwind" fn role_changed(_arg: pg_sys::Datum, _cache: i32, _hash: u32) {
    store::roles::memberships_changed();
}

/// The library's one relation cache callback: a backend has room for only ten
/// (`MAX_RELCACHE_CALLBACKS`), and Citus takes several. Each module forgets what it keeps
/// about the relation that changed (`relid`; InvalidOid: every relation).
unsafe extern "C-unwind" fn relation_changed(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    store::ids::relation_changed(relid);
    store::id_ranges::relation_changed(relid);
    store::roles::relation_changed(relid);
    store::events::relation_changed(relid);
    store::read::relation_changed(relid);
    triggers::row::relation_changed(relid);
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    include!("../pgrx-tests/tests.rs");
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
