//! The routes: each authenticates (but `/`, `/healthz`, `/readyz`), then runs its one
//! statement through `work::one` and answers with what the extension returned.
//!
//! | route | answer |
//! |---|---|
//! | `POST/GET /v1/todos`, `GET/PATCH/DELETE /v1/todos/:id`, `PATCH /v1/todos` | `todo.rest(method, path?query, body)`: its status and body |
//! | `GET /session/:id/todo` | 200 `todo.list_as('opencode', id)` (OpenCode's `session.todo()`) |
//! | `GET /v1/board` | 200 `todo.board()` |
//! | `GET /v1/events` | Server-Sent Events of every committed change (`hub`) |
//! | `GET /healthz` | 200 `{"status":"ok"}` |
//! | `GET /readyz` | 200 `{"status":"ready"}`, or 503 when the database does not answer in 2 s |
//! | `GET /` | the board's page |
//! | anything else | 404 `{"error":"not found"}` (405 for another method of a known path) |

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use deadpool_postgres::Pool;
use serde_json::{json, Value};

use super::auth::{self, Identity};
use super::errors::{json_response, ApiError};
use super::hub::Hubs;
use super::work;

/// The board's page, served at `/`.
pub const BOARD: &str = include_str!("../../assets/board.html");

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub pool: Pool,
    pub hubs: Arc<Hubs>,
    /// largest request body read, in bytes
    pub max_body: usize,
}

/// Every route, with the request log around them.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(board_page))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/v1/todos", any(rest))
        .route("/v1/todos/{*rest}", any(rest))
        .route("/session/{id}/todo", get(session_todo))
        .route("/v1/board", get(board))
        .route("/v1/events", get(events))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn(log))
        .with_state(state)
}

/// One line per request on stderr: method, path (without the query), status, milliseconds.
/// Never a header: the token stays out of the log.
async fn log(request: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let response = next.run(request).await;
    eprintln!("{method} {path} {} {}ms", response.status().as_u16(), start.elapsed().as_millis());
    response
}

async fn not_found() -> ApiError {
    ApiError::NotFound
}

async fn method_not_allowed() -> Response {
    json_response(StatusCode::METHOD_NOT_ALLOWED, &json!({"error": "method not allowed"}))
}

/// The token's identity (on a pooled connection, given back before the work) and the agent
/// the request acts as. Errors: 401, 400 for a bad actor header, a database error's answer.
async fn caller(state: &AppState, headers: &HeaderMap) -> Result<(Identity, String), ApiError> {
    let db = state.pool.get().await.map_err(|e| ApiError::from_pool(&e))?;
    let identity = auth::authenticate(&db, headers).await?;
    drop(db);
    let agent = auth::actor(headers, &identity.label)?;
    Ok((identity, agent))
}

/// The request's body as JSON: None when empty. Errors: 413 over `max` bytes (the
/// Content-Length alone decides when it says so), 400 `malformed JSON: …` otherwise.
async fn json_body(body: Body, headers: &HeaderMap, max: usize) -> Result<Option<Value>, ApiError> {
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(ApiError::TooLarge(max));
    }
    let bytes: Bytes = axum::body::to_bytes(body, max).await.map_err(|e| {
        let over = std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        match over {
            true => ApiError::TooLarge(max),
            false => ApiError::BadRequest(format!("cannot read the request body: {e}")),
        }
    })?;
    parse_body(&bytes)
}

/// A body's bytes as JSON: None when empty (or only white space). Errors: 400
/// `malformed JSON: <serde's message>`.
pub fn parse_body(bytes: &[u8]) -> Result<Option<Value>, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(bytes).map(Some).map_err(|e| ApiError::BadRequest(format!("malformed JSON: {e}")))
}

/// `todo.rest`'s answer (`{"status", "body"}`) as a response. Errors: 500 when it is not one.
pub fn rest_response(answer: &Value) -> Result<Response, ApiError> {
    let status = answer["status"]
        .as_u64()
        .and_then(|s| u16::try_from(s).ok())
        .and_then(|s| StatusCode::from_u16(s).ok())
        .ok_or_else(|| ApiError::Internal(format!("todo.rest answered no status: {answer}")))?;
    Ok(json_response(status, &answer["body"]))
}

/// `/v1/todos…`: `todo.rest(method, path?query, body)`, answered with its status and body.
async fn rest(
    State(state): State<AppState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers).await?;
    let body = json_body(body, &headers, state.max_body).await?;
    let target = uri.path_and_query().map_or_else(|| uri.path().to_string(), |pq| pq.as_str().to_string());
    let answer: Value = work::one(
        &state.pool,
        &identity.tenant,
        Some(&agent),
        "SELECT todo.rest($1, $2, $3)",
        &[&method.as_str(), &target, &body],
    )
    .await?;
    rest_response(&answer)
}

/// `GET /session/:id/todo`: the conversation's list as OpenCode's todos.
async fn session_todo(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers).await?;
    let list: Value =
        work::one(&state.pool, &identity.tenant, Some(&agent), "SELECT todo.list_as('opencode', $1)", &[&id]).await?;
    Ok(json_response(StatusCode::OK, &list))
}

/// `GET /v1/board`: `todo.board()` of the token's tenant.
async fn board(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers).await?;
    let board: Value = work::one(&state.pool, &identity.tenant, Some(&agent), "SELECT todo.board()", &[]).await?;
    Ok(json_response(StatusCode::OK, &board))
}

/// `GET /v1/events`: the tenant's changes as Server-Sent Events (see `hub`).
async fn events(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    let (identity, _) = caller(&state, &headers).await?;
    let last = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(v.to_str().map_err(|_| ApiError::BadRequest("malformed Last-Event-ID".into()))?.trim()),
    };
    let stream = state.hubs.subscribe(&identity.tenant, last.filter(|l| !l.is_empty())).await?;
    let mut response = Body::from_stream(stream).into_response();
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

async fn healthz() -> Response {
    json_response(StatusCode::OK, &json!({"status": "ok"}))
}

/// Ready when a pooled connection answers the extension check within 2 s.
async fn readyz(State(state): State<AppState>) -> Response {
    let check = async {
        let db = state.pool.get().await.map_err(|e| e.to_string())?;
        let row = db
            .query_opt("SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'", &[])
            .await
            .map_err(|e| crate::db::error_text(&e))?;
        row.map(|_| ()).ok_or_else(|| "the pg_todos extension is not installed".to_string())
    };
    match tokio::time::timeout(Duration::from_secs(2), check).await {
        Ok(Ok(())) => json_response(StatusCode::OK, &json!({"status": "ready"})),
        Ok(Err(e)) => json_response(StatusCode::SERVICE_UNAVAILABLE, &json!({"status": "unavailable", "error": e})),
        Err(_) => json_response(
            StatusCode::SERVICE_UNAVAILABLE,
            &json!({"status": "unavailable", "error": "the database did not answer within 2 s"}),
        ),
    }
}

async fn board_page() -> Response {
    let mut r = BOARD.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies() {
        assert_eq!(parse_body(b"").unwrap(), None);
        assert_eq!(parse_body(b" \n").unwrap(), None);
        assert_eq!(parse_body(br#"{"subject": "x"}"#).unwrap(), Some(json!({"subject": "x"})));
        assert_eq!(
            parse_body(b"{\"subject\": ").unwrap_err(),
            ApiError::BadRequest("malformed JSON: EOF while parsing a value at line 1 column 12".into())
        );
        assert!(
            matches!(parse_body(b"\xff").unwrap_err(), ApiError::BadRequest(m) if m.starts_with("malformed JSON: "))
        );
    }

    #[test]
    fn rest_answers() {
        let r = rest_response(&json!({"status": 201, "body": {"todo": {"id": 1}}})).unwrap();
        assert_eq!(r.status(), StatusCode::CREATED);
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json");
        assert!(rest_response(&json!({"body": {}})).is_err());
        assert!(rest_response(&json!({"status": 99999, "body": {}})).is_err());
    }
}
