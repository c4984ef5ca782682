//! The trackers' numbering (Task Master's `5`, `5.2`; Backlog.md's `TASK-3`, `TASK-3.1`): the
//! next number of a series of caller ids of one list, handed out by the store. A series is
//! the ids `<prefix><n>` of a list (`todo.caller_numbers`, a row per list and prefix); the
//! next number is one more than the larger of the row's last number and the largest number of
//! the series the list holds (so ids imported or inserted with their numbers are passed, and
//! none is handed out twice). The row is bumped by one `INSERT … ON CONFLICT DO UPDATE`, whose
//! row lock the creators of that series of that list wait on until their transaction ends,
//! and no one else: a create is never refused for another one made at the same time.

use super::one;

/// A series of caller ids: `prefix` (compared ignoring case) and a number; with `store_ids`,
/// a todo of the list without a caller id counts with its store id (the dialect shows it
/// as `<prefix><store id>`).
pub struct Series<'a> {
    pub prefix: &'a str,
    pub store_ids: bool,
}

/// The largest number of the series the list holds (0: none), and one more than the larger of
/// it and the row's: as one statement, so that the read of the list and the bump are one.
const NEXT: &str = "WITH held AS (
        SELECT greatest(max(CASE WHEN upper(left(t.external_id, length($3))) = upper($3)
                                  AND substr(t.external_id, length($3) + 1) ~ '^[0-9]{1,18}$'
                                 THEN substr(t.external_id, length($3) + 1)::bigint END),
                        max(t.id) FILTER (WHERE $4 AND t.external_id IS NULL), 0) AS n
          FROM todo.todos t WHERE t.tenant_id = $1 AND t.conversation_id = $2)
    INSERT INTO todo.caller_numbers AS c (tenant_id, conversation_id, prefix, last_number)
    SELECT $1, $2, upper($3), held.n + 1 FROM held
    ON CONFLICT (tenant_id, conversation_id, prefix)
    DO UPDATE SET last_number = greatest(c.last_number, excluded.last_number - 1) + 1
    RETURNING c.last_number";

/// The same without a row to bump, for a database not yet updated to 1.1.0 (no
/// `todo.caller_numbers`): the largest number held, plus one.
const NEXT_UNCOUNTED: &str = "SELECT greatest(max(CASE WHEN upper(left(t.external_id, length($3))) = upper($3)
                                  AND substr(t.external_id, length($3) + 1) ~ '^[0-9]{1,18}$'
                                 THEN substr(t.external_id, length($3) + 1)::bigint END),
                        max(t.id) FILTER (WHERE $4 AND t.external_id IS NULL), 0) + 1
      FROM todo.todos t WHERE t.tenant_id = $1 AND t.conversation_id = $2";

/// Whether the database has `todo.caller_numbers` (one not yet updated to 1.1.0 has not).
fn has_numbers() -> bool {
    super::catalog::relid(c"caller_numbers") != pgrx::pg_sys::InvalidOid
}

/// The next number of `series` in list `conversation` of `tenant`, taken for good: its row
/// stays locked until the transaction ends (a rolled-back create gives its number back).
pub fn next(tenant: &str, conversation: &str, series: &Series<'_>) -> i64 {
    let args = [tenant.into(), conversation.into(), series.prefix.into(), series.store_ids.into()];
    let n = if has_numbers() {
        super::roles::as_owner(|| one::<i64>(NEXT, &args, true))
    } else {
        one::<i64>(NEXT_UNCOUNTED, &args, false)
    };
    n.unwrap_or(1)
}
