//! `pg_todos_mcp`: the MCP server's name before it became `pg_todos mcp`; the same server.

#[tokio::main]
async fn main() {
    pg_todos_cli::mcp::main(std::env::args().skip(1).collect()).await
}
