//! The reading tools: `get_tasks`, `get_task` and `next_task` (with the advice Task Master adds
//! to a task it names next).

use serde_json::{json, Value};

use super::super::dialect::Answer;
use super::super::helpers::{caller_id, str_arg};
use super::tasks::{id_list, ok, project, refused, tm_id, Tasks};
use crate::formats::taskmaster::status_word;
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

pub(super) fn get_tasks(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let filter = args.get("status").and_then(Value::as_str).filter(|s| !s.is_empty() && *s != "all");
    let wanted: Option<Vec<&str>> = filter.map(|f| f.split(',').map(str::trim).collect());
    let with_subtasks = args.get("withSubtasks").and_then(Value::as_bool).unwrap_or(false);
    let shown: Vec<&Todo> = tasks
        .tops
        .iter()
        .map(|i| &tasks.todos[*i])
        .filter(|t| wanted.as_ref().is_none_or(|w| w.contains(&status_word(t.status))))
        .collect();
    let list: Vec<Value> = shown
        .iter()
        .map(|t| {
            let mut task = tasks.task(t, true);
            if !with_subtasks {
                task["subtasks"] = json!([]);
            }
            task
        })
        .collect();
    let count = |of: &[&Todo], word: &str| of.iter().filter(|t| status_word(t.status) == word).count();
    let total = tasks.tops.len();
    let percent = |done: usize, of: usize| if of == 0 { json!(0) } else { json!(done as f64 * 100.0 / of as f64) };
    let subs: Vec<&Todo> = shown.iter().flat_map(|t| tasks.subtasks(t)).collect();
    let stats = json!({
        "total": total, "completed": count(&shown, "done"), "inProgress": count(&shown, "in-progress"),
        "pending": count(&shown, "pending"), "blocked": count(&shown, "blocked"), "deferred": count(&shown, "deferred"),
        "cancelled": count(&shown, "cancelled"), "review": count(&shown, "review"),
        "completionPercentage": percent(count(&shown, "done"), total),
        "subtasks": {
            "total": subs.len(), "completed": count(&subs, "done"), "inProgress": count(&subs, "in-progress"),
            "pending": count(&subs, "pending"), "blocked": count(&subs, "blocked"), "deferred": count(&subs, "deferred"),
            "cancelled": count(&subs, "cancelled"), "completionPercentage": percent(count(&subs, "done"), subs.len())
        }
    });
    let mut data = json!({"filter": filter.unwrap_or("all"), "stats": stats});
    data["tasks"] = Value::Array(list); // moved, not copied as `json!` would
    ok(data, &p.tag)
}

pub(super) fn get_task(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let tasks = Tasks::read(&p.scope);
    let ids = id_list(str_arg(args, "id"));
    let status = args.get("status").and_then(Value::as_str).filter(|s| !s.is_empty());
    let found: Vec<Value> = ids
        .iter()
        .filter_map(|id| tasks.find(id))
        .map(|t| match tasks.parent(t) {
            Some(parent) => tasks.subtask(t, parent, false),
            None => {
                let mut task = tasks.task(t, false);
                if let Some(s) = status {
                    let keep: Vec<&str> = s.split(',').map(str::trim).collect();
                    if let Some(list) = task["subtasks"].as_array_mut() {
                        list.retain(|st| keep.contains(&st["status"].as_str().unwrap_or_default()));
                    }
                }
                task
            }
        })
        .collect();
    if found.is_empty() {
        return Err(refused(format!("No tasks found for ID(s): {}", ids.join(",")), Some(&p.tag)));
    }
    if found.len() == 1 {
        return ok(found.into_iter().next().unwrap_or_default(), &p.tag);
    }
    ok(Value::Array(found), &p.tag)
}

const TASK_ADVICE: &str = "Tasks can be updated to reflect a change in the direction of the task, or to reformulate the task per your prompt. Research can be used when updating the task to collect up-to-date information. It is best to update subtasks as you work on them, and to update the task for more high-level changes that may affect pending subtasks or the general direction of the task.";
const SUBTASK_ADVICE: &str = "Subtasks can be updated with timestamped details as you implement them. This is useful for tracking progress, marking milestones and insights (of successful or successive falures in attempting to implement the subtask). Research can be used when updating the subtask to collect up-to-date information, and can be helpful to solve a repeating problem the agent is unable to solve. It is a good idea to get-task the parent task to collect the overall context of the task, and to get-task the subtask to collect the specific details of the subtask.";

/// Task Master's rank of a priority (high first).
fn rank(priority: Option<&str>) -> i64 {
    match priority.unwrap_or("medium") {
        "high" => 3,
        "low" => 1,
        _ => 2,
    }
}

/// Task Master's next task: a pending or in-progress subtask of an in-progress task whose
/// dependencies are done, else the best pending or in-progress top-level task whose
/// dependencies are done (by priority, fewer dependencies, lower id). A task another agent
/// holds a live claim on is not offered, nor one just offered to another agent asking at the
/// same time (`ops::claiming::offer_next`): racing agents are each offered a different task.
pub(super) fn next_task(scope: &Scope, args: &Value) -> Answer {
    let p = project(scope, args);
    let (tasks, offered) = crate::ops::claiming::offer_next(&p.scope, || {
        let tasks = Tasks::read(&p.scope);
        let ids = next_candidates(&tasks, scope.agent.as_deref()).iter().map(|(t, _)| t.id).collect();
        (tasks, ids)
    });
    // a candidate: a subtask of an in-progress task, with its task, or a top-level task
    match offered.and_then(|id| tasks.by_id(id)).map(|t| (t, tasks.parent(t))) {
        Some((s, Some(parent))) => {
            let deps: Vec<Value> = tasks
                .dependencies(s, false)
                .into_iter()
                .map(|d| match d {
                    Value::Number(n) => json!(n.to_string()),
                    other => other,
                })
                .collect();
            let next = json!({"id": caller_id(s), "title": s.subject, "status": status_word(s.status),
                              "priority": s.priority.clone().or_else(|| parent.priority.clone()).unwrap_or_else(|| "medium".into()),
                              "dependencies": deps, "parentId": tm_id(&caller_id(parent), false)});
            let steps = format!(
                "When ready to work on the subtask, use set-status to set the status to \"in progress\" {SUBTASK_ADVICE}"
            );
            ok(json!({"nextTask": next, "isSubtask": true, "nextSteps": steps}), &p.tag)
        }
        Some((t, None)) => {
            let steps = format!(
                "When ready to work on the task, use set-status to set the status to \"in progress\" {TASK_ADVICE}"
            );
            ok(json!({"nextTask": tasks.task(t, false), "isSubtask": false, "nextSteps": steps}), &p.tag)
        }
        None => ok(
            json!({"message": "No eligible next task found. All tasks are either completed or have unsatisfied dependencies",
                   "nextTask": null}),
            &p.tag,
        ),
    }
}

/// The tasks `next_task` may offer, best first: the eligible subtasks of in-progress tasks
/// (with their task), then the eligible top-level tasks (with None), each by priority, fewer
/// dependencies, lower id. Eligible: pending or in progress, dependencies done, no live claim
/// of another agent than `agent`.
fn next_candidates<'a>(tasks: &'a Tasks, agent: Option<&str>) -> Vec<(&'a Todo, Option<&'a Todo>)> {
    let open = |t: &Todo| matches!(t.status, Status::Pending | Status::InProgress);
    let eligible = |t: &Todo| open(t) && tasks.ready(t) && tasks.held_by_other(t, agent).is_none();
    let key = |t: &Todo| {
        let id = caller_id(t);
        let mut parts = id.split('.').map(|n| n.parse::<i64>().unwrap_or(i64::MAX));
        (parts.next().unwrap_or(i64::MAX), parts.next().unwrap_or(0))
    };
    let mut subtasks: Vec<(&Todo, Option<&Todo>)> = tasks
        .tops
        .iter()
        .map(|i| &tasks.todos[*i])
        .filter(|t| t.status == Status::InProgress)
        .flat_map(|parent| tasks.subtasks(parent).into_iter().map(move |s| (s, Some(parent))))
        .filter(|(s, _)| eligible(s))
        .collect();
    subtasks.sort_by_key(|(s, parent)| {
        let priority = s.priority.as_deref().or(parent.and_then(|p| p.priority.as_deref()));
        (-rank(priority), tasks.dependencies(s, false).len(), key(s))
    });
    let mut top: Vec<&Todo> = tasks.tops.iter().map(|i| &tasks.todos[*i]).filter(|t| eligible(t)).collect();
    top.sort_by_key(|t| (-rank(t.priority.as_deref()), tasks.dependencies(t, false).len(), key(t)));
    subtasks.extend(top.into_iter().map(|t| (t, None)));
    subtasks
}
