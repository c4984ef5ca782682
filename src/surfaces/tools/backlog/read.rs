//! The tools that read: `task_list`, `task_search` and `task_view`.

use serde_json::{json, Value};

use super::super::dialect::Answer;
use super::super::helpers::{str_arg, strings};
use super::project::{answer, given, refused, Project};
use crate::backlog_view as view;
use crate::backlog_view::TaskLine;
use crate::formats::backlog as files;
use crate::ops::Scope;
use crate::status::Status;

/// The lines of tasks for task_list and task_search.
fn line_of(p: &Project, i: usize) -> TaskLine {
    TaskLine::from_record(&p.shown(i))
}

pub(super) fn task_list(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    if args.get("unassigned").and_then(Value::as_bool) == Some(true) && given(args, "assignee").is_some() {
        return Err(refused("VALIDATION_ERROR", view::UNASSIGNED_WITH_ASSIGNEE));
    }
    let status = given(args, "status").map(|s| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase());
    let types: Vec<String> = strings(args, "type").iter().map(|t| t.to_lowercase()).collect();
    let labels = strings(args, "labels");
    let search = given(args, "search").map(str::to_lowercase);
    let ready = args.get("ready").and_then(Value::as_bool).unwrap_or(false);
    let done = |raw: &str| p.tasks.iter().any(|(_, r)| r.id == raw && r.status == Status::Completed);
    let shown: Vec<TaskLine> = (0..p.tasks.len())
        .filter(|i| {
            let (_, r) = &p.tasks[*i];
            !r.archived && r.status != Status::Deferred
        })
        .filter(|i| {
            let r = &p.tasks[*i].1;
            let word = files::status_word(r).to_lowercase();
            status.as_ref().is_none_or(|s| *s == word)
                && (types.is_empty() || r.issue_type.as_ref().is_some_and(|t| types.contains(&t.to_lowercase())))
                && given(args, "assignee").is_none_or(|a| files::render::assignees(r).iter().any(|x| x == a))
                && (args.get("unassigned").and_then(Value::as_bool) != Some(true)
                    || files::render::assignees(r).is_empty())
                && given(args, "milestone").is_none_or(|m| r.extra.get("milestone").and_then(Value::as_str) == Some(m))
                && labels.iter().all(|l| r.labels.contains(l))
                && search.as_ref().is_none_or(|q| {
                    r.title.to_lowercase().contains(q)
                        || r.description.as_deref().unwrap_or_default().to_lowercase().contains(q)
                })
                && (!ready || r.dependencies.iter().all(|d| done(d)))
        })
        .map(|i| line_of(&p, i))
        .collect();
    let limit = args.get("limit").and_then(Value::as_f64).map(|l| l as usize);
    let groups = view::list_groups(&shown, &view::DEFAULT_STATUSES, limit);
    Ok(json!({ "texts": groups }))
}

pub(super) fn task_search(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let query = given(args, "query").unwrap_or_default();
    let types: Vec<String> = strings(args, "type").iter().map(|t| t.to_lowercase()).collect();
    let files_wanted: Vec<String> = strings(args, "modifiedFiles").iter().map(|f| f.to_lowercase()).collect();
    if query.trim().is_empty() && types.is_empty() && files_wanted.is_empty() {
        return Err(refused("VALIDATION_ERROR", view::SEARCH_NEEDS_QUERY));
    }
    let q = query.to_lowercase();
    let status = given(args, "status").map(str::to_lowercase);
    let priority = given(args, "priority").map(str::to_lowercase);
    let mut found: Vec<TaskLine> = (0..p.tasks.len())
        .filter(|i| !Project::in_archive(&p.tasks[*i].1))
        .filter(|i| {
            let r = &p.tasks[*i].1;
            let modified: Vec<String> = r
                .extra
                .get("modifiedFiles")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_lowercase).collect())
                .unwrap_or_default();
            (q.is_empty()
                || r.title.to_lowercase().contains(&q)
                || r.description.as_deref().unwrap_or_default().to_lowercase().contains(&q))
                && (types.is_empty() || r.issue_type.as_ref().is_some_and(|t| types.contains(&t.to_lowercase())))
                && files_wanted.iter().all(|f| modified.iter().any(|m| m.contains(f)))
                && status.as_ref().is_none_or(|s| files::status_word(r).to_lowercase() == *s)
                && priority.as_ref().is_none_or(|pr| r.priority.as_deref() == Some(pr.as_str()))
        })
        .map(|i| line_of(&p, i))
        .collect();
    found.truncate(args.get("limit").and_then(Value::as_f64).map_or(usize::MAX, |l| l as usize));
    answer(view::search_text(query, &found))
}

pub(super) fn task_view(scope: &Scope, args: &Value) -> Answer {
    let p = Project::read(scope)?;
    let id = str_arg(args, "id");
    let i = p.visible(id).ok_or_else(|| refused("TASK_NOT_FOUND", view::task_not_found(id)))?;
    answer(p.text_of(i, true))
}
