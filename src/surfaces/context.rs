//! The context as SQL: `todo.set_context(tenant, conversation, agent, turn)` and
//! `todo.current_tenant()`, `current_conversation()`, `current_agent()`, `current_turn()`.

use pgrx::prelude::*;

use crate::errors;
use crate::session;
use crate::store;

/// Sets the whole context for the current transaction, as `SET LOCAL` would: the tenant
/// (required, and registered in `todo.tenants`), the conversation (NULL: tenant-wide), the
/// agent and the turn. Returns nothing. Outside an explicit transaction block the settings end
/// with the statement, so call it inside `BEGIN … COMMIT`.
///
/// Errors: 22023 when `tenant` is NULL or blank; 42704 when it is not registered; 42501
/// when the calling role is bound to another tenant, or is bound to a tenant and names a
/// person (`person:…`) as the agent: only a person's token, through `pg_todos serve`, acts
/// as a person.
#[pg_extern(volatile, parallel_unsafe, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn set_context(
    tenant: Option<&str>,
    conversation: default!(Option<&str>, "NULL"),
    agent: default!(Option<&str>, "NULL"),
    turn: default!(Option<&str>, "NULL"),
) {
    let tenant = match tenant {
        Some(t) if !t.trim().is_empty() => t,
        _ => errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "todo.set_context: tenant must be a non-empty string",
            "pass the tenant id registered in todo.tenants",
        ),
    };
    session::set_local(c"todo.tenant", Some(tenant));
    session::set_local(c"todo.conversation", conversation);
    session::set_local(c"todo.agent", agent);
    session::set_local(c"todo.turn", turn);
    // a role bound to another tenant is refused before the registration is looked at, so
    // the answer never tells whether that tenant exists
    let tenant = store::scope::tenant();
    store::ids::require_registered(&tenant);
    // a person (person:…) comes from a person's token only: refused for a bound role
    store::scope::agent();
    // on a distributed store, the workers are told now (for plain SQL that follows)
    store::distribution::sync_context();
}

/// The tenant in context (`todo.tenant`). Used as the default of every `tenant_id` column.
///
/// Errors: 22023 when no tenant is set (unset, empty or blank): never "all tenants".
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_tenant() -> String {
    store::scope::tenant()
}

/// The conversation in context (`todo.conversation`), or NULL: tenant-wide.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_conversation() -> Option<String> {
    session::conversation()
}

/// The agent in context (`todo.agent`), or NULL (42501 for a person named by a bound role).
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_agent() -> Option<String> {
    store::scope::agent()
}

/// The turn in context (`todo.turn`), or NULL.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_turn() -> Option<String> {
    session::turn()
}
