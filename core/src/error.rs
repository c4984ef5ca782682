//! The one error type of every operation, and the one policy for errors caught from the
//! database. Each surface maps an [`Error`] through the same three tables: its SQLSTATE (the
//! SQL functions raise it), its tool error code (`{"error": {"code", "message"}}`) and its
//! HTTP status (REST). Pure: no pgrx.
//!
//! The policy ([`disposition`]): an error about the caller's data (bad input, the lifecycle,
//! a claim held by another agent, a cycle, a constraint) becomes the surface's answer. Any
//! other error (a cancel or timeout, a deadlock, a serialization failure, a real lock
//! timeout, out of memory or disk, a shutdown, a missing privilege, an internal error) is
//! raised again as it was, and nothing of the call commits: the caller retries the call.

use std::fmt;

use crate::claims::{EdgeError, Refusal};
use crate::status::Forbidden;

/// SQLSTATE of a claim conflict: another agent holds a live claim on the todo. PostgreSQL's
/// `object_in_use`, never `lock_not_available` (55P03), which is a real lock timeout.
pub const CLAIM_HELD: &str = "55006";

/// Why an operation did nothing. Every variant is about the caller's data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// no todo with this id in scope (another tenant's id answers the same)
    NotFound { id: i64 },
    /// the lifecycle forbids this change of status
    Transition { id: i64, forbidden: Forbidden },
    /// a claim rule refuses the action
    Claim(Refusal),
    /// a dependency that cannot be added
    Edge(EdgeError),
    /// input that breaks a rule of the operation (a blank subject, a bad status, …)
    Invalid(String),
    /// an edit made on what the caller read of todo `id` at version `read`: the todo has
    /// changed since (it is at version `now`), so the edit is not applied blindly
    Stale { id: i64, read: i64, now: i64 },
    /// the database refused the data (a CHECK, a constraint, a trigger's rule), caught from
    /// the statement that wrote it: its SQLSTATE and message
    Rejected { sqlstate: String, message: String },
}

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Error {
        Error::Claim(r)
    }
}

impl From<EdgeError> for Error {
    fn from(e: EdgeError) -> Error {
        Error::Edge(e)
    }
}

impl Error {
    /// A transition the lifecycle forbids for todo `id`.
    pub fn transition(id: i64, forbidden: Forbidden) -> Error {
        Error::Transition { id, forbidden }
    }

    /// The SQLSTATE the SQL surface raises.
    pub fn sqlstate(&self) -> &str {
        match self {
            Error::NotFound { .. } => "P0002",
            Error::Transition { .. } => "55000",
            Error::Claim(Refusal::HeldBy { .. }) => CLAIM_HELD,
            Error::Claim(Refusal::NoAgent | Refusal::BadLease { .. }) => "22023",
            Error::Claim(_) | Error::Stale { .. } => "55000",
            Error::Edge(_) | Error::Invalid(_) => "22023",
            Error::Rejected { sqlstate, .. } => sqlstate,
        }
    }

    /// The error code of the tool dialects' error object.
    pub fn code(&self) -> &'static str {
        match self {
            Error::NotFound { .. } => "not_found",
            Error::Transition { .. } => "not_open",
            Error::Claim(Refusal::HeldBy { .. }) => "claimed",
            Error::Claim(Refusal::Expired { .. } | Refusal::Superseded { .. } | Refusal::NotClaimed { .. }) => {
                "stale_claim"
            }
            Error::Claim(Refusal::Blocked { .. }) => "blocked",
            Error::Claim(Refusal::NotOpen { .. }) => "not_open",
            Error::Claim(Refusal::NoAgent) => "no_agent",
            Error::Claim(Refusal::BadLease { .. }) | Error::Edge(EdgeError::SelfLoop(_)) | Error::Invalid(_) => {
                "invalid_arguments"
            }
            Error::Edge(EdgeError::Cycle { .. } | EdgeError::Subtask { .. }) => "cycle",
            Error::Stale { .. } => "stale",
            Error::Rejected { .. } => "rejected",
        }
    }

    /// The HTTP status of REST's answer: 404 no such todo, 409 a conflict with the todo's
    /// state (the lifecycle, a claim, a cycle, a change since the caller read it), 400 anything else wrong with the request.
    pub fn http_status(&self) -> u16 {
        match self {
            Error::NotFound { .. } => 404,
            Error::Transition { .. }
            | Error::Edge(EdgeError::Cycle { .. } | EdgeError::Subtask { .. })
            | Error::Stale { .. } => 409,
            Error::Claim(Refusal::NoAgent | Refusal::BadLease { .. }) => 400,
            Error::Claim(_) => 409,
            Error::Edge(_) | Error::Invalid(_) => 400,
            Error::Rejected { sqlstate, .. } if sqlstate.starts_with("55") => 409,
            Error::Rejected { .. } => 400,
        }
    }

    /// What to do about it (the SQL error's HINT); empty when there is nothing to add.
    pub fn hint(&self) -> String {
        match self {
            Error::NotFound { .. } => {
                "ids are per tenant; the todo must be in the conversation in context or tenant-wide".into()
            }
            Error::Transition { forbidden, .. } => forbidden.hint().into(),
            Error::Claim(r) => r.hint(),
            Error::Edge(_) => "todo.dependencies lists the edges".into(),
            Error::Stale { .. } => "read the todo again and make the change on what it is now".into(),
            Error::Invalid(_) | Error::Rejected { .. } => String::new(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotFound { id } => write!(f, "no todo #{id} in scope"),
            Error::Transition { id, forbidden } => write!(f, "todo #{id}: {forbidden}"),
            Error::Claim(r) => r.fmt(f),
            Error::Edge(e) => e.fmt(f),
            Error::Invalid(m) | Error::Rejected { message: m, .. } => f.write_str(m),
            Error::Stale { id, read, now } => write!(
                f,
                "todo #{id} changed since you read it (you read version {read}; it is at version {now}): look at it again and redo your change"
            ),
        }
    }
}

/// What a surface does with an error it caught from the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// about the caller's data: the surface's answer (`ERR:` line, error object, HTTP 4xx)
    Answer,
    /// anything else: raised again as it was; nothing of the call commits
    Raise,
}

/// An operation's refusal as a dialect says it: every `#<store id>` of `text` that `name`
/// knows written as the dialect's own id (`#2004 is completed already` → `TASK-7 is
/// completed already`), so a tracker's agent reads the ids it was shown; an id `name` does
/// not know stays as it was.
pub fn named_ids(text: &str, name: impl Fn(i64) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match after[..digits].parse::<i64>().ok().and_then(&name) {
            Some(own) => out.push_str(&own),
            None => out.push_str(&rest[at..at + 1 + digits]),
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// The policy for an error caught while a call wrote: only the caller's data becomes an
/// answer. Data exceptions (class 22), integrity constraints (23), the lifecycle and claims
/// (55000 object not in prerequisite state, 55006 a claim held by another agent) and no
/// such row (P0002). Everything else is raised: cancels and timeouts (57014), shutdowns
/// (57P01…), deadlocks and serialization failures (class 40), a real lock timeout (55P03),
/// resources (53), system and internal errors (58, XX), privileges (42501).
pub fn disposition(sqlstate: &str) -> Disposition {
    let answer =
        sqlstate.starts_with("22") || sqlstate.starts_with("23") || matches!(sqlstate, "55000" | CLAIM_HELD | "P0002");
    if answer {
        Disposition::Answer
    } else {
        Disposition::Raise
    }
}

/// Whether a transaction that failed with this error is worth running again as it was: a
/// serialization failure (40001) or a deadlock (40P01). The services outside the database
/// (`pg_todos mcp`, `pg_todos serve`) retry these.
pub fn worth_retrying(sqlstate: &str) -> bool {
    matches!(sqlstate, "40001" | "40P01")
}

/// Whether a best-effort read (the open block, the preamble) may swallow this error into an
/// empty answer with a WARNING. It covers failures of the probe (no tenant, no privileges, a
/// broken setup), never what the caller asked for or must retry: a cancel or timeout
/// (class 57), a deadlock or serialization failure (40), a lock timeout (55P03), running out
/// of resources (53) or a system error (58) is raised.
pub fn best_effort_swallows(sqlstate: &str) -> bool {
    !(["57", "40", "53", "58"].iter().any(|class| sqlstate.starts_with(class)) || sqlstate == "55P03")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    #[test]
    fn named_ids_writes_the_dialects_ids_and_keeps_the_rest() {
        let name = |id: i64| (id == 2004).then(|| "TASK-7".to_string());
        assert_eq!(named_ids("#2004 is completed already", name), "TASK-7 is completed already");
        assert_eq!(
            named_ids("finish #2004, #12 first, or unblock #2004", name),
            "finish TASK-7, #12 first, or unblock TASK-7"
        );
        assert_eq!(named_ids("# and #x and #", name), "# and #x and #");
        assert_eq!(named_ids("no ids", name), "no ids");
    }

    #[test]
    fn the_policy_answers_only_for_the_callers_data() {
        for state in ["22023", "22P02", "23505", "23514", "55000", "55006", "P0002"] {
            assert_eq!(disposition(state), Disposition::Answer, "{state}");
        }
        // cancel/timeout, shutdown, deadlock, serialization, real lock timeout, out of
        // memory, disk full, I/O, internal, privileges, undefined object
        for state in ["57014", "57P01", "40P01", "40001", "55P03", "53200", "53100", "58030", "XX000", "42501", "42704"]
        {
            assert_eq!(disposition(state), Disposition::Raise, "{state}");
        }
    }

    #[test]
    fn only_serialization_failures_and_deadlocks_are_retried() {
        assert!(worth_retrying("40001") && worth_retrying("40P01"));
        for state in ["40000", "40002", "57014", "55P03", "55006", "22023", "53200"] {
            assert!(!worth_retrying(state), "{state}");
        }
    }

    #[test]
    fn best_effort_never_swallows_a_cancel() {
        for state in ["57014", "57P01", "40P01", "40001", "55P03", "53200", "58030"] {
            assert!(!best_effort_swallows(state), "{state}");
        }
        for state in ["22023", "42704", "42501", "XX000"] {
            assert!(best_effort_swallows(state), "{state}");
        }
    }

    #[test]
    fn every_error_has_one_sqlstate_code_and_http_status() {
        let held = Error::Claim(Refusal::HeldBy { id: 3, holder: "b".into(), until_us: 0 });
        assert_eq!((held.sqlstate(), held.code(), held.http_status()), (CLAIM_HELD, "claimed", 409));
        assert_eq!(disposition(held.sqlstate()), Disposition::Answer, "a claim conflict is the caller's data");
        let stale = Error::Stale { id: 12, read: 3, now: 5 };
        assert_eq!((stale.sqlstate(), stale.code(), stale.http_status()), ("55000", "stale", 409));
        assert_eq!(
            stale.to_string(),
            "todo #12 changed since you read it (you read version 3; it is at version 5): look at it again and redo your change"
        );
        let missing = Error::NotFound { id: 3 };
        assert_eq!((missing.sqlstate(), missing.code(), missing.http_status()), ("P0002", "not_found", 404));
        assert_eq!(missing.to_string(), "no todo #3 in scope");
        let forbidden = Error::transition(3, Forbidden { from: Status::Canceled, to: Status::InProgress });
        assert_eq!((forbidden.sqlstate(), forbidden.code(), forbidden.http_status()), ("55000", "not_open", 409));
        let cycle = Error::Edge(EdgeError::Cycle { id: 1, on: 2, path: vec![2, 1] });
        assert_eq!((cycle.sqlstate(), cycle.code(), cycle.http_status()), ("22023", "cycle", 409));
        let subtask = Error::Edge(EdgeError::Subtask { id: 1, parent: 2, path: vec![1, 2] });
        assert_eq!((subtask.sqlstate(), subtask.code(), subtask.http_status()), ("22023", "cycle", 409));
        let lease = Error::Claim(Refusal::BadLease { seconds: 0, max: 10 });
        assert_eq!((lease.sqlstate(), lease.code(), lease.http_status()), ("22023", "invalid_arguments", 400));
        let check = Error::Rejected { sqlstate: "23514".into(), message: "violates check".into() };
        assert_eq!((check.sqlstate(), check.code(), check.http_status()), ("23514", "rejected", 400));
        let state = Error::Rejected { sqlstate: "55000".into(), message: "lifecycle".into() };
        assert_eq!(state.http_status(), 409);
        // every variant's SQLSTATE is one the policy answers for
        for e in [held, missing, forbidden, cycle, lease, check, state, Error::Invalid("x".into())] {
            assert_eq!(disposition(e.sqlstate()), Disposition::Answer, "{e:?}");
        }
    }
}
