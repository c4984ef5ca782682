//! A beads workspace as its tools see it: the list's issues (`Issues`) and the dependencies among them, beads' statuses, priorities and times, its models' key order, and the text and refusals of its answers.

use super::super::dialect::Answer;
use super::super::helpers::{caller_id, error_message, metadata, ordered_json, strings};
use super::catalogs::{DISCOVER, TOOL_INFO};
use crate::ops::whole_list::{self, Kept};
use crate::ops::Scope;
use crate::status::Status;
use crate::todo::Todo;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The keys of beads-mcp's models, in the order its JSON writes them (the fields' order;
/// each model's keys keep their relative order in this one list).
pub(super) const KEY_ORDER: &[&str] = &[
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
pub(super) fn wrapped(v: Value) -> Value {
    json!({ "result": v })
}

/// beads-mcp's refusal: the tool's name and bd's words.
pub(super) fn refused(tool: &str, why: impl std::fmt::Display) -> Value {
    super::super::helpers::error("refused", format!("Error calling tool '{tool}': {why}"))
}

/// pydantic's words for a number out of its range (`limit`, `priority`), as beads-mcp's
/// parameter models give them.
pub(super) fn out_of_range(model: &str, field: &str, value: i64, low: i64, high: i64) -> Option<Value> {
    let (rule, bound, kind) = if value < low {
        ("greater_than_equal", low, "greater than or equal to")
    } else if value > high {
        ("less_than_equal", high, "less than or equal to")
    } else {
        return None;
    };
    Some(super::super::helpers::error(
        "invalid_arguments",
        format!("1 validation error for {model}\n{field}\n  Input should be {kind} {bound} [type={rule}, input_value={value}, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.13/v/{rule}"),
    ))
}

/// The text the model reads: the JSON in beads-mcp's order (a wrapped result's value; a
/// string as it is; the static catalogs as beads-mcp writes them), or a refusal's words.
pub(super) fn text(out: &Value) -> String {
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

/// The metadata keys beads keeps beside the columns: its 0–4 priority, the external
/// reference, the links that do not block (`[{"id", "type"}]`).
pub(super) const PRIORITY: &str = "beads_priority";
pub(super) const EXTERNAL_REF: &str = "external_ref";
pub(super) const LINKS: &str = "beads_links";
/// The dependency kinds that hold an issue back: real dependencies in the store.
pub(super) const BLOCKING: &[&str] = &["blocks", "conditional-blocks", "waits-for"];
pub(super) const NO_WORKSPACE: &str = "No beads workspace found. Either:\n  1. Call context(workspace_root=\"/path/to/project\"), OR\n  2. Run from a directory containing .beads/, OR\n  3. Set BEADS_WORKING_DIR environment variable";

/// The list the call works on, as a scope: the list the connection is bound to
/// (`session::bound_list`), else `workspace_root`'s project list, else the conversation in
/// context.
pub(super) fn workspace(scope: &Scope, tool: &str, args: &Value) -> Result<Scope, Value> {
    let root = args.get("workspace_root").and_then(Value::as_str).filter(|r| !r.trim().is_empty());
    let conversation = match (crate::session::bound_list(), root) {
        (Some(bound), _) => bound,
        (None, Some(root)) => format!("project:{}", root.trim_end_matches('/')),
        (None, None) => scope.conv().ok_or_else(|| refused(tool, NO_WORKSPACE))?.to_string(),
    };
    Ok(Scope { conversation: Some(conversation), ..scope.clone() })
}

/// An issue linked to another, with the kind of the link.
pub(super) type Linked<'a> = (&'a Todo, String);

/// The list's issues (its todos that are not archived), and the dependencies among them and
/// onto other todos.
pub(super) struct Issues {
    pub(super) todos: Vec<Todo>,
    /// (todo, waits for, the awaited one is open)
    pub(super) edges: Vec<(i64, i64, bool)>,
    /// where each todo is in `todos`, by its store id
    pub(super) at: HashMap<i64, usize>,
    /// where each todo is in `todos`, by the beads id that names it: its caller id, else (a
    /// todo without one) its store id; a caller id wins over a store id, as `CallerIds` finds
    pub(super) by_beads_id: HashMap<String, usize>,
}

impl Issues {
    pub(super) fn read(scope: &Scope) -> Issues {
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

    pub(super) fn by_id(&self, id: i64) -> Option<&Todo> {
        self.at.get(&id).map(|i| &self.todos[*i])
    }

    /// The issue a beads id names (a todo's caller id, else its store id).
    pub(super) fn find(&self, beads_id: &str) -> Option<&Todo> {
        self.by_beads_id.get(beads_id).map(|i| &self.todos[*i])
    }

    /// The open todos `t` waits for, by beads id.
    pub(super) fn blockers(&self, t: &Todo) -> Vec<String> {
        self.edges
            .iter()
            .filter(|(a, _, open)| *a == t.id && *open)
            .map(|(_, b, _)| self.by_id(*b).map_or_else(|| b.to_string(), caller_id))
            .collect()
    }

    /// (what it depends on, what depends on it), with their kinds.
    pub(super) fn links(&self, t: &Todo) -> (Vec<Linked<'_>>, Vec<Linked<'_>>) {
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
pub(super) fn soft_links(t: &Todo) -> Vec<(String, String)> {
    metadata(t)
        .get(LINKS)
        .and_then(Value::as_array)
        .map(|l| {
            l.iter().filter_map(|x| Some((x["id"].as_str()?.to_string(), x["type"].as_str()?.to_string()))).collect()
        })
        .unwrap_or_default()
}

/// beads' status word for a todo.
pub(super) fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pending => "open",
        Status::InProgress | Status::Review => "in_progress",
        Status::Blocked => "blocked",
        Status::Deferred => "deferred",
        Status::Completed | Status::Canceled => "closed",
    }
}

/// The store's status for a beads status word; None for one beads has that the store does not.
pub(super) fn status_of(word: &str) -> Option<Status> {
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
pub(super) fn priority_word(p: i64) -> &'static str {
    match p {
        0 | 1 => "high",
        2 => "medium",
        _ => "low",
    }
}

/// beads' 0–4 for a todo: the number it was given while it still agrees with the priority,
/// else the priority's (high 1, medium or none 2, low 3).
pub(super) fn priority_num(t: &Todo) -> i64 {
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
pub(super) fn stamp(us: i64) -> String {
    let base = &crate::time::iso8601(us)[..19];
    match us.rem_euclid(1_000_000) {
        0 => format!("{base}Z"),
        frac => format!("{base}.{frac:06}Z"),
    }
}

/// An issue in beads' full model (`Issue` without its links: `LinkedIssue` adds the kind).
pub(super) fn issue_base(t: &Todo, dependency_count: usize, dependent_count: usize) -> Map<String, Value> {
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
pub(super) fn issue_full(issues: &Issues, t: &Todo) -> Value {
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
pub(super) fn minimal(issues: &Issues, t: &Todo) -> Value {
    let (on, by) = issues.links(t);
    json!({"id": caller_id(t), "title": t.subject, "status": status_word(t.status), "priority": priority_num(t),
           "issue_type": t.issue_type.clone().unwrap_or_else(|| "task".into()), "assignee": t.owner,
           "labels": t.labels, "dependency_count": on.len(), "dependent_count": by.len()})
}

pub(super) fn brief(t: &Todo) -> Value {
    json!({"id": caller_id(t), "title": t.subject, "status": status_word(t.status), "priority": priority_num(t)})
}

/// A non-empty string argument (beads-mcp drops empty ones).
pub(super) fn given<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The filters `ready` and `list` share.
pub(super) fn filtered<'a>(issues: &'a Issues, args: &Value, keep: impl Fn(&Todo) -> bool) -> Vec<&'a Todo> {
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
pub(super) fn listing(
    issues: &Issues,
    found: &[&Todo],
    args: &Value,
    tool: &str,
    hint: &dyn Fn(usize) -> String,
) -> Answer {
    pub(super) const THRESHOLD: usize = 20;
    pub(super) const PREVIEW: usize = 5;
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
pub(super) fn project(issues: &Issues, t: &Todo, fields: &[&str], tool: &str) -> Result<Value, Value> {
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

/// A conversation's issues as `show` gives each (`todo.list_as`).
pub(super) fn list_as(scope: &Scope, conv: &str) -> Value {
    let scope = Scope { conversation: Some(conv.to_string()), ..scope.clone() };
    let issues = Issues::read(&scope);
    issues.todos.iter().map(|t| issue_full(&issues, t)).collect()
}
