//! The backlog dialect: Backlog.md's task tools (`task_create`, `task_list`, `task_search`,
//! `task_view`, `task_edit`, `task_complete`, `task_archive`), over the store. The project is
//! the list in context (`pg_todos mcp` started in a directory: `project:<path>`, whose path
//! the results print the files under). A task is a todo of the list, its id (`TASK-3`, a
//! subtask `TASK-3.1`) the todo's caller id (a todo written through another dialect shows
//! `TASK-<store id>`, or its own number); its acceptance criteria and definition of done are
//! `todo.checklist_items`, its comments `todo.comments` with their author, its plan, notes
//! and final summary (the outcome) their columns; what only Backlog.md has (ordinal,
//! milestone, references, documentation, modified files, several assignees, the file's name)
//! is kept in the metadata. Statuses: `To Do` pending, `In Progress` (pg_todos' claim for the
//! agent in context), `Done` completed, `Draft` deferred. `task_complete` moves a Done task
//! off the list (archived, as Backlog.md moves it to `completed/`); `task_archive` archives
//! one (a task that was not done is canceled, its word kept). Every write goes through
//! `ops::records`, as `pg_todos import` does, so the tools and the files agree. Results are
//! Backlog.md's plain texts (`core::backlog_view`), refusals its words, with nothing written.

use serde_json::{json, Value};

use super::dialect::Tool;
use super::helpers::listed_tools;
use crate::ops::Scope;

mod edit;
mod listed;
mod project;
mod read;
mod validation;
mod write;

use edit::task_edit;
use listed::LISTED;
use project::*;
use read::{task_list, task_search, task_view};
use validation::precheck;
use write::{task_archive, task_complete, task_create};

listed_tools! {
    precheck: precheck, accepts: Some(|| json!({"type": "object"}));
    TASK_CREATE "task_create" task_create Adds,
    TASK_LIST "task_list" task_list Reads,
    TASK_SEARCH "task_search" task_search Reads,
    TASK_EDIT "task_edit" task_edit Changes,
    TASK_VIEW "task_view" task_view Reads,
    TASK_ARCHIVE "task_archive" task_archive Replaces,
    TASK_COMPLETE "task_complete" task_complete Replaces,
}

/// A project's tasks as task_view prints each, in list order (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    let scope = Scope { conversation: Some(conv.to_string()), ..scope.clone() };
    let Ok(p) = Project::read(&scope) else { return json!([]) };
    (0..p.tasks.len()).filter(|i| !Project::in_archive(&p.tasks[*i].1)).map(|i| json!(p.text_of(i, true))).collect()
}

/// The backlog dialect.
pub static DIALECT: super::dialect::Dialect = super::dialect::Dialect {
    name: "backlog",
    aliases: &[],
    runtime: "Backlog.md",
    description: "a task tracker's tools: tasks with acceptance criteria, definition of done, plan, notes and comments",
    tools: &[&TASK_CREATE, &TASK_LIST, &TASK_SEARCH, &TASK_EDIT, &TASK_VIEW, &TASK_ARCHIVE, &TASK_COMPLETE],
    list_as: Some(super::dialect::ListAs {
        shape: "its tasks as task_view prints each: `[\"File: …\\n\\nTask TASK-1 - …\"]`",
        read: list_as,
    }),
};
