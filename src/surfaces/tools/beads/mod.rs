//! The beads dialect: the tools of beads-mcp (the `bd` issue tracker's MCP server), over the
//! store. An issue is a todo of the list: its beads id the todo's caller id (`bd-` and a
//! base36 hash, as beads makes them; a todo written through a dialect without caller ids
//! shows its store id), its title the subject, `description`, `design` the plan, `acceptance`
//! the completion criteria, `notes`, `labels`, `issue_type`, the assignee the owner, its
//! `external_ref` in its metadata. Statuses: `open` pending, `in_progress`, `blocked`,
//! `deferred`, `closed` completed (a canceled todo is closed too). Priorities 0–4: 0 and 1 are
//! high, 2 medium, 3 and 4 low, the number itself kept in the metadata while it agrees. A
//! `blocks` dependency is a real dependency (`todo.dependencies`); the other kinds are kept
//! as links in the metadata. `claim` is pg_todos' fenced claim, with the agent as assignee.
//! `workspace_root` names the list: `project:<path>`, the list `pg_todos mcp` started in that
//! directory uses; without it, the list in context. Results are beads-mcp's, compact JSON in
//! its models' key order (`{"result": …}` as structured content where FastMCP wraps them);
//! refusals are its texts (`Error calling tool '<tool>': …`), with nothing written.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::{caller_id, error_message, metadata, ordered_json, str_arg, strings, Answer, Tool};
use crate::claims::Refusal;
use crate::error::Error;
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::whole_list::{self, Kept};
use crate::ops::{claiming, dependencies, Find, Scope};
use crate::status::Status;
use crate::todo::Todo;

/// The keys of beads-mcp's models, in the order its JSON writes them (the fields' order;
/// each model's keys keep their relative order in this one list).
const KEY_ORDER: &[&str] = &[
    "id",
    "name",
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "notes",
    "external_ref",
    "status",
    "priority",
    "issue_type",
    "created_at",
    "updated_at",
    "closed_at",
    "assignee",
    "labels",
    "dependency_count",
    "dependent_count",
    "dependencies",
    "dependents",
    "dependency_type",
    "blocked_by_count",
    "blocked_by",
    "action",
    "message",
    "compacted",
    "total_count",
    "preview",
    "preview_count",
    "error",
    "available_tools",
    "hint",
    "summary",
    "total_issues",
    "open_issues",
    "in_progress_issues",
    "closed_issues",
    "blocked_issues",
    "deferred_issues",
    "ready_issues",
    "tombstone_issues",
    "pinned_issues",
    "epics_eligible_for_closure",
    "average_lead_time_hours",
    "recent_activity",
];

/// A result FastMCP wraps (`{"result": …}` as structured content; the model reads the value).
fn wrapped(v: Value) -> Value {
    json!({ "result": v })
}

/// beads-mcp's refusal: the tool's name and bd's words.
fn refused(tool: &str, why: impl std::fmt::Display) -> Value {
    super::error("refused", format!("Error calling tool '{tool}': {why}"))
}

/// pydantic's words for a number out of its range (`limit`, `priority`), as beads-mcp's
/// parameter models give them.
fn out_of_range(model: &str, field: &str, value: i64, low: i64, high: i64) -> Option<Value> {
    let (rule, bound, kind) = if value < low {
        ("greater_than_equal", low, "greater than or equal to")
    } else if value > high {
        ("less_than_equal", high, "less than or equal to")
    } else {
        return None;
    };
    Some(super::error(
        "invalid_arguments",
        format!("1 validation error for {model}\n{field}\n  Input should be {kind} {bound} [type={rule}, input_value={value}, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.13/v/{rule}"),
    ))
}

/// The text the model reads: the JSON in beads-mcp's order (a wrapped result's value; a
/// string as it is; the static catalogs as beads-mcp writes them), or a refusal's words.
fn text(out: &Value) -> String {
    if let Some(m) = error_message(out) {
        return m.to_string();
    }
    if out.get("tools").is_some() && out.get("count").is_some() {
        return DISCOVER.to_string();
    }
    if let Some(info) = out.get("example").and_then(|_| TOOL_INFO.iter().find(|(n, _)| out["name"] == *n)) {
        return info.1.to_string();
    }
    match out.get("result") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => ordered_json(v, KEY_ORDER),
        None => ordered_json(out, KEY_ORDER),
    }
}

/// `discover_tools`' answer, as beads-mcp writes it (its tools but `admin`, which this server does not have).
const DISCOVER: &str = "{\"tools\":{\"ready\":\"Find tasks ready to work on (no blockers)\",\"list\":\"List issues with filters (status, priority, type)\",\"show\":\"Show full details for a specific issue\",\"create\":\"Create a new issue (bug, feature, task, epic)\",\"claim\":\"Atomically claim an issue for work (assignee + in_progress)\",\"update\":\"Update issue status, priority, or assignee\",\"close\":\"Close/complete an issue\",\"reopen\":\"Reopen closed issues\",\"dep\":\"Add dependency between issues\",\"stats\":\"Get issue statistics\",\"blocked\":\"Show blocked issues and what blocks them\",\"context\":\"Manage workspace context (set, show, init)\",\"discover_tools\":\"List available tools (names only)\",\"get_tool_info\":\"Get detailed info for a specific tool\"},\"count\":14,\"hint\":\"Use get_tool_info('tool_name') for full parameters and usage\"}";

/// `get_tool_info`'s answer for each tool, as beads-mcp writes it.
const TOOL_INFO: &[(&str, &str)] = &[
    ("ready", "{\"name\":\"ready\",\"description\":\"Find tasks with no blockers, ready to work on\",\"parameters\":{\"limit\":\"int (1-100, default 10) - Max issues to return\",\"priority\":\"int (0-4, optional) - Filter by priority\",\"issue_type\":\"str (optional) - Filter by type (task, bug, feature, epic, chore, decision, merge-request, or custom)\",\"assignee\":\"str (optional) - Filter by assignee\",\"labels\":\"list[str] (optional) - AND filter: must have ALL labels\",\"labels_any\":\"list[str] (optional) - OR filter: must have at least one\",\"unassigned\":\"bool (default false) - Only unassigned issues\",\"sort_policy\":\"str (optional) - hybrid|priority|oldest\",\"brief\":\"bool (default false) - Return only {id, title, status, priority}\",\"fields\":\"list[str] (optional) - Custom field projection\",\"max_description_length\":\"int (optional) - Truncate descriptions\",\"workspace_root\":\"str (optional) - Workspace path\"},\"returns\":\"List of ready issues (minimal format for context efficiency)\",\"example\":\"ready(limit=5, priority=1, unassigned=True)\"}"),
    ("list", "{\"name\":\"list\",\"description\":\"List all issues with optional filters\",\"parameters\":{\"status\":\"open|in_progress|blocked|deferred|closed or custom (optional)\",\"priority\":\"int 0-4 (optional)\",\"issue_type\":\"bug|feature|task|epic|chore|decision or custom (optional)\",\"assignee\":\"str (optional)\",\"labels\":\"list[str] (optional) - AND filter: must have ALL labels\",\"labels_any\":\"list[str] (optional) - OR filter: must have at least one\",\"query\":\"str (optional) - Search in title (case-insensitive)\",\"unassigned\":\"bool (default false) - Only unassigned issues\",\"limit\":\"int (1-100, default 20)\",\"brief\":\"bool (default false) - Return only {id, title, status, priority}\",\"fields\":\"list[str] (optional) - Custom field projection\",\"max_description_length\":\"int (optional) - Truncate descriptions\",\"workspace_root\":\"str (optional)\"},\"returns\":\"List of issues (compacted if >20 results)\",\"example\":\"list(status='open', labels=['bug'], query='auth')\"}"),
    ("show", "{\"name\":\"show\",\"description\":\"Show full details for a specific issue including dependencies\",\"parameters\":{\"issue_id\":\"str (required) - e.g., 'bd-a1b2'\",\"brief\":\"bool (default false) - Return only {id, title, status, priority}\",\"brief_deps\":\"bool (default false) - Full issue with compact dependencies\",\"fields\":\"list[str] (optional) - Custom field projection\",\"max_description_length\":\"int (optional) - Truncate description\",\"workspace_root\":\"str (optional)\"},\"returns\":\"Full Issue object (or BriefIssue/dict based on params)\",\"example\":\"show(issue_id='bd-a1b2', brief_deps=True)\"}"),
    ("create", "{\"name\":\"create\",\"description\":\"Create a new issue\",\"parameters\":{\"title\":\"str (required)\",\"description\":\"str (default '')\",\"priority\":\"int 0-4 (default 2)\",\"issue_type\":\"bug|feature|task|epic|chore|decision or custom (default task)\",\"assignee\":\"str (optional)\",\"labels\":\"list[str] (optional)\",\"deps\":\"list[str] (optional) - dependency IDs\",\"brief\":\"bool (default true) - Return OperationResult instead of full Issue\",\"workspace_root\":\"str (optional)\"},\"returns\":\"OperationResult {id, action} or full Issue if brief=False\",\"example\":\"create(title='Fix auth bug', priority=1, issue_type='bug')\"}"),
    ("claim", "{\"name\":\"claim\",\"description\":\"Atomically claim an issue for work\",\"parameters\":{\"issue_id\":\"str (required)\",\"brief\":\"bool (default true) - Return OperationResult instead of full Issue\",\"workspace_root\":\"str (optional)\"},\"returns\":\"OperationResult {id, action='claimed'} or full Issue if brief=False\",\"example\":\"claim(issue_id='bd-a1b2')\"}"),
    ("update", "{\"name\":\"update\",\"description\":\"Update an existing issue\",\"parameters\":{\"issue_id\":\"str (required)\",\"status\":\"open|in_progress|blocked|deferred|closed or custom (optional)\",\"priority\":\"int 0-4 (optional)\",\"assignee\":\"str (optional)\",\"title\":\"str (optional)\",\"description\":\"str (optional)\",\"brief\":\"bool (default true) - Return OperationResult instead of full Issue\",\"workspace_root\":\"str (optional)\"},\"returns\":\"OperationResult {id, action} or full Issue if brief=False\",\"example\":\"update(issue_id='bd-a1b2', status='blocked')\"}"),
    ("close", "{\"name\":\"close\",\"description\":\"Close/complete an issue\",\"parameters\":{\"issue_id\":\"str (required)\",\"reason\":\"str (default 'Completed')\",\"brief\":\"bool (default true) - Return OperationResult instead of full Issue\",\"workspace_root\":\"str (optional)\"},\"returns\":\"List of OperationResult or full Issues if brief=False\",\"example\":\"close(issue_id='bd-a1b2', reason='Fixed in PR #123')\"}"),
    ("reopen", "{\"name\":\"reopen\",\"description\":\"Reopen one or more closed issues\",\"parameters\":{\"issue_ids\":\"list[str] (required)\",\"reason\":\"str (optional)\",\"brief\":\"bool (default true) - Return OperationResult instead of full Issue\",\"workspace_root\":\"str (optional)\"},\"returns\":\"List of OperationResult or full Issues if brief=False\",\"example\":\"reopen(issue_ids=['bd-a1b2'], reason='Need more work')\"}"),
    ("dep", "{\"name\":\"dep\",\"description\":\"Add dependency between issues\",\"parameters\":{\"issue_id\":\"str (required) - Issue that has the dependency\",\"depends_on_id\":\"str (required) - Issue it depends on\",\"dep_type\":\"blocks|related|parent-child|discovered-from (default blocks)\",\"workspace_root\":\"str (optional)\"},\"returns\":\"Confirmation message\",\"example\":\"dep(issue_id='bd-f1a2', depends_on_id='bd-a1b2', dep_type='blocks')\"}"),
    ("stats", "{\"name\":\"stats\",\"description\":\"Get issue statistics\",\"parameters\":{\"workspace_root\":\"str (optional)\"},\"returns\":\"Stats object with counts and metrics\",\"example\":\"stats()\"}"),
    ("blocked", "{\"name\":\"blocked\",\"description\":\"Show blocked issues and what blocks them\",\"parameters\":{\"brief\":\"bool (default false) - Return only {id, title, status, priority}\",\"brief_deps\":\"bool (default false) - Full issues with compact dependencies\",\"workspace_root\":\"str (optional)\"},\"returns\":\"List of BlockedIssue (or BriefIssue/dict based on params)\",\"example\":\"blocked(brief=True)\"}"),
    ("context", "{\"name\":\"context\",\"description\":\"Manage workspace context for beads operations\",\"parameters\":{\"action\":\"str (optional) - set|show|init (default: show if no args, set if workspace_root provided)\",\"workspace_root\":\"str (optional) - Workspace path for set/init actions\",\"prefix\":\"str (optional) - Issue ID prefix for init action\"},\"returns\":\"String with context information or confirmation\",\"example\":\"context(action='set', workspace_root='/path/to/project')\"}"),
];

static DISCOVER_TOOLS: Tool = Tool {
    name: "discover_tools",
    description:
        "List available beads tools (names and brief descriptions only). Use get_tool_info() for full details.",
    input_schema: || json!({"additionalProperties": false, "properties": {}, "type": "object"}),
    precheck: None,
    run: discover_tools,
    writes: false,
    text: Some(text),
    accepts: None,
};

static GET_TOOL_INFO: Tool = Tool {
    name: "get_tool_info",
    description: "Get detailed information about a specific beads tool including parameters.",
    input_schema: || json!({"additionalProperties": false, "properties": {"tool_name": {"type": "string", "description": "Name of the tool to get info for"}}, "required": ["tool_name"], "type": "object"}),
    precheck: None,
    run: get_tool_info,
    writes: false,
    text: Some(text),
    accepts: None,
};

static CONTEXT: Tool = Tool {
    name: "context",
    description: "Manage workspace context for beads operations.\nActions:\n- set: Set the workspace root directory (default when workspace_root provided)\n- show: Show current workspace context and database path (default when no args)\n- init: Initialize beads in the current workspace directory",
    input_schema: || serde_json::from_str(CONTEXT_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: context_tool,
    writes: false,
    text: Some(text),
    accepts: None,
};

const CONTEXT_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"action": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Action to perform - set, show, or init (inferred if not provided)"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Workspace path for set/init actions"}, "prefix": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Issue ID prefix for init action"}}, "type": "object"}"#;

static READY: Tool = Tool {
    name: "ready",
    description:
        "Find tasks that have no blockers and are ready to be worked on. Returns minimal format for context efficiency.",
    input_schema: || serde_json::from_str(READY_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: ready_tool,
    writes: false,
    text: Some(text),
    accepts: None,
};

const READY_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"limit": {"default": 10, "type": "integer", "description": "Maximum issues to return (1-100, default 10)"}, "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Filter by priority level (0-4)"}, "issue_type": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by type (task, bug, feature, epic, chore, decision, merge-request, or custom)"}, "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by assignee"}, "labels": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Filter by labels (AND: must have ALL specified labels)"}, "labels_any": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Filter by labels (OR: must have at least one)"}, "unassigned": {"default": false, "type": "boolean", "description": "Filter to only unassigned issues"}, "sort_policy": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Sort policy: hybrid (default), priority, oldest"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Workspace path override"}, "brief": {"default": false, "type": "boolean", "description": "If True, return only {id, title, status} (~97% smaller)"}, "fields": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Return only specified fields (custom projections)"}, "max_description_length": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Truncate descriptions to this length"}}, "type": "object"}"#;

static LIST: Tool = Tool {
    name: "list",
    description:
        "List all issues with optional filters. When status='blocked', returns BlockedIssue with blocked_by info.",
    input_schema: || serde_json::from_str(LIST_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: list_tool,
    writes: false,
    text: Some(text),
    accepts: None,
};

const LIST_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"status": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by status (open, in_progress, blocked, closed)"}, "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Filter by priority level (0-4)"}, "issue_type": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by type (bug, feature, task, epic, chore, decision)"}, "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by assignee"}, "labels": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Filter by labels (AND: must have ALL specified labels)"}, "labels_any": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Filter by labels (OR: must have at least one)"}, "query": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Search in title (case-insensitive substring)"}, "unassigned": {"default": false, "type": "boolean", "description": "Filter to only unassigned issues"}, "limit": {"default": 20, "type": "integer", "description": "Maximum issues to return (1-100, default 20)"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Workspace path override"}, "brief": {"default": false, "type": "boolean", "description": "If True, return only {id, title, status} (~97% smaller)"}, "fields": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Return only specified fields (custom projections)"}, "max_description_length": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Truncate descriptions to this length"}}, "type": "object"}"#;

static SHOW: Tool = Tool {
    name: "show",
    description: "Show detailed information about a specific issue including dependencies and dependents.",
    input_schema: || serde_json::from_str(SHOW_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: show_tool,
    writes: false,
    text: Some(text),
    accepts: None,
};

const SHOW_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string", "description": "The issue ID to show (e.g., 'bd-a1b2')"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Workspace path override"}, "brief": {"default": false, "type": "boolean", "description": "If True, return only {id, title, status, priority}"}, "brief_deps": {"default": false, "type": "boolean", "description": "If True, return full issue but with compact dependencies"}, "fields": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Return only specified fields (custom projections)"}, "max_description_length": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Truncate description to this length"}}, "required": ["issue_id"], "type": "object"}"#;

static CREATE: Tool = Tool {
    name: "create",
    description: "Create a new issue (bug, feature, task, epic, chore, or decision) with optional design,\nacceptance criteria, and dependencies.",
    input_schema: || serde_json::from_str(CREATE_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: create_tool,
    writes: true,
    text: Some(text),
    accepts: None,
};

const CREATE_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"title": {"type": "string"}, "description": {"default": "", "type": "string"}, "design": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "acceptance": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "external_ref": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "priority": {"default": 2, "type": "integer"}, "issue_type": {"default": "task", "type": "string"}, "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "labels": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null}, "id": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "deps": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult; if False, return full Issue"}}, "required": ["title"], "type": "object"}"#;

static CLAIM: Tool = Tool {
    name: "claim",
    description: "Atomically claim an issue for work (assignee + in_progress in one CAS-style operation).",
    input_schema: || serde_json::from_str(CLAIM_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: claim_tool,
    writes: true,
    text: Some(text),
    accepts: None,
};

const CLAIM_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult; if False, return full Issue"}}, "required": ["issue_id"], "type": "object"}"#;

static UPDATE: Tool = Tool {
    name: "update",
    description: "Update an existing issue's status, priority, assignee, description, design notes,\nor acceptance criteria. For atomic start-work semantics, prefer claim(issue_id).",
    input_schema: || serde_json::from_str(UPDATE_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: update_tool,
    writes: true,
    text: Some(text),
    accepts: None,
};

const UPDATE_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string"}, "status": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}, "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "title": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "description": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "design": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "acceptance_criteria": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "notes": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "external_ref": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult; if False, return full Issue"}}, "required": ["issue_id"], "type": "object"}"#;

static CLOSE: Tool = Tool {
    name: "close",
    description: "Close (complete) an issue. Mark work as done when you've finished implementing/fixing it.",
    input_schema: || serde_json::from_str(CLOSE_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: close_tool,
    writes: true,
    text: Some(text),
    accepts: None,
};

const CLOSE_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string"}, "reason": {"default": "Completed", "type": "string"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult list; if False, return full Issues"}}, "required": ["issue_id"], "type": "object"}"#;

static REOPEN: Tool = Tool {
    name: "reopen",
    description: "Reopen one or more closed issues. Sets status to 'open' and clears closed_at timestamp.",
    input_schema: || serde_json::from_str(REOPEN_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: reopen_tool,
    writes: true,
    text: Some(text),
    accepts: None,
};

const REOPEN_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_ids": {"items": {"type": "string"}, "type": "array"}, "reason": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult list; if False, return full Issues"}}, "required": ["issue_ids"], "type": "object"}"#;

static DEP: Tool = Tool {
    name: "dep",
    description: "Add a dependency between issues. Common types: blocks (hard blocker),\nrelated (soft link), parent-child (epic/subtask), discovered-from (found during work).\nThe full set of supported dep types lives in internal/types/types.go and is\nvalidated by the bd CLI; pass any of them as a string.",
    input_schema: || serde_json::from_str(DEP_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: dep_tool,
    writes: true,
    text: Some(text),
    accepts: None,
};

const DEP_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string"}, "depends_on_id": {"type": "string"}, "dep_type": {"default": "blocks", "type": "string"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}}, "required": ["issue_id", "depends_on_id"], "type": "object"}"#;

static STATS: Tool = Tool {
    name: "stats",
    description: "Get statistics: total issues, open, in_progress, closed, blocked, ready, and average lead time.",
    input_schema: || serde_json::from_str(STATS_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: stats_tool,
    writes: false,
    text: Some(text),
    accepts: None,
};

const STATS_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}}, "type": "object"}"#;

static BLOCKED: Tool = Tool {
    name: "blocked",
    description: "Get blocked issues showing what dependencies are blocking them from being worked on.",
    input_schema: || serde_json::from_str(BLOCKED_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: blocked_tool,
    writes: false,
    text: Some(text),
    accepts: None,
};

const BLOCKED_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": false, "type": "boolean", "description": "If True, return only {id, title, status, priority} per issue"}, "brief_deps": {"default": false, "type": "boolean", "description": "If True, return full issues but with compact dependencies"}}, "type": "object"}"#;

/// The metadata keys beads keeps beside the columns: its 0–4 priority, the external
/// reference, the links that do not block (`[{"id", "type"}]`).
const PRIORITY: &str = "beads_priority";
const EXTERNAL_REF: &str = "external_ref";
const LINKS: &str = "beads_links";
/// The dependency kinds that hold an issue back: real dependencies in the store.
const BLOCKING: &[&str] = &["blocks", "conditional-blocks", "waits-for"];
const NO_WORKSPACE: &str = "No beads workspace found. Either:\n  1. Call context(workspace_root=\"/path/to/project\"), OR\n  2. Run from a directory containing .beads/, OR\n  3. Set BEADS_WORKING_DIR environment variable";

/// The list the call works on, as a scope: `workspace_root`'s project list, else the
/// conversation in context.
fn workspace(scope: &Scope, tool: &str, args: &Value) -> Result<Scope, Value> {
    let conversation = match args.get("workspace_root").and_then(Value::as_str).filter(|r| !r.trim().is_empty()) {
        Some(root) => format!("project:{}", root.trim_end_matches('/')),
        None => scope.conv().ok_or_else(|| refused(tool, NO_WORKSPACE))?.to_string(),
    };
    Ok(Scope { conversation: Some(conversation), ..scope.clone() })
}

/// An issue linked to another, with the kind of the link.
type Linked<'a> = (&'a Todo, String);

/// The list's issues (its todos that are not archived), and the dependencies among them and
/// onto other todos.
struct Issues {
    todos: Vec<Todo>,
    /// (todo, waits for, the awaited one is open)
    edges: Vec<(i64, i64, bool)>,
    /// where each todo is in `todos`, by its store id
    at: HashMap<i64, usize>,
    /// where each todo is in `todos`, by the beads id that names it: its caller id, else (a
    /// todo without one) its store id; a caller id wins over a store id, as `CallerIds` finds
    by_beads_id: HashMap<String, usize>,
}

impl Issues {
    fn read(scope: &Scope) -> Issues {
        let conv = scope.conv().unwrap_or_default();
        let todos = whole_list::stored(scope, conv, Kept::All);
        let ids: Vec<i64> = todos.iter().map(|t| t.id).collect();
        let edges = if ids.is_empty() { Vec::new() } else { crate::store::edges::touching(&scope.tenant, &ids) };
        let at = todos.iter().enumerate().map(|(i, t)| (t.id, i)).collect();
        let mut by_beads_id: HashMap<String, usize> = todos
            .iter()
            .enumerate()
            .filter(|(_, t)| t.external_id.is_none())
            .map(|(i, t)| (t.id.to_string(), i))
            .collect();
        by_beads_id.extend(todos.iter().enumerate().filter_map(|(i, t)| Some((t.external_id.clone()?, i))));
        Issues { todos, edges, at, by_beads_id }
    }

    fn by_id(&self, id: i64) -> Option<&Todo> {
        self.at.get(&id).map(|i| &self.todos[*i])
    }

    /// The issue a beads id names (a todo's caller id, else its store id).
    fn find(&self, beads_id: &str) -> Option<&Todo> {
        self.by_beads_id.get(beads_id).map(|i| &self.todos[*i])
    }

    /// The open todos `t` waits for, by beads id.
    fn blockers(&self, t: &Todo) -> Vec<String> {
        self.edges
            .iter()
            .filter(|(a, _, open)| *a == t.id && *open)
            .map(|(_, b, _)| self.by_id(*b).map_or_else(|| b.to_string(), caller_id))
            .collect()
    }

    /// (what it depends on, what depends on it), with their kinds.
    fn links(&self, t: &Todo) -> (Vec<Linked<'_>>, Vec<Linked<'_>>) {
        let mut on: Vec<Linked<'_>> = self
            .edges
            .iter()
            .filter(|(a, _, _)| *a == t.id)
            .filter_map(|(_, b, _)| Some((self.by_id(*b)?, "blocks".to_string())))
            .collect();
        let mut by: Vec<Linked<'_>> = self
            .edges
            .iter()
            .filter(|(_, b, _)| *b == t.id)
            .filter_map(|(a, _, _)| Some((self.by_id(*a)?, "blocks".to_string())))
            .collect();
        for other in &self.todos {
            for (id, kind) in soft_links(other) {
                if other.id == t.id {
                    if let Some(target) = self.find(&id) {
                        on.push((target, kind));
                    }
                } else if id == caller_id(t) {
                    by.push((other, kind));
                }
            }
        }
        (on, by)
    }
}

/// A todo's links that do not block: (beads id, kind).
fn soft_links(t: &Todo) -> Vec<(String, String)> {
    metadata(t)
        .get(LINKS)
        .and_then(Value::as_array)
        .map(|l| {
            l.iter().filter_map(|x| Some((x["id"].as_str()?.to_string(), x["type"].as_str()?.to_string()))).collect()
        })
        .unwrap_or_default()
}

/// beads' status word for a todo.
fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pending => "open",
        Status::InProgress | Status::Review => "in_progress",
        Status::Blocked => "blocked",
        Status::Deferred => "deferred",
        Status::Completed | Status::Canceled => "closed",
    }
}

/// The store's status for a beads status word; None for one beads has that the store does not.
fn status_of(word: &str) -> Option<Status> {
    match word {
        "open" => Some(Status::Pending),
        "in_progress" => Some(Status::InProgress),
        "blocked" => Some(Status::Blocked),
        "deferred" => Some(Status::Deferred),
        "closed" => Some(Status::Completed),
        _ => None,
    }
}

/// The store's priority for beads' 0–4.
fn priority_word(p: i64) -> &'static str {
    match p {
        0 | 1 => "high",
        2 => "medium",
        _ => "low",
    }
}

/// beads' 0–4 for a todo: the number it was given while it still agrees with the priority,
/// else the priority's (high 1, medium or none 2, low 3).
fn priority_num(t: &Todo) -> i64 {
    let word = t.priority.as_deref().unwrap_or("medium");
    match metadata(t).get(PRIORITY).and_then(Value::as_i64) {
        Some(p) if priority_word(p) == word => p,
        _ => match word {
            "high" => 1,
            "low" => 3,
            _ => 2,
        },
    }
}

/// A time as pydantic writes it: UTC with `Z`, microseconds when there are some.
fn stamp(us: i64) -> String {
    let base = &crate::time::iso8601(us)[..19];
    match us.rem_euclid(1_000_000) {
        0 => format!("{base}Z"),
        frac => format!("{base}.{frac:06}Z"),
    }
}

/// An issue in beads' full model (`Issue` without its links: `LinkedIssue` adds the kind).
fn issue_base(t: &Todo, dependency_count: usize, dependent_count: usize) -> Map<String, Value> {
    let meta = metadata(t);
    let mut o = Map::new();
    o.insert("id".into(), json!(caller_id(t)));
    o.insert("title".into(), json!(t.subject));
    o.insert("description".into(), json!(t.description.clone().unwrap_or_default()));
    o.insert("design".into(), json!(t.plan));
    o.insert("acceptance_criteria".into(), json!(t.completion_criteria));
    o.insert("notes".into(), json!(t.notes));
    o.insert("external_ref".into(), meta.get(EXTERNAL_REF).cloned().unwrap_or(Value::Null));
    o.insert("status".into(), json!(status_word(t.status)));
    o.insert("priority".into(), json!(priority_num(t)));
    o.insert("issue_type".into(), json!(t.issue_type.clone().unwrap_or_else(|| "task".into())));
    o.insert("created_at".into(), json!(stamp(t.created_us)));
    o.insert("updated_at".into(), json!(stamp(t.updated_us)));
    o.insert("closed_at".into(), json!(t.completed_us.map(stamp)));
    o.insert("assignee".into(), json!(t.owner));
    o.insert("labels".into(), json!(t.labels));
    o.insert("dependency_count".into(), json!(dependency_count));
    o.insert("dependent_count".into(), json!(dependent_count));
    o
}

/// The full `Issue`: with what it depends on and what depends on it (`show` reports no
/// counts, as bd's `show` gives none).
fn issue_full(issues: &Issues, t: &Todo) -> Value {
    let (on, by) = issues.links(t);
    let linked = |l: &[Linked<'_>]| -> Value {
        l.iter()
            .map(|(x, kind)| {
                let mut o = issue_base(x, 0, 0);
                o.insert("dependency_type".into(), json!(kind));
                Value::Object(o)
            })
            .collect()
    };
    let mut o = issue_base(t, 0, 0);
    o.insert("dependencies".into(), linked(&on));
    o.insert("dependents".into(), linked(&by));
    Value::Object(o)
}

/// `IssueMinimal`: the default element of `ready` and `list`.
fn minimal(issues: &Issues, t: &Todo) -> Value {
    let (on, by) = issues.links(t);
    json!({"id": caller_id(t), "title": t.subject, "status": status_word(t.status), "priority": priority_num(t),
           "issue_type": t.issue_type.clone().unwrap_or_else(|| "task".into()), "assignee": t.owner,
           "labels": t.labels, "dependency_count": on.len(), "dependent_count": by.len()})
}

fn brief(t: &Todo) -> Value {
    json!({"id": caller_id(t), "title": t.subject, "status": status_word(t.status), "priority": priority_num(t)})
}

/// A non-empty string argument (beads-mcp drops empty ones).
fn given<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The filters `ready` and `list` share.
fn filtered<'a>(issues: &'a Issues, args: &Value, keep: impl Fn(&Todo) -> bool) -> Vec<&'a Todo> {
    let labels = strings(args, "labels");
    let labels_any = strings(args, "labels_any");
    let unassigned = args.get("unassigned").and_then(Value::as_bool).unwrap_or(false);
    let query = given(args, "query").map(str::to_lowercase);
    let mut found: Vec<&Todo> = issues
        .todos
        .iter()
        .filter(|t| keep(t))
        .filter(|t| args.get("priority").and_then(Value::as_i64).is_none_or(|p| priority_num(t) == p))
        .filter(|t| given(args, "issue_type").is_none_or(|k| t.issue_type.as_deref().unwrap_or("task") == k))
        .filter(|t| {
            if unassigned {
                t.owner.is_none()
            } else {
                given(args, "assignee").is_none_or(|a| t.owner.as_deref() == Some(a))
            }
        })
        .filter(|t| labels.iter().all(|l| t.labels.contains(l)))
        .filter(|t| labels_any.is_empty() || labels_any.iter().any(|l| t.labels.contains(l)))
        .filter(|t| query.as_ref().is_none_or(|q| t.subject.to_lowercase().contains(q)))
        .collect();
    // bd's order: priority, newest first, then id
    found.sort_by(|a, b| {
        (priority_num(a), std::cmp::Reverse(a.created_us), caller_id(a)).cmp(&(
            priority_num(b),
            std::cmp::Reverse(b.created_us),
            caller_id(b),
        ))
    });
    found
}

/// The answer of `ready` and `list`: brief, the fields asked for, or the minimal issues
/// (compacted past 20: five shown, with a hint).
fn listing(issues: &Issues, found: &[&Todo], args: &Value, tool: &str, hint: &dyn Fn(usize) -> String) -> Answer {
    const THRESHOLD: usize = 20;
    const PREVIEW: usize = 5;
    if args.get("brief").and_then(Value::as_bool).unwrap_or(false) {
        return Ok(wrapped(found.iter().map(|t| brief(t)).collect()));
    }
    if let Some(fields) = args.get("fields").and_then(Value::as_array).filter(|f| !f.is_empty()) {
        let wanted: Vec<&str> = fields.iter().filter_map(Value::as_str).collect();
        let out: Result<Vec<Value>, Value> = found.iter().map(|t| project(issues, t, &wanted, tool)).collect();
        return Ok(wrapped(Value::Array(out?)));
    }
    let all: Vec<Value> = found.iter().map(|t| minimal(issues, t)).collect();
    if all.len() > THRESHOLD {
        let n = all.len();
        let preview: Vec<Value> = all.into_iter().take(PREVIEW).collect();
        return Ok(wrapped(json!({"compacted": true, "total_count": n, "preview": preview,
                                 "preview_count": PREVIEW, "hint": hint(n)})));
    }
    Ok(wrapped(Value::Array(all)))
}

/// The fields of an issue asked for (`fields`), in the order asked.
fn project(issues: &Issues, t: &Todo, fields: &[&str], tool: &str) -> Result<Value, Value> {
    let full = issue_full(issues, t);
    let invalid: Vec<&str> = fields.iter().copied().filter(|f| full.get(*f).is_none()).collect();
    if !invalid.is_empty() {
        let mut bad: Vec<&str> = invalid;
        bad.sort_unstable();
        let mut valid: Vec<&str> = full.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
        valid.sort_unstable();
        let list = |l: &[&str]| format!("[{}]", l.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(", "));
        return Err(refused(tool, format!("Invalid field(s): {}. Valid fields: {}", list(&bad), list(&valid))));
    }
    Ok(Value::Object(fields.iter().map(|f| (f.to_string(), full[*f].clone())).collect()))
}

fn discover_tools(_scope: &Scope, _args: &Value) -> Answer {
    Ok(serde_json::from_str(DISCOVER).expect("the catalog is JSON"))
}

fn get_tool_info(_scope: &Scope, args: &Value) -> Answer {
    let name = str_arg(args, "tool_name");
    match TOOL_INFO.iter().find(|(n, _)| *n == name) {
        Some((_, info)) => Ok(serde_json::from_str(info).expect("the catalog is JSON")),
        None => Ok(json!({"error": format!("Unknown tool: {name}"),
                          "available_tools": TOOL_INFO.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
                          "hint": "Use discover_tools() to see all available tools"})),
    }
}

fn context_tool(scope: &Scope, args: &Value) -> Answer {
    let root = given(args, "workspace_root");
    let action = args.get("action").and_then(Value::as_str).map(str::to_lowercase).unwrap_or_else(|| {
        if root.is_some() {
            "set".into()
        } else {
            "show".into()
        }
    });
    let text = match (action.as_str(), root) {
        ("set", None) => "Error: workspace_root is required for 'set' action".to_string(),
        ("set" | "init", Some(root)) => format!(
            "Context set successfully:\n  Workspace root: {root}\n  Database: pg_todos, the list project:{}\n  (each call names it with workspace_root; without it a call works on the server's list)",
            root.trim_end_matches('/')
        ),
        ("init", None) => "Error: Context must be set before init.\nUse context(action='set', workspace_root='/path/to/project') first.".to_string(),
        ("show", _) => format!(
            "Workspace root: {}\nDatabase: pg_todos\nActor: {}",
            scope.conv().unwrap_or("NOT SET"),
            scope.agent.as_deref().unwrap_or("NOT SET")
        ),
        (other, _) => format!("Error: Unknown action '{other}'. Valid actions: set, show, init"),
    };
    Ok(json!({ "result": text }))
}

fn ready_tool(scope: &Scope, args: &Value) -> Answer {
    let limit = args.get("limit").and_then(Value::as_i64).unwrap_or(10);
    if let Some(e) = out_of_range("ReadyWorkParams", "limit", limit, 1, 100) {
        return Err(e);
    }
    if let Some(e) =
        args.get("priority").and_then(Value::as_i64).and_then(|p| out_of_range("ReadyWorkParams", "priority", p, 0, 4))
    {
        return Err(e);
    }
    let scope = workspace(scope, "ready", args)?;
    let issues = Issues::read(&scope);
    let mut found = filtered(&issues, args, |t| t.status == Status::Pending && issues.blockers(t).is_empty());
    found.truncate(limit as usize);
    listing(&issues, &found, args, "ready", &|n| {
        format!("Showing 5 of {n} ready issues. Use show(issue_id) for full details.")
    })
}

fn list_tool(scope: &Scope, args: &Value) -> Answer {
    let limit = args.get("limit").and_then(Value::as_i64).unwrap_or(20);
    if let Some(e) = out_of_range("ListIssuesParams", "limit", limit, 1, 100) {
        return Err(e);
    }
    if let Some(e) =
        args.get("priority").and_then(Value::as_i64).and_then(|p| out_of_range("ListIssuesParams", "priority", p, 0, 4))
    {
        return Err(e);
    }
    let scope = workspace(scope, "list", args)?;
    let statuses: Option<Vec<&str>> = given(args, "status").map(|s| s.split(',').map(str::trim).collect());
    if let Some(bad) = statuses.iter().flatten().find(|s| status_of(s).is_none()) {
        return Err(refused("list", invalid_status(bad)));
    }
    let issues = Issues::read(&scope);
    let mut found = filtered(&issues, args, |t| match &statuses {
        Some(s) => s.contains(&status_word(t.status)),
        None => t.status.is_open(),
    });
    found.truncate(limit as usize);
    listing(&issues, &found, args, "list", &|n| {
        format!("Showing 5 of {n} issues. Use show(issue_id) for full details or add filters to narrow results.")
    })
}

/// bd's refusal of a status it does not have (this store has no pinned or hooked issues).
fn invalid_status(s: &str) -> String {
    format!("bd command failed: invalid status \"{s}\" (valid: open, in_progress, blocked, deferred, closed)\n")
}

fn not_found(tool: &str, verb: &str, id: &str) -> Value {
    refused(tool, format!("bd command failed: Error {verb} {id}: no issue found matching \"{id}\"\n"))
}

fn show_tool(scope: &Scope, args: &Value) -> Answer {
    let scope = workspace(scope, "show", args)?;
    let issues = Issues::read(&scope);
    let id = str_arg(args, "issue_id");
    let t = issues.find(id).ok_or_else(|| not_found("show", "fetching", id))?;
    if args.get("brief").and_then(Value::as_bool).unwrap_or(false) {
        return Ok(wrapped(brief(t)));
    }
    let mut full = issue_full(&issues, t);
    if let Some(n) = args.get("max_description_length").and_then(Value::as_u64).filter(|n| *n > 0) {
        let d = t.description.clone().unwrap_or_default();
        if d.chars().count() > n as usize {
            full["description"] = json!(format!("{}...", d.chars().take(n as usize).collect::<String>()));
        }
    }
    if args.get("brief_deps").and_then(Value::as_bool).unwrap_or(false) {
        for key in ["dependencies", "dependents"] {
            let compact: Vec<Value> = full[key]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|l| json!({"id": l["id"], "title": l["title"], "status": l["status"], "priority": l["priority"], "dependency_type": l["dependency_type"]}))
                .collect();
            full[key] = Value::Array(compact);
        }
    }
    if let Some(fields) = args.get("fields").and_then(Value::as_array).filter(|f| !f.is_empty()) {
        let wanted: Vec<&str> = fields.iter().filter_map(Value::as_str).collect();
        return Ok(wrapped(project(&issues, t, &wanted, "show")?));
    }
    Ok(wrapped(full))
}

/// A new beads id: the prefix `bd-` and a base36 hash of the issue and the time, its length
/// growing with the list (3 up to 8 characters, as beads picks it), unused in the list.
fn new_id(issues: &Issues, title: &str, description: &str, actor: &str) -> String {
    use sha2::{Digest, Sha256};
    let n = issues.todos.len() as f64;
    let length = (3..=8).find(|l| 1.0 - (-(n * n) / (2.0 * 36f64.powi(*l))).exp() <= 0.25).unwrap_or(8);
    let now = crate::time::now_us();
    for length in length..=8 {
        for nonce in 0..10 {
            let digest = Sha256::digest(format!("{title}|{description}|{actor}|{now}|{nonce}").as_bytes());
            let mut value: u128 = digest[..8].iter().fold(0, |v, b| (v << 8) | u128::from(*b));
            let mut hash = String::new();
            for _ in 0..length {
                hash.insert(0, char::from_digit((value % 36) as u32, 36).unwrap_or('0'));
                value /= 36;
            }
            let id = format!("bd-{hash}");
            if issues.find(&id).is_none() {
                return id;
            }
        }
    }
    format!("bd-{now:x}")
}

fn create_tool(scope: &Scope, args: &Value) -> Answer {
    let priority = args.get("priority").and_then(Value::as_i64).unwrap_or(2);
    if let Some(e) = out_of_range("CreateIssueParams", "priority", priority, 0, 4) {
        return Err(e);
    }
    let scope = workspace(scope, "create", args)?;
    let issues = Issues::read(&scope);
    let title = str_arg(args, "title");
    if title.trim().is_empty() {
        return Err(refused("create", "bd command failed: title is required\n"));
    }
    let description = str_arg(args, "description");
    let id = match given(args, "id") {
        Some(id) if issues.find(id).is_some() => {
            return Err(refused("create", format!("bd command failed: issue {id} already exists\n")));
        }
        Some(id) => id.to_string(),
        None => new_id(&issues, title, description, scope.agent.as_deref().unwrap_or("unknown")),
    };
    let mut meta = Map::new();
    meta.insert(PRIORITY.into(), json!(priority));
    if let Some(r) = given(args, "external_ref") {
        meta.insert(EXTERNAL_REF.into(), json!(r));
    }
    // deps: `id` or `type:id`; `blocks:id` is the other way round (the new issue blocks it)
    let mut waits_for = Vec::new();
    let mut blocks = Vec::new();
    let mut links = Vec::new();
    for dep in strings(args, "deps") {
        let (kind, other) = dep.split_once(':').unwrap_or(("depends-on", dep.as_str()));
        let Some(target) = issues.find(other) else { continue }; // bd only warns
        match kind {
            "blocks" => blocks.push(target.id),
            "depends-on" | "blocked-by" | "conditional-blocks" | "waits-for" => waits_for.push(target.id),
            _ => links.push(json!({"id": other, "type": kind})),
        }
    }
    if !links.is_empty() {
        meta.insert(LINKS.into(), Value::Array(links));
    }
    let fields = json_fields([
        ("conversation_id", json!(scope.conv())),
        ("subject", json!(title)),
        ("description", json!(Some(description).filter(|d| !d.is_empty()))),
        ("plan", json!(given(args, "design"))),
        ("completion_criteria", json!(given(args, "acceptance"))),
        ("priority", json!(priority_word(priority))),
        ("issue_type", json!(given(args, "issue_type").unwrap_or("task"))),
        ("owner", json!(given(args, "assignee"))),
        ("labels", json!(Some(strings(args, "labels")).filter(|l| !l.is_empty()))),
        ("external_id", json!(id)),
        ("metadata", Value::Object(meta)),
    ]);
    let t = single::add(&scope, NewTodo { fields, ..NewTodo::default() })
        .map_err(|e| refused("create", bd_failed(&issues, e)))?;
    for on in waits_for {
        let _ = dependencies::block(&scope, t.id, on);
    }
    for other in blocks {
        let _ = dependencies::block(&scope, other, t.id);
    }
    if args.get("brief").and_then(Value::as_bool).unwrap_or(true) {
        return Ok(wrapped(json!({"id": id, "action": "created", "message": null})));
    }
    let issues = Issues::read(&scope);
    Ok(wrapped(issues.find(&id).map(|t| issue_full(&issues, t)).unwrap_or(Value::Null)))
}

/// An operation's refusal naming issues by their beads ids (never the store's).
fn named(issues: &Issues, e: impl std::fmt::Display) -> String {
    crate::error::named_ids(&e.to_string(), |id| issues.by_id(id).map(caller_id))
}

/// An operation's refusal as bd words it, naming issues by their beads ids (never the
/// store's).
fn bd_failed(issues: &Issues, e: Error) -> String {
    format!("bd command failed: {}\n", named(issues, e))
}

fn claim_tool(scope: &Scope, args: &Value) -> Answer {
    let scope = workspace(scope, "claim", args)?;
    let issues = Issues::read(&scope);
    let id = str_arg(args, "issue_id");
    let t = issues.find(id).ok_or_else(|| not_found("claim", "resolving", id))?;
    let claiming = |why: String| refused("claim", format!("bd command failed: Error claiming {id}: {why}\n"));
    match claiming::claim(&scope, Some(t.id), None) {
        Ok(_) => {}
        Err(Error::Claim(Refusal::HeldBy { holder, .. })) => {
            return Err(claiming(format!("issue already claimed by {holder}")))
        }
        Err(Error::Claim(Refusal::NotOpen { status, .. })) => {
            return Err(claiming(format!("issue not claimable: status {}", status_word(status))))
        }
        Err(Error::Claim(Refusal::Blocked { .. })) => {
            return Err(claiming(format!(
                "issue not claimable: blocked by open issues [{}]",
                issues.blockers(t).join(", ")
            )))
        }
        Err(e) => return Err(claiming(named(&issues, e))),
    }
    // beads' claim makes the claimer the assignee
    let owner = json_fields([("owner", json!(scope.agent))]);
    single::change(&scope, Find::Anywhere, t.id, Change::fields(owner))
        .map_err(|e| refused("claim", bd_failed(&issues, e)))?;
    if args.get("brief").and_then(Value::as_bool).unwrap_or(true) {
        return Ok(wrapped(json!({"id": caller_id(t), "action": "claimed", "message": null})));
    }
    let issues = Issues::read(&scope);
    Ok(wrapped(issues.by_id(t.id).map(|t| issue_full(&issues, t)).unwrap_or(Value::Null)))
}

/// Closes issue `t` with `reason`: refused while it waits for open issues, as bd refuses.
fn close(scope: &Scope, issues: &Issues, t: &Todo, reason: &str, tool: &str, id: &str) -> Result<(), Value> {
    let blockers = issues.blockers(t);
    if !blockers.is_empty() {
        return Err(refused(
            tool,
            format!(
                "bd command failed: cannot close {id}: blocked by open issues [{}] (use --force to override)\n",
                blockers.join(", ")
            ),
        ));
    }
    let change = Change {
        status: Some(Status::Completed),
        via_reopen: true,
        fields: json_fields([("outcome", json!(reason))]),
        ..Change::default()
    };
    single::change(scope, Find::Anywhere, t.id, change).map(|_| ()).map_err(|e| refused(tool, bd_failed(issues, e)))
}

fn update_tool(scope: &Scope, args: &Value) -> Answer {
    if let Some(e) = args
        .get("priority")
        .and_then(Value::as_i64)
        .and_then(|p| out_of_range("UpdateIssueParams", "priority", p, 0, 4))
    {
        return Err(e);
    }
    let scope = workspace(scope, "update", args)?;
    let issues = Issues::read(&scope);
    let id = str_arg(args, "issue_id");
    let t = issues.find(id).ok_or_else(|| not_found("update", "resolving", id))?;
    let brief = args.get("brief").and_then(Value::as_bool).unwrap_or(true);
    match given(args, "status") {
        Some("closed") => {
            close(&scope, &issues, t, "Closed via update", "update", id)?;
            return Ok(wrapped(json!({"id": id, "action": "closed", "message": "Closed via update"})));
        }
        Some("open") if !t.status.is_open() => {
            reopen(&scope, t).map_err(|e| refused("update", bd_failed(&issues, e)))?;
            return Ok(wrapped(json!([{"id": caller_id(t), "action": "updated", "message": null}])));
        }
        _ => {}
    }
    let status = match given(args, "status") {
        None => None,
        Some(s) => Some(status_of(s).ok_or_else(|| refused("update", invalid_status(s)))?),
    };
    let mut fields = Map::new();
    for (key, column) in [
        ("title", "subject"),
        ("description", "description"),
        ("design", "plan"),
        ("acceptance_criteria", "completion_criteria"),
        ("notes", "notes"),
        ("assignee", "owner"),
    ] {
        if let Some(v) = given(args, key) {
            fields.insert(column.into(), json!(v));
        }
    }
    let mut meta = Map::new();
    if let Some(p) = args.get("priority").and_then(Value::as_i64) {
        fields.insert("priority".into(), json!(priority_word(p)));
        meta.insert(PRIORITY.into(), json!(p));
    }
    if let Some(r) = given(args, "external_ref") {
        meta.insert(EXTERNAL_REF.into(), json!(r));
    }
    if fields.is_empty() && meta.is_empty() && status.is_none() {
        return Err(refused("update", "Failed to parse bd JSON output: No updates specified"));
    }
    let change =
        Change { status, via_reopen: true, fields, metadata: (!meta.is_empty()).then_some(meta), ..Change::default() };
    single::change(&scope, Find::Anywhere, t.id, change).map_err(|e| refused("update", bd_failed(&issues, e)))?;
    if brief {
        return Ok(wrapped(json!({"id": caller_id(t), "action": "updated", "message": null})));
    }
    let issues = Issues::read(&scope);
    Ok(wrapped(issues.by_id(t.id).map(|t| issue_full(&issues, t)).unwrap_or(Value::Null)))
}

fn reopen(scope: &Scope, t: &Todo) -> Result<(), Error> {
    let change = Change { status: Some(Status::Pending), via_reopen: true, ..Change::default() };
    single::change(scope, Find::Anywhere, t.id, change).map(|_| ())
}

fn close_tool(scope: &Scope, args: &Value) -> Answer {
    let scope = workspace(scope, "close", args)?;
    let issues = Issues::read(&scope);
    let id = str_arg(args, "issue_id");
    let reason = args.get("reason").and_then(Value::as_str).unwrap_or("Completed");
    let t = issues.find(id).ok_or_else(|| refused("close", "bd command failed: "))?;
    close(&scope, &issues, t, reason, "close", id)?;
    if args.get("brief").and_then(Value::as_bool).unwrap_or(true) {
        return Ok(wrapped(json!([{"id": id, "action": "closed", "message": reason}])));
    }
    let issues = Issues::read(&scope);
    Ok(wrapped(json!([issues.by_id(t.id).map(|t| issue_full(&issues, t))])))
}

fn reopen_tool(scope: &Scope, args: &Value) -> Answer {
    let scope = workspace(scope, "reopen", args)?;
    let issues = Issues::read(&scope);
    let ids = strings(args, "issue_ids");
    let reason = args.get("reason").cloned().unwrap_or(Value::Null);
    let mut done = Vec::new();
    for id in &ids {
        let t = issues.find(id).ok_or_else(|| {
            refused("reopen", format!("bd command failed: Error resolving {id}: no issue found matching \"{id}\"\n"))
        })?;
        if t.status.is_open() {
            continue; // bd: "<id> is already open"
        }
        reopen(&scope, t).map_err(|e| refused("reopen", bd_failed(&issues, e)))?;
        done.push(t.id);
    }
    if done.is_empty() {
        let list = ids.iter().map(|i| format!("'{i}'")).collect::<Vec<_>>().join(", ");
        return Err(refused("reopen", format!("Invalid response for reopen [{list}]")));
    }
    let issues = Issues::read(&scope);
    let reopened: Vec<&Todo> = done.iter().filter_map(|id| issues.by_id(*id)).collect();
    if args.get("brief").and_then(Value::as_bool).unwrap_or(true) {
        return Ok(wrapped(
            reopened.iter().map(|t| json!({"id": caller_id(t), "action": "reopened", "message": reason})).collect(),
        ));
    }
    Ok(wrapped(reopened.iter().map(|t| issue_full(&issues, t)).collect()))
}

fn dep_tool(scope: &Scope, args: &Value) -> Answer {
    let scope = workspace(scope, "dep", args)?;
    let issues = Issues::read(&scope);
    let (a, b) = (str_arg(args, "issue_id"), str_arg(args, "depends_on_id"));
    let kind = args.get("dep_type").and_then(Value::as_str).unwrap_or("blocks");
    let failed_dep = |why: String| Ok(json!({ "result": format!("Error: bd dep add failed: Error: {why}\n") }));
    let Some(from) = issues.find(a) else {
        return failed_dep(format!("resolving issue ID {a}: no issue found matching \"{a}\""));
    };
    let Some(to) = issues.find(b) else {
        return failed_dep(format!("resolving dependency ID {b}: no issue found matching \"{b}\""));
    };
    if from.id == to.id {
        return failed_dep(format!("cannot add self-dependency: {a} cannot depend on itself"));
    }
    if kind.is_empty() || kind.chars().count() > 50 {
        return failed_dep(format!("invalid dependency type \"{kind}\": must be non-empty and at most 50 characters"));
    }
    if BLOCKING.contains(&kind) {
        match dependencies::block(&scope, from.id, to.id) {
            Ok(_) => {}
            Err(Error::Edge(_)) => return failed_dep("adding dependency would create a cycle".into()),
            Err(e) => return failed_dep(named(&issues, e)),
        }
    } else {
        let mut links: Vec<Value> = soft_links(from).into_iter().map(|(id, t)| json!({"id": id, "type": t})).collect();
        let link = json!({"id": caller_id(to), "type": kind});
        if !links.contains(&link) {
            links.push(link);
        }
        let meta = json_fields([(LINKS, Value::Array(links))]);
        if let Err(e) =
            single::change(&scope, Find::Anywhere, from.id, Change { metadata: Some(meta), ..Change::default() })
        {
            return failed_dep(named(&issues, e));
        }
    }
    Ok(json!({ "result": format!("Added dependency: {a} depends on {b} ({kind})") }))
}

fn stats_tool(scope: &Scope, args: &Value) -> Answer {
    let scope = workspace(scope, "stats", args)?;
    let issues = Issues::read(&scope);
    let count = |word: &str| issues.todos.iter().filter(|t| status_word(t.status) == word).count();
    let blocked = issues.todos.iter().filter(|t| t.status.is_open() && !issues.blockers(t).is_empty()).count();
    let open = count("open");
    Ok(json!({"summary": {
        "total_issues": issues.todos.len(), "open_issues": open, "in_progress_issues": count("in_progress"),
        "closed_issues": count("closed"), "blocked_issues": blocked, "deferred_issues": count("deferred"),
        "ready_issues": open.saturating_sub(blocked), "tombstone_issues": 0, "pinned_issues": 0,
        "epics_eligible_for_closure": 0, "average_lead_time_hours": 0.0
    }, "recent_activity": null}))
}

fn blocked_tool(scope: &Scope, args: &Value) -> Answer {
    let scope = workspace(scope, "blocked", args)?;
    let issues = Issues::read(&scope);
    let mut found: Vec<&Todo> =
        issues.todos.iter().filter(|t| t.status.is_open() && !issues.blockers(t).is_empty()).collect();
    found.sort_by_key(|t| (priority_num(t), std::cmp::Reverse(t.created_us)));
    if args.get("brief").and_then(Value::as_bool).unwrap_or(false) {
        return Ok(wrapped(found.iter().map(|t| brief(t)).collect()));
    }
    Ok(wrapped(
        found
            .iter()
            .map(|t| {
                let by = issues.blockers(t);
                let mut o = issue_base(t, 0, 0);
                o.insert("dependencies".into(), json!([]));
                o.insert("dependents".into(), json!([]));
                o.insert("blocked_by_count".into(), json!(by.len()));
                o.insert("blocked_by".into(), json!(by));
                Value::Object(o)
            })
            .collect(),
    ))
}

/// A conversation's issues as `show` gives each (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    let scope = Scope { conversation: Some(conv.to_string()), ..scope.clone() };
    let issues = Issues::read(&scope);
    issues.todos.iter().map(|t| issue_full(&issues, t)).collect()
}

/// The beads dialect.
pub static DIALECT: super::Dialect = super::Dialect {
    name: "beads",
    aliases: &[],
    runtime: "beads (beads-mcp)",
    description: "an issue tracker's tools: ready, claim, dependencies, blocked, stats",
    tools: &[
        &DISCOVER_TOOLS,
        &GET_TOOL_INFO,
        &CONTEXT,
        &READY,
        &LIST,
        &SHOW,
        &CREATE,
        &CLAIM,
        &UPDATE,
        &CLOSE,
        &REOPEN,
        &DEP,
        &STATS,
        &BLOCKED,
    ],
    list_as: Some(super::ListAs {
        shape: "its issues as `show` gives each: `[{id, title, …, dependencies, dependents}]`",
        read: list_as,
    }),
};
