//! Claim statements: claim-next (one statement, SKIP LOCKED), claim by id and renewing a
//! lease. The rules are in `claims`; the operations in `ops::claiming` lock and check first.

use pgrx::datum::DatumWithOid;

use super::read::{first_ready, BLOCK_FLAGS, CLAIMABLE, CLAIM_ORDER};
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

/// How many ready todos a claim considers at first, and then (when every one of them was
/// locked by other claimers) at most, before it considers them all.
const CANDIDATES: [Option<i64>; 3] = [Some(16), Some(256), None];

/// Claims the first ready todo in scope for `agent` with a lease of `lease_s` seconds: the
/// candidate row is locked with SKIP LOCKED (a row another claimer is taking is passed over,
/// never waited for or taken twice), then moved to in_progress with a new fence. None when
/// nothing is ready.
///
/// The candidates are the first 16 ready todos in claim order (`read::first_ready`: index
/// scans that stop there), so a claim costs the same on a list of 50 and of 500,000; only
/// when all 16 are locked by other claimers does it look further (256, then all). On one
/// server, one statement per try (an UPDATE of the row its subquery locks, beside the number
/// of candidates it had); on a distributed store two, each on one tenant (so Citus sends each
/// to the tenant's worker; it plans no FOR UPDATE inside a CTE or a subquery of an UPDATE).
pub fn claim_next(tenant: &str, conversation: Option<&str>, agent: &str, lease_s: i64) -> Option<Granted> {
    let distributed = super::distribution::distributed();
    for limit in CANDIDATES {
        let (granted, candidates) = if distributed {
            let ids: Vec<i64> = one(
                &format!("WITH {BLOCK_FLAGS} SELECT {}", first_ready(limit)),
                &[tenant.into(), conversation.into()],
                false,
            )
            .unwrap_or_default();
            let lock = format!(
                "SELECT t.id FROM todo.todos t WHERE {CLAIMABLE} AND t.id = ANY($3)
                  ORDER BY {CLAIM_ORDER} LIMIT 1 FOR UPDATE OF t SKIP LOCKED"
            );
            let id = if ids.is_empty() {
                None
            } else {
                one::<i64>(&lock, &[tenant.into(), conversation.into(), ids.clone().into()], true)
            };
            let candidates = ids.len() as i64;
            (id.map(|id| claim_id(tenant, id, agent, lease_s)), candidates)
        } else {
            let sql = format!(
                "WITH {BLOCK_FLAGS}, c AS MATERIALIZED (SELECT {} AS ids),
                      g AS (UPDATE todo.todos u {CLAIM_SET}
                             WHERE u.tenant_id = $1
                               AND u.id = (SELECT t.id FROM todo.todos t
                                            WHERE {CLAIMABLE} AND t.id = ANY((SELECT c.ids FROM c)::bigint[])
                                            ORDER BY {CLAIM_ORDER} LIMIT 1 FOR UPDATE OF t SKIP LOCKED)
                             {CLAIM_RETURNING})
                 SELECT g.*, cardinality(c.ids)::bigint FROM c LEFT JOIN g ON true",
                first_ready(limit)
            );
            with_plan(&sql, &[tenant.into(), conversation.into(), agent.into(), (lease_s as f64).into()], true, |n| {
                super::rows(n.min(1), |r| (granted_at(r), r.int(6).unwrap_or_default())).pop().unwrap_or((None, 0))
            })
        };
        match (granted, limit) {
            (Some(g), _) => return Some(g),
            // fewer candidates than the limit: there is nothing more to look at
            (None, Some(limit)) if candidates >= limit => continue,
            (None, _) => return None,
        }
    }
    None
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
