//! Logging for both commands: `tracing`, one line per event on stderr (a timestamp, the level,
//! the message), the level chosen by `PG_TODOS_LOG` (an `EnvFilter`: `info` by default,
//! with the MCP SDK's (`rmcp`) from `warn`; `warn` for less, `debug` for more, or per module, e.g. `warn,pg_todos_cli::http::routes=info`).
//! Never a token, a password or a connection string: the messages are written so.

use tracing_subscriber::EnvFilter;

/// `info`, with the MCP SDK's own events from `warn` up.
const DEFAULT: &str = "info,rmcp=warn";

/// Installs the subscriber (once; a second call does nothing). `PG_TODOS_LOG` that does not
/// parse falls back to `info` and says so.
pub fn init() {
    let filter = match std::env::var("PG_TODOS_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            eprintln!("pg_todos: PG_TODOS_LOG={spec:?} is not a log filter ({e}); logging at {DEFAULT}");
            EnvFilter::new(DEFAULT)
        }),
        _ => EnvFilter::new(DEFAULT),
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(false)
        .try_init();
}
