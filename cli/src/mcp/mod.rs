//! `pg_todos mcp` (also installed as `pg_todos_mcp`): an MCP server over stdio whose tools
//! are the pg_todos catalog.
//!
//! - `tools/list` is `todo.tools()`, read from the database on each request (no second copy of
//!   any schema), kept to the dialects asked for (`--tools`, by each tool's
//!   `_meta."pg_todos/dialect"`).
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
//! - Each call has a lock timeout (10 s) and a statement timeout (60 s). Serialization
//!   failures and deadlocks are retried.

pub mod config;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ResultType, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::sync::Mutex;
use tokio_postgres::{Client, NoTls};

use config::Config;

struct Server {
    config: Config,
    /// this server process's session id (`mcp-<pid>-<time>`)
    session: String,
    /// the list: configured (by default the project's), or with `--session-list` the session's
    /// id; the turn: configured, or the session's id
    conversation: String,
    turn: String,
    db: Mutex<Client>,
}

use crate::db::error_text as db_error;

impl Server {
    /// `todo.tools()`, kept to the configured dialects.
    async fn catalog(&self) -> Result<Vec<Value>, String> {
        let db = self.db.lock().await;
        let row = db.query_one("SELECT todo.tools()", &[]).await.map_err(|e| db_error(&e))?;
        let tools: Value = row.get(0);
        let wanted = |t: &Value| match &self.config.dialects {
            None => true,
            Some(set) => t["_meta"]["pg_todos/dialect"].as_str().is_some_and(|d| set.contains(d)),
        };
        Ok(tools.as_array().cloned().unwrap_or_default().into_iter().filter(wanted).collect())
    }

    /// Runs one tool (`name` or `dialect/name`) through `todo.call_mcp` in one transaction with
    /// this session's context; retried on serialization failures and deadlocks. The answer is
    /// MCP's CallToolResult as JSON.
    async fn call(&self, agent: &str, name: &str, args: &Value) -> Result<Value, String> {
        let mut db = self.db.lock().await;
        let mut last = String::new();
        for _ in 0..5 {
            let attempt = async {
                let tx = db.transaction().await?;
                // a call stuck behind another session's lock must not stall this server
                tx.batch_execute("SET LOCAL lock_timeout = '10s'; SET LOCAL statement_timeout = '60s'").await?;
                tx.execute(
                    "SELECT todo.set_context($1, $2, $3, $4)",
                    &[&self.config.tenant, &self.conversation, &agent, &self.turn],
                )
                .await?;
                let out: Value = tx.query_one("SELECT todo.call_mcp($1, $2)", &[&name, args]).await?.get(0);
                tx.commit().await?;
                Ok::<_, tokio_postgres::Error>(out)
            };
            match attempt.await {
                Ok(out) => return Ok(out),
                Err(e) if e.code().is_some_and(|c| pg_todos_core::error::worth_retrying(c.code())) => {
                    last = db_error(&e)
                }
                Err(e) => return Err(db_error(&e)),
            }
        }
        Err(last)
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

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
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
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let catalog = self.catalog().await.map_err(|e| McpError::internal_error(e, None))?;
        let tools = catalog
            .into_iter()
            .map(serde_json::from_value::<Tool>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| McpError::internal_error(format!("todo.tools(): {e}"), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        // with every dialect exposed, todo.call_mcp itself answers an unknown name; a
        // restricted server refuses the tools it does not expose and names the dialect of
        // those it does, so that dialect's tool of that name runs
        let tool = match self.config.dialects {
            None => name.clone(),
            Some(_) => {
                let catalog = self.catalog().await.map_err(|e| McpError::internal_error(e, None))?;
                let dialect = catalog
                    .iter()
                    .find(|t| t["name"] == name.as_str())
                    .and_then(|t| t["_meta"]["pg_todos/dialect"].as_str());
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
        // the client's name alone would make two sessions of one client the same agent (each
        // could finish the other's claims): the session's id goes with it
        let agent = self.config.agent.clone().unwrap_or_else(|| {
            let client = context.peer.peer_info().map_or_else(|| "mcp".to_string(), |p| p.client_info.name.clone());
            format!("{client}@{}", self.session)
        });
        let args = Value::Object(request.arguments.unwrap_or_default());
        match self.call(&agent, &tool, &args).await {
            Ok(out) => Ok(result(out).into()),
            Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!("database error: {e}"))]).into()),
        }
    }
}

fn fail(message: String) -> ! {
    eprintln!("pg_todos mcp: {message}");
    std::process::exit(2)
}

/// Connects and checks that the extension is there and the tenant registered; a clear message
/// and exit status 2 otherwise.
async fn connect(config: &Config) -> Client {
    let (client, connection) = tokio_postgres::connect(&config.connection, NoTls)
        .await
        .unwrap_or_else(|e| fail(format!("cannot connect to the database: {}", db_error(&e))));
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("pg_todos mcp: database connection lost: {e}");
            std::process::exit(2);
        }
    });
    let version = client
        .query_opt("SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'", &[])
        .await
        .unwrap_or_else(|e| fail(db_error(&e)));
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
    client
}

/// Runs the MCP server with the command line's arguments (after `mcp`) until the client
/// closes stdin; exits with status 2 and a message on a configuration or database error.
pub async fn main(args: Vec<String>) {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", config::USAGE);
        return;
    }
    // the project's list is named from the canonical working directory (symlinks resolved)
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize).map_err(|e| e.to_string());
    let config = config::parse(&args, &|k| std::env::var(k).ok(), cwd.as_deref().map_err(String::as_str))
        .unwrap_or_else(|e| fail(format!("{e}\n\n{}", config::USAGE)));
    let db = connect(&config).await;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let session = format!("mcp-{}-{nanos:x}", std::process::id());
    let conversation = config.conversation.clone().unwrap_or_else(|| session.clone());
    let turn = config.turn.clone().unwrap_or_else(|| session.clone());
    let server = Server { config, session, conversation, turn, db: Mutex::new(db) };
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .unwrap_or_else(|e| fail(format!("cannot start the MCP session: {e}")));
    if let Err(e) = service.waiting().await {
        fail(format!("MCP session ended with an error: {e}"));
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
