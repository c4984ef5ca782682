//! `pg_todos serve`: the HTTP service over the pg_todos extension, for agents that speak HTTP
//! (seed 000's `/v1/todos`, OpenCode's `session.todo()`), the board, and a Server-Sent Events
//! stream of every committed change.
//!
//! - Every request but `/healthz` and `/readyz` must name the service in its `Host` and
//!   `Origin` (an IP address, `localhost`, or a name of `--allowed-hosts`), against DNS
//!   rebinding: 403 otherwise (`hosts`).
//! - Every route but `/`, `/healthz` and `/readyz` needs `Authorization: Bearer <token>`
//!   (`todo.authenticate`); the tenant comes from the token alone (`auth`). A client address
//!   that fails to authenticate more than `--auth-fail-burst` times, then `--auth-fail-rate` a
//!   second (or all of them together past `--auth-fail-global-rate`), is refused (429) before a
//!   token not seen to authenticate is looked up; a token seen to is never refused for others'
//!   failures (`throttle`; the client named by a `--trusted-proxies`' X-Forwarded-For).
//! - Each request runs one statement in its own transaction on a pooled connection, with a
//!   lock timeout (10 s), a statement timeout (30 s) and the token's tenant and agent in
//!   context, once its tenant has a place in its share of the pool (`gate`); serialization
//!   failures and deadlocks run again (`work`). What is not the caller's data (timeouts,
//!   cancels, the database away, the tenant's share taken) is 503 with `Retry-After: 1`;
//!   anything else unexpected is 500 (`errors`).
//! - `/v1/events` reads changes by cursor (`todo.changes_since`, a page at a time) when the
//!   feed finds the tenant changed: it follows the log, one probe per tick for every tenant
//!   with an open stream, on one connection for the server (`feed`, `hub`, `events`); the streams are counted per token, per tenant and in all; each batch is
//!   read with a check of the tokens it goes to, so a revoked token's stream ends before
//!   anything committed after the revocation reaches it (`streams`).
//! - JSON answers of the REST and board routes and the board's files go gzipped to a client
//!   that takes it; the board's files carry an ETag and are revalidated (`encoding`).
//! - Connections are capped and timed (headers, idle keep-alive, a client that reads nothing:
//!   `server`); `pg_todos serve --help` lists every limit.
//! - Logging: `tracing` on stderr, one line per request and per event (`crate::log`,
//!   `PG_TODOS_LOG`), as text or JSON lines (`--log-format`); never a token.
//! - Metrics: with `--metrics-listen`, `GET /metrics` on that address of its own, with no
//!   token (`metrics`, `crate::metrics`): requests by route template and status, latencies,
//!   the pool, the streams, the feed's lag, database errors by SQLSTATE class, 401s.
//! - SIGTERM or SIGINT: no new connections, in-flight requests finish, event streams end, exit
//!   0; after `--shutdown-grace` seconds, exit 1 anyway.

pub mod assets;
pub mod auth;
pub mod board;
pub mod config;
pub mod decode;
pub mod encoding;
pub mod events;
pub mod feed;
pub mod hosts;
pub mod hub;
pub mod mcp;
pub mod metrics;
pub mod routes;
pub mod server;
pub mod streams;
pub mod throttle;

use tokio::sync::watch;

use crate::tls::Target;

use crate::db::error_text;
use crate::tls::pool;
use config::Command;

fn fail(message: String) -> ! {
    eprintln!("pg_todos serve: {message}");
    std::process::exit(2)
}

/// Connects once and checks the extension is there with the functions this service calls;
/// returns the extension's version and the database's name. Errors (a message): the database
/// cannot be reached, the extension is not installed or older than 0.9.0, or the role may
/// not look tokens up (not given `todo.grant_usage`).
async fn check(connection: &Target) -> Result<(String, String), String> {
    let (client, conn) = connection
        .connect()
        .await
        .map_err(|e| format!("cannot connect to the database: {}", crate::tls::connect_error(&e)))?;
    let driver = tokio::spawn(conn);
    let result = async {
        // the extension, then where we are, who we are, and what the role may call
        let installed = crate::db::extension_version(&client).await.map_err(|e| error_text(&e))?;
        let row = client
            .query_one(
                "SELECT current_database()::text, current_user::text,
                        to_regprocedure('todo.authenticate(text)') IS NOT NULL
                            AND to_regprocedure('todo.changes_since(text, text, integer)') IS NOT NULL,
                        has_function_privilege(to_regprocedure('todo.authenticate(text)')::oid, 'EXECUTE')",
                &[],
            )
            .await
            .map_err(|e| error_text(&e))?;
        let (db, role): (String, String) = (row.get(0), row.get(1));
        let version: String = installed
            .ok_or_else(|| format!("the pg_todos extension is not installed in database \"{db}\": CREATE EXTENSION pg_todos"))?;
        if !row.get::<_, bool>(2) {
            return Err(format!(
                "pg_todos {version} in database \"{db}\" has no todo.authenticate or paged todo.changes_since (0.9.0 or later needed): ALTER EXTENSION pg_todos UPDATE"
            ));
        }
        // a role set up before 0.6.0 lacks what todo.grant_usage now grants: every request
        // would fail on the token lookup
        if row.get::<_, Option<bool>>(3) != Some(true) {
            return Err(format!(
                "role \"{role}\" may not execute todo.authenticate in database \"{db}\": as an administrator, SELECT todo.grant_usage('{role}')"
            ));
        }
        Ok((version, db))
    }
    .await;
    drop(client);
    let _ = driver.await;
    result
}

/// The HTTPS acceptor of a certificate chain and its key (PEM files): TLS 1.2 and 1.3, HTTP/1.1.
/// Errors: a file that cannot be read, or a key that is not the certificate's.
fn https(cert: &str, key: &str) -> Result<openssl::ssl::SslAcceptor, String> {
    use openssl::ssl::{SslAcceptor, SslFiletype, SslMethod};
    let mut b = SslAcceptor::mozilla_intermediate_v5(SslMethod::tls_server()).map_err(|e| format!("TLS: {e}"))?;
    b.set_certificate_chain_file(cert).map_err(|e| format!("--tls-cert {cert:?}: cannot read it: {e}"))?;
    b.set_private_key_file(key, SslFiletype::PEM)
        .map_err(|e| format!("--tls-key {key:?}: cannot read it, or it is not the key of --tls-cert {cert:?}: {e}"))?;
    b.check_private_key().map_err(|e| format!("--tls-key {key:?} is not the key of --tls-cert {cert:?}: {e}"))?;
    Ok(b.build())
}

/// SIGTERM or SIGINT, whichever comes first.
async fn terminated() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).unwrap_or_else(|e| fail(format!("cannot handle SIGTERM: {e}")));
    let mut int = signal(SignalKind::interrupt()).unwrap_or_else(|e| fail(format!("cannot handle SIGINT: {e}")));
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// The routes over `database`, with the limits, the names and the proxies of the
/// configuration.
fn app(
    config: &config::Config,
    limits: &config::Limits,
    database: crate::db::work::Db,
    hubs: std::sync::Arc<hub::Hubs>,
    streams: std::sync::Arc<streams::Streams>,
) -> axum::Router {
    let mcp = mcp::service(database.clone(), limits.max_body);
    let throttle = std::sync::Arc::new(throttle::Throttle::new(
        limits.auth_fail_per_ks as f64 / 1000.0,
        limits.auth_fail_burst,
        limits.auth_fail_global_per_ks as f64 / 1000.0,
        std::time::Instant::now(),
    ));
    routes::router(routes::AppState {
        db: database,
        hubs,
        streams,
        throttle,
        proxies: std::sync::Arc::new(config.proxies.clone()),
        hosts: std::sync::Arc::new(config.hosts.clone()),
        limits: limits.clone(),
        mcp,
    })
}

/// Runs the service with the command line's arguments (after `serve`) until SIGTERM/SIGINT;
/// exits with status 2 and a message on a configuration error, a database that cannot be
/// reached or lacks the extension, or an address it cannot listen on.
pub async fn main(args: Vec<String>) {
    let config = match config::parse(&args, &|k| std::env::var(k).ok()) {
        Ok(Command::Print(text)) => {
            println!("{}", text.trim_end());
            return;
        }
        Ok(Command::Serve(c)) => *c,
        Err(e) if e.contains("Usage:") => fail(e),
        Err(e) => fail(format!("{e}\n\n{}", config::usage())),
    };
    crate::log::init_as(config.log_format);
    let target = crate::tls::target(&config.connection, &|k| std::env::var(k).ok()).unwrap_or_else(|e| fail(e));
    let (version, db) = check(&target).await.unwrap_or_else(|e| fail(e));
    let pool = pool(&target, config.pool_size).unwrap_or_else(|e| fail(e));
    let limits = limits_that_fit(&config);
    let socket = tokio::net::TcpListener::bind(config.listen)
        .await
        .unwrap_or_else(|e| fail(format!("cannot listen on {}: {e}", config.listen)));
    let address = socket.local_addr().map_or_else(|_| config.listen.to_string(), |a| a.to_string());
    let metrics_socket = match config.metrics_listen {
        None => None,
        Some(a) => Some(
            tokio::net::TcpListener::bind(a)
                .await
                .unwrap_or_else(|e| fail(format!("cannot listen on {a} (--metrics-listen): {e}"))),
        ),
    };
    let acceptor = config.tls.as_ref().map(|(cert, key)| https(cert, key).unwrap_or_else(|e| fail(e)));
    let scheme = if acceptor.is_some() { "https" } else { "http" };
    tracing::info!("listening on {scheme}://{address} (pg_todos {version}, database \"{db}\")");

    let (shutdown, shutdown_rx) = watch::channel(false);
    let feed = feed::Feed::start(target, config.feed_tick, config.feed.clone());
    let database = crate::db::work::Db {
        pool: pool.clone(),
        gate: crate::db::gate::Gate::new(limits.tenant_share, limits.tenant_wait),
        via: "http",
    };
    let streams =
        streams::Streams::new(limits.max_streams, limits.max_streams_per_tenant, limits.max_streams_per_token);
    let catch_ups = crate::db::gate::Gate::named(
        limits.tenant_catch_ups,
        limits.tenant_wait,
        "event-stream catch-ups under way, as many as one tenant may (--tenant-catch-ups)",
    );
    let hubs =
        hub::Hubs::new(database.clone(), feed, streams.clone(), catch_ups, limits.stream_buffer, shutdown_rx.clone());
    tokio::spawn(streams::recheck_tokens(streams.clone(), pool.clone(), limits.token_recheck));
    if let Some(socket) = metrics_socket {
        let address = socket.local_addr().map_or_else(|_| "?".to_string(), |a| a.to_string());
        tracing::info!("metrics at http://{address}/metrics (no token: keep this address private)");
        let sources =
            metrics::Sources { pool, hubs: hubs.clone(), streams: streams.clone(), max_streams: limits.max_streams };
        // the service's timeouts, and few connections: a scraper or two
        let metrics_limits = config::Limits { max_connections: limits.max_connections.min(16), ..limits.clone() };
        tokio::spawn(server::serve(socket, None, metrics::router(sources), metrics_limits, shutdown_rx.clone()));
    }
    let app = app(&config, &limits, database, hubs, streams);
    tokio::spawn(shut_down_when_terminated(shutdown, config.shutdown_grace));
    server::serve(socket, acceptor, app, limits, shutdown_rx).await;
    tracing::info!("stopped");
}

/// The service's limits, `--max-connections` lowered (with a warning) to the connections
/// that fit in the files the process may open, once it has raised that limit.
fn limits_that_fit(config: &config::Config) -> config::Limits {
    let mut limits = config.limits.clone();
    if let Some(files) = server::raise_file_limit() {
        let fit = config::connections_that_fit(limits.max_connections, files, config.pool_size);
        if fit < limits.max_connections {
            tracing::warn!(
                "--max-connections {} lowered to {fit}: the process may open {files} files",
                limits.max_connections
            );
            limits.max_connections = fit;
        }
    }
    limits
}

/// On SIGTERM or Ctrl-C: tells every event stream and the server to stop (`shutdown`), and
/// exits the process if requests are still in flight after `grace`.
async fn shut_down_when_terminated(shutdown: watch::Sender<bool>, grace: std::time::Duration) {
    terminated().await;
    tracing::info!("shutting down: finishing requests in flight (at most {}s)", grace.as_secs());
    // every event stream and MCP listen ends; the server stops accepting and waits for the rest
    let _ = shutdown.send(true);
    crate::mcp::stop_listening();
    tokio::time::sleep(grace).await;
    tracing::error!("requests still in flight after {}s; exiting", grace.as_secs());
    std::process::exit(1);
}
