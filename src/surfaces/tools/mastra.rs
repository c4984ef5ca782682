//! The mastra dialect: the Mastra Harness's task tools, `task_write` (the whole list of
//! `{id?, content, status, activeForm}`), `task_update` (one task's fields by id),
//! `task_complete` and `task_check`. Ids are stable: the model's own (the todos' caller ids),
//! else made as Mastra makes them, `task_` and a slug of the content (`_2`, `_3` for
//! repeats), an id-less task reusing the id of the one stored task of the same content; a
//! todo written through a dialect without caller ids shows its store id. At most one task is
//! in progress. The list is the conversation's todos that are not canceled or archived; a
//! finished task the list leaves out is archived (history), an open one deleted. Every answer
//! is Mastra's result object, `{content, tasks, isError}` (`task_check` adds `summary` and
//! `incompleteTasks`), which its model reads whole; a refusal is one with `isError: true`.

use serde_json::{json, Map, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{
    caller_id, claude_status_name, error, error_message, failed, ordered_json, str_arg, CallerIds, CLAUDE_STATUSES,
};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::slug_ids::assign_ids;
use crate::status::Status;
use crate::todo::Todo;

/// What a tool answers without a list (Mastra: without its harness).
const NO_LIST: &str = "Unable to update task list (no harness context)";
const NO_LIST_TO_CHECK: &str = "Unable to access task list (no harness context)";
const ONE_IN_PROGRESS: &str = "Only one task can be in_progress at a time.";
const ID_DESCRIPTION: &str =
    "Stable task identifier (for example, 'task_investigate_tests'). Keep this unchanged across updates.";
static TASK_WRITE: Tool = Tool {
    name: "task_write",
    description: "Create and manage a structured task list for your current coding session. This helps you track progress, organize complex tasks, and demonstrate thoroughness to the user.\n\nUsage:\n- Use this to create the initial task list or replace the whole list after replanning\n- Pass the FULL task list each time this tool is called (replaces the previous list)\n- Each task has: id (stable identifier), content (imperative), status (pending, in_progress, or completed), activeForm (present continuous)\n- IDs must be unique. If duplicate explicit IDs are provided, the duplicate task is returned with a generated fallback ID\n- Keep task IDs stable across updates. If omitted, IDs are generated and returned in the tool result\n- When an ID is omitted while rewriting an existing list, one unambiguous matching task may reuse an existing ID\n- Prefer single-task update tools when they are available\n- Mark tasks in_progress BEFORE starting work (only ONE at a time)\n- Mark tasks completed IMMEDIATELY after finishing\n- Use this for multi-step tasks requiring 3+ distinct actions\n\nStates:\n- pending: Not yet started\n- in_progress: Currently working on (limit to ONE)\n- completed: Finished successfully",
    input_schema: || {
        json!({
            "type": "object",
            "properties": {
                "tasks": {
                    "type": "array",
                    "description": "The complete updated task list",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "minLength": 1, "description": ID_DESCRIPTION},
                            "content": {"type": "string", "minLength": 1, "description": "Task description in imperative form (e.g., 'Fix authentication bug')"},
                            "status": {"type": "string", "enum": CLAUDE_STATUSES, "description": "Current task status"},
                            "activeForm": {"type": "string", "minLength": 1, "description": "Present continuous form shown during execution (e.g., 'Fixing authentication bug')"}
                        },
                        "required": ["content", "status", "activeForm"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["tasks"],
            "additionalProperties": false
        })
    },
    precheck: None,
    run: task_write,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

static TASK_UPDATE: Tool = Tool {
    name: "task_update",
    description: "Update one task in the current task list by stable ID. Use this for targeted changes to one existing task.\n\nUsage:\n- Provide the task ID returned by the task-list tools\n- Include only the fields that changed\n- Use status to move a task between pending, in_progress, and completed\n- Use task_complete when only marking a task completed\n- If the ID is unknown, the tool returns an error with available task IDs",
    input_schema: || {
        json!({
            "type": "object",
            "properties": {
                "id": {"type": "string", "minLength": 1, "description": ID_DESCRIPTION},
                "content": {"type": "string", "minLength": 1, "description": "New task description in imperative form"},
                "status": {"type": "string", "enum": CLAUDE_STATUSES, "description": "New task status"},
                "activeForm": {"type": "string", "minLength": 1, "description": "New present continuous form shown during execution"}
            },
            "required": ["id"],
            "additionalProperties": false
        })
    },
    precheck: None,
    run: task_update,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

static TASK_COMPLETE: Tool = Tool {
    name: "task_complete",
    description: "Mark one task completed by stable ID. Use this when one tracked task is finished.\n\nUsage:\n- Provide the task ID returned by the task-list tools\n- If the ID is unknown, the tool returns an error with available task IDs",
    input_schema: || {
        json!({
            "type": "object",
            "properties": {"id": {"type": "string", "minLength": 1, "description": ID_DESCRIPTION}},
            "required": ["id"],
            "additionalProperties": false
        })
    },
    precheck: None,
    run: task_complete,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

static TASK_CHECK: Tool = Tool {
    name: "task_check",
    description: "Check the completion status of your current task list. Use this before finishing tracked work to ensure all tasks are completed.\n\nReturns:\n- Human-readable content summary with task counts and incomplete task IDs\n- Structured task list snapshot with stable IDs\n- summary object with total, completed, inProgress, pending, incomplete, hasTasks, and allCompleted\n- incompleteTasks array for tasks that still need work\n\nsummary.allCompleted is true only when at least one tracked task exists and every tracked task is completed. If no tasks exist, summary.hasTasks is false and summary.allCompleted is false.",
    input_schema: || json!({"type": "object", "properties": {}, "additionalProperties": false}),
    precheck: None,
    run: task_check,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

/// A task as Mastra holds it.
#[derive(Clone)]
struct Task {
    id: String,
    content: String,
    status: &'static str,
    active_form: String,
}

impl Task {
    fn json(&self) -> Value {
        json!({"id": self.id, "content": self.content, "status": self.status, "activeForm": self.active_form})
    }
}

fn all_json(tasks: &[Task]) -> Vec<Value> {
    tasks.iter().map(Task::json).collect()
}

/// The stored list as Mastra's tasks.
fn current(rows: &[Todo]) -> Vec<Task> {
    rows.iter()
        .map(|t| Task {
            id: caller_id(t),
            content: t.subject.clone(),
            status: claude_status_name(t.status),
            active_form: t.active_form.clone().unwrap_or_else(|| t.subject.clone()),
        })
        .collect()
}

/// `Tasks updated: [c/t completed]`, the task in progress and every task's id.
fn list_text(tasks: &[Task]) -> String {
    let completed = tasks.iter().filter(|t| t.status == "completed").count();
    let mut text = format!("Tasks updated: [{completed}/{} completed]", tasks.len());
    if let Some(t) = tasks.iter().find(|t| t.status == "in_progress") {
        text.push_str(&format!("\nCurrently: {} ({})", t.active_form, t.id));
    }
    if !tasks.is_empty() {
        text.push_str(&format!("\nTask IDs:\n{}", id_lines(tasks)));
    }
    text
}

fn id_lines(tasks: &[Task]) -> String {
    tasks.iter().map(|t| format!("- {}: {} ({})", t.id, t.content, t.status)).collect::<Vec<_>>().join("\n")
}

/// A result the model reads (`isError` false: the list written).
fn result(content: String, tasks: &[Task], is_error: bool) -> Value {
    json!({"content": content, "tasks": all_json(tasks), "isError": is_error})
}

/// `Task not found: <id>` with the ids there are, and the list unchanged.
fn not_found(id: &str, tasks: &[Task]) -> Value {
    let available = match tasks {
        [] => "No tasks are currently tracked.".to_string(),
        _ => format!("Available task IDs:\n{}", id_lines(tasks)),
    };
    result(format!("Task not found: {id}\n\n{available}"), tasks, true)
}

/// Writes `tasks` as the conversation's list (each todo by its id) and answers the list.
fn save(scope: &Scope, conv: &str, stored: &[Todo], tasks: &[Task]) -> Answer {
    let ids = CallerIds::new(stored);
    let items: Vec<_> = tasks
        .iter()
        .map(|t| {
            let mut columns = Map::new();
            columns.insert("active_form".into(), json!(t.active_form));
            ids.item(Some(&t.id), &t.content, Status::parse(t.status).unwrap_or(Status::Pending), columns)
        })
        .collect();
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    Ok(result(list_text(tasks), tasks, false))
}

fn task_write(scope: &Scope, args: &Value) -> Answer {
    let Some(conv) = scope.conv() else { return Err(result(NO_LIST.into(), &[], true)) };
    let wanted = args["tasks"].as_array().map(Vec::as_slice).unwrap_or_default();
    for (i, t) in wanted.iter().enumerate() {
        for key in ["content", "activeForm"] {
            if str_arg(t, key).trim().is_empty() {
                return Err(error("invalid_arguments", format!("task_write: tasks[{i}].{key}: must not be blank")));
            }
        }
    }
    let stored = whole_list::stored(scope, conv, Kept::Uncanceled);
    let before = current(&stored);
    let sent: Vec<(Option<String>, String)> =
        wanted.iter().map(|t| (t["id"].as_str().map(str::to_string), str_arg(t, "content").to_string())).collect();
    let previous: Vec<(&str, &str)> = before.iter().map(|t| (t.id.as_str(), t.content.as_str())).collect();
    let tasks: Vec<Task> = assign_ids(&sent, &previous)
        .into_iter()
        .zip(wanted)
        .map(|(id, t)| Task {
            id,
            content: str_arg(t, "content").to_string(),
            status: CLAUDE_STATUSES.into_iter().find(|s| *s == str_arg(t, "status")).unwrap_or("pending"),
            active_form: str_arg(t, "activeForm").to_string(),
        })
        .collect();
    if tasks.iter().filter(|t| t.status == "in_progress").count() > 1 {
        return Err(result(ONE_IN_PROGRESS.into(), &before, true));
    }
    save(scope, conv, &stored, &tasks)
}

fn task_update(scope: &Scope, args: &Value) -> Answer {
    if ["content", "status", "activeForm"].iter().all(|k| args.get(*k).is_none()) {
        return Err(error("invalid_arguments", "task_update: Provide at least one field to update."));
    }
    for key in ["content", "activeForm"] {
        if args.get(key).is_some() && str_arg(args, key).trim().is_empty() {
            return Err(error("invalid_arguments", format!("task_update: {key}: must not be blank")));
        }
    }
    change(scope, args, |t| {
        if let Some(c) = args["content"].as_str() {
            t.content = c.to_string();
        }
        if let Some(s) = CLAUDE_STATUSES.into_iter().find(|s| args["status"].as_str() == Some(*s)) {
            t.status = s;
        }
        if let Some(a) = args["activeForm"].as_str() {
            t.active_form = a.to_string();
        }
    })
}

fn task_complete(scope: &Scope, args: &Value) -> Answer {
    change(scope, args, |t| t.status = "completed")
}

/// Changes the task `args.id` names with `how`, and writes the list.
fn change(scope: &Scope, args: &Value, how: impl Fn(&mut Task)) -> Answer {
    let Some(conv) = scope.conv() else { return Err(result(NO_LIST.into(), &[], true)) };
    let stored = whole_list::stored(scope, conv, Kept::Uncanceled);
    let before = current(&stored);
    let id = str_arg(args, "id");
    let Some(at) = before.iter().position(|t| t.id == id) else { return Err(not_found(id, &before)) };
    let mut tasks = before.clone();
    how(&mut tasks[at]);
    if tasks.iter().filter(|t| t.status == "in_progress").count() > 1 {
        return Err(result(ONE_IN_PROGRESS.into(), &before, true));
    }
    save(scope, conv, &stored, &tasks)
}

fn task_check(scope: &Scope, _args: &Value) -> Answer {
    let tasks = match scope.conv() {
        Some(conv) => current(&whole_list::stored(scope, conv, Kept::Uncanceled)),
        None => {
            let mut out = check(&[]);
            out["content"] = json!(NO_LIST_TO_CHECK);
            out["isError"] = json!(true);
            return Err(out);
        }
    };
    Ok(check(&tasks))
}

/// `task_check`'s answer for `tasks`.
fn check(tasks: &[Task]) -> Value {
    let of = |s: &str| tasks.iter().filter(|t| t.status == s).cloned().collect::<Vec<Task>>();
    let (completed, in_progress, pending) = (of("completed"), of("in_progress"), of("pending"));
    let incomplete: Vec<Task> = in_progress.iter().chain(&pending).cloned().collect();
    let all_completed = !tasks.is_empty() && incomplete.is_empty();
    let content = if tasks.is_empty() {
        "No tasks found. Consider using task_write to create a task list for complex work.".to_string()
    } else {
        let mut text = format!(
            "Task Status: [{}/{} completed]\n- Completed: {}\n- In Progress: {}\n- Pending: {}\n\nAll tasks completed: {}",
            completed.len(),
            tasks.len(),
            completed.len(),
            in_progress.len(),
            pending.len(),
            if all_completed { "YES" } else { "NO" }
        );
        if !all_completed {
            text.push_str("\n\nIncomplete tasks:");
            for (heading, group) in [("In Progress", &in_progress), ("Pending", &pending)] {
                if !group.is_empty() {
                    text.push_str(&format!("\n\n{heading}:"));
                    for t in group {
                        text.push_str(&format!("\n- {}: {}", t.id, t.content));
                    }
                }
            }
            text.push_str("\n\nContinue working on these tasks before ending.");
        }
        text
    };
    json!({
        "content": content,
        "tasks": all_json(tasks),
        "summary": {
            "total": tasks.len(), "completed": completed.len(), "inProgress": in_progress.len(),
            "pending": pending.len(), "incomplete": incomplete.len(), "hasTasks": !tasks.is_empty(),
            "allCompleted": all_completed
        },
        "incompleteTasks": all_json(&incomplete),
        "isError": false
    })
}

/// The result as Mastra's model reads it: the object as JavaScript writes it, its keys in the
/// order Mastra builds them (`content`, `tasks`, for `task_check` `summary` and
/// `incompleteTasks`, then `isError`; a task's `id`, `content`, `status`, `activeForm`); a
/// refusal of the arguments, its words.
fn text(out: &Value) -> String {
    match error_message(out) {
        Some(m) => m.to_string(),
        None => ordered_json(out, KEY_ORDER),
    }
}

/// The keys of Mastra's result objects, in the order it builds them (a task's first, then the
/// result's own, the summary's among them).
const KEY_ORDER: &[&str] = &[
    "id",
    "content",
    "status",
    "activeForm",
    "tasks",
    "summary",
    "total",
    "completed",
    "inProgress",
    "pending",
    "incomplete",
    "hasTasks",
    "allCompleted",
    "incompleteTasks",
    "isError",
];

/// A conversation's list as Mastra's harness state holds it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    json!({ "tasks": all_json(&current(&whole_list::stored(scope, conv, Kept::Uncanceled))) })
}

/// The mastra dialect.
pub static DIALECT: Dialect = Dialect {
    name: "mastra",
    aliases: &[],
    runtime: "Mastra (its Harness)",
    description: "task_write, task_update, task_complete, task_check: a list with stable ids",
    tools: &[&TASK_WRITE, &TASK_UPDATE, &TASK_COMPLETE, &TASK_CHECK],
    list_as: Some(ListAs {
        shape: "its harness state `{\"tasks\": [{id, content, status, activeForm}]}`",
        read: list_as,
    }),
};
