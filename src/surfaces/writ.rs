//! The `/todo` writ (`todo.todo_writ`), the open-todos block handed to a sub-agent
//! (`todo.todo_open_block`) and the supervisor's preamble (`todo.todo_open_preamble`).
//! Grammar, text and subject matching are pure (`writ::{parse, render, resolve}`); every
//! command that writes is one operation run by `runner::attempt`.

use pgrx::prelude::*;
use serde_json::json;

use crate::error::Error;
use crate::ops::single::{json_fields, Change, NewTodo};
use crate::ops::{self, claiming, dependencies, single, Scope};
use crate::status::Status;
use crate::writ::parse::{self, Command, Field, Mark, Parsed, Target};
use crate::writ::render::{self, Row, WritOutput};
use crate::writ::resolve::{self, Resolved};
use crate::{limits, runner, store};
use pg_todos_core::limits::{Capped, Setting};

/// Runs every `/todo` command in an agent's message and returns their framed results, in
/// order: `[/todo <verb> <args>]`, the result, `[END TODO]`, blocks separated by a blank line
/// (an empty string when the message has no command). Each command is atomic: one that fails
/// on its data changes nothing and says `ERR: …`, and the commands after it still run.
/// Before the first command runs, the ids of every add are reserved and the todos the
/// commands name by id are locked, in id order (so two writs never deadlock each other).
///
/// Limits (each a setting a superuser can raise): a message over `todo.max_message_size`
/// bytes, or with more than `todo.max_writ_commands` commands, runs nothing and gets one
/// `[/todo]` block with its `ERR:` line; a value over a column's limit is that command's
/// `ERR:` line. The answer stops at `todo.max_output_size` bytes: the block that reaches it
/// is cut with a line that says so, and the commands after it do not run (a last `[/todo]`
/// block says how many).
///
/// Errors (SQL, not `ERR:` lines): 22004 a NULL message; 22023 when no tenant is in context; 42704 when the tenant
/// is not registered; and every error that is not about the message's data — a cancel or
/// statement timeout (57014), a deadlock (40P01), a serialization failure (40001), a lock
/// timeout (55P03), running out of memory or disk — raised as it is, with nothing of the
/// message committed, so the caller can retry it whole.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn todo_writ(message: Option<&str>) -> String {
    let message = crate::errors::required(message, "todo.todo_writ: message");
    runner::call(|| {
        let scope = Scope::from_context();
        // the whole message is measured before it is parsed
        if let Err(e) = limits::check(Setting::MessageSize, "message", message.len()) {
            return render::refused(&e);
        }
        let parsed = parse::parse(message);
        if let Err(e) = limits::check(Setting::WritCommands, "message", parsed.len()) {
            return render::refused(&e);
        }
        let adds =
            parsed.iter().filter(|p| matches!(p.command, Ok(Command::Add { .. } | Command::Subtask { .. }))).count();
        // the locks every command will need, in the one order (see store::locks)
        let mut next_id = (adds > 0).then(|| store::ids::reserve_todo_ids(&scope.tenant, adds as i64));
        store::locks::rows(&scope.tenant, &parsed.iter().flat_map(|p| named_ids(&p.command)).collect::<Vec<_>>());
        let mut out = WritOutput::new(limits::get(Setting::OutputSize));
        let mut not_run = 0;
        for (i, p) in parsed.iter().enumerate() {
            if !out.open(&p.header) {
                not_run = parsed.len() - i;
                break;
            }
            let id = match (&p.command, next_id.as_mut()) {
                (Ok(Command::Add { .. } | Command::Subtask { .. }), Some(next)) => {
                    *next += 1;
                    Some(*next - 1)
                }
                _ => None,
            };
            run(&scope, p, id, out.body());
            out.close();
        }
        out.finish(not_run)
    })
}

/// The todos a command names by id (the ones it may change).
fn named_ids(command: &Result<Command, parse::ParseError>) -> Vec<i64> {
    match command {
        Ok(Command::Mark(_, Target::Id(id)) | Command::Reopen(id) | Command::Delete(id) | Command::Set { id, .. }) => {
            vec![*id]
        }
        Ok(Command::Claim(Some(id)) | Command::Heartbeat(id) | Command::Release(id)) => vec![*id],
        _ => Vec::new(),
    }
}

/// One command's result body, into `out` (it stops at the output limit); `id` is the id
/// reserved for an add.
fn run(scope: &Scope, parsed: &Parsed, id: Option<i64>, out: &mut Capped) {
    let command = match &parsed.command {
        Ok(c) => c,
        Err(e) => return out.text(&render::err(&e.to_string())),
    };
    match command {
        Command::List { all } => {
            let (rows, omitted) = crate::session::with_omitted(|| ops::list(scope, *all));
            render::list_into(&rows, *all, out);
            if let Some((shown, omitted)) = omitted {
                out.line(&pg_todos_core::limits::omitted_note(shown, omitted));
            }
        }
        Command::Help => out.text(render::HELP),
        Command::Ready => render::ready_into(&ops::ready(scope, READY_ROWS), out),
        _ => out.text(&match runner::attempt(|| write(scope, command, id)) {
            Ok(line) => line,
            Err(e) => render::err(&error_text(&e, command)),
        }),
    }
}

/// `/todo ready` shows at most this many todos.
const READY_ROWS: i64 = 1000;

/// A command that writes, as one operation: its result line.
fn write(scope: &Scope, command: &Command, reserved: Option<i64>) -> Result<String, Error> {
    let new = |subject: &str, description: &Option<String>, parent: Option<i64>| NewTodo {
        id: reserved,
        parent,
        ..NewTodo::titled(scope, subject, description.as_deref())
    };
    Ok(match command {
        Command::Add { subject, description } => {
            let t = single::add(scope, new(subject, description, None))?;
            render::ok_added(t.id, subject, description.as_deref())
        }
        Command::Subtask { parent, subject, description } => {
            let t = single::add(scope, new(subject, description, Some(*parent)))?;
            render::ok_subtask(t.id, *parent, subject, description.as_deref())
        }
        Command::Mark(mark, target) => {
            let id = match target {
                Target::Id(id) => *id,
                Target::Subject(s) => by_subject(scope, s, mark.verb())?,
            };
            let to = match mark {
                Mark::Start => Status::InProgress,
                Mark::Done => Status::Completed,
                Mark::Cancel => Status::Canceled,
            };
            let changed = single::change(scope, scope.in_scope(), id, Change::status(to))?;
            render::ok_status(to, id, &changed.before.subject)
        }
        Command::Reopen(id) => {
            let changed = single::change(scope, scope.in_scope(), *id, Change::status(Status::Pending))?;
            render::ok_status(Status::Pending, *id, &changed.before.subject)
        }
        Command::Delete(id) => render::ok_deleted(*id, &single::delete(scope, scope.in_scope(), *id)?.subject),
        Command::Set { field, id, text } => {
            let column = match field {
                Field::Subject => "subject",
                Field::Description => "description",
            };
            single::change(scope, scope.in_scope(), *id, Change::fields(json_fields([(column, json!(text))])))?;
            render::ok_updated(*id, text)
        }
        Command::Claim(id) => match claiming::claim(scope, *id, None)? {
            Some(c) => render::ok_claimed(c.granted.id, &c.granted.subject, c.granted.fence, c.lease_s),
            None => render::NOTHING_TO_CLAIM.to_string(),
        },
        Command::Heartbeat(id) => {
            let c = claiming::heartbeat(scope, *id, None, None)?;
            render::ok_renewed(*id, c.granted.fence, c.lease_s)
        }
        Command::Release(id) => render::ok_released(*id, &claiming::release(scope, *id, None)?),
        Command::Block { id, on } => {
            dependencies::block(scope, *id, *on)?;
            render::ok_blocked(*id, *on)
        }
        Command::Unblock { id, on } => render::ok_unblocked(*id, *on, dependencies::unblock(scope, *id, *on)?),
        Command::List { .. } | Command::Help | Command::Ready => unreachable!("read-only commands do not write"),
    })
}

/// The open todo in scope a subject names: exact, then case-insensitive, then a unique
/// case-insensitive prefix.
fn by_subject(scope: &Scope, subject: &str, verb: &str) -> Result<i64, Error> {
    let open: Vec<Row> = ops::list(scope, false);
    match resolve::subject(&open, subject) {
        Resolved::One(id) => Ok(id),
        Resolved::None => Err(Error::Invalid(gone(verb))),
        Resolved::Ambiguous => {
            Err(Error::Invalid(format!("usage: {} — ambiguous subject — use the numeric id", parse::usage(verb))))
        }
    }
}

/// The text after `ERR: ` for an operation's error, in writ words.
fn error_text(e: &Error, command: &Command) -> String {
    match e {
        Error::NotFound { .. } => gone(command.verb()),
        Error::Claim(r) => render::refusal(r),
        Error::Transition { id, forbidden } => {
            format!("cannot move #{id} from {} to {} — /todo reopen {id} first", forbidden.from, forbidden.to)
        }
        other => other.to_string(),
    }
}

/// The answer for an id that matches nothing (or nothing any more).
fn gone(verb: &str) -> String {
    match verb {
        "start" | "done" | "cancel" => {
            format!("usage: {} — no open todo matches that id or subject", parse::usage(verb))
        }
        _ => format!("usage: {} — no todo matches that id", parse::usage(verb)),
    }
}

/// The open todos of `conversation` (plus the tenant-wide pool), in the context's tenant,
/// rendered with `render` within `todo.max_output_size` bytes — or an empty string with a
/// WARNING when the probe fails (no tenant, no privileges). A cancel or timeout the caller
/// asked for is raised.
fn best_effort(conversation: Option<&str>, what: &str, render: fn(&[Row], usize) -> String) -> String {
    runner::best_effort(what, || {
        let tenant = store::scope::tenant_if_set().ok_or("no tenant in context: todo.tenant is not set")?;
        let (rows, omitted) = crate::session::with_omitted(|| store::read::scope_rows(&tenant, conversation, false));
        let limit = limits::get(Setting::OutputSize);
        let Some((shown, left_out)) = omitted else { return Ok(render(&rows, limit)) };
        // the list stopped at its limits: a last line says how many it left out (before the
        // preamble's closing line)
        let note = pg_todos_core::limits::omitted_note(shown, left_out);
        let text = render(&rows, limit.saturating_sub(note.len() + 1));
        Ok(match text.strip_suffix(render::PREAMBLE_END) {
            Some(body) => format!("{body}\n{note}{}", render::PREAMBLE_END),
            None if text.is_empty() => text,
            None => format!("{text}\n{note}"),
        })
    })
    .unwrap_or_default()
}

/// The "Open todos" block prepended to a sub-agent's delegation context: the header line
/// `Open todos (mark progress as you go — /todo start <id>, /todo done <id>):` and the list
/// body for `conversation` plus the tenant-wide pool (NULL: the pool only), in the context's
/// tenant. An empty string when nothing is open. At most `todo.max_output_size` bytes: the
/// rows past it are left out, and a last line says how many.
///
/// Best effort: when the probe fails (no tenant, no privileges, …) it logs a WARNING and
/// returns an empty string, so it can never block a delegation. A cancel or timeout the
/// caller asked for (57014), a deadlock, serialization failure or lock timeout, and running
/// out of resources are raised.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn todo_open_block(conversation: Option<&str>) -> String {
    best_effort(conversation, "todo_open_block", render::open_block_within)
}

/// The same list for the supervisor's own turn, framed `[OPEN TODOS] (mark progress as you go
/// — /todo start <id>, /todo done <id>):` … `[END OPEN TODOS]`. An empty string when nothing
/// is open. At most `todo.max_output_size` bytes, as `todo_open_block`. Best effort, as
/// `todo_open_block`.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn todo_open_preamble(conversation: Option<&str>) -> String {
    best_effort(conversation, "todo_open_preamble", render::open_preamble_within)
}
