//! The dependency graph: paths through dependencies and subtasks (cycle checks), adding and
//! removing edges. `locks::lock_dependencies` serializes changes to one tenant's graph.

use std::cell::{Cell, RefCell};
use std::collections::hash_map::{Entry, HashMap};
use std::collections::VecDeque;

use pgrx::prelude::*;

use super::{exec, with_plan};
use crate::errors;

/// Every step out of the todos that todo `$2` waits for, directly or not (itself included),
/// for tenant `$1`, as (todo, next, kind): kind 0 when the todo depends on next, 1 when next
/// is its subtask (a parent is not ready while a subtask is open). Rows only when todo `$3`
/// is among them. The walk has set semantics: each todo reached is expanded once, however
/// many paths lead to it; the check for `$3` stops it as soon as `$3` is reached, and only
/// then are the steps of the rest read.
const REACHABLE_STEPS: &str = "WITH RECURSIVE walk(at) AS (
         SELECT $2::int8
         UNION
         SELECT n.next FROM walk w CROSS JOIN LATERAL (
             SELECT d.depends_on FROM todo.dependencies d WHERE d.tenant_id = $1 AND d.todo_id = w.at
             UNION ALL
             SELECT c.id FROM todo.todos c WHERE c.tenant_id = $1 AND c.parent_id = w.at) n(next))
     SELECT w.at, n.next, n.kind FROM walk w CROSS JOIN LATERAL (
         SELECT d.depends_on, 0 FROM todo.dependencies d WHERE d.tenant_id = $1 AND d.todo_id = w.at
         UNION ALL
         SELECT c.id, 1 FROM todo.todos c WHERE c.tenant_id = $1 AND c.parent_id = w.at) n(next, kind)
      WHERE EXISTS (SELECT 1 FROM walk WHERE at = $3)";

thread_local! {
    /// How many searches `dependency_path` made in this backend (what the tests count: one
    /// per new edge).
    static SEARCHES: Cell<u64> = const { Cell::new(0) };
    /// The edge that `add_checked_dependency` is inserting, checked by its caller under the
    /// tenant's graph lock, for the row trigger (`checked_by_operation`) to skip its own
    /// search. Set only by this module's own code, for the one INSERT it runs, and cleared
    /// when that INSERT ends, however it ends: SQL can neither set nor keep it.
    static CHECKED: RefCell<Option<Checked>> = const { RefCell::new(None) };
}

/// An edge checked for cycles, and the (sub)transaction that checked it.
#[derive(PartialEq, Eq)]
struct Checked {
    lxid: pg_sys::LocalTransactionId,
    subxact: pg_sys::SubTransactionId,
    tenant: String,
    id: i64,
    on: i64,
}

impl Checked {
    fn now(tenant: &str, id: i64, on: i64) -> Checked {
        // SAFETY: reads this backend's current subtransaction id.
        let subxact = unsafe { pg_sys::GetCurrentSubTransactionId() };
        Checked { lxid: super::catalog::local_xact(), subxact, tenant: tenant.to_string(), id, on }
    }
}

/// Clears `CHECKED` when dropped: after the INSERT, or while an error unwinds through it.
struct ClearChecked;

impl Drop for ClearChecked {
    fn drop(&mut self) {
        CHECKED.with(|c| c.borrow_mut().take());
    }
}

/// A path from `from` to `to` (both ends included) if `from` already waits for `to`, through
/// dependencies and subtasks, else None. One statement: the steps of the part of the graph
/// reachable from `from`, each todo expanded once (`REACHABLE_STEPS`), none when `to` is
/// not in it; then, in memory, a breadth-first search from `from` that keeps each todo's
/// first predecessor and reads the path back from `to`. Work and memory are linear in that
/// part of the graph, whatever the number of paths through it. The path is the shortest,
/// and among the shortest the first in the search's order: each todo's dependencies before
/// its subtasks, each kind by ascending id.
pub fn dependency_path(tenant: &str, from: i64, to: i64) -> Option<Vec<i64>> {
    SEARCHES.with(|s| s.set(s.get() + 1));
    if from == to {
        return Some(vec![from]);
    }
    let steps = with_plan(REACHABLE_STEPS, &[tenant.into(), from.into(), to.into()], false, |n| {
        super::rows(n, |r| (r.int(1).unwrap_or(0), r.int(2).unwrap_or(0), r.get::<i32>(3).unwrap_or(0)))
    });
    if steps.is_empty() {
        return None;
    }
    let mut next_of: HashMap<i64, Vec<(i32, i64)>> = HashMap::new();
    for (at, next, kind) in steps {
        next_of.entry(at).or_default().push((kind, next));
    }
    // each todo reached, with the todo it was first reached from
    let mut reached: HashMap<i64, i64> = HashMap::from([(from, from)]);
    let mut queue = VecDeque::from([from]);
    while let Some(at) = queue.pop_front() {
        let Some(nexts) = next_of.get_mut(&at) else { continue };
        nexts.sort_unstable();
        for &(_, next) in nexts.iter() {
            if let Entry::Vacant(e) = reached.entry(next) {
                e.insert(at);
                if next == to {
                    return Some(path_back(&reached, from, to));
                }
                queue.push_back(next);
            }
        }
    }
    // the statement answered because `to` is reachable through the steps it returned
    errors::raise(
        PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
        format!("pg_todos: #{to} was reachable from #{from} but no path was found"),
        "",
    )
}

/// The path from `from` to `to` read back from each todo's first predecessor.
fn path_back(reached: &HashMap<i64, i64>, from: i64, to: i64) -> Vec<i64> {
    let mut path = vec![to];
    let mut at = to;
    while at != from {
        at = reached[&at];
        path.push(at);
    }
    path.reverse();
    path
}

/// Whether any of `ids` (todos of `tenant`) is a subtask or has one: a parent waits for its
/// subtasks, so such a todo's place in the graph is not only its dependencies.
pub fn has_subtask_links(tenant: &str, ids: &[i64]) -> bool {
    with_plan(
        "SELECT EXISTS (SELECT 1 FROM todo.todos t WHERE t.tenant_id = $1
                          AND ((t.id = ANY($2) AND t.parent_id IS NOT NULL) OR t.parent_id = ANY($2)))",
        &[tenant.into(), ids.to_vec().into()],
        false,
        |n| super::rows(n.min(1), |r| r.bool(1).unwrap_or(false)).first().copied().unwrap_or(false),
    )
}

/// How many cycle searches this backend has made (for the tests).
pub fn searches() -> u64 {
    SEARCHES.with(|s| s.get())
}

/// Adds "id waits for on", which the caller has just found acyclic with `dependency_path`
/// while holding the tenant's graph lock: the row trigger does not search again. False when
/// the edge was there already.
pub fn add_checked_dependency(tenant: &str, id: i64, on: i64) -> bool {
    let _clear = ClearChecked;
    CHECKED.with(|c| *c.borrow_mut() = Some(Checked::now(tenant, id, on)));
    exec(
        "INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING todo_id",
        &[tenant.into(), id.into(), on.into()],
    ) == 1
}

/// For the row trigger of `todo.dependencies`: whether the row being inserted is the edge
/// that `add_checked_dependency` is inserting in this (sub)transaction, already checked.
/// Consumes the mark either way: it answers yes once.
pub fn checked_by_operation(tenant: &str, id: i64, on: i64) -> bool {
    let mark = CHECKED.with(|c| c.borrow_mut().take());
    mark.is_some_and(|m| m == Checked::now(tenant, id, on))
}

/// Removes "id waits for on"; false when it was not there.
pub fn remove_dependency(tenant: &str, id: i64, on: i64) -> bool {
    exec(
        "DELETE FROM todo.dependencies WHERE tenant_id = $1 AND todo_id = $2 AND depends_on = $3 RETURNING todo_id",
        &[tenant.into(), id.into(), on.into()],
    ) == 1
}

/// The dependencies that touch any of `ids` (todos of `tenant`), as (todo, waits for, the
/// awaited todo is open), in (todo, waits for) order.
pub fn touching(tenant: &str, ids: &[i64]) -> Vec<(i64, i64, bool)> {
    with_plan(
        concat!(
            "SELECT d.todo_id, d.depends_on, b.status IN ",
            crate::open_statuses!(),
            "
           FROM todo.dependencies d JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
          WHERE d.tenant_id = $1 AND (d.todo_id = ANY($2) OR d.depends_on = ANY($2))
          ORDER BY d.todo_id, d.depends_on"
        ),
        &[tenant.into(), ids.to_vec().into()],
        false,
        |n| super::rows(n, |r| (r.int(1).unwrap_or(0), r.int(2).unwrap_or(0), r.bool(3).unwrap_or(false))),
    )
}

/// A dependency of todo `id` of `tenant` (as (waits, for)) that would join todos of two lists if
/// `id` were on list `list` (None: the tenant-wide pool): a todo waits only for todos of its
/// own list or of the pool. None when there is none.
pub fn across(tenant: &str, id: i64, list: Option<&str>) -> Option<(i64, i64)> {
    with_plan(
        "SELECT d.todo_id, d.depends_on FROM todo.dependencies d
           JOIN todo.todos o ON o.tenant_id = d.tenant_id
                            AND o.id = CASE WHEN d.todo_id = $2 THEN d.depends_on ELSE d.todo_id END
          WHERE d.tenant_id = $1 AND (d.todo_id = $2 OR d.depends_on = $2)
            AND CASE WHEN d.todo_id = $2
                     THEN o.conversation_id IS NOT NULL AND o.conversation_id IS DISTINCT FROM $3
                     ELSE $3::text IS NOT NULL AND o.conversation_id IS DISTINCT FROM $3 END
          ORDER BY d.todo_id, d.depends_on LIMIT 1",
        &[tenant.into(), id.into(), list.into()],
        false,
        |n| super::rows(n.min(1), |r| (r.int(1).unwrap_or(0), r.int(2).unwrap_or(0))).into_iter().next(),
    )
}
