//! The todo lifecycle: the seven statuses, the one transition table, and which timestamps a
//! change of status stamps. Pure logic: no pgrx, tested without a database. The row trigger
//! (`src/triggers/`) and every surface ask this module, never a copy of it.

use std::fmt;

/// A todo's status, in its one internal spelling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Status {
    #[default]
    Pending,
    InProgress,
    Completed,
    Canceled,
    /// open, but waiting on something outside the list (Gemini CLI's `blocked`): not
    /// claimable, not ready, shown as pending by the dialects that have no such status
    Blocked,
    /// open, put off for later (Task Master's and beads' `deferred`): not claimable, not
    /// ready, shown as pending by the dialects that have no such status
    Deferred,
    /// open, its work done and waiting for a review (Task Master's `review`): not claimable,
    /// not ready, shown as in progress by the dialects that have no such status
    Review,
}

impl Status {
    pub const ALL: [Status; 7] = [
        Status::Pending,
        Status::InProgress,
        Status::Completed,
        Status::Canceled,
        Status::Blocked,
        Status::Deferred,
        Status::Review,
    ];

    /// Parses a status as any surface may send it: the internal spelling, plus `cancelled`
    /// (seeds 001 and 002 spell it so). Exact and lower-case only.
    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "pending" => Some(Status::Pending),
            "in_progress" => Some(Status::InProgress),
            "completed" => Some(Status::Completed),
            "canceled" | "cancelled" => Some(Status::Canceled),
            "blocked" => Some(Status::Blocked),
            "deferred" => Some(Status::Deferred),
            "review" => Some(Status::Review),
            _ => None,
        }
    }

    /// The spelling stored in `todo.todos.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Completed => "completed",
            Status::Canceled => "canceled",
            Status::Blocked => "blocked",
            Status::Deferred => "deferred",
            Status::Review => "review",
        }
    }

    /// The three states most runtimes know (pending, in progress, completed), for a dialect
    /// that has no blocked, deferred, review or canceled: a blocked or deferred todo is
    /// pending (still to do), one in review in progress (not done yet), a canceled one
    /// completed (done with). The one place this collapse is decided.
    pub fn three_state(self) -> Status {
        match self {
            Status::Pending | Status::Blocked | Status::Deferred => Status::Pending,
            Status::InProgress | Status::Review => Status::InProgress,
            Status::Completed | Status::Canceled => Status::Completed,
        }
    }

    /// Completed and canceled are terminal: they carry `completed_at` and leave the open list.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Canceled)
    }

    pub fn is_open(self) -> bool {
        !self.is_terminal()
    }
}

/// The open statuses as an SQL list, for `status IN open_statuses!()` in the store's queries
/// (a macro, so that `concat!` can build constant SQL with it). A test checks it against
/// `Status::is_open`.
#[macro_export]
macro_rules! open_statuses {
    () => {
        "('pending', 'in_progress', 'blocked', 'deferred', 'review')"
    };
}

impl Status {
    fn index(self) -> usize {
        match self {
            Status::Pending => 0,
            Status::InProgress => 1,
            Status::Completed => 2,
            Status::Canceled => 3,
            Status::Blocked => 4,
            Status::Deferred => 5,
            Status::Review => 6,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `ALLOWED[from][to]`: the one transition table. Staying in the same status is not a
/// transition and is always allowed (an edit of the subject, say).
///
/// | from \ to   | pending | in_progress | completed | canceled | blocked | deferred | review |
/// |-------------|---------|-------------|-----------|----------|---------|----------|--------|
/// | pending     | =       | yes         | yes       | yes      | yes     | yes      | yes    |
/// | in_progress | yes     | =           | yes       | yes      | yes     | yes      | yes    |
/// | completed   | yes     | no          | =         | no       | no      | no       | no     |
/// | canceled    | yes     | no          | no        | =        | no      | no       | no     |
/// | blocked     | yes     | yes         | yes       | yes      | =       | yes      | yes    |
/// | deferred    | yes     | yes         | yes       | yes      | yes     | =        | yes    |
/// | review      | yes     | yes         | yes       | yes      | yes     | yes      | =      |
///
/// The open statuses (pending, in_progress, blocked, deferred, review) move freely (start,
/// block, defer, send for review, finish, drop). A terminal todo only reopens to pending; it
/// is never restarted, finished again or re-labelled in place.
const ALLOWED: [[bool; 7]; 7] = [
    [true, true, true, true, true, true, true],
    [true, true, true, true, true, true, true],
    [true, false, true, false, false, false, false],
    [true, false, false, true, false, false, false],
    [true, true, true, true, true, true, true],
    [true, true, true, true, true, true, true],
    [true, true, true, true, true, true, true],
];

/// A transition the table forbids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forbidden {
    pub from: Status,
    pub to: Status,
}

impl Forbidden {
    /// What to do instead, for the error's hint.
    pub fn hint(&self) -> &'static str {
        "a completed or canceled todo must be reopened (status pending) before it changes status again"
    }
}

impl fmt::Display for Forbidden {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a todo cannot move from {} to {}", self.from, self.to)
    }
}

/// Checks one change of status against the table.
pub fn check_transition(from: Status, to: Status) -> Result<(), Forbidden> {
    if ALLOWED[from.index()][to.index()] {
        Ok(())
    } else {
        Err(Forbidden { from, to })
    }
}

/// What the row trigger must do to the timestamps for one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Stamps {
    /// set `started_at = now()` (unless the writer set it itself)
    pub start: bool,
    /// set `completed_at = now()` (unless the writer set it itself)
    pub complete: bool,
    /// set `completed_at = NULL`: the row is not terminal
    pub clear_completed: bool,
}

/// The stamps for a write that takes a row from `from` (None: a new row) to `to`.
/// `updated_at` is stamped on every write and is not part of this.
pub fn stamps(from: Option<Status>, to: Status) -> Stamps {
    let entered = from != Some(to);
    Stamps {
        start: entered && to == Status::InProgress,
        complete: entered && to.is_terminal(),
        clear_completed: to.is_open(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sql_list_of_open_statuses_is_is_open() {
        let open: Vec<String> =
            Status::ALL.iter().filter(|s| s.is_open()).map(|s| format!("'{}'", s.as_str())).collect();
        assert_eq!(open_statuses!(), format!("({})", open.join(", ")));
    }

    #[test]
    fn the_index_of_open_todos_holds_exactly_the_open_statuses() {
        // the reads filter on `status IN open_statuses!()`: the planner uses `todos_open` only
        // when that condition implies the index's predicate
        let sql = include_str!("../../sql/bootstrap.sql");
        let index = sql.split("CREATE INDEX todos_open ").nth(1).expect("sql/bootstrap.sql creates todos_open");
        let predicate = index.split(';').next().unwrap_or_default();
        assert!(predicate.ends_with(concat!("WHERE status IN ", open_statuses!())), "{predicate}");
    }

    #[test]
    fn three_states_for_the_dialects_that_have_three() {
        let collapsed: Vec<&str> = Status::ALL.iter().map(|s| s.three_state().as_str()).collect();
        assert_eq!(
            collapsed,
            ["pending", "in_progress", "completed", "completed", "pending", "pending", "in_progress"]
        );
    }

    #[test]
    fn parse_accepts_both_cancel_spellings_and_nothing_loose() {
        assert_eq!(Status::parse("canceled"), Some(Status::Canceled));
        assert_eq!(Status::parse("cancelled"), Some(Status::Canceled));
        assert_eq!(Status::parse("blocked"), Some(Status::Blocked));
        assert_eq!(Status::parse("deferred"), Some(Status::Deferred));
        assert_eq!(Status::parse("review"), Some(Status::Review));
        for bad in ["", "Pending", "done", "in progress", " pending", "CANCELED", "Blocked"] {
            assert_eq!(Status::parse(bad), None, "{bad:?}");
        }
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
    }

    #[test]
    fn transition_table() {
        use Status::*;
        let allowed = |a, b| check_transition(a, b).is_ok();
        for s in Status::ALL {
            assert!(allowed(s, s), "{s} -> {s}");
            assert!(allowed(s, Pending), "everything can go (back) to pending: {s}");
        }
        assert!(allowed(Pending, InProgress));
        assert!(allowed(Pending, Completed));
        assert!(allowed(Pending, Canceled));
        assert!(allowed(InProgress, Completed));
        assert!(allowed(InProgress, Canceled));
        let open = [Pending, InProgress, Blocked, Deferred, Review];
        for a in open {
            assert!(a.is_open(), "{a}");
            for b in open {
                assert!(allowed(a, b), "{a} -> {b}");
            }
            assert!(allowed(a, Completed) && allowed(a, Canceled), "{a} finishes");
            for terminal in [Completed, Canceled] {
                assert_eq!(allowed(terminal, a), a == Pending, "{terminal} -> {a}");
            }
        }
        for (a, b) in [
            (Completed, Blocked),
            (Canceled, Blocked),
            (Completed, InProgress),
            (Completed, Canceled),
            (Canceled, InProgress),
            (Canceled, Completed),
        ] {
            assert_eq!(check_transition(a, b), Err(Forbidden { from: a, to: b }));
        }
        assert_eq!(
            Forbidden { from: Completed, to: InProgress }.to_string(),
            "a todo cannot move from completed to in_progress"
        );
    }

    #[test]
    fn stamps_follow_the_lifecycle() {
        use Status::*;
        assert_eq!(stamps(None, Pending), Stamps { clear_completed: true, ..Default::default() });
        assert_eq!(stamps(None, InProgress), Stamps { start: true, clear_completed: true, ..Default::default() });
        assert_eq!(stamps(None, Completed), Stamps { complete: true, ..Default::default() });
        assert_eq!(
            stamps(Some(Pending), InProgress),
            Stamps { start: true, clear_completed: true, ..Default::default() }
        );
        // staying in progress does not restamp started_at
        assert_eq!(stamps(Some(InProgress), InProgress), Stamps { clear_completed: true, ..Default::default() });
        assert_eq!(stamps(Some(InProgress), Canceled), Stamps { complete: true, ..Default::default() });
        // staying completed does not restamp completed_at
        assert_eq!(stamps(Some(Completed), Completed), Stamps::default());
        // reopening clears completed_at
        assert_eq!(stamps(Some(Completed), Pending), Stamps { clear_completed: true, ..Default::default() });
    }
}
