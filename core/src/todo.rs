//! A todo as the surfaces read it. Pure: no pgrx.

use crate::status::Status;

/// One row of `todo.todos`, timestamps as microseconds since the Unix epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Todo {
    pub id: i64,
    pub conversation_id: Option<String>,
    pub turn_id: Option<String>,
    pub agent_id: Option<String>,
    pub subject: String,
    pub description: Option<String>,
    pub active_form: Option<String>,
    pub status: Status,
    pub priority: Option<String>,
    pub position: i64,
    pub completion_criteria: Option<String>,
    pub agent_type: Option<String>,
    pub outcome: Option<String>,
    pub created_us: i64,
    pub updated_us: i64,
    pub started_us: Option<i64>,
    pub completed_us: Option<i64>,
    /// who the todo is assigned to (Claude Code's task `owner`), not a claim
    pub owner: Option<String>,
    /// the caller's own JSON object of key/values (Claude Code's task `metadata`), as text
    pub metadata: Option<String>,
    /// the caller's own id for the todo within its list (Cursor's `todo_write` ids)
    pub external_id: Option<String>,
    /// its labels (beads', Backlog.md's), in the order given; none: empty
    pub labels: Vec<String>,
    /// what kind of work it is (beads' and Backlog.md's issue type: bug, feature, task, …)
    pub issue_type: Option<String>,
    /// when it is due (Backlog.md's due date), microseconds since the Unix epoch
    pub due_us: Option<i64>,
    /// notes kept while working on it (beads' notes, Backlog.md's implementation notes)
    pub notes: Option<String>,
    /// how it is to be done (beads' design, Backlog.md's implementation plan, Task Master's
    /// details)
    pub plan: Option<String>,
    /// the todo this one is a subtask of
    pub parent_id: Option<i64>,
    /// when a whole-list writer (or a tracker's archive) took it off its list, kept as
    /// history; None: on its list
    pub archived_us: Option<i64>,
}
