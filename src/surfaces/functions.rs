//! The coordination operations as SQL functions: `todo.claim`, `todo.heartbeat`,
//! `todo.release`, `todo.finish`, `todo.block`, `todo.unblock`, `todo.ready`. Each is one
//! operation (`ops::claiming`, `ops::dependencies`); its error is raised with its SQLSTATE
//! (`error::Error::sqlstate`). Scope is the writ's: the conversation in context plus the
//! tenant-wide pool (no conversation: the pool). The acting agent is `todo.agent`.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;

use crate::error::Error;
use crate::ops::{self, claiming, dependencies, Scope};
use crate::status::Status;
use crate::writ::render::Row;
use crate::{errors, runner, time};

/// An operation's outcome, or its error raised with its SQLSTATE.
fn done<T>(r: Result<T, Error>) -> T {
    r.unwrap_or_else(|e| errors::raise_error(&e))
}

/// Claims a todo for the agent in context (`todo.agent`) and moves it to in_progress:
/// `todo_id`, or (NULL) the first ready todo in scope (see `todo.ready`), with a lease of
/// `lease_seconds` (NULL: `todo.lease_default`; at most `todo.lease_max`). Returns the todo,
/// the claim's fencing number and when the lease ends; no row when nothing is ready.
/// Concurrent claimers never get the same todo: the next ready row is taken with
/// `FOR UPDATE SKIP LOCKED`.
///
/// Errors: 22023 no tenant, no agent, or a lease out of range; 42704 tenant not registered;
/// P0002 no such todo in scope; 55006 another agent holds a live claim on it; 55000 it is
/// finished or blocked by open todos.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn claim(
    todo_id: default!(Option<i64>, "NULL"),
    lease_seconds: default!(Option<i32>, "NULL"),
) -> TableIterator<
    'static,
    (name!(id, i64), name!(subject, String), name!(fence, i64), name!(lease_expires_at, TimestampWithTimeZone)),
> {
    runner::call(|| {
        let claimed = done(claiming::claim(&Scope::from_context(), todo_id, lease_seconds.map(i64::from)));
        let row = claimed
            .map(|c| (c.granted.id, c.granted.subject, c.granted.fence, time::timestamptz(c.granted.expires_us)));
        TableIterator::new(row)
    })
}

/// Claims up to `quantity` ready todos at once for the agent in context (`todo.agent`), each
/// moved to in_progress with the same lease (`lease_seconds`, as `todo.claim`'s): the first
/// ready todos in scope, in claim order, as `todo.claim` would take them one by one. Fewer
/// rows when fewer are ready; none when nothing is. Concurrent batches never share a todo
/// (`FOR UPDATE SKIP LOCKED`). Finish them with `todo.finish_batch`.
///
/// Errors: 22023 no tenant, no agent, a lease out of range, or a quantity below 1 or over
/// `todo.max_read_todos`; 22004 quantity NULL; 42704 tenant not registered.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn claim_batch(
    quantity: Option<i32>,
    lease_seconds: default!(Option<i32>, "NULL"),
) -> TableIterator<
    'static,
    (name!(id, i64), name!(subject, String), name!(fence, i64), name!(lease_expires_at, TimestampWithTimeZone)),
> {
    let quantity = errors::required(quantity, "todo.claim_batch: quantity");
    runner::call(|| {
        let claimed =
            done(claiming::claim_batch(&Scope::from_context(), i64::from(quantity), lease_seconds.map(i64::from)));
        let rows: Vec<_> = claimed
            .into_iter()
            .map(|c| (c.granted.id, c.granted.subject, c.granted.fence, time::timestamptz(c.granted.expires_us)))
            .collect();
        TableIterator::new(rows)
    })
}

/// Extends the lease of a todo the agent in context holds, to `lease_seconds` from now
/// (NULL: `todo.lease_default`). With `fence`, that claim must be the todo's current one.
/// Returns when the lease now ends.
///
/// Errors: 22023 no tenant, no agent, or a lease out of range; P0002 no such todo in scope;
/// 55006 another agent holds it; 55000 the claim lapsed, was superseded (a newer fence) or
/// is not the agent's.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn heartbeat(
    todo_id: Option<i64>,
    fence: default!(Option<i64>, "NULL"),
    lease_seconds: default!(Option<i32>, "NULL"),
) -> TimestampWithTimeZone {
    let todo_id = errors::required(todo_id, "todo.heartbeat: todo_id");
    runner::call(|| {
        let c = done(claiming::heartbeat(&Scope::from_context(), todo_id, fence, lease_seconds.map(i64::from)));
        time::timestamptz(c.granted.expires_us)
    })
}

/// Gives back a todo the agent in context holds (with `fence`: that claim): it returns to
/// pending, unclaimed, ready for the next claimer.
///
/// Errors: as `todo.heartbeat`.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn release(todo_id: Option<i64>, fence: default!(Option<i64>, "NULL")) {
    let todo_id = errors::required(todo_id, "todo.release: todo_id");
    runner::call(|| {
        done(claiming::release(&Scope::from_context(), todo_id, fence));
    })
}

/// Completes (or, with `status => 'canceled'`, cancels) a todo, recording `outcome`. With
/// `fence`, the agent in context must hold that claim, live; without, a todo under another
/// agent's live claim is refused, and so is one whose own lapsed claim the agent presents.
///
/// Errors: 22023 no tenant, or a status other than completed/canceled; P0002 no such todo in
/// scope; 55006 another agent holds it; 55000 a stale claim, or it is finished already.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn finish(
    todo_id: Option<i64>,
    fence: default!(Option<i64>, "NULL"),
    status: default!(Option<&str>, "'completed'"),
    outcome: default!(Option<&str>, "NULL"),
) {
    let todo_id = errors::required(todo_id, "todo.finish: todo_id");
    let status = errors::required(status, "todo.finish: status");
    let to = terminal(status, "todo.finish");
    runner::call(|| {
        done(claiming::finish(&Scope::from_context(), todo_id, fence, to, outcome));
    })
}

/// Completes (or, with `status => 'canceled'`, cancels) several todos at once, as
/// `todo.finish` does each: `fences[k]` is the claim `todo_ids[k]` must be under (NULL, or
/// no fences: as `todo.finish` without one), and `outcome` is recorded on each. All or
/// nothing: the first todo refused is the error, and none is finished. Returns how many it
/// finished.
///
/// Errors: as `todo.finish`, naming the todo refused; 22023 a todo named twice, more fences
/// than todos, or more todos than `todo.max_read_todos`; 22004 todo_ids, an id or status NULL.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn finish_batch(
    todo_ids: Option<Vec<Option<i64>>>,
    fences: default!(Option<Vec<Option<i64>>>, "NULL"),
    status: default!(Option<&str>, "'completed'"),
    outcome: default!(Option<&str>, "NULL"),
) -> i64 {
    let todo_ids = errors::required(todo_ids, "todo.finish_batch: todo_ids");
    let ids: Vec<i64> =
        todo_ids.into_iter().map(|id| errors::required(id, "todo.finish_batch: an id of todo_ids")).collect();
    let to = terminal(errors::required(status, "todo.finish_batch: status"), "todo.finish_batch");
    runner::call(|| {
        let fences = fences.unwrap_or_default();
        done(claiming::finish_batch(&Scope::from_context(), &ids, &fences, to, outcome)).len() as i64
    })
}

/// The finished status `status` names, or 22023 for `function`.
fn terminal(status: &str, function: &str) -> Status {
    match Status::parse(status) {
        Some(s) if s.is_terminal() => s,
        _ => errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("{function}: status must be completed or canceled, not \"{status}\""),
            "use todo.release to give a todo back, todo.todo_writ('/todo reopen <id>') to reopen one",
        ),
    }
}

/// Makes `todo_id` wait for `on_id`: it is not ready while `on_id` is open. Both must be in
/// scope. Returns false when it already waited for it.
///
/// Errors: 22004 a NULL argument; 22023 no tenant, a todo waiting for itself, or an edge that
/// would close a cycle (the message shows the path); P0002 either todo not in scope.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn block(todo_id: Option<i64>, on_id: Option<i64>) -> bool {
    let todo_id = errors::required(todo_id, "todo.block: todo_id");
    let on_id = errors::required(on_id, "todo.block: on_id");
    runner::call(|| done(dependencies::block(&Scope::from_context(), todo_id, on_id)))
}

/// Removes the wait of `todo_id` for `on_id`. Returns false when there was none.
///
/// Errors: 22004 a NULL argument; 22023 no tenant; P0002 either todo not in scope.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn unblock(todo_id: Option<i64>, on_id: Option<i64>) -> bool {
    let todo_id = errors::required(todo_id, "todo.unblock: todo_id");
    let on_id = errors::required(on_id, "todo.unblock: on_id");
    runner::call(|| done(dependencies::unblock(&Scope::from_context(), todo_id, on_id)))
}

/// The ready queue: todos in scope that are open, not held by a live claim (pending, or in
/// progress under a lapsed one), not waiting for an open todo and without open subtasks, in
/// claim order (priority high, medium or unset, low; then position), at most `max_rows`.
///
/// Errors: 22004 a NULL max_rows; 22023 no tenant; 42704 tenant not registered.
#[pg_extern(stable, parallel_restricted, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn ready(
    max_rows: default!(Option<i32>, 50),
) -> TableIterator<'static, (name!(id, i64), name!(subject, String), name!(status, String), name!(tenant_wide, bool))> {
    let max_rows = errors::required(max_rows, "todo.ready: max_rows");
    let rows: Vec<Row> = ops::ready(&Scope::from_context(), i64::from(max_rows.max(0)));
    TableIterator::new(rows.into_iter().map(|r| (r.id, r.subject, r.status.as_str().to_string(), r.tenant_wide)))
}

extension_sql!(
    r#"
COMMENT ON FUNCTION todo.claim(bigint, integer) IS
    'Claims a todo (or the next ready one) for the agent in context, with a lease: (id, subject, fence, lease_expires_at); no row when nothing is ready. Errors: 22023 no tenant or no agent in context, or a lease out of range; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 no such todo in scope; 55006 another agent holds a live claim on it; 55000 it is finished or blocked by open todos.';
COMMENT ON FUNCTION todo.heartbeat(bigint, bigint, integer) IS
    'Renews the lease of a todo the agent in context holds; returns when it now ends. Errors: 22004 a NULL todo_id; 22023 no tenant or no agent in context, or a lease out of range; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 no such todo in scope; 55006 another agent holds it; 55000 the claim lapsed, was superseded (a newer fence) or is not the agent''s.';
COMMENT ON FUNCTION todo.release(bigint, bigint) IS
    'Gives back a todo the agent in context holds: pending and unclaimed again. Errors: 22004 a NULL todo_id; 22023 no tenant or no agent in context; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 no such todo in scope; 55006 another agent holds it; 55000 the claim lapsed, was superseded (a newer fence) or is not the agent''s.';
COMMENT ON FUNCTION todo.finish(bigint, bigint, text, text) IS
    'Completes or cancels a todo; refused under another agent''s live claim or a stale fence. Errors: 22004 a NULL todo_id or status; 22023 no tenant or no agent in context, or a status other than completed or canceled; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 no such todo in scope; 55006 another agent holds it; 55000 a stale claim, or it is finished already.';
COMMENT ON FUNCTION todo.claim_batch(integer, integer) IS
    'Claims up to quantity ready todos at once for the agent in context, in claim order, each with the same lease: (id, subject, fence, lease_expires_at) for each; fewer rows when fewer are ready. Concurrent batches never share a todo. Errors: 22004 a NULL quantity; 22023 no tenant or no agent in context, a lease out of range, or a quantity below 1 or over todo.max_read_todos; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.finish_batch(bigint[], bigint[], text, text) IS
    'Completes or cancels several todos at once, each as todo.finish would (fences[k]: the claim todo_ids[k] must be under; NULL: none); all or nothing: the first refusal is the error and none is finished. Returns how many it finished. Errors: 22004 a NULL todo_ids, id or status; 22023 no tenant in context, a status other than completed or canceled, a todo named twice, more fences than todos, or more todos than todo.max_read_todos; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 a todo not in scope; 55006 another agent holds one; 55000 a stale claim, or one finished already (each message names its todo).';
COMMENT ON FUNCTION todo.block(bigint, bigint) IS
    'Makes the first todo wait for the second while it is open; false when it waited already. Errors: 22004 a NULL todo_id or on_id; 22023 no tenant in context, a todo waiting for itself, or an edge that would close a cycle (the message shows the path); 42501 a role bound to another tenant; 42704 tenant not registered; P0002 either todo not in scope; 0A000 in a REPEATABLE READ transaction.';
COMMENT ON FUNCTION todo.unblock(bigint, bigint) IS
    'Removes the wait of the first todo for the second; false when there was none. Errors: 22004 a NULL todo_id or on_id; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; P0002 either todo not in scope.';
COMMENT ON FUNCTION todo.ready(integer) IS
    'The ready queue: open, unclaimed, unblocked todos in scope without open subtasks, in claim order, at most max_rows. Errors: 22004 a NULL max_rows; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered.';
"#,
    name = "coord_comments",
    requires = [claim, claim_batch, heartbeat, release, finish, finish_batch, block, unblock, ready]
);

// Up to 0.10.0 these functions' Rust names began with `sql_`, and so did their C symbols,
// which the SQL of those versions names.
crate::surfaces::earlier_symbol!(sql_claim_wrapper, pg_finfo_sql_claim_wrapper => claim_wrapper);
crate::surfaces::earlier_symbol!(sql_heartbeat_wrapper, pg_finfo_sql_heartbeat_wrapper => heartbeat_wrapper);
crate::surfaces::earlier_symbol!(sql_release_wrapper, pg_finfo_sql_release_wrapper => release_wrapper);
crate::surfaces::earlier_symbol!(sql_finish_wrapper, pg_finfo_sql_finish_wrapper => finish_wrapper);
crate::surfaces::earlier_symbol!(sql_block_wrapper, pg_finfo_sql_block_wrapper => block_wrapper);
crate::surfaces::earlier_symbol!(sql_unblock_wrapper, pg_finfo_sql_unblock_wrapper => unblock_wrapper);
crate::surfaces::earlier_symbol!(sql_ready_wrapper, pg_finfo_sql_ready_wrapper => ready_wrapper);
