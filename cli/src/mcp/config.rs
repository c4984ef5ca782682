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

/// The flags, as clap reads them (values checked, and given their variables and defaults,
/// by `parse`, which reads the environment through the caller, so that it is unit-tested).
#[derive(clap::Parser, Debug)]
#[command(
    name = "pg_todos mcp",
    version,
    about = "An MCP server over stdio whose tools are the pg_todos catalog",
    long_about = "An MCP server over stdio whose tools are the pg_todos catalog. Every tool call runs \
todo.call_mcp(name, args) in its own transaction with the context (tenant, conversation, agent, turn) \
of this server, never of the arguments.",
    args_override_self = true,
    max_term_width = 100
)]
struct Flags {
    /// Tenant the calls act for [env: PG_TODOS_TENANT] (required)
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// The list the tools work on [env: PG_TODOS_CONVERSATION, then CLAUDE_CODE_TASK_LIST_ID];
    /// default: the project's list, named from the directory the server is started in:
    /// project:<canonical absolute path>, e.g. project:/home/me/app, which survives restarts and
    /// is shared by every server of the tenant started there
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// A new, empty list for this server process instead (as mcp-<pid>-<time>)
    /// [env: PG_TODOS_SESSION_LIST=1]
    #[arg(long)]
    session_list: bool,
    /// Agent recorded on rows and claims [env: PG_TODOS_AGENT]; default: the MCP client's name
    /// and the session's id, e.g. claude-code@mcp-4242-18a…
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
    /// Turn, scoping the plan dialect's tools [env: PG_TODOS_TURN]; default: one new id per
    /// server process
    #[arg(long, value_name = "ID")]
    turn: Option<String>,
    /// all (default), or a comma-separated list of dialects, by name (the seed numbers
    /// 001-004 too): `SELECT name FROM todo.dialects()` lists them, and the server checks
    /// the names against it when it starts. A name several dialects share is offered once,
    /// as the first of them in that order has it: name one runtime to get its own
    /// [env: PG_TODOS_TOOLS]
    #[arg(long, value_name = "DIALECTS")]
    tools: Option<String>,
    /// A libpq URL or key=value string [env: PG_TODOS_DATABASE_URL or DATABASE_URL]; otherwise
    /// PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

/// What the command line asks for: run with a configuration, or print a text (the help or
/// the version) and exit 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Serve(Box<Config>),
    Print(String),
}

/// The usage line and where to read more, for an error of the flags' values.
pub fn usage() -> String {
    use clap::CommandFactory;
    format!("{}\n\nFor more information, try '--help'.", Flags::command().render_usage())
}

/// The flags read by clap, or what to print, or clap's error with the usage line.
fn read(args: &[String]) -> Result<Result<Flags, String>, String> {
    use clap::{CommandFactory, Parser};
    match Flags::try_parse_from(std::iter::once("pg_todos mcp".to_string()).chain(args.iter().cloned())) {
        Ok(f) => Ok(Ok(f)),
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => {
            Ok(Err(e.to_string()))
        }
        Err(e) => {
            let mut message = e.render().to_string().trim_end().trim_start_matches("error: ").to_string();
            if !message.contains("Usage:") {
                let line = Flags::command().render_usage().to_string();
                message =
                    message.replacen("\n\nFor more information", &format!("\n\n{line}\n\nFor more information"), 1);
            }
            Err(message)
        }
    }
}

/// The prefix of a project's list: `project:` and the directory's canonical absolute path.
pub const PROJECT_PREFIX: &str = "project:";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub tenant: String,
    /// The list the calls work on; None: one new list per server process (`--session-list`).
    pub conversation: Option<String>,
    /// whether the list was named (`--conversation`, `--session-list`, their variables,
    /// `CLAUDE_CODE_TASK_LIST_ID`) rather than the project's by default: the connection is then
    /// bound to it, and a tool's own project argument (Task Master's `projectRoot`, beads'
    /// `workspace_root`) does not move the work to another list (`todo.list_bound`)
    pub bound: bool,
    pub agent: Option<String>,
    pub turn: Option<String>,
    /// None: every dialect
    pub dialects: Option<BTreeSet<String>>,
    /// a libpq connection string (URL or key=value)
    pub connection: String,
}

/// The flag's value, else the first of `vars` that is set and not blank.
fn pick(given: &Option<String>, env: &dyn Fn(&str) -> Option<String>, vars: &[&str]) -> Option<String> {
    given.clone().or_else(|| vars.iter().find_map(|v| env(v).filter(|s| !s.trim().is_empty())))
}

/// A yes/no variable: unset or empty is no.
fn env_bool(env: &dyn Fn(&str) -> Option<String>, var: &str) -> Result<bool, String> {
    match env(var).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("" | "0" | "false" | "no" | "off") => Ok(false),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some(other) => Err(format!("{var}={other:?}: use 1 or 0")),
    }
}

/// The list, by the order in the module's docs, and whether it was named (1 to 3: the
/// connection is bound to it, `Config::bound`). `cwd` is the canonical absolute working
/// directory, or why it could not be had; only the project default needs it.
fn conversation(
    flags: &Flags,
    env: &dyn Fn(&str) -> Option<String>,
    cwd: Result<&Path, &str>,
) -> Result<(Option<String>, bool), String> {
    let named = |c: String| match c.trim().is_empty() {
        true => Err("--conversation needs a value (or --session-list for a new list per session)".to_string()),
        false => Ok((Some(c), true)),
    };
    // the flags
    match (flags.conversation.clone(), flags.session_list) {
        (Some(_), true) => return Err("--conversation and --session-list: pass one or the other".into()),
        (Some(c), false) => return named(c),
        (None, true) => return Ok((None, true)),
        (None, false) => {}
    }
    // pg_todos' own variables
    let var = env("PG_TODOS_CONVERSATION").filter(|s| !s.trim().is_empty());
    match (var, env_bool(env, "PG_TODOS_SESSION_LIST")?) {
        (Some(_), true) => return Err("PG_TODOS_CONVERSATION and PG_TODOS_SESSION_LIST=1: set one or the other".into()),
        (Some(c), false) => return Ok((Some(c), true)),
        (None, true) => return Ok((None, true)),
        (None, false) => {}
    }
    // Claude Code's name for a shared task list
    if let Some(c) = env("CLAUDE_CODE_TASK_LIST_ID").filter(|s| !s.trim().is_empty()) {
        return Ok((Some(c), true));
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
    Ok((Some(format!("{PROJECT_PREFIX}{path}")), false))
}

/// The dialects a `--tools` value names: None for `all`, else the names, as given (checked
/// against the database's, `resolve`, when the server starts). Errors: an empty name.
pub fn dialects(list: &str) -> Result<Option<BTreeSet<String>>, String> {
    if list.trim() == "all" {
        return Ok(None);
    }
    let mut set = BTreeSet::new();
    for d in list.split(',').map(str::trim) {
        if d.is_empty() {
            return Err(format!("an empty dialect name in {list:?}; use all or a comma-separated list of dialects"));
        }
        set.insert(d.to_string());
    }
    Ok(Some(set))
}

/// The query that reads the dialects there are, as `resolve` takes them: one JSON array of
/// `{"name", "aliases"}`, in catalog order.
pub const KNOWN_DIALECTS: &str =
    "SELECT coalesce(jsonb_agg(jsonb_build_object('name', name, 'aliases', aliases)), '[]') \
     FROM todo.dialects()";

/// The dialects' names for `names` (each a name or an alias of one in `known`, as
/// `KNOWN_DIALECTS` reads them). Errors: a name none has, with the names there are.
pub fn resolve(names: &BTreeSet<String>, known: &serde_json::Value) -> Result<BTreeSet<String>, String> {
    let known = known.as_array().map(Vec::as_slice).unwrap_or_default();
    let means = |wanted: &str| {
        known.iter().find_map(|d| {
            let name = d["name"].as_str()?;
            let alias = d["aliases"].as_array().is_some_and(|a| a.iter().any(|a| a == wanted));
            (name == wanted || alias).then(|| name.to_string())
        })
    };
    names
        .iter()
        .map(|wanted| {
            means(wanted).ok_or_else(|| {
                let there: Vec<&str> = known.iter().filter_map(|d| d["name"].as_str()).collect();
                format!("unknown dialect {wanted:?}; use all or a list of {}", there.join(", "))
            })
        })
        .collect()
}

/// The configuration from the arguments (without the program's name), the environment and
/// the canonical absolute working directory (or why there is none).
pub fn parse(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    cwd: Result<&Path, &str>,
) -> Result<Command, String> {
    let flags = match read(args)? {
        Ok(flags) => flags,
        Err(text) => return Ok(Command::Print(text)),
    };
    let tenant =
        pick(&flags.tenant, env, &["PG_TODOS_TENANT"]).ok_or("no tenant: pass --tenant <id> or set PG_TODOS_TENANT")?;
    let dialects = match pick(&flags.tools, env, &["PG_TODOS_TOOLS"]) {
        None => None,
        Some(list) => self::dialects(&list).map_err(|e| format!("--tools: {e}"))?,
    };
    let (conversation, bound) = conversation(&flags, env, cwd)?;
    Ok(Command::Serve(Box::new(Config {
        tenant,
        conversation,
        bound,
        agent: pick(&flags.agent, env, &["PG_TODOS_AGENT"]),
        turn: pick(&flags.turn, env, &["PG_TODOS_TURN"]),
        dialects,
        connection: pick(&flags.database_url, env, &["PG_TODOS_DATABASE_URL", "DATABASE_URL"])
            .unwrap_or_else(|| crate::db::libpq_env(env, "pg_todos_mcp")),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `super::parse`'s configuration; a text to print is an error here.
    fn parse(a: &[String], env: &dyn Fn(&str) -> Option<String>, cwd: Result<&Path, &str>) -> Result<Config, String> {
        match super::parse(a, env, cwd)? {
            Command::Serve(c) => Ok(*c),
            Command::Print(text) => Err(format!("printed: {text}")),
        }
    }

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
    fn a_named_list_binds_the_connection_and_the_projects_default_does_not() {
        let bound = |argv: &[&str], vars: &'static [(&'static str, &'static str)]| {
            let c = parse(&args(argv), &env_of(vars), app()).unwrap();
            (c.conversation, c.bound)
        };
        assert_eq!(bound(&["--tenant", "t"], &[]), (Some("project:/home/me/app".into()), false));
        assert_eq!(bound(&["--tenant", "t", "--conversation", "dropin"], &[]), (Some("dropin".into()), true));
        assert_eq!(bound(&["--tenant", "t", "--session-list"], &[]), (None, true));
        assert_eq!(bound(&["--tenant", "t"], &[("PG_TODOS_CONVERSATION", "team")]), (Some("team".into()), true));
        assert_eq!(bound(&["--tenant", "t"], &[("PG_TODOS_SESSION_LIST", "1")]), (None, true));
        assert_eq!(bound(&["--tenant", "t"], &[("CLAUDE_CODE_TASK_LIST_ID", "cc")]), (Some("cc".into()), true));
        // named as the project's own list is still named
        let project = &["--tenant", "t", "--conversation", "project:/home/me/app"];
        assert_eq!(bound(project, &[]), (Some("project:/home/me/app".into()), true));
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
        // a value that reads like a flag must be given with =
        let c = parse(&args(&["--tenant", "t", "--agent=--session-list"]), &env, app()).unwrap();
        assert_eq!(
            (c.agent.as_deref(), c.conversation.as_deref()),
            (Some("--session-list"), Some("project:/home/me/app"))
        );
        let e = parse(&args(&["--tenant", "t", "--session-list=1"]), &env, app()).unwrap_err();
        assert!(e.starts_with("unexpected value '1' for '--session-list' found; no more were expected"), "{e}");
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
        assert_eq!(parse(&args(&["--tenant", "t", "--tools", "all"]), &env, app()).unwrap().dialects, None);
        let e = parse(&args(&["--tenant", "t", "--tools", "codex,,zed"]), &env, app()).unwrap_err();
        assert!(e.contains("an empty dialect name"), "{e}");
        // checked against the database's list: names and the seed numbers of earlier releases
        let known = serde_json::json!([
            {"name": "plan", "aliases": ["001"]},
            {"name": "todolist", "aliases": ["003"]},
            {"name": "codex", "aliases": []}
        ]);
        let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<String>>();
        assert_eq!(resolve(&set(&["003", "001", "codex"]), &known), Ok(set(&["todolist", "plan", "codex"])));
        let e = resolve(&set(&["codex", "005"]), &known).unwrap_err();
        assert_eq!(e, "unknown dialect \"005\"; use all or a list of plan, todolist, codex");
    }

    #[test]
    fn errors_say_what_to_fix() {
        let env = env_of(&[]);
        assert_eq!(parse(&args(&[]), &env, app()).unwrap_err(), "no tenant: pass --tenant <id> or set PG_TODOS_TENANT");
        let e = parse(&args(&["--tenant"]), &env, app()).unwrap_err();
        assert!(e.starts_with("a value is required for '--tenant <ID>' but none was supplied"), "{e}");
        assert!(e.contains("Usage: pg_todos mcp [OPTIONS]"), "{e}");
        let e = parse(&args(&["--tennant", "x"]), &env, app()).unwrap_err();
        assert!(
            e.starts_with("unexpected argument '--tennant' found")
                && e.contains("tip: a similar argument exists: '--tenant'"),
            "{e}"
        );
        // help and version
        let print = |a: &[&str]| match super::parse(&args(a), &env, app()).unwrap() {
            Command::Print(text) => text,
            other => panic!("{other:?}"),
        };
        assert!(print(&["--help"]).contains("--session-list"));
        assert_eq!(print(&["--version"]).trim(), format!("pg_todos mcp {}", env!("CARGO_PKG_VERSION")));
        let env = env_of(&[("PGPASSWORD", "it's"), ("USER", "me")]);
        assert_eq!(
            parse(&args(&["--tenant", "t"]), &env, app()).unwrap().connection,
            "host='/var/run/postgresql' user='me' password='it\\'s' application_name='pg_todos_mcp'"
        );
    }
}
