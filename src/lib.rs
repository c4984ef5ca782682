//! pg_todos: the durable todo store for AI agents, as a PostgreSQL extension.
//!
//! Pure modules (no pgrx): `status`, `writ::parse`, `writ::render`, `writ::resolve`.
//! Database modules: `context` (who is calling), `store` (all SQL against the tables),
//! `triggers` (the row trigger), `subxact` (per-command atomicity), `errors` (SQLSTATEs).
//! Surfaces: `writ` (seed 000). The schema itself is `sql/bootstrap.sql`.
//! The schema itself is `sql/bootstrap.sql`.

use pgrx::prelude::*;

pub mod claims;
pub mod context;
pub mod coord;
pub mod errors;
pub mod model;
pub mod rest;
pub mod status;
pub mod store;
pub mod subxact;
pub mod tools;
pub mod triggers;
pub mod writ;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!(
    "../sql/bootstrap.sql",
    name = "bootstrap",
    requires = [
        context::current_tenant,
        context::current_conversation,
        context::current_agent,
        context::current_turn,
        triggers::todos_before_write,
        triggers::dependencies_before_insert,
    ]
);

extension_sql_file!("../sql/verify.sql", name = "verify", requires = ["bootstrap"]);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    context::init();
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
