//! `pg_todos mcp …` runs the MCP server over stdio; `pg_todos serve …` the HTTP service;
//! `pg_todos import …` and `pg_todos export …` move a tracker's files into a list and back;
//! `pg_todos writ …` runs `/todo` lines on a list.

const USAGE: &str = "usage: pg_todos <command> [options]

commands:
  mcp     an MCP server over stdio for one tenant (pg_todos mcp --help)
  serve   the HTTP service: /v1/todos, /v1/events, /mcp and the board (pg_todos serve --help)
  import  a tracker's files into a list: Task Master, beads, Backlog.md, Claude Code (pg_todos import --help)
  export  a list as a tracker's files (pg_todos export --help)
  writ    run /todo lines on the project's list and print the framed answer (pg_todos writ --help)

  -V, --version  print the version";

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("mcp") => pg_todos_cli::mcp::main(args.collect()).await,
        Some("serve") => pg_todos_cli::http::main(args.collect()).await,
        Some("import") => pg_todos_cli::files::import(args.collect()).await,
        Some("export") => pg_todos_cli::files::export(args.collect()).await,
        Some("writ") => pg_todos_cli::writ::main(args.collect()).await,
        Some("-h" | "--help" | "help") => println!("{USAGE}"),
        Some("-V" | "--version") => println!("pg_todos {}", env!("CARGO_PKG_VERSION")),
        Some(other) => {
            eprintln!("pg_todos: unknown command \"{other}\"\n\n{USAGE}");
            std::process::exit(2)
        }
        None => {
            eprintln!("{USAGE}");
            std::process::exit(2)
        }
    }
}
