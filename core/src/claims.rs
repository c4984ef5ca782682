//! Claims with leases and fencing, and the dependency rules: who may act on a claimed todo,
//! which todos may be claimed, and the words every surface says when the answer is no.
//! Pure: no pgrx, tested without a database. The operations run these rules under row locks;
//! the row trigger runs `check` on every change of status of a claimed todo.
//!
//! A claim is (holder, fence, lease end). Every claim of a todo bumps its fence, so a fence
//! names one claim. A claim is *live* until its lease ends; after that it has *lapsed* and the
//! todo is claimable again, with no cleanup by anyone.

use crate::status::Status;
use crate::time::iso8601;

/// The claim a todo carries, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub holder: String,
    /// microseconds since the epoch
    pub expires_us: i64,
}

/// The claim state of one todo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub id: i64,
    pub status: Status,
    /// None: unclaimed (never claimed, released, or finished)
    pub claim: Option<Claim>,
    /// the fence of the latest claim (0: never claimed)
    pub fence: i64,
}

/// What an action needs from the claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// a change of status (done, cancel, reopen, start): an unclaimed or lapsed todo is anyone's
    Status,
    /// heartbeat and release: the actor must hold a live claim
    Holder,
}

/// Why an action on a todo is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// another agent holds a live claim (SQLSTATE 55006, `error::CLAIM_HELD`)
    HeldBy { id: i64, holder: String, until_us: i64 },
    /// the actor's own claim lapsed (55000)
    Expired { id: i64, fence: i64, at_us: i64 },
    /// the fence presented is not the todo's latest claim (55000)
    Superseded { id: i64, presented: i64, current: i64 },
    /// heartbeat/release of a todo nobody (or not the actor) holds (55000)
    NotClaimed { id: i64 },
    /// claiming or finishing a todo that is finished (55000)
    NotOpen { id: i64, status: Status },
    /// claiming a todo that waits for open todos (55000)
    Blocked { id: i64, by: Vec<i64> },
    /// claiming, heartbeating or releasing with no agent in context (22023)
    NoAgent,
    /// a lease longer than `todo.lease_max`, or not positive (22023)
    BadLease { seconds: i64, max: i64 },
}

impl Refusal {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            Refusal::HeldBy { .. } => "wait for its holder to finish or release it, or for its lease to end".into(),
            Refusal::Expired { id, .. } | Refusal::Superseded { id, .. } | Refusal::NotClaimed { id } => {
                format!("claim #{id} again before acting on it")
            }
            Refusal::NotOpen { id, .. } => format!("reopen #{id} first"),
            Refusal::Blocked { id, by } => format!("finish {} first, or unblock #{id}", ids(by)),
            Refusal::NoAgent => "set todo.agent (SET LOCAL todo.agent = '<agent>' or todo.set_context)".into(),
            Refusal::BadLease { .. } => "ask for a shorter lease, or raise todo.lease_max".into(),
        }
    }
}

/// `#3, #5`
pub fn ids(ids: &[i64]) -> String {
    ids.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(", ")
}

/// The lease end as printed: ISO 8601, UTC.
fn at(us: i64) -> String {
    iso8601(us)
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::HeldBy { id, holder, until_us } => {
                write!(f, "#{id} is claimed by {holder} until {}", at(*until_us))
            }
            Refusal::Expired { id, fence, at_us } => {
                write!(f, "your claim on #{id} (fence {fence}) expired at {}", at(*at_us))
            }
            Refusal::Superseded { id, presented, current } if presented < current => {
                write!(f, "fence {presented} is not the current claim on #{id} (fence {current}): it was claimed again")
            }
            Refusal::Superseded { id, presented, current } => {
                write!(f, "fence {presented} was never given for #{id} (its current fence is {current})")
            }
            Refusal::NotClaimed { id } => write!(f, "#{id} is not claimed by you"),
            Refusal::NotOpen { id, status } => write!(f, "#{id} is {status} already"),
            Refusal::Blocked { id, by } => write!(f, "#{id} is blocked by {}", ids(by)),
            Refusal::NoAgent => f.write_str("claims need an agent: todo.agent is not set"),
            Refusal::BadLease { seconds, max } => {
                write!(f, "a lease of {seconds} s is not allowed: it must be between 1 s and todo.lease_max ({max} s)")
            }
        }
    }
}

/// Whether `actor`, presenting `fence` (or none), may act on `state` at `now_us`.
///
/// - A fence, when presented, must be the todo's current one, its claim must still be held
///   (not released or finished), by the actor, and live.
/// - With no fence: an unclaimed todo, or one whose claim lapsed, is anyone's to change the
///   status of (`Need::Status`); its own holder, though, is refused once the lease has ended
///   (a slow agent never overwrites the one that took over). A live claim admits its holder
///   only. Heartbeat and release (`Need::Holder`) need a live claim held by the actor.
pub fn check(state: &State, actor: Option<&str>, fence: Option<i64>, need: Need, now_us: i64) -> Result<(), Refusal> {
    let id = state.id;
    if let Some(presented) = fence {
        if presented != state.fence {
            return Err(Refusal::Superseded { id, presented, current: state.fence });
        }
    }
    let Some(claim) = &state.claim else {
        return match (need, fence) {
            (Need::Status, None) => Ok(()),
            _ => Err(Refusal::NotClaimed { id }),
        };
    };
    let live = claim.expires_us > now_us;
    let mine = actor == Some(claim.holder.as_str());
    match (mine, live) {
        (true, true) => Ok(()),
        (true, false) => Err(Refusal::Expired { id, fence: state.fence, at_us: claim.expires_us }),
        (false, true) => Err(Refusal::HeldBy { id, holder: claim.holder.clone(), until_us: claim.expires_us }),
        (false, false) => match (need, fence) {
            (Need::Status, None) => Ok(()),
            (Need::Status, Some(_)) => Err(Refusal::Expired { id, fence: state.fence, at_us: claim.expires_us }),
            (Need::Holder, _) => Err(Refusal::NotClaimed { id }),
        },
    }
}

/// Whether `actor` may claim `state` at `now_us`; `blocked_by` are the open todos it waits for.
/// A live claim of the actor's own is claimed again (a new fence: a restarted agent fences
/// out its earlier self).
pub fn check_claim(state: &State, actor: &str, blocked_by: &[i64], now_us: i64) -> Result<(), Refusal> {
    let id = state.id;
    if state.status.is_terminal() {
        return Err(Refusal::NotOpen { id, status: state.status });
    }
    if !blocked_by.is_empty() {
        return Err(Refusal::Blocked { id, by: blocked_by.to_vec() });
    }
    match &state.claim {
        Some(c) if c.expires_us > now_us && c.holder != actor => {
            Err(Refusal::HeldBy { id, holder: c.holder.clone(), until_us: c.expires_us })
        }
        _ => Ok(()),
    }
}

/// The lease to grant: `requested` seconds, or the default; at most `max`, at least 1.
pub fn lease_seconds(requested: Option<i64>, default: i64, max: i64) -> Result<i64, Refusal> {
    match requested {
        None => Ok(default.clamp(1, max.max(1))),
        Some(s) if s >= 1 && s <= max => Ok(s),
        Some(s) => Err(Refusal::BadLease { seconds: s, max }),
    }
}

/// Why a dependency cannot be added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdgeError {
    /// a todo cannot wait for itself
    SelfLoop(i64),
    /// `on` already waits for `id`, along `path` (from `on` to `id`)
    Cycle { id: i64, on: i64, path: Vec<i64> },
    /// `id` already waits for `parent` (a parent waits for its subtasks), along `path` (from
    /// `id` to `parent`): it cannot be `parent`'s subtask
    Subtask { id: i64, parent: i64, path: Vec<i64> },
}

impl std::fmt::Display for EdgeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EdgeError::SelfLoop(id) => write!(f, "#{id} cannot wait for itself"),
            EdgeError::Cycle { id, on, path } => {
                let chain = path.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(" → ");
                write!(f, "blocking #{id} on #{on} would make a cycle: #{on} already waits for #{id} ({chain})")
            }
            EdgeError::Subtask { id, parent, path } => {
                let chain = path.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(" → ");
                write!(
                    f,
                    "making #{id} a subtask of #{parent} would make a cycle: #{id} already waits for #{parent} ({chain})"
                )
            }
        }
    }
}

/// A parent's progress: its subtasks that are completed, of those not canceled.
pub fn progress(done: i64, total: i64) -> String {
    format!("{done}/{total} done")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000_000;

    fn state(claim: Option<(&str, i64)>, fence: i64) -> State {
        State {
            id: 14,
            status: if claim.is_some() { Status::InProgress } else { Status::Pending },
            claim: claim.map(|(h, e)| Claim { holder: h.into(), expires_us: e }),
            fence,
        }
    }

    #[test]
    fn unclaimed_todos_are_anyones_for_status_but_not_for_heartbeat() {
        let s = state(None, 0);
        assert_eq!(check(&s, Some("a"), None, Need::Status, NOW), Ok(()));
        assert_eq!(check(&s, None, None, Need::Status, NOW), Ok(()));
        assert_eq!(check(&s, Some("a"), None, Need::Holder, NOW), Err(Refusal::NotClaimed { id: 14 }));
        // released after a claim: fence 3 was real, but the claim has ended
        let s = state(None, 3);
        assert_eq!(check(&s, Some("a"), Some(3), Need::Status, NOW), Err(Refusal::NotClaimed { id: 14 }));
    }

    #[test]
    fn a_live_claim_admits_its_holder_only() {
        let s = state(Some(("a", NOW + 1)), 2);
        assert_eq!(check(&s, Some("a"), None, Need::Status, NOW), Ok(()));
        assert_eq!(check(&s, Some("a"), Some(2), Need::Holder, NOW), Ok(()));
        let held = Err(Refusal::HeldBy { id: 14, holder: "a".into(), until_us: NOW + 1 });
        assert_eq!(check(&s, Some("b"), None, Need::Status, NOW), held);
        assert_eq!(check(&s, None, None, Need::Status, NOW), held, "no agent is not the holder");
        assert_eq!(check(&s, Some("b"), Some(2), Need::Holder, NOW), held, "a fence alone is not enough");
    }

    #[test]
    fn stale_fences_are_rejected_even_for_the_same_agent() {
        // agent "a" restarted and claimed again (fence 3); its old self presents fence 2
        let s = state(Some(("a", NOW + 1)), 3);
        assert_eq!(
            check(&s, Some("a"), Some(2), Need::Status, NOW),
            Err(Refusal::Superseded { id: 14, presented: 2, current: 3 })
        );
        assert_eq!(check(&s, Some("a"), Some(3), Need::Status, NOW), Ok(()));
    }

    #[test]
    fn a_lapsed_claim_rejects_its_holder_and_frees_the_todo_for_others() {
        let s = state(Some(("a", NOW)), 2); // the lease ends exactly now: lapsed
        let expired = Err(Refusal::Expired { id: 14, fence: 2, at_us: NOW });
        assert_eq!(check(&s, Some("a"), None, Need::Status, NOW), expired);
        assert_eq!(check(&s, Some("a"), Some(2), Need::Holder, NOW), expired);
        assert_eq!(check(&s, Some("b"), None, Need::Status, NOW), Ok(()), "the supervisor may cancel it");
        assert_eq!(check(&s, Some("b"), None, Need::Holder, NOW), Err(Refusal::NotClaimed { id: 14 }));
    }

    #[test]
    fn claiming() {
        let pending = state(None, 0);
        assert_eq!(check_claim(&pending, "a", &[], NOW), Ok(()));
        assert_eq!(check_claim(&pending, "a", &[3, 5], NOW), Err(Refusal::Blocked { id: 14, by: vec![3, 5] }));
        let held = state(Some(("a", NOW + 1)), 1);
        assert_eq!(check_claim(&held, "a", &[], NOW), Ok(()), "its holder claims it again");
        assert!(matches!(check_claim(&held, "b", &[], NOW), Err(Refusal::HeldBy { .. })));
        let lapsed = state(Some(("a", NOW - 1)), 1);
        assert_eq!(check_claim(&lapsed, "b", &[], NOW), Ok(()));
        let done = State { status: Status::Completed, ..state(None, 1) };
        assert_eq!(check_claim(&done, "a", &[], NOW), Err(Refusal::NotOpen { id: 14, status: Status::Completed }));
    }

    #[test]
    fn leases() {
        assert_eq!(lease_seconds(None, 300, 3600), Ok(300));
        assert_eq!(lease_seconds(None, 7200, 3600), Ok(3600), "the default never exceeds the maximum");
        assert_eq!(lease_seconds(Some(60), 300, 3600), Ok(60));
        assert_eq!(lease_seconds(Some(3600), 300, 3600), Ok(3600));
        assert_eq!(lease_seconds(Some(3601), 300, 3600), Err(Refusal::BadLease { seconds: 3601, max: 3600 }));
        assert_eq!(lease_seconds(Some(0), 300, 3600), Err(Refusal::BadLease { seconds: 0, max: 3600 }));
    }

    #[test]
    fn words() {
        let t = 1_795_315_748_000_000;
        assert_eq!(
            Refusal::HeldBy { id: 14, holder: "agent-b".into(), until_us: t }.to_string(),
            "#14 is claimed by agent-b until 2026-11-22T02:49:08.000Z"
        );
        assert_eq!(
            Refusal::Expired { id: 14, fence: 2, at_us: t }.to_string(),
            "your claim on #14 (fence 2) expired at 2026-11-22T02:49:08.000Z"
        );
        assert_eq!(
            Refusal::Superseded { id: 14, presented: 2, current: 3 }.to_string(),
            "fence 2 is not the current claim on #14 (fence 3): it was claimed again"
        );
        assert_eq!(
            Refusal::Superseded { id: 14, presented: 4, current: 3 }.to_string(),
            "fence 4 was never given for #14 (its current fence is 3)"
        );
        assert_eq!(Refusal::Blocked { id: 15, by: vec![3, 14] }.to_string(), "#15 is blocked by #3, #14");
        assert_eq!(Refusal::Blocked { id: 15, by: vec![3] }.hint(), "finish #3 first, or unblock #15");
        assert_eq!(
            EdgeError::Cycle { id: 3, on: 5, path: vec![5, 8, 3] }.to_string(),
            "blocking #3 on #5 would make a cycle: #5 already waits for #3 (#5 → #8 → #3)"
        );
        assert_eq!(EdgeError::SelfLoop(3).to_string(), "#3 cannot wait for itself");
        assert_eq!(
            EdgeError::Subtask { id: 3, parent: 5, path: vec![3, 5] }.to_string(),
            "making #3 a subtask of #5 would make a cycle: #3 already waits for #5 (#3 → #5)"
        );
        assert_eq!(progress(2, 5), "2/5 done");
        assert_eq!(Refusal::NotOpen { id: 2, status: Status::Completed }.to_string(), "#2 is completed already");
    }
}
