//! What the board reads of one todo: the todo as its detail panel shows it (every column a
//! person reads, its claim and lease, its open blockers, subtask progress, who changed it
//! last), its subtasks, what it waits for and what waits for it, and its history from
//! `todo.events`; and its version, which an edit made on what a person read must match.
//! Every list is bounded (`MAX_RELATED`, `MAX_HISTORY`), with a count of what was left out.

use std::sync::LazyLock;

use pgrx::JsonB;
use serde_json::Value;

use super::one;
use pg_todos_core::columns;

/// The most subtasks, blockers and blocked todos a detail lists, each.
pub const MAX_RELATED: i64 = 200;
/// The most events a detail's history lists (the newest), and the most comments (the newest).
pub const MAX_HISTORY: i64 = 100;
/// The most checklist items a detail lists (both lists: each holds at most 100).
const MAX_CHECKLIST_ITEMS: i64 = 200;

/// What the board shows of a todo besides its columns (members of `todo_object`, over
/// `todo.todos t`, the tenant in `$1`): its lease's seconds left, at most `$3` of the open
/// todos it waits for, subtask progress, who changed it last, its place in its list.
const TODO_OBJECT_DERIVED: &str = "'lease_seconds_left', CASE WHEN t.claimed_by IS NOT NULL
                 THEN greatest(0, ceil(extract(epoch FROM t.lease_expires_at - now())))::bigint END,
             'blocked_by', (SELECT coalesce(jsonb_agg(o.depends_on ORDER BY o.depends_on), '[]')
                              FROM (SELECT d.depends_on FROM todo.dependencies d
                                      JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
                                     WHERE d.tenant_id = $1 AND d.todo_id = t.id
                                       AND b.status NOT IN ('completed', 'canceled')
                                     ORDER BY d.depends_on LIMIT $3) o),
             'subtasks', (SELECT jsonb_build_object('done', count(*) FILTER (WHERE s.status = 'completed'), 'total', count(*))
                            FROM todo.todos s
                           WHERE s.tenant_id = $1 AND s.parent_id = t.id
                             AND s.status <> 'canceled' AND s.archived_at IS NULL
                          HAVING count(*) > 0),
             'updated_by', (SELECT e.agent_id FROM todo.events e
                             WHERE e.tenant_id = $1 AND e.todo_id = t.id ORDER BY e.version DESC LIMIT 1),
             'position', t.position";

/// One todo `t` as the board shows it (a SQL expression over `todo.todos t`, the tenant in
/// `$1`): every column a person reads (`columns::TABLE`'s board columns, each under its name),
/// and `TODO_OBJECT_DERIVED`. A jsonb object orders its keys itself: the order here shows nowhere.
fn todo_object() -> String {
    let shown = columns::TABLE.iter().filter(|c| c.board).map(|c| format!("'{0}', t.{0}", c.name));
    format!("jsonb_build_object({}, {TODO_OBJECT_DERIVED})", shown.collect::<Vec<_>>().join(", "))
}

/// `todo`'s statement, built once per backend.
static TODO: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {} FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = $2", todo_object()));

/// Todo `id` of `tenant`, archived or not, as the board shows it (the detail's `todo`, and what
/// a change answers with); None when the tenant has no such todo.
pub fn todo(tenant: &str, id: i64) -> Option<Value> {
    one::<JsonB>(&TODO, &[tenant.into(), id.into(), MAX_RELATED.into()], false).map(|j| j.0)
}

/// `detail`'s statement, built once per backend.
static DETAIL: LazyLock<String> = LazyLock::new(|| {
    let todo = todo_object();
    format!(
        "SELECT jsonb_build_object(
             'todo', {todo},
             'subtasks', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', s.id, 'subject', s.subject, 'status', s.status)
                                                    ORDER BY s.position, s.id), '[]')
                            FROM (SELECT s.id, s.subject, s.status, s.position FROM todo.todos s
                                   WHERE s.tenant_id = $1 AND s.parent_id = t.id AND s.archived_at IS NULL
                                   ORDER BY s.position, s.id LIMIT $3) s),
             'subtasks_omitted', greatest(0, (SELECT count(*) FROM todo.todos s
                                               WHERE s.tenant_id = $1 AND s.parent_id = t.id AND s.archived_at IS NULL) - $3),
             'blocked_by', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', b.id, 'subject', b.subject, 'status', b.status)
                                                      ORDER BY b.id), '[]')
                              FROM (SELECT b.id, b.subject, b.status FROM todo.dependencies d
                                      JOIN todo.todos b ON b.tenant_id = d.tenant_id AND b.id = d.depends_on
                                     WHERE d.tenant_id = $1 AND d.todo_id = t.id ORDER BY b.id LIMIT $3) b),
             'blocks', (SELECT coalesce(jsonb_agg(jsonb_build_object('id', w.id, 'subject', w.subject, 'status', w.status)
                                                  ORDER BY w.id), '[]')
                          FROM (SELECT w.id, w.subject, w.status FROM todo.dependencies d
                                  JOIN todo.todos w ON w.tenant_id = d.tenant_id AND w.id = d.todo_id
                                 WHERE d.tenant_id = $1 AND d.depends_on = t.id ORDER BY w.id LIMIT $3) w),
             'history', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                     'version', e.version, 'action', e.action, 'at', e.event_at, 'agent_id', e.agent_id,
                                     'old_status', e.old_status, 'new_status', e.new_status, 'changes', e.changes)
                                   ORDER BY e.version DESC), '[]')
                           FROM (SELECT e.* FROM todo.events e WHERE e.tenant_id = $1 AND e.todo_id = t.id
                                  ORDER BY e.version DESC LIMIT $4) e),
             'history_omitted', greatest(0, (SELECT count(*) FROM todo.events e
                                              WHERE e.tenant_id = $1 AND e.todo_id = t.id) - $4),
             'comments', (SELECT coalesce(jsonb_agg(jsonb_build_object('author', c.author, 'body', c.body, 'at', c.created_at)
                                                    ORDER BY c.position), '[]')
                            FROM (SELECT c.* FROM todo.comments c WHERE c.tenant_id = $1 AND c.todo_id = t.id
                                   ORDER BY c.position DESC LIMIT $4) c),
             'comments_omitted', greatest(0, (SELECT count(*) FROM todo.comments c
                                               WHERE c.tenant_id = $1 AND c.todo_id = t.id) - $4),
             'checklists', (SELECT jsonb_build_object(
                                     'acceptance', coalesce(jsonb_agg(jsonb_build_object('position', i.position, 'text', i.text,
                                                                                         'checked', i.checked)
                                                                      ORDER BY i.position) FILTER (WHERE i.kind = 'acceptance'), '[]'),
                                     'done', coalesce(jsonb_agg(jsonb_build_object('position', i.position, 'text', i.text,
                                                                                   'checked', i.checked)
                                                                ORDER BY i.position) FILTER (WHERE i.kind = 'done'), '[]'))
                              FROM (SELECT i.* FROM todo.checklist_items i WHERE i.tenant_id = $1 AND i.todo_id = t.id
                                     ORDER BY i.kind, i.position LIMIT $5) i))
           FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = $2"
    )
});

/// Todo `id` of `tenant`, archived or not, as the board's detail shows it:
/// `{"todo", "subtasks", "subtasks_omitted", "blocked_by", "blocks", "history",
/// "history_omitted", "comments", "comments_omitted", "checklists": {"acceptance", "done"}}`;
/// None when the tenant has no such todo.
pub fn detail(tenant: &str, id: i64) -> Option<Value> {
    let args = [tenant.into(), id.into(), MAX_RELATED.into(), MAX_HISTORY.into(), MAX_CHECKLIST_ITEMS.into()];
    one::<JsonB>(&DETAIL, &args, false).map(|j| j.0)
}

/// Of todo `id` of `tenant`: its version (bumped by every update, a lease renewal too) and the
/// version of its newest recorded change (its newest event; 0 for none), in one statement;
/// None when there is no such todo. The caller holds the todo's lock, so both stay as they are
/// until the transaction ends.
pub fn versions(tenant: &str, id: i64) -> Option<(i64, i64)> {
    one::<Vec<i64>>(
        "SELECT ARRAY[t.version, coalesce((SELECT e.version FROM todo.events e
                                            WHERE e.tenant_id = $1 AND e.todo_id = $2
                                            ORDER BY e.version DESC LIMIT 1), 0)]::bigint[]
           FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = $2",
        &[tenant.into(), id.into()],
        false,
    )
    .and_then(|v| Some((*v.first()?, *v.get(1)?)))
}

/// The most todos one page or one answer of changes holds (`page`, `items`), and the most of
/// the open todos each lists as its blockers (as `todo.board()`).
pub const MAX_ITEMS: usize = 200;
const ITEM_BLOCKERS: i64 = 50;
/// The most rows of "needs attention" the board reads (the oldest).
pub const MAX_ATTENTION: i64 = 200;

/// A todo `t` as a row or card of the board shows it (a SQL expression): `todo_object` without
/// the long texts (the detail panel reads those).
fn item_object() -> String {
    format!("({} - 'description' - 'completion_criteria' - 'outcome')", todo_object())
}

/// `items`' statement, built once per backend.
static ITEMS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT coalesce(jsonb_agg({} ORDER BY t.id), '[]') FROM todo.todos t WHERE t.tenant_id = $1 AND t.id = ANY($2)",
        item_object()
    )
});

/// Todos `ids` of `tenant` (archived ones too, with their `archived_at` and list), as rows and
/// cards show them, by id; ids with no todo are left out.
pub fn items(tenant: &str, ids: &[i64]) -> Value {
    one::<JsonB>(&ITEMS, &[tenant.into(), ids.to_vec().into(), ITEM_BLOCKERS.into()], false)
        .map_or(Value::Array(Vec::new()), |j| j.0)
}

/// A page's statement (`$1` the tenant, `$2` the list, `$3` the blockers listed, after
/// position `$4` and id `$5`, at most `$6`), for a named list or (`pool`) the tenant-wide pool.
fn page_statement(pool: bool) -> String {
    let list = if pool { "t.conversation_id IS NULL AND $2::text IS NULL" } else { "t.conversation_id = $2" };
    format!(
        "SELECT coalesce(jsonb_agg(p.item ORDER BY p.position, p.id), '[]')
           FROM (SELECT {} AS item, t.position, t.id FROM todo.todos t
                  WHERE t.tenant_id = $1 AND {list} AND t.archived_at IS NULL AND (t.position, t.id) > ($4, $5)
                  ORDER BY t.position, t.id LIMIT $6) p",
        item_object()
    )
}

static LIST_PAGE: LazyLock<String> = LazyLock::new(|| page_statement(false));
static POOL_PAGE: LazyLock<String> = LazyLock::new(|| page_statement(true));

/// The todos of list `list` (None: the tenant-wide pool) that are not archived, in list order
/// (position, then id), after the place `after` (position, id; None: from the start): at most
/// `size` (up to `MAX_ITEMS`) and one more, which tells that more follow.
pub fn page(tenant: &str, list: Option<&str>, after: Option<(i64, i64)>, size: usize) -> Vec<Value> {
    let (position, id) = after.unwrap_or((i64::MIN, i64::MIN));
    let statement = if list.is_some() { &LIST_PAGE } else { &POOL_PAGE };
    let limit = size.min(MAX_ITEMS) as i64 + 1;
    let args = [tenant.into(), list.into(), ITEM_BLOCKERS.into(), position.into(), id.into(), limit.into()];
    match one::<JsonB>(statement, &args, false).map(|j| j.0) {
        Some(Value::Array(todos)) => todos,
        _ => Vec::new(),
    }
}

/// `attention`'s statement: the board's "needs attention" rows, as `todo.board()` reads them.
const ATTENTION: &str = "SELECT jsonb_build_object(
        'attention', coalesce(jsonb_agg(to_jsonb(a) - 'tenant_id' - 'all_rows' ORDER BY a.since, a.todo_id), '[]'),
        'attention_omitted', coalesce(max(a.all_rows) - count(*), 0))
      FROM (SELECT n.*, count(*) OVER () AS all_rows FROM todo.needs_attention n
             WHERE n.tenant_id = $1 ORDER BY n.since, n.todo_id LIMIT $2) a";

/// `{"attention", "attention_omitted"}` of `tenant`: its `todo.needs_attention` rows, the
/// oldest `MAX_ATTENTION`, and how many more there are.
pub fn attention(tenant: &str) -> Value {
    one::<JsonB>(ATTENTION, &[tenant.into(), MAX_ATTENTION.into()], false).map_or(Value::Null, |j| j.0)
}

/// The most lists made on the board and still empty that `empty_lists` names.
pub const MAX_EMPTY_LISTS: i64 = 50;

/// The lists of `tenant` made on the board (`todo.board_act`'s `create_list`) that hold no todo
/// yet, the newest first, at most `MAX_EMPTY_LISTS`: what `todo.board()` shows with no todos.
pub fn empty_lists(tenant: &str) -> Value {
    one::<JsonB>(
        "SELECT coalesce(jsonb_agg(m.list ORDER BY m.at DESC, m.list), '[]')
           FROM (SELECT substr(l.name, 6) AS list, (l.properties->'board'->>'at')::timestamptz AS at
                   FROM todo.locks l
                  WHERE l.tenant_id = $1 AND starts_with(l.name, 'list:') AND l.properties ? 'board'
                    AND NOT EXISTS (SELECT 1 FROM todo.todos e WHERE e.tenant_id = $1
                                       AND e.conversation_id = substr(l.name, 6) AND e.archived_at IS NULL)
                  ORDER BY 2 DESC, 1 LIMIT $2) m",
        &[tenant.into(), MAX_EMPTY_LISTS.into()],
        false,
    )
    .map_or(Value::Array(Vec::new()), |j| j.0)
}

/// What `search` looks for: each None matches everything.
pub struct Search<'a> {
    /// Some(None): the tenant-wide pool; Some(Some(name)): that list; None: every list
    pub list: Option<Option<&'a str>>,
    pub status: Option<&'a str>,
    /// words the subject or the description holds (case-insensitive)
    pub text: Option<&'a str>,
    /// part of the claim holder, the assignee, the maker or the last actor (case-insensitive)
    pub who: Option<&'a str>,
    /// the archived todos instead of those on their lists
    pub archived: bool,
}

/// A search's statement: of the todos on their lists (in list order), or (`archived`) of the
/// archived ones (the newest archived first).
fn search_statement(archived: bool) -> String {
    let (which, order) = if archived {
        ("t.archived_at IS NOT NULL", "t.archived_at DESC, t.id DESC")
    } else {
        ("t.archived_at IS NULL", "t.position, t.id")
    };
    let outer = order.replace("t.", "s.");
    format!(
        "SELECT coalesce(jsonb_agg(s.item ORDER BY s.conversation_id COLLATE \"C\" NULLS FIRST, {outer}), '[]')
           FROM (SELECT {} AS item, t.conversation_id, t.archived_at, t.position, t.id FROM todo.todos t
                  WHERE t.tenant_id = $1 AND {which}
                    AND (NOT $2 OR t.conversation_id = $4 OR (t.conversation_id IS NULL AND $4::text IS NULL))
                    AND ($5::text IS NULL OR t.status = $5)
                    AND ($6::text IS NULL OR t.subject ILIKE $6 OR t.description ILIKE $6)
                    AND ($7::text IS NULL OR t.claimed_by ILIKE $7 OR t.owner ILIKE $7 OR t.agent_id ILIKE $7
                         OR (SELECT e.agent_id FROM todo.events e WHERE e.tenant_id = $1 AND e.todo_id = t.id
                              ORDER BY e.version DESC LIMIT 1) ILIKE $7)
                  ORDER BY t.conversation_id COLLATE \"C\" NULLS FIRST, {order} LIMIT $8) s",
        item_object()
    )
}

static SEARCH: LazyLock<String> = LazyLock::new(|| search_statement(false));
static SEARCH_ARCHIVED: LazyLock<String> = LazyLock::new(|| search_statement(true));

/// A LIKE pattern that matches text holding `part` (its `%`, `_` and `\` taken as they are).
fn holding(part: &str) -> String {
    let escaped: String =
        part.chars().flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] }).collect();
    format!("%{escaped}%")
}

/// The todos of `tenant` that are not archived (`what.archived`: that are) and match `what`, as
/// rows show them, by list (the pool first) and in list order (archived: the newest archived
/// first): at most `MAX_ITEMS` and one more, which tells that more match. Reads every todo of the tenant (no index holds words): bounded by its answer only.
pub fn search(tenant: &str, what: &Search<'_>) -> Vec<Value> {
    let args = [
        tenant.into(),
        what.list.is_some().into(),
        ITEM_BLOCKERS.into(),
        what.list.flatten().into(),
        what.status.into(),
        what.text.map(holding).into(),
        what.who.map(holding).into(),
        (MAX_ITEMS as i64 + 1).into(),
    ];
    let statement = if what.archived { &SEARCH_ARCHIVED } else { &SEARCH };
    match one::<JsonB>(statement, &args, false).map(|j| j.0) {
        Some(Value::Array(todos)) => todos,
        _ => Vec::new(),
    }
}
