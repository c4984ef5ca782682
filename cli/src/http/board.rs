//! The board's reads: its first view (`GET /v1/board`), a long list's next page (`GET
//! /v1/board/page`), what changed since a read (`GET /v1/board/changes`) and what its filters
//! match (`GET /v1/board/search`), each one statement of the extension (`todo.board`,
//! `todo.board_page`, `todo.board_changes`, `todo.board_search`). Its changes and the detail
//! read are in `routes`.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use axum::Extension;
use serde_json::{json, Value};

use super::routes::{caller, rest_response, AppState};
use super::throttle::ClientAddr;
use crate::db::errors::{json_response, ApiError};
use crate::db::work;

/// How many todos of each list the board reads first when the request names no `per_list`
/// (the extension's largest, as before the board read in pages).
const PER_LIST: i32 = 200;
/// The most todos `also` names (`todo.board_changes`' own bound).
const MAX_ALSO: usize = 200;

/// The request's query as a map; a repeated name, or one the route does not take, is a 400
/// that names it.
fn query(uri: &Uri, takes: &[&str]) -> Result<HashMap<String, String>, ApiError> {
    let Query(pairs): Query<Vec<(String, String)>> =
        Query::try_from_uri(uri).map_err(|e| ApiError::BadRequest(format!("malformed query: {e}")))?;
    let mut map = HashMap::new();
    for (name, value) in pairs {
        if !takes.contains(&name.as_str()) {
            return Err(ApiError::BadRequest(format!(
                "unknown parameter \"{name}\": this route takes {}",
                takes.join(", ")
            )));
        }
        if map.insert(name.clone(), value).is_some() {
            return Err(ApiError::BadRequest(format!("parameter \"{name}\" given twice")));
        }
    }
    Ok(map)
}

/// A whole number parameter, or a 400 that names it.
fn number(q: &HashMap<String, String>, name: &str) -> Result<Option<i32>, ApiError> {
    q.get(name)
        .map(|v| {
            v.parse::<i32>().map_err(|_| ApiError::BadRequest(format!("{name} must be a whole number, not \"{v}\"")))
        })
        .transpose()
}

/// Todo ids, comma-separated (at most `MAX_ALSO`), or a 400 that says what is wrong.
fn ids_of(text: &str) -> Result<Vec<i64>, ApiError> {
    let ids: Vec<&str> = text.split(',').collect();
    if ids.len() > MAX_ALSO {
        return Err(ApiError::BadRequest(format!("also names {} todos: name at most {MAX_ALSO}", ids.len())));
    }
    ids.iter()
        .map(|i| {
            i.trim().parse::<i64>().map_err(|_| {
                ApiError::BadRequest(format!(
                    "also must be todo ids separated by commas; \"{i}\" is not a whole number"
                ))
            })
        })
        .collect()
}

/// `GET /v1/board?per_list=N`: `todo.board(per_list)` of the token's tenant (1 to 200 todos of
/// each list, default 200), and who the token is for (`"viewer": {"label", "person"}`: the
/// page offers changes to a person's token only). 400 for a `per_list` out of range.
pub async fn board(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let q = query(&uri, &["per_list"])?;
    let per_list = number(&q, "per_list")?.unwrap_or(PER_LIST);
    if !(1..=PER_LIST).contains(&per_list) {
        return Err(ApiError::BadRequest(format!("per_list must be from 1 to {PER_LIST}, not {per_list}")));
    }
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let mut board: Value =
        work::one(&state.db, &identity.tenant, Some(&agent), "SELECT todo.board($1)", &[&per_list]).await?;
    board["viewer"] = json!({ "label": identity.label, "person": identity.person });
    Ok(json_response(StatusCode::OK, &board))
}

/// `GET /v1/board/page?list=&after=&page_size=`: `todo.board_page(list, after, page_size)`
/// (no `list`: the tenant-wide pool), answered with its status and body.
pub async fn page(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let q = query(&uri, &["list", "after", "page_size"])?;
    let size = number(&q, "page_size")?;
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let (list, after) = (q.get("list"), q.get("after"));
    let answer: Value = work::one(
        &state.db,
        &identity.tenant,
        Some(&agent),
        "SELECT todo.board_page($1, $2, $3)",
        &[&list, &after, &size],
    )
    .await?;
    rest_response(&answer)
}

/// `GET /v1/board/changes?since=&also=`: `todo.board_changes(since, also)` (no `since`: only a
/// cursor; `also`: ids, comma-separated, of todos to read whether they changed or not),
/// answered with its status and body.
pub async fn changes(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let q = query(&uri, &["since", "also"])?;
    let also = match q.get("also") {
        None => None,
        Some(ids) => Some(ids_of(ids)?),
    };
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let since = q.get("since");
    let answer: Value =
        work::one(&state.db, &identity.tenant, Some(&agent), "SELECT todo.board_changes($1, $2)", &[&since, &also])
            .await?;
    rest_response(&answer)
}

/// `GET /v1/board/search?list=&status=&q=&who=`: `todo.board_search(filters)` (`list` absent:
/// every list; empty: the tenant-wide pool), answered with its status and body.
pub async fn search(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let q = query(&uri, &["list", "status", "q", "who"])?;
    let mut filters = serde_json::Map::new();
    for (name, value) in q {
        let value = if name == "list" && value.is_empty() { Value::Null } else { Value::String(value) };
        filters.insert(name, value);
    }
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let filters = Value::Object(filters);
    let answer: Value =
        work::one(&state.db, &identity.tenant, Some(&agent), "SELECT todo.board_search($1)", &[&filters]).await?;
    rest_response(&answer)
}
