//! The trackers' files: `todo.import` reads Task Master's `tasks.json`, beads'
//! `issues.jsonl`, Backlog.md's `backlog/` task files, and Claude Code's todo and task files
//! into a list; `todo.export` writes a list back into the files the tracker reads. The
//! formats are `formats::*` (pure), each declared once in `formats::TRACKER_FORMATS`; the writes
//! are `ops::records`.
//!
//! A list and its parts: the import's list (the conversation given, else the context's) takes
//! the records of Task Master's `master` tag and of every file without lists; another tag, a
//! Claude Code task list or todo file is the list `<list>#<name>`, as the taskmaster dialect
//! names a project's tags.

use pgrx::prelude::*;
use pgrx::JsonB;
use serde_json::{json, Value};

use crate::error::Error;
use crate::errors::{self, raise};
use crate::formats::{self, TrackerFormat};
use crate::interchange::{FileError, Record};
use crate::jsonb::Jsonb;
use crate::ops::records::{self, Outcome};
use crate::ops::Scope;
use crate::runner;

/// The most records one import takes.
pub const MAX_RECORDS: usize = 10_000;
/// The most bytes of the files one import takes.
pub const MAX_IMPORT_BYTES: usize = 64 << 20;

fn unknown_format(function: &str, format: &str) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!("{function}: unknown format \"{format}\""),
        format!("use one of {}", formats::format_names()),
    )
}

fn bad_file(e: FileError) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        format!("todo.import: {e}"),
        "fix the file and import again; nothing was written",
    )
}

/// The list a function works on: the one named, else the context's (22023: neither).
fn list_of(function: &str, conversation: Option<&str>, scope: &Scope) -> String {
    conversation.map(str::to_string).or_else(|| scope.conversation.clone()).unwrap_or_else(|| {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("{function}: no list"),
            "name one (conversation => 'project:/home/me/app') or set the conversation in context",
        )
    })
}

/// The list a record goes to: the import's own for `master` and for none, else
/// `<list>#<name>`.
fn conversation_of(base: &str, r: &Record) -> String {
    match r.list.as_deref() {
        None | Some("master") | Some("") => base.to_string(),
        Some(name) => format!("{base}#{name}"),
    }
}

/// The records of a format's files, in the files' order (paths sorted).
fn parse(tracker: &TrackerFormat, files: &[(String, String)]) -> Result<Vec<Record>, FileError> {
    let mut out = Vec::new();
    for (path, text) in files {
        out.extend((tracker.parse)(path, text)?);
    }
    Ok(out)
}

/// Why an import's attempt ended without keeping what it wrote: an operation refused, or
/// it was a dry run (what it would do).
enum Stop {
    Refused(Error),
    DryRun(Vec<Outcome>),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Refused(e)
    }
}

/// Imports a tracker's files into a list. `files`: an object of path → text (Task Master's
/// `.taskmaster/tasks/tasks.json`; beads' `.beads/issues.jsonl`; Backlog.md's task files,
/// paths from the project, `backlog/tasks/…`, `backlog/completed/…`, …; Claude Code's
/// `~/.claude/todos/<file>.json` or `~/.claude/tasks/<list>/<id>.json`). A record whose id a
/// todo of its list has changes it where it differs; any other is added; importing the same
/// files again changes nothing. With `dry_run`, nothing is written and the answer says what
/// would be. A record whose todo no read of its list shows (past `todo.max_read_todos` or
/// `todo.max_output_size`) leaves it as it is (`kept`). Returns `{format, conversation,
/// dry_run, added, changed, unchanged, tasks: [{id, conversation, action, fields}]}`, with
/// `kept` and a `note` saying why when some were.
///
/// Errors: 22023 an unknown format, no list (neither given nor in context), or over the
/// limits (10,000 records, 64 MiB of files); 22P02 a file that is not the format, naming the
/// file, its line or field and what to write instead; the operations' errors (a task another
/// agent holds a claim on, a value over a column's limit); in every case nothing is written.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn import(
    format: Option<&str>,
    files: Option<JsonB>,
    conversation: default!(Option<&str>, "NULL"),
    dry_run: default!(Option<bool>, "false"),
) -> Jsonb {
    let format = errors::required(format, "todo.import: format");
    let dry_run = errors::required(dry_run, "todo.import: dry_run");
    let files = errors::required(files, "todo.import: files").0;
    let tracker = formats::tracker_format(format).unwrap_or_else(|| unknown_format("todo.import", format));
    let Value::Object(files) = files else {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "todo.import: files must be an object of path → text",
            "e.g. '{\".taskmaster/tasks/tasks.json\": \"{…}\"}'",
        )
    };
    let mut texts: Vec<(String, String)> = Vec::new();
    let mut bytes = 0;
    for (path, v) in files {
        let Value::String(text) = v else {
            raise(
                PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                format!("todo.import: the file \"{path}\" must be given as text"),
                "give each file's content as a JSON string",
            )
        };
        bytes += text.len();
        texts.push((path, text));
    }
    if bytes > MAX_IMPORT_BYTES {
        raise(
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!("todo.import: the files hold {bytes} bytes; one import takes at most {MAX_IMPORT_BYTES}"),
            "import them in parts",
        );
    }
    let records = parse(tracker, &texts).unwrap_or_else(|e| bad_file(e));
    if records.len() > MAX_RECORDS {
        raise(
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!("todo.import: the files hold {} tasks; one import takes at most {MAX_RECORDS}", records.len()),
            "import them in parts",
        );
    }
    runner::call(|| {
        let scope = Scope::from_context();
        let base = list_of("todo.import", conversation, &scope);
        let attempt = runner::attempt(|| {
            let outcomes = records::import(&scope, &records, &|r| conversation_of(&base, r))?;
            if dry_run {
                return Err(Stop::DryRun(outcomes));
            }
            Ok(outcomes)
        });
        let outcomes = match attempt {
            Ok(o) | Err(Stop::DryRun(o)) => o,
            Err(Stop::Refused(e)) => errors::raise_error(&e),
        };
        let count = |a: &str| outcomes.iter().filter(|o| o.action == a).count();
        let tasks: Vec<Value> = outcomes
            .iter()
            .map(|o| json!({"id": o.id, "conversation": o.conversation, "action": o.action, "fields": o.fields}))
            .collect();
        let mut answer = json!({
            "format": format, "conversation": base, "dry_run": dry_run,
            "added": count("added"), "changed": count("changed"), "unchanged": count("unchanged"), "tasks": tasks,
        });
        // tasks whose todos no read of the list shows: left as they are, and the answer says why
        if count("kept") > 0 {
            answer["kept"] = json!(count("kept"));
            answer["note"] = json!(pg_todos_core::limits::kept_note(count("kept") as u64));
        }
        Jsonb(answer)
    })
}

/// The lists of a project: its own and `<list>#<name>` ones (Task Master's tags, Claude Code's
/// lists), each with its name (None: the list itself).
fn lists_of(scope: &Scope, base: &str) -> Vec<(Option<String>, String)> {
    let prefix = format!("{base}#");
    let mut out = vec![(None, base.to_string())];
    for l in crate::store::lists::named_lists(&scope.tenant, &prefix, "taskmaster_tag", 1000) {
        out.push((l.strip_prefix(&prefix).map(str::to_string), l.clone()));
    }
    out
}

/// Exports a list into a tracker's files: (path, text) for each, paths as the tracker keeps
/// them (`.taskmaster/tasks/tasks.json` with a tag for each `<list>#<tag>`; `.beads/issues.jsonl`;
/// `backlog/<folder>/<id> - <Title>.md`; Claude Code's `todos/<list>.json` or
/// `tasks/<list>/<id>.json`). Every part of a path made from stored text (an id, a list's
/// name) is one file name by `file_names::component` (`../x` is `%2E.%2Fx`): no path leaves
/// the directory it is written under. Errors: 22023 an unknown format or no list.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn export(
    format: Option<&str>,
    conversation: default!(Option<&str>, "NULL"),
) -> TableIterator<'static, (name!(path, String), name!(content, String))> {
    let format = errors::required(format, "todo.export: format");
    let tracker = formats::tracker_format(format).unwrap_or_else(|| unknown_format("todo.export", format));
    let scope = Scope::from_context();
    let base = list_of("todo.export", conversation, &scope);
    let lists = if tracker.named_lists { lists_of(&scope, &base) } else { vec![(None, base.clone())] };
    let mut all: Vec<Record> = Vec::new();
    for (name, conv) in &lists {
        for (_, mut r) in records::read(&scope, conv) {
            r.list = name.clone().or_else(|| tracker.own_list_name.map(str::to_string));
            all.push(r);
        }
    }
    let names: Vec<Option<String>> = lists.into_iter().map(|(name, _)| name).collect();
    TableIterator::new((tracker.render)(&all, &names, &base))
}
