//! The HTTP service's configuration: where it listens, where the database is, how many
//! connections it pools, and the limits that keep one client or one tenant from holding or
//! filling the service. From command-line flags, then each flag's `PG_TODOS_*` variable (and
//! `PG_TODOS_DATABASE_URL`, then `DATABASE_URL`), then libpq's variables (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`,
//! `PGPASSWORD`, `PGAPPNAME`). Pure: no I/O beyond the environment the caller hands in,
//! unit-tested.

use std::net::SocketAddr;
use std::time::Duration;

/// The flags, as clap reads them (values checked and given their defaults and variables by
/// `parse`, which reads the environment through the caller, so that it is unit-tested).
#[derive(clap::Parser, Debug)]
#[command(
    name = "pg_todos serve",
    version,
    about = "The HTTP service over the pg_todos extension",
    long_about = "The HTTP service over the pg_todos extension: /v1/todos (todo.rest), /session/:id/todo, \
/v1/board, /v1/events (Server-Sent Events of every committed change), /mcp (MCP over Streamable HTTP), \
/openapi.json, /healthz, /readyz and the board at /. Every route but /, /openapi.json, /healthz and \
/readyz needs Authorization: Bearer <token> (a token from todo.create_token); the tenant comes from \
the token.",
    args_override_self = true,
    allow_negative_numbers = true,
    max_term_width = 100
)]
struct Flags {
    /// Address to listen on [env: PG_TODOS_LISTEN] [default: 127.0.0.1:8787]
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<String>,
    /// Serve Prometheus metrics at http://ADDR:PORT/metrics, with no token: an address only
    /// the monitoring can reach, never a public one [env: PG_TODOS_METRICS_LISTEN] [default:
    /// none, no metrics]
    #[arg(long, value_name = "ADDR:PORT")]
    metrics_listen: Option<String>,
    /// How the log on stderr is written: text (a line per event) or json (a JSON object per
    /// line) [env: PG_TODOS_LOG_FORMAT] [default: text]
    #[arg(long, value_name = "FORMAT")]
    log_format: Option<String>,
    /// Serve HTTPS with this certificate chain (a PEM file) [env: PG_TODOS_TLS_CERT]; with --tls-key
    #[arg(long, value_name = "PEM")]
    tls_cert: Option<String>,
    /// The certificate's private key (a PEM file) [env: PG_TODOS_TLS_KEY]; with --tls-cert
    #[arg(long, value_name = "PEM")]
    tls_key: Option<String>,
    /// A libpq URL or key=value string [env: PG_TODOS_DATABASE_URL, then DATABASE_URL]; otherwise
    /// PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD (application_name pg_todos_serve)
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
    /// Pooled database connections; SSE uses one more of its own [env: PG_TODOS_POOL_SIZE] [default: 16]
    #[arg(long, value_name = "N")]
    pool_size: Option<String>,
    /// Seconds in-flight requests get after SIGTERM/SIGINT; event streams end at once; past
    /// the grace the process exits with status 1 [env: PG_TODOS_SHUTDOWN_GRACE] [default: 10]
    #[arg(long, value_name = "SECONDS")]
    shutdown_grace: Option<String>,
    /// Milliseconds between two reads of the log for the tenants with an open event stream or
    /// board (one statement for all of them); a change reaches a stream within about this
    /// [env: PG_TODOS_FEED_TICK] [default: 100]
    #[arg(long, value_name = "MS")]
    feed_tick: Option<String>,
    /// Where the event streams learn what changed: log (probe each streamed tenant's events
    /// from its cursor) or logical (decode todo.events from a replication slot; wal_level =
    /// logical, a publication, a role with REPLICATION: docs/http.md) [env: PG_TODOS_FEED]
    /// [default: log]
    #[arg(long, value_name = "SOURCE")]
    feed: Option<String>,
    /// The replication slot of --feed logical, one per service; made when missing
    /// [env: PG_TODOS_FEED_SLOT] [default: pg_todos_feed]
    #[arg(long, value_name = "NAME")]
    feed_slot: Option<String>,
    /// The publication of todo.events that --feed logical decodes
    /// [env: PG_TODOS_FEED_PUBLICATION] [default: pg_todos_feed]
    #[arg(long, value_name = "NAME")]
    feed_publication: Option<String>,
    /// Host names the service answers to besides IP addresses and localhost (comma-separated,
    /// any port; * for every name): the names a reverse proxy or the clients use. A request
    /// whose Host, or Origin, names another is refused (403), against DNS rebinding
    /// [env: PG_TODOS_ALLOWED_HOSTS] [default: none]
    #[arg(long, value_name = "LIST")]
    allowed_hosts: Option<String>,
    /// Largest request body read, in bytes; larger: 413 [env: PG_TODOS_MAX_BODY] [default: 1048576]
    #[arg(long, value_name = "BYTES", help_heading = "Limits")]
    max_body: Option<String>,
    /// Seconds a connection has to send a request's headers; then it is closed
    /// [env: PG_TODOS_HEADER_TIMEOUT] [default: 10]
    #[arg(long, value_name = "SECONDS", help_heading = "Limits")]
    header_timeout: Option<String>,
    /// Seconds a request has to send its body; then 408 [env: PG_TODOS_BODY_TIMEOUT] [default: 30]
    #[arg(long, value_name = "SECONDS", help_heading = "Limits")]
    body_timeout: Option<String>,
    /// Seconds an idle keep-alive connection is kept [env: PG_TODOS_IDLE_TIMEOUT] [default: 60]
    #[arg(long, value_name = "SECONDS", help_heading = "Limits")]
    idle_timeout: Option<String>,
    /// Seconds a response may wait on a client that reads nothing; then the connection is
    /// closed [env: PG_TODOS_SEND_TIMEOUT] [default: 30]
    #[arg(long, value_name = "SECONDS", help_heading = "Limits")]
    send_timeout: Option<String>,
    /// Open connections at most (lowered to fit the process's file descriptors); past it new
    /// connections wait to be accepted [env: PG_TODOS_MAX_CONNECTIONS] [default: 1024]
    #[arg(long, value_name = "N", help_heading = "Limits")]
    max_connections: Option<String>,
    /// Open event streams at most; past it 503 [env: PG_TODOS_MAX_STREAMS] [default: 256]
    #[arg(long, value_name = "N", help_heading = "Limits")]
    max_streams: Option<String>,
    /// Open event streams per token; past it 429 [env: PG_TODOS_MAX_STREAMS_PER_TOKEN] [default: 8]
    #[arg(long, value_name = "N", help_heading = "Limits")]
    max_streams_per_token: Option<String>,
    /// Open event streams of one tenant, whatever its tokens; past it 429
    /// [env: PG_TODOS_MAX_STREAMS_PER_TENANT] [default: an eighth of --max-streams, at least 1]
    #[arg(long, value_name = "N", help_heading = "Limits")]
    max_streams_per_tenant: Option<String>,
    /// Bytes a stream may fall behind by; past it the stream ends and the client catches up on
    /// reconnect [env: PG_TODOS_STREAM_BUFFER] [default: 4194304]
    #[arg(long, value_name = "BYTES", help_heading = "Limits")]
    stream_buffer: Option<String>,
    /// Seconds between checks that the tokens of open streams with nothing to receive are
    /// still live (every batch a stream receives is checked as it is read); a revoked token's
    /// streams end [env: PG_TODOS_TOKEN_RECHECK] [default: 3]
    #[arg(long, value_name = "SECONDS", help_heading = "Limits")]
    token_recheck: Option<String>,
    /// Failed authentications (401) a client address may make at once; then it is refused (429
    /// with Retry-After) before its token is looked up [env: PG_TODOS_AUTH_FAIL_BURST]
    /// [default: 50]
    #[arg(long, value_name = "N", help_heading = "Limits")]
    auth_fail_burst: Option<String>,
    /// Failed authentications a second a client address gets back once its burst is spent (a
    /// number, e.g. 5 or 0.5) [env: PG_TODOS_AUTH_FAIL_RATE] [default: 5]
    #[arg(long, value_name = "PER_SECOND", help_heading = "Limits")]
    auth_fail_rate: Option<String>,
    /// Failed authentications a second of every client address together (a burst of a
    /// second's worth, at least --auth-fail-burst); past it tokens not seen to authenticate
    /// are refused (429) before they are looked up [env: PG_TODOS_AUTH_FAIL_GLOBAL_RATE]
    /// [default: 50]
    #[arg(long, value_name = "PER_SECOND", help_heading = "Limits")]
    auth_fail_global_rate: Option<String>,
    /// Reverse proxies whose X-Forwarded-For names the client the failed-authentication
    /// limits count (addresses and prefixes, comma-separated, e.g. 127.0.0.1,10.0.0.0/8)
    /// [env: PG_TODOS_TRUSTED_PROXIES] [default: none, the client is the TCP peer]
    #[arg(long, value_name = "LIST", help_heading = "Limits")]
    trusted_proxies: Option<String>,
    /// Event-stream catch-ups (Last-Event-ID) of one tenant holding a page of changes at once;
    /// more wait --tenant-wait, then 503 [env: PG_TODOS_TENANT_CATCH_UPS] [default: 4]
    #[arg(long, value_name = "N", help_heading = "Limits")]
    tenant_catch_ups: Option<String>,
    /// Database operations one tenant may run at once [env: PG_TODOS_TENANT_SHARE]
    /// [default: a quarter of --pool-size, at least 1]
    #[arg(long, value_name = "N", help_heading = "Limits")]
    tenant_share: Option<String>,
    /// Seconds a tenant's operation waits for its share; then 503 with Retry-After
    /// [env: PG_TODOS_TENANT_WAIT] [default: 5]
    #[arg(long, value_name = "SECONDS", help_heading = "Limits")]
    tenant_wait: Option<String>,
}

impl Flags {
    /// The value given for `flag` (its long name).
    fn given(&self, flag: &str) -> Option<&String> {
        match flag {
            "listen" => self.listen.as_ref(),
            "metrics-listen" => self.metrics_listen.as_ref(),
            "log-format" => self.log_format.as_ref(),
            "tls-cert" => self.tls_cert.as_ref(),
            "tls-key" => self.tls_key.as_ref(),
            "database-url" => self.database_url.as_ref(),
            "pool-size" => self.pool_size.as_ref(),
            "shutdown-grace" => self.shutdown_grace.as_ref(),
            "feed-tick" => self.feed_tick.as_ref(),
            "feed" => self.feed.as_ref(),
            "feed-slot" => self.feed_slot.as_ref(),
            "feed-publication" => self.feed_publication.as_ref(),
            "allowed-hosts" => self.allowed_hosts.as_ref(),
            "trusted-proxies" => self.trusted_proxies.as_ref(),
            "auth-fail-global-rate" => self.auth_fail_global_rate.as_ref(),
            "max-body" => self.max_body.as_ref(),
            "header-timeout" => self.header_timeout.as_ref(),
            "body-timeout" => self.body_timeout.as_ref(),
            "idle-timeout" => self.idle_timeout.as_ref(),
            "send-timeout" => self.send_timeout.as_ref(),
            "max-connections" => self.max_connections.as_ref(),
            "max-streams" => self.max_streams.as_ref(),
            "max-streams-per-token" => self.max_streams_per_token.as_ref(),
            "max-streams-per-tenant" => self.max_streams_per_tenant.as_ref(),
            "stream-buffer" => self.stream_buffer.as_ref(),
            "token-recheck" => self.token_recheck.as_ref(),
            "auth-fail-burst" => self.auth_fail_burst.as_ref(),
            "auth-fail-rate" => self.auth_fail_rate.as_ref(),
            "tenant-catch-ups" => self.tenant_catch_ups.as_ref(),
            "tenant-share" => self.tenant_share.as_ref(),
            "tenant-wait" => self.tenant_wait.as_ref(),
            _ => None,
        }
    }
}

/// The usage line and where to read more, for an error of the flags' values.
pub fn usage() -> String {
    use clap::CommandFactory;
    format!("{}\n\nFor more information, try '--help'.", Flags::command().render_usage())
}

/// What the command line asks for: run with a configuration, or print a text (the help or
/// the version) and exit 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// boxed: a configuration is large beside `Print`
    Serve(Box<Config>),
    Print(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
    /// where `/metrics` is served (no token); None: nowhere
    pub metrics_listen: Option<SocketAddr>,
    /// how the log is written
    pub log_format: crate::log::Format,
    /// HTTPS: the certificate chain's and the key's PEM files
    pub tls: Option<(String, String)>,
    /// a libpq connection string (URL or key=value)
    pub connection: String,
    pub pool_size: usize,
    pub shutdown_grace: Duration,
    /// time between two reads of the log (`feed`)
    pub feed_tick: Duration,
    /// where the feed learns what changed
    pub feed: super::feed::Source,
    /// the names besides IP addresses and localhost that requests may name (`hosts`)
    pub hosts: super::hosts::Hosts,
    /// the reverse proxies whose X-Forwarded-For names the client (`throttle`)
    pub proxies: super::throttle::Proxies,
    pub limits: Limits,
}

/// What bounds one client, one token and one tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// largest request body read, in bytes
    pub max_body: usize,
    /// time to send a request's headers, from the connection's start or its first byte
    pub header_timeout: Duration,
    /// time to send a request's body
    pub body_timeout: Duration,
    /// time an idle keep-alive connection is kept
    pub idle_timeout: Duration,
    /// time a response may wait on a client that reads nothing
    pub send_timeout: Duration,
    pub max_connections: usize,
    pub max_streams: usize,
    pub max_streams_per_token: usize,
    /// open event streams of one tenant
    pub max_streams_per_tenant: usize,
    /// bytes an event stream may fall behind by
    pub stream_buffer: usize,
    /// time between checks of the tokens of open streams
    pub token_recheck: Duration,
    /// failed authentications of one client address at once
    pub auth_fail_burst: usize,
    /// failed authentications a client address gets back per 1,000 seconds (`--auth-fail-rate`
    /// times 1,000: an integer keeps the configuration `Eq`)
    pub auth_fail_per_ks: u64,
    /// failed authentications every address together gets per 1,000 seconds
    pub auth_fail_global_per_ks: u64,
    /// event-stream catch-ups of one tenant holding a page at once
    pub tenant_catch_ups: usize,
    /// database operations of one tenant at once
    pub tenant_share: usize,
    /// time an operation waits for its tenant's share
    pub tenant_wait: Duration,
}

/// Flags that take a value, with their environment variable.
const VALUED: [(&str, &str); 31] = [
    ("listen", "PG_TODOS_LISTEN"),
    ("metrics-listen", "PG_TODOS_METRICS_LISTEN"),
    ("log-format", "PG_TODOS_LOG_FORMAT"),
    ("tls-cert", "PG_TODOS_TLS_CERT"),
    ("tls-key", "PG_TODOS_TLS_KEY"),
    ("database-url", "PG_TODOS_DATABASE_URL"),
    ("pool-size", "PG_TODOS_POOL_SIZE"),
    ("max-body", "PG_TODOS_MAX_BODY"),
    ("shutdown-grace", "PG_TODOS_SHUTDOWN_GRACE"),
    ("feed-tick", "PG_TODOS_FEED_TICK"),
    ("feed", "PG_TODOS_FEED"),
    ("feed-slot", "PG_TODOS_FEED_SLOT"),
    ("feed-publication", "PG_TODOS_FEED_PUBLICATION"),
    ("allowed-hosts", "PG_TODOS_ALLOWED_HOSTS"),
    ("trusted-proxies", "PG_TODOS_TRUSTED_PROXIES"),
    ("auth-fail-global-rate", "PG_TODOS_AUTH_FAIL_GLOBAL_RATE"),
    ("header-timeout", "PG_TODOS_HEADER_TIMEOUT"),
    ("body-timeout", "PG_TODOS_BODY_TIMEOUT"),
    ("idle-timeout", "PG_TODOS_IDLE_TIMEOUT"),
    ("send-timeout", "PG_TODOS_SEND_TIMEOUT"),
    ("max-connections", "PG_TODOS_MAX_CONNECTIONS"),
    ("max-streams", "PG_TODOS_MAX_STREAMS"),
    ("max-streams-per-token", "PG_TODOS_MAX_STREAMS_PER_TOKEN"),
    ("max-streams-per-tenant", "PG_TODOS_MAX_STREAMS_PER_TENANT"),
    ("stream-buffer", "PG_TODOS_STREAM_BUFFER"),
    ("token-recheck", "PG_TODOS_TOKEN_RECHECK"),
    ("auth-fail-burst", "PG_TODOS_AUTH_FAIL_BURST"),
    ("auth-fail-rate", "PG_TODOS_AUTH_FAIL_RATE"),
    ("tenant-catch-ups", "PG_TODOS_TENANT_CATCH_UPS"),
    ("tenant-share", "PG_TODOS_TENANT_SHARE"),
    ("tenant-wait", "PG_TODOS_TENANT_WAIT"),
];

/// The command from the arguments (after `serve`) and the environment. Errors (a message
/// saying what to fix): an unknown argument, a flag without its value, an address that is
/// not `host:port` with a numeric host, a number that is not an integer in its range (the
/// grace may be 0; every other number and time is at least 1).
pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Command, String> {
    use clap::Parser;
    let flags = match Flags::try_parse_from(std::iter::once("pg_todos serve".to_string()).chain(args.iter().cloned())) {
        Ok(f) => f,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => {
            return Ok(Command::Print(e.to_string()))
        }
        // clap's own words (an unknown flag, a missing value), with the usage line
        Err(e) => {
            use clap::CommandFactory;
            let mut message = e.render().to_string().trim_end().trim_start_matches("error: ").to_string();
            if !message.contains("Usage:") {
                let line = Flags::command().render_usage().to_string();
                message =
                    message.replacen("\n\nFor more information", &format!("\n\n{line}\n\nFor more information"), 1);
            }
            return Err(message);
        }
    };
    // a flag, then its variable when set and not blank
    let pick = |flag: &str| {
        let var = VALUED.iter().find(|(n, _)| *n == flag).map(|(_, v)| *v);
        flags.given(flag).cloned().or_else(|| var.and_then(|v| env(v).filter(|s| !s.trim().is_empty())))
    };
    let listen = pick("listen").unwrap_or_else(|| "127.0.0.1:8787".into());
    let listen = listen
        .trim()
        .parse::<SocketAddr>()
        .map_err(|_| format!("--listen {listen:?}: use an address and port, e.g. 127.0.0.1:8787 or [::1]:8787"))?;
    let metrics_listen = match pick("metrics-listen") {
        None => None,
        Some(a) => Some(a.trim().parse::<SocketAddr>().map_err(|_| {
            format!("--metrics-listen {a:?}: use an address and port, e.g. 127.0.0.1:9187 or [::1]:9187")
        })?),
    };
    if metrics_listen.is_some_and(|m| m == listen && m.port() != 0) {
        return Err(format!(
            "--metrics-listen {}: the same address as --listen; give the metrics an address of their own",
            listen
        ));
    }
    let log_format = match pick("log-format").as_deref().map(str::trim) {
        None | Some("text") => crate::log::Format::Text,
        Some("json") => crate::log::Format::Json,
        Some(other) => return Err(format!("--log-format {other:?}: use text or json")),
    };
    let number = |flag: &str, default: u64, min: u64| number(&pick, flag, default, min);
    let pool_size = number("pool-size", 16, 1)? as usize;
    let limits = limits(&pick, pool_size)?;
    Ok(Command::Serve(Box::new(Config {
        listen,
        metrics_listen,
        log_format,
        tls: match (pick("tls-cert"), pick("tls-key")) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err("--tls-cert and --tls-key: give both (HTTPS) or neither (HTTP)".into()),
        },
        // PG_TODOS_DATABASE_URL, then DATABASE_URL (as pg_todos mcp reads them)
        connection: pick("database-url")
            .or_else(|| env("DATABASE_URL").filter(|s| !s.trim().is_empty()))
            .unwrap_or_else(|| crate::db::libpq_env(env, "pg_todos_serve")),
        pool_size,
        shutdown_grace: Duration::from_secs(number("shutdown-grace", 10, 0)?),
        feed_tick: Duration::from_millis(number("feed-tick", 100, 10)?),
        feed: match pick("feed").as_deref().map(str::trim) {
            None | Some("log") => super::feed::Source::Log,
            Some("logical") => super::feed::Source::Logical {
                slot: pick("feed-slot").unwrap_or_else(|| "pg_todos_feed".into()),
                publication: pick("feed-publication").unwrap_or_else(|| "pg_todos_feed".into()),
            },
            Some(other) => return Err(format!("--feed {other:?}: use log or logical")),
        },
        hosts: super::hosts::Hosts::parse(&pick("allowed-hosts").unwrap_or_default())?,
        proxies: super::throttle::Proxies::parse(&pick("trusted-proxies").unwrap_or_default())?,
        limits,
    })))
}

/// The integer of `flag` (through `pick`), `default` when not given. Errors: not an integer
/// from `min` to 4294967295.
fn number(pick: &dyn Fn(&str) -> Option<String>, flag: &str, default: u64, min: u64) -> Result<u64, String> {
    match pick(flag) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<u64>() {
            Ok(n) if n >= min && n <= u64::from(u32::MAX) => Ok(n),
            _ => Err(format!("--{flag} {v:?}: use an integer from {min} to {}", u32::MAX)),
        },
    }
}

/// The rate of `flag` (through `pick`) in thousandths, `default` when not given: a number of
/// at most 3 decimals, more than 0. Errors: another.
fn thousandths(pick: &dyn Fn(&str) -> Option<String>, flag: &str, default: u64) -> Result<u64, String> {
    match pick(flag) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<f64>() {
            Ok(n) if n.is_finite() && (0.001..=1_000_000.0).contains(&n) => Ok((n * 1000.0).round() as u64),
            _ => Err(format!("--{flag} {v:?}: use a number from 0.001 to 1000000, e.g. 5 or 0.5")),
        },
    }
}

/// The limits of the flags `pick` gives, for a pool of `pool_size`. Errors: as `number`,
/// `thousandths`.
fn limits(pick: &dyn Fn(&str) -> Option<String>, pool_size: usize) -> Result<Limits, String> {
    let number = |flag: &str, default: u64, min: u64| number(pick, flag, default, min);
    let seconds = |flag: &str, default: u64, min: u64| number(flag, default, min).map(Duration::from_secs);
    let thousandths = |flag: &str, default: u64| thousandths(pick, flag, default);
    let max_streams = number("max-streams", 256, 1)?;
    Ok(Limits {
        max_body: number("max-body", 1_048_576, 1)? as usize,
        header_timeout: seconds("header-timeout", 10, 1)?,
        body_timeout: seconds("body-timeout", 30, 1)?,
        idle_timeout: seconds("idle-timeout", 60, 1)?,
        send_timeout: seconds("send-timeout", 30, 1)?,
        max_connections: number("max-connections", 1024, 1)? as usize,
        max_streams: max_streams as usize,
        max_streams_per_token: number("max-streams-per-token", 8, 1)? as usize,
        max_streams_per_tenant: number("max-streams-per-tenant", (max_streams / 8).max(1), 1)? as usize,
        stream_buffer: number("stream-buffer", 4 * 1024 * 1024, 1)? as usize,
        token_recheck: seconds("token-recheck", 3, 1)?,
        auth_fail_burst: number("auth-fail-burst", 50, 1)? as usize,
        auth_fail_per_ks: thousandths("auth-fail-rate", 5_000)?,
        auth_fail_global_per_ks: thousandths("auth-fail-global-rate", 50_000)?,
        tenant_catch_ups: number("tenant-catch-ups", 4, 1)? as usize,
        tenant_share: number("tenant-share", (pool_size as u64 / 4).max(1), 1)? as usize,
        tenant_wait: seconds("tenant-wait", 5, 1)?,
    })
}

/// The open connections the process can hold with `files` file descriptors: what is left
/// after the pool, the LISTEN connection and 32 for everything else (stdio, the listening
/// socket, startup checks), at least 1; and `wanted` when that is fewer.
pub fn connections_that_fit(wanted: usize, files: u64, pool_size: usize) -> usize {
    let spare = files.saturating_sub(pool_size as u64 + 1 + 32);
    wanted.min(usize::try_from(spare).unwrap_or(usize::MAX)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    fn serve(c: Command) -> Config {
        match c {
            Command::Serve(c) => *c,
            Command::Print(_) => panic!("a text to print, not a configuration"),
        }
    }

    #[test]
    fn defaults() {
        let c = serve(parse(&[], &env_of(&[("PGHOST", "/tmp/s"), ("PGDATABASE", "db"), ("PGUSER", "agent")])).unwrap());
        assert_eq!(c.listen, "127.0.0.1:8787".parse().unwrap());
        assert_eq!(c.connection, "host='/tmp/s' dbname='db' user='agent' application_name='pg_todos_serve'");
        assert_eq!((c.pool_size, c.shutdown_grace), (16, Duration::from_secs(10)));
        let l = &c.limits;
        assert_eq!(l.max_body, 1_048_576);
        let secs = |d: Duration| d.as_secs();
        assert_eq!(
            (secs(l.header_timeout), secs(l.body_timeout), secs(l.idle_timeout), secs(l.send_timeout)),
            (10, 30, 60, 30)
        );
        assert_eq!((l.max_connections, l.max_streams, l.max_streams_per_token), (1024, 256, 8));
        // an eighth of the streams, at least one
        assert_eq!(l.max_streams_per_tenant, 32);
        let few = serve(parse(&args(&["--max-streams", "7"]), &env_of(&[])).unwrap());
        assert_eq!(few.limits.max_streams_per_tenant, 1);
        let some = serve(parse(&args(&["--max-streams", "100"]), &env_of(&[])).unwrap());
        assert_eq!(some.limits.max_streams_per_tenant, 12);
        assert_eq!((l.stream_buffer, secs(l.token_recheck)), (4 * 1024 * 1024, 3));
        // a quarter of the pool, at least one
        assert_eq!((l.tenant_share, secs(l.tenant_wait), l.tenant_catch_ups), (4, 5, 4));
        // 50 failed authentications of an address, then 5 a second; 50 a second of all
        assert_eq!((l.auth_fail_burst, l.auth_fail_per_ks, l.auth_fail_global_per_ks), (50, 5_000, 50_000));
        // no names but addresses and localhost, no trusted proxy
        assert_eq!((&c.hosts, &c.proxies), (&super::super::hosts::Hosts::default(), &Default::default()));
        let small = serve(parse(&args(&["--pool-size", "3"]), &env_of(&[])).unwrap());
        assert_eq!(small.limits.tenant_share, 1);
    }

    #[test]
    fn limits_from_flags_and_variables() {
        let env = env_of(&[
            ("PG_TODOS_HEADER_TIMEOUT", "2"),
            ("PG_TODOS_MAX_STREAMS", "3"),
            ("PG_TODOS_MAX_STREAMS_PER_TOKEN", " "),
            ("PG_TODOS_MAX_STREAMS_PER_TENANT", "4"),
            ("PG_TODOS_STREAM_BUFFER", "65536"),
            ("PG_TODOS_TENANT_SHARE", "2"),
            ("PG_TODOS_TENANT_CATCH_UPS", "9"),
            ("PG_TODOS_AUTH_FAIL_RATE", "0.25"),
            ("PG_TODOS_AUTH_FAIL_BURST", "3"),
            ("PG_TODOS_POOL_SIZE", "8"),
            ("PG_TODOS_MAX_BODY", "100"),
        ]);
        let c = serve(
            parse(
                &args(&[
                    "--max-streams=5",
                    "--body-timeout",
                    "4",
                    "--idle-timeout",
                    "7",
                    "--send-timeout",
                    "6",
                    "--max-connections",
                    "50",
                    "--token-recheck",
                    "1",
                    "--tenant-wait",
                    "2",
                ]),
                &env,
            )
            .unwrap(),
        );
        let l = &c.limits;
        assert_eq!(c.pool_size, 8);
        assert_eq!(l.header_timeout, Duration::from_secs(2));
        assert_eq!(l.body_timeout, Duration::from_secs(4));
        assert_eq!(l.idle_timeout, Duration::from_secs(7));
        assert_eq!(l.send_timeout, Duration::from_secs(6));
        // the flag wins over its variable; a blank variable is no variable
        assert_eq!((l.max_streams, l.max_streams_per_token, l.max_streams_per_tenant), (5, 8, 4));
        assert_eq!((l.max_connections, l.stream_buffer, l.max_body, l.tenant_catch_ups), (50, 65536, 100, 9));
        assert_eq!((l.auth_fail_burst, l.auth_fail_per_ks), (3, 250));
        let c = serve(parse(&args(&["--auth-fail-rate", "0.001", "--auth-fail-burst=1"]), &env).unwrap());
        assert_eq!((c.limits.auth_fail_burst, c.limits.auth_fail_per_ks), (1, 1));
        assert_eq!(
            (l.token_recheck, l.tenant_share, l.tenant_wait),
            (Duration::from_secs(1), 2, Duration::from_secs(2))
        );
    }

    #[test]
    fn metrics_and_the_log_format() {
        let c = serve(parse(&[], &env_of(&[])).unwrap());
        // off unless asked for
        assert_eq!((c.metrics_listen, c.log_format), (None, crate::log::Format::Text));
        let c =
            serve(parse(&args(&["--metrics-listen", "127.0.0.1:9187", "--log-format=json"]), &env_of(&[])).unwrap());
        assert_eq!(c.metrics_listen, Some("127.0.0.1:9187".parse().unwrap()));
        assert_eq!(c.log_format, crate::log::Format::Json);
        let env = env_of(&[("PG_TODOS_METRICS_LISTEN", "[::1]:9187"), ("PG_TODOS_LOG_FORMAT", "json")]);
        let c = serve(parse(&[], &env).unwrap());
        assert_eq!((c.metrics_listen, c.log_format), (Some("[::1]:9187".parse().unwrap()), crate::log::Format::Json));
        let c = serve(parse(&args(&["--log-format", "text"]), &env).unwrap());
        assert_eq!(c.log_format, crate::log::Format::Text);
        let e = |a: &[&str]| parse(&args(a), &env_of(&[])).unwrap_err();
        assert_eq!(
            e(&["--metrics-listen", "metrics:9187"]),
            "--metrics-listen \"metrics:9187\": use an address and port, e.g. 127.0.0.1:9187 or [::1]:9187"
        );
        assert_eq!(
            e(&["--listen", "127.0.0.1:8787", "--metrics-listen", "127.0.0.1:8787"]),
            "--metrics-listen 127.0.0.1:8787: the same address as --listen; give the metrics an address of their own"
        );
        assert_eq!(e(&["--log-format", "logfmt"]), "--log-format \"logfmt\": use text or json");
    }

    #[test]
    fn allowed_hosts_and_trusted_proxies() {
        use super::super::{hosts::Hosts, throttle::Proxies};
        let env = env_of(&[
            ("PG_TODOS_ALLOWED_HOSTS", "todos.example.com"),
            ("PG_TODOS_TRUSTED_PROXIES", "10.0.0.0/8"),
            ("PG_TODOS_AUTH_FAIL_GLOBAL_RATE", "7.5"),
        ]);
        let c = serve(parse(&[], &env).unwrap());
        assert_eq!(c.hosts, Hosts::parse("todos.example.com").unwrap());
        assert_eq!(c.proxies, Proxies::parse("10.0.0.0/8").unwrap());
        assert_eq!(c.limits.auth_fail_global_per_ks, 7_500);
        let c = serve(
            parse(&args(&["--allowed-hosts", "a.example,b.example", "--trusted-proxies=127.0.0.1"]), &env).unwrap(),
        );
        assert_eq!(c.hosts, Hosts::parse("a.example, b.example").unwrap());
        assert_eq!(c.proxies, Proxies::parse("127.0.0.1").unwrap());
        let e = |a: &[&str]| parse(&args(a), &env_of(&[])).unwrap_err();
        assert!(e(&["--allowed-hosts", "http://x"]).starts_with("--allowed-hosts \"http://x\": use host names"));
        assert!(
            e(&["--trusted-proxies", "proxy"]).starts_with("--trusted-proxies \"proxy\": use addresses or prefixes")
        );
        assert!(e(&["--auth-fail-global-rate", "0"]).starts_with("--auth-fail-global-rate \"0\": use a number"));
    }

    #[test]
    fn https_needs_both_files() {
        let c = serve(parse(&args(&["--tls-cert", "c.pem"]), &env_of(&[("PG_TODOS_TLS_KEY", "k.pem")])).unwrap());
        assert_eq!(c.tls, Some(("c.pem".to_string(), "k.pem".to_string())));
        assert_eq!(serve(parse(&[], &env_of(&[])).unwrap()).tls, None);
        assert_eq!(
            parse(&args(&["--tls-key", "k.pem"]), &env_of(&[])).unwrap_err(),
            "--tls-cert and --tls-key: give both (HTTPS) or neither (HTTP)"
        );
    }

    #[test]
    fn connections_fit_the_file_descriptors() {
        assert_eq!(connections_that_fit(1024, 1_048_576, 16), 1024);
        // 256 descriptors, a pool of 16: 256 - 16 - 1 - 32
        assert_eq!(connections_that_fit(1024, 256, 16), 207);
        assert_eq!(connections_that_fit(100, 256, 16), 100);
        assert_eq!(connections_that_fit(1024, 20, 16), 1);
    }

    #[test]
    fn flags_win_over_the_environment() {
        let env =
            env_of(&[("PG_TODOS_LISTEN", "0.0.0.0:9000"), ("DATABASE_URL", "postgres://u@h/d"), ("PGHOST", "ignored")]);
        let c = serve(parse(&[], &env).unwrap());
        assert_eq!(c.listen, "0.0.0.0:9000".parse().unwrap());
        assert_eq!(c.connection, "postgres://u@h/d");
        let c = serve(
            parse(
                &args(&[
                    "--listen",
                    "[::1]:1234",
                    "--database-url=host=x",
                    "--pool-size",
                    "4",
                    "--max-body=100",
                    "--shutdown-grace",
                    "0",
                ]),
                &env,
            )
            .unwrap(),
        );
        assert_eq!(c.listen, "[::1]:1234".parse().unwrap());
        assert_eq!(c.connection, "host=x");
        assert_eq!((c.pool_size, c.limits.max_body, c.shutdown_grace), (4, 100, Duration::ZERO));
        // a blank variable is no variable; the last of a repeated flag wins
        let blank = env_of(&[("PG_TODOS_LISTEN", " "), ("DATABASE_URL", "")]);
        let c = serve(parse(&args(&["--pool-size", "2", "--pool-size", "3"]), &blank).unwrap());
        assert_eq!((c.listen.port(), c.pool_size), (8787, 3));
        assert!(c.connection.contains("application_name='pg_todos_serve'"), "{}", c.connection);
        // PG_TODOS_DATABASE_URL first, as pg_todos mcp reads it (docs/agents.md says both do)
        let both = env_of(&[("PG_TODOS_DATABASE_URL", "postgres://ours@h/d"), ("DATABASE_URL", "postgres://u@h/d")]);
        assert_eq!(serve(parse(&[], &both).unwrap()).connection, "postgres://ours@h/d");
        let ours = env_of(&[("PG_TODOS_DATABASE_URL", "postgres://ours@h/d")]);
        assert_eq!(serve(parse(&[], &ours).unwrap()).connection, "postgres://ours@h/d");
    }

    #[test]
    fn help_and_version() {
        let help = |a: &[&str]| match parse(&args(a), &env_of(&[])).unwrap() {
            Command::Print(text) => text,
            other => panic!("{other:?}"),
        };
        let text = help(&["--pool-size", "2", "--help"]);
        assert!(text.starts_with("The HTTP service over the pg_todos extension"), "{text}");
        assert!(text.contains("Usage: pg_todos serve [OPTIONS]") && text.contains("--tenant-share <N>"), "{text}");
        // every flag names its variable and its default
        assert!(text.contains("[env: PG_TODOS_MAX_STREAMS] [default: 256]"), "{text}");
        assert!(help(&["-h"]).contains("--listen <ADDR:PORT>"));
        assert!(
            text.contains("--metrics-listen <ADDR:PORT>") && text.contains("[env: PG_TODOS_METRICS_LISTEN]"),
            "{text}"
        );
        assert!(text.contains("--log-format <FORMAT>") && text.contains("[env: PG_TODOS_LOG_FORMAT]"), "{text}");
        assert_eq!(help(&["--version"]).trim(), format!("pg_todos serve {}", env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn errors_say_what_to_fix() {
        let env = env_of(&[]);
        let e = |a: &[&str]| parse(&args(a), &env).unwrap_err();
        // clap's words for what it reads, with the usage
        let missing = e(&["--listen"]);
        assert!(
            missing.starts_with("a value is required for '--listen <ADDR:PORT>' but none was supplied"),
            "{missing}"
        );
        assert!(missing.contains("Usage: pg_todos serve [OPTIONS]"), "{missing}");
        assert!(e(&["--port", "1"]).starts_with("unexpected argument '--port' found"), "{}", e(&["--port", "1"]));
        assert!(e(&["serve"]).starts_with("unexpected argument 'serve' found"));
        assert_eq!(
            e(&["--listen", "localhost"]),
            "--listen \"localhost\": use an address and port, e.g. 127.0.0.1:8787 or [::1]:8787"
        );
        assert_eq!(e(&["--pool-size", "0"]), "--pool-size \"0\": use an integer from 1 to 4294967295");
        assert_eq!(e(&["--max-body", "-5"]), "--max-body \"-5\": use an integer from 1 to 4294967295");
        assert_eq!(e(&["--shutdown-grace", "soon"]), "--shutdown-grace \"soon\": use an integer from 0 to 4294967295");
        assert_eq!(e(&["--header-timeout", "0"]), "--header-timeout \"0\": use an integer from 1 to 4294967295");
        assert_eq!(
            e(&["--max-streams", "99999999999"]),
            "--max-streams \"99999999999\": use an integer from 1 to 4294967295"
        );
        assert!(e(&["--tenant-share"]).starts_with("a value is required for '--tenant-share <N>'"));
        for rate in ["0", "-1", "fast", "0.0001", "NaN", "inf"] {
            assert_eq!(
                e(&["--auth-fail-rate", rate]),
                format!("--auth-fail-rate {rate:?}: use a number from 0.001 to 1000000, e.g. 5 or 0.5")
            );
        }
        assert_eq!(e(&["--auth-fail-burst", "0"]), "--auth-fail-burst \"0\": use an integer from 1 to 4294967295");
        let bad = env_of(&[("PG_TODOS_STREAM_BUFFER", "lots")]);
        assert!(parse(&[], &bad).unwrap_err().starts_with("--stream-buffer \"lots\""));
        let bad = env_of(&[("PG_TODOS_LISTEN", "nope")]);
        assert!(parse(&[], &bad).unwrap_err().starts_with("--listen \"nope\""));
    }
}
