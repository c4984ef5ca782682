//! The agentscope dialect: AgentScope's `PlanNotebook` tools, a sequential plan of subtasks,
//! each with a required expected outcome and, once done, its actual outcome. A plan is a
//! todo of the conversation (its name the subject, its description, its expected outcome the
//! completion criteria, its outcome) whose subtasks are todos under it (their parent), kept
//! in their order and found by their plan's turn (`agentscope-plan:<id>`); a plan's id is its
//! todo's id. Its state is its todo's status (todo pending, in_progress, done completed,
//! abandoned canceled), as each subtask's. The current plan and the finished ones (its
//! history) are marked in the plan todo's metadata (`agentscope_plan`: `current` or
//! `history`). A plan `create_plan` replaces is archived (its open todos canceled): AgentScope
//! forgets it; the store keeps it out of sight. The rules are AgentScope's: one subtask in
//! progress, the earlier ones done or abandoned before a subtask starts or finishes, the
//! next one started when one finishes. Every answer is the text AgentScope's tool returns.

use serde_json::{json, Map, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{failed, item_turn, rooted, Rooted};
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::{Find, Scope};
use crate::status::Status;
use crate::todo::Todo;

/// The metadata key marking a plan's todo, and its values.
const MARK: &str = "agentscope_plan";
const CURRENT: &str = "current";
const HISTORY: &str = "history";
const NO_PLAN: &str = "Error: The current plan is None, you need to create a plan by calling create_plan() first.";

/// AgentScope's `SubTask`, as the tools' schemas print it.
fn subtask_schema() -> Value {
    json!({
        "description": "The subtask model used in the plan module.",
        "properties": {
            "name": {"description": "The subtask name, should be concise, descriptive and notexceed 10 words.", "type": "string"},
            "description": {"description": "The subtask description, including the constraints, target and outcome to be achieved. The description should be clear, specific and concise, and all the constraints, target and outcome should be specific and measurable.", "type": "string"},
            "expected_outcome": {"description": "The expected outcome of the subtask, which should be specific, concrete and measurable.", "type": "string"},
            "outcome": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "The actual outcome of the subtask."},
            "state": {"default": "todo", "description": "The state of the subtask.", "enum": ["todo", "in_progress", "done", "abandoned"], "type": "string"},
            "created_at": {"description": "The time the subtask was created.", "type": "string"},
            "finished_at": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "The time the subtask was finished."}
        },
        "required": ["name", "description", "expected_outcome"],
        "type": "object"
    })
}

/// The subtask schema the arguments are checked against (no `$ref`, no `anyOf`).
fn subtask_accepted() -> Value {
    json!({
        "type": "object",
        "required": ["name", "description", "expected_outcome"],
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "description": {"type": "string"},
            "expected_outcome": {"type": "string"},
            "outcome": {"type": ["string", "null"]},
            "state": {"type": "string", "enum": ["todo", "in_progress", "done", "abandoned"]},
            "created_at": {"type": "string"},
            "finished_at": {"type": ["string", "null"]}
        }
    })
}

static CREATE_PLAN: Tool = Tool {
    name: "create_plan",
    description: "Create a plan by given name and sub-tasks.",
    input_schema: || {
        json!({
            "$defs": {"SubTask": subtask_schema()},
            "properties": {
                "name": {"description": "The plan name, should be concise, descriptive and not exceed\n10 words.", "type": "string"},
                "description": {"description": "The plan description, including the constraints, target and\noutcome to be achieved. The description should be clear,\nspecific and concise, and all the constraints, target and\noutcome should be specific and measurable.", "type": "string"},
                "expected_outcome": {"description": "The expected outcome of the plan, which should be specific,\nconcrete and measurable.", "type": "string"},
                "subtasks": {"description": "A list of sequential sub-tasks that make up the plan.", "items": {"$ref": "#/$defs/SubTask"}, "type": "array"}
            },
            "required": ["name", "description", "expected_outcome", "subtasks"],
            "type": "object"
        })
    },
    precheck: None,
    run: create_plan,
    effect: Effect::Replaces,
    output_schema: None,
    text: None,
    accepts: Some(|| {
        json!({
            "type": "object",
            "required": ["name", "description", "expected_outcome", "subtasks"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "description": {"type": "string"},
                "expected_outcome": {"type": "string"},
                "subtasks": {"type": "array", "items": subtask_accepted()}
            }
        })
    }),
};

static VIEW_SUBTASKS: Tool = Tool {
    name: "view_subtasks",
    description: "View the details of the sub-tasks by given indexes.",
    input_schema: || {
        json!({
            "properties": {"subtask_idx": {"description": "The indexes of the sub-tasks to be viewed, starting from 0.", "items": {"type": "integer"}, "type": "array"}},
            "required": ["subtask_idx"],
            "type": "object"
        })
    },
    precheck: None,
    run: view_subtasks,
    effect: Effect::Reads,
    output_schema: None,
    text: None,
    accepts: None,
};

static UPDATE_SUBTASK_STATE: Tool = Tool {
    name: "update_subtask_state",
    description: "Update the state of a subtask by given index and state. Note if you\nwant to mark a subtask as done, you SHOULD call `finish_subtask`\ninstead with the specific outcome.",
    input_schema: || {
        json!({
            "properties": {
                "subtask_idx": {"description": "The index of the subtask to be updated, starting from 0.", "type": "integer"},
                "state": {"description": "The new state of the subtask. If you want to mark a subtask\nas done, you SHOULD call `finish_subtask` instead with the\nspecific outcome.", "enum": ["todo", "in_progress", "abandoned"], "type": "string"}
            },
            "required": ["subtask_idx", "state"],
            "type": "object"
        })
    },
    precheck: None,
    run: update_subtask_state,
    effect: Effect::Replaces,
    output_schema: None,
    text: None,
    accepts: None,
};

static FINISH_SUBTASK: Tool = Tool {
    name: "finish_subtask",
    description: "Label the subtask as done by given index and outcome.\nArgs:\n            subtask_idx (`int`):\n                The index of the sub-task to be marked as done, starting\n                from 0.\n            subtask_outcome (`str`):\n                The specific outcome of the sub-task, should exactly match the\n                expected outcome in the sub-task description. SHOULDN't be\n                what you did or general description, e.g. \"I have searched\n                xxx\", \"I have written the code for xxx\", etc. It SHOULD be\n                the specific data, information, or path to the file, e.g.\n                \"There are 5 articles about xxx, they are\n- xxx\n- xxx\n...\"",
    input_schema: || {
        json!({
            "properties": {"subtask_idx": {"type": "integer"}, "subtask_outcome": {"type": "string"}},
            "required": ["subtask_idx", "subtask_outcome"],
            "type": "object"
        })
    },
    precheck: None,
    run: finish_subtask,
    effect: Effect::Replaces,
    output_schema: None,
    text: None,
    accepts: None,
};

static REVISE_CURRENT_PLAN: Tool = Tool {
    name: "revise_current_plan",
    description: "Revise the current plan by adding, revising or deleting a sub-task.",
    input_schema: || {
        json!({
            "$defs": {"SubTask": subtask_schema()},
            "properties": {
                "subtask_idx": {"description": "The index of the sub-task to be revised, starting from 0.", "type": "integer"},
                "action": {"description": "The action to be performed on the sub-task. If \"add\", the\nsub-task will be inserted before the given index. If \"revise\",\nthe sub-task at the given index will be revised. If \"delete\",\nthe sub-task at the given index will be deleted.", "enum": ["add", "revise", "delete"], "type": "string"},
                "subtask": {"anyOf": [{"$ref": "#/$defs/SubTask"}, {"type": "null"}], "default": null, "description": "The sub-task to be added or revised. Required if action is\n\"add\" or \"revise\"."}
            },
            "required": ["subtask_idx", "action"],
            "type": "object"
        })
    },
    precheck: None,
    run: revise_current_plan,
    effect: Effect::Changes,
    output_schema: None,
    text: None,
    accepts: Some(|| {
        json!({
            "type": "object",
            "required": ["subtask_idx", "action"],
            "properties": {
                "subtask_idx": {"type": "integer"},
                "action": {"type": "string"},
                "subtask": {"type": ["object", "null"]}
            }
        })
    }),
};

static FINISH_PLAN: Tool = Tool {
    name: "finish_plan",
    description: "Finish the current plan by given outcome, or abandon it with the\ngiven reason if the user no longer wants to perform it. Note that you\nSHOULD confirm with the user before abandoning the plan.",
    input_schema: || {
        json!({
            "properties": {
                "state": {"description": "The state to finish the plan. If \"done\", the plan will be\nmarked as done with the given outcome. If \"abandoned\", the\nplan will be abandoned with the given reason.", "enum": ["done", "abandoned"], "type": "string"},
                "outcome": {"description": "The specific outcome of the plan if state is \"done\", or the\nreason for abandoning the plan if state is \"abandoned\".", "type": "string"}
            },
            "required": ["state", "outcome"],
            "type": "object"
        })
    },
    precheck: None,
    run: finish_plan,
    effect: Effect::Replaces,
    output_schema: None,
    text: None,
    accepts: None,
};

static VIEW_HISTORICAL_PLANS: Tool = Tool {
    name: "view_historical_plans",
    description: "View the historical plans.",
    input_schema: || json!({"properties": {}, "type": "object"}),
    precheck: None,
    run: view_historical_plans,
    effect: Effect::Reads,
    output_schema: None,
    text: None,
    accepts: None,
};

static RECOVER_HISTORICAL_PLAN: Tool = Tool {
    name: "recover_historical_plan",
    description: "Recover a historical plan by given plan ID, the plan ID can be\nobtained by calling `view_historical_plans`. Note the recover\noperation will override the current plan if exists.",
    input_schema: || {
        json!({
            "properties": {"plan_id": {"description": "The ID of the historical plan to be recovered.", "type": "string"}},
            "required": ["plan_id"],
            "type": "object"
        })
    },
    precheck: None,
    run: recover_historical_plan,
    effect: Effect::Replaces,
    output_schema: None,
    text: None,
    accepts: None,
};

/// A plan: its todo (the root) and its subtasks' todos (the items), in order.
type Plan = Rooted;

/// A state as AgentScope names it.
fn state(s: Status) -> &'static str {
    match s {
        Status::InProgress => "in_progress",
        Status::Completed => "done",
        Status::Canceled => "abandoned",
        Status::Pending | Status::Blocked | Status::Deferred => "todo",
        Status::Review => "in_progress",
    }
}

fn status_of(state: &str) -> Status {
    match state {
        "in_progress" => Status::InProgress,
        "done" => Status::Completed,
        "abandoned" => Status::Canceled,
        _ => Status::Pending,
    }
}

/// AgentScope's timestamp: `2026-11-26 19:23:25.931` (UTC).
fn stamp(us: i64) -> String {
    crate::time::iso8601(us).replacen('T', " ", 1).trim_end_matches('Z').to_string()
}

/// The turn a plan's subtasks are written in.
fn plan_turn(root: i64) -> String {
    item_turn("agentscope-plan", root)
}

/// The conversation's plans marked `which`, in the order they were made.
fn plans(scope: &Scope, conv: &str, which: &str) -> Vec<Plan> {
    rooted(scope, conv, "agentscope-plan", MARK, Some(which))
}

fn current(scope: &Scope, conv: &str) -> Option<Plan> {
    plans(scope, conv, CURRENT).pop()
}

/// The conversation in context, or AgentScope's error for no plan (a plan needs a list).
fn conversation(scope: &Scope) -> Result<&str, Value> {
    scope.conv().ok_or_else(|| json!(NO_PLAN))
}

/// Sets the plan mark of todo `id`.
fn set_mark(scope: &Scope, id: i64, to: &str) -> Result<(), Value> {
    let change = Change { metadata: Some(json_fields([(MARK, json!(to))])), ..Change::default() };
    single::change(scope, Find::Anywhere, id, change).map(|_| ()).map_err(failed)
}

/// Moves todo `id` to `to` (any move AgentScope makes: through pending where the lifecycle
/// has no single step), with other columns.
fn move_to(scope: &Scope, id: i64, to: Status, fields: Map<String, Value>) -> Result<(), Value> {
    let change = Change { status: Some(to), via_reopen: true, fields, ..Change::default() };
    single::change(scope, Find::Anywhere, id, change).map(|_| ()).map_err(failed)
}

/// A subtask's columns from AgentScope's `SubTask` object.
fn subtask_fields(scope: &Scope, root: i64, s: &Value) -> Map<String, Value> {
    json_fields([
        ("conversation_id", json!(scope.conv())),
        ("turn_id", json!(plan_turn(root))),
        ("subject", s["name"].clone()),
        ("description", s["description"].clone()),
        ("completion_criteria", s["expected_outcome"].clone()),
        ("outcome", s.get("outcome").cloned().unwrap_or(Value::Null)),
        ("status", json!(status_of(s["state"].as_str().unwrap_or("todo")).as_str())),
    ])
}

fn add_subtask(scope: &Scope, root: i64, s: &Value) -> Result<Todo, Value> {
    single::add(scope, NewTodo { parent: Some(root), fields: subtask_fields(scope, root, s), id: None }).map_err(failed)
}

fn create_plan(scope: &Scope, args: &Value) -> Answer {
    let conv = conversation(scope)?;
    let name = args["name"].as_str().unwrap_or_default();
    let text = match current(scope, conv) {
        None => format!("Plan '{name}' created successfully."),
        Some(old) => {
            // AgentScope forgets a replaced plan: it is archived, its open todos canceled
            let archived = json_fields([("archived_at", json!(stamp_sql_now()))]);
            for t in old.items.iter().chain([&old.root]) {
                let to = if t.status.is_open() { Status::Canceled } else { t.status };
                move_to(scope, t.id, to, archived.clone())?;
            }
            format!(
                "The current plan named '{}' is replaced by the newly created plan named '{name}'.",
                old.root.subject
            )
        }
    };
    let fields = json_fields([
        ("conversation_id", json!(conv)),
        ("subject", json!(name)),
        ("description", args["description"].clone()),
        ("completion_criteria", args["expected_outcome"].clone()),
        ("metadata", json!({ MARK: CURRENT })),
    ]);
    let root = single::add(scope, NewTodo { fields, ..NewTodo::default() }).map_err(failed)?;
    for s in args["subtasks"].as_array().map(Vec::as_slice).unwrap_or_default() {
        add_subtask(scope, root.id, s)?;
    }
    Ok(json!(text))
}

/// The stamp a change writes for "now" (`archived_at`).
fn stamp_sql_now() -> String {
    crate::time::iso8601(crate::time::now_us())
}

/// A subtask in AgentScope's markdown: its checkbox and name, and (`detailed`) its details.
fn subtask_markdown(t: &Todo, detailed: bool) -> String {
    let s = state(t.status);
    let prefix = match s {
        "in_progress" => "- [ ] [WIP]",
        "done" => "- [x] ",
        "abandoned" => "- [ ] [Abandoned]",
        _ => "- [ ] ",
    };
    let mut lines = vec![format!("{prefix}{}", t.subject)];
    if detailed {
        lines.push(format!("\t- Created At: {}", stamp(t.created_us)));
        lines.push(format!("\t- Description: {}", t.description.as_deref().unwrap_or_default()));
        lines.push(format!("\t- Expected Outcome: {}", t.completion_criteria.as_deref().unwrap_or_default()));
        lines.push(format!("\t- State: {s}"));
        if s == "done" {
            let finished = t.completed_us.map(stamp).unwrap_or_else(|| "None".into());
            lines.push(format!("\t- Finished At: {finished}"));
            lines.push(format!("\t- Actual Outcome: {}", t.outcome.as_deref().unwrap_or("None")));
        }
    }
    lines.join("\n")
}

fn view_subtasks(scope: &Scope, args: &Value) -> Answer {
    let plan = conversation(scope).map(|conv| current(scope, conv))?.ok_or_else(|| json!(NO_PLAN))?;
    let n = plan.items.len() as i64;
    let mut out = Vec::new();
    let mut invalid = Vec::new();
    for idx in args["subtask_idx"].as_array().map(Vec::as_slice).unwrap_or_default().iter().filter_map(Value::as_i64) {
        match usize::try_from(idx).ok().and_then(|i| plan.items.get(i)) {
            Some(t) => out.push(format!("Subtask at index {idx}:\n```\n{}\n```\n", subtask_markdown(t, true))),
            None => invalid.push(idx.to_string()),
        }
    }
    if !invalid.is_empty() {
        out.push(format!("Invalid subtask_idx '[{}]'. Must be between 0 and {}.", invalid.join(", "), n - 1));
    }
    Ok(json!(out.join("\n")))
}

/// The subtask at `idx` of the current plan, or AgentScope's text for an index out of range.
fn at(plan: &Plan, idx: i64) -> Result<usize, Value> {
    usize::try_from(idx).ok().filter(|i| *i < plan.items.len()).ok_or_else(|| {
        json!(format!("Invalid subtask_idx '{idx}'. Must be between 0 and {}.", plan.items.len() as i64 - 1))
    })
}

fn update_subtask_state(scope: &Scope, args: &Value) -> Answer {
    let plan = conversation(scope).map(|conv| current(scope, conv))?.ok_or_else(|| json!(NO_PLAN))?;
    let idx = args["subtask_idx"].as_i64().unwrap_or(-1);
    let i = match at(&plan, idx) {
        Ok(i) => i,
        Err(text) => return Ok(text),
    };
    let wanted = args["state"].as_str().unwrap_or_default();
    if wanted == "in_progress" {
        for (j, t) in plan.items.iter().enumerate() {
            if j < i && !matches!(state(t.status), "done" | "abandoned") {
                return Ok(json!(format!(
                    "Subtask (at index {j}) named '{}' is not done yet. You should finish the previous subtasks first.",
                    t.subject
                )));
            }
            if t.status == Status::InProgress {
                return Ok(json!(format!(
                    "Subtask (at index {j}) named '{}' is already 'in_progress'. You should finish it first before starting another subtask.",
                    t.subject
                )));
            }
        }
    }
    let target = &plan.items[i];
    move_to(scope, target.id, status_of(wanted), Map::new())?;
    // the plan's state follows: todo while no subtask is in progress, else in_progress
    let any_in_progress = plan.items.iter().enumerate().any(|(j, t)| {
        if j == i {
            wanted == "in_progress"
        } else {
            t.status == Status::InProgress
        }
    });
    let suffix = match (state(plan.root.status), any_in_progress) {
        ("todo", true) => {
            move_to(scope, plan.root.id, Status::InProgress, Map::new())?;
            "The plan state has been updated to 'in_progress'."
        }
        ("in_progress", false) => {
            move_to(scope, plan.root.id, Status::Pending, Map::new())?;
            "The plan state has been updated to 'todo'."
        }
        _ => "",
    };
    Ok(json!(format!(
        "Subtask at index {idx}, named '{}' is marked as '{wanted}' successfully. {suffix}",
        target.subject
    )))
}

fn finish_subtask(scope: &Scope, args: &Value) -> Answer {
    let plan = conversation(scope).map(|conv| current(scope, conv))?.ok_or_else(|| json!(NO_PLAN))?;
    let idx = args["subtask_idx"].as_i64().unwrap_or(-1);
    let i = match at(&plan, idx) {
        Ok(i) => i,
        Err(text) => return Ok(text),
    };
    if let Some((j, t)) =
        plan.items[..i].iter().enumerate().find(|(_, t)| !matches!(state(t.status), "done" | "abandoned"))
    {
        return Ok(json!(format!(
            "Cannot finish subtask at index {idx} because the previous subtask (at index {j}) named '{}' is not done yet. You should finish the previous subtasks first.",
            t.subject
        )));
    }
    let target = &plan.items[i];
    let outcome = json_fields([("outcome", args["subtask_outcome"].clone())]);
    move_to(scope, target.id, Status::Completed, outcome)?;
    let done = format!("Subtask (at index {idx}) named '{}' is marked as done successfully. ", target.subject);
    match plan.items.get(i + 1) {
        Some(next) => {
            move_to(scope, next.id, Status::InProgress, Map::new())?;
            Ok(json!(format!("{done}The next subtask named '{}' is activated.", next.subject)))
        }
        None => Ok(json!(done)),
    }
}

fn revise_current_plan(scope: &Scope, args: &Value) -> Answer {
    let idx = args["subtask_idx"].as_i64().unwrap_or(-1);
    let action = args["action"].as_str().unwrap_or_default();
    let subtask = args.get("subtask").filter(|s| !s.is_null());
    let mut problems = Vec::new();
    if !matches!(action, "add" | "revise" | "delete") {
        problems.push(format!("Invalid action '{action}'. Must be one of 'add', 'revise', 'delete'."));
    }
    if matches!(action, "add" | "revise") && subtask.is_none() {
        problems.push(format!("The subtask must be provided when action is '{action}', but got None."));
    }
    let plan = conversation(scope).map(|conv| current(scope, conv))?.ok_or_else(|| json!(NO_PLAN))?;
    let n = plan.items.len() as i64;
    if action != "add" && idx >= n {
        problems.push(format!("Invalid subtask_idx '{idx}' for action '{action}'. Must be between 0 and {}.", n - 1));
    }
    if action == "add" && !(0..=n).contains(&idx) {
        problems.push(format!("Invalid subtask_idx '{idx}' for action 'add'. Must be between 0 and {n}."));
    }
    if let Some(first) = problems.first() {
        return Err(json!(format!("Error: {first}")));
    }
    if let Some(s) = subtask {
        if let Err(why) = crate::schema::validate(&subtask_accepted(), s) {
            return Err(json!(format!("Error: subtask: {why}")));
        }
    }
    // Python's negative index, for revise and delete
    let i = if idx < 0 { (n + idx).max(0) as usize } else { idx as usize };
    match action {
        "delete" => {
            let gone = &plan.items[i];
            single::delete(scope, Find::Anywhere, gone.id).map_err(failed)?;
            Ok(json!(format!("Subtask (named '{}') at index {idx} is deleted successfully.", gone.subject)))
        }
        "add" => {
            let new = add_subtask(scope, plan.root.id, subtask.unwrap_or(&Value::Null))?;
            let mut order: Vec<i64> = plan.items.iter().map(|t| t.id).collect();
            order.insert(i, new.id);
            single::reorder(scope, &order);
            Ok(json!(format!("New subtask is added successfully at index {idx}.")))
        }
        _ => {
            let s = subtask.unwrap_or(&Value::Null);
            let mut fields = subtask_fields(scope, plan.root.id, s);
            fields.remove("status");
            let to = status_of(s["state"].as_str().unwrap_or("todo"));
            move_to(scope, plan.items[i].id, to, fields)?;
            Ok(json!(format!("Subtask at index {idx} is revised successfully.")))
        }
    }
}

fn finish_plan(scope: &Scope, args: &Value) -> Answer {
    let Some(plan) = scope.conv().and_then(|conv| current(scope, conv)) else {
        return Ok(json!("There is no plan to finish."));
    };
    let wanted = args["state"].as_str().unwrap_or("done");
    move_to(scope, plan.root.id, status_of(wanted), json_fields([("outcome", args["outcome"].clone())]))?;
    set_mark(scope, plan.root.id, HISTORY)?;
    Ok(json!(format!("The current plan is finished successfully as '{wanted}'.")))
}

fn view_historical_plans(scope: &Scope, _args: &Value) -> Answer {
    let Some(conv) = scope.conv() else { return Ok(json!("")) };
    let plans: Vec<String> = plans(scope, conv, HISTORY)
        .iter()
        .map(|p| {
            format!(
                "Plan named '{}':\n- ID: {}\n- Created at: {}\n- Description: {}\n- State: {}\n",
                p.root.subject,
                p.root.id,
                stamp(p.root.created_us),
                p.root.description.as_deref().unwrap_or_default(),
                state(p.root.status)
            )
        })
        .collect();
    Ok(json!(plans.join("\n")))
}

fn recover_historical_plan(scope: &Scope, args: &Value) -> Answer {
    let id = args["plan_id"].as_str().unwrap_or_default();
    let conv = conversation(scope)?;
    let Some(found) = plans(scope, conv, HISTORY).into_iter().find(|p| p.root.id.to_string() == id) else {
        return Ok(json!(format!("Cannot find the plan with ID '{id}'.")));
    };
    let text = match current(scope, conv) {
        Some(now) => {
            if now.root.status != Status::Completed {
                let why = format!("The plan execution is interrupted by a new plan with ID '{}'.", found.root.id);
                move_to(scope, now.root.id, Status::Canceled, json_fields([("outcome", json!(why))]))?;
            }
            set_mark(scope, now.root.id, HISTORY)?;
            format!(
                "The current plan named '{}' is replaced by the historical plan named '{}' with ID '{}'.",
                now.root.subject, found.root.subject, found.root.id
            )
        }
        None => format!(
            "Historical plan named '{}' with ID '{}' is recovered successfully.",
            found.root.subject, found.root.id
        ),
    };
    set_mark(scope, found.root.id, CURRENT)?;
    Ok(json!(text))
}

/// A conversation's current plan as AgentScope renders it (`Plan.to_markdown`), as a JSON
/// string; null when there is none.
fn list_as(scope: &Scope, conv: &str) -> Value {
    let Some(plan) = current(scope, conv) else { return Value::Null };
    let subtasks: Vec<String> = plan.items.iter().map(|t| subtask_markdown(t, false)).collect();
    json!([
        format!("# {}", plan.root.subject),
        format!("**Description**: {}", plan.root.description.as_deref().unwrap_or_default()),
        format!("**Expected Outcome**: {}", plan.root.completion_criteria.as_deref().unwrap_or_default()),
        format!("**State**: {}", state(plan.root.status)),
        format!("**Created At**: {}", stamp(plan.root.created_us)),
        "## Subtasks".to_string(),
        subtasks.join("\n"),
    ]
    .join("\n"))
}

/// The agentscope dialect.
pub static DIALECT: Dialect = Dialect {
    name: "agentscope",
    aliases: &[],
    runtime: "AgentScope (its PlanNotebook)",
    description: "a sequential plan: subtasks with expected outcomes, one in progress, the next started on finish",
    tools: &[
        &VIEW_SUBTASKS,
        &UPDATE_SUBTASK_STATE,
        &FINISH_SUBTASK,
        &CREATE_PLAN,
        &REVISE_CURRENT_PLAN,
        &FINISH_PLAN,
        &VIEW_HISTORICAL_PLANS,
        &RECOVER_HISTORICAL_PLAN,
    ],
    list_as: Some(ListAs {
        shape: "the current plan's markdown (`Plan.to_markdown`), as a JSON string",
        read: list_as,
    }),
};
