//! Writing records as the `issues.jsonl` beads imports: Go's struct order, Go's compact
//! JSON, Go's RFC 3339 times.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::*;
use crate::time::iso8601;

/// A time as Go writes a `time.Time` in UTC: RFC 3339, fractional seconds only when there
/// are some, without trailing zeros (`2026-04-18T16:19:12Z`, `…:12.25Z`).
pub(super) fn rfc3339(us: i64) -> String {
    let iso = iso8601(us);
    let (seconds, micros) = (&iso[..iso.len() - 5], us.rem_euclid(1_000_000));
    if micros == 0 {
        format!("{seconds}Z")
    } else {
        format!("{seconds}.{}Z", format!("{micros:06}").trim_end_matches('0'))
    }
}

/// Writes the records as an `issues.jsonl` beads imports: one line per record, in order.
pub fn render(records: &[Record]) -> String {
    let mut dependents: HashMap<&str, u64> = HashMap::new();
    for r in records {
        for target in r.dependencies.iter().map(String::as_str).chain(links(r).filter_map(|l| l.get("id")?.as_str())) {
            *dependents.entry(target).or_default() += 1;
        }
    }
    records
        .iter()
        .map(|r| to_go_compact(&issue_json(r, dependents.get(r.id.as_str()).copied().unwrap_or(0))) + "\n")
        .collect()
}

/// The extra's links of a record (`[{"id", "type", …}]`).
pub(super) fn links(r: &Record) -> impl Iterator<Item = &Map<String, Value>> {
    r.extra.get("links").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_object)
}

/// A record's beads status (`pinned` and `hooked` as kept).
pub(super) fn issue_status(r: &Record) -> &'static str {
    let kept_status = r.extra.get("status").and_then(Value::as_str);
    match r.status {
        Status::Deferred if kept_status == Some("pinned") => "pinned",
        Status::InProgress if kept_status == Some("hooked") => "hooked",
        Status::Pending => "open",
        Status::InProgress | Status::Review => "in_progress",
        Status::Blocked => "blocked",
        Status::Deferred => "deferred",
        Status::Completed | Status::Canceled => "closed",
    }
}

/// A record's beads priority: the number kept when it still says the record's word.
pub(super) fn issue_priority(r: &Record) -> u64 {
    let kept_priority = r.extra.get("priority").and_then(Value::as_u64).filter(|p| *p <= 4);
    match (r.priority.as_deref(), kept_priority) {
        (Some(word), Some(p)) if priority_word(p) == word => p,
        (Some("high"), _) => 1,
        (Some("low"), _) => 3,
        _ => 2,
    }
}

/// A record's dependencies (`blocks`, with what was kept of each) and then its other links.
pub(super) fn dependencies_json(r: &Record, created: &str) -> Vec<Json> {
    let kept_blocks: Vec<&Map<String, Value>> =
        r.extra.get("blocks").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_object).collect();
    let mut deps: Vec<Json> = r
        .dependencies
        .iter()
        .map(|target| {
            let kept = kept_blocks.iter().find(|b| b.get("id").and_then(Value::as_str) == Some(target)).copied();
            dependency_json(&r.id, target, "blocks", kept, created)
        })
        .collect();
    for link in links(r) {
        let (Some(target), Some(kind)) =
            (link.get("id").and_then(Value::as_str), link.get("type").and_then(Value::as_str))
        else {
            continue;
        };
        deps.push(dependency_json(&r.id, target, kind, Some(link), created));
    }
    deps
}

/// A record's comments, each with its kept id (else its place, `1`, `2`, …).
pub(super) fn comments_json(r: &Record) -> Json {
    let ids = r.extra.get("comment_ids").and_then(Value::as_array).filter(|ids| ids.len() == r.comments.len());
    let comments = r.comments.iter().enumerate().map(|(i, c)| {
        let mut o = Obj::default();
        let id = ids.map(|ids| ids[i].clone()).filter(|id| !id.is_null());
        o.put("id", id.unwrap_or_else(|| Value::String((i + 1).to_string())));
        o.put("issue_id", r.id.as_str());
        o.put("author", c.author.clone().unwrap_or_default());
        o.put("text", c.body.as_str());
        o.put("created_at", rfc3339(c.created_us));
        o.done()
    });
    Json::Array(comments.collect())
}

/// One issue's line, with the number of dependencies on it (`dependent_count`).
pub(super) fn issue_json(r: &Record, dependent_count: u64) -> Json {
    let mut fields: Vec<(String, Json)> = Vec::new();
    let mut put = |key: &str, v: Json| fields.push((key.to_string(), v));
    put("_type", "issue".into());
    put("id", r.id.as_str().into());
    put("title", r.title.as_str().into());
    for (key, v) in [
        ("description", &r.description),
        ("design", &r.plan),
        ("acceptance_criteria", &r.criteria),
        ("notes", &r.notes),
        ("issue_type", &r.issue_type),
        ("assignee", &r.assignee),
        ("close_reason", &r.outcome),
    ] {
        if let Some(s) = v.as_deref().filter(|s| !s.is_empty()) {
            put(key, s.into());
        }
    }
    let status = issue_status(r);
    put("status", status.into());
    put("priority", Json::Value(issue_priority(r).into()));
    let created = rfc3339(r.created_us.unwrap_or(0));
    put("created_at", created.as_str().into());
    put("updated_at", rfc3339(r.updated_us.or(r.created_us).unwrap_or(0)).into());
    if status == "closed" {
        put("closed_at", rfc3339(r.completed_us.or(r.updated_us).or(r.created_us).unwrap_or(0)).into());
    }
    if let Some(us) = r.due_us {
        put("due_at", rfc3339(us).into());
    }
    if !r.labels.is_empty() {
        let mut labels = r.labels.clone();
        labels.sort();
        put("labels", Json::Value(labels.into()));
    }
    let deps = dependencies_json(r, &created);
    let dependency_count = deps.len();
    if !deps.is_empty() {
        put("dependencies", Json::Array(deps));
    }
    if !r.comments.is_empty() {
        put("comments", comments_json(r));
    }
    for (k, v) in r.extra.iter().filter(|(k, _)| !FIELDS.contains(&k.as_str()) && !KEPT.contains(&k.as_str())) {
        put(k, Json::Value(v.clone()));
    }
    // Go's struct order; keys beads does not know (a newer bd's) after them, sorted
    fields.sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
    fields.push(("dependency_count".into(), Json::Value(dependency_count.into())));
    fields.push(("dependent_count".into(), Json::Value(dependent_count.into())));
    fields.push(("comment_count".into(), Json::Value(r.comments.len().into())));
    Json::Object(fields)
}

/// One dependency of `issue` on `target`, with what was kept of it (`created_at`,
/// `created_by`, …); `created_at` is the issue's when none was kept.
pub(super) fn dependency_json(
    issue: &str,
    target: &str,
    kind: &str,
    kept: Option<&Map<String, Value>>,
    created: &str,
) -> Json {
    let mut o = Obj::default();
    o.put("issue_id", issue);
    o.put("depends_on_id", target);
    o.put("type", kind);
    let mut rest: Vec<(&String, &Value)> =
        kept.into_iter().flatten().filter(|(k, _)| !["id", "type"].contains(&k.as_str())).collect();
    if !rest.iter().any(|(k, _)| k.as_str() == "created_at") {
        o.put("created_at", created);
    }
    rest.sort_by_key(|(k, _)| DEPENDENCY_ORDER.iter().position(|o| o == k).unwrap_or(DEPENDENCY_ORDER.len()));
    for (k, v) in rest {
        o.put(k, v.clone());
    }
    o.done()
}
