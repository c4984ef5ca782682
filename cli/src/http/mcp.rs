//! `/mcp`: the MCP server (`crate::mcp::Tools`, the same tools, results and dialect selection
//! as `pg_todos mcp` over stdio) over Streamable HTTP, with the official Rust SDK's transport.
//!
//! - The caller is the bearer token's, found by the route (`routes`) as for every other
//!   route: the tenant comes from the token alone; the agent is `X-Agent-Id`, else the
//!   token's label (`auth::actor`).
//! - The list (the conversation) and the dialects come from the URL, so that a client's
//!   configuration chooses them with the URL alone, or from headers: `?list=<id>` or
//!   `X-Todo-List`, `?tools=<dialects>` or `X-Todo-Tools` (as `pg_todos mcp --tools`),
//!   `?turn=<id>` or `X-Todo-Turn`. The URL wins. No list: the token's default list
//!   (`todo.create_token(…, default_list => …)`), else the tenant-wide pool.
//! - Stateless: no MCP session is kept between requests (every POST carries its own scope),
//!   so a restart of the service is invisible to a client; answers are JSON, not SSE.
//! - A POST's body is read and checked before the SDK sees it (`check`): not JSON is 400 with
//!   a JSON-RPC parse error (-32700), JSON that is no JSON-RPC message 400 (-32600), a string
//!   holding U+0000 400 (-32602: PostgreSQL stores none), a JSON-RPC message of another
//!   Content-Type 415; every error the SDK answers in plain text is sent as a JSON-RPC error
//!   object (`errors_as_json`), the text of a 5xx only in the log.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::Query;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::Response;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};

use super::auth::Identity;
use crate::db::errors::{holds_nul, ApiError, NUL_REFUSED};
use crate::db::work::{self, Act, Db};
use crate::mcp::built_in;
use crate::mcp::config::{self, dialects};
use crate::mcp::{Origin, Scope, Tools, INTERNAL};

/// rmcp's Streamable HTTP service with the MCP server's tools.
pub type Service = StreamableHttpService<Tools, NeverSessionManager>;

/// The service on `db`, reading POST bodies of at most `max_body` bytes.
pub fn service(db: Db, max_body: usize) -> Service {
    let config = StreamableHttpServerConfig::default()
        // every request needs a bearer token: a rebinding page has none to send
        .disable_allowed_hosts()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(max_body);
    // one server for every request (each gets a clone): the catalog it last read is shared
    let tools = Tools::new(db, Origin::Request);
    StreamableHttpService::new(move || Ok(tools.clone()), Arc::new(NeverSessionManager::default()), config)
}

/// A JSON-RPC error object (`{"jsonrpc": "2.0", "id", "error": {"code", "message"}}`) as a
/// response of `status`.
pub fn rpc_error(status: StatusCode, id: Value, code: i32, message: &str) -> Response {
    crate::db::errors::json_response(status, &rpc_error_object(id, code, message))
}

/// `{"jsonrpc": "2.0", "id", "error": {"code", "message"}}`.
fn rpc_error_object(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Whether `headers` say the body is JSON (`Content-Type: application/json`, any parameters).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/json"))
}

/// Whether `body`, a POST's, is a JSON-RPC message the SDK may read, with the `headers` it
/// came with. Errors, as (status, id, JSON-RPC code, message): 400 -32700 when it is not JSON
/// (whatever its Content-Type: the body decides); 400 -32602 when a string or key in it holds
/// U+0000; 400 -32600 when it is JSON but no JSON-RPC message; 415 -32600 when it is one but
/// its Content-Type is not `application/json`. The id is the message's when it has one.
pub fn check(body: &[u8], headers: &HeaderMap) -> Result<(), (StatusCode, Value, i32, String)> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        (StatusCode::BAD_REQUEST, Value::Null, -32700, format!("Parse error: the body is not JSON ({e})"))
    })?;
    let id = value.get("id").filter(|i| i.is_string() || i.is_number()).cloned().unwrap_or(Value::Null);
    if holds_nul(&value) {
        return Err((StatusCode::BAD_REQUEST, id, -32602, format!("Invalid params: {NUL_REFUSED}")));
    }
    if let Err(e) = serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value) {
        let message = format!("Invalid Request: not a JSON-RPC 2.0 request, notification or response ({e})");
        return Err((StatusCode::BAD_REQUEST, id, -32600, message));
    }
    if !is_json(headers) {
        let message = "Invalid Request: Content-Type must be application/json".to_string();
        return Err((StatusCode::UNSUPPORTED_MEDIA_TYPE, id, -32600, message));
    }
    Ok(())
}

/// The SDK's answer, with an error it sent as plain text (406, 405, 413, 5xx …) made a
/// JSON-RPC error object of the same status: its words for a 4xx, `internal error` for a 5xx
/// (its words in the log).
pub async fn errors_as_json(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(response.headers()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map_or_else(|_| String::new(), |b| String::from_utf8_lossy(&b).into_owned());
    let (code, message) = if status.is_server_error() {
        tracing::error!("internal error: /mcp: {status} {text}");
        (-32603, INTERNAL.to_string())
    } else {
        (-32600, text)
    };
    let json = rpc_error_object(Value::Null, code, &message);
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(json.to_string()))
}

/// The value of `param` in the query, else of `header`; None when neither is given or blank.
/// Errors: a header that is not text; a value holding U+0000 (PostgreSQL stores none).
fn pick(
    query: &HashMap<String, String>,
    headers: &HeaderMap,
    param: &str,
    header: &str,
) -> Result<Option<String>, ApiError> {
    if let Some(v) = query.get(param).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        if v.contains('\0') {
            return Err(ApiError::BadRequest(format!("{param}: {NUL_REFUSED}")));
        }
        return Ok(Some(v.to_string()));
    }
    match headers.get(header) {
        None => Ok(None),
        Some(v) => {
            let v = v.to_str().map_err(|_| ApiError::BadRequest(format!("{header} must be text")))?.trim();
            Ok((!v.is_empty()).then(|| v.to_string()))
        }
    }
}

/// The scope of one request of `identity` acting as `agent` (`routes::caller`), from its URL
/// and headers. Errors: 400 (an unknown dialect, a header that is not text, a query that is
/// not `key=value&…`, a value holding U+0000).
pub fn scope(identity: Identity, agent: String, headers: &HeaderMap, uri: &Uri) -> Result<Scope, ApiError> {
    let (query, dialects) = requested(headers, uri)?;
    // a list the URL, a header or the token names binds the connection to it
    let conversation = pick(&query, headers, "list", "x-todo-list")?.or(identity.default_list);
    Ok(Scope {
        act: Act {
            tenant: identity.tenant,
            bound: conversation.is_some(),
            conversation,
            agent: Some(agent),
            turn: pick(&query, headers, "turn", "x-todo-turn")?,
        },
        dialects,
        away: false,
    })
}

/// The scope of a request that came while the database was away (its token could not be
/// looked up): no tenant, and the dialects of its URL or headers (`scope`'s) that the built-in
/// catalog knows (`built_in::known`). The MCP server answers it from the built-in catalog, and
/// each of its calls says the database is away (`Scope::away`), so that a client starting
/// meanwhile lists the tools rather than meeting a 503 it may never retry. Errors: 400 as
/// `scope`'s.
pub fn away(headers: &HeaderMap, uri: &Uri) -> Result<Scope, ApiError> {
    let (_, dialects) = requested(headers, uri)?;
    Ok(Scope { act: Act::default(), dialects: dialects.map(|names| built_in::known(&names)), away: true })
}

/// A request's query, by parameter.
type Params = HashMap<String, String>;

/// A request's query, and the dialects its URL or headers name, as given (None: every
/// one). Errors: 400 (an empty dialect name, a header that is not text, a query that is not
/// `key=value&…`, a value holding U+0000).
fn requested(headers: &HeaderMap, uri: &Uri) -> Result<(Params, Option<BTreeSet<String>>), ApiError> {
    let query: HashMap<String, String> = Query::try_from_uri(uri)
        .map(|Query(q)| q)
        .map_err(|e| ApiError::BadRequest(format!("malformed query: {e}")))?;
    let dialects = match pick(&query, headers, "tools", "x-todo-tools")? {
        None => None,
        Some(list) => dialects(&list).map_err(|e| ApiError::BadRequest(format!("tools: {e}")))?,
    };
    Ok((query, dialects))
}

/// The dialects there are (`config::KNOWN_DIALECTS`), as last read, and when.
static KNOWN: Mutex<Option<(Instant, Arc<Value>)>> = Mutex::new(None);

/// How long a name none of the known dialects has waits before the list is read again (a
/// dialect an update of the extension added is found then).
const KNOWN_FOR: Duration = Duration::from_secs(10);

/// `scope` with its dialects by their names (an alias made the name), checked against the
/// dialects there are (a scope of a request that came while the database was away, `away`,
/// as it is) (read once, and again for an unknown name at most every 10 s).
/// Errors: 400 for an unknown dialect, naming it and the dialects there are; the database's
/// (503) when the list cannot be read.
pub async fn resolve(db: &Db, mut scope: Scope) -> Result<Scope, ApiError> {
    if scope.away {
        return Ok(scope);
    }
    let Some(names) = scope.dialects.take() else {
        return Ok(scope);
    };
    let cached = KNOWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    let fresh = cached.as_ref().is_some_and(|(at, _)| at.elapsed() < KNOWN_FOR);
    let found = match &cached {
        Some((_, known)) => config::resolve(&names, known),
        None => Err(String::new()),
    };
    let resolved: Result<BTreeSet<String>, String> = match found {
        Ok(set) => Ok(set),
        Err(e) if fresh => Err(e),
        Err(_) => {
            let known: Value = work::in_context(db, &scope.act, config::KNOWN_DIALECTS, &[]).await?;
            let known = Arc::new(known);
            *KNOWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                Some((Instant::now(), Arc::clone(&known)));
            config::resolve(&names, &known)
        }
    };
    scope.dialects = Some(resolved.map_err(|e| ApiError::BadRequest(format!("tools: {e}")))?);
    Ok(scope)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(content_type: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_str(content_type).unwrap());
        h
    }

    fn code(body: &[u8], content_type: &str) -> Option<(u16, Value, i32)> {
        check(body, &headers(content_type)).err().map(|(s, id, c, _)| (s.as_u16(), id, c))
    }

    #[test]
    fn bodies_are_checked_before_the_sdk_reads_them() {
        let json = "application/json";
        for not_json in [&b"hello"[..], b"", b"{\"jsonrpc\": ", b"\xff\xfe"] {
            assert_eq!(code(not_json, json), Some((400, Value::Null, -32700)), "{not_json:?}");
            // whatever the Content-Type says
            assert_eq!(code(not_json, "text/plain"), Some((400, Value::Null, -32700)), "{not_json:?}");
        }
        assert_eq!(code(br#"{"a": 1}"#, json), Some((400, Value::Null, -32600)));
        assert_eq!(code(br#"[1, 2]"#, json), Some((400, Value::Null, -32600)));
        let list = br#"{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}"#;
        assert_eq!(code(list, json), None);
        assert_eq!(code(list, "application/json; charset=utf-8"), None);
        assert_eq!(code(list, "text/plain"), Some((415, json!(7), -32600)));
        let nul = br#"{"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "x\u0000"}}"#;
        let (status, id, c, message) = check(nul, &headers(json)).unwrap_err();
        assert_eq!((status.as_u16(), id, c), (400, json!("a"), -32602));
        assert!(message.contains("\\u0000") && message.ends_with("remove it"), "{message}");
    }

    #[test]
    fn a_value_holding_nul_in_the_url_is_refused() {
        let uri: Uri = "/mcp?list=a%00b".parse().unwrap();
        let query: HashMap<String, String> = Query::try_from_uri(&uri).unwrap().0;
        let e = pick(&query, &HeaderMap::new(), "list", "x-todo-list").unwrap_err();
        assert_eq!(e, ApiError::BadRequest(format!("list: {NUL_REFUSED}")));
    }
}
