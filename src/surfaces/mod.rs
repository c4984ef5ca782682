//! The surfaces: each maps one dialect onto the operations, and only parses, calls
//! operations (writes through `runner::attempt`, inside `runner::call`) and renders.
//! - `writ`: the `/todo` writ, the open block and preamble (`todo.todo_writ`, …);
//! - `rest`: the `/v1/todos` routes as one function (`todo.rest`);
//! - `board`: the board's changes and detail read (`todo.board_act`, `todo.board_todo`);
//! - `tools`: every tool dialect in one registry (`todo.tools()`, `todo.call()`), and the
//!   dialects' own SQL functions (`todo.acp_plan`, `todo.export_tasks`, …);
//! - `functions`: the coordination operations as SQL functions (`todo.claim`, …);
//! - `context`: `todo.set_context` and `todo.current_tenant()` and its kin.
//!
//! The error a surface answers with comes from one table (`error::Error`: SQLSTATE, tool
//! code, HTTP status); a surface adds only its own words.

pub mod board;
pub mod context;
pub mod files;
pub mod functions;
pub mod rest;
pub mod tools;
pub mod writ;
