//! The codex dialect: OpenAI Codex CLI's `update_plan`, an optional explanation and the
//! whole plan of `{step, status}` (pending, in_progress, completed; at most one
//! in_progress). The plan is the conversation's todos that are not canceled or archived;
//! a finished step the plan leaves out is archived (history), an open one deleted. The
//! model reads `Plan updated`. `todo.list_as('codex', …)` gives the plan in the shape of
//! Codex's `turn/plan/updated` notification.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{error, failed, list_items, sentence, session, CLAUDE_STATUSES};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

static UPDATE_PLAN: Tool = Tool {
    name: "update_plan",
    description: "Updates the task plan.\nProvide an optional explanation and a list of plan items, each with a step and status.\nAt most one step can be in_progress at a time.\n",
    input_schema: || {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["plan"],
            "properties": {
                "explanation": {"type": "string"},
                "plan": {
                    "type": "array",
                    "description": "The list of steps",
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["step", "status"],
                        "properties": {
                            "step": {"type": "string"},
                            "status": {"type": "string", "description": "One of: pending, in_progress, completed"}
                        }
                    }
                }
            }
        })
    },
    precheck: Some(check),
    run: update_plan,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(sentence),
    accepts: None,
};

/// Codex refuses a status outside its three and more than one step in progress; a blank
/// step has nothing to do.
fn check(args: &Value) -> Option<Value> {
    let plan = args.get("plan")?.as_array()?;
    for (i, item) in plan.iter().enumerate() {
        if let Some(s) = item.get("status").and_then(Value::as_str).filter(|s| !CLAUDE_STATUSES.contains(s)) {
            return Some(error(
                "invalid_arguments",
                format!("failed to parse function arguments: unknown variant `{s}`, expected one of `pending`, `in_progress`, `completed` (plan[{i}].status)"),
            ));
        }
        if item.get("step").and_then(Value::as_str).is_some_and(|s| s.trim().is_empty()) {
            return Some(error("invalid_arguments", format!("plan[{i}].step must not be empty")));
        }
    }
    let running = plan.iter().filter(|t| t.get("status").and_then(Value::as_str) == Some("in_progress")).count();
    (running > 1)
        .then(|| error("invalid_arguments", format!("At most one step can be in_progress at a time ({running} are)")))
}

fn update_plan(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "update_plan")?;
    let items = list_items(&args["plan"], "step", &[]);
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    Ok(json!("Plan updated"))
}

/// The plan as Codex's `turn/plan/updated` notification carries it: `{"explanation": null,
/// "plan": [{"step", "status"}]}`, the status camelCase (`inProgress`), a blocked todo
/// `pending`.
pub fn plan(rows: &[Todo]) -> Value {
    let steps: Vec<Value> = rows
        .iter()
        .map(|t| {
            let status = match t.status.three_state() {
                Status::InProgress => "inProgress",
                Status::Completed => "completed",
                _ => "pending",
            };
            json!({"step": t.subject, "status": status})
        })
        .collect();
    json!({"explanation": null, "plan": steps})
}

/// A conversation's list as OpenAI Codex CLI's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    plan(&whole_list::stored(scope, conv, Kept::Uncanceled))
}

/// The codex dialect.
pub static DIALECT: Dialect = Dialect {
    name: "codex",
    aliases: &[],
    runtime: "OpenAI Codex CLI",
    description: "update_plan: the whole plan each time",
    tools: &[&UPDATE_PLAN],
    list_as: Some(ListAs {
        shape: "the `turn/plan/updated` notification's `{\"explanation\", \"plan\"}`",
        read: list_as,
    }),
};
