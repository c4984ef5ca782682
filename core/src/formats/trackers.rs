//! The trackers whose files `todo.import` reads and `todo.export` writes, each declared once
//! (`TrackerFormat`: its name, where its files are, how one is read, how a list's records are
//! written) and registered in one list, `TRACKER_FORMATS`. The extension's functions and the
//! `pg_todos import` and `export` commands take a format by its name from that list; a new
//! tracker is one more declaration there.

use serde_json::json;

use super::{backlog, beads, claude, taskmaster};
use crate::file_names::{self, from_component};
use crate::interchange::{FileError, Record};

/// Where a tracker keeps its files, under the directory `pg_todos import` is given (a
/// project's), and the name each file is given to `todo.import` by (its path as the tracker
/// names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileLayout {
    /// One file at this path under a project's directory, or the file given itself.
    OneFile(&'static str),
    /// The files ending in `.<extension>` of these folders under `root` (or under the
    /// directory given, when it has no `root`), each named `<root>/<folder>/<file>`; when
    /// there is none, `none_found` says so.
    Folders { root: &'static str, folders: &'static [&'static str], extension: &'static str, none_found: &'static str },
    /// The `*.json` files of a directory, or the file given itself, each named
    /// `<prefix>/<file>`.
    JsonFiles { prefix: &'static str },
    /// The `<list>/<id>.json` files under a directory, or the `*.json` files of one list's
    /// directory, each named `<prefix>/<list>/<file>`.
    ListFolders { prefix: &'static str },
}

/// Reads one file of a format (its path as the tracker names it, its text) into records.
pub type ParseFile = fn(path: &str, text: &str) -> Result<Vec<Record>, FileError>;

/// Writes records as a format's files (path, text), given the lists exported and the list
/// itself (`TrackerFormat::render`).
pub type RenderFiles = fn(records: &[Record], lists: &[Option<String>], list: &str) -> Vec<(String, String)>;

/// One tracker's format: everything the extension and the command know of it.
#[derive(Debug)]
pub struct TrackerFormat {
    /// the name `todo.import`, `todo.export` and the command take
    pub name: &'static str,
    /// where its files are, for `pg_todos import`
    pub files: FileLayout,
    /// whether its files are kept outside any project (Claude Code's, under `~/.claude`): the
    /// command's list is then the working directory's project's
    pub outside_project: bool,
    /// whether its files hold a project's other lists too (`<list>#<name>`: Task Master's
    /// tags, Claude Code's lists), exported with the list itself
    pub named_lists: bool,
    /// the name the list itself has in the files (Task Master's `master` tag); None: its
    /// records have no list
    pub own_list_name: Option<&'static str>,
    /// the records of one file (path as the tracker names it, text), in the file's order
    pub parse: ParseFile,
    /// the files (path, text) of records whose `list` is set (None: the list itself), given
    /// the names of the lists exported (None: the list itself) and the list itself (its
    /// project's name names the files that hold no named list)
    pub render: RenderFiles,
}

/// The formats, in the order their names are listed to users.
pub const TRACKER_FORMATS: &[TrackerFormat] = &[
    TrackerFormat {
        name: "taskmaster",
        files: FileLayout::OneFile(".taskmaster/tasks/tasks.json"),
        outside_project: false,
        named_lists: true,
        own_list_name: Some("master"),
        parse: taskmaster::parse,
        render: render_taskmaster,
    },
    TrackerFormat {
        name: "beads",
        files: FileLayout::OneFile(".beads/issues.jsonl"),
        outside_project: false,
        named_lists: false,
        own_list_name: None,
        parse: beads::parse,
        render: render_beads,
    },
    TrackerFormat {
        name: "backlog",
        files: FileLayout::Folders {
            root: "backlog",
            folders: &["tasks", "drafts", "completed", "archive/tasks", "archive/drafts"],
            extension: "md",
            none_found: "no Backlog.md task files (backlog/tasks/*.md, …) there",
        },
        outside_project: false,
        named_lists: false,
        own_list_name: None,
        parse: parse_backlog,
        render: render_backlog,
    },
    TrackerFormat {
        name: "claude-todos",
        files: FileLayout::JsonFiles { prefix: "todos" },
        outside_project: true,
        named_lists: true,
        own_list_name: None,
        parse: parse_claude_todos,
        render: render_claude_todos,
    },
    TrackerFormat {
        name: "claude-tasks",
        files: FileLayout::ListFolders { prefix: "tasks" },
        outside_project: true,
        named_lists: true,
        own_list_name: None,
        parse: parse_claude_task,
        render: render_claude_tasks,
    },
];

/// The format of that name; None: no such format.
pub fn tracker_format(name: &str) -> Option<&'static TrackerFormat> {
    TRACKER_FORMATS.iter().find(|f| f.name == name)
}

/// The formats' names as users are told them: `taskmaster, beads, …`.
pub fn format_names() -> String {
    TRACKER_FORMATS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// The name of a file without its folders and its extension (`project:/home/me/app` → `app`).
pub fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

/// A Backlog.md project's `config.yml` with Backlog.md's defaults (`backlog init`'s), for an
/// export into a directory that has none (`pg_todos export` keeps one that is there).
pub fn backlog_config(project: &str) -> String {
    format!(
        "project_name: {}\ndefault_status: \"To Do\"\nstatuses: [\"To Do\", \"In Progress\", \"Done\"]\nlabels: []\n\
         date_format: yyyy-mm-dd\nmax_column_width: 20\nauto_open_browser: true\ndefault_port: 6420\n\
         remote_operations: false\nauto_commit: false\nfilesystem_only: false\nbypass_git_hooks: false\n\
         check_active_branches: true\nactive_branch_days: 30\ntask_prefix: \"task\"\n",
        json!(project)
    )
}

/// A Backlog.md task file's record; a file not ending in `.md` (`config.yml`) holds none.
fn parse_backlog(path: &str, text: &str) -> Result<Vec<Record>, FileError> {
    if !path.ends_with(".md") {
        return Ok(Vec::new());
    }
    Ok(vec![backlog::parse::parse(path, text)?])
}

/// A Claude Code todo file's records, on the list the file is named after.
fn parse_claude_todos(path: &str, text: &str) -> Result<Vec<Record>, FileError> {
    let list = from_component(stem(path));
    let mut records = claude::parse_todos(path, text)?;
    for r in &mut records {
        r.list = Some(list.clone());
    }
    Ok(records)
}

/// A Claude Code task file's record.
fn parse_claude_task(path: &str, text: &str) -> Result<Vec<Record>, FileError> {
    Ok(vec![claude::parse_task(path, text)?])
}

/// Task Master's one `tasks.json`, a tag for each list.
fn render_taskmaster(records: &[Record], _lists: &[Option<String>], _list: &str) -> Vec<(String, String)> {
    vec![(".taskmaster/tasks/tasks.json".into(), taskmaster::render::render(records))]
}

/// beads' one `issues.jsonl`.
fn render_beads(records: &[Record], _lists: &[Option<String>], _list: &str) -> Vec<(String, String)> {
    vec![(".beads/issues.jsonl".into(), beads::render::render(records))]
}

/// A Backlog.md task file a record, and the project's `config.yml`.
fn render_backlog(records: &[Record], _lists: &[Option<String>], list: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = records.iter().map(backlog::render::render).collect();
    files.push(("backlog/config.yml".into(), backlog_config(stem(list))));
    files
}

/// The records of one list (None: the list itself).
fn records_of(records: &[Record], list: &Option<String>) -> Vec<Record> {
    records.iter().filter(|r| r.list == *list).cloned().collect()
}

/// The file name a list's files are kept under: its name, the project's for the list itself.
fn list_file_name(name: &Option<String>, list: &str) -> String {
    file_names::component(name.as_deref().unwrap_or_else(|| stem(list)))
}

/// A Claude Code todo file a list, `todos/<list>.json`.
fn render_claude_todos(records: &[Record], lists: &[Option<String>], list: &str) -> Vec<(String, String)> {
    lists
        .iter()
        .map(|name| {
            let file = list_file_name(name, list);
            (format!("todos/{file}.json"), claude::render_todos(&records_of(records, name)))
        })
        .collect()
}

/// A Claude Code task list's files a list, `tasks/<list>/<id>.json`.
fn render_claude_tasks(records: &[Record], lists: &[Option<String>], list: &str) -> Vec<(String, String)> {
    lists
        .iter()
        .flat_map(|name| {
            let dir = list_file_name(name, list);
            claude::render_tasks(&records_of(records, name))
                .into_iter()
                .map(move |(f, t)| (format!("tasks/{dir}/{f}"), t))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    #[test]
    fn format_names_are_unique_and_in_the_order_users_know() {
        assert_eq!(format_names(), "taskmaster, beads, backlog, claude-todos, claude-tasks");
        for (i, f) in TRACKER_FORMATS.iter().enumerate() {
            assert!(TRACKER_FORMATS[..i].iter().all(|g| g.name != f.name), "{} twice", f.name);
            assert_eq!(tracker_format(f.name).map(|g| g.name), Some(f.name));
        }
        assert!(tracker_format("jira").is_none());
    }

    /// Two records of the list itself as a format names them (ids its own), the second
    /// waiting for the first.
    fn sample(format: &TrackerFormat) -> Vec<Record> {
        let id = |n: u32| match format.name {
            "beads" => format!("app-{n}"),
            "backlog" => format!("TASK-{n}"),
            _ => n.to_string(),
        };
        let record = |n: u32, title: &str, status: Status| Record {
            id: id(n),
            list: format.own_list_name.map(str::to_string),
            title: title.to_string(),
            status,
            created_us: Some(1_795_315_748_000_000),
            updated_us: Some(1_795_315_748_000_000),
            ..Record::default()
        };
        vec![record(1, "Write the parser", Status::Completed), record(2, "Test the parser", Status::Pending)]
    }

    #[test]
    fn every_format_reads_back_the_tasks_it_writes() {
        let lists = [None];
        for format in TRACKER_FORMATS {
            let records = sample(format);
            let files = (format.render)(&records, &lists, "project:/home/me/app");
            assert!(!files.is_empty(), "{}", format.name);
            let parsed = read_back(format, &files);
            let tasks = |rs: &[Record]| -> Vec<(String, String, Status)> {
                rs.iter().map(|r| (r.id.clone(), r.title.clone(), r.status)).collect()
            };
            assert_eq!(tasks(&parsed), tasks(&records), "{}", format.name);
            // what was read, written again, reads back the same
            let mut again = parsed.clone();
            for r in &mut again {
                if format.named_lists && format.own_list_name.is_none() && r.list.as_deref() == Some("app") {
                    r.list = None;
                }
            }
            let files = (format.render)(&again, &lists, "project:/home/me/app");
            assert_eq!(read_back(format, &files), parsed, "{}", format.name);
        }
    }

    /// The records of a format's files, by id.
    fn read_back(format: &TrackerFormat, files: &[(String, String)]) -> Vec<Record> {
        let mut parsed = Vec::new();
        for (path, text) in files {
            parsed.extend((format.parse)(path, text).unwrap_or_else(|e| panic!("{}: {e}", format.name)));
        }
        parsed.sort_by(|a, b| a.id.cmp(&b.id));
        parsed
    }
}
