//! The dependency tools: `add_dependency`, `remove_dependency`, and `validate_dependencies` and
//! `fix_dependencies`, which find nothing to do in a store that keeps dependencies valid.

use serde_json::{json, Value};

use super::super::dialect::Answer;
use super::super::helpers::str_arg;
use super::tasks::{ok, project, refused, tasks_path, tm_id, Project, Tasks};
use crate::error::Error;
use crate::ops::{dependencies, Scope};
use crate::todo::Todo;

/// The task or subtask a dependency argument names.
fn dependency_end<'a>(tasks: &'a Tasks, id: &str) -> Option<&'a Todo> {
    tasks.find(id)
}

/// What Task Master calls a dependency's end in its refusals: a dotted id is a subtask.
fn kind(id: &str) -> &'static str {
    if id.contains('.') {
        "Subtask"
    } else {
        "Task"
    }
}

/// A call of `add_dependency` or `remove_dependency`: the project and its tasks, the ids as
/// given (`id` waits for `on`), and the store id of the task `id` names.
struct DependencyCall<'a> {
    p: Project,
    tasks: Tasks,
    id: &'a str,
    on: &'a str,
    from: i64,
}

/// Reads the call's project and finds the task that waits, refused when there is none.
fn dependency_call<'a>(scope: &Scope, args: &'a Value) -> Result<DependencyCall<'a>, Value> {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let (id, on) = (str_arg(args, "id").trim(), str_arg(args, "dependsOn").trim());
    let Some(from) = dependency_end(&tasks, id).map(|t| t.id) else {
        return Err(refused(format!("{} {id} not found.", kind(id)), Some(&p.tag)));
    };
    Ok(DependencyCall { p, tasks, id, on, from })
}

pub(super) fn add_dependency(scope: &Scope, args: &Value) -> Answer {
    let DependencyCall { p, tasks, id, on, from } = dependency_call(scope, args)?;
    let Some(to) = dependency_end(&tasks, on) else {
        return Err(refused(format!("Dependency target {on} does not exist in tasks.json"), Some(&p.tag)));
    };
    if from == to.id {
        return Err(refused(format!("{} {id} cannot depend on itself.", kind(id)), Some(&p.tag)));
    }
    match dependencies::block(&p.scope, from, to.id) {
        Ok(_) => {} // Task Master answers the same when it was there already
        Err(Error::Edge(_)) => {
            return Err(refused(
                format!("Cannot add dependency {on} to task {id} as it would create a circular dependency."),
                Some(&p.tag),
            ))
        }
        Err(e) => return Err(refused(tasks.said(e), Some(&p.tag))),
    }
    ok(
        json!({"message": format!("Successfully added dependency: Task {id} now depends on {on}"),
               "taskId": tm_id(id, false), "dependencyId": tm_id(on, false)}),
        &p.tag,
    )
}

pub(super) fn remove_dependency(scope: &Scope, args: &Value) -> Answer {
    let DependencyCall { p, tasks, id, on, from } = dependency_call(scope, args)?;
    // Task Master answers the same whether the dependency was there or not
    if let Some(to) = dependency_end(&tasks, on) {
        dependencies::unblock(&p.scope, from, to.id).map_err(|e| refused(tasks.said(e), Some(&p.tag)))?;
    }
    ok(
        json!({"message": format!("Successfully removed dependency: Task {id} no longer depends on {on}"),
               "taskId": tm_id(id, false), "dependencyId": tm_id(on, false)}),
        &p.tag,
    )
}

/// The store keeps dependencies valid (both ends exist, no cycles, no self-dependency), so
/// there is never anything to report.
pub(super) fn validate_dependencies(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    ok(json!({"message": "Dependencies validated successfully", "tasksPath": tasks_path(&p.root)}), &p.tag)
}

/// The store refuses what `fix_dependencies` would remove (a missing task, a cycle, a task
/// waiting for itself), so there is nothing to fix.
pub(super) fn fix_dependencies(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    ok(json!({"message": "Dependencies fixed successfully", "tasksPath": tasks_path(&p.root), "tag": p.tag}), &p.tag)
}
