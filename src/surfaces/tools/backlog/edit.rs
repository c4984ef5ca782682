//! `task_edit`, in named steps: the fields, the lists, the text sections and checklists, then
//! the status (the agent's claim or its end).

use serde_json::{json, Value};

use super::super::dialect::Answer;
use super::super::helpers::{str_arg, strings};
use super::project::{
    answer, dependencies_of, due, failed, given, refused, set_assignees, set_extra_list, words, Project,
};
use crate::backlog_view as view;
use crate::claims::Refusal;
use crate::error::Error;
use crate::formats::backlog as files;
use crate::interchange::{ChecklistItem, ChecklistKind, Comment, Record};
use crate::ops::single::Change;
use crate::ops::{claiming, single, Find, Scope};
use crate::status::Status;
use crate::todo::Todo;

/// Applies the checkable-list edits of one list (`<prefix>Set|Add|Remove|Check|Uncheck`).
fn edit_checklist(r: &mut Record, args: &Value, kind: ChecklistKind, prefix: &str) -> Result<(), Value> {
    let mut items: Vec<ChecklistItem> = r.checklist.iter().filter(|i| i.kind == kind).cloned().collect();
    let others: Vec<ChecklistItem> = r.checklist.iter().filter(|i| i.kind != kind).cloned().collect();
    let indexes = |key: &str| -> Vec<usize> {
        args.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_f64).map(|n| n as usize).collect())
            .unwrap_or_default()
    };
    if let Some(set) = words(args, &format!("{prefix}Set")) {
        items = set.into_iter().map(|text| ChecklistItem { kind, text, checked: false }).collect();
    }
    items.extend(strings(args, &format!("{prefix}Add")).into_iter().map(|text| ChecklistItem {
        kind,
        text,
        checked: false,
    }));
    for (key, checked) in [(format!("{prefix}Check"), true), (format!("{prefix}Uncheck"), false)] {
        let asked = indexes(&key);
        let missing: Vec<usize> = asked.iter().copied().filter(|n| *n == 0 || *n > items.len()).collect();
        if !missing.is_empty() {
            return Err(refused("VALIDATION_ERROR", view::checklist_index_error(kind, &missing, items.len())));
        }
        for n in asked {
            items[n - 1].checked = checked;
        }
    }
    let mut remove = indexes(&format!("{prefix}Remove"));
    let missing: Vec<usize> = remove.iter().copied().filter(|n| *n == 0 || *n > items.len()).collect();
    if !missing.is_empty() {
        return Err(refused("VALIDATION_ERROR", view::checklist_index_error(kind, &missing, items.len())));
    }
    remove.sort_unstable();
    remove.dedup();
    for n in remove.into_iter().rev() {
        items.remove(n - 1);
    }
    r.checklist = match kind {
        ChecklistKind::Acceptance => items.into_iter().chain(others).collect(),
        ChecklistKind::Done => others.into_iter().chain(items).collect(),
    };
    Ok(())
}

/// A text section's edits: `<name>Set` (or `set_key`), `<name>Append` (joined with a blank
/// line), `<name>Clear`.
fn edit_text(field: &mut Option<String>, args: &Value, set_keys: &[&str], append: &str, clear: &str) {
    for key in set_keys {
        if let Some(s) = given(args, key) {
            *field = Some(s.to_string()).filter(|s| !s.is_empty());
        }
    }
    if args.get(clear).and_then(Value::as_bool) == Some(true) {
        *field = None;
    }
    let more = strings(args, append);
    if !more.is_empty() {
        let mut parts: Vec<String> = field.iter().filter(|s| !s.is_empty()).cloned().collect();
        parts.extend(more);
        *field = Some(parts.join("\n\n"));
    }
}

/// The scalar fields' edits: title, description, status (kept apart: its claim or finish is
/// decided last, the custom word kept in the metadata), due date, priority, type, ordinal
/// and milestone. Returns the status asked for, if any.
fn edit_fields(r: &mut Record, args: &Value) -> Result<Option<Status>, Value> {
    if let Some(t) = given(args, "title").map(str::trim).filter(|t| !t.is_empty()) {
        r.title = t.to_string();
    }
    if let Some(d) = given(args, "description") {
        r.description = Some(d.to_string()).filter(|d| !d.is_empty());
    }
    let mut new_status = None;
    if let Some(s) = given(args, "status") {
        let (status, custom) = files::status_from_word(s);
        if custom {
            r.extra.insert("status".into(), json!(s));
        } else {
            r.extra.remove("status");
        }
        new_status = Some(status);
    }
    match args.get("dueDate") {
        Some(Value::Null) => r.due_us = None,
        Some(Value::String(s)) if !s.is_empty() => r.due_us = Some(due(s)?),
        _ => {}
    }
    if let Some(pr) = given(args, "priority") {
        r.priority = Some(pr.to_lowercase());
    }
    if let Some(t) = given(args, "type") {
        r.issue_type = Some(t.to_lowercase());
    }
    if let Some(o) = args.get("ordinal").and_then(Value::as_f64) {
        r.extra.insert("ordinal".into(), json!(o));
    }
    match args.get("milestone") {
        Some(Value::Null) => {
            r.extra.remove("milestone");
        }
        Some(Value::String(m)) => {
            r.extra.insert("milestone".into(), json!(m.trim()));
        }
        _ => {}
    }
    Ok(new_status)
}

/// The lists' edits: labels, assignees, dependencies (checked against the project, `bid`
/// the task's own id), references and documentation (set, add, remove), modified files.
fn edit_lists(p: &Project, bid: &str, r: &mut Record, args: &Value) -> Result<(), Value> {
    if let Some(l) = words(args, "labels") {
        r.labels = l;
    }
    if let Some(a) = words(args, "assignee") {
        set_assignees(r, a);
    }
    if let Some(d) = words(args, "dependencies") {
        r.dependencies = dependencies_of(p, &d, Some(bid))?;
    }
    for (key, add, remove) in [
        ("references", "addReferences", "removeReferences"),
        ("documentation", "addDocumentation", "removeDocumentation"),
    ] {
        let mut list: Vec<String> = r
            .extra
            .get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        if let Some(set) = words(args, key) {
            list = set;
        }
        for x in strings(args, add) {
            if !list.contains(&x) {
                list.push(x);
            }
        }
        let gone = strings(args, remove);
        list.retain(|x| !gone.contains(x));
        set_extra_list(&mut r.extra, key, list);
    }
    if let Some(m) = words(args, "modifiedFiles") {
        set_extra_list(&mut r.extra, "modifiedFiles", m);
    }
    Ok(())
}

/// The sections' edits: notes, plan and final summary, the acceptance criteria and the
/// definition of done, and the comments appended (with their author, if given).
fn edit_sections(r: &mut Record, args: &Value) -> Result<(), Value> {
    edit_text(&mut r.notes, args, &["notesSet", "implementationNotes"], "notesAppend", "notesClear");
    edit_text(&mut r.plan, args, &["planSet"], "planAppend", "planClear");
    edit_text(&mut r.outcome, args, &["finalSummary"], "finalSummaryAppend", "finalSummaryClear");
    edit_checklist(r, args, ChecklistKind::Acceptance, "acceptanceCriteria")?;
    edit_checklist(r, args, ChecklistKind::Done, "definitionOfDone")?;
    let author = given(args, "commentAuthor").map(str::to_string).filter(|a| !a.is_empty());
    for body in strings(args, "commentsAppend") {
        r.comments.push(Comment { author: author.clone(), created_us: 0, body });
    }
    Ok(())
}

/// The status asked for: In Progress is the agent's claim, Done finishes it, each decided on
/// the task locked; `old` is the task as read, `r` the record to write.
fn edit_status(
    scope: &Scope,
    p: &Project,
    todo: &Todo,
    old: &Record,
    r: &mut Record,
    new_status: Option<Status>,
) -> Result<(), Value> {
    match new_status {
        Some(Status::InProgress) if scope.agent.is_some() => {
            // Backlog.md moves a Done task back to In Progress: reopened, then claimed
            if todo.status.is_terminal() {
                let reopen = Change { status: Some(Status::Pending), via_reopen: true, ..Change::default() };
                single::change(scope, Find::Anywhere, todo.id, reopen).map_err(|e| failed(&p.names(), e))?;
            }
            claiming::claim(scope, Some(todo.id), None).map_err(|e| failed(&p.names(), e))?;
            r.status = Status::InProgress;
        }
        Some(s @ (Status::Completed | Status::Canceled)) if old.status == Status::InProgress => {
            match claiming::finish(scope, todo.id, None, s, None) {
                Ok(_) | Err(Error::Claim(Refusal::NotOpen { .. })) => {}
                Err(e) => return Err(failed(&p.names(), e)),
            }
            r.status = s;
        }
        Some(s) => r.status = s,
        None => {}
    }
    Ok(())
}

pub(super) fn task_edit(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let id = str_arg(args, "id");
    // task_edit works on the tasks of the board only (not those completed or archived)
    let i = p.find(id).filter(|i| !p.tasks[*i].1.archived);
    let i = i.ok_or_else(|| refused("VALIDATION_ERROR", view::task_not_found(id)))?;
    let (todo, old) = &p.tasks[i];
    let bid = p.bids[i].clone();
    let mut r = old.clone();
    let new_status = edit_fields(&mut r, args)?;
    edit_lists(&p, &bid, &mut r, args)?;
    edit_sections(&mut r, args)?;
    edit_status(scope, &p, todo, old, &mut r, new_status)?;
    p.save(&r)?;
    let p = Project::read(scope)?;
    let i = p.find(&bid).ok_or_else(|| refused("OPERATION_FAILED", "the task was not written"))?;
    answer(p.text_of(i, false))
}
