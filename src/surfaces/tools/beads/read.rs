//! The tools that read: `discover_tools`, `get_tool_info`, `context`, `ready`, `list`, `show`,
//! `stats` and `blocked`.

use serde_json::{json, Value};

use super::super::dialect::Answer;
use super::super::helpers::str_arg;
use super::catalogs::{DISCOVER, TOOL_INFO};
use super::issues::{
    brief, filtered, given, issue_base, issue_full, listing, out_of_range, priority_num, project, refused, status_of,
    status_word, workspace, wrapped, Issues,
};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;

pub(super) fn discover_tools(_scope: &Scope, _args: &Value) -> Answer {
    Ok(serde_json::from_str(DISCOVER).expect("the catalog is JSON"))
}

pub(super) fn get_tool_info(_scope: &Scope, args: &Value) -> Answer {
    let name = str_arg(args, "tool_name");
    match TOOL_INFO.iter().find(|(n, _)| *n == name) {
        Some((_, info)) => Ok(serde_json::from_str(info).expect("the catalog is JSON")),
        None => Ok(json!({"error": format!("Unknown tool: {name}"),
                          "available_tools": TOOL_INFO.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
                          "hint": "Use discover_tools() to see all available tools"})),
    }
}

pub(super) fn context_tool(scope: &Scope, args: &Value) -> Answer {
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
        ("set" | "init", Some(root)) => match crate::session::bound_list() {
            Some(bound) => format!(
                "Context set successfully:\n  Workspace root: {root}\n  Database: pg_todos, the list {bound}\n  (this server is bound to that list: every call works on it, whatever workspace_root says)"
            ),
            None => format!(
                "Context set successfully:\n  Workspace root: {root}\n  Database: pg_todos, the list project:{}\n  (each call names it with workspace_root; without it a call works on the server's list)",
                root.trim_end_matches('/')
            ),
        },
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

/// The `limit` of `ready` and `list` (`model` their pydantic model, `default` when not
/// given), refused outside 1–100, as is a `priority` outside 0–4.
fn limit_of(args: &Value, model: &str, default: i64) -> Result<i64, Value> {
    let limit = args.get("limit").and_then(Value::as_i64).unwrap_or(default);
    if let Some(e) = out_of_range(model, "limit", limit, 1, 100) {
        return Err(e);
    }
    if let Some(e) = args.get("priority").and_then(Value::as_i64).and_then(|p| out_of_range(model, "priority", p, 0, 4))
    {
        return Err(e);
    }
    Ok(limit)
}

pub(super) fn ready_tool(scope: &Scope, args: &Value) -> Answer {
    let limit = limit_of(args, "ReadyWorkParams", 10)?;
    let scope = workspace(scope, "ready", args)?;
    let issues = Issues::read(&scope);
    let mut found = filtered(&issues, args, |t| t.status == Status::Pending && issues.blockers(t).is_empty());
    found.truncate(limit as usize);
    listing(&issues, &found, args, "ready", &|n| {
        format!("Showing 5 of {n} ready issues. Use show(issue_id) for full details.")
    })
}

pub(super) fn list_tool(scope: &Scope, args: &Value) -> Answer {
    let limit = limit_of(args, "ListIssuesParams", 20)?;
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
pub(super) fn invalid_status(s: &str) -> String {
    format!("bd command failed: invalid status \"{s}\" (valid: open, in_progress, blocked, deferred, closed)\n")
}

pub(super) fn not_found(tool: &str, verb: &str, id: &str) -> Value {
    refused(tool, format!("bd command failed: Error {verb} {id}: no issue found matching \"{id}\"\n"))
}

pub(super) fn show_tool(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn stats_tool(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn blocked_tool(scope: &Scope, args: &Value) -> Answer {
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
