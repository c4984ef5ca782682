//! The tool table: each tool's description and input schema as beads-mcp lists them, and the
//! answers of `discover_tools` and `get_tool_info`.

use serde_json::json;

use super::super::dialect::{Effect, Tool};
use super::issues::text;
use super::read::{
    blocked_tool, context_tool, discover_tools, get_tool_info, list_tool, ready_tool, show_tool, stats_tool,
};
use super::write::{claim_tool, close_tool, create_tool, dep_tool, reopen_tool, update_tool};

pub(super) static DISCOVER_TOOLS: Tool = Tool {
    name: "discover_tools",
    description:
        "List available beads tools (names and brief descriptions only). Use get_tool_info() for full details.",
    input_schema: || json!({"additionalProperties": false, "properties": {}, "type": "object"}),
    precheck: None,
    run: discover_tools,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

pub(super) static GET_TOOL_INFO: Tool = Tool {
    name: "get_tool_info",
    description: "Get detailed information about a specific beads tool including parameters.",
    input_schema: || json!({"additionalProperties": false, "properties": {"tool_name": {"type": "string", "description": "Name of the tool to get info for"}}, "required": ["tool_name"], "type": "object"}),
    precheck: None,
    run: get_tool_info,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

pub(super) static CONTEXT: Tool = Tool {
    name: "context",
    description: "Manage workspace context for beads operations.\nActions:\n- set: Set the workspace root directory (default when workspace_root provided)\n- show: Show current workspace context and database path (default when no args)\n- init: Initialize beads in the current workspace directory",
    input_schema: || serde_json::from_str(CONTEXT_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: context_tool,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const CONTEXT_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"action": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Action to perform - set, show, or init (inferred if not provided)"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Workspace path for set/init actions"}, "prefix": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Issue ID prefix for init action"}}, "type": "object"}"#;

pub(super) static READY: Tool = Tool {
    name: "ready",
    description:
        "Find tasks that have no blockers and are ready to be worked on. Returns minimal format for context efficiency.",
    input_schema: || serde_json::from_str(READY_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: ready_tool,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const READY_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"limit": {"default": 10, "type": "integer", "description": "Maximum issues to return (1-100, default 10)"}, "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Filter by priority level (0-4)"}, "issue_type": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by type (task, bug, feature, epic, chore, decision, merge-request, or custom)"}, "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by assignee"}, "labels": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Filter by labels (AND: must have ALL specified labels)"}, "labels_any": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Filter by labels (OR: must have at least one)"}, "unassigned": {"default": false, "type": "boolean", "description": "Filter to only unassigned issues"}, "sort_policy": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Sort policy: hybrid (default), priority, oldest"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Workspace path override"}, "brief": {"default": false, "type": "boolean", "description": "If True, return only {id, title, status} (~97% smaller)"}, "fields": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Return only specified fields (custom projections)"}, "max_description_length": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Truncate descriptions to this length"}}, "type": "object"}"#;

pub(super) static LIST: Tool = Tool {
    name: "list",
    description:
        "List all issues with optional filters. When status='blocked', returns BlockedIssue with blocked_by info.",
    input_schema: || serde_json::from_str(LIST_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: list_tool,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const LIST_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"status": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by status (open, in_progress, blocked, closed)"}, "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Filter by priority level (0-4)"}, "issue_type": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by type (bug, feature, task, epic, chore, decision)"}, "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Filter by assignee"}, "labels": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Filter by labels (AND: must have ALL specified labels)"}, "labels_any": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Filter by labels (OR: must have at least one)"}, "query": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Search in title (case-insensitive substring)"}, "unassigned": {"default": false, "type": "boolean", "description": "Filter to only unassigned issues"}, "limit": {"default": 20, "type": "integer", "description": "Maximum issues to return (1-100, default 20)"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Workspace path override"}, "brief": {"default": false, "type": "boolean", "description": "If True, return only {id, title, status} (~97% smaller)"}, "fields": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Return only specified fields (custom projections)"}, "max_description_length": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Truncate descriptions to this length"}}, "type": "object"}"#;

pub(super) static SHOW: Tool = Tool {
    name: "show",
    description: "Show detailed information about a specific issue including dependencies and dependents.",
    input_schema: || serde_json::from_str(SHOW_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: show_tool,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const SHOW_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string", "description": "The issue ID to show (e.g., 'bd-a1b2')"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null, "description": "Workspace path override"}, "brief": {"default": false, "type": "boolean", "description": "If True, return only {id, title, status, priority}"}, "brief_deps": {"default": false, "type": "boolean", "description": "If True, return full issue but with compact dependencies"}, "fields": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null, "description": "Return only specified fields (custom projections)"}, "max_description_length": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null, "description": "Truncate description to this length"}}, "required": ["issue_id"], "type": "object"}"#;

pub(super) static CREATE: Tool = Tool {
    name: "create",
    description: "Create a new issue (bug, feature, task, epic, chore, or decision) with optional design,\nacceptance criteria, and dependencies.",
    input_schema: || serde_json::from_str(CREATE_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: create_tool,
    effect: Effect::Adds,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const CREATE_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"title": {"type": "string"}, "description": {"default": "", "type": "string"}, "design": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "acceptance": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "external_ref": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "priority": {"default": 2, "type": "integer"}, "issue_type": {"default": "task", "type": "string"}, "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "labels": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null}, "id": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "deps": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}], "default": null}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult; if False, return full Issue"}}, "required": ["title"], "type": "object"}"#;

pub(super) static CLAIM: Tool = Tool {
    name: "claim",
    description: "Atomically claim an issue for work (assignee + in_progress in one CAS-style operation).",
    input_schema: || serde_json::from_str(CLAIM_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: claim_tool,
    effect: Effect::Marks,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const CLAIM_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult; if False, return full Issue"}}, "required": ["issue_id"], "type": "object"}"#;

pub(super) static UPDATE: Tool = Tool {
    name: "update",
    description: "Update an existing issue's status, priority, assignee, description, design notes,\nor acceptance criteria. For atomic start-work semantics, prefer claim(issue_id).",
    input_schema: || serde_json::from_str(UPDATE_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: update_tool,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const UPDATE_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string"}, "status": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "priority": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null}, "assignee": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "title": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "description": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "design": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "acceptance_criteria": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "notes": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "external_ref": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult; if False, return full Issue"}}, "required": ["issue_id"], "type": "object"}"#;

pub(super) static CLOSE: Tool = Tool {
    name: "close",
    description: "Close (complete) an issue. Mark work as done when you've finished implementing/fixing it.",
    input_schema: || serde_json::from_str(CLOSE_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: close_tool,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const CLOSE_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string"}, "reason": {"default": "Completed", "type": "string"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult list; if False, return full Issues"}}, "required": ["issue_id"], "type": "object"}"#;

pub(super) static REOPEN: Tool = Tool {
    name: "reopen",
    description: "Reopen one or more closed issues. Sets status to 'open' and clears closed_at timestamp.",
    input_schema: || serde_json::from_str(REOPEN_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: reopen_tool,
    effect: Effect::Replaces,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const REOPEN_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_ids": {"items": {"type": "string"}, "type": "array"}, "reason": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": true, "type": "boolean", "description": "If True (default), return minimal OperationResult list; if False, return full Issues"}}, "required": ["issue_ids"], "type": "object"}"#;

pub(super) static DEP: Tool = Tool {
    name: "dep",
    description: "Add a dependency between issues. Common types: blocks (hard blocker),\nrelated (soft link), parent-child (epic/subtask), discovered-from (found during work).\nThe full set of supported dep types lives in internal/types/types.go and is\nvalidated by the bd CLI; pass any of them as a string.",
    input_schema: || serde_json::from_str(DEP_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: dep_tool,
    effect: Effect::Marks,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const DEP_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"issue_id": {"type": "string"}, "depends_on_id": {"type": "string"}, "dep_type": {"default": "blocks", "type": "string"}, "workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}}, "required": ["issue_id", "depends_on_id"], "type": "object"}"#;

pub(super) static STATS: Tool = Tool {
    name: "stats",
    description: "Get statistics: total issues, open, in_progress, closed, blocked, ready, and average lead time.",
    input_schema: || serde_json::from_str(STATS_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: stats_tool,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const STATS_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}}, "type": "object"}"#;

pub(super) static BLOCKED: Tool = Tool {
    name: "blocked",
    description: "Get blocked issues showing what dependencies are blocking them from being worked on.",
    input_schema: || serde_json::from_str(BLOCKED_SCHEMA).expect("beads-mcp's schema is JSON"),
    precheck: None,
    run: blocked_tool,
    effect: Effect::Reads,
    output_schema: None,
    text: Some(text),
    accepts: None,
};

const BLOCKED_SCHEMA: &str = r#"{"additionalProperties": false, "properties": {"workspace_root": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}, "brief": {"default": false, "type": "boolean", "description": "If True, return only {id, title, status, priority} per issue"}, "brief_deps": {"default": false, "type": "boolean", "description": "If True, return full issues but with compact dependencies"}}, "type": "object"}"#;
