//! The triggers of the extension's tables, one file each, for the extension's functions and
//! plain SQL alike:
//! - `todos_write`: `BEFORE INSERT OR UPDATE ON todo.todos FOR EACH ROW`: ids, the lifecycle,
//!   the stamps, the claim guard, the row rules;
//! - `todos_events`: `AFTER INSERT OR UPDATE OR DELETE ON todo.todos FOR EACH ROW`: the event log;
//! - `dependencies`: `BEFORE INSERT ON todo.dependencies FOR EACH ROW`: no cycle of waits;
//! - `registry_caches`: `AFTER … ON todo.tenants` and `todo.roles` `FOR EACH STATEMENT`: the
//!   backends' caches of tenants and roles forget what changed;
//! - `row`: what they share, reading and writing the row a trigger fired for.
//!
//! The trigger functions are no one's API: `sql/bootstrap.sql` creates them in the
//! extension's private schema `todo_internal` (no role but the owner may use it; a trigger
//! fires whatever its caller's privileges), beside their triggers, hence `sql = false`.

mod dependencies;
mod registry_caches;
pub mod row;
mod todos_events;
mod todos_write;
