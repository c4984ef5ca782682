//! The `pg_todos` command: the services that speak to a database with the pg_todos extension.
//!
//! - `pg_todos mcp`: an MCP server over stdio (`mcp`), also installed as `pg_todos_mcp`.
//! - `pg_todos serve`: the HTTP service and the board (`http`).

pub mod db;
pub mod http;
pub mod log;
pub mod mcp;
pub mod tls;
