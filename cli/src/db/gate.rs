//! Each tenant's share of something the service holds for all: at most `share` of one
//! tenant's holders at once, so that one tenant never takes it all while the others wait.
//! The database pool (`Gate::new`): at most `share` database operations of one tenant at once
//! (a request's statement, an event stream's read), so that one tenant's requests waiting on
//! its own locks never hold every pooled connection while another tenant's requests wait.
//! The event streams' catch-ups (`Gate::named`, see `http::hub`). A holder past its tenant's
//! share waits at most `wait`, then is answered 503 with `Retry-After`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::errors::ApiError;

/// The shares of every tenant with an operation running or waiting.
pub struct Gate {
    share: usize,
    wait: Duration,
    /// the refusal, past the share
    busy: String,
    tenants: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// One running operation of a tenant; dropping it gives the place back.
pub struct Pass {
    _permit: OwnedSemaphorePermit,
    gate: Arc<Gate>,
    tenant: String,
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.gate.forget_idle(&self.tenant);
    }
}

impl Gate {
    /// `share` database operations per tenant at once (at least 1), waiting at most `wait` for
    /// a place.
    pub fn new(share: usize, wait: Duration) -> Arc<Gate> {
        Gate::named(share, wait, "database operations running already")
    }

    /// `share` holders per tenant at once (at least 1), waiting at most `wait` for a place;
    /// past it `this tenant has <share> <what>; try again shortly`.
    pub fn named(share: usize, wait: Duration, what: &str) -> Arc<Gate> {
        let share = share.max(1);
        let busy = format!("this tenant has {share} {what}; try again shortly");
        Arc::new(Gate { share, wait, busy, tenants: Mutex::new(HashMap::new()) })
    }

    /// A place for one operation of `tenant`, once one of its `share` is free. Errors: 503
    /// (`ApiError::Busy`) when none frees within `wait`.
    pub async fn enter(self: &Arc<Self>, tenant: &str) -> Result<Pass, ApiError> {
        self.enter_within(tenant, Some(self.wait)).await
    }

    /// A place for one holder of `tenant`, waiting at most `wait` (None: until one frees).
    /// Errors: 503 (`ApiError::Busy`) when none frees in time.
    pub async fn enter_within(self: &Arc<Self>, tenant: &str, wait: Option<Duration>) -> Result<Pass, ApiError> {
        let semaphore = {
            let mut tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
            tenants.entry(tenant.to_string()).or_insert_with(|| Arc::new(Semaphore::new(self.share))).clone()
        };
        // acquire_owned takes the local reference: only the map and the permit remain
        let acquired = match wait {
            Some(wait) => tokio::time::timeout(wait, semaphore.acquire_owned()).await,
            None => Ok(semaphore.acquire_owned().await),
        };
        if acquired.is_err() {
            drop_if_idle(self, tenant);
        }
        match acquired {
            Ok(Ok(permit)) => Ok(Pass { _permit: permit, gate: self.clone(), tenant: tenant.to_string() }),
            _ => Err(ApiError::Busy(self.busy.clone())),
        }
    }

    /// Forgets the tenant's semaphore once no operation holds or waits for it (only the map
    /// holds it then, and the pass being dropped).
    fn forget_idle(&self, tenant: &str) {
        let mut tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = tenants.get(tenant) {
            // the map's reference and the dropped pass's permit's semaphore reference
            if Arc::strong_count(s) <= 2 && s.available_permits() + 1 >= self.share {
                tenants.remove(tenant);
            }
        }
    }

    /// The number of tenants the gate remembers (for tests).
    pub fn tenants(&self) -> usize {
        self.tenants.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// After a wait that timed out: forget the tenant if nothing else holds its semaphore.
fn drop_if_idle(gate: &Gate, tenant: &str) {
    let mut tenants = gate.tenants.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = tenants.get(tenant) {
        if Arc::strong_count(s) == 1 && s.available_permits() == gate.share {
            tenants.remove(tenant);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tenant_gets_its_share_and_another_tenant_gets_in() {
        let gate = Gate::new(2, Duration::from_millis(50));
        let a1 = gate.enter("a").await.unwrap();
        let _a2 = gate.enter("a").await.unwrap();
        // the third of tenant a waits, then is refused
        let refused = gate.enter("a").await;
        assert!(
            matches!(&refused, Err(ApiError::Busy(m)) if m.contains("2 database operations")),
            "{:?}",
            refused.err()
        );
        // tenant b is not held by a
        let b = gate.enter("b").await.unwrap();
        drop(b);
        // a place freed is taken by the next
        drop(a1);
        let _a3 = gate.enter("a").await.unwrap();
    }

    #[tokio::test]
    async fn a_waiting_operation_gets_the_place_freed() {
        let gate = Gate::new(1, Duration::from_secs(5));
        let first = gate.enter("a").await.unwrap();
        let g = gate.clone();
        let waiting = tokio::spawn(async move { g.enter("a").await.map(|_| ()) });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(first);
        assert!(waiting.await.unwrap().is_ok());
    }

    #[tokio::test]
    async fn a_named_gate_says_what_it_shares() {
        let gate = Gate::named(1, Duration::from_millis(10), "things under way (--things)");
        let held = gate.enter("a").await.unwrap();
        let refused = gate.enter("a").await;
        assert!(
            matches!(&refused, Err(ApiError::Busy(m)) if m == "this tenant has 1 things under way (--things); try again shortly"),
            "{:?}",
            refused.err()
        );
        // without a limit, a wait ends when the place frees
        let g = gate.clone();
        let waiting = tokio::spawn(async move { g.enter_within("a", None).await.map(|_| ()) });
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(!waiting.is_finished());
        drop(held);
        assert!(waiting.await.unwrap().is_ok());
        assert_eq!(gate.tenants(), 0);
    }

    #[tokio::test]
    async fn idle_tenants_are_forgotten() {
        let gate = Gate::new(2, Duration::from_millis(10));
        for t in ["a", "b", "c"] {
            let p = gate.enter(t).await.unwrap();
            drop(p);
        }
        assert_eq!(gate.tenants(), 0);
        let _held = gate.enter("a").await.unwrap();
        assert_eq!(gate.tenants(), 1);
    }
}
