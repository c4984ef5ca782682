//! Claims with leases and fencing: claim (a todo, or the next ready one), heartbeat, release,
//! finish. The rules are in `claims` (pure); each operation locks the todo it decides on
//! before deciding, so two agents never both win. The acting agent is `todo.agent`.

use serde_json::json;

use super::single::json_fields;
use super::{Find, Scope};
use crate::claims::{self, Need, Refusal};
use crate::error::Error;
use crate::session::grant;
use crate::status::Status;
use crate::store::lease::Granted;
use crate::store::write::Vet;
use crate::{session, store, time};

fn agent(scope: &Scope) -> Result<&str, Error> {
    scope.agent.as_deref().ok_or(Error::Claim(Refusal::NoAgent))
}

fn lease(requested: Option<i64>) -> Result<i64, Error> {
    let (default, max) = session::leases();
    Ok(claims::lease_seconds(requested, default, max)?)
}

/// A claim granted, with the lease it was granted for.
pub struct Claimed {
    pub granted: Granted,
    pub lease_s: i64,
}

/// Claims todo `id`, or (None) the first ready todo in scope, for the agent in context.
/// `Ok(None)`: nothing is ready. Errors: `Claim` (no agent, bad lease, held by another,
/// finished, blocked), `NotFound`.
pub fn claim(scope: &Scope, id: Option<i64>, lease_s: Option<i64>) -> Result<Option<Claimed>, Error> {
    let agent = agent(scope)?;
    let lease_s = lease(lease_s)?;
    let tenant = scope.tenant.as_str();
    let granted = match id {
        None => grant(|| store::lease::claim_next(tenant, scope.conv(), agent, lease_s)),
        Some(id) => {
            let locked = super::lock_one(scope, scope.in_scope(), id, false)?;
            claims::check_claim(&locked.claim, agent, &store::read::blockers(tenant, id), time::now_us())?;
            Some(grant(|| store::lease::claim_id(tenant, id, agent, lease_s)))
        }
    };
    if let Some(g) = &granted {
        session::touched(tenant, g.conversation.as_deref(), g.id);
    }
    Ok(granted.map(|granted| Claimed { granted, lease_s }))
}

/// Claims the first `quantity` ready todos in scope for the agent in context, each with the
/// same lease, in claim order (fewer when fewer are ready; none: nothing is ready). One
/// statement locks and claims them all (SKIP LOCKED: concurrent batches never share a todo).
/// Errors: `Claim` (no agent, bad lease), `Invalid` (a quantity below 1 or over
/// `todo.max_read_todos`).
pub fn claim_batch(scope: &Scope, quantity: i64, lease_s: Option<i64>) -> Result<Vec<Claimed>, Error> {
    let agent = agent(scope)?;
    let lease_s = lease(lease_s)?;
    let max = crate::limits::get(pg_todos_core::limits::Setting::ReadTodos) as i64;
    if !(1..=max).contains(&quantity) {
        return Err(Error::Invalid(format!("quantity must be from 1 to {max} (todo.max_read_todos), not {quantity}")));
    }
    let tenant = scope.tenant.as_str();
    let granted = grant(|| store::lease::claim_ready(tenant, scope.conv(), agent, lease_s, quantity));
    for g in &granted {
        session::touched(tenant, g.conversation.as_deref(), g.id);
    }
    Ok(granted.into_iter().map(|granted| Claimed { granted, lease_s }).collect())
}

/// The todo to offer the agent in context as its next task: `read` reads the list in scope
/// and its ready todos, best first, after the list's offers are locked (so that it sees
/// every offer and claim made before); the first not offered to another agent (`offers`) is
/// recorded as offered to this one. Concurrent callers on one list take turns, so each is
/// offered a different task while there are enough. Without an agent in context, or in a
/// read-only transaction, the first candidate, and nothing is recorded. What `read` read,
/// and the todo offered (None: no candidate).
pub fn offer_next<T>(scope: &Scope, read: impl FnOnce() -> (T, Vec<i64>)) -> (T, Option<i64>) {
    let tenant = scope.tenant.as_str();
    let offers = scope.agent.as_deref().and_then(|agent| Some((agent, store::offers::lock(tenant, scope.conv())?)));
    let (read, candidates) = read();
    let (Some((agent, offers)), Some(&first)) = (offers, candidates.first()) else {
        return (read, candidates.first().copied());
    };
    let now = time::now_us();
    let id = crate::offers::pick(&offers, &candidates, agent, now).unwrap_or(first);
    store::offers::write(tenant, scope.conv(), crate::offers::with_offer(&offers, id, agent, now));
    (read, Some(id))
}

/// Extends the agent's live claim on `id` (with `fence`: that claim). Touches nothing a
/// listener shows. Errors: `Claim`, `NotFound`.
pub fn heartbeat(scope: &Scope, id: i64, fence: Option<i64>, lease_s: Option<i64>) -> Result<Claimed, Error> {
    let agent = agent(scope)?;
    let lease_s = lease(lease_s)?;
    let locked = super::lock_one(scope, scope.in_scope(), id, false)?;
    claims::check(&locked.claim, Some(agent), fence, Need::Holder, time::now_us())?;
    let expires_us = grant(|| store::lease::renew(&scope.tenant, id, lease_s));
    let t = locked.todo;
    let granted =
        Granted { id, subject: t.subject, fence: locked.claim.fence, expires_us, conversation: t.conversation_id };
    Ok(Claimed { granted, lease_s })
}

/// Gives the agent's live claim on `id` back: the todo returns to pending, unclaimed. Its
/// subject. Errors: `Claim`, `NotFound`.
pub fn release(scope: &Scope, id: i64, fence: Option<i64>) -> Result<String, Error> {
    let agent = agent(scope)?;
    let pending = json_fields([("status", json!(Status::Pending.as_str()))]);
    if let Some(subject) = in_one_statement(scope, id, &pending, Vet { need: Need::Holder, fence, open: false }) {
        return Ok(subject);
    }
    let locked = super::lock_one(scope, scope.in_scope(), id, false)?;
    claims::check(&locked.claim, Some(agent), fence, Need::Holder, time::now_us())?;
    store::write::update(&scope.tenant, id, &pending);
    session::touched(&scope.tenant, locked.todo.conversation_id.as_deref(), id);
    Ok(locked.todo.subject)
}

/// Takes back the claim on `id` that the caller saw held by `holder` under `fence`: a person
/// releasing an agent's lapsed or stuck claim (the board asks first, naming the agent). The
/// claim is cleared whether or not its lease still runs, and an in-progress todo returns to
/// pending; the agent's next heartbeat or finish under that fence is refused. The todo as
/// it is then (as it was when it holds no claim now: released or finished since). Errors:
/// `NotFound`; `Claim(Superseded)` when it holds another claim than the caller saw (it was
/// claimed again since), `Claim(HeldBy)` when its holder is not the one the caller named.
pub fn take_back(scope: &Scope, id: i64, holder: &str, fence: i64) -> Result<crate::todo::Todo, Error> {
    let locked = super::lock_one(scope, Find::Anywhere, id, false)?;
    let state = &locked.claim;
    match &state.claim {
        // released or finished since: nothing is left to take back
        None => return Ok(locked.todo),
        Some(_) if state.fence != fence => {
            return Err(Error::Claim(Refusal::Superseded { id, presented: fence, current: state.fence }))
        }
        Some(c) if c.holder != holder => {
            return Err(Error::Claim(Refusal::HeldBy { id, holder: c.holder.clone(), until_us: c.expires_us }))
        }
        Some(_) => {}
    }
    store::lease::take_back(&scope.tenant, id);
    session::touched(&scope.tenant, locked.todo.conversation_id.as_deref(), id);
    store::read::todo(&scope.tenant, id).ok_or(Error::NotFound { id })
}

/// Completes or cancels `id` with an optional outcome, as the holder of `fence` when given
/// (else as the agent in context: see `claims::check`). A finished todo is not finished
/// again (a late agent never overwrites the outcome). Its subject. Errors: `Claim`,
/// `NotFound`.
pub fn finish(scope: &Scope, id: i64, fence: Option<i64>, to: Status, outcome: Option<&str>) -> Result<String, Error> {
    let fields = fields(to, outcome);
    if let Some(subject) = in_one_statement(scope, id, &fields, Vet { need: Need::Status, fence, open: true }) {
        return Ok(subject);
    }
    let locked = super::lock_one(scope, scope.in_scope(), id, false)?;
    claims::check(&locked.claim, scope.agent.as_deref(), fence, Need::Status, time::now_us())?;
    if locked.todo.status.is_terminal() {
        return Err(Error::Claim(Refusal::NotOpen { id, status: locked.todo.status }));
    }
    store::write::update(&scope.tenant, id, &fields);
    session::touched(&scope.tenant, locked.todo.conversation_id.as_deref(), id);
    Ok(locked.todo.subject)
}

/// Finishes each of `ids` as `finish` does, with the fence at the same place in `fences`
/// (None, or a shorter list: no fence), in one all-or-nothing call: the first refusal is the
/// error and nothing is written. One statement finishes them all (each vetted by the row
/// trigger as `finish`'s own statement is); only a todo it leaves takes `finish`'s way. The
/// subjects, in order. Errors: as `finish`; `Invalid` when an id is named twice, the fences
/// outnumber the ids, or the ids outnumber `todo.max_read_todos`.
pub fn finish_batch(
    scope: &Scope,
    ids: &[i64],
    fences: &[Option<i64>],
    to: Status,
    outcome: Option<&str>,
) -> Result<Vec<String>, Error> {
    if fences.len() > ids.len() {
        return Err(Error::Invalid(format!(
            "{} fences for {} todos: give one per todo, or none",
            fences.len(),
            ids.len()
        )));
    }
    let max = crate::limits::get(pg_todos_core::limits::Setting::ReadTodos);
    if ids.len() > max {
        return Err(Error::Invalid(format!("{} todos in one batch: at most {max} (todo.max_read_todos)", ids.len())));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = ids.iter().find(|id| !seen.insert(**id)) {
        return Err(Error::Invalid(format!("todo {twice} is named twice: name each todo once")));
    }
    let fence = |k: usize| fences.get(k).copied().flatten();
    let vets = ids.iter().enumerate().map(|(k, id)| (*id, Vet { need: Need::Status, fence: fence(k), open: true }));
    let mut written =
        store::write::update_vetted_many(&scope.tenant, scope.in_scope(), vets.collect(), &fields(to, outcome));
    // in order: a todo the statement did not finish takes `finish`'s long way, for its error
    ids.iter()
        .enumerate()
        .map(|(k, id)| match written.remove(id) {
            Some(before) => {
                session::touched(&scope.tenant, before.conversation_id.as_deref(), *id);
                Ok(before.subject)
            }
            None => finish(scope, *id, fence(k), to, outcome),
        })
        .collect()
}

/// What a finish writes: the status, and the outcome when one is given.
fn fields(to: Status, outcome: Option<&str>) -> serde_json::Map<String, serde_json::Value> {
    let mut fields = json_fields([("status", json!(to.as_str()))]);
    if let Some(o) = outcome {
        fields.insert("outcome".into(), json!(o));
    }
    fields
}

/// Writes `fields` to todo `id` in one statement that locks it while its row trigger checks
/// what `vet` says (the claim, the fence, an open todo): the todo's subject. None when the
/// todo is not found or the check refuses: nothing was written, and the caller takes the long
/// way (lock, check, write) for its error.
fn in_one_statement(
    scope: &Scope,
    id: i64,
    fields: &serde_json::Map<String, serde_json::Value>,
    vet: Vet,
) -> Option<String> {
    let (before, _) = store::write::update_vetted(&scope.tenant, scope.in_scope(), id, fields, vet)?;
    session::touched(&scope.tenant, before.conversation_id.as_deref(), id);
    Some(before.subject)
}
