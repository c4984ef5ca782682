//! The tag tools: `list_tags`, `add_tag`, `delete_tag`, `use_tag`, `rename_tag` and `copy_tag`
//! (a tag is a list of the project).

use std::collections::HashMap;

use serde_json::{json, Value};

use super::super::dialect::Answer;
use super::super::helpers::{caller_id, str_arg};
use super::tasks::{current_tag, list_name, ok, refused, root_of, Tasks, CURRENT_TAG, MAX_TAGS, TAG};
use crate::error::Error;
use crate::formats::taskmaster::status_word;
use crate::ops::single::{json_fields, Change, NewTodo};
use crate::ops::{dependencies, single, Find, Scope};
use crate::status::Status;
use crate::store;
use crate::todo::Todo;

/// A tag name as Task Master allows it: letters, digits, `-` and `_`, not a reserved one.
fn check_tag_name(name: &str, what: &str, tag: &str) -> Result<(), Value> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        return Err(refused(format!("{what} can only contain letters, numbers, hyphens, and underscores"), Some(tag)));
    }
    if ["master", "main", "default"].contains(&name.to_lowercase().as_str()) {
        return Err(refused(format!("\"{name}\" is a reserved tag name"), Some(tag)));
    }
    Ok(())
}

/// Today as JavaScript's `toLocaleDateString()` writes it in en-US (`11/26/2026`), in UTC.
fn locale_date() -> String {
    let iso = crate::time::iso8601(crate::time::now_us());
    let (y, m, d) = (&iso[0..4], &iso[5..7], &iso[8..10]);
    format!("{}/{}/{y}", m.trim_start_matches('0'), d.trim_start_matches('0'))
}

/// The project's tags: `master` and the others (those that hold tasks or were made), by name.
fn tags_of(scope: &Scope, root: &str) -> Vec<String> {
    let prefix = format!("{}#", list_name(root, "master"));
    let mut tags = vec!["master".to_string()];
    tags.extend(
        store::lists::named_lists(&scope.tenant, &prefix, TAG, MAX_TAGS)
            .into_iter()
            .filter_map(|l| l.strip_prefix(&prefix).map(str::to_string)),
    );
    tags
}

fn tag_scope(scope: &Scope, root: &str, tag: &str) -> Scope {
    Scope { conversation: Some(list_name(root, tag)), ..scope.clone() }
}

/// A tag's description and when it was made (Task Master's tag metadata).
fn tag_about(scope: &Scope, root: &str, tag: &str, tasks: &Tasks) -> (Value, Value) {
    let about = store::lists::properties(&scope.tenant, &list_name(root, tag)).get(TAG).cloned().unwrap_or_default();
    let created = about.get("created").cloned().unwrap_or_else(|| {
        let first = tasks.todos.iter().map(|t| t.created_us).min();
        json!(crate::time::iso8601(first.unwrap_or_else(crate::time::now_us)))
    });
    let description = about.get("description").cloned().unwrap_or_else(|| {
        json!(if tag == "master" { "Tasks for master context".to_string() } else { "No description".to_string() })
    });
    (created, description)
}

/// Counts of Task Master's status words, in the order they first appear.
fn breakdown<'a>(todos: impl Iterator<Item = &'a Todo>) -> Value {
    let mut counts: Vec<(&str, i64)> = Vec::new();
    for t in todos {
        let w = status_word(t.status);
        match counts.iter_mut().find(|(k, _)| *k == w) {
            Some(c) => c.1 += 1,
            None => counts.push((w, 1)),
        }
    }
    Value::Object(counts.into_iter().map(|(k, n)| (k.to_string(), json!(n))).collect())
}

pub(super) fn list_tags(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let mut names = tags_of(scope, &root);
    names.sort_by_key(|a| (*a != current, a.to_lowercase()));
    let tags: Vec<Value> = names
        .iter()
        .map(|tag| {
            let tasks = Tasks::read(&tag_scope(scope, &root, tag));
            let tops: Vec<&Todo> = tasks.tops.iter().map(|i| &tasks.todos[*i]).collect();
            let subs: Vec<&Todo> = tops.iter().flat_map(|t| tasks.subtasks(t)).collect();
            let (created, description) = tag_about(scope, &root, tag, &tasks);
            json!({"name": tag, "isCurrent": *tag == current, "taskCount": tops.len(),
                   "completedTasks": tops.iter().filter(|t| t.status.is_terminal()).count(),
                   "statusBreakdown": breakdown(tops.iter().copied()),
                   "subtaskCounts": {"totalSubtasks": subs.len(), "subtasksByStatus": breakdown(subs.iter().copied())},
                   "created": created, "description": description})
        })
        .collect();
    let total = tags.len();
    ok(
        json!({"tags": tags, "currentTag": current, "totalTags": total, "message": format!("Found {total} tag(s)")}),
        &current,
    )
}

/// A new tag's description: the one given, if not empty, else `default`'s.
fn description_of(args: &Value, default: impl FnOnce() -> String) -> String {
    args.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()).map_or_else(default, str::to_string)
}

/// Records that a tag exists, with its description and when it was made.
fn make_tag(scope: &Scope, root: &str, tag: &str, description: &str) {
    let about = json!({"description": description, "created": crate::time::iso8601(crate::time::now_us())});
    store::lists::set_property(&scope.tenant, &list_name(root, tag), TAG, Some(&about));
}

/// Copies a tag's tasks (ids, dependencies and subtasks kept) into another tag's list.
fn copy_tasks(scope: &Scope, root: &str, from: &str, to: &str, tag: &str) -> Result<usize, Value> {
    let source = Tasks::read(&tag_scope(scope, root, from));
    let target = tag_scope(scope, root, to);
    let mut made: HashMap<i64, i64> = HashMap::new();
    let refuse = |e: Error| refused(source.said(e), Some(tag));
    for top in &source.tops {
        let t = &source.todos[*top];
        let copy = |t: &Todo, parent: Option<i64>| -> Result<Todo, Value> {
            let fields = json_fields([
                ("conversation_id", json!(target.conv())),
                ("subject", json!(t.subject)),
                ("description", json!(t.description)),
                ("plan", json!(t.plan)),
                ("completion_criteria", json!(t.completion_criteria)),
                ("priority", json!(t.priority)),
                ("status", json!(if t.status == Status::InProgress { Status::Pending } else { t.status }.as_str())),
                ("external_id", json!(caller_id(t))),
            ]);
            single::add(&target, NewTodo { parent, fields, ..NewTodo::default() }).map_err(refuse)
        };
        let new = copy(t, None)?;
        made.insert(t.id, new.id);
        for s in source.subtasks(t) {
            let sub = copy(s, Some(new.id))?;
            made.insert(s.id, sub.id);
        }
    }
    for (a, b, _) in &source.edges {
        if let (Some(x), Some(y)) = (made.get(a), made.get(b)) {
            dependencies::block(&target, *x, *y).map_err(refuse)?;
        }
    }
    Ok(source.tops.len())
}

pub(super) fn add_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let name = str_arg(args, "name").trim();
    if args.get("fromBranch").and_then(Value::as_bool).unwrap_or(false) {
        return Err(refused("Not in a git repository. Cannot use fromBranch option.", Some(&current)));
    }
    check_tag_name(name, "Tag name", &current)?;
    let tags = tags_of(scope, &root);
    if tags.iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" already exists"), Some(&current)));
    }
    let from = match args.get("copyFromTag").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        Some(t) => Some(t.to_string()),
        None if args.get("copyFromCurrent").and_then(Value::as_bool).unwrap_or(false) => Some(current.clone()),
        None => None,
    };
    if let Some(from) = from.as_ref().filter(|f| !tags.contains(f)) {
        return Err(refused(format!("Source tag \"{from}\" does not exist"), Some(&current)));
    }
    let description = description_of(args, || format!("Tag created on {}", locale_date()));
    make_tag(scope, &root, name, &description);
    let copied = match &from {
        Some(f) => copy_tasks(scope, &root, f, name, &current)?,
        None => 0,
    };
    ok(
        json!({"tagName": name, "created": true, "tasksCopied": copied, "sourceTag": from, "description": description,
               "message": format!("Successfully created tag \"{name}\"")}),
        &current,
    )
}

pub(super) fn delete_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let name = str_arg(args, "name").trim();
    if name == "master" {
        return Err(refused("Cannot delete the \"master\" tag", Some(&current)));
    }
    if !tags_of(scope, &root).iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" does not exist"), Some(&current)));
    }
    let was_current = current == name;
    if was_current {
        store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, None);
    }
    store::lists::set_property(&scope.tenant, &list_name(&root, name), TAG, None);
    let s = tag_scope(scope, &root, name);
    let tasks = Tasks::read(&s);
    for t in tasks.todos.iter().rev() {
        single::delete(&s, Find::Anywhere, t.id).map_err(|e| refused(tasks.said(e), Some(&current)))?;
    }
    ok(
        json!({"tagName": name, "deleted": true, "tasksDeleted": tasks.tops.len(), "wasCurrentTag": was_current,
               "switchedToMaster": was_current, "message": format!("Successfully deleted tag \"{name}\"")}),
        &current_tag(scope, &root),
    )
}

pub(super) fn use_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let previous = current_tag(scope, &root);
    let name = str_arg(args, "name").trim();
    if !tags_of(scope, &root).iter().any(|t| t == name) {
        return Err(refused(format!("Tag \"{name}\" does not exist"), Some(&previous)));
    }
    let value = (name != "master").then(|| json!(name));
    store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, value.as_ref());
    let count = Tasks::read(&tag_scope(scope, &root, name)).tops.len();
    ok(
        json!({"tagName": name, "switched": true, "previousTag": previous, "taskCount": count,
               "message": format!("Successfully switched to tag \"{name}\"")}),
        name,
    )
}

pub(super) fn rename_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let (old, new) = (str_arg(args, "oldName").trim(), str_arg(args, "newName").trim());
    if old == "master" {
        return Err(refused("Cannot rename the \"master\" tag", Some(&current)));
    }
    check_tag_name(new, "New tag name", &current)?;
    let tags = tags_of(scope, &root);
    if !tags.iter().any(|t| t == old) {
        return Err(refused(format!("Tag \"{old}\" does not exist"), Some(&current)));
    }
    if tags.iter().any(|t| t == new) {
        return Err(refused(format!("Tag \"{new}\" already exists"), Some(&current)));
    }
    let about = store::lists::properties(&scope.tenant, &list_name(&root, old)).get(TAG).cloned();
    let was_current = current == old;
    if was_current {
        store::lists::set_property(&scope.tenant, &list_name(&root, "master"), CURRENT_TAG, Some(&json!(new)));
    }
    store::lists::set_property(&scope.tenant, &list_name(&root, new), TAG, Some(&about.unwrap_or_else(|| json!({}))));
    store::lists::set_property(&scope.tenant, &list_name(&root, old), TAG, None);
    let tasks = Tasks::read(&tag_scope(scope, &root, old));
    let moved = json_fields([("conversation_id", json!(list_name(&root, new)))]);
    for t in &tasks.todos {
        single::change(scope, Find::Anywhere, t.id, Change::fields(moved.clone()))
            .map_err(|e| refused(tasks.said(e), Some(&current)))?;
    }
    ok(
        json!({"oldName": old, "newName": new, "renamed": true, "taskCount": tasks.tops.len(),
               "wasCurrentTag": was_current, "message": format!("Successfully renamed tag from \"{old}\" to \"{new}\"")}),
        &current_tag(scope, &root),
    )
}

pub(super) fn copy_tag(scope: &Scope, args: &Value) -> Answer {
    let root = root_of(args);
    let current = current_tag(scope, &root);
    let (source, target) = (str_arg(args, "sourceName").trim(), str_arg(args, "targetName").trim());
    check_tag_name(target, "Target tag name", &current)?;
    let tags = tags_of(scope, &root);
    if !tags.iter().any(|t| t == source) {
        return Err(refused(format!("Source tag \"{source}\" does not exist"), Some(&current)));
    }
    if tags.iter().any(|t| t == target) {
        return Err(refused(format!("Target tag \"{target}\" already exists"), Some(&current)));
    }
    let description = description_of(args, || format!("Copy of \"{source}\" created on {}", locale_date()));
    make_tag(scope, &root, target, &description);
    copy_tasks(scope, &root, source, target, &current)?;
    ok(
        json!({"sourceName": source, "targetName": target, "copied": true, "description": description,
               "message": format!("Successfully copied tag from \"{source}\" to \"{target}\"")}),
        &current,
    )
}
