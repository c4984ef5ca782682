//! `pg_todos writ [TEXT]...`: the `/todo` writ from a shell, for an agent that has a shell and
//! no MCP. The message (the arguments, else standard input) goes to `todo.todo_writ` in one
//! transaction after `todo.set_context(tenant, list, agent)`, and its framed answer
//! (`[/todo <verb> <args>]` … `[END TODO]`) is printed as the extension returns it.
//!
//! - The message: the arguments, joined with spaces, except that an argument that is a command
//!   line of its own (one that starts with `/todo` followed by a space or a tab, or is exactly
//!   `/todo` or `/endtodo`) starts a new line: `pg_todos writ /todo add Fix the parser` and
//!   `pg_todos writ "/todo add a" "/todo done 1"` both mean what they look like. No argument,
//!   or the one argument `-`: standard input (a heredoc of several lines), read up to the
//!   database's `todo.max_message_size` (one byte more is refused before anything runs).
//! - The list is `--list`, else `PG_TODOS_CONVERSATION`, else the project's list of the
//!   working directory (`project:<canonical path>`, the list `pg_todos mcp` started there
//!   works on); the agent `--agent`, else `PG_TODOS_AGENT`, else `shell:<user>@<host>`, the
//!   same from one call to the next, so that a todo claimed by one call is finished by the next.
//! - Exit status: 0 when every command ran (also when the message has no `/todo` line: nothing
//!   is printed, a hint goes to standard error); 1 when a block of the answer says `ERR:`
//!   (the other commands still ran: the writ runs each command on its own); 2 for a usage,
//!   configuration or database error, with a message on standard error naming what to fix.
//! - Like a call of `pg_todos mcp`, the transaction has a lock timeout (10 s) and a statement
//!   timeout (30 s); a serialization failure or a deadlock runs it again (up to 5 times).

use std::io::{IsTerminal, Read, Write};

use crate::command::{db_message, env, flags, list_of, tenant_of};
use pg_todos_core::error::worth_retrying;
use pg_todos_core::limits::Setting;

#[derive(clap::Parser, Debug)]
#[command(
    name = "pg_todos writ",
    version,
    about = "Run /todo lines on a list and print the framed answer",
    long_about = "Run /todo lines on a list (todo.todo_writ) and print the framed answer as the extension \
returns it. Exit status: 0 when every command ran, 1 when a block says ERR:, 2 for a usage, configuration \
or database error.",
    after_help = "Examples:\n  pg_todos writ '/todo add Fix the parser'\n  pg_todos writ /todo list\n  \
pg_todos writ <<'EOF'\n  /todo add Write the release notes\n  /todo done 3\n  /todo list\n  EOF\n\n\
pg_todos writ '/todo help' lists the verbs (docs/writ.md).",
    max_term_width = 100
)]
struct WritFlags {
    /// The /todo lines. Arguments are joined with spaces; one that starts with /todo (or is
    /// /endtodo) starts a new line. None, or -: standard input
    #[arg(value_name = "TEXT")]
    text: Vec<String>,
    /// Tenant [env: PG_TODOS_TENANT] (required)
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// The list [env: PG_TODOS_CONVERSATION]; default: the project's list, project:<working directory>
    #[arg(long, value_name = "ID")]
    list: Option<String>,
    /// Agent recorded on rows and claims [env: PG_TODOS_AGENT]; default: shell:<user>@<host>
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
    /// A libpq URL or key=value string [env: PG_TODOS_DATABASE_URL or DATABASE_URL]
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

/// Where the message comes from.
#[derive(Debug, PartialEq, Eq)]
enum Source {
    /// the arguments, as one message (`joined`)
    Args(String),
    /// standard input; `named`: asked for with `-` (else: no argument at all)
    Stdin { named: bool },
}

/// Where the message of these arguments comes from.
fn source(text: &[String]) -> Source {
    match text {
        [] => Source::Stdin { named: false },
        [one] if one == "-" => Source::Stdin { named: true },
        _ => Source::Args(joined(text)),
    }
}

/// Whether an argument is a command line of its own (the writ's grammar: `/todo` then a space
/// or a tab, or exactly `/todo`; or `/endtodo`).
fn starts_a_line(arg: &str) -> bool {
    arg == "/todo" || arg.starts_with("/todo ") || arg.starts_with("/todo\t") || arg == "/endtodo"
}

/// The arguments as one message: joined with spaces, each that `starts_a_line` after a line
/// break instead.
fn joined(args: &[String]) -> String {
    let mut out = String::new();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push(if starts_a_line(arg) { '\n' } else { ' ' });
        }
        out.push_str(arg);
    }
    out
}

/// The message on `input`, read up to `limit` bytes (`todo.max_message_size`). Errors, in
/// words: more than `limit` bytes (nothing more is read), not UTF-8, a NUL byte, a read error.
fn read_message(input: impl Read, limit: u64) -> Result<String, String> {
    let mut bytes = Vec::new();
    input.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| format!("standard input: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "standard input is over {limit} bytes, the limit of one message (todo.max_message_size): nothing ran; \
             send the /todo commands on their own, or in several calls"
        ));
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| format!("standard input is not UTF-8 (byte {}): nothing ran", e.utf8_error().valid_up_to()))?;
    if text.contains('\0') {
        return Err("standard input holds a NUL byte, which PostgreSQL stores in no text: nothing ran".into());
    }
    Ok(text)
}

/// Whether a block of the answer says `ERR:`: a line that starts with `ERR:` right after a
/// block's first line (`[/todo …]`). Stored text cannot forge either (the writ shows it folded
/// onto one line, after a marker of its own).
fn has_err(answer: &str) -> bool {
    answer
        .lines()
        .zip(answer.lines().skip(1))
        .any(|(head, first)| head.starts_with("[/todo") && first.starts_with("ERR:"))
}

/// The agent when none is named: `shell:<user>@<host>` (`USER`, else `LOGNAME`, else `shell`;
/// without `@<host>` when the host has no name).
fn default_agent(env: &dyn Fn(&str) -> Option<String>, host: Option<String>) -> String {
    let user = env("USER").or_else(|| env("LOGNAME")).unwrap_or_else(|| "shell".into());
    match host.map(|h| h.trim().to_string()).filter(|h| !h.is_empty()) {
        Some(host) => format!("shell:{user}@{host}"),
        None => format!("shell:{user}"),
    }
}

/// The machine's name (Linux's `/proc/sys/kernel/hostname`, else `HOSTNAME`).
fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname").ok().or_else(|| env("HOSTNAME"))
}

/// Who the writ acts for: `todo.set_context(tenant, list, agent)`.
struct Context {
    tenant: String,
    list: String,
    agent: String,
}

/// The context's statement, with the time limits of a call of `pg_todos mcp`.
const SETUP: &str = "SELECT set_config('lock_timeout', '10s', true), set_config('statement_timeout', '30s', true), \
                     todo.set_context($1, $2, $3)";

/// The database's `todo.max_message_size` for this context (its library loaded by
/// `todo.set_context`, which checks the tenant first), in a transaction rolled back: read
/// before standard input is, so that a configuration error is told at once.
async fn message_limit(client: &mut tokio_postgres::Client, cx: &Context) -> Result<u64, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    tx.execute(SETUP, &[&cx.tenant, &cx.list, &cx.agent]).await?;
    let row = tx.query_opt("SELECT setting::bigint FROM pg_settings WHERE name = 'todo.max_message_size'", &[]).await?;
    let limit = row.map_or(Setting::MessageSize.default_value() as i64, |r| r.get(0));
    tx.rollback().await?;
    Ok(u64::try_from(limit).unwrap_or(0))
}

/// `todo.todo_writ(message)` in one transaction with the context, committed; a serialization
/// failure or deadlock runs it again, up to 5 more times (nothing of it was committed).
async fn writ(
    client: &mut tokio_postgres::Client,
    cx: &Context,
    message: &str,
) -> Result<String, tokio_postgres::Error> {
    let mut retries = 0;
    loop {
        let attempt = async {
            let tx = client.transaction().await?;
            tx.execute(SETUP, &[&cx.tenant, &cx.list, &cx.agent]).await?;
            let answer: String = tx.query_one("SELECT todo.todo_writ($1)", &[&message]).await?.get(0);
            tx.commit().await?;
            Ok::<String, tokio_postgres::Error>(answer)
        };
        match attempt.await {
            Err(e) if retries < 5 && e.code().is_some_and(|c| worth_retrying(c.code())) => {
                retries += 1;
                tokio::time::sleep(crate::db::work::pause(retries)).await;
            }
            done => return done,
        }
    }
}

/// A database error in words: an extension that is not there says `CREATE EXTENSION pg_todos`;
/// any other error is the database's own, with its hint (`db_message`).
async fn explained(client: &tokio_postgres::Client, e: &tokio_postgres::Error) -> String {
    if e.code().is_some_and(|c| matches!(c.code(), "3F000" | "42883")) {
        if let Ok(None) = crate::db::extension_version(client).await {
            let db: String =
                client.query_one("SELECT current_database()", &[]).await.map(|r| r.get(0)).unwrap_or_default();
            return format!(
                "pg_todos writ: the pg_todos extension is not installed in database \"{db}\": CREATE EXTENSION pg_todos"
            );
        }
    }
    db_message("writ", e)
}

/// A usage, configuration or database error: its message on standard error, exit status 2.
fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("{message}");
    std::process::exit(2)
}

/// The tenant, the list and the agent of the flags and the environment.
fn context(f: &WritFlags) -> Result<Context, String> {
    let tenant = tenant_of(&f.tenant, "writ")?;
    let list = list_of(&f.list, std::path::Path::new(".")).map_err(|e| {
        format!("pg_todos writ: no list: the working directory: {e}; pass --list <id> or set PG_TODOS_CONVERSATION")
    })?;
    let agent = f
        .agent
        .clone()
        .or_else(|| env("PG_TODOS_AGENT"))
        .unwrap_or_else(|| default_agent(&|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()), host_name()));
    Ok(Context { tenant, list, agent })
}

/// Runs `pg_todos writ` with the command line's arguments (after `writ`); exits 1 when a block
/// says `ERR:`, 2 on a usage, configuration or database error (module docs).
pub async fn main(args: Vec<String>) {
    let f: WritFlags = flags("pg_todos writ", args);
    let source = source(&f.text);
    if source == (Source::Stdin { named: false }) && std::io::stdin().is_terminal() {
        fail(
            "pg_todos writ: no TEXT, and standard input is a terminal: pass the /todo lines as arguments \
             (pg_todos writ '/todo list') or on standard input (pg_todos writ - to type them)",
        );
    }
    let cx = context(&f).unwrap_or_else(|e| fail(e));
    let mut client =
        crate::command::connect(&f.database_url).await.unwrap_or_else(|e| fail(format!("pg_todos writ: {e}")));
    let message = match source {
        Source::Args(text) => text,
        Source::Stdin { .. } => {
            let limit = match message_limit(&mut client, &cx).await {
                Ok(limit) => limit,
                Err(e) => fail(explained(&client, &e).await),
            };
            read_message(std::io::stdin().lock(), limit).unwrap_or_else(|e| fail(format!("pg_todos writ: {e}")))
        }
    };
    let answer = match writ(&mut client, &cx, &message).await {
        Ok(answer) => answer,
        Err(e) => fail(explained(&client, &e).await),
    };
    if answer.is_empty() {
        eprintln!(
            "pg_todos writ: no /todo line in the message, so nothing ran: a command is a line that starts with \
             /todo (pg_todos writ '/todo help' lists them)"
        );
        return;
    }
    let mut out = std::io::stdout().lock();
    let newline = if answer.ends_with('\n') { "" } else { "\n" };
    // a reader that went away (`| head`) changes nothing: the commands ran
    let _ = write!(out, "{answer}{newline}").and_then(|()| out.flush());
    if has_err(&answer) {
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments_join_with_spaces_and_each_command_starts_a_line() {
        assert_eq!(source(&args(&["/todo add Fix the parser"])), Source::Args("/todo add Fix the parser".into()));
        assert_eq!(
            source(&args(&["/todo", "add", "Fix", "the", "parser"])),
            Source::Args("/todo add Fix the parser".into())
        );
        assert_eq!(
            source(&args(&["/todo add a", "/todo done 1", "/todo", "list"])),
            Source::Args("/todo add a\n/todo done 1\n/todo list".into())
        );
        // a body, and a path that is no command: on the line before
        assert_eq!(
            joined(&args(&["/todo add b", "\nsee /var/log/x", "/endtodo", "/todo\tlist", "/todos", "/todolist"])),
            "/todo add b \nsee /var/log/x\n/endtodo\n/todo\tlist /todos /todolist"
        );
        // a multi-line argument is kept as it is
        assert_eq!(joined(&args(&["/todo add a\n/todo list"])), "/todo add a\n/todo list");
        // a hyphen among other arguments is text
        assert_eq!(source(&args(&["/todo", "add", "-", "x"])), Source::Args("/todo add - x".into()));
    }

    #[test]
    fn no_argument_or_a_hyphen_reads_standard_input() {
        assert_eq!(source(&[]), Source::Stdin { named: false });
        assert_eq!(source(&args(&["-"])), Source::Stdin { named: true });
        assert_eq!(source(&args(&[""])), Source::Args(String::new()));
    }

    #[test]
    fn flags_anywhere_and_text_after_a_double_hyphen() {
        let f: WritFlags =
            flags("pg_todos writ", args(&["/todo add x", "--list", "l", "--tenant=acme", "--", "--not-a-flag"]));
        assert_eq!(f.text, ["/todo add x", "--not-a-flag"]);
        assert_eq!((f.list.as_deref(), f.tenant.as_deref(), f.agent), (Some("l"), Some("acme"), None));
    }

    #[test]
    fn standard_input_is_read_up_to_the_limit() {
        let heredoc = "/todo add a\n/todo add b\nwith a body\n/endtodo\n/todo list\n";
        assert_eq!(read_message(heredoc.as_bytes(), 1000).unwrap(), heredoc);
        assert_eq!(read_message("x".repeat(10).as_bytes(), 10).unwrap(), "x".repeat(10));
        let e = read_message("x".repeat(11).as_bytes(), 10).unwrap_err();
        assert!(e.contains("over 10 bytes") && e.contains("todo.max_message_size") && e.contains("nothing ran"), "{e}");
        // a stream longer than the limit is not read to its end
        let mut endless = std::io::repeat(b'x');
        assert!(read_message(&mut endless, 1 << 20).is_err());
        let e = read_message(&b"/todo add \xff"[..], 100).unwrap_err();
        assert!(e.contains("not UTF-8 (byte 10)"), "{e}");
        assert!(read_message(&b"/todo add a\0b"[..], 100).unwrap_err().contains("NUL"));
        assert_eq!(read_message(&b""[..], 100).unwrap(), "");
    }

    #[test]
    fn an_err_line_at_the_head_of_a_block_is_an_error() {
        let ok = "[/todo add ERR: looks bad]\nOK: added #1 — ERR: looks bad\n[END TODO]\n\n[/todo list]\n\
                  1 open (0 in progress, 1 pending):\n#1 [pending] ERR: looks bad\n[END TODO]";
        assert!(!has_err(ok));
        let err = "[/todo add a]\nOK: added #2 — a\n[END TODO]\n\n[/todo start 99]\n\
                   ERR: usage: /todo start <id|subject> — no open todo matches that id or subject\n[END TODO]";
        assert!(has_err(err));
        assert!(has_err("[/todo]\nERR: message has 201 /todo commands; the limit is 200 commands\n[END TODO]"));
        assert!(!has_err(""));
    }

    #[test]
    fn the_default_agent_names_the_user_and_the_host() {
        let env = |k: &str| match k {
            "USER" => Some("ana".to_string()),
            "LOGNAME" => Some("root".to_string()),
            _ => None,
        };
        assert_eq!(default_agent(&env, Some("box\n".into())), "shell:ana@box");
        assert_eq!(default_agent(&env, Some(" ".into())), "shell:ana");
        let logname = |k: &str| (k == "LOGNAME").then(|| "bo".to_string());
        assert_eq!(default_agent(&logname, None), "shell:bo");
        assert_eq!(default_agent(&|_| None, Some("h".into())), "shell:shell@h");
    }
}
