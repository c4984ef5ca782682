//! What the board reads besides its first view (`todo.board()`, in sql/service.sql): the next
//! page of a long list (`todo.board_page`), read as a person scrolls, and what changed since
//! the board was read (`todo.board_changes`), which the page applies to what it shows instead
//! of reading the board again. Each answers `{"status": <http status>, "body": <json>}`, as
//! `todo.board_todo` does, so `pg_todos serve` forwards it unchanged: 400 says what to fix.

use pgrx::prelude::*;
use serde_json::{json, Value};

use crate::jsonb::Jsonb;
use crate::ops::Scope;
use crate::store;
use crate::store::board::MAX_ITEMS;

/// The todos a page holds when the caller names no size.
const PAGE_SIZE: i32 = 100;

fn bad(message: impl Into<String>) -> Jsonb {
    Jsonb(json!({ "status": 400, "body": { "error": message.into() } }))
}

/// A place in a list as `next` hands it out: `<position>:<id>`.
fn place_of(todo: &Value) -> Option<String> {
    Some(format!("{}:{}", todo.get("position")?.as_i64()?, todo.get("id")?.as_i64()?))
}

/// The place `after` names (`<position>:<id>`, as `next` handed it out), or None when it is not one.
fn parse_place(after: &str) -> Option<(i64, i64)> {
    let (position, id) = after.split_once(':')?;
    Some((position.parse().ok()?, id.parse().ok()?))
}

/// The next page of a list on the board: its todos that are not archived, in list order, after
/// the place `after` (the `next` of `todo.board()`'s list, or of the page before; NULL: from
/// the start), at most `page_size` (1 to 200, default 100), each as `todo.board()` shows it
/// with its `position`. `{"status": 200, "body": {"list", "todos", "next"}}`: `next` is the
/// place after the last, null when no todo follows; 400 for a `page_size` out of range or an
/// `after` that is not a place. `list` NULL: the tenant-wide pool.
#[pg_extern(sql = false)]
fn board_page(list: Option<&str>, after: Option<&str>, page_size: Option<i32>) -> Jsonb {
    let tenant = Scope::reading(None).tenant;
    let size = page_size.unwrap_or(PAGE_SIZE);
    if !(1..=MAX_ITEMS as i32).contains(&size) {
        return bad(format!("page_size must be from 1 to {MAX_ITEMS}, not {size}"));
    }
    let after = match after.map(|a| parse_place(a).ok_or(a)) {
        Some(Err(a)) => {
            return bad(format!(
            "after \"{a}\" is not a place in a list: pass the \"next\" of the board or of the page before, unchanged"
        ))
        }
        Some(Ok(place)) => Some(place),
        None => None,
    };
    let mut todos = store::board::page(&tenant, list, after, size as usize);
    let more = todos.len() > size as usize;
    todos.truncate(size as usize);
    let next = if more { todos.last().and_then(place_of) } else { None };
    Jsonb(json!({ "status": 200, "body": { "list": list, "todos": todos, "next": next } }))
}

extension_sql!(
    r#"
CREATE FUNCTION todo.board_page(list text, after text DEFAULT NULL, page_size integer DEFAULT 100) RETURNS jsonb
LANGUAGE c STABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'board_page_wrapper';
COMMENT ON FUNCTION todo.board_page(text, text, integer) IS
    'The next page of a list on the board, for the tenant in context (list NULL: the tenant-wide pool): its todos that are not archived, in list order, after the place after (the "next" of todo.board()''s list or of the page before; NULL: from the start), at most page_size (1 to 200), each as todo.board() shows it with its position. Returns {"status": 200, "body": {"list", "todos", "next": the place after the last, null when none follows}}, or {"status": 400, "body": {"error"}} for a page_size out of range or an after that is not a place. Errors: 22023 no tenant in context; 42704 tenant not registered.';
"#,
    name = "board_page",
    requires = [board_page]
);

/// What changed on the board since `since` (the `cursor` of `todo.board()` or of the changes
/// before): `{"status": 200, "body": {"cursor", "now", "todos", "reload", "attention",
/// "attention_omitted"}}`. `todos`: each todo with an event the cursor did not see, and the
/// todos whose row those changes alter (a parent's progress, a waiting todo's blockers), as
/// rows show them with their list, `position` and `archived_at`, at most 200; past that,
/// `reload` is true and `todos` empty: read the board again. `empty_lists`: the lists made on
/// the board that hold no todo yet (at most 50; making one records no event). `attention`: the
/// rows of "needs attention" now. `since` NULL: only the cursor. 400 for a `since` that is not
/// a cursor. `also`: todos to read whether they changed or not (at most 200), e.g. those whose
/// lease the page saw run out: a lease renewed records no event.
#[pg_extern(sql = false)]
fn board_changes(since: Option<&str>, also: Option<Vec<Option<i64>>>) -> Jsonb {
    let tenant = Scope::reading(None).tenant;
    if since.is_some_and(|s| !crate::cursor::is_cursor(s)) {
        return bad("since is not a cursor: pass the \"cursor\" of todo.board() or of the changes before, unchanged");
    }
    let also: Vec<i64> = also.unwrap_or_default().into_iter().flatten().collect();
    if also.len() > MAX_ITEMS {
        return bad(format!("also names {} todos: name at most {MAX_ITEMS}", also.len()));
    }
    // the cursor first: every todo read after it is at least as new
    let (cursor, _) = store::events::changed_since(&tenant, None);
    let (mut ids, reload) = match since {
        Some(since) => store::events::changed_todos(&tenant, since, MAX_ITEMS),
        None => (Vec::new(), false),
    };
    if !reload {
        ids.extend(also);
        ids.sort_unstable();
        ids.dedup();
    }
    let todos = if ids.is_empty() { json!([]) } else { store::board::items(&tenant, &ids) };
    let mut body = json!({ "cursor": cursor, "now": crate::time::iso8601(crate::time::now_us()),
                           "todos": todos, "reload": reload, "empty_lists": store::board::empty_lists(&tenant) });
    if let (Value::Object(b), Value::Object(a)) = (&mut body, store::board::attention(&tenant)) {
        b.extend(a);
    }
    Jsonb(json!({ "status": 200, "body": body }))
}

extension_sql!(
    r#"
CREATE FUNCTION todo.board_changes(since text, also bigint[] DEFAULT NULL) RETURNS jsonb
LANGUAGE c STABLE PARALLEL RESTRICTED SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'board_changes_wrapper';
COMMENT ON FUNCTION todo.board_changes(text, bigint[]) IS
    'What changed on the board of the tenant in context since a cursor (the "cursor" of todo.board() or of the changes before): {"status": 200, "body": {"cursor", "now", "todos": each todo with a change the cursor did not see, and the todos whose rows those changes alter (a parent''s progress, a waiting todo''s blockers), as the board shows them with their list, position and archived_at, at most 200, "reload": true (and no todos) past that, "empty_lists": the lists made on the board that hold no todo yet (at most 50), "attention", "attention_omitted": the needs attention rows now}}; also: todos to read whether they changed or not (at most 200; a lease renewed records no event); since NULL: only the cursor (and also); {"status": 400} for a since that is not a cursor or more than 200 also. Errors: 22023 no tenant in context; 42704 tenant not registered.';
"#,
    name = "board_changes",
    requires = [board_changes]
);

/// The fields a search takes.
const SEARCH_FIELDS: &[&str] = &["list", "status", "q", "who", "archived"];
/// The longest text a search looks for, in characters.
const MAX_SEARCH_TEXT: usize = 200;

/// A search's text field: None when absent, null or blank; a 400 when it is not text or too long.
fn search_text<'a>(filters: &'a serde_json::Map<String, Value>, name: &str) -> Result<Option<&'a str>, Jsonb> {
    match filters.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.chars().count() > MAX_SEARCH_TEXT => {
            Err(bad(format!("{name} is longer than {MAX_SEARCH_TEXT} characters")))
        }
        Some(Value::String(s)) => Ok(Some(s.trim()).filter(|s| !s.is_empty())),
        Some(_) => Err(bad(format!("{name} must be text"))),
    }
}

/// `search`'s filters read from `filters`, or the 400 that says what to fix.
fn search_of(filters: &Value) -> Result<store::board::Search<'_>, Jsonb> {
    let Value::Object(f) = filters else { return Err(bad("the filters must be a JSON object")) };
    if let Some(k) = f.keys().find(|k| !SEARCH_FIELDS.contains(&k.as_str())) {
        return Err(bad(format!("unknown filter \"{k}\": use {}", SEARCH_FIELDS.join(", "))));
    }
    let list = match f.get("list") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(_) => Some(search_text(f, "list")?),
    };
    let status = search_text(f, "status")?;
    if let Some(s) = status.filter(|s| crate::status::Status::parse(s).is_none()) {
        return Err(bad(format!(
            "status \"{s}\" is not one of: pending, in_progress, completed, canceled, blocked, deferred, review"
        )));
    }
    let archived = match f.get("archived") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad("archived must be true or false")),
    };
    Ok(store::board::Search { list, status, text: search_text(f, "q")?, who: search_text(f, "who")?, archived })
}

/// The todos the board's filters match, for the tenant in context: `filters` `{"list"
/// (absent: every list; null: the tenant-wide pool), "status", "q" (words of the subject or
/// the description), "who" (part of the claim holder, the assignee, the maker or the last
/// actor), "archived" (true: the archived todos instead)}`, each optional. `{"status": 200,
/// "body": {"todos", "more"}}`: at most 200 todos that are not archived (or only archived ones),
/// as rows show them, by list (the pool first) and in list order (archived: the newest
/// archived first); `more` when more match. 400 for an unknown filter, a value that is not
/// text (`archived`: not a boolean), a status that is none, a text over 200 characters.
#[pg_extern(sql = false)]
fn board_search(fcinfo: pg_sys::FunctionCallInfo) -> Jsonb {
    let tenant = Scope::reading(None).tenant;
    // SAFETY: argument 0 of todo.board_search is its jsonb filters (the SQL below)
    let filters = match unsafe { super::rest::json_arg(fcinfo, 0, "the filter object") } {
        Ok(filters) => filters.unwrap_or_else(|| json!({})),
        Err((status, body)) => return Jsonb(json!({ "status": status, "body": body })),
    };
    let what = match search_of(&filters) {
        Ok(what) => what,
        Err(answer) => return answer,
    };
    let mut todos = store::board::search(&tenant, &what);
    let more = todos.len() > MAX_ITEMS;
    todos.truncate(MAX_ITEMS);
    Jsonb(json!({ "status": 200, "body": { "todos": todos, "more": more } }))
}

extension_sql!(
    r#"
CREATE FUNCTION todo.board_search(filters jsonb) RETURNS jsonb
LANGUAGE c STABLE PARALLEL SAFE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'board_search_wrapper';
COMMENT ON FUNCTION todo.board_search(jsonb) IS
    'The todos the board''s filters match, for the tenant in context: filters {"list" (absent: every list; null: the tenant-wide pool), "status", "q" (words of the subject or the description), "who" (part of the claim holder, the assignee, the maker or the last actor), "archived" (true: the archived todos instead)}, each optional, the texts case-insensitive. Returns {"status": 200, "body": {"todos": at most 200 todos that are not archived (archived: only archived ones), as the board shows them, by list (the pool first) and in list order (archived: the newest archived first), "more": whether more match}}, or {"status": 400, "body": {"error"}} for an unknown filter, a value that is not text (archived: not a boolean), a status that is none, or a text over 200 characters. Reads every todo of the tenant. Errors: 22023 no tenant in context; 42704 tenant not registered.';
"#,
    name = "board_search",
    requires = [board_search]
);
