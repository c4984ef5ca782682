//! The dependency graph: paths through dependencies and subtasks (cycle checks), adding and
//! removing edges. `locks::lock_dependencies` serializes changes to one tenant's graph.

use super::{exec, one};

/// What todo `$2`… waits for, one step: the todos it depends on and its subtasks (a parent
/// is not ready while a subtask is open). For `walk w`, tenant `$1`.
const WAITS_FOR: &str = "SELECT d.depends_on FROM todo.dependencies d WHERE d.tenant_id = $1 AND d.todo_id = w.at
    UNION ALL
    SELECT c.id FROM todo.todos c WHERE c.tenant_id = $1 AND c.parent_id = w.at";

/// A path from `from` to `to` (both ends included) if `from` already waits for `to`, through
/// dependencies and subtasks. Reachability first, with set semantics (each todo visited
/// once: linear in the graph); only when `to` is reachable, the shortest path (breadth
/// first, stopping at the first).
pub fn dependency_path(tenant: &str, from: i64, to: i64) -> Option<Vec<i64>> {
    let args = [tenant.into(), from.into(), to.into()];
    let reachable = one::<bool>(
        &format!(
            "WITH RECURSIVE walk(at) AS (
                 SELECT $2::int8
                 UNION
                 SELECT n.next FROM walk w CROSS JOIN LATERAL ({WAITS_FOR}) n(next))
             SELECT EXISTS (SELECT 1 FROM walk WHERE at = $3)"
        ),
        &args,
        false,
    );
    if reachable != Some(true) {
        return None;
    }
    one::<Vec<i64>>(
        &format!(
            "WITH RECURSIVE walk(at, path) AS (
                 SELECT $2::int8, ARRAY[$2::int8]
                 UNION ALL
                 SELECT n.next, w.path || n.next FROM walk w CROSS JOIN LATERAL ({WAITS_FOR}) n(next)
                  WHERE n.next <> ALL (w.path) AND w.at <> $3)
             SELECT path FROM walk WHERE at = $3 LIMIT 1"
        ),
        &args,
        false,
    )
}

/// Adds "id waits for on"; false when it was there already.
pub fn add_dependency(tenant: &str, id: i64, on: i64) -> bool {
    exec(
        "INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING RETURNING todo_id",
        &[tenant.into(), id.into(), on.into()],
    ) == 1
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
    super::with_plan(
        "SELECT d.todo_id, d.depends_on, b.status IN ('pending', 'in_progress', 'blocked')
           FROM todo.dependencies d JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
          WHERE d.tenant_id = $1 AND (d.todo_id = ANY($2) OR d.depends_on = ANY($2))
          ORDER BY d.todo_id, d.depends_on",
        &[tenant.into(), ids.to_vec().into()],
        false,
        |table| {
            table
                .map(|r| Ok((r.get(1)?.unwrap_or(0), r.get(2)?.unwrap_or(0), r.get(3)?.unwrap_or(false))))
                .collect::<Result<Vec<_>, pgrx::spi::Error>>()
        },
    )
}
