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

/// The GUC record of one of our settings, found once per backend (None if PostgreSQL has
/// none by that name).
fn record(name: &'static CStr) -> *mut pg_sys::config_generic {
    thread_local! {
        static RECORDS: std::cell::RefCell<Vec<(&'static CStr, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if let Some(found) = RECORDS.with(|r| r.borrow().iter().find(|(n, _)| *n == name).map(|(_, p)| *p)) {
        return found as *mut pg_sys::config_generic;
    }
    let found = find_record(name);
    if !found.is_null() {
        RECORDS.with(|r| r.borrow_mut().push((name, found as usize)));
    }
    found
}

#[cfg(feature = "pg15")]
fn find_record(name: &CStr) -> *mut pg_sys::config_generic {
    // SAFETY: PostgreSQL 15's array of every GUC record; custom records are never freed.
    unsafe {
        let all = pg_sys::get_guc_variables();
        let n = usize::try_from(pg_sys::GetNumConfigOptions()).unwrap_or(0);
        for i in 0..n {
            let rec = *all.add(i);
            if !rec.is_null() && CStr::from_ptr((*rec).name).to_bytes().eq_ignore_ascii_case(name.to_bytes()) {
                return rec;
            }
        }
        std::ptr::null_mut()
    }
}

#[cfg(not(feature = "pg15"))]
fn find_record(name: &CStr) -> *mut pg_sys::config_generic {
    // SAFETY: PostgreSQL 16+'s lookup by name; custom records are never freed.
    unsafe { pg_sys::find_option(name.as_ptr(), false, true, pg_sys::ERROR as i32) }
}

/// Whether a setting was given its value in the current transaction (SET LOCAL,
/// `set_config(…, true)`, `todo.set_context`, a SET inside it, a function's SET clause):
/// PostgreSQL keeps a stack entry for every setting changed in the running transaction and
/// drops it when the transaction ends. A value left by a session-level SET of an earlier
/// transaction (the previous client of a pooled connection, `ALTER ROLE … SET`) has none.
fn set_in_this_transaction(name: &'static CStr) -> bool {
    let rec = record(name);
    // SAFETY: a GUC record of this backend, read in the backend's own thread.
    !rec.is_null() && unsafe { !(*rec).stack.is_null() }
}

/// What a setting holds for this transaction.
enum Value {
    /// unset, empty or only white space
    Unset,
    /// a value left by an earlier transaction: ignored
    Stale,
    Set(String),
}

/// A setting's value for this transaction.
fn read(name: &'static CStr, setting: &GucSetting<Option<CString>>) -> Value {
    let Some(value) = setting.get() else { return Value::Unset };
    let value = value.to_string_lossy();
    if value.trim().is_empty() {
        Value::Unset
    } else if !set_in_this_transaction(name) {
        Value::Stale
    } else {
        Value::Set(value.into_owned())
    }
}

fn read_set(name: &'static CStr, setting: &GucSetting<Option<CString>>) -> Option<String> {
    match read(name, setting) {
        Value::Set(v) => Some(v),
        Value::Unset | Value::Stale => None,
    }
}

/// The tenant the calling roles are bound to (`todo.grant_usage(role, tenant)`): the role in
/// effect outside any SECURITY DEFINER function (`SET ROLE`'s, else the login role) and the
/// login role. Raises 42501 when the two are bound to different tenants.
fn bound_tenant() -> Option<String> {
    // SAFETY: read this backend's role ids.
    let (outer, session) = unsafe { (pg_sys::GetOuterUserId(), pg_sys::GetSessionUserId()) };
    let a = crate::store::roles::bound_tenant(outer);
    let b = if session == outer { None } else { crate::store::roles::bound_tenant(session) };
    match (a, b) {
        (Some(a), Some(b)) if a != b => errors::bound_elsewhere(outer),
        (a, b) => a.or(b),
    }
}

/// The tenant in context, or None; raises 42501 when the calling role is bound to another
/// tenant (the same refusal whether that tenant is registered or not). A bound role with no
/// tenant set acts for its own.
fn tenant_checked() -> (Option<String>, bool) {
    let (set, stale) = match read(c"todo.tenant", &TENANT) {
        Value::Set(t) => (Some(t), false),
        Value::Stale => (None, true),
        Value::Unset => (None, false),
    };
    match (set, bound_tenant()) {
        (Some(t), Some(bound)) if t != bound => {
            // SAFETY: reads this backend's role id.
            errors::bound_elsewhere(unsafe { pg_sys::GetOuterUserId() })
        }
        (Some(t), _) => (Some(t), stale),
        (None, bound) => (bound, stale),
    }
}

/// The tenant in context; raises 22023 when there is none (or only one set by an earlier
/// transaction), 42501 when the calling role is bound to another.
pub fn tenant() -> String {
    match tenant_checked() {
        (Some(t), _) => t,
        (None, true) => errors::stale_context(),
        (None, false) => errors::no_tenant(),
    }
}

/// The tenant in context, or None (42501 still raised for a role bound to another).
pub fn tenant_if_set() -> Option<String> {
    tenant_checked().0
}

pub fn conversation() -> Option<String> {
    read_set(c"todo.conversation", &CONVERSATION)
}

pub fn agent() -> Option<String> {
    read_set(c"todo.agent", &AGENT)
}

pub fn turn() -> Option<String> {
    read_set(c"todo.turn", &TURN)
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
    set_local(c"todo.tenant", Some(tenant));
    set_local(c"todo.conversation", conversation);
    set_local(c"todo.agent", agent);
    set_local(c"todo.turn", turn);
    // a role bound to another tenant is refused before the registration is looked at, so
    // the answer never tells whether that tenant exists
    let tenant = self::tenant();
    crate::store::ids::require_registered(&tenant);
    // on a distributed store, the workers are told now (for plain SQL that follows)
    crate::store::distribution::sync_context();
}

/// The tenant in context (`todo.tenant`). Used as the default of every `tenant_id` column.
///
/// Errors: 22023 when no tenant is set (unset, empty or blank): never "all tenants".
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_tenant() -> String {
    tenant()
}

/// The conversation in context (`todo.conversation`), or NULL: tenant-wide.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_conversation() -> Option<String> {
    conversation()
}

/// The agent in context (`todo.agent`), or NULL.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_agent() -> Option<String> {
    agent()
}

/// The turn in context (`todo.turn`), or NULL.
#[pg_extern(stable, parallel_restricted)]
#[search_path(pg_catalog, todo, pg_temp)]
fn current_turn() -> Option<String> {
    turn()
}
