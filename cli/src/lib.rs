//! The `pg_todos` command: the services that speak to a database with the pg_todos extension.
//!
//! - `pg_todos mcp`: an MCP server over stdio (`mcp`), also installed as `pg_todos_mcp`.
//! - `pg_todos serve`: the HTTP service and the board (`http`).
//! - `pg_todos import`, `pg_todos export`: a tracker's files into a list and back (`files`).
//! - `pg_todos writ`: `/todo` lines run on a list from a shell (`writ`).
//! - `command`: what the one-shot commands (`import`, `export`, `writ`) share.
//! - `metrics`: what `pg_todos serve --metrics-listen` serves, in Prometheus's text format.

pub mod command;
pub mod db;
pub mod files;
pub mod http;
pub mod log;
pub mod mcp;
pub mod metrics;
pub mod tls;
pub mod writ;
