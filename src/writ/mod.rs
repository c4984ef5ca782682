//! Seed 000's surface: the `/todo` writ (`todo.todo_writ`), the open-todos block handed to a
//! sub-agent (`todo.todo_open_block`) and the supervisor's preamble (`todo.todo_open_preamble`).
//! Grammar in `parse`, text in `render`, subject matching in `resolve`; all SQL in `store`.

pub mod parse;
pub mod render;
pub mod resolve;

use pgrx::prelude::*;

use self::parse::{Command, Field, Mark, Parsed, Target};
use self::render::Row;
use self::resolve::Resolved;
use crate::status::{self, Status};
use crate::{context, coord, store, subxact};

/// Messages larger than this get one error block and run nothing.
pub const MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// Who the commands act for: the tenant and conversation in context.
struct Scope {
    tenant: String,
    conversation: Option<String>,
}

impl Scope {
    fn conv(&self) -> Option<&str> {
        self.conversation.as_deref()
    }
}

/// Runs every `/todo` command in an agent's message and returns their framed results, in
/// order: `[/todo <verb> <args>]`, the result, `[END TODO]`, blocks separated by a blank line
/// (an empty string when the message has no command). Each command is atomic: one that fails
/// changes nothing and says `ERR: …`, and the commands after it still run.
///
/// Errors (SQL, not `ERR:` lines): 22023 when no tenant is in context; 42704 when the tenant
/// is not registered.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn todo_writ(message: &str) -> String {
    let scope = Scope { tenant: context::tenant(), conversation: context::conversation() };
    store::require_registered(&scope.tenant);
    if message.len() > MAX_MESSAGE_BYTES {
        return render::frame(
            "/todo",
            &render::err(&format!(
                "message is {} bytes; the limit is {MAX_MESSAGE_BYTES} bytes — send the /todo commands on their own",
                message.len()
            )),
        );
    }
    let parsed = parse::parse(message);
    // ids for every add of the message, with one update of the tenant's counter
    let adds = parsed.iter().filter(|p| matches!(p.command, Ok(Command::Add { .. } | Command::Subtask { .. }))).count() as i64;
    let mut next_id = if adds > 1 { Some(store::reserve_todo_ids(&scope.tenant, adds)) } else { None };
    let frames: Vec<String> = parsed
        .iter()
        .map(|p| {
            let id = match (&p.command, next_id.as_mut()) {
                (Ok(Command::Add { .. } | Command::Subtask { .. }), Some(next)) => {
                    *next += 1;
                    Some(*next - 1)
                }
                _ => None,
            };
            render::frame(&p.header, &run(&scope, p, id))
        })
        .collect();
    render::join_frames(&frames)
}

/// One command's result body; `id` is the id reserved for an add.
fn run(scope: &Scope, parsed: &Parsed, id: Option<i64>) -> String {
    let command = match &parsed.command {
        Ok(c) => c,
        Err(e) => return render::err(&e.to_string()),
    };
    match command {
        Command::List { all } => render::list_body(&store::scope_rows(&scope.tenant, scope.conv(), *all), *all),
        Command::Help => render::HELP.to_string(),
        Command::Ready => render::ready_body(&store::ready(&scope.tenant, scope.conv(), READY_ROWS)),
        _ => match subxact::attempt(|| write(scope, command, id)) {
            Ok(Ok((id, ok))) => {
                if let Some(id) = id {
                    store::notify(&scope.tenant, scope.conv(), &[id]);
                }
                ok
            }
            Ok(Err(err)) => render::err(&err),
            Err(caught) => render::err(&caught.message),
        },
    }
}

/// `/todo ready` shows at most this many todos.
const READY_ROWS: i64 = 1000;

/// The commands that write: the todo written (None: nothing was) and the result line. `Err`
/// is the text after `ERR: `; the caller rolls back.
fn write(scope: &Scope, command: &Command, reserved: Option<i64>) -> Result<(Option<i64>, String), String> {
    if let Some(done) = coordinate(scope, command, reserved) {
        return done.map_err(|why| why_text(&why, command));
    }
    write_todo(scope, command, reserved).map(|(id, ok)| (Some(id), ok))
}

/// The coordination verbs (issue #7), through `coord`; None for the other commands.
fn coordinate(scope: &Scope, command: &Command, reserved: Option<i64>) -> Option<Result<(Option<i64>, String), coord::Why>> {
    let (tenant, conv) = (scope.tenant.as_str(), scope.conv());
    Some(match command {
        Command::Claim(id) => coord::claim(tenant, conv, *id, None).map(|c| match c {
            Some(c) => (Some(c.granted.id), render::ok_claimed(c.granted.id, &c.granted.subject, c.granted.fence, c.lease_s)),
            None => (None, render::NOTHING_TO_CLAIM.to_string()),
        }),
        Command::Heartbeat(id) => coord::heartbeat(tenant, conv, *id, None, None)
            .map(|c| (Some(*id), render::ok_renewed(*id, c.granted.fence, c.lease_s))),
        Command::Release(id) => coord::release(tenant, conv, *id, None).map(|s| (Some(*id), render::ok_released(*id, &s))),
        Command::Block { id, on } => coord::block(tenant, conv, *id, *on).map(|_| (Some(*id), render::ok_blocked(*id, *on))),
        Command::Unblock { id, on } => {
            coord::unblock(tenant, conv, *id, *on).map(|removed| (Some(*id), render::ok_unblocked(*id, *on, removed)))
        }
        Command::Subtask { parent, subject, description } => {
            coord::add_subtask(tenant, conv, reserved, *parent, subject, description.as_deref())
                .map(|id| (Some(id), render::ok_subtask(id, *parent, subject, description.as_deref())))
        }
        _ => return None,
    })
}

/// The `ERR:` text of a coordination verb that did nothing.
fn why_text(why: &coord::Why, command: &Command) -> String {
    match why {
        coord::Why::NotFound(_) => gone(command.verb()),
        coord::Why::Refused(r) => render::refusal(r),
        other => other.message(),
    }
}

fn write_todo(scope: &Scope, command: &Command, reserved: Option<i64>) -> Result<(i64, String), String> {
    let (tenant, conv) = (scope.tenant.as_str(), scope.conv());
    store::begin_write();
    match command {
        Command::Add { subject, description } => {
            let id = store::insert_todo(tenant, reserved, conv, subject, description.as_deref(), None);
            Ok((id, render::ok_added(id, subject, description.as_deref())))
        }
        Command::Mark(mark, target) => {
            let usage = parse::usage(mark.verb());
            let row = match target {
                Target::Id(id) => store::find_in_scope(tenant, conv, *id),
                Target::Subject(s) => {
                    let open = store::scope_rows(tenant, conv, false);
                    match resolve::subject(&open, s) {
                        Resolved::One(id) => open.into_iter().find(|r| r.id == id),
                        Resolved::None => None,
                        Resolved::Ambiguous => {
                            return Err(format!("usage: {usage} — ambiguous subject — use the numeric id"))
                        }
                    }
                }
            }
            .ok_or_else(|| gone(mark.verb()))?;
            let to = match mark {
                Mark::Start => Status::InProgress,
                Mark::Done => Status::Completed,
                Mark::Cancel => Status::Canceled,
            };
            transition(tenant, &row, to, mark.verb()).map(|ok| (row.id, ok))
        }
        Command::Reopen(id) => {
            let row = by_id(scope, *id, "reopen")?;
            transition(tenant, &row, Status::Pending, "reopen").map(|ok| (row.id, ok))
        }
        Command::Delete(id) => {
            let row = by_id(scope, *id, "delete")?;
            if !store::delete(tenant, row.id) {
                return Err(gone("delete"));
            }
            Ok((row.id, render::ok_deleted(row.id, &row.subject)))
        }
        Command::Set { field, id, text } => {
            let row = by_id(scope, *id, field.verb())?;
            let found = match field {
                Field::Subject => store::set_subject(tenant, row.id, text),
                Field::Description => store::set_description(tenant, row.id, text),
            };
            if !found {
                return Err(gone(field.verb()));
            }
            Ok((row.id, render::ok_updated(row.id, text)))
        }
        _ => unreachable!("read-only commands do not write; coordination verbs go through coord"),
    }
}

/// A todo in scope by id, for the verbs that take only an id.
fn by_id(scope: &Scope, id: i64, verb: &str) -> Result<Row, String> {
    store::find_in_scope(&scope.tenant, scope.conv(), id).ok_or_else(|| gone(verb))
}

/// The answer for an id that matches nothing (or nothing any more).
fn gone(verb: &str) -> String {
    match verb {
        "start" | "done" | "cancel" => format!("usage: {} — no open todo matches that id or subject", parse::usage(verb)),
        _ => format!("usage: {} — no todo matches that id", parse::usage(verb)),
    }
}

/// Moves a todo to `to` if the transition table allows it.
fn transition(tenant: &str, row: &Row, to: Status, verb: &str) -> Result<String, String> {
    if let Err(f) = status::check_transition(row.status, to) {
        return Err(format!("cannot move #{} from {} to {} — /todo reopen {} first", row.id, f.from, f.to, row.id));
    }
    if row.status != to && !store::set_status(tenant, row.id, to) {
        return Err(gone(verb));
    }
    Ok(render::ok_status(to, row.id, &row.subject))
}

/// The open todos of `conversation` (plus the tenant-wide pool), in the context's tenant,
/// rendered with `render` — or an empty string with a WARNING on any failure.
fn best_effort(conversation: Option<&str>, what: &str, render: fn(&[Row]) -> String) -> String {
    let attempt = subxact::attempt(|| {
        let tenant = context::tenant_if_set().ok_or("no tenant in context: todo.tenant is not set")?;
        Ok::<_, &str>(render(&store::scope_rows(&tenant, conversation, false)))
    });
    match attempt {
        Ok(Ok(text)) => text,
        Ok(Err(why)) => {
            warning!("{what}: {why}; returning an empty block");
            String::new()
        }
        Err(caught) => {
            warning!("{what}: {}; returning an empty block", caught.message);
            String::new()
        }
    }
}

/// The "Open todos" block prepended to a sub-agent's delegation context: the header line
/// `Open todos (mark progress as you go — /todo start <id>, /todo done <id>):` and the list
/// body for `conversation` plus the tenant-wide pool (NULL: the pool only), in the context's
/// tenant. An empty string when nothing is open.
///
/// Never raises: on any failure (no tenant, no privileges, …) it logs a WARNING and returns
/// an empty string, so it can never block a delegation.
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn todo_open_block(conversation: Option<&str>) -> String {
    best_effort(conversation, "todo_open_block", render::open_block)
}

/// The same list for the supervisor's own turn, framed `[OPEN TODOS] (mark progress as you go
/// — /todo start <id>, /todo done <id>):` … `[END OPEN TODOS]`. An empty string when nothing
/// is open. Never raises (WARNING and an empty string on any failure).
#[pg_extern(volatile, parallel_unsafe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn todo_open_preamble(conversation: Option<&str>) -> String {
    best_effort(conversation, "todo_open_preamble", render::open_preamble)
}
