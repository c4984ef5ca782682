//! Inserts, updates and deletes of todos, one row or a whole list at a time. Callers lock
//! the rows first (`read::lock`, `locks`) and check the rules; these only write.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use serde_json::{Map, Value};

use super::read::{parse_todos, todo_columns, Find};
use super::{exec, with_plan};
use crate::claims::Need;
use crate::todo::Todo;
use pg_todos_core::columns;

/// The columns a surface may write, in `todo.todos` spelling (`columns::TABLE`'s writable
/// ones).
pub const WRITABLE: &[&str] = &columns::WRITABLE;

/// The SQL type of a writable column in a record of `jsonb_to_recordset` (its type in
/// `columns::TABLE`; text for a name it does not have).
fn column_type(name: &str) -> &'static str {
    columns::by_name(name).map_or("text", |c| c.sql_type)
}

/// Column `name` of the JSON object in parameter `$param`, converted as
/// `jsonb_populate_record` converts it. An expression, not a subquery or a FROM item: Citus
/// sends an INSERT … VALUES or an UPDATE of one tenant to its worker as one statement (an
/// INSERT … SELECT would be run through the coordinator by COPY, which row-level security
/// refuses).
fn field(name: &str, param: usize) -> String {
    format!("(jsonb_populate_record(NULL::todo.todos, ${param})).{name}")
}

/// The keys of `fields` that are writable columns, checked against `WRITABLE`.
fn columns(fields: &Map<String, Value>) -> Vec<&str> {
    fields.keys().map(String::as_str).filter(|k| WRITABLE.contains(k)).collect()
}

/// A column's value as a parameter of its own type, when the JSON value converts to it
/// exactly as `jsonb_populate_record` would convert it (a string or null for a text column,
/// any value for `metadata`, an integer for `position`); None: leave it to
/// `jsonb_populate_record` (`field`), which also raises its errors.
fn typed(name: &str, value: &Value) -> Option<DatumWithOid<'static>> {
    match (column_type(name), value) {
        ("jsonb", Value::Null) => Some(Option::<pgrx::JsonB>::None.into()),
        ("bigint", Value::Null) => Some(Option::<i64>::None.into()),
        ("timestamptz", Value::Null) => Some(Option::<pgrx::datum::TimestampWithTimeZone>::None.into()),
        ("text", Value::Null) => Some(Option::<String>::None.into()),
        ("text", Value::String(s)) => Some(s.clone().into()),
        ("jsonb", value) => Some(pgrx::JsonB(value.clone()).into()),
        ("bigint", Value::Number(n)) => n.as_i64().map(Into::into),
        _ => None,
    }
}

/// The SQL expression of each column and the parameters after `first` (the first parameter
/// number they take): a typed parameter where `typed` converts the value, else `field` of the
/// whole object (then the last parameter).
fn values(fields: &Map<String, Value>, cols: &[&str], first: usize) -> (Vec<String>, Vec<DatumWithOid<'static>>) {
    let mut exprs = Vec::with_capacity(cols.len());
    let mut args = Vec::new();
    let mut whole = false;
    for col in cols {
        match typed(col, &fields[*col]) {
            Some(arg) => {
                args.push(arg);
                exprs.push(format!("${}", first + args.len() - 1));
            }
            None => {
                whole = true;
                exprs.push(String::new());
            }
        }
    }
    if whole {
        let param = first + args.len();
        for (expr, col) in exprs.iter_mut().zip(cols) {
            if expr.is_empty() {
                *expr = field(col, param);
            }
        }
        args.push(pgrx::JsonB(Value::Object(fields.clone())).into());
    }
    (exprs, args)
}

/// `col = expr, …`: an UPDATE's SET list.
fn assignments(cols: &[&str], exprs: &[String]) -> String {
    cols.iter().zip(exprs).map(|(c, e)| format!("{c} = {e}")).collect::<Vec<_>>().join(", ")
}

/// Inserts a todo of `tenant` with the given id (None: the tenant's next, from the row
/// trigger), parent and columns (others from their defaults: the context's conversation,
/// agent and turn unless given) and returns it.
pub fn insert(tenant: &str, id: Option<i64>, parent: Option<i64>, fields: &Map<String, Value>) -> Todo {
    let cols = columns(fields);
    let list = cols.iter().map(|c| format!(", {c}")).collect::<String>();
    let (exprs, rest) = values(fields, &cols, 4);
    let values = exprs.iter().map(|e| format!(", {e}")).collect::<String>();
    let sql = format!(
        "INSERT INTO todo.todos (tenant_id, id, parent_id{list}) VALUES ($1, $2, $3{values})
         RETURNING {returning}",
        returning = todo_columns()
    );
    let mut args: Vec<DatumWithOid<'_>> = vec![tenant.into(), id.into(), parent.into()];
    args.extend(rest);
    written_rows(&sql, &args).pop().expect("INSERT … RETURNING gives the row")
}

/// Updates the given columns of one todo; None when the tenant has no such todo.
pub fn update(tenant: &str, id: i64, fields: &Map<String, Value>) -> Option<Todo> {
    let cols = columns(fields);
    if cols.is_empty() {
        return super::read::todo(tenant, id);
    }
    let (exprs, rest) = values(fields, &cols, 3);
    let sql = format!(
        "UPDATE todo.todos u SET {} WHERE u.tenant_id = $1 AND u.id = $2 RETURNING {}",
        assignments(&cols, &exprs),
        todo_columns()
    );
    let mut args: Vec<DatumWithOid<'_>> = vec![tenant.into(), id.into()];
    args.extend(rest);
    written_rows(&sql, &args).pop()
}

/// What the row trigger found when it vetted an update of `update_vetted`.
pub enum Vetted {
    /// the lifecycle or a claim refuses the change: the row was left as it was
    Refused,
    /// the status alone was written, and it is the todo's own: the row was left as it was
    Unchanged(Todo),
    /// the todo as it was before the update, which went ahead
    Before(Todo),
}

/// What the row trigger checks of an update `update_vetted` runs, besides the lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vet {
    /// the claim rule (`claims::check`): a change of status (`Need::Status`) or the actor's
    /// live claim (`Need::Holder`: a release)
    pub need: Need,
    /// the fence presented, when one is
    pub fence: Option<i64>,
    /// the todo must be open (a finish never finishes a finished todo again)
    pub open: bool,
}

impl Vet {
    /// A change of status or columns (`ops::single::change`).
    pub const CHANGE: Vet = Vet { need: Need::Status, fence: None, open: false };
}

/// The update `update_vetted` or `update_vetted_many` is running: the todos it may write,
/// each with what the trigger checks; whether it writes the status alone; and what the
/// trigger found of each.
struct Vetting {
    tenant: String,
    vets: Vets,
    status_only: bool,
    found: Found,
}

/// What the row trigger found of each todo it vetted, in the order it vetted them.
type Found = Vec<(i64, Vetted)>;

/// The todos an update may write, each with what the trigger checks: one (a single todo's
/// change builds no map), or a batch.
enum Vets {
    One(i64, Vet),
    Many(HashMap<i64, Vet>),
}

impl Vets {
    /// What the trigger checks of todo `id`; None: the update may not write it.
    fn get(&self, id: i64) -> Option<Vet> {
        match self {
            Vets::One(one, vet) => (*one == id).then_some(*vet),
            Vets::Many(vets) => vets.get(&id).copied(),
        }
    }
}

thread_local! {
    static VETTING: RefCell<Option<Vetting>> = const { RefCell::new(None) };
}

/// Ends the vetting when the update returns, or unwinds from an error.
struct VettingEnds;

impl Drop for VettingEnds {
    fn drop(&mut self) {
        VETTING.with(|v| v.borrow_mut().take());
    }
}

/// For the row trigger: whether an update of todo `id` of `tenant` is being vetted (Some:
/// whether it writes the status alone, and what to check).
pub fn vetting(tenant: &str, id: i64) -> Option<(bool, Vet)> {
    VETTING.with(|v| {
        let v = v.borrow();
        let v = v.as_ref().filter(|v| v.tenant == tenant)?;
        Some((v.status_only, v.vets.get(id)?))
    })
}

/// Whether any update is being vetted (the trigger's first, cheap question).
pub fn vetting_any() -> bool {
    VETTING.with(|v| v.borrow().is_some())
}

/// For the row trigger: what it found vetting the update of todo `id`.
pub fn vetted(id: i64, found: Vetted) {
    VETTING.with(|v| {
        if let Some(v) = v.borrow_mut().as_mut() {
            v.found.push((id, found));
        }
    });
}

/// Updates the given columns (`status` among them, or alone) of todo `id` of the tenant that
/// `find` finds, in one statement that also locks it: the row trigger vets the change as the
/// operation would before it writes (the lifecycle, the claim as `vet` says, no change at
/// all) and hands back the row as it was. The todo before and after; None when nothing was
/// written because no such todo is found or the change is refused: the caller then locks the
/// todo and checks it itself, for its errors. Not on a distributed store, whose trigger runs
/// on a worker.
pub fn update_vetted(
    tenant: &str,
    find: Find<'_>,
    id: i64,
    fields: &Map<String, Value>,
    vet: Vet,
) -> Option<(Todo, Todo)> {
    let (mut after, mut found) = vetted_update(tenant, find, Vets::One(id, vet), fields)?;
    match (after.pop(), found.pop().map(|(_, f)| f)) {
        (Some(after), Some(Vetted::Before(before))) => Some((before, after)),
        (None, Some(Vetted::Unchanged(todo))) => Some((todo.clone(), todo)),
        _ => None,
    }
}

/// `update_vetted` of several todos in one statement, each vetted as its own `Vet` says: the
/// todos written (or whose own status alone was asked), each as it was before, by id. A todo
/// not there was not found, or its change was refused: nothing of it was written, and the
/// caller takes the long way for it. Empty on a distributed store.
pub fn update_vetted_many(
    tenant: &str,
    find: Find<'_>,
    vets: HashMap<i64, Vet>,
    fields: &Map<String, Value>,
) -> HashMap<i64, Todo> {
    let Some((after, found)) = vetted_update(tenant, find, Vets::Many(vets), fields) else {
        return HashMap::new();
    };
    let written: std::collections::HashSet<i64> = after.iter().map(|t| t.id).collect();
    found
        .into_iter()
        .filter_map(|(id, f)| match f {
            Vetted::Before(before) if written.contains(&id) => Some((id, before)),
            Vetted::Unchanged(todo) if !written.contains(&id) => Some((id, todo)),
            _ => None,
        })
        .collect()
}

/// The statement of `update_vetted` and `update_vetted_many`: the rows written, and what the
/// row trigger found of each todo it vetted. None when there is nothing to write, or on a
/// distributed store.
fn vetted_update(tenant: &str, find: Find<'_>, vets: Vets, fields: &Map<String, Value>) -> Option<(Vec<Todo>, Found)> {
    let cols = columns(fields);
    if cols.is_empty() || super::distribution::distributed() {
        return None;
    }
    let (exprs, rest) = values(fields, &cols, 5);
    // one todo: `t.id = $2`, whose plan PostgreSQL keeps (generic), as `read::lock` does
    let (one, ids): (bool, DatumWithOid<'_>) = match &vets {
        Vets::One(id, _) => (true, (*id).into()),
        Vets::Many(vets) => (false, vets.keys().copied().collect::<Vec<i64>>().into()),
    };
    let sql = format!(
        "UPDATE todo.todos t SET {} WHERE t.tenant_id = $1 AND t.id = {} AND {} RETURNING {}",
        assignments(&cols, &exprs),
        if one { "$2" } else { "ANY($2)" },
        find.condition(),
        todo_columns()
    );
    let [a, b] = find.arguments();
    let mut args: Vec<DatumWithOid<'_>> = vec![tenant.into(), ids, a.into(), b.into()];
    args.extend(rest);
    let status_only = cols == ["status"];
    let vetting = Vetting { tenant: tenant.to_string(), vets, status_only, found: Vec::new() };
    VETTING.with(|v| *v.borrow_mut() = Some(vetting));
    let ends = VettingEnds;
    let after = written_rows(&sql, &args);
    let found = VETTING.with(|v| v.borrow_mut().as_mut().map(|v| std::mem::take(&mut v.found)));
    drop(ends);
    Some((after, found.unwrap_or_default()))
}

/// Deletes one todo; false when the tenant has no such todo.
pub fn delete(tenant: &str, id: i64) -> bool {
    exec("DELETE FROM todo.todos WHERE tenant_id = $1 AND id = $2 RETURNING id", &[tenant.into(), id.into()]) == 1
}

/// Runs a writing statement whose RETURNING rows are `TODO_COLUMNS`.
fn written_rows(sql: &str, args: &[DatumWithOid<'_>]) -> Vec<Todo> {
    with_plan(sql, args, true, parse_todos)
}

/// Deletes these todos of the tenant.
pub fn delete_many(tenant: &str, ids: &[i64]) {
    if !ids.is_empty() {
        exec(
            "DELETE FROM todo.todos WHERE tenant_id = $1 AND id = ANY($2) RETURNING id",
            &[tenant.into(), ids.to_vec().into()],
        );
    }
}

/// Archives these (finished) todos of the tenant: off every list, kept as history.
pub fn archive_many(tenant: &str, ids: &[i64]) {
    if !ids.is_empty() {
        exec(
            "UPDATE todo.todos SET archived_at = now() WHERE tenant_id = $1 AND id = ANY($2) RETURNING id",
            &[tenant.into(), ids.to_vec().into()],
        );
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

/// One todo of a list written whole: its id, status, position and subject, and its values
/// of the other columns every row of the list sets (the `names` given with the rows).
pub struct ListRow<'a> {
    pub id: i64,
    pub status: &'static str,
    pub position: i64,
    pub subject: &'a str,
    pub columns: &'a Map<String, Value>,
}

/// The rows' values of each column `names` names, one array each (a column's type is text,
/// a value a string or null); None when a value is of another JSON type: the caller then
/// hands the rows to `jsonb_to_recordset`, which converts it (or raises its error).
fn text_arrays<'a>(names: &[&str], rows: &[ListRow<'a>]) -> Option<Vec<Vec<Option<&'a str>>>> {
    assert!(names.iter().all(|n| WRITABLE.contains(n)), "writable columns only");
    names
        .iter()
        .map(|name| {
            if column_type(name) != "text" {
                return None;
            }
            rows.iter()
                .map(|r| match r.columns.get(*name) {
                    None | Some(Value::Null) => Some(None),
                    Some(Value::String(s)) => Some(Some(s.as_str())),
                    Some(_) => None,
                })
                .collect()
        })
        .collect()
}

/// The FROM item of a list's rows and its parameters, from parameter `first` on: the arrays
/// of `text_arrays` through `unnest` (whose row count PostgreSQL knows, so an update joins
/// each row by its key), else the rows as JSON through `jsonb_to_recordset`. Columns `id`,
/// `status`, `position`, `subject`, then `names`.
fn list_rows<'a>(names: &[&str], rows: &[ListRow<'a>], first: usize) -> (String, Vec<DatumWithOid<'a>>) {
    if let Some(arrays) = text_arrays(names, rows) {
        let params = (first..first + 4 + names.len()).map(|p| format!("${p}")).collect::<Vec<_>>().join(", ");
        let columns = names.iter().map(|c| format!(", {c}")).collect::<String>();
        let mut args: Vec<DatumWithOid<'a>> = vec![
            rows.iter().map(|r| r.id).collect::<Vec<i64>>().into(),
            rows.iter().map(|r| r.status).collect::<Vec<&str>>().into(),
            rows.iter().map(|r| r.position).collect::<Vec<i64>>().into(),
            rows.iter().map(|r| r.subject).collect::<Vec<&str>>().into(),
        ];
        args.extend(arrays.into_iter().map(DatumWithOid::from));
        return (format!("unnest({params}) AS r(id, status, position, subject{columns})"), args);
    }
    let types = names.iter().map(|c| format!(", {c} {}", column_type(c))).collect::<String>();
    let json: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut row = r.columns.clone();
            row.insert("id".into(), r.id.into());
            row.insert("status".into(), r.status.into());
            row.insert("position".into(), r.position.into());
            row.insert("subject".into(), r.subject.into());
            Value::Object(row)
        })
        .collect();
    (
        format!("jsonb_to_recordset(${first}) AS r(id bigint, status text, position bigint, subject text{types})"),
        vec![pgrx::JsonB(Value::Array(json)).into()],
    )
}

/// Updates many todos of the tenant in one statement, each to its row's status, position,
/// subject and `names` columns.
pub fn update_many(tenant: &str, names: &[&str], rows: &[ListRow<'_>]) {
    if rows.is_empty() {
        return;
    }
    let set = names.iter().map(|c| format!(", {c} = r.{c}")).collect::<String>();
    let (from, rest) = list_rows(names, rows, 2);
    let mut args: Vec<DatumWithOid<'_>> = vec![tenant.into()];
    args.extend(rest);
    exec(
        &format!(
            "UPDATE todo.todos t SET status = r.status, position = r.position, subject = r.subject{set}
               FROM {from} WHERE t.tenant_id = $1 AND t.id = r.id RETURNING t.id"
        ),
        &args,
    );
}

/// Inserts many todos of the tenant's conversation in one statement, in position order, ids
/// given (reserved with `reserve_todo_ids`); rows as for `update_many`.
pub fn insert_many(tenant: &str, conversation: &str, names: &[&str], rows: &[ListRow<'_>]) {
    if rows.is_empty() {
        return;
    }
    let list = names.iter().map(|c| format!(", {c}")).collect::<String>();
    if super::distribution::distributed() {
        // one INSERT … VALUES per row, in position order (see `field`)
        let values = names.iter().map(|c| format!(", {}", field(c, 7))).collect::<String>();
        let sql = format!(
            "INSERT INTO todo.todos (tenant_id, conversation_id, id, status, position, subject{list})
             VALUES ($1, $2, $3, $4, $5, $6{values})"
        );
        let mut order: Vec<&ListRow<'_>> = rows.iter().collect();
        order.sort_by_key(|r| r.position);
        for r in order {
            exec(
                &sql,
                &[
                    tenant.into(),
                    conversation.into(),
                    r.id.into(),
                    r.status.into(),
                    r.position.into(),
                    r.subject.into(),
                    pgrx::JsonB(Value::Object(r.columns.clone())).into(),
                ],
            );
        }
        return;
    }
    let (from, rest) = list_rows(names, rows, 3);
    let mut args: Vec<DatumWithOid<'_>> = vec![tenant.into(), conversation.into()];
    args.extend(rest);
    exec(
        &format!(
            "INSERT INTO todo.todos (tenant_id, conversation_id, id, status, position, subject{list})
             SELECT $1, $2, r.id, r.status, r.position, r.subject{list_r}
               FROM {from} ORDER BY r.position RETURNING id",
            list_r = names.iter().map(|c| format!(", r.{c}")).collect::<String>()
        ),
        &args,
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

/// Clears `parent_id` of the subtasks of deleted todo `id` (on a Citus worker, where the
/// subtask foreign key that does it on one server cannot exist).
pub fn orphan_subtasks(tenant: &str, id: i64) {
    exec("UPDATE todo.todos SET parent_id = NULL WHERE tenant_id = $1 AND parent_id = $2", &[tenant.into(), id.into()]);
}

/// Makes todo `id` a subtask of `parent` (None: of no todo); the caller holds its lock. The
/// row trigger refuses a parent of another tenant and a cycle through subtasks and
/// dependencies.
pub fn set_parent(tenant: &str, id: i64, parent: Option<i64>) {
    exec(
        "UPDATE todo.todos SET parent_id = $3 WHERE tenant_id = $1 AND id = $2 AND parent_id IS DISTINCT FROM $3",
        &[tenant.into(), id.into(), parent.into()],
    );
}

/// Sets when todo `id` was made and last changed (an import keeps a tracker's times); the
/// caller holds its lock.
pub fn set_times(tenant: &str, id: i64, created_us: i64, updated_us: i64) {
    exec(
        "UPDATE todo.todos SET created_at = $3, updated_at = $4 WHERE tenant_id = $1 AND id = $2",
        &[
            tenant.into(),
            id.into(),
            crate::time::timestamptz(created_us).into(),
            crate::time::timestamptz(updated_us).into(),
        ],
    );
}
