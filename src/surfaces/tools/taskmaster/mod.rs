//! The taskmaster dialect: Task Master's (task-master-ai's) MCP tools that need no model,
//! over the store. A project (`projectRoot`) is a set of lists, one per tag: the `master`
//! tag the list `project:<root>` (the list beads' `workspace_root` and `pg_todos mcp` started
//! in that directory use), another tag `project:<root>#<tag>`. A task is a todo of its tag's
//! list: its Task Master id (`5`) the todo's caller id (a todo written through a dialect
//! without caller ids shows its store id), its title the subject, `description`, `details`
//! the plan, `testStrategy` the completion criteria, `priority`; a subtask (`5.2`) a todo
//! of the same list under its task (`parent_id`), its caller id the dotted id. Dependencies
//! are real ones (`todo.dependencies`). Statuses: `pending`, `in-progress`, `done`
//! (completed), `cancelled`, `deferred`, `blocked` and `review`, each its own. Setting
//! `in-progress` is pg_todos' fenced claim for the agent in context; another agent's live
//! claim refuses it, and `next_task` skips a task another agent holds. A tag's description
//! and the project's current tag (`use_tag`) are the lists' properties. Results are Task
//! Master's envelope, `{data, version, tag}`, as `JSON.stringify(…, null, 2)` writes it;
//! refusals are its `Error: …` texts, with nothing written. The tools that call a model
//! answer that this server runs none.

use serde_json::{json, Value};

use super::dialect::{Answer, Tool};
use super::helpers::listed_tools;
use crate::ops::Scope;

mod dependency_tools;
mod listed;
mod read;
mod tags;
mod tasks;
mod write;
mod zod;

use dependency_tools::{add_dependency, fix_dependencies, remove_dependency, validate_dependencies};
use listed::LISTED;
use read::{get_task, get_tasks, next_task};
use tags::{add_tag, copy_tag, delete_tag, list_tags, rename_tag, use_tag};
use tasks::*;
use write::{add_subtask, add_task, remove_task, set_task_status, update_subtask};
use zod::zod_check;

macro_rules! model_tools {
    ($($static:ident $name:literal $run:ident),* $(,)?) => {
        $(
            fn $run(scope: &Scope, args: &Value) -> Answer {
                model_tool(scope, args, $name)
            }
            static $static: Tool = Tool {
                name: $name,
                description: super::helpers::listed_description(LISTED, $name),
                input_schema: || super::helpers::listed_schema(LISTED, $name),
                precheck: None,
                run: $run,
                effect: super::dialect::Effect::Reads,
                output_schema: None,
                text: Some(text),
                accepts: Some(|| json!({"type": "object"})),
            };
        )*
    };
}

listed_tools! {
    precheck: zod_check, accepts: None;
    GET_TASKS "get_tasks" get_tasks Reads,
    GET_TASK "get_task" get_task Reads,
    NEXT_TASK "next_task" next_task Reads,
    SET_TASK_STATUS "set_task_status" set_task_status Replaces,
    ADD_TASK "add_task" add_task Adds,
    ADD_SUBTASK "add_subtask" add_subtask Adds,
    UPDATE_SUBTASK "update_subtask" update_subtask Adds,
    REMOVE_TASK "remove_task" remove_task Replaces,
    ADD_DEPENDENCY "add_dependency" add_dependency Marks,
    REMOVE_DEPENDENCY "remove_dependency" remove_dependency Replaces,
    VALIDATE_DEPENDENCIES "validate_dependencies" validate_dependencies Reads,
    FIX_DEPENDENCIES "fix_dependencies" fix_dependencies Reads,
    LIST_TAGS "list_tags" list_tags Reads,
    ADD_TAG "add_tag" add_tag Adds,
    DELETE_TAG "delete_tag" delete_tag Replaces,
    USE_TAG "use_tag" use_tag Marks,
    RENAME_TAG "rename_tag" rename_tag Replaces,
    COPY_TAG "copy_tag" copy_tag Adds,
}

model_tools! {
    PARSE_PRD "parse_prd" parse_prd,
    EXPAND_TASK "expand_task" expand_task,
    EXPAND_ALL "expand_all" expand_all,
    ANALYZE "analyze_project_complexity" analyze_project_complexity,
    UPDATE "update" update,
    UPDATE_TASK "update_task" update_task,
    SCOPE_UP "scope_up_task" scope_up_task,
    SCOPE_DOWN "scope_down_task" scope_down_task,
    RESEARCH "research" research,
}

/// A project's tasks (of the list's tag) as `get_tasks` gives them with their subtasks.
fn list_as(scope: &Scope, conv: &str) -> Value {
    let scope = Scope { conversation: Some(conv.to_string()), ..scope.clone() };
    let tasks = Tasks::read(&scope);
    tasks.tops.iter().map(|i| tasks.task(&tasks.todos[*i], true)).collect()
}

/// The taskmaster dialect.
pub static DIALECT: super::dialect::Dialect = super::dialect::Dialect {
    name: "taskmaster",
    aliases: &[],
    runtime: "Task Master (task-master-ai)",
    description: "a task tracker's tools: tasks and dotted subtasks, next task, statuses, dependencies, tags",
    tools: &[
        &GET_TASKS,
        &GET_TASK,
        &NEXT_TASK,
        &SET_TASK_STATUS,
        &ADD_TASK,
        &ADD_SUBTASK,
        &UPDATE_SUBTASK,
        &REMOVE_TASK,
        &ADD_DEPENDENCY,
        &REMOVE_DEPENDENCY,
        &VALIDATE_DEPENDENCIES,
        &FIX_DEPENDENCIES,
        &LIST_TAGS,
        &ADD_TAG,
        &DELETE_TAG,
        &USE_TAG,
        &RENAME_TAG,
        &COPY_TAG,
        &PARSE_PRD,
        &EXPAND_TASK,
        &EXPAND_ALL,
        &ANALYZE,
        &UPDATE,
        &UPDATE_TASK,
        &SCOPE_UP,
        &SCOPE_DOWN,
        &RESEARCH,
    ],
    list_as: Some(super::dialect::ListAs {
        shape: "its tasks as `get_tasks` gives them with their subtasks: `[{id, title, description, …, subtasks}]`",
        read: list_as,
    }),
};
