//! The opencode dialect (seed 002): OpenCode's session todos. `todowrite` replaces the session's whole list (the
//! conversation in context is the session) and `todoread` reads it; both return what
//! OpenCode's tools return: `{"title": "<n> todos", "output": <the list as JSON, 2-space
//! indented>, "metadata": {"todos": [...]}}`, n counting the items that are not completed.
//! Its change feed is `todo.changes_since` (the HTTP service's `todo.updated` events).
//! `todo.acp_plan(conversation)`
//! renders the list as Agent Client Protocol plan entries.

use pgrx::prelude::*;
use serde::Serialize;
use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{cancelled_status_name, error, failed, output_schema, parse_string_id, session, str_arg};
use crate::jsonb::Jsonb;
use crate::ops::whole_list::{self, Item, Kept, Rules};
use crate::ops::Scope;
use crate::status::Status;
use crate::store::{self, read::Find};
use crate::todo::Todo;

fn todo_item_schema() -> Value {
    json!({
        "type": "object",
        "required": ["content", "status", "priority"],
        "additionalProperties": false,
        "properties": {
            "content": {"type": "string", "minLength": 1, "description": "Brief description of the task"},
            "status": {"type": "string", "enum": ["pending", "in_progress", "completed", "cancelled"], "description": "Current status of the task: pending, in_progress, completed, cancelled"},
            "priority": {"type": "string", "enum": ["high", "medium", "low"], "description": "Priority level of the task: high, medium, low"},
            "id": {"type": "string", "description": "Unique identifier for the todo item"}
        }
    })
}

static WRITE: Tool = Tool {
    name: "todowrite",
    description: "Use this tool to create and manage a structured task list for your current coding session. The list you send replaces the session's whole list: keep only one task in_progress at a time, mark tasks completed as soon as they are done, and use cancelled for tasks that are no longer needed.",
    input_schema: || {
        json!({
            "type": "object",
            "required": ["todos"],
            "additionalProperties": false,
            "properties": {"todos": {"type": "array", "items": todo_item_schema(), "description": "The updated todo list"}}
        })
    },
    precheck: None,
    run: write,
    effect: Effect::Replaces,
    output_schema: Some(|| output_schema(json!({"title": {"type": "string"}, "output": {"type": "string"}, "metadata": {"type": "object", "properties": {"todos": {"type": "array"}}, "required": ["todos"]}}), &["title", "output", "metadata"])),
    text: None,
    accepts: None,
};

static READ: Tool = Tool {
    name: "todoread",
    description: "Use this tool to read your todo list for the current session.",
    input_schema: || json!({"type": "object", "additionalProperties": false, "properties": {}}),
    precheck: None,
    run: read,
    effect: Effect::Reads,
    output_schema: Some(|| {
        output_schema(
            json!({"title": {"type": "string"}, "output": {"type": "string"}, "metadata": {"type": "object", "properties": {"todos": {"type": "array"}}, "required": ["todos"]}}),
            &["title", "output", "metadata"],
        )
    }),
    text: None,
    accepts: None,
};

/// One todo as OpenCode stores it; the field order is the order its `output` prints.
#[derive(Serialize)]
struct Shown<'a> {
    content: &'a str,
    status: &'a str,
    priority: &'a str,
    id: String,
}

fn items(rows: &[Todo]) -> Vec<Shown<'_>> {
    rows.iter()
        .map(|t| Shown {
            content: &t.subject,
            status: cancelled_status_name(t.status),
            priority: t.priority.as_deref().unwrap_or("medium"),
            id: t.id.to_string(),
        })
        .collect()
}

/// `{"title", "output", "metadata": {"todos"}}`; the title counts the items not completed.
fn result(items: &[Shown<'_>]) -> Value {
    let open = items.iter().filter(|t| t.status != "completed").count();
    let output = serde_json::to_string_pretty(items).expect("plain strings serialize");
    json!({ "title": format!("{open} todos"), "output": output, "metadata": { "todos": items } })
}

fn read(scope: &Scope, _args: &Value) -> Answer {
    let conv = session(scope, "todoread")?;
    let (rows, omitted) = crate::session::unnoted(|| store::read::todos(&scope.tenant, Find::Conversation(conv)));
    let mut out = result(&items(&rows));
    if let Some((shown, left_out)) = omitted {
        crate::session::note_omitted(shown, left_out);
        // the text the model reads says the list goes on (a write sent back leaves the rest)
        let text = format!(
            "{}\n{}",
            out["output"].as_str().unwrap_or(""),
            pg_todos_core::limits::omitted_note(shown, left_out)
        );
        out["output"] = json!(text);
    }
    Ok(out)
}

fn write(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todowrite")?;
    let mut wanted = args["todos"].as_array().cloned().unwrap_or_default();
    // a read's note copied back is no todo (`whole_list::replace` leaves it out, with no id)
    wanted.retain(|t| !pg_todos_core::limits::is_list_note(str_arg(t, "content")));
    if let Some(i) = wanted.iter().position(|t| str_arg(t, "content").trim().is_empty()) {
        return Err(error("invalid_arguments", format!("todowrite: todos[{i}].content: must not be blank")));
    }
    let items: Vec<Item> = wanted
        .iter()
        .map(|t| Item {
            id: parse_string_id(str_arg(t, "id")),
            content: str_arg(t, "content").to_string(),
            status: Status::parse(str_arg(t, "status")).unwrap_or(Status::Pending),
            columns: [("priority".to_string(), t["priority"].clone())].into_iter().collect(),
        })
        .collect();
    let ids = whole_list::replace(scope, conv, Rules::seeds(Kept::All), &items).map_err(failed)?;
    // the session's list is now exactly the list written, with these ids
    let written: Vec<Shown<'_>> = wanted
        .iter()
        .zip(&ids)
        .map(|(t, id)| Shown {
            content: str_arg(t, "content"),
            status: str_arg(t, "status"),
            priority: str_arg(t, "priority"),
            id: id.to_string(),
        })
        .collect();
    Ok(result(&written))
}

/// A conversation's list (None: the tenant-wide pool) as OpenCode's todos, the items of
/// `todoread`: `[{"content", "status", "priority", "id"}]`.
pub fn list(tenant: &str, conversation: Option<&str>) -> Value {
    let rows = store::read::todos(tenant, conversation.map_or(Find::InScope(None), Find::Conversation));
    json!(items(&rows))
}

/// What changed since a cursor, for the HTTP service's `todo.updated` events (seed 002's bus
/// event, which carries a session's whole list): `{"cursor": <text>, "changes":
/// [{"conversation_id": <text, or null for the tenant-wide pool>, "todos": <the list as
/// OpenCode's todos>}]}` for the tenant in context. `since` is a cursor an earlier call
/// returned (NULL: no changes, only the cursor). Every conversation with a change committed
/// after `since` was taken is in it, a transaction that committed late included; one may be
/// repeated in the next call, never left out. Deleted todos show as missing from their list.
///
/// Each list is a bounded read (at most `todo.max_read_todos` todos, fewer once their text
/// passes `todo.max_output_size` bytes).
///
/// Errors: 22023 when no tenant is in context; 42704 when it is not registered; 22P02 for a
/// `since` that is not a cursor; 54000 when the changed lists pass `todo.max_output_size`
/// bytes of JSON together (read them a page at a time: the three-argument form).
#[pg_extern(stable, parallel_restricted, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn changes_since(since: Option<&str>) -> Jsonb {
    let tenant = Scope::reading(None).tenant;
    let (cursor, conversations) = store::events::changed_since(&tenant, since);
    let budget = crate::limits::get(pg_todos_core::limits::Setting::OutputSize);
    let mut bytes = 0;
    let mut changes: Vec<Value> = Vec::new();
    for c in &conversations {
        let todos = list(&tenant, c.as_deref());
        bytes += serde_json::to_vec(&todos).map_or(0, |v| v.len());
        if bytes > budget && !changes.is_empty() {
            // the whole answer must hold every changed list (its cursor passes them all):
            // refused rather than built without bound
            crate::errors::raise(
                PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                format!(
                    "todo.changes_since: the {} changed lists pass {budget} bytes of JSON (todo.max_output_size)",
                    conversations.len()
                ),
                "read them a page at a time: todo.changes_since(since, after, page_size)",
            );
        }
        changes.push(json!({ "conversation_id": c, "todos": todos }));
    }
    Jsonb(json!({ "cursor": cursor, "changes": changes }))
}

extension_sql!(
    r#"
COMMENT ON FUNCTION todo.changes_since(text) IS
    'The conversations changed since a cursor, each with its whole list as OpenCode todos, and the new cursor: {"cursor", "changes": [{"conversation_id", "todos"}]} (the HTTP service''s todo.updated events). Errors: 22023 no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered; 22P02 a since that is not a cursor; 54000 the changed lists pass todo.max_output_size bytes of JSON together (read them a page at a time: the three-argument form).';
"#,
    name = "changes_since_comment",
    requires = [changes_since]
);

/// A page of the catch-up stops once its lists pass this many bytes of JSON (after at least
/// one conversation), whatever `page_size` allows.
const PAGE_BYTES: usize = 256 * 1024;
/// The largest `page_size`.
const MAX_PAGE_SIZE: i32 = 1000;

/// A page size of `function` (1 to `MAX_PAGE_SIZE`). Errors: 22023 for any other.
fn page_size_of(page_size: Option<i32>, function: &str) -> i32 {
    match page_size {
        Some(n) if (1..=MAX_PAGE_SIZE).contains(&n) => n,
        _ => crate::errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("{function}: page_size must be from 1 to {MAX_PAGE_SIZE}"),
            "a page of 20 to 100 conversations is usual",
        ),
    }
}

/// `changes_since` a page at a time, for a catch-up that must not be built whole: `{"cursor",
/// "changes", "next"}`. The conversations changed since `since` come in one order (by id,
/// bytewise, the tenant-wide pool last), at most `page_size` of them and no more once their
/// lists pass 256 KiB of JSON (at least one); `next` is null on the last page, else the
/// `after` of the next call (the last conversation of this page). Every page of a catch-up
/// passes the same `since`; the `cursor` of its first page is the one to keep once the last
/// page is read (a conversation that changes meanwhile may come twice, never be missed).
/// `since` NULL: no changes, only the cursor.
///
/// Errors: 22023 when no tenant is in context or `page_size` is not from 1 to 1000; 42704 when
/// the tenant is not registered; 22P02 for a `since` that is not a cursor.
///
/// SQL: `todo.changes_since(since, after, page_size)`, an overload of the one above: the one
/// function whose Rust name is not its SQL name, as a module cannot hold two functions
/// `changes_since` (nor the library two symbols `changes_since_wrapper`).
#[pg_extern(stable, parallel_restricted, security_definer, name = "changes_since")]
#[search_path(pg_catalog, todo, pg_temp)]
fn changes_since_page(since: Option<&str>, after: Option<&str>, page_size: Option<i32>) -> Jsonb {
    let tenant = Scope::reading(None).tenant;
    let size = page_size_of(page_size, "todo.changes_since");
    let (cursor, _) = store::events::changed_since(&tenant, None);
    let Some(since) = since else { return Jsonb(json!({ "cursor": cursor, "changes": [], "next": null })) };
    let (conversations, more) = store::events::changed_since_page(&tenant, since, after, size as usize);
    let mut changes = Vec::new();
    let mut bytes = 0;
    for c in &conversations {
        let todos = list(&tenant, c.as_deref());
        bytes += serde_json::to_vec(&todos).map_or(0, |v| v.len());
        changes.push(json!({ "conversation_id": c, "todos": todos }));
        if bytes >= PAGE_BYTES {
            break;
        }
    }
    // more to come: rows past this page, or the byte limit stopped it early (the pool is last,
    // so a page that ends with it has nothing after it)
    let next = match changes.last().map(|c| c["conversation_id"].clone()) {
        Some(Value::String(last)) if more || changes.len() < conversations.len() => Some(last),
        _ => None,
    };
    Jsonb(json!({ "cursor": cursor, "changes": changes, "next": next }))
}

extension_sql!(
    r#"
COMMENT ON FUNCTION todo.changes_since(text, text, integer) IS
    'changes_since a page at a time: {"cursor", "changes", "next"}; at most page_size (1 to 1000) conversations, fewer once their lists pass 256 KiB of JSON, ordered by id (bytewise) with the tenant-wide pool last; next: the after of the next page, null on the last. Keep the cursor of a catch-up''s first page. Errors: 22023 no tenant in context, or a page_size not from 1 to 1000; 42501 a role bound to another tenant; 42704 tenant not registered; 22P02 a since that is not a cursor.';
"#,
    name = "changes_since_page_comment",
    requires = [changes_since_page]
);

/// The lists changed since a cursor, without their todos: `{"cursor", "lists": [<id, or null
/// for the tenant-wide pool>], "next"}`, a page at a time as `changes_since`'s three-argument
/// form (the same order, `after` and `next`; at most `page_size`, 1 to 1000). What a follower
/// that only needs to know which lists changed reads (`pg_todos mcp`'s resource
/// subscriptions): one small statement, where `changes_since` reads each list whole. `since`
/// NULL: no lists, only the cursor.
///
/// Errors: 22023 when no tenant is in context or `page_size` is not from 1 to 1000; 42704 when
/// the tenant is not registered; 22P02 for a `since` that is not a cursor.
#[pg_extern(sql = false)]
fn changed_lists(since: Option<&str>, after: Option<&str>, page_size: Option<i32>) -> Jsonb {
    let tenant = Scope::reading(None).tenant;
    let size = page_size_of(page_size, "todo.changed_lists");
    let (cursor, _) = store::events::changed_since(&tenant, None);
    let Some(since) = since else { return Jsonb(json!({ "cursor": cursor, "lists": [], "next": null })) };
    let (lists, more) = store::events::changed_since_page(&tenant, since, after, size as usize);
    let next = match lists.last() {
        Some(Some(last)) if more => Some(last.clone()),
        _ => None,
    };
    Jsonb(json!({ "cursor": cursor, "lists": lists, "next": next }))
}

extension_sql!(
    r#"
CREATE FUNCTION todo.changed_lists(since text, after text DEFAULT NULL, page_size integer DEFAULT 1000) RETURNS jsonb
LANGUAGE c STABLE PARALLEL RESTRICTED SECURITY DEFINER
SET search_path = pg_catalog, todo, pg_temp
AS 'MODULE_PATHNAME', 'changed_lists_wrapper';
COMMENT ON FUNCTION todo.changed_lists(text, text, integer) IS
    'The lists changed since a cursor, without their todos: {"cursor", "lists": [id, or null for the tenant-wide pool], "next"}, a page at a time as changes_since(since, after, page_size) (page_size 1 to 1000, default 1000). Errors: 22023 no tenant in context, or a page_size not from 1 to 1000; 42501 a role bound to another tenant; 42704 tenant not registered; 22P02 a since that is not a cursor.';
"#,
    name = "changed_lists"
);

/// Which of `tenants` have changes their cursor (`cursors`, the same position; a cursor
/// `changes_since` returned) did not see: what `pg_todos serve` asks once per tick, in one
/// statement, for every tenant with an open stream or board. Each is asked acting for it:
/// a role bound to a tenant may ask only about its own. The answer names tenants only; the
/// changes are read with `changes_since`.
///
/// Errors: 22004 a NULL array; 22023 when the arrays differ in length or hold a NULL; 54000
/// past 10,000 tenants;
/// 22P02 for a malformed cursor; 42501 for a tenant the calling role may not act for.
#[pg_extern(stable, parallel_restricted, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn changed_tenants(tenants: Option<Vec<Option<String>>>, cursors: Option<Vec<Option<String>>>) -> Vec<String> {
    let tenants = crate::errors::required(tenants, "todo.changed_tenants: tenants");
    let cursors = crate::errors::required(cursors, "todo.changed_tenants: cursors");
    let bad = |message: String, hint: &str| -> ! {
        crate::errors::raise(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message, hint)
    };
    if tenants.len() != cursors.len() {
        bad(
            format!("todo.changed_tenants: {} tenants but {} cursors", tenants.len(), cursors.len()),
            "pass one cursor per tenant, in the same order",
        );
    }
    if tenants.len() > store::events::MAX_WATCHED {
        crate::errors::raise(
            PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
            format!(
                "todo.changed_tenants: {} tenants, at most {} in one call",
                tenants.len(),
                store::events::MAX_WATCHED
            ),
            "ask in several calls",
        );
    }
    let mut watched = Vec::with_capacity(tenants.len());
    for (i, (t, c)) in tenants.iter().zip(&cursors).enumerate() {
        match (t.as_deref(), c.as_deref()) {
            (Some(t), Some(c)) if !t.trim().is_empty() => watched.push((t, c)),
            _ => bad(
                format!("todo.changed_tenants: tenant and cursor {} must not be NULL or blank", i + 1),
                "pass a tenant id and the cursor changes_since returned for it",
            ),
        }
    }
    store::events::changed_tenants(&watched)
}

extension_sql!(
    r#"
ALTER FUNCTION todo.changed_tenants(text[], text[]) SET todo.tenant = '';
COMMENT ON FUNCTION todo.changed_tenants(text[], text[]) IS
    'Which of the tenants have changes their cursor (same position; one todo.changes_since returned) did not see: one statement per tick for a service following the log (pg_todos serve). Each is asked acting for it (a bound role only about its own). Errors: 22004 a NULL array, 22023 arrays of different lengths or a NULL, 54000 past 10,000 tenants, 22P02 a malformed cursor, 42501 a tenant the role may not act for.';
"#,
    name = "changed_tenants_comment",
    requires = [changed_tenants]
);

/// The session's list as the `update` of an Agent Client Protocol v1 `session/update`
/// notification: `{"sessionUpdate": "plan", "entries": [{"content", "priority", "status"}]}`.
/// ACP v1 has no cancelled or blocked status: a canceled todo is shown `completed`, a
/// blocked one `pending`. An in-progress todo
/// with an active form is shown by it (as ACP adapters show Claude Code's TodoWrite);
/// priority defaults to `medium`.
///
/// Errors: 22004 a NULL conversation; 22023 when no tenant is in context; 42704 when it is
/// not registered.
#[pg_extern(stable, parallel_restricted, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn acp_plan(conversation: Option<&str>) -> Jsonb {
    let conversation = crate::errors::required(conversation, "todo.acp_plan: conversation");
    let tenant = Scope::reading(None).tenant;
    let entries: Vec<Value> = store::read::todos(&tenant, Find::Conversation(conversation))
        .iter()
        .map(|t| {
            let content = match (t.status, &t.active_form) {
                (Status::InProgress, Some(active)) => active.as_str(),
                _ => t.subject.as_str(),
            };
            let status = t.status.three_state().as_str();
            json!({"content": content, "priority": t.priority.as_deref().unwrap_or("medium"), "status": status})
        })
        .collect();
    Jsonb(json!({ "sessionUpdate": "plan", "entries": entries }))
}

/// The LISTEN channel of the change hints of the tenant in context (`store::channel`): keyed
/// with this installation's secret, so only a role acting for the tenant learns it. Hints
/// are sent only with `todo.notify = hint`, and carry nothing: a listener reads what changed
/// with `todo.changes_since`.
///
/// Errors: 22023 when no tenant is in context; 42704 when it is not registered.
#[pg_extern(stable, parallel_restricted, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn channel() -> String {
    store::channel::channel(&Scope::reading(None).tenant)
}

/// A conversation's list as OpenCode's tools show it (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    list(&scope.tenant, Some(conv))
}

/// The opencode dialect.
pub static DIALECT: Dialect = Dialect {
    name: "opencode",
    aliases: &["002"],
    runtime: "OpenCode",
    description: "a session's todo list, written whole and read back",
    tools: &[&WRITE, &READ],
    list_as: Some(ListAs {
        shape: "OpenCode's todos `[{content, status, priority, id}]` (its `GET /session/:id/todo`)",
        read: list_as,
    }),
};
