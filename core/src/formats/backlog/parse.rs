//! Reading one task file: its front matter's entries into a record's fields (the rest kept
//! in the extra), then its body.

use serde_json::Value;

use super::body::*;
use super::yaml::*;
use super::*;

pub(super) fn list_value(v: &Yaml) -> Vec<String> {
    match v {
        Yaml::List(items) => items.clone(),
        Yaml::Str(s, _) => vec![s.clone()],
        Yaml::Null => Vec::new(),
    }
}

pub(super) fn folder_of_path(path: &str) -> &'static str {
    let p = path.replace('\\', "/");
    let dir = p.rsplit_once('/').map(|(d, _)| format!("/{d}/")).unwrap_or_default();
    if dir.ends_with("/archive/tasks/") {
        "archive/tasks"
    } else if dir.ends_with("/archive/drafts/") {
        "archive/drafts"
    } else if dir.ends_with("/completed/") {
        "completed"
    } else if dir.ends_with("/drafts/") {
        "drafts"
    } else {
        "tasks"
    }
}

/// An error about a task file: its line and field when one is to blame.
pub(super) fn file_error(path: &str, line: Option<usize>, field: Option<&str>, message: String) -> FileError {
    FileError { file: path.to_string(), line, field: field.map(str::to_string), message }
}

/// A task file's front matter read, and its body: (entries, the line the body starts on,
/// the body).
pub(super) fn split_front_matter(path: &str, text: &str) -> Result<(Vec<Entry>, usize, String), FileError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.first().map(|l| l.trim_end_matches('\r')) != Some("---") {
        return Err(file_error(
            path,
            Some(1),
            None,
            "a task file starts with `---`, then its front matter (id, title, status, …), then `---`".into(),
        ));
    }
    let Some(close) = lines.iter().skip(1).position(|l| l.trim_end_matches('\r') == "---") else {
        return Err(file_error(
            path,
            Some(1),
            None,
            "the front matter opened on line 1 is not closed: add a line `---` after its last key".into(),
        ));
    };
    let fm = &lines[1..1 + close];
    let entries = read_front_matter(fm, 2, path)?;
    let body_first_line = close + 3; // 1-based line of the first body line
    Ok((entries, body_first_line, lines[close + 2..].join("\n")))
}

/// A new record of a task file at `path`: archived in `completed/` and `archive/…/`, its
/// folder (when not `tasks`) and its file name kept in the extra.
pub(super) fn record_at(path: &str, folder: &str) -> Record {
    let mut record = Record { archived: folder == "completed" || folder.starts_with("archive/"), ..Record::default() };
    if folder != "tasks" {
        record.extra.insert("folder".into(), Value::String(folder.into()));
    }
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    record.extra.insert("file".into(), Value::String(name.to_string()));
    record
}

/// One front matter entry being read into a record: the file, and the entry.
pub(super) struct EntryAt<'a> {
    path: &'a str,
    key: &'a str,
    value: &'a Yaml,
    line: Option<usize>,
}

impl EntryAt<'_> {
    fn fail(&self, message: String) -> FileError {
        file_error(self.path, self.line, Some(self.key), message)
    }

    /// The entry's one value (None: empty); a list is refused, saying to write `what`.
    fn string(&self, what: &str) -> Result<Option<String>, FileError> {
        match self.value {
            Yaml::Str(s, _) => Ok(Some(s.clone())),
            Yaml::Null => Ok(None),
            Yaml::List(_) => Err(self.fail(format!("{} is a list: write {what}", self.key))),
        }
    }
}

/// Reads one front matter entry into the record; true: it was the status.
pub(super) fn read_entry(record: &mut Record, e: &EntryAt) -> Result<bool, FileError> {
    match e.key {
        "id" => record.id = e.string("one id, `id: TASK-1`")?.unwrap_or_default(),
        "title" => record.title = e.string("one title, `title: Set up database`")?.unwrap_or_default(),
        "status" => {
            read_status(record, e.string("one status, `status: To Do`")?.unwrap_or_default());
            return Ok(true);
        }
        "assignee" => {
            let all = list_value(e.value);
            record.assignee = all.first().cloned();
            if all.len() > 1 {
                record.extra.insert("assignee".into(), Value::from(all));
            }
        }
        "created_date" | "updated_date" => read_time(record, e)?,
        "due_date" => read_due_date(record, e)?,
        "labels" => record.labels = list_value(e.value),
        "dependencies" => record.dependencies = list_value(e.value),
        "parent_task_id" => record.parent = e.string("one task id, `parent_task_id: TASK-1`")?,
        "priority" => read_priority(record, e)?,
        "type" => record.issue_type = e.string("one type, `type: feature`")?,
        "ordinal" => read_ordinal(record, e)?,
        _ => read_kept_entry(record, e)?,
    }
    Ok(false)
}

/// The status word: the store's status, the word kept when it is custom or the task was
/// archived unfinished.
pub(super) fn read_status(record: &mut Record, word: String) {
    let (status, custom) = status_from_word(&word);
    record.status = status;
    if record.archived && !status.is_terminal() {
        // the store archives only finished todos: an archived task that was not
        // done was given up on, its word kept for the file
        record.status = Status::Canceled;
        record.extra.insert("archived_status".into(), Value::String(word));
    } else if custom && !word.trim().is_empty() {
        record.extra.insert("status".into(), Value::String(word));
    }
}

/// `created_date` or `updated_date`: a date and time (or a date alone).
pub(super) fn read_time(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    let Some(s) = e.string("one date, `'2026-11-26 21:56'`")? else { return Ok(()) };
    let us = parse_date_time(s.trim()).or_else(|| parse_date(s.trim())).ok_or_else(|| {
        e.fail(format!("`{s}` is not a date: write it as 'YYYY-MM-DD HH:mm' (UTC), e.g. '2026-11-26 21:56'"))
    })?;
    if e.key == "created_date" {
        record.created_us = Some(us);
    } else {
        record.updated_us = Some(us);
    }
    Ok(())
}

/// `due_date`: a date (a time after it is allowed and dropped).
pub(super) fn read_due_date(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    let Some(s) = e.string("one date, `'2026-12-01'`")? else { return Ok(()) };
    let s = s.trim();
    let day = if s.len() >= 10 { parse_date(&s[..10]) } else { None };
    let rest_ok = s.len() == 10 || parse_date_time(&s[..s.len().min(16)]).is_some();
    record.due_us = Some(
        day.filter(|_| rest_ok)
            .ok_or_else(|| e.fail(format!("`{s}` is not a due date: write it as 'YYYY-MM-DD', e.g. '2026-12-01'")))?,
    );
    Ok(())
}

/// `priority`: high, medium or low; another word is kept in the extra.
pub(super) fn read_priority(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    if let Some(p) = e.string("one of high, medium, low")? {
        let lower = p.trim().to_lowercase();
        if matches!(lower.as_str(), "high" | "medium" | "low") {
            record.priority = Some(lower);
        } else if !lower.is_empty() {
            record.extra.insert("priority".into(), Value::String(p));
        }
    }
    Ok(())
}

/// `ordinal`: a number, kept in the extra.
pub(super) fn read_ordinal(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    let Some(s) = e.string("one number, `ordinal: 1000`")? else { return Ok(()) };
    let n: Value = if let Ok(i) = s.trim().parse::<i64>() {
        Value::from(i)
    } else if let Some(f) = s.trim().parse::<f64>().ok().filter(|f| f.is_finite()) {
        Value::from(f)
    } else {
        return Err(e.fail(format!("`{s}` is not a number: write `ordinal: 1000`")));
    };
    record.extra.insert("ordinal".into(), n);
    Ok(())
}

/// An entry no field holds, kept in the extra (`modified_files` as `modifiedFiles`).
pub(super) fn read_kept_entry(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    match e.key {
        "milestone" | "reporter" | "onStatusChange" => {
            if let Some(s) = e.string("one value")? {
                record.extra.insert(e.key.to_string(), Value::String(s));
            }
        }
        "references" | "documentation" | "subtasks" | "modified_files" => {
            let items = list_value(e.value);
            let key = if e.key == "modified_files" { "modifiedFiles" } else { e.key };
            if !items.is_empty() {
                record.extra.insert(key.to_string(), Value::from(items));
            }
        }
        other => {
            let v = match e.value {
                Yaml::Null => Value::Null,
                Yaml::Str(s, _) => Value::String(s.clone()),
                Yaml::List(items) => Value::from(items.clone()),
            };
            record.extra.insert(other.to_string(), v);
        }
    }
    Ok(())
}

/// The body's sections, checklists and comments read into the record.
pub(super) fn read_body(record: &mut Record, body: &str, path: &str, body_first_line: usize) -> Result<(), FileError> {
    let body_err = |(l, m): (usize, String)| file_error(path, Some(body_first_line + l), None, m);
    record.description = section_text(body, "DESCRIPTION", &["Description"]).map_err(body_err)?;
    record.plan =
        section_text(body, "PLAN", &["Implementation Plan", "Implementation Plan (Optional)"]).map_err(body_err)?;
    record.notes = section_text(
        body,
        "NOTES",
        &["Implementation Notes", "Implementation Notes (Optional)", "Notes", "Notes & Comments (Optional)"],
    )
    .map_err(body_err)?;
    record.outcome = section_text(body, "FINAL_SUMMARY", &["Final Summary"]).map_err(body_err)?;
    let mut items = checklist(
        body,
        AC_BEGIN,
        AC_END,
        &["Acceptance Criteria", "Acceptance Criteria (Optional)"],
        ChecklistKind::Acceptance,
    )
    .map_err(body_err)?;
    items.extend(checklist(body, DOD_BEGIN, DOD_END, &["Definition of Done"], ChecklistKind::Done).map_err(body_err)?);
    record.checklist = items;
    record.comments = comments(body, path, body_first_line)?;
    Ok(())
}

/// Reads one Backlog.md task file. `path` is relative to the project
/// (`backlog/tasks/task-1 - Title.md`); its folder decides: `drafts/` → status Draft
/// (deferred), `completed/` and `archive/…/` → archived.
pub fn parse(path: &str, text: &str) -> Result<Record, FileError> {
    let (entries, body_first_line, body) = split_front_matter(path, text)?;
    let folder = folder_of_path(path);
    let mut record = record_at(path, folder);
    let mut seen_status = false;
    for Entry { key, value, line } in &entries {
        let entry = EntryAt { path, key, value, line: Some(*line) };
        seen_status |= read_entry(&mut record, &entry)?;
    }
    if record.id.trim().is_empty() {
        return Err(file_error(
            path,
            Some(2),
            Some("id"),
            "the front matter has no id: add `id: TASK-1` (the id in the file name)".into(),
        ));
    }
    if folder.ends_with("drafts") {
        record.status = Status::Deferred;
        record.extra.remove("status");
    } else if !seen_status {
        return Err(file_error(
            path,
            Some(2),
            Some("status"),
            "the front matter has no status: add `status: To Do`".into(),
        ));
    }
    read_body(&mut record, &body, path, body_first_line)?;
    Ok(record)
}
