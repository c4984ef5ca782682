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

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::Query;
use axum::http::{HeaderMap, Uri};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::auth::Identity;
use crate::db::errors::ApiError;
use crate::db::work::{Act, Db};
use crate::mcp::{config::dialects, Origin, Scope, Tools};

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

/// The value of `param` in the query, else of `header`; None when neither is given or blank.
/// Errors: a header that is not text.
fn pick(
    query: &HashMap<String, String>,
    headers: &HeaderMap,
    param: &str,
    header: &str,
) -> Result<Option<String>, ApiError> {
    if let Some(v) = query.get(param).map(|v| v.trim()).filter(|v| !v.is_empty()) {
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
/// not `key=value&…`).
pub fn scope(identity: Identity, agent: String, headers: &HeaderMap, uri: &Uri) -> Result<Scope, ApiError> {
    let query: HashMap<String, String> = Query::try_from_uri(uri)
        .map(|Query(q)| q)
        .map_err(|e| ApiError::BadRequest(format!("malformed query: {e}")))?;
    let dialects = match pick(&query, headers, "tools", "x-todo-tools")? {
        None => None,
        Some(list) => dialects(&list).map_err(|e| ApiError::BadRequest(format!("tools: {e}")))?,
    };
    Ok(Scope {
        act: Act {
            tenant: identity.tenant,
            conversation: pick(&query, headers, "list", "x-todo-list")?.or(identity.default_list),
            agent: Some(agent),
            turn: pick(&query, headers, "turn", "x-todo-turn")?,
        },
        dialects,
    })
}
