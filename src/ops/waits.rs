//! Waiting claims: a claim that keeps trying until its deadline (MCP answers it as a task).
//! A wait is stored before its maker is answered; each look at it (`poll`) tries the claim
//! again while it is working, as the agent that made it and on its list, so the wait needs
//! no worker and outlives the service that made it. What one try is (the coord dialect's
//! `claim_todo`, rendered as MCP's result) is the caller's (`Attempt`): this layer decides
//! when a wait ends and writes its row.

use serde_json::Value;

use super::Scope;
use crate::claims::Refusal;
use crate::error::Error;
use crate::store::waits::{self, Wait};
use crate::time;

/// The longest wait, in seconds (an hour).
pub const MAX_WAIT_S: i64 = 3600;
/// How many waits one agent of a tenant may have trying at once.
pub const MAX_WORKING: i64 = 100;

/// One try of a claim: its answer, and whether the wait ends with it (a todo claimed, or a
/// refusal that waiting does not change) rather than trying again.
pub struct Tried {
    pub answer: Value,
    pub ends: bool,
}

/// A try of the claim with `arguments`, in a scope (the wait's agent and list).
pub type Attempt<'a> = &'a dyn Fn(&Scope, &Value) -> Tried;

fn agent(scope: &Scope) -> Result<&str, Error> {
    scope.agent.as_deref().ok_or(Error::Claim(Refusal::NoAgent))
}

/// Tries the claim with `arguments` now and stores the wait: completed with that answer when
/// it ends the wait, else working until `wait_s` seconds from now. Removes the tenant's
/// waits that ended over an hour ago (up to 100) first. Errors: `Claim(NoAgent)`;
/// `Invalid` a wait outside 1 to `MAX_WAIT_S` seconds; `Rejected` 54000 when the agent
/// has `MAX_WORKING` waits trying already.
pub fn start(scope: &Scope, arguments: &Value, wait_s: i64, attempt: Attempt<'_>) -> Result<Wait, Error> {
    let agent = agent(scope)?;
    if !(1..=MAX_WAIT_S).contains(&wait_s) {
        return Err(Error::Invalid(format!("wait_seconds must be from 1 to {MAX_WAIT_S}, not {wait_s}")));
    }
    let tenant = scope.tenant.as_str();
    waits::purge(tenant);
    if waits::working(tenant, agent) >= MAX_WORKING {
        return Err(Error::Rejected {
            sqlstate: "54000".into(),
            message: format!(
                "agent \"{agent}\" has {MAX_WORKING} waiting claims already (the limit of waiting claims per agent): cancel one or let one end first"
            ),
        });
    }
    let tried = attempt(scope, arguments);
    let ended = tried.ends.then_some(&tried.answer);
    Ok(waits::insert(tenant, scope.conversation.as_deref(), agent, arguments, wait_s, ended))
}

/// The wait `id` of the scope's tenant (locked until the transaction ends); while it is
/// working, the claim is tried again, as its agent on its list, and the wait completes with
/// that answer when it ends it or the deadline has passed. Errors: `Rejected` P0002 no such
/// wait (another tenant's answers the same).
pub fn poll(scope: &Scope, id: &str, attempt: Attempt<'_>) -> Result<Wait, Error> {
    let wait = locked(scope, id)?;
    if wait.status != "working" {
        return Ok(wait);
    }
    let as_maker = Scope { conversation: wait.conversation.clone(), agent: Some(wait.agent.clone()), ..scope.clone() };
    let tried = attempt(&as_maker, &wait.arguments);
    if tried.ends || time::now_us() >= wait.deadline_us {
        return Ok(waits::end(&scope.tenant, &wait.id, Some(&tried.answer)));
    }
    Ok(wait)
}

/// Cancels the wait `id` of the scope's tenant when it is still working; one that ended
/// stays as it is. Errors: as `poll`'s.
pub fn cancel(scope: &Scope, id: &str) -> Result<Wait, Error> {
    let wait = locked(scope, id)?;
    if wait.status != "working" {
        return Ok(wait);
    }
    Ok(waits::end(&scope.tenant, &wait.id, None))
}

fn locked(scope: &Scope, id: &str) -> Result<Wait, Error> {
    waits::lock(&scope.tenant, id).ok_or_else(|| Error::Rejected {
        sqlstate: "P0002".into(),
        message: format!("no waiting claim {id:?} in this tenant (ended waits are kept an hour)"),
    })
}
