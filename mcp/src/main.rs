//! pg_todos_mcp: an MCP server over stdio whose tools are the pg_todos catalog.
//!
//! - `tools/list` is `todo.tools()`, read from the database on each request (no second copy of
//!   any schema), kept to the dialects asked for (`--tools`, by each tool's
//!   `_meta."pg_todos/dialect"`).
//! - `tools/call` runs `todo.call(name, args)` in its own transaction after
//!   `todo.set_context(tenant, conversation, agent, turn)`: the context comes from this
//!   server's configuration and the MCP session (the agent defaults to the client's name and
//!   the session's id, the conversation and turn to the session's id), never from the model's
//!   arguments. Each call has a lock timeout (10 s) and a statement timeout (60 s). Serialization failures and deadlocks are retried.
//! - A tool's error object (`{"error": …}`, `{"ok": false, …}`, seed 004's `Error: …` text)
//!   is a tool-level error result (`isError: true`), with the object as structured content.

mod config;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
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
    /// the session's conversation and turn: configured, or one new id per server process
    conversation: String,
    turn: String,
    db: Mutex<Client>,
}

/// SQLSTATEs worth a retry: serialization failure, deadlock.
const RETRYABLE: [&str; 2] = ["40001", "40P01"];

fn db_error(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{}: {}", d.code().code(), d.message()),
        None => e.to_string(),
    }
}

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

    /// Runs one tool in one transaction with this session's context; retried on
    /// serialization failures and deadlocks.
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
                let out: Value = tx.query_one("SELECT todo.call($1, $2)", &[&name, args]).await?.get(0);
                tx.commit().await?;
                Ok::<_, tokio_postgres::Error>(out)
            };
            match attempt.await {
                Ok(out) => return Ok(out),
                Err(e) if e.code().is_some_and(|c| RETRYABLE.contains(&c.code())) => last = db_error(&e),
                Err(e) => return Err(db_error(&e)),
            }
        }
        Err(last)
    }
}

/// Whether a tool's output is one of the catalog's error shapes.
fn is_error(out: &Value) -> bool {
    out.get("error").is_some_and(Value::is_object)
        || out.get("ok") == Some(&Value::Bool(false))
        || out.as_str().is_some_and(|s| s.starts_with("Error:"))
}

/// The tool's output as an MCP result: an object is structured content (and its JSON text),
/// anything else is text.
fn result(out: Value) -> CallToolResult {
    let error = is_error(&out);
    match out {
        Value::Object(_) if error => CallToolResult::structured_error(out),
        Value::Object(_) => CallToolResult::structured(out),
        Value::String(s) if error => CallToolResult::error(vec![ContentBlock::text(s)]),
        Value::String(s) => CallToolResult::success(vec![ContentBlock::text(s)]),
        other => CallToolResult::success(vec![ContentBlock::text(other.to_string())]),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("pg_todos_mcp", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Durable todos in PostgreSQL (pg_todos). The tools act for this server's tenant and \
                 conversation; ids and lists persist across sessions and are shared with other agents \
                 of the same conversation.",
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
        // with every dialect exposed, todo.call itself answers an unknown name; only a
        // restricted server needs the catalog to refuse the tools it does not expose
        let exposed = match self.config.dialects {
            None => true,
            Some(_) => {
                let catalog = self.catalog().await.map_err(|e| McpError::internal_error(e, None))?;
                catalog.iter().any(|t| t["name"] == name.as_str())
            }
        };
        if !exposed {
            let out = json!({"error": {"code": "unknown_tool", "message": format!("unknown tool \"{name}\"; tools/list lists the tools")}});
            return Ok(result(out).into());
        }
        // the client's name alone would make two sessions of one client the same agent (each
        // could finish the other's claims): the session's id goes with it
        let agent = self.config.agent.clone().unwrap_or_else(|| {
            let client = context.peer.peer_info().map_or_else(|| "mcp".to_string(), |p| p.client_info.name.clone());
            format!("{client}@{}", self.session)
        });
        let args = Value::Object(request.arguments.unwrap_or_default());
        match self.call(&agent, &name, &args).await {
            Ok(out) => Ok(result(out).into()),
            Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!("database error: {e}"))]).into()),
        }
    }
}

fn fail(message: String) -> ! {
    eprintln!("pg_todos_mcp: {message}");
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
            eprintln!("pg_todos_mcp: database connection lost: {e}");
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

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{}", config::USAGE);
        return;
    }
    let config = config::parse(&args, &|k| std::env::var(k).ok())
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
