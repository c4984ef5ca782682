//! The record every tracker's file is read into and written from (`pg_todos import` and
//! `export`): one task of Task Master's `tasks.json`, beads' `issues.jsonl`, Backlog.md's
//! `backlog/` folder or Claude Code's todo and task files, in the store's terms. A format
//! module (`formats::*`) parses a file into records and renders records into the file the
//! tracker itself reads; the database side writes and reads records as todos. Pure: no
//! pgrx, tested without a database.

use serde_json::{Map, Value};

use crate::status::Status;

/// Which checkable list of a task an item is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChecklistKind {
    /// acceptance criteria (Backlog.md's `acceptanceCriteria`)
    Acceptance,
    /// the definition of done (Backlog.md's `definitionOfDone`)
    Done,
}

impl ChecklistKind {
    /// The spelling stored in `todo.checklist_items.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChecklistKind::Acceptance => "acceptance",
            ChecklistKind::Done => "done",
        }
    }

    pub fn parse(s: &str) -> Option<ChecklistKind> {
        match s {
            "acceptance" => Some(ChecklistKind::Acceptance),
            "done" => Some(ChecklistKind::Done),
            _ => None,
        }
    }
}

/// One checkable item of a task (an acceptance criterion, a definition-of-done item).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChecklistItem {
    pub kind: ChecklistKind,
    pub text: String,
    pub checked: bool,
}

/// One comment on a task, with its author (None: not said) and when it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comment {
    pub author: Option<String>,
    /// microseconds since the Unix epoch
    pub created_us: i64,
    pub body: String,
}

/// One task of a tracker's file, in the store's terms. Times are microseconds since the
/// Unix epoch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// the tracker's own id, kept as the todo's caller id (`external_id`): Task Master's
    /// `5` or `5.2`, beads' `bd-a1b2`, Backlog.md's `TASK-3`, Claude Code's `1`
    pub id: String,
    /// the id of the record this one is a subtask of (Task Master's `5` for `5.2`,
    /// Backlog.md's `parent_task_id`)
    pub parent: Option<String>,
    /// the list of the file it is on, where a file holds several (Task Master's tag, a
    /// Claude Code task list's name); None: the import's own list
    pub list: Option<String>,
    pub title: String,
    pub description: Option<String>,
    pub status: Status,
    /// high, medium or low (the store's words); None: not said
    pub priority: Option<String>,
    pub labels: Vec<String>,
    /// bug, feature, task, epic, chore, … (beads' issue type, Backlog.md's type)
    pub issue_type: Option<String>,
    /// who it is assigned to
    pub assignee: Option<String>,
    pub due_us: Option<i64>,
    /// notes kept while working (beads' notes, Backlog.md's implementation notes)
    pub notes: Option<String>,
    /// how it is to be done (Task Master's details, beads' design, Backlog.md's plan)
    pub plan: Option<String>,
    /// how to tell it is done (Task Master's testStrategy, beads' acceptance criteria)
    pub criteria: Option<String>,
    /// how it ended (beads' close reason, Backlog.md's final summary)
    pub outcome: Option<String>,
    /// the present-tense form shown while it is worked on (Claude Code's `activeForm`)
    pub active_form: Option<String>,
    /// the ids of the records it waits for
    pub dependencies: Vec<String>,
    pub checklist: Vec<ChecklistItem>,
    pub comments: Vec<Comment>,
    pub created_us: Option<i64>,
    pub updated_us: Option<i64>,
    pub completed_us: Option<i64>,
    /// off the tracker's working list but kept (Backlog.md's completed and archived tasks)
    pub archived: bool,
    /// what the tracker's record holds that no field above keeps (Task Master's
    /// `complexity`, beads' `external_ref`, Backlog.md's `ordinal`, `milestone`,
    /// `references`, …), by the tracker's own key: kept in the todo's metadata, written back
    /// on export
    pub extra: Map<String, Value>,
}

/// What is wrong with a file: where (the file, and its line or field), what, and what to
/// do about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileError {
    /// the file, as the caller named it
    pub file: String,
    /// the line (from 1) when the format has lines that matter (JSONL, front matter)
    pub line: Option<usize>,
    /// the field, as a path (`master.tasks[3].dependencies[0]`), when one is to blame
    pub field: Option<String>,
    /// what is wrong and what to write instead
    pub message: String,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ", line {line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ", {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}
