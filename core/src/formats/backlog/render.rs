//! Writing a record as Backlog.md 1.52.0 writes a task file.

use serde_json::Value;

use super::yaml::*;
use super::*;

pub(super) fn extra_str<'a>(record: &'a Record, key: &str) -> Option<&'a str> {
    record.extra.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

pub(super) fn extra_list(record: &Record, key: &str) -> Vec<String> {
    match record.extra.get(key) {
        Some(Value::Array(items)) => {
            items.iter().map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).collect()
        }
        Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The assignees of a record: the list in `extra["assignee"]` while it still starts with
/// `assignee`, else `assignee` alone.
pub fn assignees(record: &Record) -> Vec<String> {
    let kept = extra_list(record, "assignee");
    match &record.assignee {
        Some(a) if kept.first() == Some(a) => kept,
        Some(a) => vec![a.clone()],
        None => Vec::new(),
    }
}

/// The ordinal of a record (`extra["ordinal"]`), as Backlog.md prints it.
pub fn ordinal_text(record: &Record) -> Option<String> {
    match record.extra.get("ordinal")? {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

pub(super) fn section_block(title: &str, marker: &str, text: &str) -> Option<String> {
    let text = text.replace("\r\n", "\n");
    let text = text.trim_end();
    if text.trim().is_empty() {
        return None;
    }
    Some(format!("## {title}\n\n<!-- SECTION:{marker}:BEGIN -->\n{text}\n<!-- SECTION:{marker}:END -->"))
}

pub(super) fn checklist_block(
    record: &Record,
    kind: ChecklistKind,
    title: &str,
    begin: &str,
    end: &str,
) -> Option<String> {
    let items: Vec<&ChecklistItem> = record.checklist.iter().filter(|i| i.kind == kind).collect();
    if items.is_empty() {
        return None;
    }
    let mut lines = vec![format!("## {title}"), begin.to_string()];
    for (n, item) in items.iter().enumerate() {
        lines.push(format!("- [{}] #{} {}", if item.checked { "x" } else { " " }, n + 1, item.text));
    }
    lines.push(end.to_string());
    Some(lines.join("\n"))
}

pub(super) fn comments_block(record: &Record) -> Option<String> {
    let comments: Vec<&Comment> = record.comments.iter().filter(|c| !c.body.trim().is_empty()).collect();
    if comments.is_empty() {
        return None;
    }
    let mut lines = vec!["## Comments".to_string(), String::new(), COMMENTS_BEGIN.to_string()];
    for (i, c) in comments.iter().enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        if let Some(a) = c.author.as_deref().map(str::trim).filter(|a| !a.is_empty()) {
            lines.push(format!("author: {a}"));
        }
        if c.created_us != 0 {
            lines.push(format!("created: {}", format_date_time(c.created_us)));
        }
        lines.push("---".into());
        lines.push(c.body.replace("\r\n", "\n").trim().to_string());
        lines.push("---".into());
    }
    lines.push(COMMENTS_END.to_string());
    Some(lines.join("\n"))
}

/// A record as Backlog.md writes its file: the path relative to the project
/// (`backlog/<folder>/<lowercase id> - <Title-slug>.md`) and the text.
pub fn render(record: &Record) -> (String, String) {
    let mut fm = String::new();
    fm.push_str(&format!("id: {}\n", yaml_string(&record.id)));
    fm.push_str(&format!("title: {}\n", yaml_string(&record.title)));
    fm.push_str(&format!("status: {}\n", yaml_string(&status_word(record))));
    yaml_list(&mut fm, "assignee", &assignees(record));
    if let Some(r) = extra_str(record, "reporter") {
        fm.push_str(&format!("reporter: {}\n", yaml_string(r)));
    }
    // created_date is always written by Backlog.md; a record without one gets ''
    let created = record.created_us.map(format_date_time).unwrap_or_default();
    fm.push_str(&format!("created_date: {}\n", yaml_string(&created)));
    if let Some(u) = record.updated_us {
        fm.push_str(&format!("updated_date: {}\n", yaml_string(&format_date_time(u))));
    }
    if let Some(d) = record.due_us {
        fm.push_str(&format!("due_date: {}\n", yaml_string(&format_date(d))));
    }
    yaml_list(&mut fm, "labels", &record.labels);
    if let Some(m) = extra_str(record, "milestone") {
        fm.push_str(&format!("milestone: {}\n", yaml_string(m)));
    }
    yaml_list(&mut fm, "dependencies", &record.dependencies);
    for (key, extra_key) in
        [("references", "references"), ("documentation", "documentation"), ("modified_files", "modifiedFiles")]
    {
        let items = extra_list(record, extra_key);
        if !items.is_empty() {
            yaml_list(&mut fm, key, &items);
        }
    }
    if let Some(p) = record.parent.as_deref().filter(|p| !p.is_empty()) {
        fm.push_str(&format!("parent_task_id: {}\n", yaml_string(p)));
    }
    let subtasks = extra_list(record, "subtasks");
    if !subtasks.is_empty() {
        yaml_list(&mut fm, "subtasks", &subtasks);
    }
    if let Some(p) = record.priority.as_deref().or_else(|| extra_str(record, "priority")) {
        fm.push_str(&format!("priority: {}\n", yaml_string(p)));
    }
    if let Some(t) = record.issue_type.as_deref().filter(|t| !t.is_empty()) {
        fm.push_str(&format!("type: {}\n", yaml_string(t)));
    }
    if let Some(o) = ordinal_text(record) {
        fm.push_str(&format!("ordinal: {o}\n"));
    }
    if let Some(s) = extra_str(record, "onStatusChange") {
        fm.push_str(&format!("onStatusChange: {}\n", yaml_string(s)));
    }

    let blocks: Vec<String> = [
        record.description.as_deref().and_then(|d| section_block("Description", "DESCRIPTION", d)),
        checklist_block(record, ChecklistKind::Acceptance, "Acceptance Criteria", AC_BEGIN, AC_END),
        checklist_block(record, ChecklistKind::Done, "Definition of Done", DOD_BEGIN, DOD_END),
        record.plan.as_deref().and_then(|p| section_block("Implementation Plan", "PLAN", p)),
        record.notes.as_deref().and_then(|n| section_block("Implementation Notes", "NOTES", n)),
        comments_block(record),
        record.outcome.as_deref().and_then(|o| section_block("Final Summary", "FINAL_SUMMARY", o)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let body = blocks.join("\n\n");
    // gray-matter's `---\n<yaml>---\n<body>\n`, then serializeTask's blank line after the
    // front matter: an empty body leaves `---\n\n\n`
    let text = format!("---\n{fm}---\n\n{body}\n");
    (file_path(record), text)
}
