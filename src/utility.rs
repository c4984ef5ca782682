//! The utility hook (an entry point, beside the triggers): no role but the extension's owner
//! takes a table lock on the extension's tables that would make another tenant's calls wait.
//!
//! Every write takes ROW EXCLUSIVE on `todo.todos` and its neighbours, every read ACCESS
//! SHARE. `LOCK TABLE … IN SHARE MODE` or stronger conflicts with ROW EXCLUSIVE; PostgreSQL
//! grants it to any role with UPDATE, DELETE or TRUNCATE on the table, which an app's role
//! (`todo.grant_usage(role, tenant, plain_sql => true)`) has. Held, or only queued, such a
//! lock stalls every tenant. This hook refuses it (42501) before PostgreSQL queues it: a
//! `LOCK` in SHARE mode or stronger of a table or view of the `todo` schema, or of a view
//! anywhere that reads one, by a role without the privileges of the tables' owner.
//! Weaker modes (ACCESS SHARE to SHARE UPDATE EXCLUSIVE) make no write wait and are left alone.
//!
//! The hook is in place in a backend once the library is loaded. To have it in every
//! backend from its start (a role's first statement could be the `LOCK`), the library
//! must be in `shared_preload_libraries`; `todo.preloaded()` says whether it is, and the
//! install and update scripts warn when it is not (docs/security.md).

use pgrx::pg_sys;
use pgrx::prelude::*;

use crate::errors;

static mut PREVIOUS: pg_sys::ProcessUtility_hook_type = None;
static mut INSTALLED: bool = false;
static mut PRELOADED: bool = false;

/// Installs the hook (once per process; from `_PG_init`), noting whether the library is being
/// preloaded (`shared_preload_libraries`): then every backend has it from its start.
pub fn init() {
    // SAFETY: hooks are installed in `_PG_init`, by one thread, before any statement runs.
    unsafe {
        if INSTALLED {
            return;
        }
        INSTALLED = true;
        PRELOADED = pg_sys::process_shared_preload_libraries_in_progress;
        PREVIOUS = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(process_utility);
    }
}

/// Whether the library was loaded by `shared_preload_libraries` (the hook then runs in every
/// backend from its first statement).
pub fn preloaded_here() -> bool {
    // SAFETY: written once in `_PG_init`, before any statement.
    unsafe { PRELOADED }
}

/// The hook. It is not a `#[pg_guard]` function, and it calls the next hook (or
/// `standard_ProcessUtility`) through a plain pointer, not pgrx's guarded binding: every
/// utility statement passes through here, and an error it raises (a refused `SET`, a failed
/// `CREATE`) must reach the client as PostgreSQL raised it, not turned into a Rust panic and
/// back (which adds a Rust backtrace to its DETAIL when `RUST_BACKTRACE` is set). Its frame
/// holds nothing to drop, so PostgreSQL's error jump may cross it. Only the LOCK check runs
/// Rust that may raise, behind its own guard.
#[allow(clippy::too_many_arguments)]
unsafe extern "C-unwind" fn process_utility(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const std::ffi::c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    qc: *mut pg_sys::QueryCompletion,
) {
    // SAFETY: PostgreSQL hands a valid planned utility statement; the next hook and
    // standard_ProcessUtility take the same arguments.
    unsafe {
        let stmt = (*pstmt).utilityStmt;
        if !stmt.is_null() && (*stmt).type_ == pg_sys::NodeTag::T_LockStmt {
            check_lock_guarded(stmt.cast());
        }
        let next = PREVIOUS.unwrap_or(standard_process_utility);
        next(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc)
    }
}

unsafe extern "C-unwind" {
    /// PostgreSQL's own `standard_ProcessUtility`, unguarded (see `process_utility`).
    #[link_name = "standard_ProcessUtility"]
    fn standard_process_utility(
        pstmt: *mut pg_sys::PlannedStmt,
        query_string: *const std::ffi::c_char,
        read_only_tree: bool,
        context: pg_sys::ProcessUtilityContext::Type,
        params: pg_sys::ParamListInfo,
        query_env: *mut pg_sys::QueryEnvironment,
        dest: *mut pg_sys::DestReceiver,
        qc: *mut pg_sys::QueryCompletion,
    );
}

/// `check_lock` behind a guard: its refusal (a Rust error report) becomes a PostgreSQL error.
#[pg_guard]
unsafe extern "C-unwind" fn check_lock_guarded(stmt: *mut pg_sys::LockStmt) {
    // SAFETY: a LockStmt PostgreSQL parsed
    unsafe { check_lock(stmt) }
}

/// The weakest mode that makes a write (ROW EXCLUSIVE) wait.
const BLOCKS_WRITES: i32 = pg_sys::ShareLock as i32;

/// Views are followed this deep (PostgreSQL refuses a view that reads itself; this only
/// bounds the walk).
const MAX_VIEW_DEPTH: usize = 32;

/// Refuses `stmt` (42501) when it would lock one of the extension's relations in a mode that
/// blocks writes and the user lacks the privileges of their owner.
unsafe fn check_lock(stmt: *mut pg_sys::LockStmt) {
    // SAFETY: reads a LockStmt PostgreSQL parsed, and catalog entries by oid.
    unsafe {
        if (*stmt).mode < BLOCKS_WRITES || pg_sys::superuser() {
            return;
        }
        let schema = pg_sys::get_namespace_oid(c"todo".as_ptr(), true);
        if schema == pg_sys::InvalidOid {
            return;
        }
        for rv in pointers((*stmt).relations) {
            let rv: *mut pg_sys::RangeVar = rv.cast();
            let relid = pg_sys::RangeVarGetRelidExtended(
                rv,
                pg_sys::NoLock as i32,
                pg_sys::RVROption::RVR_MISSING_OK,
                None,
                std::ptr::null_mut(),
            );
            if relid == pg_sys::InvalidOid {
                continue; // PostgreSQL reports it
            }
            if let Some(table) = extension_relation(relid, schema, 0) {
                let owner = owner_of(table);
                if !pg_sys::has_privs_of_role(pg_sys::GetUserId(), owner) {
                    errors::raise(
                        PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                        format!(
                            "LOCK of {} in a mode that blocks writes is reserved for the owner of pg_todos' tables",
                            relation_name(table)
                        ),
                        "every tenant writes these tables: a lock in SHARE mode or stronger would make them all wait; \
                         lock rows instead (SELECT … FOR UPDATE), or use ACCESS SHARE to SHARE UPDATE EXCLUSIVE",
                    );
                }
            }
        }
    }
}

/// `relid` itself when it is in the extension's schema, else the first relation of that
/// schema a view `relid` reads (through other views, to `MAX_VIEW_DEPTH`).
unsafe fn extension_relation(relid: pg_sys::Oid, schema: pg_sys::Oid, depth: usize) -> Option<pg_sys::Oid> {
    // SAFETY: catalog lookups by oid; a view's rewrite rule read from its relation entry.
    unsafe {
        if pg_sys::get_rel_namespace(relid) == schema {
            return Some(relid);
        }
        if depth >= MAX_VIEW_DEPTH || pg_sys::get_rel_relkind(relid) != pg_sys::RELKIND_VIEW as std::ffi::c_char {
            return None;
        }
        let rel = pg_sys::RelationIdGetRelation(relid);
        if rel.is_null() {
            return None;
        }
        let mut found = None;
        let query = pg_sys::get_view_query(rel);
        for rte in pointers((*query).rtable) {
            let rte: *mut pg_sys::RangeTblEntry = rte.cast();
            if (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION && (*rte).relid != relid {
                found = extension_relation((*rte).relid, schema, depth + 1);
                if found.is_some() {
                    break;
                }
            }
        }
        pg_sys::RelationClose(rel);
        found
    }
}

/// The pointers of a PostgreSQL `List` of nodes (NIL: none).
unsafe fn pointers(list: *mut pg_sys::List) -> Vec<*mut std::ffi::c_void> {
    if list.is_null() {
        return Vec::new();
    }
    // SAFETY: a List of pointers holds `length` cells in `elements`.
    unsafe { (0..(*list).length as usize).map(|i| (*(*list).elements.add(i)).ptr_value).collect() }
}

/// The owner of relation `relid`.
unsafe fn owner_of(relid: pg_sys::Oid) -> pg_sys::Oid {
    // SAFETY: a relation cache entry by oid, released at once.
    unsafe {
        let rel = pg_sys::RelationIdGetRelation(relid);
        if rel.is_null() {
            return pg_sys::InvalidOid;
        }
        let owner = (*(*rel).rd_rel).relowner;
        pg_sys::RelationClose(rel);
        owner
    }
}

/// `schema.name` of relation `relid`.
unsafe fn relation_name(relid: pg_sys::Oid) -> String {
    // SAFETY: catalog lookups by oid; NULL answers handled.
    unsafe {
        let name = pg_sys::get_rel_name(relid);
        let schema = pg_sys::get_namespace_name(pg_sys::get_rel_namespace(relid));
        let text = |p: *mut std::ffi::c_char| {
            if p.is_null() {
                "?".to_string()
            } else {
                std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        format!("{}.{}", text(schema), text(name))
    }
}

/// Whether the library is in `shared_preload_libraries`, so that every backend refuses a
/// `LOCK` of the extension's tables that would stall other tenants from its first statement
/// (see docs/security.md). Without it a backend refuses such a lock only once it has loaded
/// the library (called any pg_todos function).
#[pg_extern(stable, parallel_safe)]
#[search_path(pg_catalog, todo, pg_temp)]
fn preloaded() -> bool {
    preloaded_here()
}

extension_sql!(
    r#"
COMMENT ON FUNCTION todo.preloaded() IS
    'Whether pg_todos is in shared_preload_libraries: only then does every backend refuse, from its first statement, a LOCK of the extension''s tables that would make other tenants wait (docs/security.md). Raises nothing.';
DO $warn$
BEGIN
    IF NOT todo.preloaded() THEN
        RAISE WARNING 'pg_todos is not in shared_preload_libraries'
            USING DETAIL = 'Until it is, a role''s session that has not yet called a pg_todos function can LOCK todo.todos and make every tenant wait.',
                  HINT = 'add pg_todos to shared_preload_libraries in postgresql.conf and restart PostgreSQL (docs/security.md)';
    END IF;
END
$warn$;
"#,
    name = "preloaded_warning",
    requires = [preloaded, "privileges"]
);
