//! The trackers' numbering (Task Master's `5`, `5.2`; Backlog.md's `TASK-3`, `TASK-3.1`): the
//! next number of a series of caller ids of one list, handed out by the store. A series is
//! the ids `<prefix><n>` of a list (`todo.caller_numbers`, a row per list and prefix). The
//! next number is one more than the largest the list holds (so ids imported or inserted with
//! their own numbers are passed), and for a series that never reuses one (Backlog.md's) than
//! any handed out too. A create first locks its series' row (`INSERT … ON CONFLICT DO
//! UPDATE`), which the creators of that series of that list wait on until their transaction
//! ends, and no one else; then reads the list on a fresh snapshot, which sees what they
//! committed: a create is never refused for another one made at the same time.

use super::one;

/// A series of caller ids: `prefix` (compared ignoring case) and a number; with `store_ids`,
/// a todo of the list without a caller id counts with its store id (the dialect shows it
/// as `<prefix><store id>`); with `reuse`, the next number is one more than the largest the
/// list holds (Task Master's rule: the number of a removed last task comes again), else one
/// more than that or any handed out, whichever is larger (Backlog.md's: never reused).
pub struct Series<'a> {
    pub prefix: &'a str,
    pub store_ids: bool,
    pub reuse: bool,
}

/// The series' row, made (at 0) or locked as it is: the creators of one series of one list
/// wait here for each other until the transaction ends, and for no one else.
const LOCK: &str = "INSERT INTO todo.caller_numbers AS c (tenant_id, conversation_id, prefix, last_number)
    VALUES ($1, $2, upper($3), 0)
    ON CONFLICT (tenant_id, conversation_id, prefix) DO UPDATE SET last_number = c.last_number
    RETURNING c.last_number";

/// The largest number of the series the list holds (0: none), read once the row is locked (a
/// statement of its own, so on a snapshot that sees what the creators before it committed).
macro_rules! held {
    () => {
        "SELECT greatest(max(CASE WHEN upper(left(t.external_id, length($3))) = upper($3)
                                   AND substr(t.external_id, length($3) + 1) ~ '^[0-9]{1,18}$'
                                  THEN substr(t.external_id, length($3) + 1)::bigint END),
                         max(t.id) FILTER (WHERE $4 AND t.external_id IS NULL), 0) AS n
           FROM todo.todos t WHERE t.tenant_id = $1 AND t.conversation_id = $2"
    };
}

/// The next number, written to the locked row.
const NEXT: &str = concat!(
    "WITH held AS (",
    held!(),
    ") UPDATE todo.caller_numbers c SET last_number = greatest(CASE WHEN $5 THEN 0 ELSE c.last_number END, held.n) + 1
      FROM held WHERE c.tenant_id = $1 AND c.conversation_id = $2 AND c.prefix = upper($3)
      RETURNING c.last_number"
);

/// The same without a row, for a database not yet updated to 1.1.0 (no
/// `todo.caller_numbers`): the largest number held, plus one.
const NEXT_UNCOUNTED: &str = concat!("SELECT h.n + 1 FROM (", held!(), ") h");

/// Whether the database has `todo.caller_numbers` (one not yet updated to 1.1.0 has not).
fn has_numbers() -> bool {
    super::catalog::relid(c"caller_numbers") != pgrx::pg_sys::InvalidOid
}

/// The next number of `series` in list `conversation` of `tenant`: its row
/// stays locked until the transaction ends (a rolled-back create gives its number back).
pub fn next(tenant: &str, conversation: &str, series: &Series<'_>) -> i64 {
    let args = || [tenant.into(), conversation.into(), series.prefix.into(), series.store_ids.into()];
    let n = if has_numbers() {
        super::roles::as_owner(|| {
            one::<i64>(LOCK, &[tenant.into(), conversation.into(), series.prefix.into()], true);
            let [a, b, c, d] = args();
            one::<i64>(NEXT, &[a, b, c, d, series.reuse.into()], true)
        })
    } else {
        one::<i64>(NEXT_UNCOUNTED, &args(), false)
    };
    n.unwrap_or(1)
}
