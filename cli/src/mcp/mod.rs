//! `pg_todos mcp` (also installed as `pg_todos_mcp`): an MCP server over stdio whose tools
//! are the pg_todos catalog.
//!
//! - `tools/list` is `todo.tools()`, read from the database on each request (the first one of a
//!   stdio server: as read at start, beside the client's handshake; no second copy of
//!   any schema; a call finds its tool's dialect in the catalog last read, and reads it again
//!   for a name it does not hold), kept to the dialects asked for (`--tools`, by each tool's
//!   `_meta."pg_todos/dialect"`); a name several of them share (`write_todos`, `todo_write`,
//!   `update_plan`, `todo`) is listed once, as the first in the catalog's order has it.
//! - `tools/call` runs `todo.call_mcp(name, args)` in its own transaction after
//!   `todo.set_context(tenant, conversation, agent, turn)` and answers with the MCP result the
//!   extension builds (the text the model reads, the structured content, `isError`), as is.
//!   A server kept to some dialects calls the tool by its qualified name, `dialect/name`, so
//!   the dialect's own tool runs even where two dialects share a name; a tool outside them is
//!   an `unknown_tool` error result.
//! - The context comes from this server's configuration and the MCP session, never from the
//!   model's arguments. The conversation (the list) is by default the project's, named from
//!   the directory the server is started in (`project:/home/me/app`), so it survives a restart
//!   and is shared by the servers of one tenant started there; `--conversation`,
//!   `PG_TODOS_CONVERSATION` or `CLAUDE_CODE_TASK_LIST_ID` name another, `--session-list` gives
//!   each server process a new one (see `config`). The agent defaults to the client's name and
//!   the session's id, the turn to the session's id.
//! - Each call has a lock timeout (10 s) and a statement timeout (30 s). Serialization
//!   failures and deadlocks are retried.
//! - Over stdio the server starts whatever the database's state: the check (the extension, the
//!   tenant, `--tools`) runs beside the handshake on the one pooled connection, which the calls
//!   then use; a configuration error exits 2; a database away makes `tools/list` the catalog
//!   the server was built with (`built_in`; `notifications/tools/list_changed` follows once it
//!   answers, and the database's own is listed then) and each call a tool error naming it.
//!   Over HTTP, a request that came while the database was away (its token could not be looked
//!   up) is answered the same way (`Scope::away`).

pub mod app;
pub mod built_in;
pub mod config;
mod follow;
pub mod prompts;
pub mod resources;
pub mod tasks;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, GetTaskParams, GetTaskResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, PromptMessage,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents, ResultType, Role,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};

use crate::db::error_text as db_error;
use crate::db::errors::ApiError;
use crate::db::work::{self, Act, Db};
use config::Config;
use pg_todos_core::model_turns::goes_without_turn;

/// What the calls of a session or a request act as, and the dialects they may see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    /// the context; an agent None is named from the MCP client (stdio)
    pub act: Act,
    /// None: every dialect
    pub dialects: Option<BTreeSet<String>>,
    /// the database was away when the request came (`/mcp`: its token could not be looked
    /// up): `tools/list` answers the built-in catalog (`built_in`) and each call says the
    /// database is away, without trying it
    pub away: bool,
}

/// Where a call's scope comes from.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per server, behind an Arc
pub enum Origin {
    /// `pg_todos mcp` over stdio: the configuration's, one for the process; the agent, when
    /// not configured, is the client's name and `session` (this process's id). `unchecked`:
    /// the names of `--tools` while they have not been checked against the database's
    /// dialects (it was away at start): checked at the first call that reaches it
    Process { scope: Mutex<Scope>, session: String, unchecked: Mutex<Option<BTreeSet<String>>> },
    /// `/mcp` of `pg_todos serve`: each request's, from its token, URL and headers, put among
    /// the request's extensions by the route (`http::mcp`)
    Request,
}

/// The MCP server: the same tools, results and dialect selection over stdio and over
/// Streamable HTTP; only where the scope comes from differs. Every call runs through the
/// service's database layer (`db::work`): a pooled connection (reopened after the
/// database restarts), the tenant's share of the pool, one transaction with time limits and
/// the scope's context, retries of serialization failures and deadlocks.
#[derive(Clone)]
pub struct Tools {
    db: Db,
    origin: Arc<Origin>,
    /// `todo.tools()` as last read (the same for every tenant): how a call finds its tool's
    /// dialect without reading the catalog again
    known: Arc<Mutex<Arc<Vec<Value>>>>,
    /// a task is waiting for the database to tell the client the tools changed (stdio: the
    /// list was answered empty while it was away)
    watching: Arc<std::sync::atomic::AtomicBool>,
    /// `todo.tools()` as read at start (stdio), for the first tools/list: read while the
    /// client's handshake runs, so that the first list does not wait for a read of its own
    first: Arc<Mutex<Option<Arc<Vec<Value>>>>>,
    /// the resources the client subscribed to (stdio), by URI, with the list each names (None:
    /// the pool)
    subscriptions: Arc<Mutex<BTreeMap<String, Option<String>>>>,
    /// a task follows the change feed for the subscriptions (`follow`)
    following: Arc<std::sync::atomic::AtomicBool>,
}

/// Turns true when the process shuts down (`stop_listening`): every open listen then ends,
/// so that `pg_todos serve` is not left waiting for requests that never finish.
pub(crate) static STOPPING: std::sync::LazyLock<tokio::sync::watch::Sender<bool>> =
    std::sync::LazyLock::new(|| tokio::sync::watch::Sender::new(false));

/// Ends every open `subscriptions/listen` of this process (each answers its final result) and
/// any opened after: what `pg_todos serve` calls at shutdown.
pub fn stop_listening() {
    STOPPING.send_replace(true);
}

/// A lock's value even when a thread panicked holding it.
fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The tools of `catalog` a scope sees, in the catalog's order: those of its dialects, a name
/// several of them share once, as the first of them has it (clients want each name once).
fn kept<'a>(scope: &Scope, catalog: &'a [Value]) -> Vec<&'a Value> {
    let wanted = |t: &&Value| match &scope.dialects {
        None => true,
        Some(set) => t["_meta"]["pg_todos/dialect"].as_str().is_some_and(|d| set.contains(d)),
    };
    let mut names = BTreeSet::new();
    catalog.iter().filter(wanted).filter(|t| names.insert(t["name"].as_str().unwrap_or_default())).collect()
}

/// The dialect of the tool `name` a scope sees in `catalog`.
fn dialect_of(scope: &Scope, catalog: &[Value], name: &str) -> Option<String> {
    kept(scope, catalog)
        .into_iter()
        .find(|t| t["name"] == name)
        .and_then(|t| t["_meta"]["pg_todos/dialect"].as_str().map(str::to_string))
}

impl Tools {
    pub fn new(db: Db, origin: Origin) -> Tools {
        Tools {
            db,
            origin: Arc::new(origin),
            known: Arc::default(),
            watching: Arc::default(),
            first: Arc::default(),
            subscriptions: Arc::default(),
            following: Arc::default(),
        }
    }

    /// The scope of a request. Errors: an HTTP request that reached the handler without one
    /// (not through the route's authentication).
    fn scope(&self, context: &RequestContext<RoleServer>) -> Result<Scope, McpError> {
        match self.origin.as_ref() {
            Origin::Process { scope, session, .. } => {
                let mut scope = locked(scope).clone();
                // the client's name alone would make two sessions of one client the same agent
                // (each could finish the other's claims): the session's id goes with it
                scope.act.agent.get_or_insert_with(|| {
                    let client =
                        context.peer.peer_info().map_or_else(|| "mcp".to_string(), |p| p.client_info.name.clone());
                    format!("{client}@{session}")
                });
                Ok(scope)
            }
            Origin::Request => context
                .extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Scope>())
                .cloned()
                .ok_or_else(|| McpError::internal_error("a request without a caller", None)),
        }
    }

    /// `scope`, with the names of `--tools` checked against the database's dialects first when
    /// they have not been yet (stdio, the database away at start). Errors, in words for the
    /// client: the database (still) away; a name none of its dialects has.
    async fn checked_scope(&self, context: &RequestContext<RoleServer>) -> Result<Scope, String> {
        let scope = self.scope(context).map_err(|e| e.message.to_string())?;
        let Origin::Process { scope: kept, unchecked, .. } = self.origin.as_ref() else { return Ok(scope) };
        let Some(names) = locked(unchecked).clone() else { return Ok(scope) };
        let known: Value = work::in_context(&self.db, &scope.act, config::KNOWN_DIALECTS, &[])
            .await
            .map_err(|f| failure(f, &self.origin))?;
        let resolved = config::resolve(&names, &known).map_err(|e| format!("--tools: {e}"))?;
        locked(kept).dialects = Some(resolved.clone());
        *locked(unchecked) = None;
        Ok(Scope { dialects: Some(resolved), ..scope })
    }

    /// After a tools/list answered the built-in catalog because the database was away (stdio): one task at
    /// a time tries it every 2 s and, once it answers, sends `notifications/tools/list_changed`
    /// (the client then lists the tools again).
    fn watch_for_database(&self, peer: rmcp::Peer<RoleServer>) {
        if self.watching.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let (pool, watching) = (self.db.pool.clone(), self.watching.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(2)).await;
                if pool.get().await.is_ok() {
                    tracing::info!("the database answers again: tools/list_changed sent");
                    let _ = peer.notify_tool_list_changed().await;
                    break;
                }
            }
            watching.store(false, std::sync::atomic::Ordering::SeqCst);
        });
    }

    /// The built-in catalog (`built_in`) kept to the request's dialects: those of `--tools`
    /// the catalog knows when they could not be checked against the database's yet.
    fn built_in(&self, context: &RequestContext<RoleServer>) -> Result<Vec<Value>, McpError> {
        let mut scope = self.scope(context)?;
        if let Origin::Process { unchecked, .. } = self.origin.as_ref() {
            if let Some(names) = locked(unchecked).as_ref() {
                scope.dialects = Some(built_in::known(names));
            }
        }
        Ok(kept(&scope, &built_in::tools()).into_iter().cloned().collect())
    }

    /// Whether the database cannot be reached now (no connection from the pool).
    async fn db_away(&self) -> bool {
        self.db.pool.get().await.is_err()
    }

    /// `todo.tools()`, read now (and kept, see `known`).
    async fn read_catalog(&self, scope: &Scope) -> Result<Arc<Vec<Value>>, String> {
        let tools: Value = work::in_context(&self.db, &scope.act, "SELECT todo.tools()", &[])
            .await
            .map_err(|f| failure(f, &self.origin))?;
        let all = Arc::new(match tools {
            Value::Array(all) => all,
            _ => Vec::new(),
        });
        *locked(&self.known) = Arc::clone(&all);
        Ok(all)
    }

    /// `todo.tools()` kept to the scope's dialects: read now, or, for the first list of a stdio
    /// server, as read at start (`first`).
    async fn catalog(&self, scope: &Scope) -> Result<Vec<Value>, String> {
        let first = locked(&self.first).take();
        let all = match first {
            Some(all) => all,
            None => self.read_catalog(scope).await?,
        };
        Ok(kept(scope, &all).into_iter().cloned().collect())
    }

    /// The dialect of the tool `name` the scope sees (None: it sees none of that name), from
    /// the catalog last read; read again when that one has no such tool (a tool an upgrade of
    /// the extension added). A tool an upgrade removed is still found there and then refused
    /// by `todo.call_mcp` as unknown.
    async fn dialect(&self, scope: &Scope, name: &str) -> Result<Option<String>, String> {
        let known = Arc::clone(&locked(&self.known));
        if let Some(dialect) = dialect_of(scope, &known, name) {
            return Ok(Some(dialect));
        }
        Ok(dialect_of(scope, &self.read_catalog(scope).await?, name))
    }

    /// The scope of a request for the resource `uri` and the list it names (None: the pool).
    /// Errors: -32602 with `data.uri` for a URI of no list, or of a list this connection may not
    /// read (`resources::reachable`); the database away.
    async fn resource(
        &self,
        uri: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(Scope, Option<String>), McpError> {
        let refused = |e: String| McpError::invalid_params(e, Some(json!({ "uri": uri })));
        let list = resources::list_of(uri).map_err(refused)?;
        let scope = self.checked_scope(context).await.map_err(|e| McpError::internal_error(e, None))?;
        resources::reachable(scope.act.conversation.as_deref(), scope.act.bound, list.as_deref()).map_err(refused)?;
        if scope.away {
            return Err(McpError::internal_error(format!("database error: {AWAY}"), None));
        }
        Ok((scope, list))
    }

    /// What a prompt reads of the scope's list (`prompts::Read`), in words for the client when
    /// it cannot (the database away).
    async fn read_list(&self, scope: &Scope, what: prompts::Read) -> Result<Value, String> {
        if scope.away {
            return Err(AWAY.to_string());
        }
        let list = &scope.act.conversation;
        let sql = match what {
            prompts::Read::Tasks => "SELECT todo.list_as('claude-tasks', $1)",
            prompts::Read::OpenBlock => "SELECT to_jsonb(todo.todo_open_block($1))",
        };
        work::in_context(&self.db, &scope.act, sql, &[list])
            .await
            .map_err(|f| format!("database error: {}", failure(f, &self.origin)))
    }

    /// Runs one tool (`name` or `dialect/name`) through `todo.call_mcp` in the scope's
    /// context. The answer is MCP's CallToolResult as JSON.
    async fn call(&self, scope: &Scope, name: &str, args: &Value) -> Result<Value, String> {
        work::in_context(&self.db, &scope.act, "SELECT todo.call_mcp($1, $2)", &[&name, args])
            .await
            .map_err(|f| failure(f, &self.origin))
    }

    /// A waiting claim (`tasks`) started for a call of coord's `claim_todo` with a wait: the
    /// claim's result when it was granted at once, else the task's handle; a failure is a
    /// tool error, as any call's.
    async fn start_wait(&self, scope: &Scope, args: &Value) -> CallToolResponse {
        let started = work::in_context::<Value>(&self.db, &scope.act, tasks::START, &[args])
            .await
            .map_err(|f| format!("database error: {}", failure(f, &self.origin)))
            .and_then(tasks::answer);
        started.unwrap_or_else(|e| CallToolResult::error(vec![ContentBlock::text(e)]).into())
    }

    /// Runs `sql` (`tasks::GET` or `tasks::CANCEL`) on the task `id` in the request's scope.
    /// Errors: -32602 with `data.taskId` for a task this tenant does not have; the database
    /// away or failing.
    async fn on_wait(&self, sql: &str, id: &str, context: &RequestContext<RoleServer>) -> Result<Value, McpError> {
        let scope = self.checked_scope(context).await.map_err(|e| McpError::internal_error(e, None))?;
        if scope.away {
            return Err(McpError::internal_error(format!("database error: {AWAY}"), None));
        }
        work::in_context::<Value>(&self.db, &scope.act, sql, &[&id]).await.map_err(|f| {
            let unknown = f.sqlstate.as_deref() == Some("P0002");
            let text = failure(f, &self.origin);
            match unknown {
                true => McpError::invalid_params(text, Some(json!({ "taskId": id }))),
                false => McpError::internal_error(format!("database error: {text}"), None),
            }
        })
    }

    /// An error of the server's own (not the database's answer) for the client: its text over
    /// stdio (the caller runs the server), `internal error` over HTTP, the text in the log.
    fn internal(&self, text: String) -> McpError {
        match self.origin.as_ref() {
            Origin::Process { .. } => McpError::internal_error(text, None),
            Origin::Request => {
                tracing::error!("internal error: {text}");
                McpError::internal_error(INTERNAL, None)
            }
        }
    }
}

/// Why `/mcp` takes no subscription.
const NO_SESSION: &str = "resources/subscribe needs a session, and /mcp keeps none: use subscriptions/listen (protocol 2026-07-28), subscribe over stdio (pg_todos mcp), or follow GET /v1/events";

/// What a call is told when the request came while the database was away (`Scope::away`).
pub const AWAY: &str = "database unavailable: the service cannot reach the database now; try again in a few seconds";

/// What an HTTP client is told of a failure that is not its data; the cause is logged.
pub const INTERNAL: &str = "internal error (the service's log has the cause)";

/// Whether an error the extension raised, by its SQLSTATE, is about the caller's data and says
/// what to fix in its own words: a data exception but PostgreSQL's own parse errors of a value
/// (22P02 invalid text, 22003 a number out of range, 22007 and 22008 a date), which name no
/// field of the request and may be about a value the service made; a constraint (23); the
/// lifecycle or a claim (55000, 55006); no such row (P0002); a tenant not registered (42704);
/// a request past a limit of the extension (54000).
fn callers_own(sqlstate: &str) -> bool {
    (sqlstate.starts_with("22") && !matches!(sqlstate, "22P02" | "22003" | "22007" | "22008"))
        || sqlstate.starts_with("23")
        || matches!(sqlstate, "55000" | "55006" | "P0002" | "42704" | "54000")
}

/// A failed statement in words for the model: why there was no database (a timeout, the
/// database away, the tenant's share taken), a refusal of the request's own (400: a string
/// holding U+0000), and the database's `<SQLSTATE>: <message>` when the error is about the
/// caller's data (`callers_own`) or the caller runs the server (stdio). Any other error over
/// HTTP (a privilege, an internal error, a value the client library could not read) is
/// `internal error`, its text in the log.
fn failure(f: work::Failure, origin: &Origin) -> String {
    match f.answer {
        ApiError::Unavailable(m) | ApiError::Busy(m) => m,
        ApiError::Internal(m) => {
            if matches!(origin, Origin::Process { .. }) || f.sqlstate.as_deref().is_some_and(callers_own) {
                m
            } else {
                tracing::error!("internal error: {m}");
                INTERNAL.to_string()
            }
        }
        other => {
            let (_, body) = other.parts();
            body["error"].as_str().map_or_else(|| body.to_string(), str::to_string)
        }
    }
}

/// `todo.call_mcp`'s answer as rmcp's result; an answer that is not one is a tool error that
/// says so.
fn result(out: Value) -> CallToolResult {
    match serde_json::from_value::<CallToolResult>(out) {
        Ok(mut r) => {
            // the extension speaks no particular protocol version: rmcp drops the field for
            // peers older than 2026-07-28, which need it absent, and newer ones require it
            r.result_type.get_or_insert(ResultType::COMPLETE);
            r
        }
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
            "todo.call_mcp() did not answer an MCP result: {e}"
        ))]),
    }
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        // over stdio the tools can change: the built-in catalog was listed while the database
        // was away, the database's is listed once it answers
        let capabilities = match self.origin.as_ref() {
            Origin::Process { .. } => ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_tasks()
                .build(),
            // no session is kept over HTTP: subscriptions are 2026-07-28's subscriptions/listen
            // (resources/subscribe is refused, saying so)
            Origin::Request => ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_tasks()
                .build(),
        };
        ServerConfig::new(app::with_extension(capabilities))
            .with_server_info(Implementation::new("pg_todos_mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Durable todos in PostgreSQL (pg_todos). The tools act for this server's tenant and \
                 list (by default the project's, named from the directory the server was started in); \
                 ids and lists persist across sessions and are shared with other agents working on the \
                 same list.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // the errors of `checked_scope` and `catalog` are already in words for the client
        // a request that came while the database was away (`Scope::away`) is known to be so:
        // no read of the catalog, and no second probe of the pool
        let (listed, away) = match self.checked_scope(&context).await {
            Ok(scope) if scope.away => (Err(AWAY.to_string()), true),
            Ok(scope) => (self.catalog(&scope).await, false),
            Err(e) => (Err(e), false),
        };
        let catalog = match listed {
            Ok(catalog) => catalog,
            // a database away answers the catalog this server was built with (a client that
            // meets an empty or failed list at start may never list again), and a stdio client
            // is told when the database's own is there (the server keeps running: its calls
            // are tool errors meanwhile)
            Err(e) if away || self.db_away().await => {
                tracing::warn!("tools/list answered the built-in catalog: {e}");
                if matches!(self.origin.as_ref(), Origin::Process { .. }) {
                    self.watch_for_database(context.peer.clone());
                }
                self.built_in(&context)?
            }
            Err(e) => return Err(McpError::internal_error(e, None)),
        };
        let tools = catalog
            .into_iter()
            .map(app::marked)
            .map(serde_json::from_value::<Tool>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.internal(format!("todo.tools(): {e}")))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let scope = self.scope(&context)?;
        let listed = resources::listed(scope.act.conversation.as_deref()).into_iter().chain([app::listed()]);
        Ok(ListResourcesResult::with_all_items(listed.collect()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(ListResourceTemplatesResult::with_all_items(resources::templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri == app::URI {
            return Ok(app::read(self.scope(&context)?.act.conversation.as_deref()).into());
        }
        let (scope, list) = self.resource(&request.uri, &context).await?;
        let act = Act { conversation: list.clone(), ..scope.act };
        let path = resources::rest_path(list.as_deref());
        let statements: [work::Statement; 2] =
            [("SELECT todo.todo_writ('/todo list')", &[]), ("SELECT todo.rest('GET', $1, NULL)->'body'", &[&path])];
        let rows = work::rows(&self.db, &act, &statements)
            .await
            .map_err(|f| McpError::internal_error(format!("database error: {}", failure(f, &self.origin)), None))?;
        let text: String = rows[0].try_get(0).map_err(|e| self.internal(format!("todo.todo_writ: {e}")))?;
        let json: Value = rows[1].try_get(0).map_err(|e| self.internal(format!("todo.rest: {e}")))?;
        let uri = request.uri;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri.clone()).with_mime_type("text/plain"),
            ResourceContents::text(json.to_string(), uri).with_mime_type("application/json"),
        ])
        .into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if matches!(self.origin.as_ref(), Origin::Request) {
            return Err(McpError::invalid_request(NO_SESSION, None));
        }
        let (scope, list) = self.resource(&request.uri, &context).await?;
        let uri = request.uri;
        self.subscribe_to(&scope, uri.clone(), list, context.peer.clone())
            .await
            .map_err(|e| McpError::internal_error(format!("database error: {e}"), None))?
            .map_err(|e| McpError::invalid_params(e, Some(json!({ "uri": uri }))))
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(resources::accepted(requested))
    }

    async fn listen(&self, listen: SubscriptionContext) -> Result<(), McpError> {
        self.listen_for(listen).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        locked(&self.subscriptions).remove(&request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(prompts::listed()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let name = request.name;
        let Some(p) = prompts::find(&name) else {
            let message = format!("unknown prompt {name:?}; prompts/list lists the prompts");
            return Err(McpError::invalid_params(message, Some(json!({ "name": name }))));
        };
        let args = prompts::checked(p, &request.arguments.unwrap_or_default())
            .map_err(|e| McpError::invalid_params(e, Some(json!({ "name": name }))))?;
        let scope = self.checked_scope(&context).await.map_err(|e| McpError::internal_error(e, None))?;
        if p.reads == Some(prompts::Read::Tasks) && scope.act.conversation.is_none() {
            return Err(McpError::invalid_params(
                prompts::NO_LIST.replace("{name}", p.name),
                Some(json!({ "name": name })),
            ));
        }
        let read = match p.reads {
            None => Value::Null,
            Some(what) => self.read_list(&scope, what).await.map_err(|e| McpError::internal_error(e, None))?,
        };
        let text = prompts::render(p, &args, scope.act.conversation.as_deref(), &read);
        let result =
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).with_description(p.description);
        Ok(result.into())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let task = self.on_wait(tasks::GET, &request.task_id, &context).await?;
        Ok(GetTaskResult::new(tasks::detailed(task).map_err(|e| self.internal(e))?))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.on_wait(tasks::CANCEL, &request.task_id, &context).await.map(|_| ())
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Err(McpError::invalid_params(tasks::NO_INPUT, Some(json!({ "taskId": request.task_id }))))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let scope = match self.checked_scope(&context).await {
            Ok(scope) if scope.away => Err(AWAY.to_string()),
            other => other,
        };
        let scope = match scope {
            Ok(scope) => scope,
            Err(e) => return Ok(CallToolResult::error(vec![ContentBlock::text(format!("database error: {e}"))]).into()),
        };
        let name = request.name.to_string();
        // with every dialect exposed, todo.call_mcp itself answers an unknown name; a
        // restricted server refuses the tools it does not expose and names the dialect of
        // those it does, so that dialect's tool of that name runs
        let tool = match scope.dialects {
            None => name.clone(),
            Some(_) => {
                let dialect = match self.dialect(&scope, &name).await {
                    Ok(d) => d,
                    Err(e) => {
                        return Ok(
                            CallToolResult::error(vec![ContentBlock::text(format!("database error: {e}"))]).into()
                        )
                    }
                };
                let Some(dialect) = dialect else {
                    let message = format!("unknown tool \"{name}\"; tools/list lists the tools");
                    return Ok(CallToolResult::structured_error(
                        json!({"error": {"code": "unknown_tool", "message": message}}),
                    )
                    .into());
                };
                format!("{dialect}/{name}")
            }
        };
        let args = Value::Object(request.arguments.unwrap_or_default());
        // the turn this server names when none is configured is the whole session, not a
        // model turn: the tools that count model turns (LangChain's) go without it
        let mut scope = scope;
        if let Origin::Process { session, .. } = self.origin.as_ref() {
            if goes_without_turn(&tool, scope.act.turn.as_deref(), session) {
                scope.act.turn = None;
            }
        }
        if tasks::waits(&tool, &args) && context.client_capabilities().is_some_and(|c| c.supports_tasks()) {
            return Ok(self.start_wait(&scope, &args).await);
        }
        match self.call(&scope, &tool, &args).await {
            Ok(out) => Ok(result(out).into()),
            Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!("database error: {e}"))]).into()),
        }
    }
}

fn fail(message: String) -> ! {
    eprintln!("pg_todos mcp: {message}");
    std::process::exit(2)
}

/// Checks, on the pool's connection (which the first call then uses: one connection is
/// opened at start, not two), that the extension is there, the tenant registered and the
/// dialects of `--tools` there; a clear message and exit status 2 otherwise. Returns the
/// dialects by their names (an alias made the name), or `Unchecked` when the database cannot
/// be reached (no server there, one starting or shutting down; a refusal of the server, such
/// as a database that does not exist, is a configuration error): the server starts anyway, its calls are tool errors naming the database until
/// it answers, and the names are checked then.
async fn check(config: &Config, db: &Db) -> Checked {
    let client = match db.pool.get().await {
        Ok(client) => client,
        Err(e) => {
            let (cause, answered) = match &e {
                deadpool_postgres::PoolError::Backend(e) => (crate::tls::connect_error(e), e.code().map(|c| c.code())),
                other => (other.to_string(), None),
            };
            // the server refused us (no such database, a password refused, no such role), or
            // we refused it (its certificate does not verify, it offers no TLS where TLS is
            // required): a mistake of the configuration, not a database away
            let refused =
                answered.is_some_and(|c| crate::db::errors::classify(c) != crate::db::errors::Class::Unavailable);
            if refused || crate::tls::refused_handshake(&cause) {
                fail(format!("cannot connect to the database: {cause}"));
            }
            tracing::warn!(
                "cannot connect to the database: {cause}; serving anyway: each call is a tool error until it answers"
            );
            return Checked::Unchecked;
        }
    };
    let version = crate::db::extension_version(&client).await.unwrap_or_else(|e| fail(db_error(&e)));
    if version.is_none() {
        let db: String = client.query_one("SELECT current_database()", &[]).await.map(|r| r.get(0)).unwrap_or_default();
        fail(format!("the pg_todos extension is not installed in database \"{db}\": CREATE EXTENSION pg_todos"));
    }
    let check = async {
        client.batch_execute("BEGIN").await?;
        let r = client.execute("SELECT todo.set_context($1)", &[&config.tenant]).await;
        client.batch_execute("ROLLBACK").await?;
        r
    };
    if let Err(e) = check.await {
        fail(format!("tenant \"{}\": {}", config.tenant, db_error(&e)));
    }
    match &config.dialects {
        None => Checked::Dialects(None),
        Some(names) => {
            let known: Value = client
                .query_one(config::KNOWN_DIALECTS, &[])
                .await
                .map(|r| r.get(0))
                .unwrap_or_else(|e| fail(format!("todo.dialects(): {}", db_error(&e))));
            Checked::Dialects(Some(config::resolve(names, &known).unwrap_or_else(|e| fail(format!("--tools: {e}")))))
        }
    }
}

/// What the check at start found of `--tools`.
enum Checked {
    /// the dialects by their names (None: every one)
    Dialects(Option<BTreeSet<String>>),
    /// the database could not be reached: the names are checked when it answers
    Unchecked,
}

/// Runs the MCP server with the command line's arguments (after `mcp`) until the client
/// closes stdin; exits with status 2 and a message on a configuration error, or a database
/// that answers and lacks the extension, the tenant or a dialect of `--tools`. A database
/// that cannot be reached, at start or later, makes each call a tool error naming it until it
/// is back (tools/list answers the built-in catalog meanwhile, and the client is told when
/// the database's is there: `notifications/tools/list_changed`).
pub async fn main(args: Vec<String>) {
    crate::log::init();
    // the project's list is named from the canonical working directory (symlinks resolved)
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize).map_err(|e| e.to_string());
    let config = match config::parse(&args, &|k| std::env::var(k).ok(), cwd.as_deref().map_err(String::as_str)) {
        Ok(config::Command::Print(text)) => {
            println!("{}", text.trim_end());
            return;
        }
        Ok(config::Command::Serve(c)) => *c,
        Err(e) if e.contains("Usage:") => fail(e),
        Err(e) => fail(format!("{e}\n\n{}", config::usage())),
    };
    let target = crate::tls::target(&config.connection, &|k| std::env::var(k).ok()).unwrap_or_else(|e| fail(e));
    let pool = crate::tls::pool(&target, 1).unwrap_or_else(|e| fail(e));
    // one call at a time; one waits for another at most as long as a call may run
    let db = Db { pool, gate: crate::db::gate::Gate::new(1, Duration::from_secs(60)), via: "" };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let session = format!("mcp-{}-{nanos:x}", std::process::id());
    let scope = Scope {
        act: Act {
            tenant: config.tenant.clone(),
            conversation: Some(config.conversation.clone().unwrap_or_else(|| session.clone())),
            bound: config.bound,
            agent: config.agent.clone(),
            turn: Some(config.turn.clone().unwrap_or_else(|| session.clone())),
        },
        dialects: None,
        away: false,
    };
    // the names of --tools are checked by `start`, or by the first call once the database answers
    let origin = Origin::Process { scope: Mutex::new(scope), session, unchecked: Mutex::new(config.dialects.clone()) };
    let server = Tools::new(db, origin);
    // the check runs while the client's handshake does (initialize needs no database); the
    // first call waits for the one connection the check holds, then uses it
    let started = tokio::spawn(start(config, server.clone()));
    // a configuration error the check finds exits 2 with its message, even when the client
    // has left already (or never spoke): the check is awaited before any other ending
    let ended = match server.serve(rmcp::transport::stdio()).await {
        Ok(service) => service.waiting().await.map(|_| ()).map_err(|e| format!("MCP session ended with an error: {e}")),
        Err(e) => Err(format!("cannot start the MCP session: {e}")),
    };
    let _ = started.await;
    if let Err(e) = ended {
        fail(e);
    }
}

/// The start of a stdio server, beside its handshake: the check (`check`: exit 2 on a
/// configuration error), the dialects of `--tools` by their names, and `todo.tools()` read
/// for the first tools/list.
async fn start(config: Config, server: Tools) {
    let Checked::Dialects(dialects) = check(&config, &server.db).await else { return };
    let Origin::Process { scope, unchecked, .. } = server.origin.as_ref() else { return };
    if config.dialects.is_some() {
        locked(scope).dialects = dialects;
        *locked(unchecked) = None;
    }
    let scope = locked(scope).clone();
    if let Ok(all) = server.read_catalog(&scope).await {
        *locked(&server.first) = Some(all);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_extensions_result_goes_out_as_is() {
        let out = json!({
            "content": [{"type": "text", "text": "Task #1 created successfully: X"}],
            "structuredContent": {"task": {"id": "1", "subject": "X"}},
            "isError": false
        });
        let r = result(out.clone());
        assert_eq!(r.result_type, Some(ResultType::COMPLETE));
        assert_eq!(r.is_error, Some(false));
        assert_eq!(r.structured_content, Some(json!({"task": {"id": "1", "subject": "X"}})));
        let mut wire = serde_json::to_value(&r).unwrap();
        wire.as_object_mut().unwrap().remove("resultType");
        assert_eq!(wire, out);
        // text only, an error
        let r = result(json!({"content": [{"type": "text", "text": "Invalid parameters: x"}], "isError": true}));
        assert_eq!((r.is_error, r.structured_content), (Some(true), None));
        assert_eq!(r.content[0].as_text().map(|t| t.text.as_str()), Some("Invalid parameters: x"));
    }

    #[test]
    fn an_answer_that_is_no_result_is_a_tool_error() {
        let r = result(json!({"todos": []}));
        assert_eq!(r.is_error, Some(true));
        let text = r.content[0].as_text().map(|t| t.text.clone()).unwrap_or_default();
        assert!(text.starts_with("todo.call_mcp() did not answer an MCP result"), "{text}");
    }
}
