//! The HTTP service's configuration: where it listens, where the database is, how many
//! connections it pools, and the limits that keep one client or one tenant from holding or
//! filling the service. From command-line flags, then each flag's `PG_TODOS_*` variable (and
//! `DATABASE_URL`), then libpq's variables (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`,
//! `PGPASSWORD`, `PGAPPNAME`). Pure: no I/O beyond the environment the caller hands in,
//! unit-tested.

use std::net::SocketAddr;
use std::time::Duration;

pub const USAGE: &str = "\
usage: pg_todos serve [--listen <addr:port>] [--database-url <postgres://…>] [--pool-size <n>]
                      [--max-body <bytes>] [--shutdown-grace <seconds>] [limits below]

The HTTP service over the pg_todos extension: /v1/todos (todo.rest), /session/:id/todo,
/v1/board, /v1/events (Server-Sent Events of every committed change), /healthz, /readyz and
the board at /. Every route but /, /healthz and /readyz needs Authorization: Bearer <token>
(a token from todo.create_token); the tenant comes from the token.

  --listen          address to listen on (env PG_TODOS_LISTEN; default 127.0.0.1:8787)
  --database-url    a libpq URL or key=value string (env DATABASE_URL); otherwise PGHOST,
                    PGPORT, PGDATABASE, PGUSER, PGPASSWORD (application_name pg_todos_serve)
  --pool-size       pooled database connections (env PG_TODOS_POOL_SIZE; default 16); SSE
                    uses one more of its own
  --shutdown-grace  seconds in-flight requests get after SIGTERM/SIGINT (env
                    PG_TODOS_SHUTDOWN_GRACE; default 10); event streams end at once; past the
                    grace the process exits with status 1
  --help            this text

Limits (each also an environment variable):
  --max-body               largest request body read, in bytes (PG_TODOS_MAX_BODY; 1048576);
                           larger: 413
  --header-timeout         seconds a connection has to send a request's headers
                           (PG_TODOS_HEADER_TIMEOUT; 10); then it is closed
  --body-timeout           seconds a request has to send its body (PG_TODOS_BODY_TIMEOUT; 30);
                           then 408
  --idle-timeout           seconds an idle keep-alive connection is kept (PG_TODOS_IDLE_TIMEOUT;
                           60)
  --send-timeout           seconds a response may wait on a client that reads nothing
                           (PG_TODOS_SEND_TIMEOUT; 30); then the connection is closed
  --max-connections        open connections at most (PG_TODOS_MAX_CONNECTIONS; 1024, lowered
                           to fit the process's file descriptors); past it new connections
                           wait to be accepted
  --max-streams            open event streams at most (PG_TODOS_MAX_STREAMS; 256); past it 503
  --max-streams-per-token  open event streams per token (PG_TODOS_MAX_STREAMS_PER_TOKEN; 8);
                           past it 429
  --stream-buffer          bytes a stream may fall behind by (PG_TODOS_STREAM_BUFFER; 4194304);
                           past it the stream ends and the client catches up on reconnect
  --token-recheck          seconds between checks that the tokens of open streams are still
                           live (PG_TODOS_TOKEN_RECHECK; 3); a revoked token's streams end
  --tenant-share           database operations one tenant may run at once
                           (PG_TODOS_TENANT_SHARE; a quarter of --pool-size, at least 1)
  --tenant-wait            seconds a tenant's operation waits for its share
                           (PG_TODOS_TENANT_WAIT; 5); then 503 with Retry-After";

/// What the command line asks for: run with a configuration, or print the usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// boxed: a configuration is large beside `Help`
    Serve(Box<Config>),
    Help,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
    /// a libpq connection string (URL or key=value)
    pub connection: String,
    pub pool_size: usize,
    pub shutdown_grace: Duration,
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
    /// bytes an event stream may fall behind by
    pub stream_buffer: usize,
    /// time between checks of the tokens of open streams
    pub token_recheck: Duration,
    /// database operations of one tenant at once
    pub tenant_share: usize,
    /// time an operation waits for its tenant's share
    pub tenant_wait: Duration,
}

/// Flags that take a value, with their environment variable.
const VALUED: [(&str, &str); 16] = [
    ("listen", "PG_TODOS_LISTEN"),
    ("database-url", "DATABASE_URL"),
    ("pool-size", "PG_TODOS_POOL_SIZE"),
    ("max-body", "PG_TODOS_MAX_BODY"),
    ("shutdown-grace", "PG_TODOS_SHUTDOWN_GRACE"),
    ("header-timeout", "PG_TODOS_HEADER_TIMEOUT"),
    ("body-timeout", "PG_TODOS_BODY_TIMEOUT"),
    ("idle-timeout", "PG_TODOS_IDLE_TIMEOUT"),
    ("send-timeout", "PG_TODOS_SEND_TIMEOUT"),
    ("max-connections", "PG_TODOS_MAX_CONNECTIONS"),
    ("max-streams", "PG_TODOS_MAX_STREAMS"),
    ("max-streams-per-token", "PG_TODOS_MAX_STREAMS_PER_TOKEN"),
    ("stream-buffer", "PG_TODOS_STREAM_BUFFER"),
    ("token-recheck", "PG_TODOS_TOKEN_RECHECK"),
    ("tenant-share", "PG_TODOS_TENANT_SHARE"),
    ("tenant-wait", "PG_TODOS_TENANT_WAIT"),
];

/// The command from the arguments (after `serve`) and the environment. Errors (a message
/// saying what to fix): an unknown argument, a flag without its value, an address that is
/// not `host:port` with a numeric host, a number that is not an integer in its range (the
/// grace may be 0; every other number and time is at least 1).
pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Command, String> {
    let mut flags: Vec<(&str, String)> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        if a == "--help" || a == "-h" {
            return Ok(Command::Help);
        }
        let Some(body) = a.strip_prefix("--") else { return Err(format!("unknown argument {a:?}")) };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some((name, _)) = VALUED.iter().find(|(v, _)| *v == name) else {
            return Err(format!("unknown argument {a:?}"));
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i).cloned().ok_or_else(|| format!("--{name} needs a value"))?
            }
        };
        flags.push((name, value));
        i += 1;
    }
    // the last of a flag given twice wins, then its variable when set and not blank
    let pick = |flag: &str| {
        let var = VALUED.iter().find(|(n, _)| *n == flag).map(|(_, v)| *v);
        flags
            .iter()
            .rev()
            .find(|(n, _)| *n == flag)
            .map(|(_, v)| v.clone())
            .or_else(|| var.and_then(|v| env(v).filter(|s| !s.trim().is_empty())))
    };
    let listen = pick("listen").unwrap_or_else(|| "127.0.0.1:8787".into());
    let listen = listen
        .trim()
        .parse::<SocketAddr>()
        .map_err(|_| format!("--listen {listen:?}: use an address and port, e.g. 127.0.0.1:8787 or [::1]:8787"))?;
    let number = |flag: &str, default: u64, min: u64| -> Result<u64, String> {
        match pick(flag) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if n >= min && n <= u64::from(u32::MAX) => Ok(n),
                _ => Err(format!("--{flag} {v:?}: use an integer from {min} to {}", u32::MAX)),
            },
        }
    };
    let seconds = |flag: &str, default: u64, min: u64| number(flag, default, min).map(Duration::from_secs);
    let pool_size = number("pool-size", 16, 1)? as usize;
    let limits = Limits {
        max_body: number("max-body", 1_048_576, 1)? as usize,
        header_timeout: seconds("header-timeout", 10, 1)?,
        body_timeout: seconds("body-timeout", 30, 1)?,
        idle_timeout: seconds("idle-timeout", 60, 1)?,
        send_timeout: seconds("send-timeout", 30, 1)?,
        max_connections: number("max-connections", 1024, 1)? as usize,
        max_streams: number("max-streams", 256, 1)? as usize,
        max_streams_per_token: number("max-streams-per-token", 8, 1)? as usize,
        stream_buffer: number("stream-buffer", 4 * 1024 * 1024, 1)? as usize,
        token_recheck: seconds("token-recheck", 3, 1)?,
        tenant_share: number("tenant-share", (pool_size as u64 / 4).max(1), 1)? as usize,
        tenant_wait: seconds("tenant-wait", 5, 1)?,
    };
    Ok(Command::Serve(Box::new(Config {
        listen,
        connection: pick("database-url").unwrap_or_else(|| crate::db::libpq_env(env, "pg_todos_serve")),
        pool_size,
        shutdown_grace: Duration::from_secs(number("shutdown-grace", 10, 0)?),
        limits,
    })))
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
            Command::Help => panic!("help, not a configuration"),
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
        assert_eq!((l.stream_buffer, secs(l.token_recheck)), (4 * 1024 * 1024, 3));
        // a quarter of the pool, at least one
        assert_eq!((l.tenant_share, secs(l.tenant_wait)), (4, 5));
        let small = serve(parse(&args(&["--pool-size", "3"]), &env_of(&[])).unwrap());
        assert_eq!(small.limits.tenant_share, 1);
    }

    #[test]
    fn limits_from_flags_and_variables() {
        let env = env_of(&[
            ("PG_TODOS_HEADER_TIMEOUT", "2"),
            ("PG_TODOS_MAX_STREAMS", "3"),
            ("PG_TODOS_MAX_STREAMS_PER_TOKEN", " "),
            ("PG_TODOS_STREAM_BUFFER", "65536"),
            ("PG_TODOS_TENANT_SHARE", "2"),
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
        assert_eq!((l.max_streams, l.max_streams_per_token), (5, 8));
        assert_eq!((l.max_connections, l.stream_buffer, l.max_body), (50, 65536, 100));
        assert_eq!(
            (l.token_recheck, l.tenant_share, l.tenant_wait),
            (Duration::from_secs(1), 2, Duration::from_secs(2))
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
    }

    #[test]
    fn help() {
        assert_eq!(parse(&args(&["--pool-size", "2", "--help"]), &env_of(&[])).unwrap(), Command::Help);
        assert_eq!(parse(&args(&["-h"]), &env_of(&[])).unwrap(), Command::Help);
    }

    #[test]
    fn errors_say_what_to_fix() {
        let env = env_of(&[]);
        let e = |a: &[&str]| parse(&args(a), &env).unwrap_err();
        assert_eq!(e(&["--listen"]), "--listen needs a value");
        assert_eq!(e(&["--port", "1"]), "unknown argument \"--port\"");
        assert_eq!(e(&["serve"]), "unknown argument \"serve\"");
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
        assert_eq!(e(&["--tenant-share"]), "--tenant-share needs a value");
        let bad = env_of(&[("PG_TODOS_STREAM_BUFFER", "lots")]);
        assert!(parse(&[], &bad).unwrap_err().starts_with("--stream-buffer \"lots\""));
        let bad = env_of(&[("PG_TODOS_LISTEN", "nope")]);
        assert!(parse(&[], &bad).unwrap_err().starts_with("--listen \"nope\""));
    }
}
