//! The tools that make, complete and archive a task: `task_create`, `task_complete`,
//! `task_archive`.

use serde_json::{json, Value};

use super::super::dialect::Answer;
use super::super::helpers::{str_arg, strings};
use super::project::{
    answer, dependencies_of, due, failed, given, next_id, refused, set_assignees, set_extra_list, Project,
};
use crate::backlog_view as view;
use crate::claims::Refusal;
use crate::error::Error;
use crate::formats::backlog as files;
use crate::interchange::{ChecklistItem, ChecklistKind, Record};
use crate::ops::{claiming, Scope};
use crate::status::Status;

pub(super) fn task_create(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let (status, custom) = files::status_from_word(given(args, "status").unwrap_or(files::STATUS_TODO));
    let parent = match given(args, "parentTaskId").filter(|s| !s.is_empty()) {
        None => None,
        Some(id) => {
            let canon = view::parse_id(id).unwrap_or_else(|| id.to_uppercase());
            let i = p.visible(id).ok_or_else(|| refused("VALIDATION_ERROR", view::missing_parent(&canon)))?;
            Some(i)
        }
    };
    let parent_bid = parent.map(|i| p.bids[i].clone());
    let id = next_id(&p, parent_bid.as_deref());
    let deps = dependencies_of(&p, &strings(args, "dependencies"), Some(&id))?;
    let due_us = given(args, "dueDate").filter(|s| !s.is_empty()).map(due).transpose()?;
    let ordinal = args.get("ordinal").and_then(Value::as_f64).unwrap_or_else(|| {
        p.tasks.iter().filter_map(|(_, r)| r.extra.get("ordinal").and_then(Value::as_f64)).fold(0.0, f64::max) + 1000.0
    });
    let mut r = Record {
        id: id.clone(),
        parent: parent.map(|i| p.tasks[i].1.id.clone()),
        title: str_arg(args, "title").trim().to_string(),
        description: given(args, "description").map(str::to_string).filter(|d| !d.is_empty()),
        status,
        priority: given(args, "priority").map(str::to_lowercase),
        labels: strings(args, "labels"),
        issue_type: given(args, "type").map(str::to_lowercase),
        due_us,
        outcome: given(args, "finalSummary").map(str::to_string).filter(|d| !d.is_empty()),
        dependencies: deps,
        created_us: Some(crate::time::now_us()),
        ..Record::default()
    };
    set_assignees(&mut r, strings(args, "assignee"));
    if custom {
        r.extra.insert("status".into(), json!(given(args, "status")));
    }
    r.extra.insert("ordinal".into(), json!(ordinal));
    if let Some(m) = given(args, "milestone").map(str::trim).filter(|m| !m.is_empty()) {
        r.extra.insert("milestone".into(), json!(m));
    }
    for key in ["references", "documentation", "modifiedFiles"] {
        set_extra_list(&mut r.extra, key, strings(args, key));
    }
    let item = |kind, text: String| ChecklistItem { kind, text, checked: false };
    r.checklist.extend(strings(args, "acceptanceCriteria").into_iter().map(|t| item(ChecklistKind::Acceptance, t)));
    r.checklist.extend(strings(args, "definitionOfDoneAdd").into_iter().map(|t| item(ChecklistKind::Done, t)));
    // the file keeps the name it is made with (Backlog.md does not rename it)
    let name = files::file_path(&r);
    r.extra.insert("file".into(), json!(name.rsplit('/').next().unwrap_or_default()));
    p.save(&r)?;
    let mut p = Project::read(scope)?;
    let i = p.place_of(&r).ok_or_else(|| refused("OPERATION_FAILED", "the task was not written"))?;
    // a create's result prints the parent by id only
    let mut text = p.text_of(i, false);
    if let (Some(pb), Some(pi)) = (parent_bid, parent) {
        text = text.replacen(&format!("Parent: {pb} - {}\n", p.tasks[pi].1.title), &format!("Parent: {pb}\n"), 1);
    }
    answer(text)
}

pub(super) fn task_complete(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let id = str_arg(args, "id");
    let i = p.find(id).ok_or_else(|| refused("TASK_NOT_FOUND", view::task_not_found(id)))?;
    let old = &p.tasks[i].1;
    if old.archived {
        return Err(refused("OPERATION_FAILED", view::complete_failed(id)));
    }
    let bid = p.bids[i].clone();
    if old.status != Status::Completed {
        return Err(refused("VALIDATION_ERROR", view::not_done(&bid)));
    }
    let mut r = old.clone();
    r.archived = true;
    r.extra.insert("folder".into(), json!("completed"));
    p.save(&r)?;
    let p = Project::read(scope)?;
    let i = p.find(&bid).ok_or_else(|| refused("OPERATION_FAILED", "the task was not written"))?;
    answer(format!("Completed task {bid}.\n\n{}", p.text_of(i, false)))
}

pub(super) fn task_archive(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let id = str_arg(args, "id");
    let i = p.visible(id).ok_or_else(|| refused("TASK_NOT_FOUND", view::task_not_found(id)))?;
    // the result prints the task as it was, at the path it had
    let before = p.text_of(i, false);
    let (todo, old) = &p.tasks[i];
    if todo.status == Status::InProgress {
        if let Err(e) = claiming::release(scope, todo.id, None) {
            if !matches!(e, Error::Claim(Refusal::NotClaimed { .. } | Refusal::NoAgent)) {
                return Err(failed(&p.names(), e));
            }
        }
    }
    let mut r = old.clone();
    if !r.status.is_terminal() {
        r.extra.insert("archived_status".into(), json!(files::status_word(old)));
        r.status = Status::Canceled;
    }
    r.archived = true;
    r.extra.insert("folder".into(), json!("archive/tasks"));
    p.save(&r)?;
    answer(before)
}
