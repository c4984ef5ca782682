//! Raising errors with their real SQLSTATE. The operations' one error type and the policy
//! for caught errors are pure (`pg_todos_core::error`); this module turns them into
//! PostgreSQL errors, and holds the errors raised outside the operations (context, schema).

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;

/// Raises an ERROR with a real SQLSTATE, a message and a hint. Never returns.
/// An empty hint is left out.
pub fn raise(code: PgSqlErrorCode, message: impl Into<String>, hint: impl Into<String>) -> ! {
    let hint = hint.into();
    let mut report = ErrorReport::new(code, message.into(), "pg_todos");
    if !hint.is_empty() {
        report = report.set_hint(hint);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

/// A SQLSTATE as PostgreSQL packs it (six bits a character) and as text (`"55006"`).
pub fn sqlstate_code(text: &str) -> PgSqlErrorCode {
    let packed = text
        .bytes()
        .take(5)
        .enumerate()
        .fold(0i32, |acc, (i, c)| acc | ((i32::from(c.wrapping_sub(b'0')) & 0x3F) << (6 * i)));
    PgSqlErrorCode::from(packed)
}

/// The five characters of a SQLSTATE.
pub fn sqlstate_text(code: PgSqlErrorCode) -> String {
    let packed = code as i32;
    (0..5).map(|i| char::from((((packed >> (6 * i)) & 0x3F) as u8).wrapping_add(b'0'))).collect()
}

/// Raises an operation's error with its SQLSTATE, message and hint. Never returns.
pub fn raise_error(e: &crate::error::Error) -> ! {
    raise(sqlstate_code(e.sqlstate()), e.to_string(), e.hint())
}

/// 22023: a context setting is missing or malformed.
pub fn no_tenant() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        "no tenant in context: todo.tenant is not set",
        "call todo.set_context('<tenant>', ...) or SET LOCAL todo.tenant = '<tenant>' in this transaction",
    )
}

/// 22023: the only tenant setting there is was left by an earlier transaction.
pub fn stale_context() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        "no tenant in context: todo.tenant was set by an earlier transaction, and the context lasts one transaction",
        "call todo.set_context('<tenant>', ...) or SET LOCAL todo.tenant = '<tenant>' inside this transaction (BEGIN ... COMMIT), not a session-level SET",
    )
}

/// 42501: the calling role is bound to a tenant (`todo.grant_usage(role, tenant)`) and the
/// context names another. The same words whether that other tenant exists or not.
pub fn bound_elsewhere(role: pg_sys::Oid) -> ! {
    role_refused(
        role,
        "is bound to one tenant and may act for no other",
        "set the context to the role's own tenant (todo.grant_usage bound it), or connect as a role granted for the other tenant",
    )
}

/// 42501 for a role that has the privileges of roles `todo.grant_usage` bound to different
/// tenants (a member of two bound roles): it may act for none of them.
pub fn bound_to_several(role: pg_sys::Oid) -> ! {
    role_refused(
        role,
        "has the privileges of roles bound to different tenants and may act for none",
        "a role may be a member of bound roles of one tenant only: revoke the other memberships, or connect as one of the bound roles",
    )
}

/// 42501 for a role bound to a tenant that names a person (`person:…`) as the agent.
pub fn person_refused(role: pg_sys::Oid) -> ! {
    role_refused(
        role,
        "is bound to a tenant and may not act as a person (an agent named person:…)",
        "only a person's token acts as a person, through pg_todos serve: name the agent without the person: prefix",
    )
}

/// 42501 `role "<name>" <what>`, with `hint`: the refusals of a bound role.
fn role_refused(role: pg_sys::Oid, what: &str, hint: &str) -> ! {
    let name = role_name(role);
    raise(PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE, format!("role \"{name}\" {what}"), hint)
}

/// A role's name, or its oid when it has none (dropped).
fn role_name(role: pg_sys::Oid) -> String {
    // SAFETY: a catalog lookup by oid; noerr = true
    unsafe {
        let name = pg_sys::GetUserNameFromId(role, true);
        if name.is_null() {
            format!("{}", role.to_u32())
        } else {
            std::ffi::CStr::from_ptr(name).to_string_lossy().into_owned()
        }
    }
}

/// 428C9: an INSERT of a role under row-level security names an id the tenant's counter has
/// not handed out (as PostgreSQL says for a GENERATED ALWAYS column).
pub fn id_assigned() -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_GENERATED_ALWAYS,
        "cannot insert a value into column \"id\" of todo.todos: pg_todos assigns todo ids",
        "leave id out of the INSERT (RETURNING id gives the one assigned); only an id the tenant's counter has handed out may be named",
    )
}

/// 23505: an INSERT names the id of a todo there is, or was (deleted): an id is never given to
/// a second todo, so that its history in todo.events stays one todo's.
pub fn id_reused(id: i64, in_use: bool) -> ! {
    let was = if in_use { "is in use" } else { "belonged to a todo that was deleted" };
    raise(
        PgSqlErrorCode::ERRCODE_UNIQUE_VIOLATION,
        format!("todo id {id} {was}: todo ids are never reused"),
        "leave id out of the INSERT to add a new todo (RETURNING id gives the one assigned); to change a todo, UPDATE it",
    )
}

/// 42704: the tenant in context is not a row of todo.tenants.
pub fn unknown_tenant(tenant: &str) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
        format!("tenant \"{tenant}\" is not registered"),
        "an administrator registers it with INSERT INTO todo.tenants (tenant_id) VALUES (...)",
    )
}

/// 22023: a status that is not one of the four.
pub fn invalid_status(value: &str) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!("invalid todo status \"{value}\""),
        "use pending, in_progress, completed, canceled (cancelled is accepted too), blocked, deferred or review",
    )
}

/// 55000: the transition table forbids this change of status.
pub fn forbidden_transition(id: i64, f: crate::status::Forbidden) -> ! {
    raise(PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE, format!("todo #{id}: {f}"), f.hint())
}

/// 0A000: a todo's identity (tenant_id, id) never changes.
pub fn identity_changed(id: i64) -> ! {
    raise(
        PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
        format!("todo #{id}: tenant_id and id cannot be changed"),
        "insert a new todo instead",
    )
}

/// 42501: exactly what PostgreSQL says when a row breaks a table's row-level security policy.
pub fn rls_violation(table: &str) -> ! {
    ErrorReport::new(
        PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
        format!("new row violates row-level security policy for table \"{table}\""),
        "pg_todos",
    )
    .report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}

/// The value of an argument that must not be NULL; 22004 (`null_value_not_allowed`) naming
/// it, `what` as `function: argument`, when it is.
pub fn required<T>(value: Option<T>, what: &str) -> T {
    match value {
        Some(v) => v,
        None => raise(
            PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
            format!("{what} must not be NULL"),
            "pass a value (the function's documentation, \\df+ todo.*, names each argument)",
        ),
    }
}
