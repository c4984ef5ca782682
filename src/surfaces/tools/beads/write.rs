//! The tools that write: `create`, `claim`, `update`, `close`, `reopen` and `dep`.

use serde_json::{json, Map, Value};

use super::super::dialect::Answer;
use super::super::helpers::{caller_id, str_arg, strings};
use super::issues::{
    given, issue_full, out_of_range, priority_word, refused, soft_links, status_of, status_word, workspace, wrapped,
    Issues, BLOCKING, EXTERNAL_REF, LINKS, PRIORITY,
};
use super::read::{invalid_status, not_found};
use crate::claims::Refusal;
use crate::error::Error;
use crate::ops::single::{json_fields, Change, NewTodo};
use crate::ops::{claiming, dependencies, single, Find, Scope};
use crate::status::Status;
use crate::todo::Todo;

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

pub(super) fn create_tool(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn claim_tool(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn update_tool(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn close_tool(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn reopen_tool(scope: &Scope, args: &Value) -> Answer {
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

pub(super) fn dep_tool(scope: &Scope, args: &Value) -> Answer {
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
