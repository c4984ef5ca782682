//! What the services share about the database: the connection string from libpq's
//! environment, an error's text (pure, unit-tested), and the extension check; one call's work
//! in a transaction with the caller's context, retried (`work`), each tenant's share of the
//! pool (`gate`), and what a failure answers (`errors`). The MCP server and the HTTP service
//! both call the extension through `work::in_context`.

pub mod errors;
pub mod gate;
pub mod work;

/// libpq's environment (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`, `PGPASSWORD`,
/// `PGAPPNAME`) as a key=value connection string, values quoted, with libpq's defaults where it
/// has them (the Debian socket directory, the login name) and `application` as the
/// application name unless `PGAPPNAME` names one. Never fails: unset variables are left out.
pub fn libpq_env(env: &dyn Fn(&str) -> Option<String>, application: &str) -> String {
    let quote = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
    let get = |var: &str| env(var).filter(|v| !v.is_empty());
    [
        ("host", get("PGHOST").or_else(|| Some("/var/run/postgresql".into()))),
        ("port", get("PGPORT")),
        ("dbname", get("PGDATABASE")),
        ("user", get("PGUSER").or_else(|| get("USER"))),
        ("password", get("PGPASSWORD")),
        ("application_name", get("PGAPPNAME").or_else(|| Some(application.into()))),
    ]
    .into_iter()
    .filter_map(|(key, value)| value.map(|v| format!("{key}={}", quote(&v))))
    .collect::<Vec<_>>()
    .join(" ")
}

/// The installed pg_todos version in the connected database, or None when the extension is
/// not installed: the one extension check of both commands (at start, and `/readyz`).
pub async fn extension_version(client: &tokio_postgres::Client) -> Result<Option<String>, tokio_postgres::Error> {
    let row = client.query_opt("SELECT extversion FROM pg_extension WHERE extname = 'pg_todos'", &[]).await?;
    Ok(row.map(|r| r.get(0)))
}

/// An error's text: `SQLSTATE: message` for an error the server sent, else the client's own
/// description (a refused connection, a closed one).
pub fn error_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{}: {}", d.code().code(), d.message()),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_variables_quoted_with_defaults() {
        let env = |k: &str| match k {
            "PGHOST" => Some("/tmp/sock".to_string()),
            "PGPORT" => Some("5433".to_string()),
            "PGPASSWORD" => Some("it's \\ here".to_string()),
            "USER" => Some("me".to_string()),
            "PGDATABASE" => Some(String::new()),
            _ => None,
        };
        assert_eq!(
            libpq_env(&env, "pg_todos_serve"),
            "host='/tmp/sock' port='5433' user='me' password='it\\'s \\\\ here' application_name='pg_todos_serve'"
        );
        let named = |k: &str| (k == "PGAPPNAME").then(|| "mine".to_string());
        assert_eq!(libpq_env(&named, "pg_todos_serve"), "host='/var/run/postgresql' application_name='mine'");
    }
}
