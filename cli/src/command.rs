//! What the one-shot commands (`pg_todos import`, `export`, `writ`) share: their flags read by
//! clap, a variable of the environment, the list they work on (`list_of`: the project's list
//! by default, the one `pg_todos mcp` started in the same directory uses), a line on standard
//! output, a connection to the database (`connect`), and a database error in words
//! (`db_message`). Each command chooses its own exit status for a failure.

use std::path::Path;

use pg_todos_core::file_names;

/// Flags read by clap; help and version printed (exit 0), errors exit 2.
pub fn flags<F: clap::Parser>(name: &str, args: Vec<String>) -> F {
    match F::try_parse_from(std::iter::once(name.to_string()).chain(args)) {
        Ok(f) => f,
        Err(e) => e.exit(),
    }
}

/// A variable of the environment, unless unset or blank.
pub fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.trim().is_empty())
}

/// A path as a terminal should show it (`file_names::shown`: no raw control character).
pub fn shown_path(p: &Path) -> String {
    file_names::shown(&p.display().to_string())
}

/// A line on standard output; a reader that went away (`| head`) does not stop the work.
pub fn say(line: String) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
}

/// The list: the flag, the variable `PG_TODOS_CONVERSATION`, else the project's list of `dir`:
/// `project:<canonical path>`.
pub fn list_of(flag: &Option<String>, dir: &Path) -> Result<String, String> {
    if let Some(l) = flag.clone().or_else(|| env("PG_TODOS_CONVERSATION")) {
        return Ok(l);
    }
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", shown_path(dir)))?;
    Ok(format!("project:{}", dir.display()))
}

/// The tenant: the flag, else `PG_TODOS_TENANT`; an error naming both for `command`.
pub fn tenant_of(flag: &Option<String>, command: &str) -> Result<String, String> {
    flag.clone()
        .or_else(|| env("PG_TODOS_TENANT"))
        .ok_or_else(|| format!("pg_todos {command}: no tenant: pass --tenant <id> or set PG_TODOS_TENANT"))
}

/// A connection (the flag, `PG_TODOS_DATABASE_URL`, `DATABASE_URL`, else libpq's variables),
/// its task spawned. Errors: the connection string or TLS settings, or the connection
/// refused, in words (`tls::connect_error`).
pub async fn connect(database_url: &Option<String>) -> Result<tokio_postgres::Client, String> {
    let connection = database_url
        .clone()
        .or_else(|| env("PG_TODOS_DATABASE_URL"))
        .or_else(|| env("DATABASE_URL"))
        .unwrap_or_else(|| crate::db::libpq_env(&|k| std::env::var(k).ok(), "pg_todos"));
    let target = crate::tls::target(&connection, &|k| std::env::var(k).ok())?;
    let (client, conn) = target.connect().await.map_err(|e| crate::tls::connect_error(&e))?;
    tokio::spawn(conn);
    Ok(client)
}

/// A database error for `pg_todos <what>`: the extension's `SQLSTATE: message` and its hint,
/// control characters shown escaped; else the client library's words.
pub fn db_message(what: &str, e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!(
            "pg_todos {what}: {}: {}{}",
            d.code().code(),
            file_names::shown(d.message()),
            d.hint().map(|h| format!("\nhint: {}", file_names::shown(h))).unwrap_or_default()
        ),
        None => format!("pg_todos {what}: {}", file_names::shown(&e.to_string())),
    }
}
