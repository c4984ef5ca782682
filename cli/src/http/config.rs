//! The HTTP service's configuration: where it listens, where the database is, how many
//! connections it pools, how large a body it reads, how long it waits for requests at
//! shutdown. From command-line flags, then `PG_TODOS_LISTEN` / `DATABASE_URL`, then libpq's
//! variables (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`, `PGPASSWORD`, `PGAPPNAME`). Pure: no
//! I/O beyond the environment the caller hands in, unit-tested.

use std::net::SocketAddr;
use std::time::Duration;

pub const USAGE: &str = "\
usage: pg_todos serve [--listen <addr:port>] [--database-url <postgres://…>] [--pool-size <n>]
                      [--max-body <bytes>] [--shutdown-grace <seconds>]

The HTTP service over the pg_todos extension: /v1/todos (todo.rest), /session/:id/todo,
/v1/board, /v1/events (Server-Sent Events of every committed change), /healthz, /readyz and
the board at /. Every route but /, /healthz and /readyz needs Authorization: Bearer <token>
(a token from todo.create_token); the tenant comes from the token.

  --listen          address to listen on (env PG_TODOS_LISTEN; default 127.0.0.1:8787)
  --database-url    a libpq URL or key=value string (env DATABASE_URL); otherwise PGHOST,
                    PGPORT, PGDATABASE, PGUSER, PGPASSWORD (application_name pg_todos_serve)
  --pool-size       pooled database connections (default 16); SSE uses one more of its own
  --max-body        largest request body read, in bytes (default 1048576); larger: 413
  --shutdown-grace  seconds in-flight requests get after SIGTERM/SIGINT (default 10); event
                    streams end at once; past the grace the process exits with status 1
  --help            this text";

/// What the command line asks for: run with a configuration, or print the usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Serve(Config),
    Help,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub listen: SocketAddr,
    /// a libpq connection string (URL or key=value)
    pub connection: String,
    pub pool_size: usize,
    pub max_body: usize,
    pub shutdown_grace: Duration,
}

/// Flags that take a value.
const VALUED: [&str; 5] = ["listen", "database-url", "pool-size", "max-body", "shutdown-grace"];

/// The command from the arguments (after `serve`) and the environment. Errors (a message
/// saying what to fix): an unknown argument, a flag without its value, an address that is
/// not `host:port` with a numeric host, a pool size, body size or grace that is not a
/// positive integer (the grace may be 0).
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
        let Some(name) = VALUED.iter().find(|v| **v == name) else { return Err(format!("unknown argument {a:?}")) };
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
    // the last of a flag given twice wins, then the first variable set and not blank
    let pick = |flag: &str, vars: &[&str]| {
        flags
            .iter()
            .rev()
            .find(|(n, _)| *n == flag)
            .map(|(_, v)| v.clone())
            .or_else(|| vars.iter().find_map(|v| env(v).filter(|s| !s.trim().is_empty())))
    };
    let listen = pick("listen", &["PG_TODOS_LISTEN"]).unwrap_or_else(|| "127.0.0.1:8787".into());
    let listen = listen
        .trim()
        .parse::<SocketAddr>()
        .map_err(|_| format!("--listen {listen:?}: use an address and port, e.g. 127.0.0.1:8787 or [::1]:8787"))?;
    let number = |flag: &str, default: u64, min: u64| -> Result<u64, String> {
        match pick(flag, &[]) {
            None => Ok(default),
            Some(v) => match v.trim().parse::<u64>() {
                Ok(n) if n >= min => Ok(n),
                _ => Err(format!("--{flag} {v:?}: use an integer of at least {min}")),
            },
        }
    };
    Ok(Command::Serve(Config {
        listen,
        connection: pick("database-url", &["DATABASE_URL"])
            .unwrap_or_else(|| crate::db::libpq_env(env, "pg_todos_serve")),
        pool_size: number("pool-size", 16, 1)? as usize,
        max_body: number("max-body", 1_048_576, 1)? as usize,
        shutdown_grace: Duration::from_secs(number("shutdown-grace", 10, 0)?),
    }))
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
            Command::Serve(c) => c,
            Command::Help => panic!("help, not a configuration"),
        }
    }

    #[test]
    fn defaults() {
        let c = serve(parse(&[], &env_of(&[("PGHOST", "/tmp/s"), ("PGDATABASE", "db"), ("PGUSER", "agent")])).unwrap());
        assert_eq!(c.listen, "127.0.0.1:8787".parse().unwrap());
        assert_eq!(c.connection, "host='/tmp/s' dbname='db' user='agent' application_name='pg_todos_serve'");
        assert_eq!((c.pool_size, c.max_body, c.shutdown_grace), (16, 1_048_576, Duration::from_secs(10)));
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
        assert_eq!((c.pool_size, c.max_body, c.shutdown_grace), (4, 100, Duration::ZERO));
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
        assert_eq!(e(&["--pool-size", "0"]), "--pool-size \"0\": use an integer of at least 1");
        assert_eq!(e(&["--max-body", "-5"]), "--max-body \"-5\": use an integer of at least 1");
        assert_eq!(e(&["--shutdown-grace", "soon"]), "--shutdown-grace \"soon\": use an integer of at least 0");
        let bad = env_of(&[("PG_TODOS_LISTEN", "nope")]);
        assert!(parse(&[], &bad).unwrap_err().starts_with("--listen \"nope\""));
    }
}
