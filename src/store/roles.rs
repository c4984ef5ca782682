//! Roles granted by `todo.grant_usage` (`todo.roles`): which tenant a role is bound to, read
//! as the extension's owner (no other role reads `todo.roles`), and running a statement as
//! that owner (`as_owner`) for the writes no role may make itself: the event log, the id
//! counters and the lock rows.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;

use pgrx::prelude::*;
use pgrx::PgTryBuilder;

use super::catalog::relid;

thread_local! {
    /// The binding of each user looked up. Kept across transactions until `todo.roles`
    /// changes (its trigger `roles_changed` sends a relation cache invalidation of it, which
    /// every backend hands to `relation_changed`) or a role or a membership does
    /// (`memberships_changed`).
    static BINDINGS: RefCell<Bindings> = RefCell::new(Bindings::default());
    /// The extension's owner (the owner of `todo.todos`), looked up once.
    static OWNER: Cell<Option<pg_sys::Oid>> = const { Cell::new(None) };
}

#[derive(Default)]
struct Bindings {
    relid: Option<pg_sys::Oid>,
    by_user: HashMap<pg_sys::Oid, Binding>,
}

/// What `todo.grant_usage(role, tenant)` binds a user to: through its own grant, or through
/// any role whose privileges it has (a member of a bound role, with `INHERIT`, uses that
/// role's grants and is bound with them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// no bound role: the user may act for any tenant its grants allow
    Free,
    /// bound to this tenant
    Tenant(String),
    /// it has the privileges of roles bound to different tenants: it may act for none
    Several,
}

/// A role or a membership changed (a syscache invalidation of `pg_authid` or
/// `pg_auth_members`, from lib.rs): every binding is looked up again.
pub fn memberships_changed() {
    BINDINGS.with(|b| b.borrow_mut().by_user.clear());
}

/// A relation cache invalidation (`relation_changed` in lib.rs): `todo.roles` changed (or
/// every relation: a reset).
pub fn relation_changed(relid: pg_sys::Oid) {
    BINDINGS.with(|b| {
        let mut b = b.borrow_mut();
        if relid == pg_sys::InvalidOid || b.relid == Some(relid) {
            b.by_user.clear();
        }
    });
}

/// Tells every backend that the bindings changed (the trigger on `todo.roles`).
pub fn announce_changed() {
    let relid = relid(c"roles");
    if relid != pg_sys::InvalidOid {
        // SAFETY: queues an invalidation of an existing relation.
        unsafe { pg_sys::CacheInvalidateRelcacheByRelid(relid) };
    }
}

/// What `user` is bound to (`Binding`): the tenants of the bound roles whose privileges it
/// has, itself included (`pg_has_role(…, 'USAGE')`). A superuser has every role's privileges
/// without being a member, and is never bound (none can be: it bypasses row-level security).
/// A database whose schema predates 0.9.0 has no `todo.roles`: no role is bound.
pub fn binding(user: pg_sys::Oid) -> Binding {
    if let Some(found) = BINDINGS.with(|b| b.borrow().by_user.get(&user).cloned()) {
        return found;
    }
    let table = relid(c"roles");
    if table == pg_sys::InvalidOid {
        return Binding::Free;
    }
    let tenants = as_owner(|| {
        local_one::<Vec<String>>(
            "SELECT array_agg(DISTINCT r.tenant_id) FROM todo.roles r
              WHERE r.tenant_id IS NOT NULL AND pg_catalog.pg_has_role($1, r.role::oid, 'USAGE')
                AND NOT (SELECT a.rolsuper FROM pg_catalog.pg_roles a WHERE a.oid = $1)",
            user,
        )
    })
    .unwrap_or_default();
    let found = match <[String; 1]>::try_from(tenants) {
        Ok([tenant]) => Binding::Tenant(tenant),
        Err(tenants) if tenants.is_empty() => Binding::Free,
        Err(_) => Binding::Several,
    };
    BINDINGS.with(|b| {
        let mut b = b.borrow_mut();
        b.relid = Some(table);
        if b.by_user.len() >= 1024 {
            b.by_user.clear();
        }
        b.by_user.insert(user, found.clone());
    });
    found
}

/// A lookup on this node only, with none of `store::with_plan`'s steps: on a distributed
/// store those tell the workers the context, which needs the binding being looked up.
/// `todo.roles` is never distributed (see `todo.distribute()`).
fn local_one<T: FromDatum + IntoDatum>(sql: &str, arg: pg_sys::Oid) -> Option<T> {
    Spi::connect(|client| {
        let rows = client.select(sql, None, &[arg.into()])?;
        if rows.is_empty() {
            Ok(None)
        } else {
            rows.first().get_one::<T>()
        }
    })
    .unwrap_or_else(|e: pgrx::spi::Error| {
        crate::errors::raise(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("pg_todos: {e}"), "")
    })
}

/// The extension's owner: the owner of `todo.todos`.
fn owner() -> pg_sys::Oid {
    if let Some(owner) = OWNER.get() {
        return owner;
    }
    let table = relid(c"todos");
    let owner = local_one::<pg_sys::Oid>("SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = $1", table)
        .unwrap_or_else(|| {
            crate::errors::raise(PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE, "pg_todos: todo.todos is missing", "")
        });
    OWNER.set(Some(owner));
    owner
}

/// Runs `f` as the extension's owner, as a SECURITY DEFINER function would, and switches back
/// (also when `f` raises). For the rows that no granted role may write itself: a plain SQL
/// write of an app role still gets its events, its ids and its locks this way. A call
/// already running as the owner (every pg_todos function is SECURITY DEFINER) just runs `f`.
pub fn as_owner<T>(f: impl FnOnce() -> T) -> T {
    let (mut user, mut sec) = (pg_sys::InvalidOid, 0);
    // SAFETY: reads this backend's current user and security context.
    unsafe { pg_sys::GetUserIdAndSecContext(&mut user, &mut sec) };
    let owner = owner();
    if user == owner {
        return f();
    }
    // SAFETY: the same switch fmgr makes for a SECURITY DEFINER function; SET ROLE and
    // SET SESSION AUTHORIZATION are refused while it holds (SECURITY_LOCAL_USERID_CHANGE).
    unsafe { pg_sys::SetUserIdAndSecContext(owner, sec | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32) };
    PgTryBuilder::new(AssertUnwindSafe(f))
        // SAFETY: restores what was read above
        .finally(move || unsafe { pg_sys::SetUserIdAndSecContext(user, sec) })
        .execute()
}
