//! The one module that runs SQL against the extension's tables. Every statement names its
//! relations with the schema and filters by tenant explicitly: superusers bypass row-level
//! security, and the extension must not.

use pgrx::prelude::*;

use crate::errors;

fn spi_error(e: pgrx::spi::Error) -> ! {
    errors::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("pg_todos: {e}"), "")
}

// ---- saved plans ----

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::spi::{OwnedPreparedStatement, SpiClient, SpiTupleTable};

thread_local! {
    /// Every statement this module runs, prepared once per backend and kept (PostgreSQL's
    /// plan cache re-plans them after DDL). The statements are a fixed set of texts.
    static PLANS: RefCell<HashMap<String, &'static OwnedPreparedStatement>> = RefCell::new(HashMap::new());
}

fn saved(client: &SpiClient<'_>, sql: &str, args: &[DatumWithOid<'_>], write: bool) -> &'static OwnedPreparedStatement {
    if let Some(plan) = PLANS.with(|p| p.borrow().get(sql).copied()) {
        return plan;
    }
    let types: Vec<pgrx::PgOid> = args.iter().map(|a| pgrx::PgOid::from(a.oid())).collect();
    let prepared = if write { client.prepare_mut(sql, &types) } else { client.prepare(sql, &types) };
    let plan: &'static OwnedPreparedStatement =
        Box::leak(Box::new(prepared.unwrap_or_else(|e| spi_error(e)).keep()));
    PLANS.with(|p| p.borrow_mut().insert(sql.to_string(), plan));
    plan
}

/// Runs `sql` through its saved plan and hands the rows to `f`. A read (`write` false) runs
/// read-only until the transaction has an xid (see `begin_write`), so it works on a standby.
fn with_plan<R>(
    sql: &str,
    args: &[DatumWithOid<'_>],
    write: bool,
    f: impl FnOnce(SpiTupleTable<'_>) -> Result<R, pgrx::spi::Error>,
) -> R {
    let result = if write {
        Spi::connect_mut(|client| {
            let plan = saved(client, sql, args, true);
            f(client.update(plan, None, args)?)
        })
    } else {
        Spi::connect(|client| {
            let plan = saved(client, sql, args, false);
            f(client.select(plan, None, args)?)
        })
    };
    result.unwrap_or_else(|e| spi_error(e))
}

/// The first column of the first row (None: no row, or NULL).
fn one<T: FromDatum + IntoDatum>(sql: &str, args: &[DatumWithOid<'_>], write: bool) -> Option<T> {
    with_plan(sql, args, write, |rows| if rows.is_empty() { Ok(None) } else { rows.first().get_one::<T>() })
}

/// Runs a statement; the number of rows it returned.
fn exec(sql: &str, args: &[DatumWithOid<'_>]) -> usize {
    with_plan(sql, args, true, |rows| Ok(rows.len()))
}

thread_local! {
    /// The tenant found registered last, and the local transaction it was found in: a
    /// transaction asks once per tenant.
    static REGISTERED: RefCell<Option<(pg_sys::LocalTransactionId, String)>> = const { RefCell::new(None) };
}

fn local_xact() -> pg_sys::LocalTransactionId {
    // SAFETY: MyProc is set for every backend that runs SQL.
    unsafe { (*pg_sys::MyProc).lxid }
}

/// Raises 42704 unless `tenant` is a row of `todo.tenants` (as the caller can see it).
pub fn require_registered(tenant: &str) {
    let lxid = local_xact();
    if REGISTERED.with(|r| r.borrow().as_ref().is_some_and(|(x, t)| *x == lxid && t == tenant)) {
        return;
    }
    let found =
        one::<bool>("SELECT EXISTS (SELECT 1 FROM todo.tenants WHERE tenant_id = $1)", &[tenant.into()], false);
    if found != Some(true) {
        errors::unknown_tenant(tenant);
    }
    REGISTERED.with(|r| *r.borrow_mut() = Some((lxid, tenant.to_string())));
}

/// The next todo id of `tenant`: one more than the last it was given. Ids are counted per
/// tenant in `todo.counters`, so they reveal nothing about other tenants. The counter row
/// stays locked until the transaction ends, which serializes id allocation within one tenant
/// (and only within it).
pub fn next_todo_id(tenant: &str) -> i64 {
    one::<i64>(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, 1)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = c.last_id + 1
         RETURNING last_id",
        &[tenant.into()],
        true,
    )
    .expect("RETURNING last_id is never NULL")
}

/// Reserves `n` consecutive todo ids of `tenant` with one update of its counter and returns
/// the first. A message of many `/todo add`s takes its ids this way: one counter update per
/// todo, each in its own subtransaction, would make every later update of the counter row in
/// the transaction walk a longer chain of row versions. An id whose add then fails is not
/// used again (ids may have gaps; they never repeat).
pub fn reserve_todo_ids(tenant: &str, n: i64) -> i64 {
    one::<i64>(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = c.last_id + $2
         RETURNING last_id - $2 + 1",
        &[tenant.into(), n.into()],
        true,
    )
    .expect("RETURNING is never NULL")
}

/// Moves `tenant`'s counter past an id the writer chose itself (an import or a restore), so
/// the next allocated id never collides with it.
pub fn claim_todo_id(tenant: &str, id: i64) {
    // Most explicit ids were reserved from this counter already (see `reserve_todo_ids`):
    // a read, without touching the row, settles those.
    let last = one::<i64>("SELECT last_id FROM todo.counters WHERE tenant_id = $1", &[tenant.into()], false);
    if last.is_some_and(|last| last >= id) {
        return;
    }
    exec(
        "INSERT INTO todo.counters AS c (tenant_id, last_id) VALUES ($1, $2)
         ON CONFLICT (tenant_id) DO UPDATE SET last_id = greatest(c.last_id, excluded.last_id)
         WHERE c.last_id < excluded.last_id",
        &[tenant.into(), id.into()],
    );
}

/// Call first in a (sub)transaction that is going to write. pgrx runs SPI read-only, on the
/// snapshot of the calling statement, until the current (sub)transaction has an xid; a write
/// command inside a fresh subtransaction would then not see what the commands before it in
/// the same message wrote. Taking the xid up front makes its lookups see them.
pub fn begin_write() {
    // SAFETY: assigns the current (sub)transaction's xid, or raises (e.g. on a standby).
    unsafe {
        pg_sys::GetCurrentTransactionId();
    }
}

// ---- the todos in a conversation's scope (the writ, the open block) ----

use crate::status::Status;
use crate::writ::render::{Marks, Row};

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

/// For todos `$2` of tenant `$1`: the open todos each waits for, and its subtasks' progress
/// (completed, not canceled).
const MARKS: &str = "SELECT i.id,
    (SELECT array_agg(d.depends_on ORDER BY d.depends_on)
       FROM todo.dependencies d JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
      WHERE d.tenant_id = $1 AND d.todo_id = i.id AND b.status IN ('pending', 'in_progress')),
    (SELECT ARRAY[count(*) FILTER (WHERE c.status = 'completed'), count(*) FILTER (WHERE c.status <> 'canceled')]
       FROM todo.todos c WHERE c.tenant_id = $1 AND c.parent_id = i.id)
  FROM unnest($2::int8[]) WITH ORDINALITY AS i(id, ord) ORDER BY i.ord";

fn rows(tenant: &str, sql: &str, args: &[DatumWithOid<'_>]) -> Vec<Row> {
    let mut any_marks = false;
    let mut rows = with_plan(sql, args, false, |table| {
        table
            .map(|r| {
                let status: String = r.get(3)?.unwrap_or_default();
                let holder: Option<String> = r.get(5)?;
                any_marks |= r.get::<bool>(7)?.unwrap_or(false) || r.get::<bool>(8)?.unwrap_or(false);
                Ok(Row {
                    id: r.get(1)?.unwrap_or_default(),
                    subject: r.get(2)?.unwrap_or_default(),
                    status: Status::parse(&status).unwrap_or(Status::Pending),
                    tenant_wide: r.get(4)?.unwrap_or(false),
                    marks: Marks {
                        claim: holder.map(|h| (h, r.get(6).ok().flatten().unwrap_or(false))),
                        ..Marks::default()
                    },
                })
            })
            .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    });
    if any_marks {
        let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        for (row, (blocked_by, progress)) in rows.iter_mut().zip(marks(tenant, ids)) {
            row.marks.blocked_by = blocked_by;
            row.marks.progress = progress;
        }
    }
    rows
}

/// For each of `ids` (todos of `tenant`), in order: the open todos it waits for, and its
/// subtasks' progress (completed, not canceled; None without subtasks).
fn marks(tenant: &str, ids: Vec<i64>) -> Vec<(Vec<i64>, Option<(i64, i64)>)> {
    with_plan(MARKS, &[tenant.into(), ids.into()], false, |table| {
        table
            .map(|r| {
                let progress: Vec<i64> = r.get(3)?.unwrap_or_default();
                Ok((
                    r.get::<Vec<i64>>(2)?.unwrap_or_default(),
                    match progress[..] {
                        [done, total] if total > 0 => Some((done, total)),
                        _ => None,
                    },
                ))
            })
            .collect::<Result<Vec<_>, pgrx::spi::Error>>()
    })
}

/// The todos in scope, in position order; only the open ones unless `all`.
pub fn scope_rows(tenant: &str, conversation: Option<&str>, all: bool) -> Vec<Row> {
    let sql = format!(
        "SELECT {ROW_COLUMNS} FROM todo.todos t
          WHERE t.{SCOPE} {} ORDER BY t.position, t.id",
        if all { "" } else { "AND t.status IN ('pending', 'in_progress')" }
    );
    rows(tenant, &sql, &[tenant.into(), conversation.into()])
}

/// One todo in scope, whatever its status (without its marks).
pub fn find_in_scope(tenant: &str, conversation: Option<&str>, id: i64) -> Option<Row> {
    let sql = format!("SELECT {ROW_PLAIN} FROM todo.todos t WHERE t.{SCOPE} AND t.id = $3");
    rows(tenant, &sql, &[tenant.into(), conversation.into(), id.into()]).pop()
}

/// Inserts a todo (agent and turn from the context) with the given id, or the next one, and
/// the given parent (a todo of the tenant), and returns its id.
pub fn insert_todo(
    tenant: &str,
    id: Option<i64>,
    conversation: Option<&str>,
    subject: &str,
    description: Option<&str>,
    parent: Option<i64>,
) -> i64 {
    one::<i64>(
        "INSERT INTO todo.todos (tenant_id, id, conversation_id, subject, description, parent_id)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
        &[tenant.into(), id.into(), conversation.into(), subject.into(), description.into(), parent.into()],
        true,
    )
    .expect("RETURNING id is never NULL")
}

/// Runs a one-row UPDATE of the writ; false when no row was there (deleted by a
/// concurrent transaction since it was read).
fn one_row(sql: &str, args: &[DatumWithOid<'_>]) -> bool {
    exec(sql, args) == 1
}

pub fn set_status(tenant: &str, id: i64, status: Status) -> bool {
    one_row(
        "UPDATE todo.todos SET status = $3 WHERE tenant_id = $1 AND id = $2 RETURNING id",
        &[tenant.into(), id.into(), status.as_str().into()],
    )
}

pub fn set_subject(tenant: &str, id: i64, text: &str) -> bool {
    one_row(
        "UPDATE todo.todos SET subject = $3 WHERE tenant_id = $1 AND id = $2 RETURNING id",
        &[tenant.into(), id.into(), text.into()],
    )
}

pub fn set_description(tenant: &str, id: i64, text: &str) -> bool {
    one_row(
        "UPDATE todo.todos SET description = $3 WHERE tenant_id = $1 AND id = $2 RETURNING id",
        &[tenant.into(), id.into(), text.into()],
    )
}


// ---- whole todos (the tool surfaces and REST) ----

use crate::model::Todo;
use serde_json::{Map, Value};

/// The columns a surface may write, in `todo.todos` spelling.
pub const WRITABLE: &[&str] = &[
    "conversation_id", "turn_id", "agent_id", "subject", "description", "active_form", "status",
    "priority", "position", "completion_criteria", "agent_type", "outcome",
];

/// A todo as JSON text, timestamps in epoch microseconds: parsed into `model::Todo`.
const AS_JSON: &str = "json_build_object(
    'id', t.id, 'conversation_id', t.conversation_id, 'turn_id', t.turn_id, 'agent_id', t.agent_id,
    'subject', t.subject, 'description', t.description, 'active_form', t.active_form,
    'status', t.status, 'priority', t.priority, 'position', t.position,
    'completion_criteria', t.completion_criteria, 'agent_type', t.agent_type, 'outcome', t.outcome,
    'created_us', (extract(epoch FROM t.created_at) * 1000000)::int8,
    'updated_us', (extract(epoch FROM t.updated_at) * 1000000)::int8,
    'started_us', (extract(epoch FROM t.started_at) * 1000000)::int8,
    'completed_us', (extract(epoch FROM t.completed_at) * 1000000)::int8)::text";

fn parse_todo(text: &str) -> Todo {
    serde_json::from_str(text).unwrap_or_else(|e| {
        errors::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("pg_todos: bad row: {e}"), "")
    })
}

fn parse_todos(table: pgrx::spi::SpiTupleTable<'_>) -> Result<Vec<Todo>, pgrx::spi::Error> {
    table.map(|r| r.get::<String>(1).map(|t| parse_todo(&t.unwrap_or_default()))).collect()
}

/// Runs a query whose rows are `AS_JSON`. Read-only until the transaction has an xid (see
/// `begin_write`): a read on a standby or in a read-only transaction works.
fn todo_rows(sql: &str, args: &[DatumWithOid<'_>]) -> Vec<Todo> {
    with_plan(sql, args, false, parse_todos)
}

/// Runs a writing statement whose RETURNING rows are `AS_JSON`.
fn written_rows(sql: &str, args: &[DatumWithOid<'_>]) -> Vec<Todo> {
    with_plan(sql, args, true, parse_todos)
}

/// Which todos a surface works on.
pub enum Filter<'a> {
    /// one todo of the tenant, any conversation
    Id(i64),
    /// one conversation's own rows (not the tenant-wide pool)
    Conversation(&'a str),
    /// one turn's rows
    Turn(&'a str),
    /// seed 000's REST list: a conversation plus the pool (Some), the pool only (None),
    /// or every row (no filter); optional status and agent
    Rest { conversation: Option<Option<&'a str>>, status: Option<&'a str>, agent: Option<&'a str>, limit: i64 },
}

/// The tenant's todos that match `filter`, in position order (REST: the seed's order).
pub fn todos(tenant: &str, filter: Filter<'_>) -> Vec<Todo> {
    let base = format!("SELECT {AS_JSON} FROM todo.todos t WHERE t.tenant_id = $1");
    match filter {
        Filter::Id(id) => todo_rows(&format!("{base} AND t.id = $2"), &[tenant.into(), id.into()]),
        Filter::Conversation(c) => todo_rows(
            &format!("{base} AND t.conversation_id = $2 ORDER BY t.position, t.id"),
            &[tenant.into(), c.into()],
        ),
        Filter::Turn(turn) => todo_rows(
            &format!("{base} AND t.turn_id = $2 ORDER BY t.position, t.id"),
            &[tenant.into(), turn.into()],
        ),
        Filter::Rest { conversation, status, agent, limit } => {
            let scope = match conversation {
                None => "true",
                Some(None) => "t.conversation_id IS NULL",
                Some(Some(_)) => "(t.conversation_id = $2 OR t.conversation_id IS NULL)",
            };
            let conv = conversation.flatten();
            todo_rows(
                &format!(
                    "{base} AND {scope} AND ($3::text IS NULL OR t.status = $3) AND ($4::text IS NULL OR t.agent_id = $4)
                     ORDER BY CASE t.status WHEN 'in_progress' THEN 0 WHEN 'pending' THEN 1 ELSE 2 END,
                              CASE WHEN t.status IN ('pending', 'in_progress') THEN t.position END,
                              t.updated_at DESC, t.id
                     LIMIT $5"
                ),
                &[tenant.into(), conv.into(), status.into(), agent.into(), limit.into()],
            )
        }
    }
}

/// The keys of `fields` that are writable columns, checked against `WRITABLE`.
fn columns(fields: &Map<String, Value>) -> Vec<&str> {
    fields.keys().map(String::as_str).filter(|k| WRITABLE.contains(k)).collect()
}

/// Inserts a todo of `tenant` with the given columns (others from their defaults: the
/// context's conversation, agent and turn unless given) and returns it.
pub fn insert(tenant: &str, fields: &Map<String, Value>) -> Todo {
    let cols = columns(fields);
    let list = cols.iter().map(|c| format!(", {c}")).collect::<String>();
    let values = cols.iter().map(|c| format!(", r.{c}")).collect::<String>();
    let sql = format!(
        "WITH t AS (INSERT INTO todo.todos (tenant_id{list})
                    SELECT $1{values} FROM jsonb_populate_record(NULL::todo.todos, $2) r
                    RETURNING *)
         SELECT {AS_JSON} FROM t"
    );
    let args = pgrx::JsonB(Value::Object(fields.clone()));
    written_rows(&sql, &[tenant.into(), args.into()]).pop().expect("INSERT … RETURNING gives the row")
}

/// Updates the given columns of one todo; None when the tenant has no such todo.
pub fn update(tenant: &str, id: i64, fields: &Map<String, Value>) -> Option<Todo> {
    let cols = columns(fields);
    if cols.is_empty() {
        return todos(tenant, Filter::Id(id)).pop();
    }
    let sql = format!(
        "WITH t AS (UPDATE todo.todos u SET ({}) = (SELECT {} FROM jsonb_populate_record(NULL::todo.todos, $3) r)
                     WHERE u.tenant_id = $1 AND u.id = $2 RETURNING u.*)
         SELECT {AS_JSON} FROM t",
        cols.join(", "),
        cols.iter().map(|c| format!("r.{c}")).collect::<Vec<_>>().join(", ")
    );
    let args = pgrx::JsonB(Value::Object(fields.clone()));
    written_rows(&sql, &[tenant.into(), id.into(), args.into()]).pop()
}

/// Deletes one todo; false when the tenant has no such todo.
pub fn delete(tenant: &str, id: i64) -> bool {
    exec("DELETE FROM todo.todos WHERE tenant_id = $1 AND id = $2 RETURNING id", &[tenant.into(), id.into()]) == 1
}

// ---- whole-list replaces, one statement per kind of change ----

fn record_columns(names: &[&str]) -> (String, String) {
    assert!(names.iter().all(|n| WRITABLE.contains(n)), "writable columns only");
    let set = names.iter().map(|c| format!(", {c} = r.{c}")).collect::<String>();
    let types = names.iter().map(|c| format!(", {c} text")).collect::<String>();
    (set, types)
}

/// Deletes these todos of the tenant.
pub fn delete_many(tenant: &str, ids: &[i64]) {
    if !ids.is_empty() {
        exec("DELETE FROM todo.todos WHERE tenant_id = $1 AND id = ANY($2) RETURNING id", &[tenant.into(), ids.to_vec().into()]);
    }
}

/// Moves these todos of the tenant to pending (a reopen before a move the lifecycle does not
/// allow in one step).
pub fn reopen_many(tenant: &str, ids: &[i64]) {
    if !ids.is_empty() {
        exec(
            "UPDATE todo.todos SET status = 'pending' WHERE tenant_id = $1 AND id = ANY($2) RETURNING id",
            &[tenant.into(), ids.to_vec().into()],
        );
    }
}

/// Updates many todos of the tenant in one statement: each row of `rows` is `{"id", "status",
/// "position", <names>…}` (the named columns are text).
pub fn update_many(tenant: &str, names: &[&str], rows: &[Value]) {
    if rows.is_empty() {
        return;
    }
    let (set, types) = record_columns(names);
    exec(
        &format!(
            "UPDATE todo.todos t SET status = r.status, position = r.position{set}
               FROM jsonb_to_recordset($2) AS r(id bigint, status text, position bigint{types})
              WHERE t.tenant_id = $1 AND t.id = r.id RETURNING t.id"
        ),
        &[tenant.into(), pgrx::JsonB(Value::Array(rows.to_vec())).into()],
    );
}

/// Inserts many todos of the tenant's conversation in one statement, ids given (reserved
/// with `reserve_todo_ids`); rows as for `update_many`.
pub fn insert_many(tenant: &str, conversation: &str, names: &[&str], rows: &[Value]) {
    if rows.is_empty() {
        return;
    }
    let (_, types) = record_columns(names);
    let list = names.iter().map(|c| format!(", {c}")).collect::<String>();
    let values = names.iter().map(|c| format!(", r.{c}")).collect::<String>();
    exec(
        &format!(
            "INSERT INTO todo.todos (tenant_id, conversation_id, id, status, position{list})
             SELECT $1, $2, r.id, r.status, r.position{values}
               FROM jsonb_to_recordset($3) AS r(id bigint, status text, position bigint{types})
              ORDER BY r.position RETURNING id"
        ),
        &[tenant.into(), conversation.into(), pgrx::JsonB(Value::Array(rows.to_vec())).into()],
    );
}

/// Sets `position` so that `ids` (todos of the tenant) come in this order, reusing the
/// positions they already hold, so they keep their place among other todos.
pub fn reorder(tenant: &str, ids: &[i64]) {
    exec(
        "WITH wanted AS (SELECT id, ord FROM unnest($2::int8[]) WITH ORDINALITY AS w(id, ord)),
              slots AS (SELECT position, row_number() OVER (ORDER BY position, id) AS ord
                          FROM todo.todos WHERE tenant_id = $1 AND id = ANY($2)),
              target AS (SELECT w.id, s.position FROM wanted w JOIN slots s USING (ord))
         UPDATE todo.todos t SET position = target.position FROM target
          WHERE t.tenant_id = $1 AND t.id = target.id AND t.position <> target.position",
        &[tenant.into(), ids.to_vec().into()],
    );
}

/// Serializes whole-list replaces of one list (a tenant's conversation) until the
/// transaction ends, so two concurrent replaces never interleave: the second reads the list
/// the first wrote. A transaction-level advisory lock on (hash of tenant, hash of
/// conversation); a hash collision only makes two unrelated replaces wait for each other.
pub fn lock_list(tenant: &str, conversation: &str) {
    exec("SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))", &[tenant.into(), conversation.into()]);
}

/// The LISTEN channel of a tenant's change notifications: `todo_` and the md5 of its id.
pub fn channel(tenant: &str) -> String {
    one::<String>("SELECT 'todo_' || md5($1)", &[tenant.into()], false).expect("md5 is never NULL")
}

/// Queues a change notification on the tenant's channel; PostgreSQL delivers it at commit
/// (never after a rollback). The payload carries ids only: `{"conversation_id": …, "ids": […]}`.
pub fn notify(tenant: &str, conversation: Option<&str>, ids: &[i64]) {
    let payload = serde_json::json!({ "conversation_id": conversation, "ids": ids }).to_string();
    exec("SELECT pg_notify('todo_' || md5($1), $2)", &[tenant.into(), payload.into()]);
}

// ---- claims, leases and dependencies (issue #7; the rules are in `claims`) ----

use crate::claims;

/// Unix epoch microseconds of a timestamptz expression, for `claims`.
macro_rules! epoch_us {
    ($e:literal) => {
        concat!("(extract(epoch FROM ", $e, ") * 1000000)::int8")
    };
}

/// A todo's claim state, its row locked (FOR UPDATE) until the transaction ends; None when
/// the tenant has no such todo in scope.
pub fn lock_claim_state(tenant: &str, conversation: Option<&str>, id: i64) -> Option<(claims::State, String)> {
    let sql = format!(
        "SELECT t.status, t.claimed_by, {}, t.fence, t.subject FROM todo.todos t
          WHERE t.{SCOPE} AND t.id = $3 FOR UPDATE",
        epoch_us!("t.lease_expires_at")
    );
    with_plan(&sql, &[tenant.into(), conversation.into(), id.into()], true, |rows| {
        if rows.is_empty() {
            return Ok(None);
        }
        let r = rows.first();
        let status: String = r.get(1)?.unwrap_or_default();
        let holder: Option<String> = r.get(2)?;
        let expires: Option<i64> = r.get(3)?;
        let claim = holder.zip(expires).map(|(holder, expires_us)| claims::Claim { holder, expires_us });
        let status = Status::parse(&status).unwrap_or(Status::Pending);
        Ok(Some((claims::State { id, status, claim, fence: r.get(4)?.unwrap_or(0) }, r.get(5)?.unwrap_or_default())))
    })
}

/// The open todos `id` waits for, in id order.
pub fn blockers(tenant: &str, id: i64) -> Vec<i64> {
    marks(tenant, vec![id]).pop().map(|(blocked_by, _)| blocked_by).unwrap_or_default()
}

/// A claim granted: the todo, its new fence and when the lease ends (epoch microseconds).
pub struct Granted {
    pub id: i64,
    pub subject: String,
    pub fence: i64,
    pub expires_us: i64,
}

fn granted(sql: &str, args: &[DatumWithOid<'_>]) -> Option<Granted> {
    with_plan(sql, args, true, |rows| {
        if rows.is_empty() {
            return Ok(None);
        }
        let r = rows.first();
        Ok(Some(Granted {
            id: r.get(1)?.unwrap_or_default(),
            subject: r.get(2)?.unwrap_or_default(),
            fence: r.get(3)?.unwrap_or_default(),
            expires_us: r.get(4)?.unwrap_or_default(),
        }))
    })
}

/// Ready: open, in scope, not held by a live claim (pending, or in progress under a lapsed
/// claim), not waiting for an open todo, and with no open subtasks. For `todo.todos t`,
/// `$1` tenant, `$2` conversation.
/// (The per-row checks run only when the tenant has dependencies or subtasks: a CASE over
/// an InitPlan.)
const READY: &str = "t.tenant_id = $1 AND (t.conversation_id = $2 OR t.conversation_id IS NULL)
    AND (t.status = 'pending' OR (t.status = 'in_progress' AND t.lease_expires_at <= now()))
    AND CASE WHEN (SELECT EXISTS (SELECT 1 FROM todo.dependencies x WHERE x.tenant_id = $1)) THEN
        NOT EXISTS (SELECT 1 FROM todo.dependencies d
                      JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
                     WHERE d.tenant_id = t.tenant_id AND d.todo_id = t.id
                       AND b.status IN ('pending', 'in_progress')) ELSE true END
    AND CASE WHEN (SELECT EXISTS (SELECT 1 FROM todo.todos x WHERE x.tenant_id = $1 AND x.parent_id IS NOT NULL)) THEN
        NOT EXISTS (SELECT 1 FROM todo.todos c
                     WHERE c.tenant_id = t.tenant_id AND c.parent_id = t.id
                       AND c.status IN ('pending', 'in_progress')) ELSE true END";

/// Claim order: priority (high, then medium or unset, then low), then position, then id.
const CLAIM_ORDER: &str = "CASE t.priority WHEN 'high' THEN 0 WHEN 'low' THEN 2 ELSE 1 END, t.position, t.id";

/// The ready todos in scope, in claim order, at most `limit`.
pub fn ready(tenant: &str, conversation: Option<&str>, limit: i64) -> Vec<Row> {
    let sql = format!("SELECT {ROW_COLUMNS} FROM todo.todos t WHERE {READY} ORDER BY {CLAIM_ORDER} LIMIT $3");
    rows(tenant, &sql, &[tenant.into(), conversation.into(), limit.into()])
}

/// Claims the first ready todo in scope for `agent` with a lease of `lease_s` seconds, in one
/// statement: the candidate row is locked with SKIP LOCKED (a row another claimer is taking
/// is passed over, never waited for or taken twice), then moved to in_progress with a new
/// fence. None when nothing is ready.
pub fn claim_next(tenant: &str, conversation: Option<&str>, agent: &str, lease_s: i64) -> Option<Granted> {
    let sql = format!(
        "WITH next AS (SELECT t.tenant_id, t.id FROM todo.todos t WHERE {READY}
                        ORDER BY {CLAIM_ORDER} LIMIT 1 FOR UPDATE OF t SKIP LOCKED)
         UPDATE todo.todos u
            SET status = 'in_progress', claimed_by = $3, fence = u.fence + 1,
                lease_expires_at = now() + make_interval(secs => $4)
           FROM next WHERE u.tenant_id = next.tenant_id AND u.id = next.id
         RETURNING u.id, u.subject, u.fence, {}",
        epoch_us!("u.lease_expires_at")
    );
    granted(&sql, &[tenant.into(), conversation.into(), agent.into(), (lease_s as f64).into()])
}

/// Claims todo `id` (locked and checked by the caller) for `agent`.
pub fn claim_id(tenant: &str, id: i64, agent: &str, lease_s: i64) -> Granted {
    granted(
        concat!(
            "UPDATE todo.todos u
                SET status = 'in_progress', claimed_by = $3, fence = u.fence + 1,
                    lease_expires_at = now() + make_interval(secs => $4)
              WHERE u.tenant_id = $1 AND u.id = $2
             RETURNING u.id, u.subject, u.fence, ",
            epoch_us!("u.lease_expires_at")
        ),
        &[tenant.into(), id.into(), agent.into(), (lease_s as f64).into()],
    )
    .expect("the row is locked by the caller")
}

/// Extends the lease of todo `id` (locked and checked by the caller) to `lease_s` seconds
/// from now; the new end, in epoch microseconds.
pub fn renew(tenant: &str, id: i64, lease_s: i64) -> i64 {
    one::<i64>(
        concat!(
            "UPDATE todo.todos u SET lease_expires_at = now() + make_interval(secs => $3)
              WHERE u.tenant_id = $1 AND u.id = $2 RETURNING ",
            epoch_us!("u.lease_expires_at")
        ),
        &[tenant.into(), id.into(), (lease_s as f64).into()],
        true,
    )
    .expect("the row is locked by the caller")
}

/// Serializes changes to a tenant's dependency graph until the transaction ends, so that two
/// concurrent blocks can never close a cycle between them (a one-key advisory lock: a
/// different lock space from `lock_list`'s two-key locks).
pub fn lock_dependencies(tenant: &str) {
    exec("SELECT pg_advisory_xact_lock(hashtextextended('todo.dependencies ' || $1, 0))", &[tenant.into()]);
}

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
