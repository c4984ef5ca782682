//! Claude Code's own files, read into records and written back: the TodoWrite list of a
//! session's agent (`~/.claude/todos/<session>-agent-<agent>.json`) and the task list of the
//! Task tools (`~/.claude/tasks/<list>/<id>.json`, one file per task).
//!
//! A todo file is a JSON array of `{"content", "status", "activeForm"}` (older versions
//! wrote `{"content", "status", "priority", "id"}`): content the title, `activeForm` the
//! active form, `priority` the priority, `id` the record's id (else its place, `1`, `2`, …).
//! A task file is `{"id", "subject", "description", "activeForm", "owner", "status",
//! "blocks", "blockedBy", "metadata"}`: subject the title, owner the assignee, `blockedBy`
//! the dependencies; `blocks` are the same edges seen from the other side, so they are
//! derived from the dependencies when written, not kept. Statuses are `pending`,
//! `in_progress`, `completed`; written, a blocked or deferred record is pending, one in
//! review in progress, and a canceled one is left out (Claude Code has no canceled task; its
//! lists drop them). Other keys are kept in the extra (`metadata` by that name).
//!
//! Both are written as `JSON.stringify(value, null, 2)`, no newline at the end. Not verified:
//! Claude Code's source is not public; the shapes come from pg_todos' reference of its tools
//! (`runtime-dialects.md`) and the files users have published, the indentation and key
//! order from those files. A todo file is written in the current form only (no `id`, no
//! `priority`, which today's Claude Code does not know).

use serde_json::{Map, Value};

use super::json::{field_error, not_json, shown, to_js_pretty, Json, Obj};
use crate::file_names::{component, from_component};
use crate::interchange::{FileError, Record};
use crate::status::Status;

/// The keys of a TodoWrite item a record field holds.
const TODO_FIELDS: &[&str] = &["content", "status", "activeForm", "priority", "id"];

/// The keys of a task file a record field holds (or that are derived: `blocks`).
const TASK_FIELDS: &[&str] = &["id", "subject", "description", "activeForm", "owner", "status", "blocks", "blockedBy"];

/// Claude Code's status of a record; None: not on Claude Code's lists (canceled).
fn status_name(s: Status) -> Option<&'static str> {
    match s {
        Status::Pending | Status::Blocked | Status::Deferred => Some("pending"),
        Status::InProgress | Status::Review => Some("in_progress"),
        Status::Completed => Some("completed"),
        Status::Canceled => None,
    }
}

fn parse_status(file: &str, field: &str, v: Option<&Value>) -> Result<Status, FileError> {
    match v.and_then(Value::as_str) {
        Some("pending") => Ok(Status::Pending),
        Some("in_progress") => Ok(Status::InProgress),
        Some("completed") => Ok(Status::Completed),
        _ => Err(field_error(
            file,
            None,
            field,
            format!("\"status\" must be one of pending, in_progress, completed; found {}", shown(v)),
        )),
    }
}

fn string(file: &str, field: &str, key: &str, v: Option<&Value>) -> Result<Option<String>, FileError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        found => Err(field_error(file, None, field, format!("\"{key}\" must be a string; found {}", shown(found)))),
    }
}

/// Reads a TodoWrite file (`file` names it in errors): one record per item, in order, with
/// the item's own `id` (older files) or its place from 1.
pub fn parse_todos(file: &str, text: &str) -> Result<Vec<Record>, FileError> {
    let root: Value = serde_json::from_str(text).map_err(|e| not_json(file, None, &e))?;
    let Value::Array(items) = &root else {
        let msg = format!(
            "a todo file must be an array of {{\"content\", \"status\", \"activeForm\"}}; found {}",
            shown(Some(&root))
        );
        return Err(FileError { file: file.to_string(), line: None, field: None, message: msg });
    };
    let mut records: Vec<Record> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = |key: &str| format!("[{i}].{key}");
        let Value::Object(obj) = item else {
            let msg =
                format!("an item must be {{\"content\", \"status\", \"activeForm\"}}; found {}", shown(Some(item)));
            return Err(field_error(file, None, &format!("[{i}]"), msg));
        };
        let title = string(file, &at("content"), "content", obj.get("content"))?.filter(|s| !s.is_empty());
        let Some(title) = title else {
            let msg = format!("\"content\" must be the item's text; found {}", shown(obj.get("content")));
            return Err(field_error(file, None, &at("content"), msg));
        };
        let id = match obj.get("id") {
            None | Some(Value::Null) => (i + 1).to_string(),
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            found => {
                return Err(field_error(
                    file,
                    None,
                    &at("id"),
                    format!("\"id\" must be a string; found {}", shown(found)),
                ))
            }
        };
        if records.iter().any(|r| r.id == id) {
            let msg = format!("id {id} is used twice; give each item its own id");
            return Err(field_error(file, None, &at("id"), msg));
        }
        let priority = match obj.get("priority") {
            None | Some(Value::Null) => None,
            Some(Value::String(p)) if ["high", "medium", "low"].contains(&p.as_str()) => Some(p.clone()),
            found => {
                let msg = format!("\"priority\" must be one of high, medium, low; found {}", shown(found));
                return Err(field_error(file, None, &at("priority"), msg));
            }
        };
        records.push(Record {
            id,
            title,
            status: parse_status(file, &at("status"), obj.get("status"))?,
            priority,
            active_form: string(file, &at("activeForm"), "activeForm", obj.get("activeForm"))?,
            extra: rest(obj, TODO_FIELDS),
            ..Record::default()
        });
    }
    Ok(records)
}

/// The keys of `obj` no field holds.
fn rest(obj: &Map<String, Value>, fields: &[&str]) -> Map<String, Value> {
    obj.iter().filter(|(k, _)| !fields.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Writes the records as a TodoWrite file, `[{"content", "status", "activeForm"}, …]` in
/// order (the active form is the title when the record has none: Claude Code requires
/// one); canceled records are left out.
pub fn render_todos(records: &[Record]) -> String {
    let items = records.iter().filter_map(|r| {
        let status = status_name(r.status)?;
        let mut o = Obj::default();
        o.put("content", r.title.as_str());
        o.put("status", status);
        o.put("activeForm", r.active_form.clone().unwrap_or_else(|| r.title.clone()));
        for (k, v) in r.extra.iter().filter(|(k, _)| !TODO_FIELDS.contains(&k.as_str())) {
            o.put(k, v.clone());
        }
        Some(o.done())
    });
    to_js_pretty(&Json::Array(items.collect()))
}

/// Reads one task file. `file` names it in errors and, when it has the list's directory
/// (`…/tasks/<list>/3.json`), names the record's list (the directory's name read back by
/// `file_names::from_component`, as `pg_todos export` wrote it).
pub fn parse_task(file: &str, text: &str) -> Result<Record, FileError> {
    let root: Value = serde_json::from_str(text).map_err(|e| not_json(file, None, &e))?;
    let Value::Object(obj) = &root else {
        let msg =
            format!("a task file must be an object {{\"id\": \"1\", \"subject\": …}}; found {}", shown(Some(&root)));
        return Err(FileError { file: file.to_string(), line: None, field: None, message: msg });
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        found => {
            return Err(field_error(
                file,
                None,
                "id",
                format!("\"id\" must be a string like \"3\"; found {}", shown(found)),
            ))
        }
    };
    let Some(title) = string(file, "subject", "subject", obj.get("subject"))? else {
        return Err(field_error(file, None, "subject", "\"subject\" must be the task's title; found nothing".into()));
    };
    let dependencies = match obj.get("blockedBy") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(ids)) if ids.iter().all(Value::is_string) => {
            ids.iter().filter_map(Value::as_str).map(str::to_string).collect()
        }
        found => {
            let msg = format!("\"blockedBy\" must be an array of task ids like [\"2\"]; found {}", shown(found));
            return Err(field_error(file, None, "blockedBy", msg));
        }
    };
    let mut dirs = file.rsplit(['/', '\\']).skip(1);
    let list = dirs.next().filter(|d| !d.is_empty() && *d != "." && *d != "..").map(from_component);
    Ok(Record {
        id,
        list,
        title,
        description: string(file, "description", "description", obj.get("description"))?.filter(|s| !s.is_empty()),
        status: parse_status(file, "status", obj.get("status"))?,
        assignee: string(file, "owner", "owner", obj.get("owner"))?,
        active_form: string(file, "activeForm", "activeForm", obj.get("activeForm"))?,
        dependencies,
        extra: rest(obj, TASK_FIELDS),
        ..Record::default()
    })
}

/// Writes the records as a task list's files, `(<id>.json, its text)` in the records'
/// order (the id made one safe file name, `file_names::component`: `../x` is
/// `%2E.%2Fx.json`): each task's `blockedBy` its dependencies on the others given, its `blocks` the
/// tasks given that depend on it. Canceled records (and dependencies on them) are left out.
pub fn render_tasks(records: &[Record]) -> Vec<(String, String)> {
    let kept: Vec<&Record> = records.iter().filter(|r| status_name(r.status).is_some()).collect();
    let on_list = |id: &str| kept.iter().any(|r| r.id == id);
    kept.iter()
        .map(|r| {
            let mut o = Obj::default();
            o.put("id", r.id.as_str());
            o.put("subject", r.title.as_str());
            o.put("description", r.description.clone().unwrap_or_default());
            if let Some(form) = &r.active_form {
                o.put("activeForm", form.as_str());
            }
            if let Some(owner) = &r.assignee {
                o.put("owner", owner.as_str());
            }
            o.put("status", status_name(r.status).unwrap_or("pending"));
            let blocks =
                kept.iter().filter(|other| other.dependencies.contains(&r.id)).map(|other| other.id.as_str().into());
            o.put("blocks", Json::Array(blocks.collect()));
            let blocked_by = r.dependencies.iter().filter(|d| on_list(d)).map(|d| d.as_str().into());
            o.put("blockedBy", Json::Array(blocked_by.collect()));
            for (k, v) in r.extra.iter().filter(|(k, _)| !TASK_FIELDS.contains(&k.as_str())) {
                o.put(k, v.clone());
            }
            (format!("{}.json", component(&r.id)), to_js_pretty(&o.done()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const TODOS: &str = r#"[
  {
    "content": "Run the migration tests",
    "status": "completed",
    "activeForm": "Running the migration tests"
  },
  {
    "content": "Fix the \"claim\" race in the worker",
    "status": "in_progress",
    "activeForm": "Fixing the \"claim\" race in the worker"
  },
  {
    "content": "Update docs/mcp.md",
    "status": "pending",
    "activeForm": "Updating docs/mcp.md"
  }
]"#;

    const OLDER_TODOS: &str = r#"[{"content": "Read the schema", "status": "completed", "priority": "high", "id": "1"},
        {"content": "Write the importer", "status": "pending", "priority": "medium", "id": "2"}]"#;

    const TASK_1: &str = r#"{
  "id": "1",
  "subject": "Design the import command",
  "description": "Decide the flags of pg_todos import and what it prints.",
  "activeForm": "Designing the import command",
  "status": "completed",
  "blocks": [
    "2"
  ],
  "blockedBy": []
}"#;

    const TASK_2: &str = r#"{
  "id": "2",
  "subject": "Implement the Task Master reader",
  "description": "Parse tasks.json into records.",
  "activeForm": "Implementing the Task Master reader",
  "owner": "researcher",
  "status": "in_progress",
  "blocks": [],
  "blockedBy": [
    "1"
  ],
  "metadata": {
    "_internal": false,
    "ticket": "PGT-12"
  }
}"#;

    #[test]
    fn todos() {
        let rs = parse_todos("todos/abc-agent-abc.json", TODOS).unwrap();
        let ids: Vec<&str> = rs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["1", "2", "3"]);
        assert_eq!(rs[1].title, "Fix the \"claim\" race in the worker");
        assert_eq!(rs[1].active_form.as_deref(), Some("Fixing the \"claim\" race in the worker"));
        assert_eq!(
            rs.iter().map(|r| r.status).collect::<Vec<_>>(),
            [Status::Completed, Status::InProgress, Status::Pending]
        );
        assert_eq!(render_todos(&rs), TODOS);
        let older = parse_todos("todos/x.json", OLDER_TODOS).unwrap();
        assert_eq!((older[0].id.as_str(), older[0].priority.as_deref()), ("1", Some("high")));
        assert_eq!(older[1].active_form, None);
        // written in today's form: the title stands in for the missing active form
        assert!(render_todos(&older).contains("\"activeForm\": \"Write the importer\"\n"));
        assert_eq!(render_todos(&[]), "[]");
    }

    #[test]
    fn todos_of_other_statuses() {
        let mk = |id: &str, status| Record { id: id.into(), title: format!("t{id}"), status, ..Record::default() };
        let rs = [mk("1", Status::Blocked), mk("2", Status::Canceled), mk("3", Status::Review)];
        let back = parse_todos("x.json", &render_todos(&rs)).unwrap();
        assert_eq!(
            back.iter().map(|r| (r.title.as_str(), r.status)).collect::<Vec<_>>(),
            [("t1", Status::Pending), ("t3", Status::InProgress)]
        );
    }

    #[test]
    fn todo_errors() {
        let e = parse_todos("t.json", r#"[{"content": "a", "status": "done", "activeForm": "A"}]"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json, [0].status: \"status\" must be one of pending, in_progress, completed; found \"done\""
        );
        let e = parse_todos("t.json", r#"[{"content": "", "status": "pending"}]"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("[0].content"));
        let e = parse_todos(
            "t.json",
            r#"[{"content": "a", "status": "pending", "id": "1"}, {"content": "b", "status": "pending", "id": "1"}]"#,
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("[1].id"));
        assert_eq!(parse_todos("t.json", "{\"todos\": []}").unwrap_err().field, None);
        assert_eq!(parse_todos("t.json", "[\n{\n]").unwrap_err().line, Some(3));
    }

    #[test]
    fn tasks() {
        let t1 = parse_task("/home/me/.claude/tasks/pg-todos/1.json", TASK_1).unwrap();
        let t2 = parse_task("/home/me/.claude/tasks/pg-todos/2.json", TASK_2).unwrap();
        assert_eq!(t1.list.as_deref(), Some("pg-todos"));
        assert_eq!((t1.title.as_str(), t1.status), ("Design the import command", Status::Completed));
        assert!(t1.dependencies.is_empty());
        assert_eq!(t1.extra.get("blocks"), None);
        assert_eq!(t2.dependencies, ["1"]);
        assert_eq!(t2.assignee.as_deref(), Some("researcher"));
        assert_eq!(t2.extra["metadata"], json!({"_internal": false, "ticket": "PGT-12"}));
        let files = render_tasks(&[t1.clone(), t2.clone()]);
        assert_eq!(files, [("1.json".to_string(), TASK_1.to_string()), ("2.json".to_string(), TASK_2.to_string())]);
        assert_eq!(parse_task("3.json", TASK_1).unwrap().list, None);
        // a canceled blocker is off the list: so are its edges
        let gone = Record { status: Status::Canceled, ..t1 };
        let files = render_tasks(&[gone, t2]);
        assert_eq!(files.len(), 1);
        assert!(files[0].1.contains("\"blockedBy\": [],"), "{}", files[0].1);
    }

    #[test]
    fn hostile_ids_and_lists_stay_one_file_name() {
        let r = Record { id: "../../../../.claude/settings".into(), title: "t".into(), ..Record::default() };
        let files = render_tasks(&[r]);
        assert_eq!(files[0].0, "%2E.%2F..%2F..%2F..%2F.claude%2Fsettings.json");
        let back = parse_task(&format!("tasks/%2E.%2F..%2Fx/{}", files[0].0), &files[0].1).unwrap();
        assert_eq!(back.id, "../../../../.claude/settings");
        assert_eq!(back.list.as_deref(), Some("../../x"));
        assert_eq!(parse_task("tasks/a%1Bb/1.json", TASK_1).unwrap().list.as_deref(), Some("a\u{1b}b"));
    }

    #[test]
    fn task_errors() {
        let e = parse_task("t/1.json", r#"{"id": "1", "subject": "a", "status": "deleted"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("status"));
        let e = parse_task("t/1.json", r#"{"id": "1", "subject": "a", "status": "pending", "blockedBy": [2]}"#)
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("blockedBy"));
        let e = parse_task("t/1.json", r#"{"id": "1", "status": "pending"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("subject"));
        let e = parse_task("t/1.json", r#"{"subject": "a", "status": "pending"}"#).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("id"));
    }
}
