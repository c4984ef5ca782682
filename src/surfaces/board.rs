//! The board's changes and its detail read, for the person at the board: `todo.board_act(action
//! jsonb)` does one change (`{"op": …}`) and `todo.board_todo(id bigint)` reads one todo as
//! the detail panel shows it. Each answers `{"status": <http status>, "body": <json>}`, as
//! `todo.rest` does, so `pg_todos serve` forwards it unchanged. Every change is an operation
//! (`ops`) run by `runner::attempt`, with the same rules and errors as every other surface;
//! the actor is the agent in context (the service sets `person:<label>`).
//!
//! | op | fields | does | success |
//! |---|---|---|---|
//! | `add` | `subject`, `list`?, `description`?, `parent_id`? | adds a todo to the list (null or absent: the tenant-wide pool) | 201 `{"todo"}` |
//! | `edit` | `id`, `version`, `subject`?, `description`?, `priority`?, `owner`?, `labels`?, `due_at`? | changes those columns if the todo is still at `version` | 200 `{"todo"}` |
//! | `move` | `id`, `version`, `list`?, `parent_id`? | moves it to the end of another list (null: the pool), under another parent (null: none; a subtask goes to its parent's list) | 200 `{"todo"}` |
//! | `status` | `id`, `status`, `version`? | moves it (at `version`, when given) | 200 `{"todo"}` |
//! | `reorder` | `ids` | puts these todos of one list in this order, in the places they hold | 200 `{"ids"}` |
//! | `block`, `unblock` | `id`, `on` | makes `id` wait for `on`, or not | 200 `{"todo", "changed"}` |
//! | `release` | `id`, `holder`, `fence` | takes the claim the person saw back (`ops::claiming::take_back`) | 200 `{"todo"}` |
//! | `create_list` | `name` | makes a list that shows before it holds a todo | 201 `{"list", "created"}` |
//! | `archive` | `id` | takes it off its list (an open todo is canceled) | 200 `{"todo", "undo"}` (`undo` null when it was archived already) |
//! | `unarchive` | `id`, `status`? | puts an archived todo back (with its status before) | 200 `{"todo"}` |
//! | `comment` | `id`, `body` | adds a comment, by the person | 200 `{"todo"}` |
//! | `check` | `id`, `kind`, `position`, `text`, `checked` | checks or unchecks an item of a checklist (`acceptance`, `done`), if it still reads `text` | 200 `{"todo"}` |
//! | `add_item` | `id`, `kind`, `text` | adds an item to the end of a checklist | 200 `{"todo"}` |
//! | `bulk` | `actions` | 1 to 200 actions (`status`, `edit`, `archive`, `unarchive`, `release`), each of another todo, done all or none | 200 `{"todos", "undo"}` |
//!
//! A refusal is `{"error": "<message>"}` with 400 (the request), 403 (the agent in context is
//! not a person), 404 (no such todo), 409 (the
//! lifecycle, a claim, a cycle; a `version` the todo has moved past, with `"current"`: the
//! todo as it is now), 413 or 422 (a value over its limit).

use pgrx::prelude::*;
use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::interchange::ChecklistKind;
use crate::jsonb::Jsonb;
use crate::ops::annotations;
use crate::ops::moving::{self, Destination};
use crate::ops::single::{self, Change, NewTodo};
use crate::ops::{claiming, dependencies, lists, Find, Scope};
use crate::runner;
use crate::status::Status;
use crate::store;
use pg_todos_core::limits::FIELD_TOO_LONG;

/// An HTTP answer: a status and a JSON body.
type Reply = (u16, Value);

/// The most todos one `reorder` moves.
pub const MAX_REORDER: usize = 500;
/// The most actions one `bulk` does.
pub const MAX_BULK: usize = 200;
/// The most labels an `edit` gives a todo, and the longest label, in characters.
pub const MAX_LABELS: usize = 20;
pub const MAX_LABEL_CHARS: usize = 50;

/// Each op and the fields it takes (besides `op`).
const OPS: &[(&str, &[&str])] = &[
    ("add", &["subject", "list", "description", "parent_id"]),
    ("edit", &["id", "version", "subject", "description", "priority", "owner", "labels", "due_at"]),
    ("move", &["id", "version", "list", "parent_id"]),
    ("status", &["id", "status", "version"]),
    ("reorder", &["ids"]),
    ("block", &["id", "on"]),
    ("unblock", &["id", "on"]),
    ("release", &["id", "holder", "fence"]),
    ("create_list", &["name"]),
    ("archive", &["id"]),
    ("unarchive", &["id", "status"]),
    ("comment", &["id", "body"]),
    ("check", &["id", "kind", "position", "text", "checked"]),
    ("add_item", &["id", "kind", "text"]),
    ("bulk", &["actions"]),
];

/// The ops a `bulk` action's actions may be.
const BULK_OPS: &[&str] = &["status", "edit", "archive", "unarchive", "release"];

const PRIORITIES: &[&str] = &["high", "medium", "low"];
const NOT_A_PERSON: &str = "todo.board_act makes a person's changes: the agent in context must be person:<label> (pg_todos serve sets it from a token made for a person)";
const STATUS_ERROR: &str =
    "status must be one of: pending, in_progress, completed, canceled, blocked, deferred, review";

fn bad(message: impl Into<String>) -> Reply {
    (400, json!({ "error": message.into() }))
}

/// Does one change the person at the board asked for (`{"op": …}`: see the module's table),
/// for the tenant and agent in context, which must be a person (`person:<label>`: else 403,
/// nothing done). Returns `{"status", "body"}`. Errors (SQL): 22023
/// without a tenant, 42704 for one not registered, 22004 for a NULL action; and every error
/// that is not about the action's data (a cancel, a deadlock, …), with nothing committed.
#[pg_extern(sql = false)]
fn board_act(fcinfo: pg_sys::FunctionCallInfo) -> Jsonb {
    // SAFETY: argument 0 of todo.board_act is its jsonb action (the SQL below)
    let action = match unsafe { super::rest::json_arg(fcinfo, 0, "the action") } {
        Ok(action) => crate::errors::required(action, "todo.board_act: action"),
        Err((status, body)) => return Jsonb(json!({ "status": status, "body": body })),
    };
    runner::call(|| {
        let scope = Scope::from_context();
        // a person's changes only: an agent's role may not take a live claim away, archive or
        // reorder through here (pg_todos serve sets person:<label> from a person's token; a
        // role bound to a tenant cannot name a person at all)
        if !scope.agent.as_deref().is_some_and(store::scope::names_person) {
            return Jsonb(json!({ "status": 403, "body": { "error": NOT_A_PERSON } }));
        }
        let (status, body) = act(&scope, &action);
        Jsonb(json!({ "status": status, "body": body }))
    })
}

extension_sql!(
    r#"
CREATE FUNCTION todo.board_act(action jsonb) RETURNS jsonb
LANGUAGE c VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'board_act_wrapper';
"#,
    name = "board_act",
    requires = [board_act]
);

/// Todo `id` of the tenant in context as the board's detail panel shows it (archived too):
/// `{"status": 200, "body": {"todo", "subtasks", "subtasks_omitted", "blocked_by", "blocks",
/// "history", "history_omitted"}}`, or 404. Errors (SQL): 22023 without a tenant, 42704 for
/// one not registered.
#[pg_extern(stable, parallel_safe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn board_todo(id: Option<i64>) -> Jsonb {
    let id = crate::errors::required(id, "todo.board_todo: id");
    let scope = Scope::reading(None);
    Jsonb(match store::board::detail(&scope.tenant, id) {
        Some(detail) => json!({ "status": 200, "body": detail }),
        None => json!({ "status": 404, "body": { "error": "todo not found" } }),
    })
}

/// The todo as the board shows it after a change.
fn shown(scope: &Scope, id: i64) -> Value {
    store::board::todo(&scope.tenant, id).unwrap_or(Value::Null)
}

fn act(scope: &Scope, action: &Value) -> Reply {
    let Value::Object(action) = action else { return bad("the action must be a JSON object with an \"op\"") };
    let Some(op) = action.get("op").and_then(Value::as_str) else {
        return bad(format!("the action needs an \"op\": one of {}", names()));
    };
    let Some((_, takes)) = OPS.iter().find(|(name, _)| *name == op) else {
        return bad(format!("unknown op \"{op}\": use one of {}", names()));
    };
    if let Some(k) = action.keys().find(|k| *k != "op" && !takes.contains(&k.as_str())) {
        return bad(format!("{op} takes no field \"{k}\": it takes {}", takes.join(", ")));
    }
    let a = Fields(action);
    let answer = match op {
        "add" => add(scope, &a),
        "edit" => edit(scope, &a),
        "move" => move_to(scope, &a),
        "status" => status(scope, &a),
        "reorder" => reorder(scope, &a),
        "block" | "unblock" => edge(scope, &a, op == "block"),
        "release" => release(scope, &a),
        "create_list" => create_list(scope, &a),
        "archive" => archive(scope, &a),
        "bulk" => bulk(scope, &a),
        "comment" | "check" | "add_item" => annotate(scope, &a, op),
        _ => unarchive(scope, &a),
    };
    answer.unwrap_or_else(|r| r)
}

/// The fields `op` takes (besides `op`; see `OPS`).
fn takes(op: &str) -> &'static [&'static str] {
    OPS.iter().find(|(name, _)| *name == op).map_or(&[], |(_, fields)| fields)
}

fn names() -> String {
    OPS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// An action's fields, read with the type each must have; a wrong one is the 400 that says so.
struct Fields<'a>(&'a Map<String, Value>);

impl Fields<'_> {
    fn has(&self, k: &str) -> bool {
        self.0.contains_key(k)
    }

    /// A whole number (`3` or `3.0`), when present and not null.
    fn int(&self, k: &str) -> Result<Option<i64>, Reply> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => super::rest::whole(v).map(Some).ok_or_else(|| bad(format!("{k} must be a whole number"))),
        }
    }

    fn id(&self, k: &str) -> Result<i64, Reply> {
        self.int(k)?.filter(|i| *i > 0).ok_or_else(|| bad(format!("{k} must be a todo's id (a whole number above 0)")))
    }

    /// A string, or null (`Ok(None)`); absent: `Ok(None)` too (use `has` to tell).
    fn text(&self, k: &str) -> Result<Option<&str>, Reply> {
        match self.0.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(bad(format!("{k} must be a string or null"))),
        }
    }

    fn required_text(&self, k: &str) -> Result<&str, Reply> {
        match self.0.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
            _ => Err(bad(format!("{k} must be a non-empty string"))),
        }
    }

    fn status(&self, k: &str) -> Result<Option<Status>, Reply> {
        self.text(k)?.map(|s| Status::parse(s).ok_or_else(|| bad(STATUS_ERROR))).transpose()
    }
}

/// Runs an operation (`runner::attempt`): its reply, or its error's. A value over its limit
/// (22001) is 422; a change on a version the todo has moved past is 409 with the todo as it
/// is now.
fn writing(scope: &Scope, f: impl FnOnce() -> Result<Reply, Error>) -> Result<Reply, Reply> {
    runner::attempt(f).map_err(|e| {
        let status = if e.sqlstate() == FIELD_TOO_LONG { 422 } else { e.http_status() };
        let mut body = json!({ "error": e.to_string() });
        if let Error::Stale { id, .. } = e {
            body["current"] = shown(scope, id);
        }
        (status, body)
    })
}

fn add(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let subject = a.required_text("subject")?;
    let list = a.text("list")?;
    let description = a.text("description")?;
    let parent = a.int("parent_id")?;
    let in_list = Scope { conversation: list.map(str::to_string), ..scope.clone() };
    let new = NewTodo { parent, ..NewTodo::titled(&in_list, subject, description) };
    writing(scope, || {
        let t = single::add(&in_list, new)?;
        Ok((201, json!({ "todo": shown(scope, t.id) })))
    })
}

fn edit(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let id = a.id("id")?;
    let version = a.int("version")?.ok_or_else(|| bad("version must be the todo's version as you read it"))?;
    let mut fields = Map::new();
    if a.has("subject") {
        fields.insert("subject".into(), json!(a.required_text("subject")?));
    }
    if a.has("description") {
        fields.insert("description".into(), json!(a.text("description")?.filter(|d| !d.is_empty())));
    }
    if a.has("priority") {
        let p = a.text("priority")?;
        if p.is_some_and(|p| !PRIORITIES.contains(&p)) {
            return Err(bad("priority must be high, medium, low or null"));
        }
        fields.insert("priority".into(), json!(p));
    }
    if a.has("owner") {
        // the assignee: blank is none
        fields.insert("owner".into(), json!(a.text("owner")?.map(str::trim).filter(|o| !o.is_empty())));
    }
    if a.has("labels") {
        fields.insert("labels".into(), labels(a)?);
    }
    if a.has("due_at") {
        fields.insert("due_at".into(), due_at(a)?);
    }
    if fields.is_empty() {
        let editable = takes("edit").iter().filter(|f| !matches!(**f, "id" | "version"));
        return Err(bad(format!("edit needs at least one of {}", editable.copied().collect::<Vec<_>>().join(", "))));
    }
    writing(scope, || {
        single::change_read_at(scope, id, version, Change::fields(fields))?;
        Ok((200, json!({ "todo": shown(scope, id) })))
    })
}

/// An edit's `labels`: an array of at most `MAX_LABELS` labels, each 1 to `MAX_LABEL_CHARS`
/// characters with no comma or control character, trimmed, each once (in the order given);
/// empty or null: none (stored as NULL).
fn labels(a: &Fields<'_>) -> Result<Value, Reply> {
    let err = || {
        bad(format!(
            "labels must be an array of at most {MAX_LABELS} labels, each 1 to {MAX_LABEL_CHARS} characters with no comma or control character (or null for none)"
        ))
    };
    let items = match a.0.get("labels") {
        None | Some(Value::Null) => return Ok(Value::Null),
        Some(Value::Array(items)) if items.len() <= MAX_LABELS => items,
        Some(_) => return Err(err()),
    };
    let mut out: Vec<&str> = Vec::new();
    for item in items {
        let label = item.as_str().map(str::trim).ok_or_else(err)?;
        let n = label.chars().count();
        if n == 0 || n > MAX_LABEL_CHARS || label.contains(',') || label.chars().any(char::is_control) {
            return Err(err());
        }
        if !out.contains(&label) {
            out.push(label);
        }
    }
    Ok(if out.is_empty() { Value::Null } else { json!(out) })
}

/// An edit's `due_at`: a date `YYYY-MM-DD` (the day's start, UTC), or null for none.
fn due_at(a: &Fields<'_>) -> Result<Value, Reply> {
    let err = || bad("due_at must be a date as YYYY-MM-DD (or null for none)");
    match a.text("due_at").map_err(|_| err())? {
        None => Ok(Value::Null),
        Some(d) => {
            let us = pg_todos_core::formats::backlog::parse_date(d.trim()).ok_or_else(err)?;
            Ok(json!(crate::time::iso8601(us)))
        }
    }
}

fn move_to(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let id = a.id("id")?;
    let version = a.int("version")?.ok_or_else(|| bad("version must be the todo's version as you read it"))?;
    let list = if a.has("list") { Some(a.text("list")?.map(str::to_string)) } else { None };
    let parent = if a.has("parent_id") {
        Some(match a.0.get("parent_id") {
            Some(Value::Null) => None,
            _ => Some(a.id("parent_id")?),
        })
    } else {
        None
    };
    writing(scope, || {
        moving::move_to(scope, id, version, Destination { list, parent })?;
        Ok((200, json!({ "todo": shown(scope, id) })))
    })
}

fn status(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let id = a.id("id")?;
    let to = a.status("status")?.ok_or_else(|| bad(STATUS_ERROR))?;
    let version = a.int("version")?;
    writing(scope, || {
        match version {
            Some(v) => single::change_read_at(scope, id, v, Change::status(to))?,
            None => single::change(scope, Find::Anywhere, id, Change::status(to))?,
        };
        Ok((200, json!({ "todo": shown(scope, id) })))
    })
}

fn reorder(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let err = || bad(format!("ids must be an array of 2 to {MAX_REORDER} todo ids of one list, each once"));
    let Some(Value::Array(items)) = a.0.get("ids") else { return Err(err()) };
    if !(2..=MAX_REORDER).contains(&items.len()) {
        return Err(err());
    }
    let ids: Vec<i64> = items.iter().map(|v| v.as_i64().filter(|i| *i > 0)).collect::<Option<_>>().ok_or_else(err)?;
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return Err(err());
    }
    writing(scope, || {
        let locked = store::read::lock(&scope.tenant, Find::Anywhere, &sorted, false);
        if let Some(missing) = sorted.iter().find(|id| !locked.iter().any(|l| l.todo.id == **id)) {
            return Err(Error::NotFound { id: *missing });
        }
        let list = &locked[0].todo.conversation_id;
        if locked.iter().any(|l| &l.todo.conversation_id != list) {
            return Err(Error::Invalid("a reorder moves todos within one list: these are on more than one".into()));
        }
        single::reorder(scope, &ids);
        Ok((200, json!({ "ids": ids })))
    })
}

fn edge(scope: &Scope, a: &Fields<'_>, add: bool) -> Result<Reply, Reply> {
    let id = a.id("id")?;
    let on = a.id("on")?;
    writing(scope, || {
        // the dependency is made in the waiting todo's list: the todo it waits for is of that
        // list or the tenant-wide pool
        let list = store::read::todo(&scope.tenant, id).ok_or(Error::NotFound { id })?.conversation_id;
        let other = store::read::todo(&scope.tenant, on).ok_or(Error::NotFound { id: on })?.conversation_id;
        if other.is_some() && other != list {
            return Err(Error::Invalid(format!(
                "#{id} and #{on} are on different lists: a todo can wait only for a todo of its own list or of the tenant-wide pool"
            )));
        }
        let in_list = Scope { conversation: list, ..scope.clone() };
        let changed =
            if add { dependencies::block(&in_list, id, on)? } else { dependencies::unblock(&in_list, id, on)? };
        Ok((200, json!({ "todo": shown(scope, id), "changed": changed })))
    })
}

fn release(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let id = a.id("id")?;
    let holder = a.required_text("holder")?;
    let fence = a.int("fence")?.ok_or_else(|| bad("fence must be the claim's fence as you read it"))?;
    writing(scope, || {
        claiming::take_back(scope, id, holder, fence)?;
        Ok((200, json!({ "todo": shown(scope, id) })))
    })
}

fn create_list(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let name = a.text("name")?.unwrap_or_default();
    writing(scope, || {
        let created = lists::create(scope, name)?;
        Ok((if created { 201 } else { 200 }, json!({ "list": name, "created": created })))
    })
}

fn archive(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let id = a.id("id")?;
    writing(scope, || {
        let before = single::archive(scope, Find::Anywhere, id)?;
        // archived already (a second click, another person): no undo, whose status would be
        // the archived one
        let undo = match before.archived_us {
            None => json!({ "op": "unarchive", "id": id, "status": before.status.as_str() }),
            Some(_) => Value::Null,
        };
        Ok((200, json!({ "todo": shown(scope, id), "undo": undo })))
    })
}

fn unarchive(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let id = a.id("id")?;
    let status = a.status("status")?;
    writing(scope, || {
        single::unarchive(scope, Find::Anywhere, id, status)?;
        Ok((200, json!({ "todo": shown(scope, id) })))
    })
}

/// Why a `bulk` stopped: an action refused (its answer, and its place in `actions`), or an
/// error of the attempt around them all.
enum BulkStop {
    Refused(usize, Reply),
    Op(Error),
}

impl From<Error> for BulkStop {
    fn from(e: Error) -> BulkStop {
        BulkStop::Op(e)
    }
}

/// Several actions on several todos (a person's selection), all or none: each as on its own
/// (the same rules, errors and answers), in the order of their todos' ids (so two selections
/// lock their todos in one order), in one attempt that the first refusal rolls back whole.
/// 200 `{"todos"` (as each action answered, in that order), `"undo"`: a `bulk` that puts the
/// archived ones back, or null`}`; a refusal is the refused action's answer with its `"index"`
/// in `actions`.
fn bulk(scope: &Scope, a: &Fields<'_>) -> Result<Reply, Reply> {
    let err = || {
        bad(format!(
            "actions must be an array of 1 to {MAX_BULK} actions ({}), each of another todo",
            BULK_OPS.join(", ")
        ))
    };
    let Some(Value::Array(items)) = a.0.get("actions") else { return Err(err()) };
    if !(1..=MAX_BULK).contains(&items.len()) {
        return Err(err());
    }
    let mut order: Vec<(i64, usize)> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let op = item.get("op").and_then(Value::as_str).unwrap_or_default();
        let id = item.get("id").and_then(super::rest::whole).filter(|id| *id > 0);
        match id {
            Some(id) if BULK_OPS.contains(&op) => order.push((id, i)),
            _ => return Err(err()),
        }
    }
    order.sort_unstable();
    if order.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(err());
    }
    let outcome = runner::attempt(|| {
        let mut answers = Vec::with_capacity(order.len());
        for (_, i) in &order {
            match act(scope, &items[*i]) {
                (status, body) if status < 300 => answers.push(body),
                refused => return Err(BulkStop::Refused(*i, refused)),
            }
        }
        Ok(answers)
    });
    match outcome {
        Ok(answers) => Ok((200, bulk_answer(answers))),
        Err(BulkStop::Refused(i, (status, mut body))) => {
            body["index"] = json!(i);
            Err((status, body))
        }
        Err(BulkStop::Op(e)) => Err((e.http_status(), json!({ "error": e.to_string() }))),
    }
}

/// A `bulk`'s answer: each action's todo, and the undo of the archives among them.
fn bulk_answer(answers: Vec<Value>) -> Value {
    let undo: Vec<Value> = answers.iter().filter_map(|b| b.get("undo").filter(|u| !u.is_null()).cloned()).collect();
    let todos: Vec<Value> = answers.into_iter().filter_map(|mut b| b.get_mut("todo").map(Value::take)).collect();
    let undo = if undo.is_empty() { Value::Null } else { json!({ "op": "bulk", "actions": undo }) };
    json!({ "todos": todos, "undo": undo })
}

/// `comment`, `check` and `add_item`: a todo's comments and checklists (`ops::annotations`).
fn annotate(scope: &Scope, a: &Fields<'_>, op: &str) -> Result<Reply, Reply> {
    let id = a.id("id")?;
    let kind = || {
        a.text("kind")?
            .and_then(ChecklistKind::parse)
            .ok_or_else(|| bad("kind must be \"acceptance\" (acceptance criteria) or \"done\" (definition of done)"))
    };
    let done = |r: Result<(), Error>| r.map(|()| (200, json!({ "todo": shown(scope, id) })));
    match op {
        "comment" => {
            let body = a.required_text("body")?;
            writing(scope, || done(annotations::comment(scope, id, body.trim())))
        }
        "check" => {
            let kind = kind()?;
            let position = a
                .int("position")?
                .filter(|p| *p > 0)
                .ok_or_else(|| bad("position must be the item's place, from 1"))?;
            let text = a.text("text")?.ok_or_else(|| bad("text must be the item's text as you read it"))?;
            let checked =
                a.0.get("checked").and_then(Value::as_bool).ok_or_else(|| bad("checked must be true or false"))?;
            writing(scope, || done(annotations::check_item(scope, id, kind, position, text, checked)))
        }
        _ => {
            let kind = kind()?;
            let text = a.required_text("text")?;
            writing(scope, || done(annotations::add_item(scope, id, kind, text)))
        }
    }
}
