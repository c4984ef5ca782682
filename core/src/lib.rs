//! pg_todos' pure rules, compiled without pgrx so that the compiler keeps them pure and the
//! tests use them without a database: the writ's grammar, renderer and subject resolver, the
//! status machine, the claim rules, Roo's checklist, whole-list matching, REST routing, the JSON Schema
//! checker, time formats, the row as surfaces read it, the input size limits, the rules every stored row obeys, and the one error type
//! with the policy for errors caught from the database.

pub mod backlog_view;
pub mod checklist;
pub mod claims;
pub mod columns;
pub mod cursor;
pub mod error;
pub mod file_names;
pub mod formats;
pub mod interchange;
pub mod limits;
pub mod model_turns;
pub mod offers;
pub mod printed;
pub mod replace;
pub mod route;
pub mod row_checks;
pub mod schema;
pub mod slug_ids;
pub mod status;
pub mod time;
pub mod todo;
pub mod writ;
