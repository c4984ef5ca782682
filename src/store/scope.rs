//! Which tenant the caller acts for: the tenant setting of this transaction (`session`),
//! checked against the tenant the calling roles are bound to (`todo.grant_usage(role,
//! tenant)`, `roles`). Every read of "the tenant in context" comes here.

use pgrx::prelude::*;

use super::roles::{binding, Binding};
use crate::errors;
use crate::session::{self, Value};

/// The tenant the calling roles are bound to (`todo.grant_usage(role, tenant)`, directly or
/// through a bound role whose privileges they have): the role in effect outside any SECURITY
/// DEFINER function (`SET ROLE`'s, else the login role) and the login role. Raises 42501
/// when the two are bound to different tenants, or when either has the privileges of roles
/// bound to different tenants.
fn bound_tenant() -> Option<String> {
    // SAFETY: read this backend's role ids.
    let (outer, session) = unsafe { (pg_sys::GetOuterUserId(), pg_sys::GetSessionUserId()) };
    let a = binding(outer);
    let b = if session == outer { Binding::Free } else { binding(session) };
    match (a, b) {
        (Binding::Several, _) => errors::bound_to_several(outer),
        (_, Binding::Several) => errors::bound_to_several(session),
        (Binding::Tenant(a), Binding::Tenant(b)) if a != b => errors::bound_elsewhere(outer),
        (Binding::Tenant(t), _) | (Binding::Free, Binding::Tenant(t)) => Some(t),
        (Binding::Free, Binding::Free) => None,
    }
}

/// The tenant in context, or None, and whether a stale one was ignored; raises 42501 when the
/// calling role is bound to another tenant (the same refusal whether that tenant is
/// registered or not). A bound role with no tenant set acts for its own.
fn tenant_checked() -> (Option<String>, bool) {
    let (set, stale) = match session::tenant_value() {
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

/// Whether `agent` names a person (`person:<name>`, in any case, after any leading space):
/// the actor `pg_todos serve` sets for a person's token.
pub fn names_person(agent: &str) -> bool {
    agent.trim_start().get(..7).is_some_and(|p| p.eq_ignore_ascii_case("person:"))
}

/// The agent in context (`todo.agent`), or None. A person (`person:<name>`) comes only from a
/// person's token, which `pg_todos serve` checks: a role bound to a tenant (an app's or an
/// agent's role, `todo.grant_usage(role, tenant)`) naming one is refused with 42501, so an
/// agent cannot write as a person. A role bound to no tenant (the service, an administrator)
/// may.
pub fn agent() -> Option<String> {
    let agent = session::agent();
    if agent.as_deref().is_some_and(names_person) && bound_tenant().is_some() {
        // SAFETY: reads this backend's role id.
        errors::person_refused(unsafe { pg_sys::GetOuterUserId() })
    }
    agent
}
