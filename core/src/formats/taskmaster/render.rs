//! Writing records as the `tasks.json` Task Master reads: a tag for each list, in the key
//! order the file's writer (tm-core or the legacy one) used.

use serde_json::{Map, Value};

use super::*;
use crate::time::iso8601;

/// An id as Task Master writes it: a number when it is one (and `as_string` is false).
pub(super) fn id_value(id: &str, as_string: bool) -> Json {
    match id.parse::<u64>() {
        Ok(n) if !as_string && n.to_string() == id => Json::Value(n.into()),
        _ => id.into(),
    }
}

/// Writes the records as a `tasks.json` Task Master reads: one tag per record list (None:
/// `master`) in the order first met; a record whose parent is a task of its tag nested in
/// that task's `subtasks`, any other on the tag's top level.
pub fn render(records: &[Record]) -> String {
    let mut tags: Vec<(String, Vec<&Record>)> = Vec::new();
    for r in records {
        let tag = r.list.clone().unwrap_or_else(|| "master".to_string());
        match tags.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, rs)) => rs.push(r),
            None => tags.push((tag, vec![r])),
        }
    }
    let mut root = Obj::default();
    for (tag, rs) in &tags {
        let top_ids: HashSet<&str> = rs.iter().filter(|r| r.parent.is_none()).map(|r| r.id.as_str()).collect();
        let is_top = |r: &Record| r.parent.as_deref().is_none_or(|p| !top_ids.contains(p));
        let metadata = rs.iter().find_map(|r| r.extra.get(TAG_METADATA).and_then(Value::as_object));
        // tm-core replaces a tag's metadata with its own, without `created`, and writes
        // string task ids
        let tm_core = metadata.is_some_and(|m| m.contains_key("version") && !m.contains_key("created"));
        let tasks = rs
            .iter()
            .filter(|r| is_top(r))
            .map(|task| {
                let subtasks: Vec<&Record> =
                    rs.iter().filter(|r| !is_top(r) && r.parent.as_deref() == Some(&task.id)).copied().collect();
                task_json(task, &subtasks, tm_core, None)
            })
            .collect();
        let mut tag_obj = Obj::default();
        tag_obj.put("tasks", Json::Array(tasks));
        tag_obj.put("metadata", metadata_json(tag, rs, metadata));
        root.put(tag, tag_obj.done());
    }
    to_js_pretty(&root.done())
}

/// One task with its subtasks, or (`subtask_of` its parent's id) one subtask, whose id is
/// written as its number under the parent (`2` for `5.2`).
pub(super) fn task_json(r: &Record, subtasks: &[&Record], tm_core: bool, subtask_of: Option<&str>) -> Json {
    let is_subtask = subtask_of.is_some();
    let mut o = Obj::default();
    let number = subtask_of.and_then(|p| r.id.strip_prefix(p)).and_then(|s| s.strip_prefix('.'));
    o.put("id", id_value(number.unwrap_or(&r.id), tm_core && !is_subtask));
    o.put("title", r.title.as_str());
    o.put("description", r.description.clone().unwrap_or_default());
    o.put("details", r.plan.clone().unwrap_or_default());
    if !is_subtask || r.criteria.is_some() {
        o.put("testStrategy", r.criteria.clone().unwrap_or_default());
    }
    let status = match r.status {
        Status::Completed if r.extra.get("status").and_then(Value::as_str) == Some("completed") => "completed",
        other => status_word(other),
    };
    o.put("status", status);
    let deps = r.dependencies.iter().map(|d| if is_subtask { d.as_str().into() } else { id_value(d, tm_core) });
    o.put("dependencies", Json::Array(deps.collect()));
    if let Some(p) = &r.priority {
        let critical = p == "high" && r.extra.get("priority").and_then(Value::as_str) == Some("critical");
        o.put("priority", if critical { "critical" } else { p.as_str() });
    }
    if !is_subtask {
        o.put("subtasks", Json::Array(subtasks.iter().map(|s| task_json(s, &[], tm_core, Some(&r.id))).collect()));
    }
    // a subtask's parent ids first, as add_subtask and tm-core leave them
    let mut rest: Vec<(&String, &Value)> =
        r.extra.iter().filter(|(k, _)| !FIELDS.contains(&k.as_str()) && k.as_str() != TAG_METADATA).collect();
    rest.sort_by_key(|(k, _)| ["parentTaskId", "parentId"].iter().position(|p| p == k).unwrap_or(2));
    for (k, v) in rest {
        o.put(k, v.clone());
    }
    if let Some(us) = r.created_us {
        o.put("createdAt", iso8601(us));
    }
    if let Some(us) = r.updated_us {
        o.put("updatedAt", iso8601(us));
    }
    o.done()
}

/// A tag's metadata: the one read from the file, else the legacy writer's own
/// (`created`, `updated` from the records' times when known, `description`).
pub(super) fn metadata_json(tag: &str, rs: &[&Record], kept: Option<&Map<String, Value>>) -> Json {
    let mut o = Obj::default();
    if let Some(m) = kept {
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort_by_key(|k| METADATA_ORDER.iter().position(|o| o == k).unwrap_or(METADATA_ORDER.len()));
        for k in keys {
            o.put(k, m[k].clone());
        }
        return o.done();
    }
    if let Some(created) = rs.iter().filter_map(|r| r.created_us.or(r.updated_us)).min() {
        o.put("created", iso8601(created));
    }
    if let Some(updated) = rs.iter().filter_map(|r| r.updated_us.or(r.created_us)).max() {
        o.put("updated", iso8601(updated));
    }
    o.put("description", format!("Tasks for {tag} context"));
    o.done()
}
