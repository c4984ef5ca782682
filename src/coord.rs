//! Multi-agent coordination (issue #7): claims with leases and fencing, dependencies, the
//! ready queue and subtasks. The operations here are shared by every surface (the SQL
//! functions below, the writ's `/todo claim …` verbs, the `claim_todo` … tools); the rules
//! are in `claims` (pure), the SQL in `store`. Each operation locks the rows it decides on
//! before deciding, so two agents never both win.
//!
//! Scope is the writ's: the conversation in context plus the tenant-wide pool (no
//! conversation: the pool). The acting agent is `todo.agent`.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;

use crate::claims::{self, EdgeError, Need, Refusal};
use crate::status::{self, Status};
use crate::store::{self, Granted};
use crate::writ::render::Row;
use crate::{context, errors};

/// Why an operation did nothing.
#[derive(Debug)]
pub enum Why {
    Refused(Refusal),
    Edge(EdgeError),
    /// no todo with this id in scope (or in the tenant)
    NotFound(i64),
    /// the lifecycle forbids the change of status
    Transition(i64, status::Forbidden),
}

impl From<Refusal> for Why {
    fn from(r: Refusal) -> Why {
        Why::Refused(r)
    }
}

impl Why {
    /// The tool dialect's error code.
    pub fn code(&self) -> &'static str {
        match self {
            Why::Refused(Refusal::HeldBy { .. }) => "claimed",
            Why::Refused(Refusal::Expired { .. } | Refusal::Superseded { .. } | Refusal::NotClaimed { .. }) => "stale_claim",
            Why::Refused(Refusal::Blocked { .. }) => "blocked",
            Why::Refused(Refusal::NotOpen { .. }) | Why::Transition(..) => "not_open",
            Why::Refused(Refusal::NoAgent) => "no_agent",
            Why::Refused(Refusal::BadLease { .. }) => "invalid_arguments",
            Why::Edge(EdgeError::Cycle { .. }) => "cycle",
            Why::Edge(EdgeError::SelfLoop(_)) => "invalid_arguments",
            Why::NotFound(_) => "not_found",
        }
    }

    pub fn message(&self) -> String {
        match self {
            Why::Refused(r) => r.to_string(),
            Why::Edge(e) => e.to_string(),
            Why::NotFound(id) => format!("no todo #{id} in scope"),
            Why::Transition(id, f) => format!("todo #{id}: {f}"),
        }
    }

    /// Raises it as an SQL error with its SQLSTATE: 55P03 held by another agent; 55000 stale
    /// claim, blocked, not open, forbidden transition; 22023 no agent, bad lease, cycle, self
    /// loop; P0002 no such todo.
    pub fn raise(self) -> ! {
        let (code, hint) = match &self {
            Why::Refused(r) => (
                match r.sqlstate() {
                    "55P03" => PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE,
                    "22023" => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                    _ => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                },
                r.hint(),
            ),
            Why::Edge(_) => (PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, "todo.dependencies lists the edges".into()),
            Why::NotFound(_) => (
                PgSqlErrorCode::ERRCODE_NO_DATA_FOUND,
                "ids are per tenant; the todo must be in the conversation in context or tenant-wide".into(),
            ),
            Why::Transition(_, f) => (PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, f.hint().to_string()),
        };
        errors::raise(code, self.message(), hint)
    }
}

/// Unix microseconds of the transaction's start: the `now()` every lease is measured by.
pub fn now_us() -> i64 {
    // SAFETY: reads the current transaction's start time.
    let raw = unsafe { pg_sys::GetCurrentTransactionStartTimestamp() };
    raw + POSTGRES_EPOCH_US
}

/// 2000-01-01 in Unix microseconds: PostgreSQL's timestamp epoch.
const POSTGRES_EPOCH_US: i64 = 946_684_800_000_000;

/// A timestamptz in Unix microseconds.
pub fn unix_us(t: TimestampWithTimeZone) -> i64 {
    pg_sys::TimestampTz::from(t) + POSTGRES_EPOCH_US
}

fn timestamptz(unix_us: i64) -> TimestampWithTimeZone {
    TimestampWithTimeZone::try_from(unix_us - POSTGRES_EPOCH_US).unwrap_or_else(|_| {
        errors::raise(PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW, "lease end out of range", "")
    })
}

thread_local! {
    /// Set while this backend's own claim, heartbeat or release statements run: the row
    /// trigger lets a claim be set or renewed only then (never by a plain UPDATE).
    static GRANTING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the statement writing the row is one of `coord`'s claim statements.
pub fn granting() -> bool {
    GRANTING.with(|g| g.get())
}

/// Runs a claim statement with `granting()` true (false again after it, even on an error).
fn grant<T>(f: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            GRANTING.with(|g| g.set(false));
        }
    }
    GRANTING.with(|g| g.set(true));
    let _reset = Reset;
    f()
}

fn agent() -> Result<String, Why> {
    context::agent().ok_or(Why::Refused(Refusal::NoAgent))
}

fn lease(requested: Option<i64>) -> Result<i64, Why> {
    let (default, max) = context::leases();
    Ok(claims::lease_seconds(requested, default, max)?)
}

/// A claim granted, with the lease it was granted for.
pub struct Claimed {
    pub granted: Granted,
    pub lease_s: i64,
}

/// Claims todo `id`, or (None) the first ready todo in scope, for the agent in context.
/// `Ok(None)`: nothing is ready.
pub fn claim(tenant: &str, conv: Option<&str>, id: Option<i64>, lease_s: Option<i64>) -> Result<Option<Claimed>, Why> {
    let agent = agent()?;
    let lease_s = lease(lease_s)?;
    store::begin_write();
    let granted = match id {
        None => grant(|| store::claim_next(tenant, conv, &agent, lease_s)),
        Some(id) => {
            let (state, _) = store::lock_claim_state(tenant, conv, id).ok_or(Why::NotFound(id))?;
            claims::check_claim(&state, &agent, &store::blockers(tenant, id), now_us())?;
            Some(grant(|| store::claim_id(tenant, id, &agent, lease_s)))
        }
    };
    Ok(granted.map(|granted| Claimed { granted, lease_s }))
}

/// Extends the agent's live claim on `id`: the fence and the new lease.
pub fn heartbeat(tenant: &str, conv: Option<&str>, id: i64, fence: Option<i64>, lease_s: Option<i64>) -> Result<Claimed, Why> {
    let agent = agent()?;
    let lease_s = lease(lease_s)?;
    store::begin_write();
    let (state, subject) = store::lock_claim_state(tenant, conv, id).ok_or(Why::NotFound(id))?;
    claims::check(&state, Some(&agent), fence, Need::Holder, now_us())?;
    let expires_us = grant(|| store::renew(tenant, id, lease_s));
    Ok(Claimed { granted: Granted { id, subject, fence: state.fence, expires_us }, lease_s })
}

/// Gives the agent's live claim on `id` back: the todo returns to pending, unclaimed. Its
/// subject.
pub fn release(tenant: &str, conv: Option<&str>, id: i64, fence: Option<i64>) -> Result<String, Why> {
    let agent = agent()?;
    store::begin_write();
    let (state, subject) = store::lock_claim_state(tenant, conv, id).ok_or(Why::NotFound(id))?;
    claims::check(&state, Some(&agent), fence, Need::Holder, now_us())?;
    store::set_status(tenant, id, Status::Pending);
    Ok(subject)
}

/// Completes or cancels `id` with an optional outcome, as the holder of fence `fence` when
/// given (else as the agent in context: see `claims::check`). Its subject.
pub fn finish(tenant: &str, conv: Option<&str>, id: i64, fence: Option<i64>, to: Status, outcome: Option<&str>) -> Result<String, Why> {
    store::begin_write();
    let (state, subject) = store::lock_claim_state(tenant, conv, id).ok_or(Why::NotFound(id))?;
    claims::check(&state, context::agent().as_deref(), fence, Need::Status, now_us())?;
    if state.status.is_terminal() {
        // finished already (by whoever took over): never overwrite its outcome
        return Err(Why::Refused(Refusal::NotOpen { id, status: state.status }));
    }
    let mut fields = serde_json::Map::new();
    fields.insert("status".into(), to.as_str().into());
    if let Some(o) = outcome {
        fields.insert("outcome".into(), o.into());
    }
    store::update(tenant, id, &fields);
    Ok(subject)
}

/// Makes `id` wait for `on` (both in scope). `Ok(false)`: it already did. Refuses a todo
/// waiting for itself and any edge that would close a cycle; a per-tenant lock makes the
/// check and the insert one step, so concurrent blocks cannot build a cycle between them.
pub fn block(tenant: &str, conv: Option<&str>, id: i64, on: i64) -> Result<bool, Why> {
    store::begin_write();
    for t in [id, on] {
        store::find_in_scope(tenant, conv, t).ok_or(Why::NotFound(t))?;
    }
    if id == on {
        return Err(Why::Edge(EdgeError::SelfLoop(id)));
    }
    store::lock_dependencies(tenant);
    if let Some(path) = store::dependency_path(tenant, on, id) {
        return Err(Why::Edge(EdgeError::Cycle { id, on, path }));
    }
    Ok(store::add_dependency(tenant, id, on))
}

/// Removes "`id` waits for `on`". `Ok(false)`: it did not.
pub fn unblock(tenant: &str, conv: Option<&str>, id: i64, on: i64) -> Result<bool, Why> {
    store::begin_write();
    for t in [id, on] {
        store::find_in_scope(tenant, conv, t).ok_or(Why::NotFound(t))?;
    }
    Ok(store::remove_dependency(tenant, id, on))
}

/// Adds a subtask of `parent` (in scope) to the conversation in context; its id.
pub fn add_subtask(
    tenant: &str,
    conv: Option<&str>,
    reserved: Option<i64>,
    parent: i64,
    subject: &str,
    description: Option<&str>,
) -> Result<i64, Why> {
    store::begin_write();
    store::find_in_scope(tenant, conv, parent).ok_or(Why::NotFound(parent))?;
    Ok(store::insert_todo(tenant, reserved, conv, subject, description, Some(parent)))
}

// ---- the SQL surface ----

/// The tenant (registered) and conversation in context.
fn scope() -> (String, Option<String>) {
    let tenant = context::tenant();
    store::require_registered(&tenant);
    (tenant, context::conversation())
}

fn done<T>(r: Result<T, Why>) -> T {
    r.unwrap_or_else(|why| why.raise())
}

/// Claims a todo for the agent in context (`todo.agent`) and moves it to in_progress:
/// `todo_id`, or (NULL) the first ready todo in scope (see `todo.ready`), with a lease of
/// `lease_seconds` (NULL: `todo.lease_default`; at most `todo.lease_max`). Returns the todo,
/// the claim's fencing number and when the lease ends; no row when nothing is ready.
/// Concurrent claimers never get the same todo: the next ready row is taken with
/// `FOR UPDATE SKIP LOCKED`.
///
/// Errors: 22023 no tenant, no agent, or a lease out of range; 42704 tenant not registered;
/// P0002 no such todo in scope; 55P03 another agent holds a live claim on it; 55000 it is
/// finished or blocked by open todos.
#[pg_extern(volatile, parallel_unsafe, name = "claim")]
#[search_path(pg_catalog, todo, pg_temp)]
fn sql_claim(
    todo_id: default!(Option<i64>, "NULL"),
    lease_seconds: default!(Option<i32>, "NULL"),
) -> TableIterator<
    'static,
    (name!(id, i64), name!(subject, String), name!(fence, i64), name!(lease_expires_at, TimestampWithTimeZone)),
> {
    let (tenant, conv) = scope();
    let claimed = done(claim(&tenant, conv.as_deref(), todo_id, lease_seconds.map(i64::from)));
    let row = claimed.map(|c| {
        store::notify(&tenant, conv.as_deref(), &[c.granted.id]);
        (c.granted.id, c.granted.subject, c.granted.fence, timestamptz(c.granted.expires_us))
    });
    TableIterator::new(row)
}

/// Extends the lease of a todo the agent in context holds, to `lease_seconds` from now
/// (NULL: `todo.lease_default`). With `fence`, that claim must be the todo's current one.
/// Returns when the lease now ends.
///
/// Errors: 22023 no tenant, no agent, or a lease out of range; P0002 no such todo in scope;
/// 55P03 another agent holds it; 55000 the claim lapsed, was superseded (a newer fence) or
/// is not the agent's.
#[pg_extern(volatile, parallel_unsafe, name = "heartbeat")]
#[search_path(pg_catalog, todo, pg_temp)]
fn sql_heartbeat(
    todo_id: i64,
    fence: default!(Option<i64>, "NULL"),
    lease_seconds: default!(Option<i32>, "NULL"),
) -> TimestampWithTimeZone {
    let (tenant, conv) = scope();
    let c = done(heartbeat(&tenant, conv.as_deref(), todo_id, fence, lease_seconds.map(i64::from)));
    timestamptz(c.granted.expires_us)
}

/// Gives back a todo the agent in context holds (with `fence`: that claim): it returns to
/// pending, unclaimed, ready for the next claimer.
///
/// Errors: as `todo.heartbeat`.
#[pg_extern(volatile, parallel_unsafe, name = "release")]
#[search_path(pg_catalog, todo, pg_temp)]
fn sql_release(todo_id: i64, fence: default!(Option<i64>, "NULL")) {
    let (tenant, conv) = scope();
    done(release(&tenant, conv.as_deref(), todo_id, fence));
    store::notify(&tenant, conv.as_deref(), &[todo_id]);
}

/// Completes (or, with `status => 'canceled'`, cancels) a todo, recording `outcome`. With
/// `fence`, the agent in context must hold that claim, live; without, a todo under another
/// agent's live claim is refused, and so is one whose own lapsed claim the agent presents.
///
/// Errors: 22023 no tenant, or a status other than completed/canceled; P0002 no such todo in
/// scope; 55P03 another agent holds it; 55000 a stale claim or a forbidden transition.
#[pg_extern(volatile, parallel_unsafe, name = "finish")]
#[search_path(pg_catalog, todo, pg_temp)]
fn sql_finish(
    todo_id: i64,
    fence: default!(Option<i64>, "NULL"),
    status: default!(&str, "'completed'"),
    outcome: default!(Option<&str>, "NULL"),
) {
    let to = match Status::parse(status) {
        Some(s) if s.is_terminal() => s,
        _ => errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("todo.finish: status must be completed or canceled, not \"{status}\""),
            "use todo.release to give a todo back, todo.todo_writ('/todo reopen <id>') to reopen one",
        ),
    };
    let (tenant, conv) = scope();
    done(finish(&tenant, conv.as_deref(), todo_id, fence, to, outcome));
    store::notify(&tenant, conv.as_deref(), &[todo_id]);
}

/// Makes `todo_id` wait for `on_id`: it is not ready while `on_id` is open. Both must be in
/// scope. Returns false when it already waited for it.
///
/// Errors: 22023 no tenant, a todo waiting for itself, or an edge that would close a cycle
/// (the message shows the path); P0002 either todo not in scope.
#[pg_extern(volatile, parallel_unsafe, name = "block")]
#[search_path(pg_catalog, todo, pg_temp)]
fn sql_block(todo_id: i64, on_id: i64) -> bool {
    let (tenant, conv) = scope();
    let added = done(block(&tenant, conv.as_deref(), todo_id, on_id));
    store::notify(&tenant, conv.as_deref(), &[todo_id]);
    added
}

/// Removes the wait of `todo_id` for `on_id`. Returns false when there was none.
///
/// Errors: 22023 no tenant; P0002 either todo not in scope.
#[pg_extern(volatile, parallel_unsafe, name = "unblock")]
#[search_path(pg_catalog, todo, pg_temp)]
fn sql_unblock(todo_id: i64, on_id: i64) -> bool {
    let (tenant, conv) = scope();
    let removed = done(unblock(&tenant, conv.as_deref(), todo_id, on_id));
    store::notify(&tenant, conv.as_deref(), &[todo_id]);
    removed
}

/// The ready queue: todos in scope that are open, not held by a live claim (pending, or in
/// progress under a lapsed one), not waiting for an open todo and without open subtasks, in
/// claim order (priority high, medium or unset, low; then position), at most `max_rows`.
///
/// Errors: 22023 no tenant; 42704 tenant not registered.
#[pg_extern(stable, parallel_restricted, name = "ready")]
#[search_path(pg_catalog, todo, pg_temp)]
fn sql_ready(
    max_rows: default!(i32, 50),
) -> TableIterator<'static, (name!(id, i64), name!(subject, String), name!(status, String), name!(tenant_wide, bool))> {
    let (tenant, conv) = scope();
    let rows: Vec<Row> = store::ready(&tenant, conv.as_deref(), i64::from(max_rows.max(0)));
    TableIterator::new(rows.into_iter().map(|r| (r.id, r.subject, r.status.as_str().to_string(), r.tenant_wide)))
}

extension_sql!(
    r#"
COMMENT ON FUNCTION todo.claim(bigint, integer) IS
    'Claims a todo (or the next ready one) for the agent in context, with a lease: (id, subject, fence, lease_expires_at); no row when nothing is ready.';
COMMENT ON FUNCTION todo.heartbeat(bigint, bigint, integer) IS
    'Renews the lease of a todo the agent in context holds; returns when it now ends.';
COMMENT ON FUNCTION todo.release(bigint, bigint) IS
    'Gives back a todo the agent in context holds: pending and unclaimed again.';
COMMENT ON FUNCTION todo.finish(bigint, bigint, text, text) IS
    'Completes or cancels a todo; refused under another agent''s live claim or a stale fence.';
COMMENT ON FUNCTION todo.block(bigint, bigint) IS
    'Makes the first todo wait for the second while it is open; refuses cycles.';
COMMENT ON FUNCTION todo.unblock(bigint, bigint) IS
    'Removes the wait of the first todo for the second.';
COMMENT ON FUNCTION todo.ready(integer) IS
    'The ready queue: open, unclaimed, unblocked todos in scope without open subtasks, in claim order.';
"#,
    name = "coord_comments",
    requires = [sql_claim, sql_heartbeat, sql_release, sql_finish, sql_block, sql_unblock, sql_ready]
);
