//! Seed 000's REST endpoints `/v1/todos` as one function, `todo.rest(method, path, body)`,
//! returning `{"status": <http status>, "body": <json>}` so an app's HTTP layer can forward
//! requests unchanged. Routing is pure (`route`); writes are operations (`ops::single`) run
//! by `runner::attempt`; an operation's error answers with its HTTP status
//! (`error::Error::http_status`).

use pgrx::prelude::*;

use serde_json::{json, Map, Value};

use crate::error::Error;
use crate::jsonb::{Jsonb, Unreadable, NUMBER_OUT_OF_RANGE};
use crate::limits;
use crate::ops::single::{self, Change, NewTodo};
use crate::ops::{Find, Scope};
use crate::route::{self, param, Route, RouteError};
use crate::runner;
use crate::status::Status;
use crate::store;
use crate::time::epoch_seconds;
use crate::todo::Todo;
use pg_todos_core::limits::{Exceeded, Setting, FIELD_TOO_LONG};

const STATUS_ERROR: &str =
    "status must be one of: pending, in_progress, completed, canceled, blocked, deferred, review";
const DEFAULT_LIMIT: i64 = 200;
const MAX_LIMIT: i64 = 500;
const MAX_BULK: usize = 500;

/// An HTTP answer: a status and a JSON body.
type Reply = (u16, Value);

fn reply(status: u16, body: Value) -> Reply {
    (status, body)
}

fn bad(message: impl Into<String>) -> Reply {
    (400, json!({ "error": message.into() }))
}

fn not_found() -> Reply {
    (404, json!({ "error": "todo not found" }))
}

/// A todo in seed 000's shape: timestamps in epoch seconds, `completed_at` 0 until terminal,
/// `conversation_id` null for tenant-wide rows.
pub fn todo_json(t: &Todo) -> Value {
    json!({
        "id": t.id,
        "conversation_id": t.conversation_id,
        "agent_id": t.agent_id,
        "subject": t.subject,
        "description": t.description,
        "status": t.status.as_str(),
        "position": t.position,
        "created_at": epoch_seconds(t.created_us),
        "updated_at": epoch_seconds(t.updated_us),
        "completed_at": t.completed_us.map_or(0, epoch_seconds),
    })
}

/// Answers one `/v1/todos` request in the context's tenant: `POST /v1/todos` (201),
/// `GET /v1/todos?conversation_id=&status=&agent_id=&limit=`, `GET|PATCH|DELETE
/// /v1/todos/:id`, and `PATCH /v1/todos` with an array (or `{"todos": [...]}`) of at most 500
/// `{id, …fields}` applied one by one. Returns `{"status": <http status>, "body": <json>}`;
/// client errors are 400 (`{"error": "…"}`), 404 (`todo not found`; another tenant's id
/// answers exactly like a missing one), 405, 409 (a transition the lifecycle forbids, or
/// a todo under another agent's claim), 413 (a body over `todo.max_body_size` bytes as JSON
/// text, refused before it is parsed) and 422 (a value over its column's limit, e.g.
/// `todo.max_subject_length`). A bulk PATCH that names a todo twice is a 400 and writes
/// nothing; otherwise it locks its todos in id order first.
///
/// SQL: `todo.rest(method text, path text, body jsonb DEFAULT NULL) → jsonb` (SQL below):
/// the body is measured as JSON text before it is printed (over `todo.max_body_size`: 413),
/// so that a number like `1e131071` is refused, not printed; a body nested too deeply to
/// convert is a 400.
///
/// Errors (SQL): 22004 a NULL method or path; 22023 when no tenant is in context; 42704 when
/// it is not registered; and every error that is not about the request's data (a cancel or
/// timeout, a deadlock, a serialization failure, a lock timeout, out of memory or disk),
/// raised as it is with nothing of the request committed.
#[pg_extern(sql = false)]
fn rest(method: Option<&str>, path: Option<&str>, fcinfo: pg_sys::FunctionCallInfo) -> Jsonb {
    let method = crate::errors::required(method, "todo.rest: method");
    let path = crate::errors::required(path, "todo.rest: path");
    // SAFETY: argument 2 of todo.rest is its jsonb body (the SQL below)
    respond(method, path, unsafe { json_arg(fcinfo, 2, "body") })
}

/// Jsonb argument `n` of the running call as a JSON value, read in place within
/// `todo.max_body_size` (`limits::jsonb_value_arg`): None for NULL; the answer for one over
/// that size (413) or that serde_json would not read (a number out of range, nested too deep:
/// 400), naming `what`. `todo.rest`'s body; the board's action and filters.
///
/// # Safety
/// `fcinfo` is the running call's, and its argument `n` is declared `jsonb` in its SQL.
pub(super) unsafe fn json_arg(fcinfo: pg_sys::FunctionCallInfo, n: usize, what: &str) -> Result<Option<Value>, Reply> {
    // SAFETY: the caller's promise
    match unsafe { limits::jsonb_value_arg(fcinfo, n, Setting::BodySize, what) } {
        Err(e) => Err(too_large(&e)),
        Ok(limits::JsonArg::Null) => Ok(None),
        Ok(limits::JsonArg::Value(v)) => Ok(Some(v)),
        Ok(limits::JsonArg::Unreadable(why)) => Err(unreadable(what, why)),
    }
}

/// The text-body twin of `todo.rest`, `todo.rest_json(method text, path text, body text)`,
/// from 0.2.0 to 0.10.0 (1.0.0 dropped it: cast the text to jsonb). Kept, with no SQL of its
/// own, for the SQL of those versions and the databases not yet updated.
#[pg_extern(sql = false)]
fn rest_json(method: Option<&str>, path: Option<&str>, body: Option<&str>) -> Jsonb {
    let method = crate::errors::required(method, "todo.rest_json: method");
    let path = crate::errors::required(path, "todo.rest_json: path");
    // the whole body is measured before it is parsed
    let body = limits::check(Setting::BodySize, "body", body.map_or(0, str::len)).map(|()| body);
    respond(method, path, parsed(body))
}

/// A body that fits its limit, parsed (nested too deeply, a number out of range: 400); over
/// it: 413.
fn parsed(body: Result<Option<&str>, Exceeded>) -> Result<Option<Value>, Reply> {
    match body {
        Err(e) => Err(too_large(&e)),
        Ok(body) => {
            body.map(serde_json::from_str::<Value>).transpose().map_err(|e| unreadable("body", Unreadable::of(&e)))
        }
    }
}

fn too_large(e: &Exceeded) -> Reply {
    reply(413, json!({ "error": e.to_string() }))
}

/// The 400 of JSON serde_json does not read (`what`: the body, the action, …).
fn unreadable(what: &str, why: Unreadable) -> Reply {
    bad(match why {
        Unreadable::TooDeep => format!("{what} is nested more than {} levels deep", crate::schema::MAX_DEPTH),
        Unreadable::Number => format!("{what} holds {NUMBER_OUT_OF_RANGE}"),
    })
}

extension_sql!(
    r#"
CREATE FUNCTION todo.rest(method text, path text, body jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE c VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'rest_wrapper';
COMMENT ON FUNCTION todo.rest(text, text, jsonb) IS
    'Answers one /v1/todos request (seed 000) as {"status": <http status>, "body": <json>}; a refusal is a 4xx answer (400, 404, 405, 409, 413, 422), and nothing is written. Errors: 22004 a NULL method or path; 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; a cancel, timeout, deadlock, serialization failure or lock timeout is raised with nothing committed.';
"#,
    name = "rest"
);

// From 0.9.0 to 0.10.0 todo.rest's symbol was rest_jsonb_wrapper (0.1.0's was rest_wrapper,
// the one it has again).
crate::surfaces::earlier_symbol!(rest_jsonb_wrapper, pg_finfo_rest_jsonb_wrapper => rest_wrapper);

/// One request in the context's scope, as `{"status", "body"}`; a body refused before it
/// was parsed (`Err`: too large, nested too deeply) is answered with its reply.
fn respond(method: &str, path: &str, body: Result<Option<Value>, Reply>) -> Jsonb {
    runner::call(|| {
        let scope = Scope::from_context();
        let (status, body) = match body {
            Ok(body) => answer(&scope, method, path, body),
            Err(refused) => refused,
        };
        Jsonb(json!({ "status": status, "body": body }))
    })
}

fn answer(scope: &Scope, method: &str, path: &str, body: Option<Value>) -> Reply {
    let (path, query) = route::split_query(path);
    match route::route(method, path) {
        Err(RouteError::NotFound) => reply(404, json!({ "error": "not found" })),
        Err(RouteError::MethodNotAllowed) => reply(405, json!({ "error": "method not allowed" })),
        Err(RouteError::BadId) => bad("bad todo id"),
        Ok(Route::List) => list(&scope.tenant, &query),
        Ok(Route::Get(id)) => match store::read::todo(&scope.tenant, id) {
            Some(t) => reply(200, json!({ "todo": todo_json(&t) })),
            None => not_found(),
        },
        Ok(Route::Create) => create(scope, body.as_ref()),
        Ok(Route::Patch(id)) => patch(scope, id, body.as_ref()),
        Ok(Route::Delete(id)) => writing(|| {
            single::delete(scope, Find::Anywhere, id)?;
            Ok(reply(200, json!({ "deleted": true })))
        }),
        Ok(Route::PatchMany) => patch_many(scope, body.as_ref()),
    }
}

/// Runs a request's operation (`runner::attempt`): its reply, or its error's. A column over
/// its limit (22001, from the row trigger) is 422: the request is well formed, one of its
/// values is too long.
fn writing(f: impl FnOnce() -> Result<Reply, Error>) -> Reply {
    runner::attempt(f).unwrap_or_else(|e| {
        let message = match &e {
            Error::NotFound { .. } => "todo not found".to_string(),
            Error::Transition { id, forbidden } => {
                format!("cannot move todo {id} from {} to {}", forbidden.from, forbidden.to)
            }
            other => other.to_string(),
        };
        let status = if e.sqlstate() == FIELD_TOO_LONG { 422 } else { e.http_status() };
        reply(status, json!({ "error": message }))
    })
}

fn list(tenant: &str, query: &[(String, String)]) -> Reply {
    let conversation = match param(query, "conversation_id") {
        None | Some("") => None,
        Some("tenant") => Some(None),
        Some(c) => Some(Some(c)),
    };
    let status = match param(query, "status").filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => match Status::parse(s) {
            Some(s) => Some(s.as_str()),
            None => return bad(STATUS_ERROR),
        },
    };
    let limit = match param(query, "limit").filter(|s| !s.is_empty()) {
        None => DEFAULT_LIMIT,
        Some(l) => match l.parse::<i64>() {
            Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
            _ => return bad(format!("limit must be an integer from 1 to {MAX_LIMIT}")),
        },
    };
    let agent = param(query, "agent_id").filter(|s| !s.is_empty());
    let rows = store::read::rest_list(tenant, conversation, status, agent, limit);
    reply(200, json!({ "todos": rows.iter().map(todo_json).collect::<Vec<_>>() }))
}

/// A JSON number that is a whole number in i64's range, as JSON counts integers (`1946` and
/// `1946.0` alike); None for a fraction, a number out of range, or anything else.
pub(crate) fn whole(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| {
        // 2^63 is exactly representable: [-2^63, 2^63) is i64's range
        let bound = 9_223_372_036_854_775_808.0_f64;
        v.as_f64().filter(|f| f.fract() == 0.0 && *f >= -bound && *f < bound).map(|f| f as i64)
    })
}

/// Checks a body's fields against the ones a route accepts, and their types; returns the
/// columns to write (`status` normalized, `cancelled` accepted).
fn columns(body: &Map<String, Value>, allowed: &[&str]) -> Result<Map<String, Value>, Reply> {
    let mut out = Map::new();
    for (k, v) in body {
        if !allowed.contains(&k.as_str()) {
            return Err(bad(format!("unknown field: {k}")));
        }
        let ok = match k.as_str() {
            "subject" => v.as_str().is_some_and(|s| !s.trim().is_empty()),
            "description" | "conversation_id" => v.is_string() || v.is_null(),
            "position" => whole(v).is_some(),
            _ => true,
        };
        if !ok {
            return Err(bad(match k.as_str() {
                "subject" => "subject must be a non-empty string".to_string(),
                "position" => "position must be an integer".to_string(),
                _ => format!("{k} must be a string or null"),
            }));
        }
        if k == "status" {
            let Some(s) = v.as_str().and_then(Status::parse) else { return Err(bad(STATUS_ERROR)) };
            out.insert(k.clone(), json!(s.as_str()));
        } else if k == "conversation_id" && v.as_str() == Some("") {
            out.insert(k.clone(), Value::Null);
        } else if k == "position" {
            out.insert(k.clone(), json!(whole(v)));
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    Ok(out)
}

fn create(scope: &Scope, body: Option<&Value>) -> Reply {
    let Some(Value::Object(body)) = body else { return bad("body must be a JSON object") };
    if !body.contains_key("subject") {
        return bad("required field: subject");
    }
    let mut fields = match columns(body, &["subject", "description", "status", "conversation_id", "position"]) {
        Ok(c) => c,
        Err(r) => return r,
    };
    if !fields.contains_key("conversation_id") {
        fields.insert("conversation_id".into(), json!(scope.conv()));
    }
    writing(|| {
        let t = single::add(scope, NewTodo { fields, ..NewTodo::default() })?;
        Ok(reply(201, json!({ "todo": todo_json(&t) })))
    })
}

fn patch(scope: &Scope, id: i64, body: Option<&Value>) -> Reply {
    let Some(Value::Object(body)) = body else { return bad("body must be a JSON object") };
    let mut fields = match columns(body, &["subject", "description", "status", "position"]) {
        Ok(c) => c,
        Err(r) => return r,
    };
    let status = fields.remove("status").and_then(|s| s.as_str().and_then(Status::parse));
    writing(|| {
        let changed = single::change(
            scope,
            Find::Anywhere,
            id,
            Change { status, via_reopen: false, fields, ..Change::default() },
        )?;
        Ok(reply(200, json!({ "todo": todo_json(&changed.after) })))
    })
}

fn patch_many(scope: &Scope, body: Option<&Value>) -> Reply {
    let items = match body {
        Some(Value::Array(a)) => a,
        Some(Value::Object(o)) => match o.get("todos") {
            Some(Value::Array(a)) => a,
            _ => return bad("body must be an array of todos or {\"todos\": [...]}"),
        },
        _ => return bad("body must be an array of todos or {\"todos\": [...]}"),
    };
    if items.len() > MAX_BULK {
        return bad(format!("at most {MAX_BULK} todos per request"));
    }
    let id_of = |item: &Value| match item.get("id") {
        Some(n @ Value::Number(_)) => whole(n).filter(|i| *i > 0),
        Some(Value::String(s)) => route::parse_id(s),
        _ => None,
    };
    let ids: Vec<i64> = items.iter().filter_map(id_of).collect();
    // each todo once: a request that names one twice is refused whole, before anything is written
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    if let Some(twice) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return bad(format!("todo {} appears more than once in the request: send each todo once", twice[0]));
    }
    // every todo of the request, locked in id order before the first change
    store::locks::rows(&scope.tenant, &ids);
    let mut results = Vec::with_capacity(items.len());
    for item in items {
        let shown_id = item.get("id").cloned().unwrap_or(Value::Null);
        let result = match (id_of(item), item) {
            (Some(id), Value::Object(o)) => {
                let mut fields = o.clone();
                fields.remove("id");
                patch(scope, id, Some(&Value::Object(fields)))
            }
            _ => bad("bad todo id"),
        };
        results.push(match result {
            (200, body) => json!({ "id": shown_id, "ok": true, "todo": body["todo"] }),
            (_, body) => json!({ "id": shown_id, "ok": false, "error": body["error"] }),
        });
    }
    let ok = results.iter().filter(|r| r["ok"] == json!(true)).count();
    reply(200, json!({ "ok": ok, "errors": results.len() - ok, "results": results }))
}
