//! The routes: each authenticates (but `/`, `/healthz`, `/readyz`), then runs its one
//! statement through `work::one` and answers with what the extension returned.
//!
//! | route | answer |
//! |---|---|
//! | `POST/GET /v1/todos`, `GET/PATCH/DELETE /v1/todos/:id`, `PATCH /v1/todos` | `todo.rest(method, path?query, body)`: its status and body |
//! | `GET /session/:id/todo` | 200 `todo.list_as('opencode', id)` (OpenCode's `session.todo()`) |
//! | `GET /v1/board?per_list=` | 200 `todo.board(per_list)`, with `"viewer": {"label", "person"}`: who the token is for |
//! | `GET /v1/board/page?list=&after=&page_size=` | `todo.board_page(list, after, page_size)`'s status and body: a list's next page (no `list`: the pool) |
//! | `GET /v1/board/changes?since=&also=` | `todo.board_changes(since, also)`'s status and body: what changed since the board was read |
//! | `GET /v1/board/search?list=&status=&q=&who=&archived=` | `todo.board_search(filters)`'s status and body: the todos the board's filters match (`list` empty: the pool; `archived=true`: the archived ones) |
//! | `POST /v1/board/act` | a person's change on the board: `todo.board_act(body)`'s status and body (403 for a token not made for a person, or a request from another origin) |
//! | `GET /v1/board/todos/:id` | `todo.board_todo(id)`'s status and body: one todo with its history |
//! | `GET /v1/events` | Server-Sent Events of every committed change (`hub`) |
//! | `POST /mcp` | MCP over Streamable HTTP (`mcp`) |
//! | `GET /openapi.json` | the OpenAPI 3.1 description of these routes |
//! | `POST /register` | 404 saying the service has no OAuth, and why the request's token is refused (`no_oauth`) |
//! | `GET /healthz` | 200 `{"status":"ok"}` |
//! | `GET /readyz` | 200 `{"status":"ready"}`, or 503 `{"status":"unavailable","error":"database unavailable"}` when the database does not answer in 2 s (the cause is logged, never sent) |
//! | `GET /`, `GET /board/:file` | the board's page and its style and modules (`assets`), with a Content-Security-Policy that allows scripts and styles of this origin only; revalidated by ETag (304) |
//! | anything else | 404 `{"error":"not found"}` (405 for another method of a known path) |
//!
//! Every request but `/healthz` and `/readyz` must name the service in `Host` and `Origin`
//! (`named`, `hosts`: 403 otherwise, before anything else). Every response carries
//! `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY` and a Content-Security-Policy
//! with `frame-ancestors 'none'`. The JSON answers of the `/v1/todos`, `/session`, `/v1/board`
//! and `/openapi.json` routes, and the board's files, are gzipped for a client that takes it
//! (`encoding`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Extension;
use axum::Router;
use serde_json::{json, Value};
use tokio_postgres::types::ToSql;

use super::auth::{self, Identity};
use super::board;
use super::config::Limits;
use super::encoding;
use super::hosts::Hosts;
use super::hub::Hubs;
use super::streams::Streams;
use super::throttle::{ClientAddr, Outcome, Proxies, Refused, Throttle};
use crate::db::errors::{holds_nul, json_response, ApiError, Refusal};
use crate::db::work::{self, Db};

/// The OpenAPI 3.1 description of these routes, served at `/openapi.json` (checked against
/// the running service by tests/integration/test_openapi.py).
pub const OPENAPI: &str = include_str!("../../assets/openapi.json");

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub hubs: Arc<Hubs>,
    pub streams: Arc<Streams>,
    /// failed authentications per client address and in all
    pub throttle: Arc<Throttle>,
    /// the reverse proxies whose X-Forwarded-For names the client
    pub proxies: Arc<Proxies>,
    /// the names requests may give as Host and Origin
    pub hosts: Arc<Hosts>,
    pub limits: Limits,
    /// `/mcp`
    pub mcp: super::mcp::Service,
}

/// Every route, with the request log around them.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/todos", any(rest))
        .route("/v1/todos/{*rest}", any(rest))
        .route("/session/{id}/todo", get(session_todo))
        .route("/v1/board", get(board))
        .route("/v1/board/page", get(board_page))
        .route("/v1/board/changes", get(board_changes))
        .route("/v1/board/search", get(board_search))
        .route("/v1/board/act", post(board_act))
        .route("/v1/board/todos/{id}", get(board_todo))
        .route("/openapi.json", get(openapi))
        // the JSON answers of the routes above are gzipped for a client that takes it; not
        // those below: the streams, the board's files (compressed once: `board_file`), and
        // answers too short to gain
        .layer(middleware::from_fn(encoding::json))
        .route("/", get(board_file))
        .route("/board/{file}", get(board_file))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/v1/events", get(events))
        .route("/mcp", any(mcp))
        .route("/register", post(no_oauth))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.hosts.clone(), named))
        .layer(middleware::from_fn(secure))
        .layer(middleware::from_fn(log))
        .with_state(state)
}

/// Against DNS rebinding: a request whose `Host`, or `Origin`, is not a name of this service
/// (`hosts`) is refused with 403 saying which setting names it, before anything else (no
/// token looked up). `/healthz` and `/readyz` answer any name: they tell nothing but that the
/// service is up, and probes name the service by whatever address they reach it at.
async fn named(State(hosts): State<Arc<Hosts>>, request: Request, next: Next) -> Response {
    if !matches!(request.uri().path(), "/healthz" | "/readyz") {
        let text = |name| request.headers().get(name).map(|v| v.to_str().unwrap_or("(not text)"));
        if let Err(why) = hosts.check(text(header::HOST), text(header::ORIGIN)) {
            return ApiError::Forbidden(why).into_response();
        }
    }
    next.run(request).await
}

/// The policy of every response but the board's page: nothing may load, nothing may frame it.
const API_POLICY: &str = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The board's policy: scripts and styles from this origin's files only (no inline code, no
/// `eval`: the page holds none, `assets` checks); requests to this origin only (`/v1/board…`,
/// `/v1/events`, `/readyz`); the favicon's `data:`; no frame, no plugin, no base or form target
/// elsewhere.
pub const BOARD_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
     img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The security headers of every response (the board's page sets its own policy first).
async fn secure(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(API_POLICY));
    }
    response
}

/// One line per request on stderr, `request` with its fields: method, path (without the
/// query), route (the template it matched), status, milliseconds until the response's head.
/// Never a header: the token stays out of the log. The same request counted in the metrics
/// (`crate::metrics`), by its route's template, never its path.
async fn log(request: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| crate::metrics::UNMATCHED.to_string(), |m| m.as_str().to_string());
    let response = next.run(request).await;
    let took = start.elapsed();
    let status = response.status().as_u16();
    crate::metrics::global().request(method.as_str(), &route, status, took);
    tracing::info!(method = %method, path = %path, route = %route, status, ms = took.as_millis() as u64, "request");
    response
}

async fn not_found() -> ApiError {
    ApiError::NotFound
}

async fn method_not_allowed() -> Response {
    json_response(StatusCode::METHOD_NOT_ALLOWED, &json!({"error": "method not allowed"}))
}

/// The token's identity (on a pooled connection, given back before the work) and the agent
/// the request acts as, for a request of the TCP peer `peer` (the client, or a trusted proxy
/// naming it in X-Forwarded-For). Errors: 401 without a token (charged to no one, nothing
/// looked up); 429 with `Retry-After` when the token was never seen to authenticate and the
/// client's address, or every address together, failed as often as it may (`throttle`: the
/// token is not looked up); 401 (charged); 400 or 403 for a bad actor header; 503 `database
/// unavailable` when the token cannot be looked up (the cause is logged: a caller not known
/// yet never reads the database's words); 500.
async fn caller(
    state: &AppState,
    headers: &HeaderMap,
    peer: Option<ClientAddr>,
) -> Result<(Identity, String), ApiError> {
    // no bearer token at all (or a malformed one): refused without a connection
    let token = auth::token(headers).map_err(ApiError::Unauthorized)?;
    let client = peer.map(|ClientAddr(ip)| {
        let forwarded: Vec<&str> = headers.get_all("x-forwarded-for").iter().filter_map(|v| v.to_str().ok()).collect();
        state.proxies.client(ip, &forwarded)
    });
    let admitted = match client {
        Some(ip) => Some((ip, state.throttle.admit(ip, token, Instant::now()).map_err(throttled)?)),
        None => None,
    };
    let looked_up = lookup(state, headers).await;
    if let Some((ip, admitted)) = admitted {
        let outcome = match &looked_up {
            Ok(_) => Outcome::Good,
            Err(ApiError::Unauthorized(_)) => Outcome::Failed,
            Err(_) => Outcome::Unknown,
        };
        state.throttle.settle(ip, token, admitted, outcome, Instant::now());
    }
    let identity = looked_up?;
    let agent = auth::actor(headers, &identity)?;
    Ok((identity, agent))
}

/// The 429 of a lookup the throttle refused.
fn throttled(refused: Refused) -> ApiError {
    match refused {
        Refused::Address(n) => ApiError::Throttled(n, false),
        Refused::Everyone(n) => ApiError::Throttled(n, true),
    }
}

/// The identity of the request's token, looked up on a pooled connection. Errors: as
/// `auth::authenticate`, the database's words hidden (logged) when it does not answer.
async fn lookup(state: &AppState, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let hidden = |e: ApiError| match e {
        ApiError::Unavailable(cause) => {
            tracing::warn!("looking up a token: {cause}");
            ApiError::Unavailable("database unavailable".into())
        }
        other => other,
    };
    let db = state.db.pool.get().await.map_err(|e| hidden(ApiError::from_pool(&e)))?;
    auth::authenticate(&db, headers).await.map_err(hidden)
}

/// The request's body as JSON: None when empty. Errors: as `read_body`; 400 `malformed JSON: …`.
async fn json_body(body: Body, headers: &HeaderMap, max: usize, time: Duration) -> Result<Option<Value>, ApiError> {
    parse_body(&read_body(body, headers, max, time).await?)
}

/// The request's body. Errors: 413 over `max` bytes (the Content-Length alone decides when it
/// says so), 408 when it has not all come within `time`, 400 when it cannot be read.
async fn read_body(body: Body, headers: &HeaderMap, max: usize, time: Duration) -> Result<Bytes, ApiError> {
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(ApiError::TooLarge(max));
    }
    let read = tokio::time::timeout(time, axum::body::to_bytes(body, max))
        .await
        .map_err(|_| ApiError::SlowBody(time.as_secs()))?;
    read.map_err(|e| {
        let over = std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        match over {
            true => ApiError::TooLarge(max),
            false => ApiError::BadRequest(format!("cannot read the request body: {e}")),
        }
    })
}

/// A body's bytes as JSON: None when empty (or only white space). Errors: 400
/// `malformed JSON: <serde's message>`, or 400 for a string (or key) holding U+0000, which
/// PostgreSQL's jsonb cannot store.
pub fn parse_body(bytes: &[u8]) -> Result<Option<Value>, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let value: Value =
        serde_json::from_slice(bytes).map_err(|e| ApiError::BadRequest(format!("malformed JSON: {e}")))?;
    if holds_nul(&value) {
        return Err(ApiError::BadRequest(
            "a string of the body holds \\u0000, which cannot be stored: remove it".into(),
        ));
    }
    Ok(Some(value))
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

/// `/v1/todos…`: `todo.rest(method, path?query, body)` in the token's default list (none: the
/// tenant-wide pool), answered with its status and body.
async fn rest(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let body = json_body(body, &headers, state.limits.max_body, state.limits.body_timeout).await?;
    let target = uri.path_and_query().map_or_else(|| uri.path().to_string(), |pq| pq.as_str().to_string());
    // the token's default list is the conversation in context: a POST naming none lands there,
    // as the token's MCP calls do (without one: the tenant-wide pool)
    let act = work::Act {
        tenant: identity.tenant.clone(),
        conversation: identity.default_list.clone(),
        agent: Some(agent),
        turn: None,
        bound: false,
    };
    let answer: Value =
        work::in_context(&state.db, &act, "SELECT todo.rest($1, $2, $3)", &[&method.as_str(), &target, &body]).await?;
    let mut response = rest_response(&answer)?;
    if response.status() == StatusCode::METHOD_NOT_ALLOWED {
        // RFC 9110: a 405 names the methods the resource has
        let allow =
            if uri.path().trim_end_matches('/') == "/v1/todos" { "GET, POST, PATCH" } else { "GET, PATCH, DELETE" };
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
    }
    Ok(response)
}

/// `GET /session/:id/todo`: the conversation's list as OpenCode's todos.
async fn session_todo(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let list: Value =
        work::one(&state.db, &identity.tenant, Some(&agent), "SELECT todo.list_as('opencode', $1)", &[&id]).await?;
    Ok(json_response(StatusCode::OK, &list))
}

/// `GET /v1/board?per_list=N`: `todo.board(per_list)` of the token's tenant (1 to 200 todos of
/// each list, default 200), and who the token is for (`"viewer": {"label", "person"}`: the
/// page offers changes to a person's token only). 400 for a `per_list` out of range.
async fn board(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let per_list = board::per_list(&uri)?;
    let mut board: Value =
        work::one(&state.db, &identity.tenant, Some(&agent), "SELECT todo.board($1)", &[&per_list]).await?;
    board["viewer"] = json!({ "label": identity.label, "person": identity.person });
    Ok(json_response(StatusCode::OK, &board))
}

/// `GET /v1/board/page?list=&after=&page_size=`: `todo.board_page(list, after, page_size)`
/// (no `list`: the tenant-wide pool), answered with its status and body.
async fn board_page(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let page = board::page(&uri)?;
    let args: [&(dyn ToSql + Sync); 3] = [&page.list, &page.after, &page.size];
    answered(&state, &identity, &agent, "SELECT todo.board_page($1, $2, $3)", &args).await
}

/// `GET /v1/board/changes?since=&also=`: `todo.board_changes(since, also)` (no `since`: only a
/// cursor; `also`: ids, comma-separated, of todos to read whether they changed or not),
/// answered with its status and body.
async fn board_changes(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let (since, also) = board::changes(&uri)?;
    answered(&state, &identity, &agent, "SELECT todo.board_changes($1, $2)", &[&since, &also]).await
}

/// `GET /v1/board/search?list=&status=&q=&who=&archived=`: `todo.board_search(filters)` (`list`
/// absent: every list; empty: the tenant-wide pool; `archived=true`: the archived todos, `false`
/// or absent: the others), answered with its status and body.
async fn board_search(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let filters = board::search(&uri)?;
    answered(&state, &identity, &agent, "SELECT todo.board_search($1)", &[&filters]).await
}

/// Refuses a request whose `Origin` names another site than the one it was sent to (its
/// `Host`, or the `X-Forwarded-Host` a reverse proxy in front of the service sets): a page
/// elsewhere can make a browser send it. The board sends its token from the tab's session
/// storage, never a cookie, so such a request has no token anyway; this is the second guard.
/// A request with no `Origin` (not from a browser's script) passes.
pub fn same_origin(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(origin) = headers.get(header::ORIGIN) else { return Ok(()) };
    let authority = origin.to_str().ok().and_then(|o| o.split_once("://")).map(|(_, rest)| rest);
    let hosts = [header::HOST.as_str(), "x-forwarded-host"]
        .into_iter()
        .filter_map(|name| headers.get(name).and_then(|h| h.to_str().ok()))
        .flat_map(|h| h.split(',').map(str::trim));
    match authority {
        Some(a) if hosts.clone().any(|h| a.eq_ignore_ascii_case(h)) => Ok(()),
        _ => Err(ApiError::Forbidden(
            "a change from another site's page is refused: open the board from this service".into(),
        )),
    }
}

/// `POST /v1/board/act`: one change of a person at the board, `todo.board_act(body)`, as
/// `person:<label>` of the token (which must be a person's: 403 otherwise), answered with its
/// status and body. Errors: those of every route (401, 413, 408, 400 for a body that is not
/// JSON, 503); 403 from another origin (`same_origin`).
async fn board_act(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    same_origin(&headers)?;
    let (identity, _) = caller(&state, &headers, client.map(|c| c.0)).await?;
    if !identity.person {
        return Err(ApiError::Forbidden(
            "the board's changes need a token made for a person (todo.create_token(tenant, label, person => true)); this token is an agent's, so the board is read-only".into(),
        ));
    }
    let action = json_body(body, &headers, state.limits.max_body, state.limits.body_timeout)
        .await?
        .ok_or_else(|| ApiError::BadRequest("the body must be an action: {\"op\": …}".into()))?;
    let person = format!("person:{}", identity.label);
    let response = answered(&state, &identity, &person, "SELECT todo.board_act($1)", &[&action]).await?;
    // a list made records no event: the tenant's other pages hear of it from here
    if response.status() == StatusCode::CREATED && action.get("op").and_then(Value::as_str) == Some("create_list") {
        if let Some(name) = action.get("name").and_then(Value::as_str) {
            state.hubs.announce(&identity.tenant, &super::events::list_created(name));
        }
    }
    Ok(response)
}

/// `GET /v1/board/todos/:id`: `todo.board_todo(id)` of the token's tenant, answered with its
/// status and body. Errors: those of every route; 400 for an id that is not a whole number
/// above 0.
async fn board_todo(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (identity, agent) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let id: i64 = id.parse().ok().filter(|i| *i > 0).ok_or_else(|| ApiError::BadRequest("bad todo id".into()))?;
    answered(&state, &identity, &agent, "SELECT todo.board_todo($1)", &[&id]).await
}

/// Runs `sql`, one statement of the extension that answers `{"status", "body"}`, for the
/// caller's tenant as `agent`, and answers with that status and body. Errors: the database's.
async fn answered(
    state: &AppState,
    identity: &Identity,
    agent: &str,
    sql: &str,
    args: &[&(dyn ToSql + Sync)],
) -> Result<Response, ApiError> {
    let answer: Value = work::one(&state.db, &identity.tenant, Some(agent), sql, args).await?;
    rest_response(&answer)
}

/// `GET /v1/events`: the tenant's changes as Server-Sent Events (see `hub`), once the token
/// has a place among the streams (`streams`: 429 past the token's or the tenant's cap, 503
/// past the service's).
async fn events(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (identity, _) = caller(&state, &headers, client.map(|c| c.0)).await?;
    let last = match headers.get("last-event-id") {
        None => None,
        Some(v) => Some(v.to_str().map_err(|_| ApiError::BadRequest("malformed Last-Event-ID".into()))?.trim()),
    };
    let token = auth::token(&headers).map_err(ApiError::Unauthorized)?;
    let slot = state.streams.open(&identity.tenant, token)?;
    let stream = state.hubs.subscribe(&identity.tenant, last.filter(|l| !l.is_empty()), slot).await?;
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

/// Ready when a pooled connection answers the extension check within 2 s. The answer never
/// holds the database's words (anyone may ask): the cause is logged.
async fn readyz(State(state): State<AppState>) -> Response {
    let check = async {
        let db = state.db.pool.get().await.map_err(|e| crate::db::errors::pool_cause(&e))?;
        let version = crate::db::extension_version(&db).await.map_err(|e| crate::db::error_text(&e))?;
        version.map(|_| ()).ok_or_else(|| "the pg_todos extension is not installed".to_string())
    };
    let cause = match tokio::time::timeout(Duration::from_secs(2), check).await {
        Ok(Ok(())) => return json_response(StatusCode::OK, &json!({"status": "ready"})),
        Ok(Err(e)) => e,
        Err(_) => "the database did not answer within 2 s".to_string(),
    };
    tracing::warn!("not ready: {cause}");
    json_response(StatusCode::SERVICE_UNAVAILABLE, &json!({"status": "unavailable", "error": "database unavailable"}))
}

/// `/mcp`, any method: the caller (as every route's) and the request's scope
/// (`mcp::scope`) among its extensions for `mcp::Tools`; a POST's body read (413, 408 as
/// every route's) and checked (`mcp::check`: 400 or 415 with a JSON-RPC error); then rmcp's
/// service, its plain-text errors made JSON-RPC errors (`mcp::errors_as_json`). Or the error
/// (401, 400, 503).
async fn mcp(State(state): State<AppState>, request: Request) -> Response {
    // the request's body is not Sync: only its headers and URI are held across the lookup
    let (parts, body) = request.into_parts();
    let client = parts.extensions.get::<ClientAddr>().copied();
    let scoped = match caller(&state, &parts.headers, client).await {
        Ok((identity, agent)) => super::mcp::scope(identity, agent, &parts.headers, &parts.uri),
        // the database is away, so the token cannot be looked up: the MCP server still
        // answers, from the catalog it was built with, and each call says the database is away
        Err(ApiError::Unavailable(why)) => {
            tracing::warn!("/mcp while the database is away ({why}): the built-in catalog answers");
            super::mcp::away(&parts.headers, &parts.uri)
        }
        Err(e) => Err(e),
    };
    let scope = match scoped {
        Ok(scope) => match super::mcp::resolve(&state.db, scope).await {
            Ok(scope) => scope,
            Err(e) => return e.into_response(),
        },
        Err(e) => return e.into_response(),
    };
    let body = if parts.method == Method::POST {
        let bytes = match read_body(body, &parts.headers, state.limits.max_body, state.limits.body_timeout).await {
            Ok(bytes) => bytes,
            Err(e) => return e.into_response(),
        };
        if let Err((status, id, code, message)) = super::mcp::check(&bytes, &parts.headers) {
            return super::mcp::rpc_error(status, id, code, &message);
        }
        Body::from(bytes)
    } else {
        body
    };
    let mut request = Request::from_parts(parts, body);
    request.extensions_mut().insert(scope);
    super::mcp::errors_as_json(state.mcp.handle(request).await.into_response()).await
}

/// `POST /register`: where an OAuth client posts its registration (RFC 7591) when it found no
/// authorization server: the MCP SDKs' clients (mcp-remote, MCP Inspector) read any 401 of
/// `/mcp` as "this server wants OAuth", find no metadata, post here, and print the answer's
/// body in their error. The answer is 404 (there is no OAuth here), saying the service takes
/// a token of `todo.create_token` and why the token the request carries (these clients send
/// their configured headers along) is refused, looked up and throttled as any route's. Errors:
/// 429, 503 as every route's.
async fn no_oauth(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
) -> Response {
    let why = match caller(&state, &headers, client.map(|c| c.0)).await {
        Ok(_) => "the token sent authenticates: send it to /mcp as it is".to_string(),
        Err(ApiError::Unauthorized(Refusal::Missing)) => Refusal::Missing.description().to_string(),
        Err(ApiError::Unauthorized(refusal)) => format!("the token sent is refused: {}", refusal.description()),
        Err(e) => return e.into_response(),
    };
    let message = format!("{NO_OAUTH}; {why}");
    json_response(StatusCode::NOT_FOUND, &json!({ "error": message }))
}

/// What `/register` says first.
pub const NO_OAUTH: &str = "pg_todos serve has no OAuth (no authorization server, no client registration): \
     it takes a bearer token made by todo.create_token, sent as Authorization: Bearer <token>";

/// `GET /openapi.json`: the API's description; no token needed.
async fn openapi() -> Response {
    let mut r = OPENAPI.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// `GET /` and `GET /board/:file`: one of the board's files (`assets::BOARD`), gzipped for a
/// client that takes it, or 404. Revalidated at every use (`no-cache`: a new binary's page is
/// never run with the old one's modules): 304 with no body when `If-None-Match` names the
/// ETag of what would be sent (`encoding::none_match`).
async fn board_file(uri: Uri, headers: HeaderMap) -> Response {
    let Some(file) = super::assets::served(uri.path()) else {
        return ApiError::NotFound.into_response();
    };
    let gzip = file.gzip.as_ref().filter(|_| encoding::accepts_gzip(&headers));
    let sent = gzip.unwrap_or(&file.identity);
    let current = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .any(|v| v.to_str().is_ok_and(|v| encoding::none_match(v, &sent.etag)));
    let mut r = if current { StatusCode::NOT_MODIFIED.into_response() } else { sent.bytes.clone().into_response() };
    let h = r.headers_mut();
    if !current {
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(file.asset.content_type));
        if gzip.is_some() {
            h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
    }
    if let Ok(etag) = HeaderValue::from_str(&sent.etag) {
        h.insert(header::ETAG, etag);
    }
    h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(BOARD_POLICY));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
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
        // U+0000 anywhere, in a value or a key, however deep: 400 (jsonb cannot hold it)
        for nul in [r#"{"subject": "a\u0000b"}"#, r#"{"todos": [{"id": 1, "subject": "\u0000"}]}"#, r#"{"a\u0000": 1}"#]
        {
            assert_eq!(
                parse_body(nul.as_bytes()).unwrap_err(),
                ApiError::BadRequest("a string of the body holds \\u0000, which cannot be stored: remove it".into()),
                "{nul}"
            );
        }
        assert!(parse_body(br#"{"subject": "\\u0000 spelled out"}"#).is_ok());
    }

    #[test]
    fn the_board_policy_allows_this_origins_files_only() {
        assert!(BOARD_POLICY.starts_with("default-src 'none'") && BOARD_POLICY.contains("frame-ancestors 'none'"));
        assert!(BOARD_POLICY.contains("script-src 'self';") && BOARD_POLICY.contains("style-src 'self';"));
        assert!(!BOARD_POLICY.contains("unsafe") && !BOARD_POLICY.contains("sha256-"), "{BOARD_POLICY}");
        HeaderValue::from_static(BOARD_POLICY);
    }

    #[test]
    fn a_change_from_another_site_is_refused() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, HeaderValue::from_str(v).unwrap());
            }
            h
        };
        // no Origin (curl, an MCP client): not a browser's cross-site request
        assert!(same_origin(&headers(&[("host", "127.0.0.1:8787")])).is_ok());
        assert!(same_origin(&headers(&[("host", "127.0.0.1:8787"), ("origin", "http://127.0.0.1:8787")])).is_ok());
        assert!(
            same_origin(&headers(&[("host", "Board.Example:443"), ("origin", "https://board.example:443")])).is_ok()
        );
        for (host, origin) in [
            ("127.0.0.1:8787", "http://evil.example"),
            ("127.0.0.1:8787", "http://127.0.0.1:8788"),
            ("127.0.0.1:8787", "null"),
            ("127.0.0.1:8787", "http://127.0.0.1:8787.evil.example"),
        ] {
            assert!(
                matches!(same_origin(&headers(&[("host", host), ("origin", origin)])), Err(ApiError::Forbidden(_))),
                "{origin}"
            );
        }
        // an Origin and no Host to compare it with: refused
        assert!(same_origin(&headers(&[("origin", "http://127.0.0.1:8787")])).is_err());
        // behind a reverse proxy: the host the browser used is the forwarded one
        let proxied = |origin: &str| {
            same_origin(&headers(&[
                ("host", "127.0.0.1:8787"),
                ("x-forwarded-host", "board.example"),
                ("origin", origin),
            ]))
        };
        assert!(proxied("https://board.example").is_ok());
        assert!(proxied("https://evil.example").is_err());
    }

    #[tokio::test]
    async fn requests_are_counted_by_route_template_never_by_path() {
        // the request log of `router` around routes of this test's own
        let app: Router = Router::new()
            .route("/metrics-test/{id}", get(|| async { "ok" }))
            .fallback(not_found)
            .method_not_allowed_fallback(method_not_allowed)
            .layer(middleware::from_fn(log));
        let call = |method: &str, uri: &str| {
            let request = Request::builder().method(method).uri(uri).body(Body::empty()).unwrap();
            tower::ServiceExt::oneshot(app.clone(), request)
        };
        for uri in ["/metrics-test/1", "/metrics-test/2", "/metrics-test/%22hostile%22"] {
            assert_eq!(call("GET", uri).await.unwrap().status(), StatusCode::OK);
        }
        assert_eq!(call("DELETE", "/metrics-test/3").await.unwrap().status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(call("GET", "/metrics-test-unknown/7").await.unwrap().status(), StatusCode::NOT_FOUND);
        let text = crate::metrics::global().render(&crate::metrics::Gauges::default(), "test");
        let line = |series: &str| {
            text.lines().find(|l| l.starts_with(series)).map(|l| l.rsplit(' ').next().unwrap().to_string())
        };
        assert_eq!(
            line(r#"pg_todos_http_requests_total{method="GET",route="/metrics-test/{id}",status="200"} "#).as_deref(),
            Some("3"),
            "{text}"
        );
        assert_eq!(
            line(r#"pg_todos_http_requests_total{method="DELETE",route="/metrics-test/{id}",status="405"} "#)
                .as_deref(),
            Some("1"),
            "{text}"
        );
        assert!(
            line(r#"pg_todos_http_requests_total{method="GET",route="unmatched",status="404"} "#).is_some(),
            "{text}"
        );
        // no path reaches a label
        assert!(
            !text.contains("metrics-test/1") && !text.contains("hostile") && !text.contains("metrics-test-unknown")
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
