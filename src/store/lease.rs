//! Claim statements: claim-next (one statement, SKIP LOCKED), claim by id and renewing a
//! lease. The rules are in `claims`; the operations in `ops::claiming` lock and check first.

use pgrx::datum::DatumWithOid;

use super::read::{CLAIM_ORDER, READY};
use pgrx::datum::TimestampWithTimeZone;

use super::{one, with_plan};
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
    with_plan(sql, args, true, |n| {
        super::rows(n.min(1), |r| Granted {
            id: r.int(1).unwrap_or_default(),
            subject: r.text(2).unwrap_or_default().to_string(),
            fence: r.int(3).unwrap_or_default(),
            expires_us: r.stamp(4).unwrap_or_default(),
            conversation: r.text(5).map(str::to_string),
        })
        .pop()
    })
}

/// What a claim sets, for `todo.todos u`: `$3` the agent, `$4` the lease in seconds; and what
/// it returns (`granted`).
const CLAIM_SET: &str = "SET status = 'in_progress', claimed_by = $3, fence = u.fence + 1,
                lease_expires_at = now() + make_interval(secs => $4)";
const CLAIM_RETURNING: &str = "RETURNING u.id, u.subject, u.fence, u.lease_expires_at, u.conversation_id";

/// Claims the first ready todo in scope for `agent` with a lease of `lease_s` seconds: the
/// candidate row is locked with SKIP LOCKED (a row another claimer is taking is passed over,
/// never waited for or taken twice), then moved to in_progress with a new fence. None when
/// nothing is ready. On one server, one statement (an UPDATE of the row its subquery locks);
/// on a distributed store two, each on one tenant (so Citus sends each to the tenant's
/// worker; it plans no FOR UPDATE inside a CTE or a subquery of an UPDATE).
pub fn claim_next(tenant: &str, conversation: Option<&str>, agent: &str, lease_s: i64) -> Option<Granted> {
    let candidate = format!(
        "SELECT t.id FROM todo.todos t WHERE {READY} ORDER BY {CLAIM_ORDER} LIMIT 1 FOR UPDATE OF t SKIP LOCKED"
    );
    if super::distribution::distributed() {
        let id = one::<i64>(&candidate, &[tenant.into(), conversation.into()], true)?;
        return Some(claim_id(tenant, id, agent, lease_s));
    }
    granted(
        &format!("UPDATE todo.todos u {CLAIM_SET} WHERE u.tenant_id = $1 AND u.id = ({candidate}) {CLAIM_RETURNING}"),
        &[tenant.into(), conversation.into(), agent.into(), (lease_s as f64).into()],
    )
}

/// Claims todo `id` (locked and checked by the caller) for `agent`.
pub fn claim_id(tenant: &str, id: i64, agent: &str, lease_s: i64) -> Granted {
    granted(
        &format!("UPDATE todo.todos u {CLAIM_SET} WHERE u.tenant_id = $1 AND u.id = $2 {CLAIM_RETURNING}"),
        &[tenant.into(), id.into(), agent.into(), (lease_s as f64).into()],
    )
    .expect("the row is locked by the caller")
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
