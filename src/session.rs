//! The session: the leaf every other layer may read, reading nothing of theirs.
//!
//! - The settings: the tenant, conversation, agent and turn of the request
//!   (`todo.tenant`, `todo.conversation`, `todo.agent`, `todo.turn`, transaction-scoped: a value
//!   set by an earlier transaction is stale), the leases, the attention thresholds and
//!   `todo.granting`. They come from the app's session, never from the model. Which tenant a
//!   role may act for is checked above, in `store::scope`.
//! - The claim flag: whether the statement running is one of the claim operations' own.
//! - The call journal: the todos the running pg_todos call touched (`runner::call` sends
//!   their notifications when it returns).
//! - The subtransaction mechanism every caught error goes through (`runner` holds the policy).

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, CString};
use std::panic::AssertUnwindSafe;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_sys::panic::CaughtError;
use pgrx::prelude::*;
use pgrx::PgTryBuilder;

use crate::errors;

static TENANT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static CONVERSATION: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static AGENT: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static TURN: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static VIA: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LIST_BOUND: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LEASE_DEFAULT: GucSetting<i32> = GucSetting::<i32>::new(300);
static LEASE_MAX: GucSetting<i32> = GucSetting::<i32>::new(3600);
static ATTENTION_IDLE: GucSetting<i32> = GucSetting::<i32>::new(900);
static ATTENTION_BLOCKED: GucSetting<i32> = GucSetting::<i32>::new(3600);
static GRANTING: GucSetting<bool> = GucSetting::<bool>::new(false);
static NOTIFY: GucSetting<Notify> = GucSetting::<Notify>::new(Notify::Off);

/// `todo.notify`: whether committed writes send a LISTEN hint (`store::channel`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, pgrx::PostgresGucEnum)]
pub enum Notify {
    #[name = c"off"]
    Off,
    #[name = c"hint"]
    Hint,
}

/// Registers the settings, so they show in `pg_settings` with a description.
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
    define(
        c"todo.via",
        c"How the request came: empty for SQL, http for pg_todos serve (errors then say how to fix them over HTTP).",
        &VIA,
    );
    define(
        c"todo.list_bound",
        c"on: the list in context is the one the connection is bound to, and wins over a tool's own project argument (Task Master's projectRoot, beads' workspace_root).",
        &LIST_BOUND,
    );
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
    GucRegistry::define_enum_guc(
        c"todo.notify",
        c"off (the default): no NOTIFY; hint: a committed write hints its tenant's private channel (todo.channel()).",
        c"A hint carries nothing, at most one per tenant per 100 ms per backend. NOTIFY takes one lock for the whole cluster at commit: with hint, writers of every tenant commit in turn. Only a superuser sets it (ALTER DATABASE/ROLE ... SET, or postgresql.conf).",
        &NOTIFY,
        GucContext::Suset,
        GucFlags::default(),
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

/// Whether `todo.notify` is `hint`.
pub fn hints() -> bool {
    NOTIFY.get() == Notify::Hint
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
    unsafe { pg_sys::find_option(name.as_ptr(), false, true, pgrx::PgLogLevel::ERROR as i32) }
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
pub enum Value {
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

/// The tenant setting of this transaction: set, set by an earlier transaction (stale), or
/// not set. Whether the calling role may act for it is `store::scope`'s to check.
pub fn tenant_value() -> Value {
    read(c"todo.tenant", &TENANT)
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

/// Whether this transaction serves a request of `pg_todos serve` (`todo.via` = `http`, set by
/// the service in the transaction): an error then says how to fix it over HTTP (a list named
/// by `?list=`) rather than in SQL (`todo.conversation`). It changes only the words of errors.
pub fn via_http() -> bool {
    read_set(c"todo.via", &VIA).is_some_and(|v| v.trim().eq_ignore_ascii_case("http"))
}

/// The list this transaction's connection is bound to: the conversation in context, when
/// `todo.list_bound` is `on` in this transaction (set by `pg_todos mcp` and `/mcp` when the list
/// comes from `--conversation`, `?list=`, `X-Todo-List` or the token's default list). A tool
/// whose arguments name a project (Task Master's `projectRoot`, beads' `workspace_root`) works
/// on this list instead, so that an agent's argument cannot move its work to another list.
pub fn bound_list() -> Option<String> {
    let on = read_set(c"todo.list_bound", &LIST_BOUND)
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "on" | "true" | "1" | "yes"));
    on.then(conversation).flatten()
}

/// Sets one setting for the rest of the current transaction, as `SET LOCAL` (and
/// `set_config(name, value, true)`) do.
pub fn set_local(name: &CStr, value: Option<&str>) {
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

thread_local! {
    /// Set while this backend's own claim and heartbeat statements run: the row trigger lets
    /// a claim be set or renewed only then (never by a plain UPDATE).
    static CLAIMING: Cell<bool> = const { Cell::new(false) };
}

/// Whether the statement writing the row is one of the claim operations' own statements
/// (`ops::claiming`); on a Citus worker, `todo.granting` (`granting_setting`) says it for the
/// coordinator's statement.
pub fn granting() -> bool {
    CLAIMING.with(Cell::get)
}

/// Runs a claim statement with `granting()` true (false again after it, even on an error).
pub fn grant<T>(f: impl FnOnce() -> T) -> T {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            CLAIMING.with(|g| g.set(false));
        }
    }
    CLAIMING.with(|g| g.set(true));
    let _reset = Reset;
    f()
}

/// Runs `f` in a subtransaction that is released when it returns; an error it raises rolls
/// the subtransaction back and is raised again, unchanged.
pub fn isolated<T>(f: impl FnOnce() -> T) -> T {
    match subtransaction(|| Ok::<T, ()>(f())) {
        Ok(Ok(v)) => v,
        Ok(Err(())) => unreachable!("f cannot return an error"),
        Err(caught) => caught.rethrow(),
    }
}

/// The subtransaction itself: `Ok(f())`, released when that is `Ok`, rolled back otherwise;
/// `Err(caught)` when `f` raised (rolled back). The caught error is boxed: pgrx's
/// `CaughtError` is large (over 200 bytes), and only a raised error pays for the box.
pub fn subtransaction<T, E>(f: impl FnOnce() -> Result<T, E>) -> Result<Result<T, E>, Box<CaughtError>> {
    // SAFETY: the same sequence PL/pgSQL's exec_stmt_block uses around a protected block.
    let (cx, owner) = unsafe {
        let saved = (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner);
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(saved.0);
        saved
    };
    let outcome = PgTryBuilder::new(AssertUnwindSafe(move || Ok(f()))).catch_others(|e| Err(Box::new(e))).execute();
    unsafe {
        if matches!(outcome, Ok(Ok(_))) {
            pg_sys::ReleaseCurrentSubTransaction();
        } else {
            pg_sys::RollbackAndReleaseCurrentSubTransaction();
        }
        pg_sys::MemoryContextSwitchTo(cx);
        pg_sys::CurrentResourceOwner = owner;
    }
    outcome
}

/// The call journal: how deeply pg_todos function calls are nested, and the todos the
/// running call touched: (tenant, conversation of the todo, id), in order.
struct Journal {
    depth: u32,
    touched: Vec<(String, Option<String>, i64)>,
}

thread_local! {
    static JOURNAL: RefCell<Journal> = const { RefCell::new(Journal { depth: 0, touched: Vec::new() }) };
}

/// Records that the running call changed todo `id` of `tenant` (in `conversation`, None:
/// tenant-wide); it is in the call's notification.
pub fn touched(tenant: &str, conversation: Option<&str>, id: i64) {
    JOURNAL.with(|c| c.borrow_mut().touched.push((tenant.to_string(), conversation.map(str::to_string), id)));
}

/// Whether a pg_todos function call is running (its notifications are sent when it returns);
/// outside one, a write is plain SQL and the row trigger notifies for it.
pub fn in_call() -> bool {
    JOURNAL.with(|c| c.borrow().depth > 0)
}

/// A call's place in the journal; dropping it leaves the call (the outermost one's leaving
/// forgets what it touched).
pub struct CallDepth;

impl Drop for CallDepth {
    fn drop(&mut self) {
        JOURNAL.with(|c| {
            let mut c = c.borrow_mut();
            c.depth -= 1;
            if c.depth == 0 {
                c.touched.clear();
            }
        });
    }
}

/// Enters a call.
pub fn enter_call() -> CallDepth {
    JOURNAL.with(|c| c.borrow_mut().depth += 1);
    CallDepth
}

/// Whether the running call is the outermost one.
pub fn outermost_call() -> bool {
    JOURNAL.with(|c| c.borrow().depth == 1)
}

/// What the running call touched, taken out of the journal.
pub fn take_touched() -> Vec<(String, Option<String>, i64)> {
    JOURNAL.with(|c| std::mem::take(&mut c.borrow_mut().touched))
}

/// How much the journal holds now (a mark for `forget_touched_after`).
pub fn touched_mark() -> usize {
    JOURNAL.with(|c| c.borrow().touched.len())
}

/// Forgets what was touched after `mark` (a write that was rolled back).
pub fn forget_touched_after(mark: usize) {
    JOURNAL.with(|c| c.borrow_mut().touched.truncate(mark));
}

thread_local! {
    /// The last list read that stopped at its limits: (todos shown, todos left out).
    static OMITTED: Cell<Option<(usize, u64)>> = const { Cell::new(None) };
}

/// Notes that a list read stopped at its limits (`store::read`), showing `shown` todos and
/// leaving `omitted` out; reads that stop more than once in one call add up.
pub fn note_omitted(shown: usize, omitted: u64) {
    OMITTED.with(|o| {
        let (s, m) = o.get().unwrap_or((0, 0));
        o.set(Some((s + shown, m + omitted)));
    });
}

/// Runs `f` (a surface's reads) and returns what it returned with what its list reads left
/// out, as (todos shown, todos left out); None: nothing. What reads before it left out is
/// forgotten first.
pub fn with_omitted<R>(f: impl FnOnce() -> R) -> (R, Option<(usize, u64)>) {
    OMITTED.with(|o| o.set(None));
    KEPT.with(|k| k.set(None));
    let out = f();
    (out, OMITTED.with(|o| o.take()))
}

/// Runs `f` (a read a write makes for itself) and returns what it returned with what its list
/// reads left out, without noting it for the call's answer: what reads before it noted stays.
pub fn unnoted<R>(f: impl FnOnce() -> R) -> (R, Option<(usize, u64)>) {
    let before = OMITTED.with(|o| o.take());
    let out = f();
    (out, OMITTED.with(|o| o.replace(before)))
}

thread_local! {
    /// The todos a whole-list write of this call kept because a read does not show them.
    static KEPT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Notes that a whole-list write kept `kept` todos a read of its list does not show
/// (`ops::whole_list::replace`); writes that keep more than once in one call add up.
pub fn note_kept(kept: u64) {
    KEPT.with(|k| k.set(Some(k.get().unwrap_or(0) + kept)));
}

/// What the call's whole-list writes kept (`note_kept`), taken: None, nothing. `with_omitted`
/// forgets it first.
pub fn take_kept() -> Option<u64> {
    KEPT.with(Cell::take)
}
