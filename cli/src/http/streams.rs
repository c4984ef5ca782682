//! The open event streams, counted: at most `max_per_token` per bearer token and
//! `max_per_tenant` per tenant, whatever its tokens (past either 429), and `max_total` in all
//! (past it 503), so that one tenant's tokens cannot take every stream of the service. Each
//! stream holds a `Slot`. Its token is checked with every batch of changes it is about to
//! receive (`hub`), so that nothing committed after the token's revocation reaches it; and,
//! for streams with nothing to receive, every `token_recheck` seconds (one statement for
//! every token with a stream open). The streams of a token that no longer authenticates
//! (revoked) end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::Pool;
use tokio::sync::watch;

use crate::db::errors::ApiError;

pub struct Streams {
    max_total: usize,
    max_per_tenant: usize,
    max_per_token: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    total: usize,
    /// open streams by tenant (only tenants with one open)
    tenants: HashMap<String, usize>,
    tokens: HashMap<String, Token>,
}

struct Token {
    open: usize,
    /// turns true when the token no longer authenticates
    revoked: watch::Sender<bool>,
}

/// One open stream's place; dropping it gives the place back.
pub struct Slot {
    streams: Arc<Streams>,
    tenant: String,
    token: String,
    /// turns true when the stream's token is found revoked
    pub revoked: watch::Receiver<bool>,
}

impl Slot {
    /// The stream's bearer token.
    pub fn token(&self) -> &str {
        &self.token
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inner = self.streams.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.total = inner.total.saturating_sub(1);
        if let Some(n) = inner.tenants.get_mut(&self.tenant) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                inner.tenants.remove(&self.tenant);
            }
        }
        if let Some(t) = inner.tokens.get_mut(&self.token) {
            t.open = t.open.saturating_sub(1);
            if t.open == 0 {
                inner.tokens.remove(&self.token);
            }
        }
    }
}

impl Streams {
    pub fn new(max_total: usize, max_per_tenant: usize, max_per_token: usize) -> Arc<Streams> {
        Arc::new(Streams { max_total, max_per_tenant, max_per_token, inner: Mutex::new(Inner::default()) })
    }

    /// A place for one more stream of `token`, a token of `tenant`. Errors: 429 (`TooMany`)
    /// when the token has `max_per_token` streams open or the tenant `max_per_tenant` (a
    /// caller past its own share: waiting does not help), else 503 (`Busy`) when the service
    /// has `max_total`.
    pub fn open(self: &Arc<Self>, tenant: &str, token: &str) -> Result<Slot, ApiError> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let open = inner.tokens.get(token).map_or(0, |t| t.open);
        if open >= self.max_per_token {
            return Err(ApiError::TooMany(format!(
                "this token has {} event streams open, as many as one token may; close one first",
                self.max_per_token
            )));
        }
        if inner.tenants.get(tenant).is_some_and(|n| *n >= self.max_per_tenant) {
            return Err(ApiError::TooMany(format!(
                "this tenant has {} event streams open, as many as one tenant may (--max-streams-per-tenant); close one first",
                self.max_per_tenant
            )));
        }
        if inner.total >= self.max_total {
            return Err(ApiError::Busy(format!(
                "the service has {} event streams open, as many as it serves; try again later",
                self.max_total
            )));
        }
        inner.total += 1;
        *inner.tenants.entry(tenant.to_string()).or_insert(0) += 1;
        let entry = inner
            .tokens
            .entry(token.to_string())
            .or_insert_with(|| Token { open: 0, revoked: watch::channel(false).0 });
        entry.open += 1;
        let revoked = entry.revoked.subscribe();
        Ok(Slot { streams: self.clone(), tenant: tenant.to_string(), token: token.to_string(), revoked })
    }

    /// The tokens with a stream open.
    pub fn tokens(&self) -> Vec<String> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).tokens.keys().cloned().collect()
    }

    /// Ends every stream of these tokens.
    pub fn revoke(&self, tokens: &[String]) {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        for t in tokens {
            if let Some(entry) = inner.tokens.get(t) {
                let _ = entry.revoked.send(true);
            }
        }
    }

    /// Open streams in all (for tests).
    pub fn open_count(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).total
    }
}

/// Which of `tokens` (`$1`, text[]) no longer authenticate: one statement over all of them.
pub const DEAD_TOKENS: &str =
    "SELECT coalesce(array_agg(u.t), '{}') FROM unnest($1::text[]) AS u(t) WHERE NOT EXISTS (SELECT 1 FROM todo.authenticate(u.t))";

/// Every `every`, checks the tokens of the open streams and ends the streams of those that
/// no longer authenticate. A check that fails (the database away) ends nothing and is said
/// on stderr (never a token). Runs until the process ends.
pub async fn recheck_tokens(streams: Arc<Streams>, pool: Pool, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let tokens = streams.tokens();
        if tokens.is_empty() {
            continue;
        }
        let check = async {
            let db = pool.get().await.map_err(|e| e.to_string())?;
            let statement = db.prepare_cached(DEAD_TOKENS).await.map_err(|e| crate::db::error_text(&e))?;
            let row = db.query_one(&statement, &[&tokens]).await.map_err(|e| crate::db::error_text(&e))?;
            Ok::<Vec<String>, String>(row.get(0))
        };
        match tokio::time::timeout(every.max(Duration::from_secs(2)), check).await {
            Ok(Ok(dead)) if !dead.is_empty() => {
                tracing::info!("{} token(s) revoked: their event streams end", dead.len());
                streams.revoke(&dead);
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!("checking the tokens of open event streams: {e}"),
            Err(_) => tracing::warn!("checking the tokens of open event streams: no answer in time"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_token_and_in_all() {
        let s = Streams::new(3, 3, 2);
        let a1 = s.open("t", "a").unwrap();
        let _a2 = s.open("t", "a").unwrap();
        assert!(matches!(s.open("t", "a"), Err(ApiError::TooMany(m)) if m.contains("this token has 2 event streams")));
        let _b1 = s.open("t", "b").unwrap();
        assert!(matches!(s.open("u", "c"), Err(ApiError::Busy(m)) if m.contains("3 event streams")));
        drop(a1);
        assert_eq!(s.open_count(), 2);
        let _c1 = s.open("u", "c").unwrap();
        let mut tokens = s.tokens();
        tokens.sort();
        assert_eq!(tokens, ["a", "b", "c"]);
    }

    #[test]
    fn a_tenant_gets_its_share_whatever_its_tokens() {
        let s = Streams::new(4, 2, 8);
        let a = s.open("acme", "a").unwrap();
        let _b = s.open("acme", "b").unwrap();
        // a third token of the tenant: refused, though the service has room
        assert!(matches!(
            s.open("acme", "c"),
            Err(ApiError::TooMany(m)) if m == "this tenant has 2 event streams open, as many as one tenant may (--max-streams-per-tenant); close one first"
        ));
        assert_eq!(s.open_count(), 2);
        // another tenant is not held by it
        let _g1 = s.open("globex", "g").unwrap();
        let _g2 = s.open("globex", "h").unwrap();
        // the service is full: a tenant past its share still hears of its share first
        assert!(matches!(s.open("acme", "c"), Err(ApiError::TooMany(_))));
        assert!(matches!(s.open("initech", "i"), Err(ApiError::Busy(_))));
        // a place given back is the tenant's again
        drop(a);
        let _c = s.open("acme", "c").unwrap();
        assert_eq!(s.inner.lock().unwrap().tenants.len(), 2);
    }

    #[test]
    fn revoking_a_token_ends_its_streams_only() {
        let s = Streams::new(10, 10, 10);
        let a1 = s.open("t", "a").unwrap();
        let a2 = s.open("t", "a").unwrap();
        let b = s.open("t", "b").unwrap();
        s.revoke(&["a".to_string(), "unknown".to_string()]);
        assert!(*a1.revoked.borrow() && *a2.revoked.borrow());
        assert!(!*b.revoked.borrow());
        drop((a1, a2));
        assert_eq!(s.tokens(), ["b"]);
        drop(b);
        assert!(s.inner.lock().unwrap().tenants.is_empty());
    }
}
