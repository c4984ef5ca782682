//! Who is calling: the tenant, conversation, agent and turn of the request, read from the
//! transaction-scoped settings `todo.tenant`, `todo.conversation`, `todo.agent`, `todo.turn`.
//! They come from the app's session, never from the model.

use std::ffi::{CStr, CString};

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::prelude::*;

use crate::errors;

static TENANT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static CONVERSATION: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static AGENT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static TURN: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LEASE_DEFAULT: GucSetting<i32> = GucSetting::<i32>::new(300);
static LEASE_MAX: GucSetting<i32> = GucSetting::<i32>::new(3600);
static ATTENTION_IDLE: GucSetting<i32> = GucSetting::<i32>::new(900);
static ATTENTION_BLOCKED: GucSetting<i32> = GucSetting::<i32>::new(3600);
static GRANTING: GucSetting<bool> = GucSetting::<bool>::new(false);

/// Registers the four settings, so they show in `pg_settings` with a description.
pub fn init() {
    let define = |name, short, setting| {
        GucRegistry::define_string_guc(
            name,
            short,
            c"Set per transaction by the application (SET LOCAL or todo.set_context).",
            setting,
            GucContext::Userset,
            GucFlags::default(),
        )
    };
    define(c"todo.tenant", c"Tenant whose todos this transaction may see and change.", &TENANT);
    define(c"todo.conversation", c"Conversation in context; empty means tenant-wide.", &CONVERSATION);
    define(c"todo.agent", c"Agent acting in this transaction (recorded on rows and events).", &AGENT);
    define(c"todo.turn", c"Turn in context (scopes the per-turn plan tools).", &TURN);
    let seconds = |name, short, long, setting, context| {
        GucRegistry::define_int_guc(name, short, long, setting, 1, 7 * 24 * 3600, context, GucFlags::UNIT_S)
    };
    seconds(
        c"todo.lease_default",
        c"Lease of a claim when the claimer asks for none.",
        c"Any role may set it (per session, role or database); a unit is accepted ('5min').",
        &LEASE_DEFAULT,
        GucContext::Userset,
    );
    seconds(
        c"todo.lease_max",
        c"Longest lease a claim or heartbeat may ask for.",
        c"Only a superuser sets it (ALTER DATABASE/ROLE ... SET, or postgresql.conf): agents cannot raise their own cap.",
        &LEASE_MAX,
        GucContext::Suset,
    );
    // read by the view todo.needs_attention (as current_setting, with these defaults when
    // the library is not loaded in the session)
    seconds(
        c"todo.attention_idle",
        c"An in-progress todo unchanged this long (no heartbeat) needs attention.",
        c"Read by the view todo.needs_attention; any role may set it.",
        &ATTENTION_IDLE,
        GucContext::Userset,
    );
    seconds(
        c"todo.attention_blocked",
        c"A todo blocked this long needs attention.",
        c"Read by the view todo.needs_attention; any role may set it.",
        &ATTENTION_BLOCKED,
        GucContext::Userset,
    );
    // on a distributed store, the coordinator's "a claim statement runs" for the row trigger
    // on the worker (store::distribution)
    GucRegistry::define_bool_guc(
        c"todo.granting",
        c"Internal: set by pg_todos on a distributed store while its claim statements run.",
        c"Read only by the row trigger on Citus workers; never set it yourself.",
        &GRANTING,
        GucContext::Userset,
        GucFlags::NO_SHOW_ALL,
    );
}

/// `todo.granting` (see `init`).
pub fn granting_setting() -> bool {
    GRANTING.get()
}

/// `todo.lease_default` and `todo.lease_max`, in seconds.
pub fn leases() -> (i64, i64) {
    (i64::from(LEASE_DEFAULT.get()), i64::from(LEASE_MAX.get()))
}

/// A setting's value, or None when it is unset, empty or only white space.
fn read(setting: &GucSetting<Option<CString>>) -> Option<String> {
    let value = setting.get()?;
    let value = value.to_string_lossy();
    if value.trim().is_empty() {
        None
    } else {
        Some(value.into_owned())
    }
}

/// The tenant in context; raises 22023 when there is none.
pub fn tenant() -> String {
    read(&TENANT).unwrap_or_else(|| errors::no_tenant())
}

/// The tenant in context, or None.
pub fn tenant_if_set() -> Option<String> {
    read(&TENANT)
}

pub fn conversation() -> Option<String> {
    read(&CONVERSATION)
}

pub fn agent() -> Option<String> {
    read(&AGENT)
}

pub fn turn() -> Option<String> {
    read(&TURN)
}

/// Sets one setting for the rest of the current transaction, as `SET LOCAL` (and
/// `set_config(name, value, true)`) do.
fn set_local(name: &CStr, value: Option<&str>) {
    let value = CString::new(value.unwrap_or("")).unwrap_or_else(|_| {
        errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            "todo.set_context: values must not contain NUL bytes",
            "",
        )
    });
    // SAFETY: the settings are ours (USERSET); an invalid value raises an ERROR.
    unsafe {
        pg_sys::set_config_option(
            name.as_ptr(),
            value.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_LOCAL,
            true,
            0,
            false,
        );
    }
}

/// Sets the whole context for the current transaction, as `SET LOCAL` would: the tenant
/// (required, and registered in `todo.tenants`), the conversation (NULL: tenant-wide), the
/// agent and the turn. Returns nothing. Outside an explicit transaction block the settings end
/// with the statement, so call it inside `BEGIN … COMMIT`.
///
/// Errors: 22023 when `tenant` is NULL or blank; 42704 when it is not registered.
#[pg_extern(volatile, parallel_unsafe)]
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
    set_local(c"todo.tenant", Some(tenant));
    set_local(c"todo.conversation", conversation);
    set_local(c"todo.agent", agent);
    set_local(c"todo.turn", turn);
    crate::store::ids::require_registered(tenant);
    // on a distributed store, the workers are told now (for plain SQL that follows)
    crate::store::distribution::sync_context();
}

/// The tenant in context (`todo.tenant`). Used as the default of every `tenant_id` column.
///
/// Errors: 22023 when no tenant is set (unset, empty or blank): never "all tenants".
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_tenant() -> String {
    tenant()
}

/// The conversation in context (`todo.conversation`), or NULL: tenant-wide.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_conversation() -> Option<String> {
    conversation()
}

/// The agent in context (`todo.agent`), or NULL.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_agent() -> Option<String> {
    agent()
}

/// The turn in context (`todo.turn`), or NULL.
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_turn() -> Option<String> {
    turn()
}
