//! The server's configuration: where the database is, who the calls act for, which tool
//! dialects to expose. From command-line flags, then `PG_TODOS_*` variables, then libpq's
//! (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`, `PGPASSWORD`, `PGAPPNAME`). Pure: no I/O
//! beyond what the caller hands in, unit-tested.

use std::collections::BTreeSet;

pub const USAGE: &str = "\
usage: pg_todos_mcp --tenant <id> [--conversation <id>] [--agent <id>] [--turn <id>]
                    [--tools <dialects>] [--database-url <postgres://…>]

Speaks MCP over stdio; every tool call runs todo.call(name, args) in its own transaction
with the context (tenant, conversation, agent) of this server, never of the arguments.

  --tenant        tenant the calls act for (env PG_TODOS_TENANT; required)
  --conversation  conversation (env PG_TODOS_CONVERSATION; default: one new id per session)
  --agent         agent recorded on rows and claims (env PG_TODOS_AGENT; default: the MCP
                  client's name and the session's id, e.g. claude-code@mcp-4242-18a…)
  --turn          turn, scoping the plan dialect's tools (env PG_TODOS_TURN; default: one new
                  id per session)
  --tools         all (default), or a comma-separated list of plan, opencode, todolist,
                  tasks, coord (the seed numbers 001-004 are accepted as aliases)
                  (env PG_TODOS_TOOLS)
  --database-url  a libpq URL or key=value string (env PG_TODOS_DATABASE_URL or
                  DATABASE_URL); otherwise PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD";

use pg_todos_core::dialects;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub tenant: String,
    pub conversation: Option<String>,
    pub agent: Option<String>,
    pub turn: Option<String>,
    /// None: every dialect
    pub dialects: Option<BTreeSet<String>>,
    /// a libpq connection string (URL or key=value)
    pub connection: String,
}

/// `--name value` or `--name=value`, else the first of `env` that is set and not empty.
fn pick(args: &[String], flag: &str, env: &dyn Fn(&str) -> Option<String>, vars: &[&str]) -> Result<Option<String>, String> {
    let long = format!("--{flag}");
    let mut found = None;
    let mut i = 0;
    while i < args.len() {
        if args[i] == long {
            found = Some(args.get(i + 1).cloned().ok_or_else(|| format!("{long} needs a value"))?);
            i += 1;
        } else if let Some(v) = args[i].strip_prefix(&format!("{long}=")) {
            found = Some(v.to_string());
        }
        i += 1;
    }
    Ok(found.or_else(|| vars.iter().find_map(|v| env(v).filter(|s| !s.trim().is_empty()))))
}

/// libpq's environment as a key=value connection string (values quoted), with libpq's
/// defaults where it has them: the Debian socket directory and the login name.
fn libpq_env(env: &dyn Fn(&str) -> Option<String>) -> String {
    let quote = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
    let get = |var: &str| env(var).filter(|v| !v.is_empty());
    [
        ("host", get("PGHOST").or_else(|| Some("/var/run/postgresql".into()))),
        ("port", get("PGPORT")),
        ("dbname", get("PGDATABASE")),
        ("user", get("PGUSER").or_else(|| get("USER"))),
        ("password", get("PGPASSWORD")),
        ("application_name", get("PGAPPNAME").or_else(|| Some("pg_todos_mcp".into()))),
    ]
    .into_iter()
    .filter_map(|(key, value)| value.map(|v| format!("{key}={}", quote(&v))))
    .collect::<Vec<_>>()
    .join(" ")
}

pub fn parse(args: &[String], env: &dyn Fn(&str) -> Option<String>) -> Result<Config, String> {
    const FLAGS: [&str; 6] = ["tenant", "conversation", "agent", "turn", "tools", "database-url"];
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let name = a.strip_prefix("--").map(|n| n.split('=').next().unwrap_or(n));
        match name {
            Some(n) if FLAGS.contains(&n) => i += if a.contains('=') { 1 } else { 2 },
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    let tenant = pick(args, "tenant", env, &["PG_TODOS_TENANT"])?
        .ok_or("no tenant: pass --tenant <id> or set PG_TODOS_TENANT")?;
    let dialects = match pick(args, "tools", env, &["PG_TODOS_TOOLS"])?.as_deref() {
        None | Some("all") => None,
        Some(list) => {
            let mut set = BTreeSet::new();
            for d in list.split(',').map(str::trim) {
                let Some(name) = dialects::canonical(d) else {
                    let names: Vec<&str> = dialects::DIALECTS.iter().map(|(n, _, _)| *n).collect();
                    return Err(format!("--tools: unknown dialect {d:?}; use all or a list of {}", names.join(", ")));
                };
                set.insert(name.to_string());
            }
            Some(set)
        }
    };
    Ok(Config {
        tenant,
        conversation: pick(args, "conversation", env, &["PG_TODOS_CONVERSATION"])?,
        agent: pick(args, "agent", env, &["PG_TODOS_AGENT"])?,
        turn: pick(args, "turn", env, &["PG_TODOS_TURN"])?,
        dialects,
        connection: pick(args, "database-url", env, &["PG_TODOS_DATABASE_URL", "DATABASE_URL"])?.unwrap_or_else(|| libpq_env(env)),
    })
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

    #[test]
    fn flags_win_over_the_environment() {
        let env = env_of(&[("PG_TODOS_TENANT", "env-tenant"), ("PG_TODOS_AGENT", "env-agent"), ("PGHOST", "/tmp/sock"), ("PGDATABASE", "db")]);
        let c = parse(&args(&["--tenant", "acme", "--conversation=conv-1"]), &env).unwrap();
        assert_eq!(c.tenant, "acme");
        assert_eq!(c.conversation.as_deref(), Some("conv-1"));
        assert_eq!(c.agent.as_deref(), Some("env-agent"));
        assert_eq!(c.dialects, None);
        assert_eq!(c.connection, "host='/tmp/sock' dbname='db' application_name='pg_todos_mcp'");
    }

    #[test]
    fn a_url_replaces_libpq_variables() {
        let env = env_of(&[("DATABASE_URL", "postgres://u@h/d"), ("PGHOST", "ignored")]);
        assert_eq!(parse(&args(&["--tenant", "t"]), &env).unwrap().connection, "postgres://u@h/d");
        let c = parse(&args(&["--tenant", "t", "--database-url", "host=x"]), &env).unwrap();
        assert_eq!(c.connection, "host=x");
    }

    #[test]
    fn dialects() {
        let env = env_of(&[]);
        let c = parse(&args(&["--tenant", "t", "--tools", "todolist, coord"]), &env).unwrap();
        assert_eq!(c.dialects, Some(["todolist".to_string(), "coord".to_string()].into()));
        // the seed numbers of earlier releases still work, as aliases
        let c = parse(&args(&["--tenant", "t", "--tools", "003,001"]), &env).unwrap();
        assert_eq!(c.dialects, Some(["todolist".to_string(), "plan".to_string()].into()));
        assert_eq!(parse(&args(&["--tenant", "t", "--tools", "all"]), &env).unwrap().dialects, None);
        let e = parse(&args(&["--tenant", "t", "--tools", "005"]), &env).unwrap_err();
        assert!(e.contains("unknown dialect \"005\""), "{e}");
    }

    #[test]
    fn errors_say_what_to_fix() {
        let env = env_of(&[]);
        assert_eq!(parse(&args(&[]), &env).unwrap_err(), "no tenant: pass --tenant <id> or set PG_TODOS_TENANT");
        assert_eq!(parse(&args(&["--tenant"]), &env).unwrap_err(), "--tenant needs a value");
        assert_eq!(parse(&args(&["--tennant", "x"]), &env).unwrap_err(), "unknown argument \"--tennant\"");
        let env = env_of(&[("PGPASSWORD", "it's"), ("USER", "me")]);
        assert_eq!(
            parse(&args(&["--tenant", "t"]), &env).unwrap().connection,
            "host='/var/run/postgresql' user='me' password='it\\'s' application_name='pg_todos_mcp'"
        );
    }
}
