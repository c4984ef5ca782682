//! The server's configuration: where the database is, who the calls act for, which list they
//! work on, which tool dialects to expose. From command-line flags, then `PG_TODOS_*`
//! variables, then Claude Code's `CLAUDE_CODE_TASK_LIST_ID` (the list only), then libpq's
//! (`PGHOST`, `PGPORT`, `PGDATABASE`, `PGUSER`, `PGPASSWORD`, `PGAPPNAME`). Pure: no I/O
//! beyond what the caller hands in (the environment and the working directory), unit-tested.
//!
//! The list (the conversation of `todo.set_context`) is, first match wins:
//! 1. `--conversation <id>` (or `--session-list`: one new list per server process);
//! 2. `PG_TODOS_CONVERSATION` (or `PG_TODOS_SESSION_LIST=1`);
//! 3. `CLAUDE_CODE_TASK_LIST_ID`, Claude Code's name for a shared task list;
//! 4. the project: `project:` and the canonical absolute path of the directory the server is
//!    started in (e.g. `project:/home/me/app`), so a restarted session, or a second agent
//!    started in the same directory, finds the same list, and another directory has its own.
//!
//! Setting both a conversation and the session list at one level (two flags, or two
//! `PG_TODOS_*` variables) is an error. Lists belong to a tenant: two tenants never share one,
//! whatever its name.

use std::collections::BTreeSet;
use std::path::Path;

pub const USAGE: &str = "\
usage: pg_todos mcp --tenant <id> [--conversation <id> | --session-list] [--agent <id>]
                    [--turn <id>] [--tools <dialects>] [--database-url <postgres://…>]

Speaks MCP over stdio; every tool call runs todo.call_mcp(name, args) in its own transaction
with the context (tenant, conversation, agent, turn) of this server, never of the arguments.

  --tenant        tenant the calls act for (env PG_TODOS_TENANT; required)
  --conversation  the list the tools work on (env PG_TODOS_CONVERSATION, then
                  CLAUDE_CODE_TASK_LIST_ID); default: the project's list, named from the
                  directory the server is started in: project:<canonical absolute path>,
                  e.g. project:/home/me/app, which survives restarts and is shared by every
                  server of the tenant started there
  --session-list  a new, empty list for this server process instead (as mcp-<pid>-<time>;
                  env PG_TODOS_SESSION_LIST=1)
  --agent         agent recorded on rows and claims (env PG_TODOS_AGENT; default: the MCP
                  client's name and the session's id, e.g. claude-code@mcp-4242-18a…)
  --turn          turn, scoping the plan dialect's tools (env PG_TODOS_TURN; default: one new
                  id per server process)
  --tools         all (default), or a comma-separated list of plan, opencode, todolist,
                  tasks, coord, claude-tasks, claude-todowrite, codex, gemini, cursor, roo
                  (the seed numbers 001-004 are accepted as aliases) (env PG_TODOS_TOOLS)
  --database-url  a libpq URL or key=value string (env PG_TODOS_DATABASE_URL or
                  DATABASE_URL); otherwise PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD";

use pg_todos_core::dialects;

/// The prefix of a project's list: `project:` and the directory's canonical absolute path.
pub const PROJECT_PREFIX: &str = "project:";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub tenant: String,
    /// The list the calls work on; None: one new list per server process (`--session-list`).
    pub conversation: Option<String>,
    pub agent: Option<String>,
    pub turn: Option<String>,
    /// None: every dialect
    pub dialects: Option<BTreeSet<String>>,
    /// a libpq connection string (URL or key=value)
    pub connection: String,
}

/// Flags that take a value.
const VALUED: [&str; 6] = ["tenant", "conversation", "agent", "turn", "tools", "database-url"];
/// Flags that take none.
const SWITCHES: [&str; 1] = ["session-list"];

/// `--name value` or `--name=value`, else the first of `env` that is set and not empty.
fn pick(
    args: &[String],
    flag: &str,
    env: &dyn Fn(&str) -> Option<String>,
    vars: &[&str],
) -> Result<Option<String>, String> {
    let long = format!("--{flag}");
    let mut found = None;
    let mut i = 0;
    while i < args.len() {
        if args[i] == long {
            found = Some(args.get(i + 1).cloned().ok_or_else(|| format!("{long} needs a value"))?);
            i += 1;
        } else if let Some(v) = args[i].strip_prefix(&format!("{long}=")) {
            found = Some(v.to_string());
        } else if args[i].strip_prefix("--").is_some_and(|n| VALUED.contains(&n)) {
            i += 1; // another flag's value is not a flag
        }
        i += 1;
    }
    Ok(found.or_else(|| vars.iter().find_map(|v| env(v).filter(|s| !s.trim().is_empty()))))
}

/// Whether a switch (a flag without a value) is among the flags, skipping flags' values.
fn switch(args: &[String], flag: &str) -> bool {
    let long = format!("--{flag}");
    let mut i = 0;
    while i < args.len() {
        if args[i] == long {
            return true;
        }
        let valued = args[i].strip_prefix("--").is_some_and(|n| VALUED.contains(&n));
        i += if valued { 2 } else { 1 };
    }
    false
}

/// A yes/no variable: unset or empty is no.
fn env_bool(env: &dyn Fn(&str) -> Option<String>, var: &str) -> Result<bool, String> {
    match env(var).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("" | "0" | "false" | "no" | "off") => Ok(false),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some(other) => Err(format!("{var}={other:?}: use 1 or 0")),
    }
}

/// The list, by the order in the module's docs. `cwd` is the canonical absolute working
/// directory, or why it could not be had; only the project default needs it.
fn conversation(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: Result<&Path, &str>,
) -> Result<Option<String>, String> {
    let named = |c: String| match c.trim().is_empty() {
        true => Err("--conversation needs a value (or --session-list for a new list per session)".to_string()),
        false => Ok(Some(c)),
    };
    // the flags
    let flag = pick(args, "conversation", env, &[])?;
    match (flag, switch(args, "session-list")) {
        (Some(_), true) => return Err("--conversation and --session-list: pass one or the other".into()),
        (Some(c), false) => return named(c),
        (None, true) => return Ok(None),
        (None, false) => {}
    }
    // pg_todos' own variables
    let var = env("PG_TODOS_CONVERSATION").filter(|s| !s.trim().is_empty());
    match (var, env_bool(env, "PG_TODOS_SESSION_LIST")?) {
        (Some(_), true) => return Err("PG_TODOS_CONVERSATION and PG_TODOS_SESSION_LIST=1: set one or the other".into()),
        (Some(c), false) => return Ok(Some(c)),
        (None, true) => return Ok(None),
        (None, false) => {}
    }
    // Claude Code's name for a shared task list
    if let Some(c) = env("CLAUDE_CODE_TASK_LIST_ID").filter(|s| !s.trim().is_empty()) {
        return Ok(Some(c));
    }
    // the project
    let dir = cwd.map_err(|why| {
        format!("no list: the working directory is unknown ({why}); pass --conversation <id> or --session-list")
    })?;
    let path = dir.to_str().ok_or_else(|| {
        format!("no list: the working directory {dir:?} is not UTF-8; pass --conversation <id> or --session-list")
    })?;
    if !dir.is_absolute() {
        return Err(format!(
            "no list: the working directory {path:?} is not an absolute path; pass --conversation <id>"
        ));
    }
    Ok(Some(format!("{PROJECT_PREFIX}{path}")))
}

/// The dialects of a `--tools` value: None for `all`, else the set named (aliases made
/// canonical). Errors: an unknown name, and the names there are.
pub fn dialects(list: &str) -> Result<Option<BTreeSet<String>>, String> {
    if list.trim() == "all" {
        return Ok(None);
    }
    let mut set = BTreeSet::new();
    for d in list.split(',').map(str::trim) {
        let Some(name) = dialects::canonical(d) else {
            let names: Vec<&str> = dialects::DIALECTS.iter().map(|(n, _, _)| *n).collect();
            return Err(format!("unknown dialect {d:?}; use all or a list of {}", names.join(", ")));
        };
        set.insert(name.to_string());
    }
    Ok(Some(set))
}

/// The configuration from the arguments (without the program's name), the environment and
/// the canonical absolute working directory (or why there is none).
pub fn parse(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: Result<&Path, &str>,
) -> Result<Config, String> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let name = a.strip_prefix("--").map(|n| n.split('=').next().unwrap_or(n));
        match name {
            Some(n) if SWITCHES.contains(&n) && a.contains('=') => return Err(format!("--{n} takes no value")),
            Some(n) if SWITCHES.contains(&n) => i += 1,
            Some(n) if VALUED.contains(&n) => i += if a.contains('=') { 1 } else { 2 },
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    let tenant = pick(args, "tenant", env, &["PG_TODOS_TENANT"])?
        .ok_or("no tenant: pass --tenant <id> or set PG_TODOS_TENANT")?;
    let dialects = match pick(args, "tools", env, &["PG_TODOS_TOOLS"])? {
        None => None,
        Some(list) => self::dialects(&list).map_err(|e| format!("--tools: {e}"))?,
    };
    Ok(Config {
        tenant,
        conversation: conversation(args, env, cwd)?,
        agent: pick(args, "agent", env, &["PG_TODOS_AGENT"])?,
        turn: pick(args, "turn", env, &["PG_TODOS_TURN"])?,
        dialects,
        connection: pick(args, "database-url", env, &["PG_TODOS_DATABASE_URL", "DATABASE_URL"])?
            .unwrap_or_else(|| crate::db::libpq_env(env, "pg_todos_mcp")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// the working directory the tests start in
    fn app() -> Result<&'static Path, &'static str> {
        Ok(Path::new("/home/me/app"))
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn flags_win_over_the_environment() {
        let env = env_of(&[
            ("PG_TODOS_TENANT", "env-tenant"),
            ("PG_TODOS_AGENT", "env-agent"),
            ("PGHOST", "/tmp/sock"),
            ("PGDATABASE", "db"),
        ]);
        let c = parse(&args(&["--tenant", "acme", "--conversation=conv-1"]), &env, app()).unwrap();
        assert_eq!(c.tenant, "acme");
        assert_eq!(c.conversation.as_deref(), Some("conv-1"));
        assert_eq!(c.agent.as_deref(), Some("env-agent"));
        assert_eq!(c.dialects, None);
        assert_eq!(c.connection, "host='/tmp/sock' dbname='db' application_name='pg_todos_mcp'");
    }

    #[test]
    fn the_list_is_the_projects_by_default() {
        let env = env_of(&[]);
        let c = parse(&args(&["--tenant", "t"]), &env, app()).unwrap();
        assert_eq!(c.conversation.as_deref(), Some("project:/home/me/app"));
        let other = parse(&args(&["--tenant", "t"]), &env, Ok(Path::new("/home/me/lib"))).unwrap();
        assert_eq!(other.conversation.as_deref(), Some("project:/home/me/lib"), "another directory, another list");
        // the turn stays the session's
        assert_eq!(c.turn, None);
    }

    #[test]
    fn the_project_needs_a_usable_working_directory() {
        let env = env_of(&[]);
        let e = parse(&args(&["--tenant", "t"]), &env, Err("No such file or directory")).unwrap_err();
        assert_eq!(
            e,
            "no list: the working directory is unknown (No such file or directory); pass --conversation <id> or --session-list"
        );
        let e = parse(&args(&["--tenant", "t"]), &env, Ok(Path::new("app"))).unwrap_err();
        assert!(e.contains("not an absolute path"), "{e}");
        // a named list or the session's does without it
        let c = parse(&args(&["--tenant", "t", "--conversation", "c"]), &env, Err("gone")).unwrap();
        assert_eq!(c.conversation.as_deref(), Some("c"));
        let c = parse(&args(&["--tenant", "t", "--session-list"]), &env, Err("gone")).unwrap();
        assert_eq!(c.conversation, None);
    }

    #[test]
    fn the_list_by_flag_then_our_variables_then_claude_codes() {
        let claude = env_of(&[("CLAUDE_CODE_TASK_LIST_ID", "team-list")]);
        let c = parse(&args(&["--tenant", "t"]), &claude, app()).unwrap();
        assert_eq!(c.conversation.as_deref(), Some("team-list"));

        let ours = env_of(&[("CLAUDE_CODE_TASK_LIST_ID", "team-list"), ("PG_TODOS_CONVERSATION", "ours")]);
        assert_eq!(parse(&args(&["--tenant", "t"]), &ours, app()).unwrap().conversation.as_deref(), Some("ours"));
        let c = parse(&args(&["--tenant", "t", "--conversation", "flag"]), &ours, app()).unwrap();
        assert_eq!(c.conversation.as_deref(), Some("flag"));
        // the flag for a session's list wins over every variable
        assert_eq!(parse(&args(&["--tenant", "t", "--session-list"]), &ours, app()).unwrap().conversation, None);

        let session = env_of(&[("CLAUDE_CODE_TASK_LIST_ID", "team-list"), ("PG_TODOS_SESSION_LIST", "1")]);
        assert_eq!(parse(&args(&["--tenant", "t"]), &session, app()).unwrap().conversation, None);
        let c = parse(&args(&["--tenant", "t", "--conversation", "flag"]), &session, app()).unwrap();
        assert_eq!(c.conversation.as_deref(), Some("flag"));

        let off = env_of(&[("PG_TODOS_SESSION_LIST", "0"), ("CLAUDE_CODE_TASK_LIST_ID", " ")]);
        let c = parse(&args(&["--tenant", "t"]), &off, app()).unwrap();
        assert_eq!(c.conversation.as_deref(), Some("project:/home/me/app"), "0 is off; a blank list name is no name");
    }

    #[test]
    fn the_session_list_is_a_switch() {
        let env = env_of(&[]);
        // a switch between flags takes no value from the flag after it
        let c = parse(&args(&["--session-list", "--tenant", "t", "--tools", "codex"]), &env, app()).unwrap();
        assert_eq!((c.tenant.as_str(), c.conversation), ("t", None));
        assert_eq!(c.dialects, Some(["codex".to_string()].into()));
        // a flag's value that reads like the switch is a value, not the switch
        let c = parse(&args(&["--tenant", "t", "--agent", "--session-list"]), &env, app()).unwrap();
        assert_eq!(
            (c.agent.as_deref(), c.conversation.as_deref()),
            (Some("--session-list"), Some("project:/home/me/app"))
        );
        assert_eq!(
            parse(&args(&["--tenant", "t", "--session-list=1"]), &env, app()).unwrap_err(),
            "--session-list takes no value"
        );
        assert_eq!(
            parse(&args(&["--tenant", "t", "--session-list", "--conversation", "c"]), &env, app()).unwrap_err(),
            "--conversation and --session-list: pass one or the other"
        );
        let both = env_of(&[("PG_TODOS_SESSION_LIST", "yes"), ("PG_TODOS_CONVERSATION", "c")]);
        assert_eq!(
            parse(&args(&["--tenant", "t"]), &both, app()).unwrap_err(),
            "PG_TODOS_CONVERSATION and PG_TODOS_SESSION_LIST=1: set one or the other"
        );
        let odd = env_of(&[("PG_TODOS_SESSION_LIST", "maybe")]);
        assert_eq!(
            parse(&args(&["--tenant", "t"]), &odd, app()).unwrap_err(),
            "PG_TODOS_SESSION_LIST=\"maybe\": use 1 or 0"
        );
        assert_eq!(
            parse(&args(&["--tenant", "t", "--conversation="]), &env, app()).unwrap_err(),
            "--conversation needs a value (or --session-list for a new list per session)"
        );
    }

    #[test]
    fn a_url_replaces_libpq_variables() {
        let env = env_of(&[("DATABASE_URL", "postgres://u@h/d"), ("PGHOST", "ignored")]);
        assert_eq!(parse(&args(&["--tenant", "t"]), &env, app()).unwrap().connection, "postgres://u@h/d");
        let c = parse(&args(&["--tenant", "t", "--database-url", "host=x"]), &env, app()).unwrap();
        assert_eq!(c.connection, "host=x");
    }

    #[test]
    fn dialects() {
        let env = env_of(&[]);
        let c = parse(&args(&["--tenant", "t", "--tools", "todolist, coord"]), &env, app()).unwrap();
        assert_eq!(c.dialects, Some(["todolist".to_string(), "coord".to_string()].into()));
        // the seed numbers of earlier releases still work, as aliases
        let c = parse(&args(&["--tenant", "t", "--tools", "003,001"]), &env, app()).unwrap();
        assert_eq!(c.dialects, Some(["todolist".to_string(), "plan".to_string()].into()));
        // the runtimes' dialects
        let c = parse(
            &args(&["--tenant", "t", "--tools", "claude-tasks,claude-todowrite,codex,gemini,cursor,roo"]),
            &env,
            app(),
        )
        .unwrap();
        let want = ["claude-tasks", "claude-todowrite", "codex", "gemini", "cursor", "roo"].map(String::from);
        assert_eq!(c.dialects, Some(want.into()));
        assert_eq!(parse(&args(&["--tenant", "t", "--tools", "all"]), &env, app()).unwrap().dialects, None);
        let e = parse(&args(&["--tenant", "t", "--tools", "005"]), &env, app()).unwrap_err();
        assert!(e.contains("unknown dialect \"005\""), "{e}");
    }

    #[test]
    fn errors_say_what_to_fix() {
        let env = env_of(&[]);
        assert_eq!(parse(&args(&[]), &env, app()).unwrap_err(), "no tenant: pass --tenant <id> or set PG_TODOS_TENANT");
        assert_eq!(parse(&args(&["--tenant"]), &env, app()).unwrap_err(), "--tenant needs a value");
        assert_eq!(parse(&args(&["--tennant", "x"]), &env, app()).unwrap_err(), "unknown argument \"--tennant\"");
        let env = env_of(&[("PGPASSWORD", "it's"), ("USER", "me")]);
        assert_eq!(
            parse(&args(&["--tenant", "t"]), &env, app()).unwrap().connection,
            "host='/var/run/postgresql' user='me' password='it\\'s' application_name='pg_todos_mcp'"
        );
    }
}
