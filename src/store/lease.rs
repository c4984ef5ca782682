//! Claim statements: claim-next (one statement, SKIP LOCKED), claim by id and renewing a
//! lease. The rules are in `claims`; the operations in `ops::claiming` lock and check first.

use pgrx::datum::DatumWithOid;

use super::read::{ready_candidates, CLAIMABLE, CLAIM_ORDER};
use pgrx::datum::TimestampWithTimeZone;

use super::{exec, one, with_plan};
use crate::time;

/// A claim granted: the todo, its new fence and when the lease ends (epoch microseconds).
pub struct Granted {
    pub id: i64,
    pub subject: String,
    pub fence: i64,
    pub expires_us: i64,
    /// the todo's conversation (None: tenant-wide)
    pub conversation: Option<String>,
}

fn granted(sql: &str, args: &[DatumWithOid<'_>]) -> Option<Granted> {
    with_plan(sql, args, true, |n| super::rows(n.min(1), granted_at).pop().flatten())
}

/// The claim a row of `CLAIM_RETURNING`'s columns shows (None: they are NULL, nothing granted).
fn granted_at(r: &super::Tuple<'_>) -> Option<Granted> {
    Some(Granted {
        id: r.int(1)?,
        subject: r.text(2).unwrap_or_default().to_string(),
        fence: r.int(3).unwrap_or_default(),
        expires_us: r.stamp(4).unwrap_or_default(),
        conversation: r.text(5).map(str::to_string),
    })
}

/// What a claim sets, for `todo.todos u`: `$3` the agent, `$4` the lease in seconds; and what
/// it returns (`granted`).
const CLAIM_SET: &str = "SET status = 'in_progress', claimed_by = $3, fence = u.fence + 1,
                lease_expires_at = now() + make_interval(secs => $4)";
const CLAIM_RETURNING: &str = "RETURNING u.id, u.subject, u.fence, u.lease_expires_at, u.conversation_id";

/// How many ready todos a claim of `want` todos considers at first, and then (when too many
/// of them were locked by other claimers) at most, before it considers them all: 16 and 256
/// for one todo; for a batch twice as many as it wants (rounded up to a power of two, so that
/// few statements are planned), then 16 times that. Each candidate is read twice (found, then
/// locked and rechecked): a batch of 10 that considered 256 spent two thirds of its statement
/// on them.
fn candidates(want: i64) -> [Option<i64>; 3] {
    let twice = u64::try_from(want.max(1)).unwrap_or(1).saturating_mul(2).next_power_of_two();
    let first = i64::try_from(twice).unwrap_or(i64::MAX).max(16);
    [Some(first), Some(first.saturating_mul(16)), None]
}

/// Claims the first ready todo in scope for `agent` with a lease of `lease_s` seconds (see
/// `claim_ready`). None when nothing is ready.
pub fn claim_next(tenant: &str, conversation: Option<&str>, agent: &str, lease_s: i64) -> Option<Granted> {
    claim_ready(tenant, conversation, agent, lease_s, 1).pop()
}

/// Claims the first `want` ready todos in scope for `agent`, each with a lease of `lease_s`
/// seconds, in claim order: the candidate rows are locked with SKIP LOCKED (a row another
/// claimer is taking is passed over, never waited for or taken twice), then moved to
/// in_progress with a new fence. Fewer (none) when fewer are ready.
///
/// The candidates are the first ready todos in claim order (`read::first_ready`: index scans
/// that stop at `candidates(want)`), so a claim costs the same on a list of 50 and of
/// 500,000; only when other claimers locked too many of them does it look further. On one
/// server, one statement per try (an UPDATE of the rows its subquery locks, beside the number
/// of candidates it had); on a distributed store two, each on one tenant (so Citus sends each
/// to the tenant's worker; it plans no FOR UPDATE inside a CTE or a subquery of an UPDATE).
pub fn claim_ready(tenant: &str, conversation: Option<&str>, agent: &str, lease_s: i64, want: i64) -> Vec<Granted> {
    let distributed = super::distribution::distributed();
    let who = Claimant { tenant, conversation, agent, lease_s };
    let mut got: Vec<Granted> = Vec::new();
    for limit in candidates(want) {
        let rest = want - got.len() as i64;
        let (mut granted, candidates) =
            if distributed { claim_distributed(&who, limit, rest) } else { claim_in_one_statement(&who, limit, rest) };
        got.append(&mut granted);
        match limit {
            _ if got.len() as i64 >= want => break,
            // fewer candidates than the limit: there is nothing more to look at
            Some(limit) if candidates >= limit => continue,
            _ => break,
        }
    }
    got
}

/// Who claims what: the tenant, the list in scope (None: the pool alone), the agent and the
/// lease in seconds.
struct Claimant<'a> {
    tenant: &'a str,
    conversation: Option<&'a str>,
    agent: &'a str,
    lease_s: i64,
}

impl Claimant<'_> {
    /// `$1` to `$4` of a claim statement: tenant, list, agent, lease.
    fn args(&self) -> [DatumWithOid<'_>; 4] {
        [self.tenant.into(), self.conversation.into(), self.agent.into(), (self.lease_s as f64).into()]
    }
}

/// One try of `claim_ready` on one server: up to `rest` of the first `limit` ready todos,
/// locked and claimed in one statement, in claim order; and how many candidates there were.
fn claim_in_one_statement(who: &Claimant<'_>, limit: Option<i64>, rest: i64) -> (Vec<Granted>, i64) {
    let (flags, candidates) = ready_candidates(who.tenant, limit);
    let sql = format!(
        "WITH {flags} c AS MATERIALIZED (SELECT {candidates} AS ids),
              g AS (UPDATE todo.todos u {CLAIM_SET}
                     WHERE u.tenant_id = $1
                       AND u.id = ANY(ARRAY(SELECT t.id FROM todo.todos t
                                     WHERE {CLAIMABLE} AND t.id = ANY((SELECT c.ids FROM c)::bigint[])
                                     ORDER BY {CLAIM_ORDER} LIMIT $5 FOR UPDATE OF t SKIP LOCKED))
                     {CLAIM_RETURNING})
         SELECT g.*, cardinality(c.ids)::bigint, array_position(c.ids, g.id)::bigint FROM c LEFT JOIN g ON true"
    );
    let [a, b, c, d] = who.args();
    let args = [a, b, c, d, rest.into()];
    let mut candidates = 0;
    let mut granted: Vec<(i64, Granted)> = with_plan(&sql, &args, true, |n| {
        super::rows(n, |r| {
            candidates = r.int(6).unwrap_or_default();
            granted_at(r).map(|g| (r.int(7).unwrap_or_default(), g))
        })
    })
    .into_iter()
    .flatten()
    .collect();
    granted.sort_by_key(|(at, _)| *at);
    (granted.into_iter().map(|(_, g)| g).collect(), candidates)
}

/// One try of `claim_ready` on a distributed store: the first `limit` ready todos, then up
/// to `rest` of them locked (SKIP LOCKED) and claimed one by one, in claim order; and how
/// many candidates there were.
fn claim_distributed(who: &Claimant<'_>, limit: Option<i64>, rest: i64) -> (Vec<Granted>, i64) {
    let Claimant { tenant, conversation, agent, lease_s } = *who;
    let (flags, candidates) = ready_candidates(tenant, limit);
    let flags = flags.strip_suffix(',').map(|f| format!("WITH {f}")).unwrap_or_default();
    let ids: Vec<i64> =
        one(&format!("{flags} SELECT {candidates}"), &[tenant.into(), conversation.into()], false).unwrap_or_default();
    if ids.is_empty() {
        return (Vec::new(), 0);
    }
    let lock = format!(
        "SELECT t.id FROM todo.todos t WHERE {CLAIMABLE} AND t.id = ANY($3)
          ORDER BY {CLAIM_ORDER} LIMIT $4 FOR UPDATE OF t SKIP LOCKED"
    );
    let args = [tenant.into(), conversation.into(), ids.clone().into(), rest.into()];
    let locked: Vec<i64> = with_plan(&lock, &args, true, |n| super::rows(n, |r| r.int(1).unwrap_or_default()));
    let granted = locked.into_iter().map(|id| claim_id(tenant, id, agent, lease_s)).collect();
    (granted, ids.len() as i64)
}

/// Claims todo `id` (locked and checked by the caller) for `agent`.
pub fn claim_id(tenant: &str, id: i64, agent: &str, lease_s: i64) -> Granted {
    granted(
        &format!("UPDATE todo.todos u {CLAIM_SET} WHERE u.tenant_id = $1 AND u.id = $2 {CLAIM_RETURNING}"),
        &[tenant.into(), id.into(), agent.into(), (lease_s as f64).into()],
    )
    .expect("the row is locked by the caller")
}

/// Takes the claim on todo `id` (locked and checked by the caller) back from its holder: clears
/// it, then moves an in-progress todo back to pending. Two statements, since the row trigger
/// lets a plain update clear a claim but refuses a change of status under another agent's
/// live claim: once it is cleared, the status is anyone's to change.
pub fn take_back(tenant: &str, id: i64) {
    exec(
        "UPDATE todo.todos u SET claimed_by = NULL, lease_expires_at = NULL
          WHERE u.tenant_id = $1 AND u.id = $2 RETURNING u.id",
        &[tenant.into(), id.into()],
    );
    exec(
        "UPDATE todo.todos u SET status = 'pending'
          WHERE u.tenant_id = $1 AND u.id = $2 AND u.status = 'in_progress' RETURNING u.id",
        &[tenant.into(), id.into()],
    );
}

/// Extends the lease of todo `id` (locked and checked by the caller) to `lease_s` seconds
/// from now; the new end, in epoch microseconds.
pub fn renew(tenant: &str, id: i64, lease_s: i64) -> i64 {
    one::<TimestampWithTimeZone>(
        "UPDATE todo.todos u SET lease_expires_at = now() + make_interval(secs => $3)
          WHERE u.tenant_id = $1 AND u.id = $2 RETURNING u.lease_expires_at",
        &[tenant.into(), id.into(), (lease_s as f64).into()],
        true,
    )
    .map(time::unix_us)
    .expect("the row is locked by the caller")
}
