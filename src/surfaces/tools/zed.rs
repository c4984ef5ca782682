//! The zed dialect: Zed agent's `update_plan`, Codex's tool with a priority for each step
//! (high, medium or low; medium when left out) and no explanation: the whole plan of `{step,
//! status, priority}` each time. The plan is the conversation's todos that are not canceled
//! or archived; a finished step the plan leaves out is archived (history), an open one
//! deleted. The model reads `Plan updated`. It shares its name with Codex's tool: a server
//! kept to this dialect offers this one, and `todo.call('zed/update_plan', …)` names it.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{error, failed, list_items, sentence, session};
use crate::ops::whole_list::{self, Kept, Rules};
use crate::ops::Scope;
use crate::todo::Todo;

static UPDATE_PLAN: Tool = Tool {
    name: "update_plan",
    description: "Updates the plan for the current task. Send the whole plan each time: every step with its status (pending, in_progress or completed) and, optionally, its priority (high, medium or low; medium when left out). Keep at most one step in_progress.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["plan"],
            "properties": {
                "plan": {
                    "type": "array",
                    "description": "The list of steps",
                    "items": {
                        "type": "object",
                        "required": ["step", "status"],
                        "properties": {
                            "step": {"type": "string"},
                            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                            "priority": {"type": "string", "enum": ["high", "medium", "low"]}
                        }
                    }
                }
            }
        })
    },
    precheck: None,
    run: update_plan,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(sentence),
    accepts: None,
};

fn update_plan(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "update_plan")?;
    let plan = args["plan"].as_array().map(Vec::as_slice).unwrap_or_default();
    if let Some(i) = plan.iter().position(|t| t["step"].as_str().is_some_and(|s| s.trim().is_empty())) {
        return Err(error("invalid_arguments", format!("plan[{i}].step must not be empty")));
    }
    let mut items = list_items(&args["plan"], "step", &[("priority", "priority")]);
    for item in &mut items {
        if item.columns["priority"].is_null() {
            item.columns.insert("priority".into(), json!("medium"));
        }
    }
    whole_list::replace(scope, conv, Rules::runtime(Kept::Uncanceled), &items).map_err(failed)?;
    Ok(json!("Plan updated"))
}

/// The plan in the tool's own shape: `{"plan": [{"step", "status", "priority"}]}`, a blocked
/// todo pending, no priority medium.
pub fn plan(rows: &[Todo]) -> Value {
    let steps: Vec<Value> = rows
        .iter()
        .map(|t| {
            json!({"step": t.subject, "status": t.status.three_state().as_str(),
                   "priority": t.priority.as_deref().unwrap_or("medium")})
        })
        .collect();
    json!({ "plan": steps })
}

/// A conversation's list as Zed agent's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    plan(&whole_list::stored(scope, conv, Kept::Uncanceled))
}

/// The zed dialect.
pub static DIALECT: Dialect = Dialect {
    name: "zed",
    aliases: &[],
    runtime: "Zed agent",
    description: "update_plan: the whole plan with priorities",
    tools: &[&UPDATE_PLAN],
    list_as: Some(ListAs { shape: "`{\"plan\": [{step, status, priority}]}`", read: list_as }),
};
