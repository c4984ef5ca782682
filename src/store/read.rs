//! Todos as the surfaces read them: the writ's rows with their marks, whole rows for the
//! tool dialects and REST, the ready queue, and locking the rows an operation changes.

use pgrx::datum::DatumWithOid;

use super::{one, with_plan, with_plan_limited, Tuple};
use crate::claims;
use crate::errors;
use crate::open_statuses;
use crate::status::Status;
use crate::todo::Todo;
use crate::writ::render::{Marks, Row};
use pg_todos_core::columns;
use pg_todos_core::limits::Setting;

/// Scope: the conversation's rows plus the tenant-wide pool; with no conversation, the pool.
/// For `todo.todos t`, after `t.`.
const SCOPE: &str = "tenant_id = $1 AND (t.conversation_id = $2 OR t.conversation_id IS NULL)";

/// The columns of a `Row`, for `todo.todos t` and the tenant as `$1`: its claim, and whether
/// the tenant has any dependency or subtask at all (each asked once per query, an InitPlan
/// of one index probe). Only then does `rows` look up the marks that need them.
const ROW_COLUMNS: &str = "t.id, t.subject, t.status, t.conversation_id IS NULL,
    t.claimed_by, t.lease_expires_at > now(),
    (SELECT EXISTS (SELECT 1 FROM todo.dependencies x WHERE x.tenant_id = $1)),
    (SELECT EXISTS (SELECT 1 FROM todo.todos x WHERE x.tenant_id = $1 AND x.parent_id IS NOT NULL))";

/// The same columns without the claim or marks, for a command that only needs the todo.
const ROW_PLAIN: &str = "t.id, t.subject, t.status, t.conversation_id IS NULL,
    NULL::text, NULL::bool, false, false";

/// `FROM … WHERE …` of the open todos that todo `$todo` of tenant `$1` waits for, as
/// `d.depends_on`: the one definition of an open blocker (the marks, the ready queue).
macro_rules! open_blockers {
    ($todo:literal) => {
        concat!(
            "FROM todo.dependencies d JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
              WHERE d.tenant_id = $1 AND d.todo_id = ",
            $todo,
            " AND b.status IN ",
            open_statuses!()
        )
    };
}

/// For todos `$2` of tenant `$1`: the open todos each waits for, and its subtasks' progress
/// (completed, not canceled), counting only subtasks still on a list (not archived), as the
/// board does.
const MARKS: &str = concat!(
    "SELECT i.id, (SELECT array_agg(d.depends_on ORDER BY d.depends_on) ",
    open_blockers!("i.id"),
    "), (SELECT ARRAY[count(*) FILTER (WHERE c.status = 'completed'), count(*) FILTER (WHERE c.status <> 'canceled')]
       FROM todo.todos c WHERE c.tenant_id = $1 AND c.parent_id = i.id AND c.archived_at IS NULL)
  FROM unnest($2::int8[]) WITH ORDINALITY AS i(id, ord) ORDER BY i.ord"
);

/// The `Row`s of a statement whose columns are `ROW_COLUMNS` (or `ROW_PLAIN`), in its order,
/// with their marks.
fn rows(tenant: &str, sql: &str, args: &[DatumWithOid<'_>]) -> Vec<Row> {
    let mut any_marks = false;
    let rows = with_plan(sql, args, false, |n| super::rows(n, |r| row_at(r, &mut any_marks)));
    with_marks(tenant, rows, any_marks)
}

/// The `Row` of a statement's row whose columns are `ROW_COLUMNS` (or `ROW_PLAIN`); sets
/// `any_marks` when the tenant has a dependency or a subtask (the marks are then read).
fn row_at(r: &Tuple<'_>, any_marks: &mut bool) -> Row {
    *any_marks |= r.bool(7).unwrap_or(false) || r.bool(8).unwrap_or(false);
    Row {
        id: r.int(1).unwrap_or_default(),
        subject: r.text(2).unwrap_or_default().to_string(),
        status: r.text(3).and_then(Status::parse).unwrap_or(Status::Pending),
        tenant_wide: r.bool(4).unwrap_or(false),
        marks: Marks { claim: r.text(5).map(|h| (h.to_string(), r.bool(6).unwrap_or(false))), ..Marks::default() },
    }
}

/// `rows` with their blockers and subtask progress, when `any_marks` (one statement).
fn with_marks(tenant: &str, mut rows: Vec<Row>, any_marks: bool) -> Vec<Row> {
    if any_marks {
        let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        for (row, (blocked_by, progress)) in rows.iter_mut().zip(marks(tenant, ids)) {
            row.marks.blocked_by = blocked_by;
            row.marks.progress = progress;
        }
    }
    rows
}

/// One todo's marks read by `marks`: the open todos it waits for, and its subtasks'
/// progress as (completed, total).
type BlockedAndProgress = (Vec<i64>, Option<(i64, i64)>);

/// For each of `ids` (todos of `tenant`), in order: the open todos it waits for, and its
/// subtasks' progress (completed, not canceled; None without subtasks).
fn marks(tenant: &str, ids: Vec<i64>) -> Vec<BlockedAndProgress> {
    with_plan(MARKS, &[tenant.into(), ids.into()], false, |n| {
        super::rows(n, |r| {
            let progress: Vec<i64> = r.get(3).unwrap_or_default();
            (
                r.get::<Vec<i64>>(2).unwrap_or_default(),
                match progress[..] {
                    [done, total] if total > 0 => Some((done, total)),
                    _ => None,
                },
            )
        })
    })
}

/// The todos in scope, in position order; only the open ones unless `all`. A bounded read
/// (`bounded`): at most `todo.max_read_todos` rows, fewer once their subjects pass
/// `todo.max_output_size` bytes; what it leaves out is noted (`session::note_omitted`).
pub fn scope_rows(tenant: &str, conversation: Option<&str>, all: bool) -> Vec<Row> {
    let condition = format!("t.{SCOPE} {}", if all { "" } else { concat!("AND t.status IN ", open_statuses!()) });
    let mut any_marks = false;
    let rows = bounded(
        tenant,
        &condition,
        || vec![tenant.into(), conversation.into()],
        ROW_COLUMNS,
        |r| row_at(r, &mut any_marks),
        |row| row.subject.len() + 64,
    );
    with_marks(tenant, rows, any_marks)
}

/// How many rows of a list read are read in one statement: a page. The first statement reads
/// one page in position order (a list of up to a page, nearly every list, costs one
/// statement); a longer list's ids, in that order, then its rows a page at a time.
const PAGE: usize = 64;

/// The cut of every bounded read: at most `todo.max_read_todos` rows, and no more once the
/// sizes of the rows taken pass `todo.max_output_size` (at least one row).
struct Cut {
    max: usize,
    budget: usize,
    taken: usize,
    bytes: usize,
}

impl Cut {
    fn new() -> Cut {
        Cut {
            max: crate::limits::get(Setting::ReadTodos).max(1),
            budget: crate::limits::get(Setting::OutputSize),
            taken: 0,
            bytes: 0,
        }
    }

    /// Whether the read is full: no row more is taken.
    fn full(&self) -> bool {
        self.taken >= self.max || (self.taken > 0 && self.bytes >= self.budget)
    }

    /// Counts a row taken, of `size` bytes.
    fn count(&mut self, size: usize) {
        self.taken += 1;
        self.bytes += size;
    }
}

/// How many todos `FROM todo.todos t WHERE …` (`from`) finds: what a cut read counts to note
/// how many it left out.
fn count_of(from: &str, args: &[DatumWithOid<'_>]) -> usize {
    one::<i64>(&format!("SELECT count(*) {from}"), args, false).unwrap_or(0) as usize
}

/// The rows a bounded read builds: each converted by `convert` while `cut` has room (a row
/// is never built once the read is full), counted by its `size`.
struct Taking<T, C, S> {
    cut: Cut,
    convert: C,
    size: S,
    out: Vec<T>,
}

impl<T, C: FnMut(&Tuple<'_>) -> T, S: Fn(&T) -> usize> Taking<T, C, S> {
    /// Builds the rows at `at` of the statement just run, in that order, while there is room;
    /// true once full.
    fn page(&mut self, at: &mut dyn Iterator<Item = usize>) -> bool {
        let mut full = false;
        super::rows_at(at, |r| {
            if self.cut.full() {
                full = true;
                return;
            }
            let row = (self.convert)(r);
            self.cut.count((self.size)(&row));
            self.out.push(row);
        });
        full
    }

    /// The first page of `select` (`SELECT columns, t.position, t.id FROM …`): the list's rows
    /// in any order, the statement stopped after one more than a page, so that no sort node
    /// runs and no row past it is produced. A list of up to a page, nearly every list, is then
    /// read whole in one statement: its rows are built in position order (the two last
    /// columns, sorted here) while there is room. Returns how many rows the list has; None
    /// when it is longer than a page (no row taken).
    fn first_page(&mut self, select: &str, args: &[DatumWithOid<'_>]) -> Option<usize> {
        with_plan_limited(select, args, false, (PAGE + 1) as i64, |n| {
            if n > PAGE {
                return None;
            }
            let mut k = 0;
            let mut keys: Vec<(i64, i64, usize)> = super::rows(n, |r| {
                let w = r.width();
                k += 1;
                (r.int(w - 1).unwrap_or_default(), r.int(w).unwrap_or_default(), k - 1)
            });
            keys.sort_unstable();
            self.page(&mut keys.into_iter().map(|(_, _, k)| k));
            Some(n)
        })
    }

    /// A list longer than a page: its ids in position order (one more than the most returned,
    /// to know there are more), then its rows a page at a time while there is room. Returns
    /// how many ids it listed.
    fn later_pages(&mut self, tenant: &str, from: &str, columns: &str, mut args: Vec<DatumWithOid<'_>>) -> usize {
        let n = args.len() + 1;
        args.push(((self.cut.max + 1) as i64).into());
        let ids: Vec<i64> =
            with_plan(&format!("SELECT t.id {from} ORDER BY t.position, t.id LIMIT ${n}"), &args, false, |k| {
                super::rows(k, |r| r.int(1).unwrap_or_default())
            });
        let select = format!(
            "SELECT {columns} FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = ANY($2)
              ORDER BY pg_catalog.array_position($2, t.id)"
        );
        for chunk in ids.chunks(PAGE) {
            if with_plan(&select, &[tenant.into(), chunk.to_vec().into()], false, |k| self.page(&mut (0..k))) {
                break;
            }
        }
        ids.len()
    }
}

/// A list read that never builds a row it will not return, nor reads more than a page of
/// rows at a time: the rows of `todo.todos t` where `t.tenant_id = $1 AND condition`
/// (arguments `args()`, the tenant first; `columns` may use `$1`), in position order (then
/// id), converted by `convert`, cut as every read is (`Cut`: at most `todo.max_read_todos`,
/// no more once their `size`s pass `todo.max_output_size`). When it stops short it notes how
/// many it left out (`session::note_omitted`): a list longer than `todo.max_read_todos` is
/// counted by one more statement.
fn bounded<'a, T>(
    tenant: &'a str,
    condition: &str,
    args: impl Fn() -> Vec<DatumWithOid<'a>>,
    columns: &str,
    convert: impl FnMut(&Tuple<'_>) -> T,
    size: impl Fn(&T) -> usize,
) -> Vec<T> {
    let from = format!("FROM todo.todos t WHERE t.tenant_id = $1 AND {condition}");
    let mut taking = Taking { cut: Cut::new(), convert, size, out: Vec::new() };
    let listed = match taking.first_page(&format!("SELECT {columns}, t.position, t.id {from}"), &args()) {
        Some(n) => n,
        None => match taking.later_pages(tenant, &from, columns, args()) {
            n if n > taking.cut.max => count_of(&from, &args()),
            n => n,
        },
    };
    let shown = taking.out.len();
    if listed > shown {
        crate::session::note_omitted(shown, (listed - shown) as u64);
    }
    taking.out
}

/// One todo in scope, whatever its status (without its marks).
pub fn find_in_scope(tenant: &str, conversation: Option<&str>, id: i64) -> Option<Row> {
    let sql = format!("SELECT {ROW_PLAIN} FROM todo.todos t WHERE t.{SCOPE} AND t.id = $3");
    rows(tenant, &sql, &[tenant.into(), conversation.into(), id.into()]).pop()
}

/// The columns of a `Todo`, in `columns::READ`'s order (unqualified: for statements on
/// `todo.todos` alone, and their RETURNING); `todo_name` names them. Built once per backend.
static TODO_COLUMNS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| columns::read_list(false));

/// How many columns `TODO_COLUMNS` has: a statement's columns after them start at this + 1.
pub(super) const TODO_COLUMN_COUNT: usize = columns::READ_COUNT;

thread_local! {
    /// `todo.todos` and whether it has the 1.0.0 columns, as this backend last found it
    static COLUMNS_1_0: super::catalog::Lookup<(pgrx::pg_sys::Oid, bool)> = const { super::catalog::Lookup::new() };
}

/// A relation cache invalidation: `todo.todos` may have gained its 1.0.0 columns.
pub fn relation_changed(relid: pgrx::pg_sys::Oid) {
    COLUMNS_1_0.with(|c| c.forget(relid, |(table, _)| *table == relid));
}

/// Whether `todo.todos` has the columns 1.0.0 added (looked up once per backend, again after
/// the table changes).
/// Refuses (0A000) what needs the 1.0.0 schema (its columns, `todo.checklist_items`,
/// `todo.comments`, `todo.locks.properties`) on a database not yet updated to it.
pub(crate) fn require_1_0(what: &str) {
    if !has_1_0_columns() {
        crate::errors::raise(
            pgrx::prelude::PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("{what} needs the pg_todos 1.0.0 schema"),
            "run ALTER EXTENSION pg_todos UPDATE",
        );
    }
}

pub(crate) fn has_1_0_columns() -> bool {
    let found = COLUMNS_1_0.with(|c| {
        c.get(|| {
            let relid = super::catalog::relid(c"todos");
            // SAFETY: a catalog lookup (cached by PostgreSQL) of a table's column by name
            (relid != pgrx::pg_sys::InvalidOid)
                .then(|| (relid, unsafe { pgrx::pg_sys::get_attnum(relid, c"labels".as_ptr()) } > 0))
        })
    });
    found.is_some_and(|f| f.1)
}

/// `TODO_COLUMNS` as a statement selects them: on a database whose schema is older than
/// 1.0.0 (this library, before `ALTER EXTENSION pg_todos UPDATE`), the columns 1.0.0 added (and
/// parent_id and archived_at, which it reads now, and which schemas before 0.3.0 and 0.5.0 lack)
/// are NULLs, so that what works on the old schema keeps working until the update.
pub(super) fn todo_columns() -> &'static str {
    static BEFORE_1_0: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| columns::read_list(true));
    if has_1_0_columns() {
        &TODO_COLUMNS
    } else {
        &BEFORE_1_0
    }
}

/// The column of `todo.todos` behind column `i` (from 0) of `TODO_COLUMNS` (`metadata` for
/// `metadata::text`). No column calls a function: Citus allows none but IMMUTABLE ones in a
/// RETURNING clause.
pub fn todo_name(i: usize) -> &'static str {
    columns::READ_NAMES[i]
}

/// Where `todo_from` reads a todo: column `i` of `TODO_COLUMNS` as text (`metadata` as its
/// JSON text), as an integer, as a time stamp in microseconds since the Unix epoch, or as
/// texts (an array; NULL: none).
pub trait TodoColumns {
    type Error;
    fn text(&self, i: usize) -> Result<Option<String>, Self::Error>;
    fn texts(&self, i: usize) -> Result<Vec<String>, Self::Error>;
    fn int(&self, i: usize) -> Result<Option<i64>, Self::Error>;
    fn stamp(&self, i: usize) -> Result<Option<i64>, Self::Error>;
}

/// The `Todo` its columns hold (a statement's row, or a row the trigger sees).
pub fn todo_from<C: TodoColumns>(c: &C) -> Result<Todo, C::Error> {
    use columns::at;
    let status = c.text(const { at("status") })?.unwrap_or_default();
    Ok(Todo {
        id: c.int(const { at("id") })?.unwrap_or_default(),
        conversation_id: c.text(const { at("conversation_id") })?,
        turn_id: c.text(const { at("turn_id") })?,
        agent_id: c.text(const { at("agent_id") })?,
        subject: c.text(const { at("subject") })?.unwrap_or_default(),
        description: c.text(const { at("description") })?,
        active_form: c.text(const { at("active_form") })?,
        status: Status::parse(&status).unwrap_or_else(|| errors::invalid_status(&status)),
        priority: c.text(const { at("priority") })?,
        position: c.int(const { at("position") })?.unwrap_or_default(),
        completion_criteria: c.text(const { at("completion_criteria") })?,
        agent_type: c.text(const { at("agent_type") })?,
        outcome: c.text(const { at("outcome") })?,
        created_us: c.stamp(const { at("created_at") })?.unwrap_or_default(),
        updated_us: c.stamp(const { at("updated_at") })?.unwrap_or_default(),
        started_us: c.stamp(const { at("started_at") })?,
        completed_us: c.stamp(const { at("completed_at") })?,
        owner: c.text(const { at("owner") })?,
        metadata: c.text(const { at("metadata") })?,
        external_id: c.text(const { at("external_id") })?,
        labels: c.texts(const { at("labels") })?,
        issue_type: c.text(const { at("issue_type") })?,
        due_us: c.stamp(const { at("due_at") })?,
        notes: c.text(const { at("notes") })?,
        plan: c.text(const { at("plan") })?,
        parent_id: c.int(const { at("parent_id") })?,
        archived_us: c.stamp(const { at("archived_at") })?,
    })
}

/// A statement's row, its `TODO_COLUMNS` from its first column on.
impl TodoColumns for Tuple<'_> {
    type Error = std::convert::Infallible;
    fn text(&self, i: usize) -> Result<Option<String>, Self::Error> {
        Ok(Tuple::text(self, i + 1).map(str::to_string))
    }
    fn int(&self, i: usize) -> Result<Option<i64>, Self::Error> {
        Ok(Tuple::int(self, i + 1))
    }
    fn texts(&self, i: usize) -> Result<Vec<String>, Self::Error> {
        Ok(self.get::<Vec<Option<String>>>(i + 1).unwrap_or_default().into_iter().flatten().collect())
    }
    fn stamp(&self, i: usize) -> Result<Option<i64>, Self::Error> {
        Ok(Tuple::stamp(self, i + 1))
    }
}

/// The `Todo` in `TODO_COLUMNS` of a row, from its first column on.
fn todo_at(r: &Tuple<'_>) -> Todo {
    match todo_from(r) {
        Ok(todo) => todo,
        Err(never) => match never {},
    }
}

pub(super) fn parse_todos(n: usize) -> Vec<Todo> {
    super::rows(n, todo_at)
}

/// Runs a query whose rows are `TODO_COLUMNS`. Read-only until the transaction has an xid
/// (see `begin_write`): a read on a standby or in a read-only transaction works.
fn todo_rows(sql: &str, args: &[DatumWithOid<'_>]) -> Vec<Todo> {
    with_plan(sql, args, false, parse_todos)
}

/// The tenant's todos that `find` finds, in position order (then by id): not archived, except
/// a turn's (the plan tools see every todo of their turn).
/// A bounded read (`bounded`): at most `todo.max_read_todos` todos, fewer once their text
/// passes `todo.max_output_size` bytes; what it leaves out is noted.
pub fn todos(tenant: &str, find: Find<'_>) -> Vec<Todo> {
    let archived = if matches!(find, Find::Turn { .. }) { "" } else { "AND t.archived_at IS NULL" };
    let [a, b] = find.arguments();
    bounded(
        tenant,
        &format!("{} {archived}", find.condition()),
        || vec![tenant.into(), Option::<i64>::None.into(), a.into(), b.into()],
        todo_columns(),
        todo_at,
        todo_size,
    )
}

/// The bytes of a todo's text, as a read counts them against `todo.max_output_size`.
fn todo_size(t: &Todo) -> usize {
    let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
    128 + t.subject.len()
        + opt(&t.description)
        + opt(&t.active_form)
        + opt(&t.completion_criteria)
        + opt(&t.outcome)
        + opt(&t.metadata)
        + opt(&t.conversation_id)
        + opt(&t.turn_id)
        + opt(&t.agent_id)
        + opt(&t.agent_type)
        + opt(&t.owner)
        + opt(&t.external_id)
        + opt(&t.priority)
        + opt(&t.issue_type)
        + opt(&t.notes)
        + opt(&t.plan)
        + t.labels.iter().map(|l| l.len() + 4).sum::<usize>()
}

/// Todo `id` of the tenant, any conversation, archived or not.
pub fn todo(tenant: &str, id: i64) -> Option<Todo> {
    todo_rows(
        &format!("SELECT {} FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = $2", todo_columns()),
        &[tenant.into(), id.into()],
    )
    .pop()
}

/// Seed 000's REST list, in the seed's order (in progress, then open by position, then the
/// rest by last change): a conversation plus the pool (Some), the pool only (None), or every
/// row (no `conversation`); optional status and agent; at most `limit`.
pub fn rest_list(
    tenant: &str,
    conversation: Option<Option<&str>>,
    status: Option<&str>,
    agent: Option<&str>,
    limit: i64,
) -> Vec<Todo> {
    let scope = match conversation {
        None => "true",
        Some(c) => Find::InScope(c).condition(),
    };
    todo_rows(
        &format!(
            "SELECT {todo_columns} FROM todo.todos t WHERE t.tenant_id = $1 AND {scope}
                AND ($2::text IS NULL OR t.status = $2) AND ($5::text IS NULL OR t.agent_id = $5)
              ORDER BY CASE t.status WHEN 'in_progress' THEN 0 WHEN 'review' THEN 0 WHEN 'pending' THEN 1
                                     WHEN 'blocked' THEN 1 WHEN 'deferred' THEN 1 ELSE 2 END,
                       CASE WHEN t.status IN {} THEN t.position END,
                       t.updated_at DESC, t.id
              LIMIT $6",
            open_statuses!(),
            todo_columns = todo_columns(),
        ),
        &[
            tenant.into(),
            status.into(),
            conversation.flatten().into(),
            Option::<&str>::None.into(),
            agent.into(),
            limit.into(),
        ],
    )
}

/// The open todos `id` waits for, in id order.
pub fn blockers(tenant: &str, id: i64) -> Vec<i64> {
    marks(tenant, vec![id]).pop().map(|(blocked_by, _)| blocked_by).unwrap_or_default()
}

/// Whether todo `id` of `tenant` exists.
pub fn exists(tenant: &str, id: i64) -> bool {
    one::<bool>(
        "SELECT EXISTS (SELECT 1 FROM todo.todos WHERE tenant_id = $1 AND id = $2)",
        &[tenant.into(), id.into()],
        false,
    )
    .unwrap_or(false)
}

/// Whether the tenant `$1` has any dependency, any subtask: `WITH block_flags!()` before a
/// statement that reads `first_ready`, so that each is asked once per statement.
macro_rules! block_flags {
    () => {
        concat!("flags AS MATERIALIZED (SELECT ", waiting_kinds!(), ")")
    };
}

/// The select list of whether tenant `$1` has any dependency (`dependencies`) and any subtask
/// (`subtasks`): two index probes.
macro_rules! waiting_kinds {
    () => {
        "EXISTS (SELECT 1 FROM todo.dependencies x WHERE x.tenant_id = $1) AS dependencies,
         EXISTS (SELECT 1 FROM todo.todos x WHERE x.tenant_id = $1 AND x.parent_id IS NOT NULL) AS subtasks"
    };
}

/// Not waiting: no open todo it depends on, no open subtask. For `todo.todos t`, `$1` tenant,
/// and `flags` (`block_flags!()`): the per-row checks run only when the tenant has dependencies
/// or subtasks.
macro_rules! unblocked {
    () => {
        concat!(
            "CASE WHEN (SELECT flags.dependencies FROM flags) THEN NOT EXISTS (SELECT 1 ",
            open_blockers!("t.id"),
            ") ELSE true END
    AND CASE WHEN (SELECT flags.subtasks FROM flags) THEN
        NOT EXISTS (SELECT 1 FROM todo.todos c
                     WHERE c.tenant_id = $1 AND c.parent_id = t.id
                       AND c.status IN ",
            open_statuses!(),
            ") ELSE true END"
        )
    };
}

/// Claimable, as far as the row itself says: pending, or in progress under a claim whose lease
/// ran out. For `todo.todos t`, `$1` tenant, `$2` conversation (the list and the tenant-wide
/// pool). A statement that locks one of `first_ready`'s todos checks this again on the row
/// it locks (a concurrent claim may have taken it); the rest of "ready" (no open blocker, no
/// open subtask) was checked by `first_ready` in the same snapshot.
/// Its statement finds the row by its id (`t.id = ANY(…)`, the primary key): the scope is
/// written so that no index on the list (`todos_open`, `todos_conversation_list`) can serve
/// it, or the planner may read the whole list's open todos to recheck a few of them.
pub(super) const CLAIMABLE: &str = "t.tenant_id = $1 AND coalesce(t.conversation_id = $2, t.conversation_id IS NULL)
    AND (t.status = 'pending' OR (t.status = 'in_progress' AND t.claimed_by IS NOT NULL AND t.lease_expires_at <= now()))";

/// Claim order: priority (high, then medium or unset, then low), then position, then id.
/// The index `todos_claim_order` holds the pending todos in this order, per list.
pub(super) const CLAIM_ORDER: &str =
    "CASE t.priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END, t.position, t.id";

/// The first ready todos in scope, in claim order, at most `limit` (None: all), as an array of
/// ids, for `$1` tenant and `$2` conversation, in a statement `WITH block_flags!()`. The limit
/// is written into the statement, not passed as a parameter: with a parameter, a generic plan
/// assumes a tenth of the list, and on a list of 500,000 the estimate passes
/// `jit_above_cost` (each call then spent 40 ms compiling expressions).
/// Ready: pending, or in progress under a claim whose lease ran out; not waiting for an open
/// todo; no open subtasks. Three ordered reads, merged: the list's pending todos and the
/// tenant-wide pool's, each an index scan of `todos_claim_order` that stops at the limit, and
/// the claims of the list and the pool whose lease ran out (`todos_claims`: the live claims,
/// few). So its cost follows the limit, not the list's length (past the todos that wait for
/// others, which each read passes over). Not locked: a claim locks one of them
/// (`store::lease`).
pub(super) fn first_ready(limit: Option<i64>) -> String {
    first_ready_where(limit, unblocked!())
}

/// `first_ready` for a tenant that has no dependency and no subtask (`waits_for_nothing`):
/// every pending todo is ready, and the statement needs no `block_flags!()`. A smaller plan:
/// PostgreSQL starts each of its nodes at every execution.
fn first_ready_of_free_todos(limit: Option<i64>) -> String {
    first_ready_where(limit, "true")
}

/// The first ready todos of `tenant` in scope (`first_ready`, or `first_ready_of_free_todos`
/// when no todo of the tenant waits for another or has a subtask), with what its statement's
/// `WITH` must begin with (`block_flags!()` and a comma, or nothing).
pub(super) fn ready_candidates(tenant: &str, limit: Option<i64>) -> (&'static str, String) {
    if waits_for_nothing(tenant) {
        ("", first_ready_of_free_todos(limit))
    } else {
        (BLOCK_FLAGS_THEN, first_ready(limit))
    }
}

/// `block_flags!()` followed by a comma, to begin a `WITH` list.
const BLOCK_FLAGS_THEN: &str = concat!(block_flags!(), ",");

/// Whether no todo of tenant `$1` waits for another or has a subtask: two index probes, for a
/// claim to choose `first_ready_of_free_todos`. (A dependency or subtask another transaction
/// commits after this probe is as one added just after the claim.)
fn waits_for_nothing(tenant: &str) -> bool {
    one::<bool>(
        concat!("SELECT NOT (f.dependencies OR f.subtasks) FROM (SELECT ", waiting_kinds!(), ") f"),
        &[tenant.into()],
        false,
    )
    .unwrap_or(false)
}

/// `first_ready` with `unblocked` as the condition of a ready todo beyond its own row.
fn first_ready_where(limit: Option<i64>, unblocked: &str) -> String {
    let limit = limit.map_or_else(|| "ALL".to_string(), |n| n.max(0).to_string());
    let branch = |scope: &str, state: &str| {
        format!(
            "(SELECT t.id, CASE t.priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END AS rank, t.position
                FROM todo.todos t
               WHERE t.tenant_id = $1 AND {scope} AND {state} AND {unblocked}
               ORDER BY {CLAIM_ORDER} LIMIT {limit})"
        )
    };
    format!(
        "ARRAY(SELECT r.id FROM ({} UNION ALL {} UNION ALL {}) r ORDER BY r.rank, r.position, r.id LIMIT {limit})",
        branch("t.conversation_id = $2", "t.status = 'pending'"),
        branch("t.conversation_id IS NULL", "t.status = 'pending'"),
        branch(
            "(t.conversation_id = $2 OR t.conversation_id IS NULL)",
            "t.status = 'in_progress' AND t.claimed_by IS NOT NULL AND t.lease_expires_at <= now()"
        ),
    )
}

/// The ready todos in scope, in claim order, at most `limit`. (The candidates are read up to
/// the next power of two, so that few statements are planned whatever the limits asked.)
pub fn ready(tenant: &str, conversation: Option<&str>, limit: i64) -> Vec<Row> {
    let read = u64::try_from(limit.max(1)).unwrap_or(1).next_power_of_two().min(1 << 20) as i64;
    let (flags, candidates) = ready_candidates(tenant, Some(read));
    let sql = format!(
        "WITH {flags} c AS (SELECT {candidates} AS ids)
         SELECT {ROW_COLUMNS} FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = ANY((SELECT c.ids FROM c)::bigint[])
          ORDER BY {CLAIM_ORDER} LIMIT $3"
    );
    rows(tenant, &sql, &[tenant.into(), conversation.into(), limit.into()])
}

/// Which todos a read or a change finds, besides the tenant: the one scope predicate.
#[derive(Clone, Copy, Debug)]
pub enum Find<'a> {
    /// the conversation's todos plus the tenant-wide pool (None: the pool): the writ's scope
    InScope(Option<&'a str>),
    /// any todo of the tenant (REST)
    Anywhere,
    /// one conversation's own todos, not the pool (whole-list dialects)
    Conversation(&'a str),
    /// one turn of one conversation (None: of no conversation): the plan tools
    Turn { conversation: Option<&'a str>, turn: &'a str },
}

impl Find<'_> {
    /// The condition on `todo.todos t` with its arguments as `$3` and `$4`.
    pub(super) fn condition(&self) -> &'static str {
        match self {
            Find::InScope(_) => "(t.conversation_id = $3 OR t.conversation_id IS NULL) AND $4::text IS NULL",
            Find::Anywhere => "$3::text IS NULL AND $4::text IS NULL",
            Find::Conversation(_) => "t.conversation_id = $3 AND $4::text IS NULL",
            Find::Turn { .. } => "t.conversation_id IS NOT DISTINCT FROM $3 AND t.turn_id = $4",
        }
    }

    pub(super) fn arguments(&self) -> [Option<&str>; 2] {
        match *self {
            Find::InScope(c) => [c, None],
            Find::Anywhere => [None, None],
            Find::Conversation(c) => [Some(c), None],
            Find::Turn { conversation, turn } => [conversation, Some(turn)],
        }
    }
}

/// A todo locked for a change, with its claim state.
pub struct Locked {
    pub todo: Todo,
    pub claim: claims::State,
}

/// Locks the todos `ids` of the tenant that `find` finds, in ascending id order, until the
/// transaction ends (`FOR UPDATE` for a delete, else `FOR NO KEY UPDATE`), and returns them
/// as they are once locked, in that order. A todo deleted meanwhile is not returned.
pub fn lock(tenant: &str, find: Find<'_>, ids: &[i64], delete: bool) -> Vec<Locked> {
    // One id: `t.id = $2`, whose plan PostgreSQL keeps (generic); with `= ANY($2)` it would
    // re-plan the statement on every call, the array's length changing its estimate.
    let sql = format!(
        "SELECT {todo_columns}, t.claimed_by, t.lease_expires_at, t.fence
           FROM todo.todos t WHERE t.tenant_id = $1 AND t.id {} AND {} ORDER BY t.id FOR {}",
        if ids.len() == 1 { "= $2" } else { "= ANY($2)" },
        find.condition(),
        if delete { "UPDATE" } else { "NO KEY UPDATE" },
        todo_columns = todo_columns(),
    );
    let id: DatumWithOid<'_> = if ids.len() == 1 { ids[0].into() } else { ids.to_vec().into() };
    let [a, b] = find.arguments();
    let args: [DatumWithOid<'_>; 4] = [tenant.into(), id, a.into(), b.into()];
    with_plan(&sql, &args, true, |n| {
        super::rows(n, |r| {
            let todo = todo_at(r);
            let after = TODO_COLUMN_COUNT;
            let holder = r.text(after + 1).map(str::to_string);
            let claim = holder.zip(r.stamp(after + 2)).map(|(holder, expires_us)| claims::Claim { holder, expires_us });
            let state = claims::State { id: todo.id, status: todo.status, claim, fence: r.int(after + 3).unwrap_or(0) };
            Locked { todo, claim: state }
        })
    })
}

/// The todos of one conversation's list (not the pool, not archived: history is never
/// changed by a replace) that a read of it shows now: `todos` with `Find::Conversation`, the
/// read every whole-list dialect shows its list with (position order, at most
/// `todo.max_read_todos` todos, no more once their text passes `todo.max_output_size`),
/// locked `FOR UPDATE` in ascending id order (a whole-list replace may delete any of them),
/// in position order; and how many todos of the list that read leaves out (never changed by
/// the replace). The read's cut is not noted for the call's answer.
pub fn lock_shown(tenant: &str, conversation: &str) -> (Vec<Todo>, u64) {
    if super::distribution::distributed() {
        return read_then_lock_shown(tenant, conversation);
    }
    let mut cut = Cut::new();
    // one statement: the first `todo.max_read_todos` + 1 todos of the list in position order
    // (`bounded`'s rows, before its cut by size), locked and read in ascending id order
    let list = "FROM todo.todos t WHERE t.tenant_id = $1 AND t.conversation_id = $2 AND t.archived_at IS NULL";
    let sql = format!(
        "SELECT {columns} {list}
            AND t.id = ANY(ARRAY(SELECT t.id {list} ORDER BY t.position, t.id LIMIT $3))
          ORDER BY t.id FOR UPDATE",
        columns = todo_columns()
    );
    let args = [tenant.into(), conversation.into(), (cut.max as i64 + 1).into()];
    let mut locked: Vec<Todo> = with_plan(&sql, &args, true, |n| super::rows(n, todo_at));
    locked.sort_by_key(|t| (t.position, t.id));
    let listed = locked.len();
    locked.retain(|t| {
        let room = !cut.full();
        if room {
            cut.count(todo_size(t));
        }
        room
    });
    let listed = if listed > cut.max { count_of(list, &args[..2]) } else { listed };
    let omitted = listed.saturating_sub(locked.len()) as u64;
    (locked, omitted)
}

/// `lock_shown` in two statements, on a distributed store: the list as a read shows it, then
/// those todos locked by id.
fn read_then_lock_shown(tenant: &str, conversation: &str) -> (Vec<Todo>, u64) {
    let (shown, omitted) = crate::session::unnoted(|| todos(tenant, Find::Conversation(conversation)));
    let ids: Vec<i64> = shown.iter().map(|t| t.id).collect();
    let mut locked: Vec<Todo> = if ids.is_empty() {
        Vec::new()
    } else {
        lock(tenant, Find::Conversation(conversation), &ids, true)
            .into_iter()
            .map(|l| l.todo)
            .filter(|t| t.archived_us.is_none())
            .collect()
    };
    locked.sort_by_key(|t| (t.position, t.id));
    (locked, omitted.map_or(0, |(_, n)| n))
}

/// The claims on todos `ids` of `tenant`: (todo, holder, whether the lease is still running),
/// for the todos that have one.
pub fn claims(tenant: &str, ids: &[i64]) -> Vec<(i64, String, bool)> {
    if ids.is_empty() {
        return Vec::new();
    }
    with_plan(
        "SELECT t.id, t.claimed_by, t.lease_expires_at > now() FROM todo.todos t
          WHERE t.tenant_id = $1 AND t.id = ANY($2) AND t.claimed_by IS NOT NULL ORDER BY t.id",
        &[tenant.into(), ids.to_vec().into()],
        false,
        |n| {
            super::rows(n, |r| {
                (r.int(1).unwrap_or(0), r.text(2).unwrap_or_default().to_string(), r.bool(3).unwrap_or(false))
            })
        },
    )
}

/// The record ids (caller id, else store id as text) of every todo of one conversation, the
/// archived ones too: ids only, not bounded (an import tells a todo no read shows from a new
/// one by them).
pub fn record_ids(tenant: &str, conversation: &str) -> Vec<String> {
    with_plan(
        "SELECT coalesce(t.external_id, t.id::text) FROM todo.todos t
          WHERE t.tenant_id = $1 AND t.conversation_id = $2",
        &[tenant.into(), conversation.into()],
        false,
        |n| super::rows(n, |r| r.text(1).unwrap_or_default().to_string()),
    )
}

/// One conversation's todos, the archived ones too (a tracker's completed and archived
/// tasks, an export), in position order (then by id); bounded as `todos`.
pub fn todos_with_archived(tenant: &str, conversation: &str) -> Vec<Todo> {
    bounded(
        tenant,
        "t.conversation_id = $3 AND $4::text IS NULL",
        || vec![tenant.into(), Option::<i64>::None.into(), Some(conversation).into(), Option::<&str>::None.into()],
        todo_columns(),
        todo_at,
        todo_size,
    )
}
