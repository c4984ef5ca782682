//! Task Master's `.taskmaster/tasks/tasks.json`, read into records and written back.
//!
//! The file is an object of tags, `{"master": {"tasks": [...], "metadata": {...}}, ...}`;
//! the pre-tag form `{"tasks": [...], "metadata": {...}}` is read as the tag `master` (as
//! Task Master migrates it). A task is a record on the list named by its tag; its subtasks
//! are records `P.S` whose parent is `P`. Fields: `title`; `description`; `details` the
//! plan; `testStrategy` the criteria; `status` (`done` and `completed` both completed,
//! `cancelled` canceled, `in-progress`, `pending`, `deferred`, `blocked`, `review`);
//! `priority` high, medium or low (`critical` is high, with `{"priority": "critical"}` in the
//! extra so that it is written back as critical; `completed` likewise keeps
//! `{"status": "completed"}`); `dependencies` as id strings (a subtask's number `n` is its
//! sibling `P.n`); `createdAt`, `updatedAt`. Every other key (`complexity`, `metadata`,
//! `assignee`, `tags`, a subtask's `parentTaskId` and `parentId`, …) is kept in the extra,
//! and the tag's own `metadata` in the extra of the tag's first task under
//! [`TAG_METADATA`].
//!
//! `render` writes what Task Master's writers write: `JSON.stringify(data, null, 2)`, no
//! newline at the end; a task's keys in the legacy writers' order (`id`, `title`,
//! `description`, `details`, `testStrategy`, `status`, `dependencies`, `priority`,
//! `subtasks`, then the rest, then `createdAt`, `updatedAt`). Task ids and dependencies are
//! numbers, as the legacy writers normalize them, except in a tag last written by tm-core
//! (its metadata has `version` and no `created`), where they are strings as tm-core writes
//! them. What the records cannot say, and so is not reproduced: the key order of an object
//! whose keys were written in another order (tasks made by an AI tool, tag metadata filled
//! in by another path), and a dependency written as a string in a tag whose ids are numbers.
//!
//! Here the reading; `render` the writing.

pub mod render;

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::json::{field_error, not_json, parse_iso8601, shown, to_js_pretty, Json, Obj};
use crate::interchange::{FileError, Record};
use crate::status::Status;

/// The key of a record's extra that holds its tag's `metadata` object (on the tag's first
/// task), so that export writes it back.
pub const TAG_METADATA: &str = "tagMetadata";

/// Task Master's statuses and what each is in the store (`completed` is its old word for
/// `done`).
const STATUSES: &[(&str, Status)] = &[
    ("pending", Status::Pending),
    ("in-progress", Status::InProgress),
    ("done", Status::Completed),
    ("completed", Status::Completed),
    ("cancelled", Status::Canceled),
    ("deferred", Status::Deferred),
    ("blocked", Status::Blocked),
    ("review", Status::Review),
];

/// Task Master's word for a status.
pub fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pending => "pending",
        Status::InProgress => "in-progress",
        Status::Completed => "done",
        Status::Canceled => "cancelled",
        Status::Deferred => "deferred",
        Status::Blocked => "blocked",
        Status::Review => "review",
    }
}

/// The store's status for one of Task Master's words (None: not one of them).
pub fn status_of(word: &str) -> Option<Status> {
    STATUSES.iter().find(|(name, _)| *name == word).map(|(_, s)| *s)
}

/// The keys of a task that a record field holds (never copied to or from the extra).
const FIELDS: &[&str] = &[
    "id",
    "title",
    "description",
    "details",
    "testStrategy",
    "status",
    "dependencies",
    "priority",
    "subtasks",
    "createdAt",
    "updatedAt",
];

/// The order Task Master's writers leave a tag's metadata keys in (tm-core's own keys, then
/// the ones the legacy reader adds).
const METADATA_ORDER: &[&str] = &[
    "version",
    "lastModified",
    "taskCount",
    "completedCount",
    "projectName",
    "tags",
    "created",
    "description",
    "updated",
];

/// Reads a `tasks.json`: every task and subtask of every tag, in the file's order, a
/// subtask after its parent. `file` names the file in errors.
pub fn parse(file: &str, text: &str) -> Result<Vec<Record>, FileError> {
    let root: Value = serde_json::from_str(text).map_err(|e| not_json(file, None, &e))?;
    let Value::Object(top) = &root else {
        let msg = format!(
            "the file must be an object of tags like {{\"master\": {{\"tasks\": [], \"metadata\": {{}}}}}}; found {}",
            shown(Some(&root))
        );
        return Err(FileError { file: file.to_string(), line: None, field: None, message: msg });
    };
    let tagged = top.values().any(|v| v.get("tasks").is_some_and(Value::is_array));
    let mut records = Vec::new();
    if !tagged && top.get("tasks").is_some_and(Value::is_array) {
        read_tag(file, "master", "", top, &mut records)?;
        return Ok(records);
    }
    for tag in top_level_keys(text) {
        let Some(Value::Object(tag_obj)) = top.get(&tag) else {
            let msg = format!(
                "a tag must be an object {{\"tasks\": [...], \"metadata\": {{...}}}}; found {}",
                shown(top.get(&tag))
            );
            return Err(field_error(file, None, &tag, msg));
        };
        read_tag(file, &tag, &format!("{tag}."), tag_obj, &mut records)?;
    }
    Ok(records)
}

/// The keys of the top-level object in the order the text has them (serde_json's maps sort
/// them; a tag's place in the file is kept). Only called on text that parsed as an object.
fn top_level_keys(text: &str) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0usize, false, false, 0usize);
    for (i, c) in text.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                let after = text[i + 1..].trim_start();
                if depth == 1 && after.starts_with(':') {
                    if let Ok(key) = serde_json::from_str::<String>(&text[start..=i]) {
                        if !keys.contains(&key) {
                            keys.push(key);
                        }
                    }
                }
            }
            continue;
        }
        match c {
            '"' => (in_string, start) = (true, i),
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    keys
}

/// Reads one tag's tasks (`prefix`: the tag and a dot, or nothing for the pre-tag form).
fn read_tag(
    file: &str,
    tag: &str,
    prefix: &str,
    tag_obj: &Map<String, Value>,
    records: &mut Vec<Record>,
) -> Result<(), FileError> {
    let path = format!("{prefix}tasks");
    let Some(Value::Array(tasks)) = tag_obj.get("tasks") else {
        let msg = format!("must be an array of tasks, [] for none; found {}", shown(tag_obj.get("tasks")));
        return Err(field_error(file, None, &path, msg));
    };
    let first = records.len();
    let mut seen = HashSet::new();
    for (i, task) in tasks.iter().enumerate() {
        let task_path = format!("{path}[{i}]");
        let record = read_task(file, tag, &task_path, task, None)?;
        if !seen.insert(record.id.clone()) {
            let msg = format!("id {} is used twice in tag {tag}; give each task its own id", record.id);
            return Err(field_error(file, None, &format!("{task_path}.id"), msg));
        }
        let parent = record.id.clone();
        records.push(record);
        match task.get("subtasks") {
            None | Some(Value::Null) => {}
            Some(Value::Array(subtasks)) => {
                for (j, subtask) in subtasks.iter().enumerate() {
                    let sub_path = format!("{task_path}.subtasks[{j}]");
                    let record = read_task(file, tag, &sub_path, subtask, Some(&parent))?;
                    if !seen.insert(record.id.clone()) {
                        let msg = format!("subtask id {} is used twice; give each subtask its own number", record.id);
                        return Err(field_error(file, None, &format!("{sub_path}.id"), msg));
                    }
                    records.push(record);
                }
            }
            Some(other) => {
                let msg = format!("must be an array of subtasks, [] for none; found {}", shown(Some(other)));
                return Err(field_error(file, None, &format!("{task_path}.subtasks"), msg));
            }
        }
    }
    if let (Some(meta @ Value::Object(_)), Some(record)) = (tag_obj.get("metadata"), records.get_mut(first)) {
        record.extra.insert(TAG_METADATA.to_string(), meta.clone());
    }
    Ok(())
}

/// One task's object being read: the file, the task's path in it (`master.tasks[3]`), and
/// its parent's id for a subtask.
struct TaskAt<'a> {
    file: &'a str,
    path: &'a str,
    obj: &'a Map<String, Value>,
    parent: Option<&'a str>,
}

impl TaskAt<'_> {
    fn err(&self, key: &str, msg: String) -> FileError {
        field_error(self.file, None, &format!("{}.{key}", self.path), msg)
    }

    /// The task's id, a subtask's with its parent's (`5.2`).
    fn id(&self) -> Result<String, FileError> {
        let id = match (self.obj.get("id"), self.parent) {
            (Some(Value::Number(n)), _) if n.as_u64().is_some() => n.to_string(),
            // a subtask's id "5.2" (Task Master reads the part after the dot)
            (Some(Value::String(s)), Some(_)) if s.rsplit('.').next().is_some_and(is_number) => {
                s.rsplit('.').next().unwrap_or_default().to_string()
            }
            (Some(Value::String(s)), None) if !s.is_empty() => s.clone(),
            (found, _) => {
                let like = if self.parent.is_some() { "a number like 2" } else { "a number like 3" };
                return Err(self.err("id", format!("\"id\" must be {like}; found {}", shown(found))));
            }
        };
        Ok(match self.parent {
            Some(p) => format!("{p}.{id}"),
            None => id,
        })
    }

    /// A string field (None: missing, null or empty).
    fn text(&self, key: &str) -> Result<Option<String>, FileError> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.err(key, format!("\"{key}\" must be a string; found {}", shown(Some(other))))),
        }
    }

    /// A time field.
    fn time(&self, key: &str) -> Result<Option<i64>, FileError> {
        match self.obj.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if parse_iso8601(s).is_some() => Ok(parse_iso8601(s)),
            Some(other) => Err(self.err(
                key,
                format!(
                    "\"{key}\" must be an ISO 8601 time like \"2026-01-08T21:17:16.264Z\"; found {}",
                    shown(Some(other))
                ),
            )),
        }
    }

    fn title(&self) -> Result<String, FileError> {
        match self.obj.get("title") {
            Some(Value::String(s)) => Ok(s.clone()),
            found => Err(self.err("title", format!("\"title\" must be a string; found {}", shown(found)))),
        }
    }

    /// The status (`completed`, a synonym of `done`, kept in the extra).
    fn status(&self, extra: &mut Map<String, Value>) -> Result<Status, FileError> {
        match self.obj.get("status") {
            None | Some(Value::Null) => Ok(Status::Pending),
            Some(Value::String(s)) if STATUSES.iter().any(|(name, _)| name == s) => {
                if s == "completed" {
                    extra.insert("status".into(), Value::String(s.clone()));
                }
                Ok(STATUSES.iter().find(|(name, _)| name == s).map(|(_, st)| *st).unwrap_or_default())
            }
            found => {
                let names: Vec<&str> = STATUSES.iter().map(|(name, _)| *name).collect();
                let msg = format!("\"status\" must be one of {}; found {}", names.join(", "), shown(found));
                Err(self.err("status", msg))
            }
        }
    }

    /// The priority (`critical` is high, the word kept in the extra).
    fn priority(&self, extra: &mut Map<String, Value>) -> Result<Option<String>, FileError> {
        match self.obj.get("priority") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if ["high", "medium", "low"].contains(&s.as_str()) => Ok(Some(s.clone())),
            Some(Value::String(s)) if s == "critical" => {
                extra.insert("priority".into(), Value::String(s.clone()));
                Ok(Some("high".to_string()))
            }
            found => {
                let msg = format!("\"priority\" must be one of high, medium, low, critical; found {}", shown(found));
                Err(self.err("priority", msg))
            }
        }
    }

    /// The ids of the tasks it waits for (a subtask's numbers are its siblings').
    fn dependencies(&self) -> Result<Vec<String>, FileError> {
        match self.obj.get("dependencies") {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(deps)) => deps
                .iter()
                .enumerate()
                .map(|(k, d)| match (d, self.parent) {
                    (Value::Number(n), Some(p)) if n.as_u64().is_some() => Ok(format!("{p}.{n}")),
                    (Value::Number(n), None) if n.as_u64().is_some() => Ok(n.to_string()),
                    (Value::String(s), _) if !s.is_empty() => Ok(s.clone()),
                    _ => Err(self.err(
                        &format!("dependencies[{k}]"),
                        format!("a dependency must be a task id like 3 or \"3.1\"; found {}", shown(Some(d))),
                    )),
                })
                .collect(),
            Some(other) => {
                let msg = format!(
                    "\"dependencies\" must be an array of task ids like [1, \"2.1\"]; found {}",
                    shown(Some(other))
                );
                Err(self.err("dependencies", msg))
            }
        }
    }
}

/// Reads one task, or one subtask of `parent`.
fn read_task(file: &str, tag: &str, path: &str, v: &Value, parent: Option<&str>) -> Result<Record, FileError> {
    let Value::Object(obj) = v else {
        let msg = format!("a task must be an object {{\"id\": 1, \"title\": \"…\", …}}; found {}", shown(Some(v)));
        return Err(field_error(file, None, path, msg));
    };
    let task = TaskAt { file, path, obj, parent };
    let id = task.id()?;
    let mut extra: Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| !FIELDS.contains(&k.as_str()) || (parent.is_some() && k.as_str() == "subtasks"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let title = task.title()?;
    let status = task.status(&mut extra)?;
    let priority = task.priority(&mut extra)?;
    let dependencies = task.dependencies()?;
    Ok(Record {
        id,
        parent: parent.map(str::to_string),
        list: Some(tag.to_string()),
        title,
        description: task.text("description")?,
        status,
        priority,
        plan: task.text("details")?,
        criteria: task.text("testStrategy")?,
        dependencies,
        created_us: task.time("createdAt")?,
        updated_us: task.time("updatedAt")?,
        extra,
        ..Record::default()
    })
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::render::render;
    use super::*;

    /// Written by Task Master 0.43.1's legacy writers (add_task, add_subtask): numeric ids.
    const LEGACY: &str = include_str!("../fixtures/taskmaster_legacy_writer.json");
    /// The same file after set_task_status (tm-core): string task ids and dependencies,
    /// tm-core's tag metadata, `updatedAt`, subtasks' `parentId: "undefined"`.
    const TM_CORE: &str = include_str!("../fixtures/taskmaster_tm_core_writer.json");
    /// Later: two tags (master, then feature-x), a subtask removed, `metadata` on a subtask.
    const TWO_TAGS: &str = include_str!("../fixtures/taskmaster_two_tags.json");

    fn err(text: &str) -> FileError {
        parse("tasks.json", text).unwrap_err()
    }

    #[test]
    fn reads_the_legacy_writers_file() {
        let rs = parse("tasks.json", LEGACY).unwrap();
        let ids: Vec<&str> = rs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["1", "1.1", "1.2", "2"]);
        let (t1, s1, s2, t2) = (&rs[0], &rs[1], &rs[2], &rs[3]);
        assert_eq!(t1.list.as_deref(), Some("master"));
        assert_eq!(t1.title, "Set up database");
        assert_eq!(t1.description.as_deref(), Some("Create schema"));
        assert_eq!(t1.plan.as_deref(), Some("Use Postgres"));
        assert_eq!(t1.criteria.as_deref(), Some("Run migrations"));
        assert_eq!(t1.priority.as_deref(), Some("high"));
        assert_eq!(t1.status, Status::Pending);
        assert_eq!(t1.extra[TAG_METADATA]["description"], "Default tasks context");
        assert_eq!(s1.parent.as_deref(), Some("1"));
        assert_eq!(s1.extra.get("parentTaskId"), Some(&json!(1)));
        assert_eq!(s2.description, None);
        assert_eq!(s2.dependencies, ["1.1"]);
        assert_eq!(t2.dependencies, ["1"]);
        assert_eq!(t2.extra.get(TAG_METADATA), None);
    }

    #[test]
    fn real_files_round_trip() {
        for text in [LEGACY, TM_CORE, TWO_TAGS] {
            let rs = parse("tasks.json", text).unwrap();
            assert_eq!(parse("tasks.json", &render(&rs)).unwrap(), rs);
        }
        // byte for byte where the records say all Task Master wrote
        assert_eq!(render(&parse("tasks.json", LEGACY).unwrap()), LEGACY);
        assert_eq!(render(&parse("tasks.json", TM_CORE).unwrap()), TM_CORE);
        // TWO_TAGS: feature-x's metadata keys are `created, updated, description` (made by
        // add_tag) while master's are `…, created, description, updated` (filled in by the
        // legacy reader): the records keep the values, not the order; all else is the same
        let back = render(&parse("tasks.json", TWO_TAGS).unwrap());
        let feature_x = "      \"updated\": \"2026-11-26T22:02:18.311Z\",\n      \"description\": \"Feature X work\"\n";
        let reordered = "      \"description\": \"Feature X work\",\n      \"updated\": \"2026-11-26T22:02:18.311Z\"\n";
        assert_eq!(back, TWO_TAGS.replace(feature_x, reordered));
    }

    #[test]
    fn tm_core_times_and_tags_in_file_order() {
        let rs = parse("tasks.json", TM_CORE).unwrap();
        assert_eq!(rs[0].status, Status::InProgress);
        assert_eq!(rs[0].updated_us, parse_iso8601("2026-11-26T22:01:23.771Z"));
        assert_eq!(rs[1].extra.get("parentId"), Some(&json!("undefined")));
        let rs = parse("tasks.json", TWO_TAGS).unwrap();
        let lists: Vec<(&str, &str)> = rs.iter().map(|r| (r.list.as_deref().unwrap(), r.id.as_str())).collect();
        assert_eq!(lists, [("master", "1"), ("master", "1.2"), ("master", "2"), ("feature-x", "1")]);
        assert_eq!(rs[1].extra["metadata"], json!({"a": 1}));
    }

    #[test]
    fn legacy_pre_tag_file_is_master() {
        let text = r#"{"tasks": [{"id": "3", "title": "T", "status": "completed", "priority": "critical",
            "dependencies": [1, "2.1"], "subtasks": [{"id": "3.1", "title": "S", "dependencies": [2, "1.4"],
            "status": "blocked"}, {"id": 2, "title": "S2"}], "complexity": 7, "createdAt": "2026-01-08T21:17:16Z"}]}"#;
        let rs = parse("tasks.json", text).unwrap();
        assert_eq!(rs.len(), 3);
        assert_eq!(rs[0].list.as_deref(), Some("master"));
        assert_eq!(rs[0].status, Status::Completed);
        assert_eq!(rs[0].priority.as_deref(), Some("high"));
        assert_eq!(rs[0].dependencies, ["1", "2.1"]);
        assert_eq!(rs[0].extra["complexity"], 7);
        assert_eq!(rs[0].created_us, parse_iso8601("2026-01-08T21:17:16.000Z"));
        assert_eq!((rs[1].id.as_str(), rs[1].status), ("3.1", Status::Blocked));
        assert_eq!(rs[1].dependencies, ["3.2", "1.4"]);
        let out = render(&rs);
        assert!(out.contains("\"status\": \"completed\""), "{out}");
        assert!(out.contains("\"priority\": \"critical\""), "{out}");
        assert!(out.starts_with("{\n  \"master\": {\n    \"tasks\": [\n      {\n        \"id\": 3,"), "{out}");
        // the file had no tag metadata: render wrote the legacy writer's, read back as well
        let mut back = parse("tasks.json", &out).unwrap();
        assert_eq!(back[0].extra.remove(TAG_METADATA).unwrap()["description"], "Tasks for master context");
        assert_eq!(back, rs);
    }

    #[test]
    fn records_from_elsewhere() {
        let mut a = Record { id: "7".into(), title: "Ship".into(), status: Status::Canceled, ..Record::default() };
        a.priority = Some("high".into());
        a.updated_us = Some(1_795_315_748_123_000);
        let b = Record {
            id: "7.1".into(),
            parent: Some("7".into()),
            title: "Tag it".into(),
            status: Status::Review,
            dependencies: vec!["7.2".into()],
            ..Record::default()
        };
        let out = render(&[a, b]);
        let expected = r#"{
  "master": {
    "tasks": [
      {
        "id": 7,
        "title": "Ship",
        "description": "",
        "details": "",
        "testStrategy": "",
        "status": "cancelled",
        "dependencies": [],
        "priority": "high",
        "subtasks": [
          {
            "id": 1,
            "title": "Tag it",
            "description": "",
            "details": "",
            "status": "review",
            "dependencies": [
              "7.2"
            ]
          }
        ],
        "updatedAt": "2026-11-22T02:49:08.123Z"
      }
    ],
    "metadata": {
      "created": "2026-11-22T02:49:08.123Z",
      "updated": "2026-11-22T02:49:08.123Z",
      "description": "Tasks for master context"
    }
  }
}"#;
        assert_eq!(out, expected);
    }

    #[test]
    fn errors_name_the_field_and_the_fix() {
        let e =
            err(r#"{"master": {"tasks": [{"id": 1, "title": "a"}, {"id": 2, "title": "b", "status": "finished"}]}}"#);
        assert_eq!(e.field.as_deref(), Some("master.tasks[1].status"));
        assert_eq!(
            e.message,
            "\"status\" must be one of pending, in-progress, done, completed, cancelled, deferred, blocked, review; found \"finished\""
        );
        let e = err(
            r#"{"master": {"tasks": [{"id": 1, "title": "a", "subtasks": [{"id": 1, "title": "s", "dependencies": [true]}]}]}}"#,
        );
        assert_eq!(e.field.as_deref(), Some("master.tasks[0].subtasks[0].dependencies[0]"));
        let e = err(r#"{"master": {"tasks": [{"id": 1, "title": "a"}, {"id": 1, "title": "b"}]}}"#);
        assert_eq!(e.field.as_deref(), Some("master.tasks[1].id"));
        assert!(e.message.contains("used twice"), "{}", e.message);
        let e = err(r#"{"tasks": [{"id": 1, "title": "a", "priority": "urgent"}]}"#);
        assert_eq!(e.field.as_deref(), Some("tasks[0].priority"));
        let e = err(r#"{"master": {"tasks": [{"title": "a", "updatedAt": "soon"}]}}"#);
        assert_eq!(e.field.as_deref(), Some("master.tasks[0].id"));
        let e = err(r#"{"master": {"tasks": [{"id": 1, "title": "a", "updatedAt": "soon"}]}}"#);
        assert!(e.message.starts_with("\"updatedAt\" must be an ISO 8601 time"), "{}", e.message);
        let e = err("{\n  \"master\": {\n    \"tasks\": [,]\n  }\n}");
        assert_eq!((e.line, e.field.as_deref()), (Some(3), None));
        assert_eq!(
            e.to_string().split(", ").take(2).collect::<Vec<_>>(),
            ["tasks.json", "line 3: not valid JSON (expected value at line 3 column 15); fix the syntax there"]
        );
        assert_eq!(err("[]").field, None);
    }
}
