//! Waiting claims (`todo.claim_waits`): a claim that keeps trying until its deadline, which
//! MCP answers as a task. The rows only; when to try again and what a try is belong to
//! `ops::waits`. Every statement names its tenant, and runs as the extension's owner: no
//! granted role reads or writes the table itself.

use pgrx::JsonB;
use serde_json::Value;

use super::{rows, with_plan};

/// A waiting claim as stored.
#[derive(Debug, Clone)]
pub struct Wait {
    /// its id (a UUID): MCP's taskId
    pub id: String,
    /// the list it claims from (None: the tenant-wide pool)
    pub conversation: Option<String>,
    /// the agent it claims for
    pub agent: String,
    /// the claim's arguments
    pub arguments: Value,
    /// `working`, `completed` or `cancelled`
    pub status: String,
    /// once completed: the claim's answer (MCP's CallToolResult)
    pub result: Option<Value>,
    pub created_us: i64,
    pub updated_us: i64,
    pub deadline_us: i64,
}

/// How long a wait is kept after it ended (or after its deadline, when no one asked since).
pub const KEPT_HOURS: i64 = 1;

/// The columns every statement returns, in `read`'s order.
macro_rules! returned {
    () => {
        "w.wait_id::text, w.conversation_id, w.agent, w.arguments, w.status, w.result, w.created_at, w.updated_at, w.deadline"
    };
}

const INSERT: &str = concat!(
    "INSERT INTO todo.claim_waits AS w (tenant_id, wait_id, conversation_id, agent, arguments, status, result, deadline)
     VALUES ($1, gen_random_uuid(), $2, $3, $4, $5, $6, now() + make_interval(secs => $7::float8))
     RETURNING ",
    returned!()
);

const LOCK: &str = concat!(
    "SELECT ",
    returned!(),
    " FROM todo.claim_waits w WHERE w.tenant_id = $1 AND w.wait_id = $2::uuid FOR UPDATE"
);

const END: &str = concat!(
    "UPDATE todo.claim_waits w SET status = $3, result = $4, updated_at = now()
      WHERE w.tenant_id = $1 AND w.wait_id = $2::uuid RETURNING ",
    returned!()
);

const WORKING: &str =
    "SELECT count(*) FROM todo.claim_waits w WHERE w.tenant_id = $1 AND w.agent = $2 AND w.status = 'working'";

/// At most 100 of a tenant's waits that ended (or whose deadline passed) over an hour ago.
const PURGE: &str = "DELETE FROM todo.claim_waits d WHERE d.tenant_id = $1 AND d.wait_id IN (
    SELECT w.wait_id FROM todo.claim_waits w
     WHERE w.tenant_id = $1 AND w.updated_at < now() - make_interval(hours => $2::int)
       AND (w.status <> 'working' OR w.deadline < now() - make_interval(hours => $2::int))
     LIMIT 100)";

/// The waits of the statement just run.
fn read(n: usize) -> Vec<Wait> {
    rows(n, |r| Wait {
        id: r.text(1).unwrap_or_default().to_string(),
        conversation: r.text(2).map(str::to_string),
        agent: r.text(3).unwrap_or_default().to_string(),
        arguments: r.get::<JsonB>(4).map_or(Value::Null, |j| j.0),
        status: r.text(5).unwrap_or_default().to_string(),
        result: r.get::<JsonB>(6).map(|j| j.0),
        created_us: r.stamp(7).unwrap_or_default(),
        updated_us: r.stamp(8).unwrap_or_default(),
        deadline_us: r.stamp(9).unwrap_or_default(),
    })
}

/// Whether `id` is written as a UUID is (a cast of anything else would raise): 36
/// characters, hex digits and four dashes where they go.
pub fn is_uuid(id: &str) -> bool {
    id.len() == 36
        && id.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Stores a new wait of `tenant` with its deadline `wait_s` seconds from now.
pub fn insert(
    tenant: &str,
    conversation: Option<&str>,
    agent: &str,
    arguments: &Value,
    wait_s: i64,
    ended: Option<&Value>,
) -> Wait {
    let status = if ended.is_some() { "completed" } else { "working" };
    super::roles::as_owner(|| {
        let args = [
            tenant.into(),
            conversation.into(),
            agent.into(),
            JsonB(arguments.clone()).into(),
            status.into(),
            ended.map(|r| JsonB(r.clone())).into(),
            (wait_s as f64).into(),
        ];
        with_plan(INSERT, &args, true, read).remove(0)
    })
}

/// The wait `id` of `tenant`, locked until the transaction ends (None: no such wait).
pub fn lock(tenant: &str, id: &str) -> Option<Wait> {
    if !is_uuid(id) {
        return None;
    }
    super::roles::as_owner(|| with_plan(LOCK, &[tenant.into(), id.into()], true, read).into_iter().next())
}

/// Ends the wait `id` of `tenant` (locked): `completed` with its result, or `cancelled`.
pub fn end(tenant: &str, id: &str, result: Option<&Value>) -> Wait {
    let status = if result.is_some() { "completed" } else { "cancelled" };
    super::roles::as_owner(|| {
        let args = [tenant.into(), id.into(), status.into(), result.map(|r| JsonB(r.clone())).into()];
        with_plan(END, &args, true, read).remove(0)
    })
}

/// How many waits of `agent` in `tenant` are still trying.
pub fn working(tenant: &str, agent: &str) -> i64 {
    super::roles::as_owner(|| super::one::<i64>(WORKING, &[tenant.into(), agent.into()], false).unwrap_or(0))
}

/// Removes up to 100 of `tenant`'s waits that ended over `KEPT_HOURS` ago.
pub fn purge(tenant: &str) {
    super::roles::as_owner(|| super::exec(PURGE, &[tenant.into(), (KEPT_HOURS as i32).into()]));
}
