//! beads' `.beads/issues.jsonl` (`bd export`), read into records and written back.
//!
//! One issue a line, a compact JSON object. Mapped as pg_todos' beads dialect maps an
//! issue: `id`, `title`, `description`; `design` the plan, `acceptance_criteria` the
//! criteria, `notes`; `status` `open` pending, `in_progress`, `blocked`, `deferred`, `closed`
//! completed (`pinned` deferred and `hooked` in progress, the word kept in the extra's
//! `status`); `priority` 0 and 1 high, 2 medium, 3 and 4 low, the number kept in the extra's
//! `priority` and written back while it agrees; `issue_type`, `assignee`, `labels`;
//! `created_at`, `updated_at`, `closed_at` (the completion time), `due_at`; `close_reason`
//! the outcome; `comments`. A `blocks` dependency is a record dependency (its `created_at`,
//! `created_by`, … kept in the extra's `blocks`, `[{"id", …}]`); every other kind is a link
//! in the extra's `links`, `[{"id", "type", …}]`. Every other key (`owner`, `created_by`,
//! `started_at`, `external_ref`, `metadata`, `work_type`, …) is kept in the extra by its own
//! name. The counts (`dependency_count`, `dependent_count`, `comment_count`) and `_type` are
//! derived, not kept; lines of another `_type` (beads' memories) are not issues and skipped.
//!
//! `render` writes what `bd export` writes at beads' HEAD: `{"_type":"issue", …}` with the
//! Issue struct's keys in its order, empty optional ones left out (Go's `omitempty`), Go's
//! HTML-safe escapes, RFC 3339 times in UTC, labels sorted, the three counts at the end and
//! a newline after every line. Not reproduced: beads sorts issues by priority, then newest
//! first (render keeps the records' order, which beads' import does not care about); a line
//! mixing `blocks` and other dependencies gets its `blocks` first; a time written with an
//! offset comes back in UTC; files written before `_type` and the counts existed come back
//! with them.
//!
//! Here the reading; `render` the writing.

pub mod render;

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::json::{field_error, not_json, parse_iso8601, shown, to_go_compact, Json, Obj};
use crate::interchange::{Comment, FileError, Record};
use crate::status::Status;

/// beads' statuses and what each is in the store.
const STATUSES: &[(&str, Status)] = &[
    ("open", Status::Pending),
    ("in_progress", Status::InProgress),
    ("blocked", Status::Blocked),
    ("deferred", Status::Deferred),
    ("closed", Status::Completed),
    ("pinned", Status::Deferred),
    ("hooked", Status::InProgress),
];

/// The keys a record field holds or that are derived (never copied to or from the extra).
const FIELDS: &[&str] = &[
    "_type",
    "id",
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "notes",
    "status",
    "priority",
    "issue_type",
    "assignee",
    "created_at",
    "updated_at",
    "closed_at",
    "close_reason",
    "due_at",
    "labels",
    "dependencies",
    "comments",
    "dependency_count",
    "dependent_count",
    "comment_count",
];

/// The extra's own keys (what an issue's dependencies and comments carry beyond the fields).
const KEPT: &[&str] = &["blocks", "links", "comment_ids"];

/// The Issue struct's JSON keys in Go's order (`internal/types/types.go`), as `bd export`
/// writes them; the counts follow.
const ORDER: &[&str] = &[
    "_type",
    "id",
    "title",
    "description",
    "design",
    "acceptance_criteria",
    "notes",
    "spec_id",
    "status",
    "priority",
    "issue_type",
    "assignee",
    "owner",
    "estimated_minutes",
    "created_at",
    "created_by",
    "updated_at",
    "started_at",
    "closed_at",
    "close_reason",
    "closed_by_session",
    "due_at",
    "defer_until",
    "external_ref",
    "source_system",
    "metadata",
    "compaction_level",
    "compacted_at",
    "compacted_at_commit",
    "original_size",
    "labels",
    "dependencies",
    "comments",
    "sender",
    "ephemeral",
    "no_history",
    "wisp_type",
    "pinned",
    "is_template",
    "bonded_from",
    "await_type",
    "await_id",
    "timeout",
    "waiters",
    "source_formula",
    "source_location",
    "mol_type",
    "work_type",
    "event_kind",
    "actor",
    "target",
    "payload",
];

/// A dependency's keys in Go's order.
const DEPENDENCY_ORDER: &[&str] = &["created_at", "created_by", "metadata", "thread_id"];

/// Reads an `issues.jsonl`: one record per issue line, in the file's order. Blank lines are
/// skipped; `file` names the file in errors, which give the line.
pub fn parse(file: &str, text: &str) -> Result<Vec<Record>, FileError> {
    let mut records = Vec::new();
    let mut lines_of: HashMap<String, usize> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| not_json(file, Some(n), &e))?;
        let Value::Object(obj) = v else {
            let msg = format!("a line must be one issue, a JSON object {{\"id\": …}}; found {}", shown(Some(&v)));
            return Err(FileError { file: file.to_string(), line: Some(n), field: None, message: msg });
        };
        match obj.get("_type") {
            None | Some(Value::Null) => {}
            Some(Value::String(t)) if t == "issue" => {}
            Some(Value::String(_)) => continue,
            found => {
                let msg = format!("\"_type\" must be \"issue\" on an issue's line; found {}", shown(found));
                return Err(field_error(file, Some(n), "_type", msg));
            }
        }
        let record = read_issue(file, n, &obj)?;
        if let Some(first) = lines_of.get(&record.id) {
            let msg = format!("issue {} is already on line {first}; keep one line per issue", record.id);
            return Err(field_error(file, Some(n), "id", msg));
        }
        lines_of.insert(record.id.clone(), n);
        records.push(record);
    }
    Ok(records)
}

/// The word of a beads priority.
fn priority_word(n: u64) -> &'static str {
    match n {
        0 | 1 => "high",
        2 => "medium",
        _ => "low",
    }
}

/// An issue's dependencies as read: (the ids it waits for, those `blocks` edges as kept,
/// the other links as kept).
type IssueDependencies = (Vec<String>, Vec<Value>, Vec<Value>);

/// One issue's line being read: the file, the line's number, and its object.
struct IssueLine<'a> {
    file: &'a str,
    n: usize,
    obj: &'a Map<String, Value>,
}

impl IssueLine<'_> {
    fn err(&self, key: &str, msg: String) -> FileError {
        field_error(self.file, Some(self.n), key, msg)
    }

    /// A string field (None: missing, null or empty).
    fn text(&self, key: &str) -> Result<Option<String>, FileError> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            found => Err(self.err(key, format!("\"{key}\" must be a string; found {}", shown(found)))),
        }
    }

    /// A time (`key` names it in errors).
    fn time_of(&self, key: &str, v: Option<&Value>) -> Result<Option<i64>, FileError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if parse_iso8601(s).is_some() => Ok(parse_iso8601(s)),
            found => Err(self.err(
                key,
                format!("\"{key}\" must be an RFC 3339 time like \"2026-04-18T16:19:12Z\"; found {}", shown(found)),
            )),
        }
    }

    /// A time field.
    fn time(&self, key: &str) -> Result<Option<i64>, FileError> {
        self.time_of(key, self.obj.get(key))
    }

    fn id(&self) -> Result<String, FileError> {
        match self.obj.get("id") {
            Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
            found => {
                Err(self.err("id", format!("\"id\" must be an issue id like \"bd-a1b2\"; found {}", shown(found))))
            }
        }
    }

    fn title(&self) -> Result<String, FileError> {
        match self.obj.get("title") {
            Some(Value::String(s)) => Ok(s.clone()),
            found => Err(self.err("title", format!("\"title\" must be a string; found {}", shown(found)))),
        }
    }

    /// The status (`pinned` and `hooked` kept in the extra).
    fn status(&self, extra: &mut Map<String, Value>) -> Result<Status, FileError> {
        match self.obj.get("status") {
            None | Some(Value::Null) => Ok(Status::Pending),
            Some(Value::String(s)) if s.is_empty() => Ok(Status::Pending),
            Some(Value::String(s)) if STATUSES.iter().any(|(name, _)| name == s) => {
                if s == "pinned" || s == "hooked" {
                    extra.insert("status".into(), Value::String(s.clone()));
                }
                Ok(STATUSES.iter().find(|(name, _)| name == s).map(|(_, st)| *st).unwrap_or_default())
            }
            found => {
                let names: Vec<&str> = STATUSES.iter().map(|(name, _)| *name).collect();
                let msg = format!(
                    "\"status\" must be one of {}; found {} (a custom status of this project: change it to the built-in one of its category)",
                    names.join(", "),
                    shown(found)
                );
                Err(self.err("status", msg))
            }
        }
    }

    /// The priority's word (the number kept in the extra).
    fn priority(&self, extra: &mut Map<String, Value>) -> Result<Option<String>, FileError> {
        match self.obj.get("priority") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(p)) if p.as_u64().is_some_and(|p| p <= 4) => {
                extra.insert("priority".into(), Value::Number(p.clone()));
                Ok(p.as_u64().map(|p| priority_word(p).to_string()))
            }
            found => {
                Err(self
                    .err("priority", format!("\"priority\" must be 0 to 4 (0 the highest); found {}", shown(found))))
            }
        }
    }

    fn labels(&self) -> Result<Vec<String>, FileError> {
        match self.obj.get("labels") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(ls)) if ls.iter().all(Value::is_string) => {
                Ok(ls.iter().filter_map(Value::as_str).map(str::to_string).collect())
            }
            found => Err(self.err("labels", format!("\"labels\" must be an array of strings; found {}", shown(found)))),
        }
    }

    /// The dependencies of issue `id`: (the ids it waits for, those `blocks` edges as kept,
    /// the other links as kept).
    fn dependencies(&self, id: &str) -> Result<IssueDependencies, FileError> {
        let (mut dependencies, mut blocks, mut links) = (Vec::new(), Vec::new(), Vec::new());
        let deps = match self.obj.get("dependencies") {
            None | Some(Value::Null) => return Ok((dependencies, blocks, links)),
            Some(Value::Array(deps)) => deps,
            found => {
                return Err(self.err(
                    "dependencies",
                    format!("\"dependencies\" must be an array of dependencies; found {}", shown(found)),
                ))
            }
        };
        for (k, d) in deps.iter().enumerate() {
            let target = d.get("depends_on_id").and_then(Value::as_str).filter(|s| !s.is_empty());
            let kind = d.get("type").and_then(Value::as_str).filter(|s| !s.is_empty());
            let (Some(Value::Object(d)), Some(target), Some(kind)) = (Some(d), target, kind) else {
                let msg = format!(
                    "a dependency must be {{\"issue_id\": \"{id}\", \"depends_on_id\": \"bd-…\", \"type\": \"blocks\", …}}; found {}",
                    shown(Some(d))
                );
                return Err(self.err(&format!("dependencies[{k}]"), msg));
            };
            let mut kept = Map::new();
            kept.insert("id".into(), Value::String(target.to_string()));
            for (key, v) in d.iter().filter(|(key, _)| !["issue_id", "depends_on_id", "type"].contains(&key.as_str())) {
                kept.insert(key.clone(), v.clone());
            }
            if kind == "blocks" {
                dependencies.push(target.to_string());
                blocks.push(Value::Object(kept));
            } else {
                kept.insert("type".into(), Value::String(kind.to_string()));
                links.push(Value::Object(kept));
            }
        }
        Ok((dependencies, blocks, links))
    }

    /// The comments of issue `id`, and their ids as the file gives them.
    fn comments(&self, id: &str) -> Result<(Vec<Comment>, Vec<Value>), FileError> {
        let (mut comments, mut comment_ids) = (Vec::new(), Vec::new());
        let cs = match self.obj.get("comments") {
            None | Some(Value::Null) => return Ok((comments, comment_ids)),
            Some(Value::Array(cs)) => cs,
            found => {
                return Err(
                    self.err("comments", format!("\"comments\" must be an array of comments; found {}", shown(found)))
                )
            }
        };
        for (k, c) in cs.iter().enumerate() {
            let path = format!("comments[{k}]");
            let body = c.get("text").and_then(Value::as_str);
            let created = self.time_of(&format!("{path}.created_at"), c.get("created_at"))?;
            let (Some(body), Some(created_us)) = (body, created) else {
                let msg = format!(
                    "a comment must be {{\"id\": …, \"issue_id\": \"{id}\", \"author\": …, \"text\": \"…\", \"created_at\": \"2026-04-18T16:19:12Z\"}}; found {}",
                    shown(Some(c))
                );
                return Err(self.err(&path, msg));
            };
            let author = c.get("author").and_then(Value::as_str).filter(|a| !a.is_empty()).map(str::to_string);
            comments.push(Comment { author, created_us, body: body.to_string() });
            comment_ids.push(c.get("id").cloned().unwrap_or(Value::Null));
        }
        Ok((comments, comment_ids))
    }
}

/// Reads one issue (line `n`).
fn read_issue(file: &str, n: usize, obj: &Map<String, Value>) -> Result<Record, FileError> {
    let line = IssueLine { file, n, obj };
    let mut extra: Map<String, Value> =
        obj.iter().filter(|(k, _)| !FIELDS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    let id = line.id()?;
    let title = line.title()?;
    let status = line.status(&mut extra)?;
    let priority = line.priority(&mut extra)?;
    let labels = line.labels()?;
    let (dependencies, blocks, links) = line.dependencies(&id)?;
    let (comments, comment_ids) = line.comments(&id)?;
    for (key, list) in [("blocks", blocks), ("links", links), ("comment_ids", comment_ids)] {
        if !list.is_empty() {
            extra.insert(key.to_string(), Value::Array(list));
        }
    }
    Ok(Record {
        id,
        title,
        description: line.text("description")?,
        status,
        priority,
        labels,
        issue_type: line.text("issue_type")?,
        assignee: line.text("assignee")?,
        due_us: line.time("due_at")?,
        notes: line.text("notes")?,
        plan: line.text("design")?,
        criteria: line.text("acceptance_criteria")?,
        outcome: line.text("close_reason")?,
        dependencies,
        comments,
        created_us: line.time("created_at")?,
        updated_us: line.time("updated_at")?,
        completed_us: line.time("closed_at")?,
        extra,
        ..Record::default()
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::render::render;
    use super::*;

    /// `bd export` at HEAD (`_type` and the counts), built from beads' real lines.
    const HEAD: &str = include_str!("../fixtures/beads_issues.jsonl");
    /// Older exports, lines from beads' own history as recorded in the spec (no `_type`, a
    /// `blocked-by` dependency, a comment with an integer id).
    const OLD: &str = include_str!("../fixtures/beads_issues_old.jsonl");

    fn err(text: &str) -> FileError {
        parse(".beads/issues.jsonl", text).unwrap_err()
    }

    #[test]
    fn reads_issues() {
        let rs = parse("issues.jsonl", HEAD).unwrap();
        let ids: Vec<&str> = rs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["bd-fivze", "bd-find4", "bd-main-idj"]);
        let (a, b, c) = (&rs[0], &rs[1], &rs[2]);
        assert_eq!(a.status, Status::Completed);
        assert_eq!(a.outcome.as_deref(), Some("Done in config"));
        assert_eq!(a.completed_us, parse_iso8601("2026-01-17T00:08:34Z"));
        assert_eq!(a.description.as_deref(), Some("## Background\n\nGas Town's types <agent> & rig need config."));
        assert_eq!(a.labels, ["architecture", "tech-debt"]);
        assert_eq!(a.dependencies, ["bd-find4"]);
        assert_eq!(
            a.extra["blocks"],
            json!([{"id": "bd-find4", "created_at": "2026-01-23T23:16:08Z", "created_by": "import"}])
        );
        assert_eq!((a.priority.as_deref(), &a.extra["priority"]), (Some("medium"), &json!(2)));
        assert_eq!(a.extra["work_type"], "mutex");
        assert_eq!(a.extra.get("dependency_count"), None);
        assert_eq!(
            (b.status, b.priority.as_deref(), b.assignee.as_deref()),
            (Status::InProgress, Some("high"), Some("wolf"))
        );
        assert!(b.dependencies.is_empty());
        assert_eq!(b.extra["links"][0]["type"], "related");
        assert_eq!(b.extra["external_ref"], "gh-3271");
        assert_eq!(b.updated_us, Some(1_769_485_721_250_000));
        assert_eq!(b.comments[0].author.as_deref(), Some("beads/crew/wolf"));
        assert_eq!(b.comments[0].body, "BG found a regression in production");
        assert_eq!(c.plan.as_deref(), Some("Walk each package; list the patterns."));
        assert_eq!(c.criteria.as_deref(), Some("Inventory table checked in"));
        assert_eq!(c.notes.as_deref(), Some("Started with internal/"));
        assert_eq!((c.priority.as_deref(), &c.extra["priority"]), (Some("low"), &json!(4)));
        assert_eq!(c.issue_type.as_deref(), Some("chore"));
        assert_eq!(c.due_us, parse_iso8601("2026-05-01T00:00:00Z"));
    }

    #[test]
    fn round_trips() {
        let rs = parse("issues.jsonl", HEAD).unwrap();
        assert_eq!(render(&rs), HEAD);
        let old = parse("issues.jsonl", OLD).unwrap();
        assert_eq!(
            old[0].extra["links"],
            json!([{"id": "bd-find4", "type": "blocked-by", "created_at": "2026-01-23T23:16:08Z", "created_by": "import"}])
        );
        assert_eq!(old[1].extra["comment_ids"], json!([2]));
        assert_eq!(parse("issues.jsonl", &render(&old)).unwrap(), old);
        // the old layout gains `_type` and the counts, as HEAD writes every line
        let line = render(&old[2..]);
        assert_eq!(line, format!("{{\"_type\":\"issue\",{}", &OLD.lines().nth(2).unwrap()[1..]) + "\n");
    }

    #[test]
    fn renders_records_from_elsewhere() {
        let mut a =
            Record { id: "7".into(), title: "Ship <it> & go".into(), status: Status::Canceled, ..Record::default() };
        a.priority = Some("high".into());
        a.labels = vec!["z".into(), "a".into()];
        a.created_us = Some(1_795_315_748_000_000);
        a.completed_us = Some(1_795_315_748_123_400);
        a.dependencies = vec!["8".into()];
        let b = Record { id: "8".into(), title: "Tag".into(), status: Status::Review, ..Record::default() };
        assert_eq!(
            render(&[a, b]),
            concat!(
                r#"{"_type":"issue","id":"7","title":"Ship \u003cit\u003e \u0026 go","status":"closed","priority":1,"#,
                r#""created_at":"2026-11-22T02:49:08Z","updated_at":"2026-11-22T02:49:08Z","closed_at":"2026-11-22T02:49:08.1234Z","#,
                r#""labels":["a","z"],"dependencies":[{"issue_id":"7","depends_on_id":"8","type":"blocks","created_at":"2026-11-22T02:49:08Z"}],"#,
                r#""dependency_count":1,"dependent_count":0,"comment_count":0}"#,
                "\n",
                r#"{"_type":"issue","id":"8","title":"Tag","status":"in_progress","priority":2,"created_at":"1970-01-01T00:00:00Z","#,
                r#""updated_at":"1970-01-01T00:00:00Z","dependency_count":0,"dependent_count":1,"comment_count":0}"#,
                "\n"
            )
        );
    }

    #[test]
    fn blank_lines_memories_and_pinned() {
        let text = "\n{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"pinned\",\"priority\":0}\n   \n{\"_type\":\"memory\",\"key\":\"k\",\"value\":\"v\"}\n";
        let rs = parse("issues.jsonl", text).unwrap();
        assert_eq!(rs.len(), 1);
        assert_eq!((rs[0].status, rs[0].priority.as_deref()), (Status::Deferred, Some("high")));
        assert!(render(&rs).contains(r#""status":"pinned","priority":0,"#));
    }

    #[test]
    fn errors_name_the_line_and_field() {
        let e = err("{\"id\":\"bd-1\",\"title\":\"a\"}\n\n{\"id\":\"bd-2\",\"title\":\"b\"\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(3), None));
        assert!(e.message.starts_with("not valid JSON ("), "{}", e.message);
        let e = err("{\"id\":\"bd-1\",\"title\":\"a\",\"status\":\"in_review\"}\n");
        assert_eq!((e.line, e.field.as_deref()), (Some(1), Some("status")));
        assert!(e.message.starts_with("\"status\" must be one of open, in_progress, blocked, deferred, closed, pinned, hooked; found \"in_review\""));
        let e = err("{\"id\":\"bd-1\",\"title\":\"a\"}\n{\"id\":\"bd-1\",\"title\":\"again\"}\n");
        assert_eq!(
            e.to_string(),
            ".beads/issues.jsonl, line 2, id: issue bd-1 is already on line 1; keep one line per issue"
        );
        let e = err("{\"id\":\"bd-1\",\"title\":\"a\",\"priority\":5}");
        assert_eq!(e.message, "\"priority\" must be 0 to 4 (0 the highest); found 5");
        let e = err("{\"id\":\"bd-1\",\"title\":\"a\",\"dependencies\":[{\"issue_id\":\"bd-1\",\"type\":\"blocks\"}]}");
        assert_eq!(e.field.as_deref(), Some("dependencies[0]"));
        let e =
            err("{\"id\":\"bd-1\",\"title\":\"a\",\"comments\":[{\"id\":1,\"text\":\"x\",\"created_at\":\"later\"}]}");
        assert_eq!(e.field.as_deref(), Some("comments[0].created_at"));
        assert_eq!(err("[1]").line, Some(1));
    }
}
