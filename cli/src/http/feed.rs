//! The server's one feed connection: it follows the log. Every tick (`--feed-tick`, 100 ms
//! by default) one statement, `todo.changed_tenants`, asks which of the tenants with an open
//! hub have changes their hub's cursor did not see, and wakes those hubs, which read them
//! (`hub`). Nothing runs while no hub is open. No NOTIFY and no LISTEN: a write takes no lock
//! that another tenant's write waits on, and no role learns anything of another tenant's
//! writes.
//!
//! The connection is a dedicated tokio-postgres client (not from the pool), with a statement
//! timeout. When it fails, the next tick connects again (warning at most once per outage);
//! meanwhile nothing is lost: the hubs' cursors stay where they were, so the first probe
//! after reconnecting finds whatever committed meanwhile. Past `PER_STATEMENT` tenants, a
//! tick asks in several statements.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::MissedTickBehavior;
use tokio_postgres::Client;

use crate::tls::Target;

/// The most tenants one statement asks about (the function takes at most 10,000).
const PER_STATEMENT: usize = 1000;
/// How long a probe may go unanswered (a server gone without closing the connection) before
/// the connection is dropped; the statement itself times out at 10 s.
const TIMEOUT: Duration = Duration::from_secs(15);
const CHANGED: &str = "SELECT todo.changed_tenants($1::text[], $2::text[])";

/// A hub the feed watches: its cursor once it has one, and what wakes it.
struct Watched {
    cursor: Option<String>,
    wake: Arc<Notify>,
}

/// The handle the hubs use; cheap to clone.
#[derive(Clone)]
pub struct Feed {
    watched: Arc<Mutex<HashMap<String, Watched>>>,
}

impl Feed {
    /// Starts the feed's task, polling every `tick` through a connection to `connection`; it
    /// runs as long as the process does.
    pub fn start(connection: Target, tick: Duration) -> Feed {
        let feed = Feed { watched: Arc::new(Mutex::new(HashMap::new())) };
        tokio::spawn(run(connection, tick, feed.clone()));
        feed
    }

    fn watched(&self) -> std::sync::MutexGuard<'_, HashMap<String, Watched>> {
        self.watched.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Watches `tenant` for the hub woken by `wake` (replacing any earlier hub of it); it is
    /// probed once `moved` gives it a cursor.
    pub fn watch(&self, tenant: &str, wake: Arc<Notify>) {
        self.watched().insert(tenant.to_string(), Watched { cursor: None, wake });
    }

    /// The hub woken by `wake` has read up to `cursor`: later probes ask from there.
    pub fn moved(&self, tenant: &str, wake: &Arc<Notify>, cursor: &str) {
        if let Some(w) = self.watched().get_mut(tenant).filter(|w| Arc::ptr_eq(&w.wake, wake)) {
            w.cursor = Some(cursor.to_string());
        }
    }

    /// Stops watching `tenant` for the hub woken by `wake` (a newer hub of it stays).
    pub fn unwatch(&self, tenant: &str, wake: &Arc<Notify>) {
        let mut watched = self.watched();
        if watched.get(tenant).is_some_and(|w| Arc::ptr_eq(&w.wake, wake)) {
            watched.remove(tenant);
        }
    }

    /// The tenants to probe, with their cursors.
    fn probes(&self) -> Vec<(String, String)> {
        self.watched().iter().filter_map(|(t, w)| w.cursor.clone().map(|c| (t.clone(), c))).collect()
    }

    /// Wakes the hubs of `tenants`.
    fn wake(&self, tenants: &[String]) {
        let watched = self.watched();
        for t in tenants {
            if let Some(w) = watched.get(t) {
                w.wake.notify_one();
            }
        }
    }
}

async fn connect(connection: &Target) -> Result<Client, String> {
    let (client, conn) = connection.connect().await.map_err(|e| crate::tls::connect_error(&e))?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::warn!("feed connection: {}", crate::db::error_text(&e));
        }
    });
    client.batch_execute("SET statement_timeout = '10s'").await.map_err(|e| crate::db::error_text(&e))?;
    Ok(client)
}

/// The tenants among `probes` with changes, asked `PER_STATEMENT` at a time.
async fn changed(client: &Client, probes: &[(String, String)]) -> Result<Vec<String>, String> {
    let mut changed = Vec::new();
    for chunk in probes.chunks(PER_STATEMENT) {
        let tenants: Vec<&str> = chunk.iter().map(|(t, _)| t.as_str()).collect();
        let cursors: Vec<&str> = chunk.iter().map(|(_, c)| c.as_str()).collect();
        let row = tokio::time::timeout(TIMEOUT, client.query_one(CHANGED, &[&tenants, &cursors]))
            .await
            .map_err(|_| format!("no answer in {}s", TIMEOUT.as_secs()))?
            .map_err(|e| crate::db::error_text(&e))?;
        changed.extend(row.try_get::<_, Vec<String>>(0).map_err(|e| e.to_string())?);
    }
    Ok(changed)
}

/// The task: every tick, probe the watched tenants and wake the hubs of those that changed.
async fn run(connection: Target, tick: Duration, feed: Feed) {
    let mut ticks = tokio::time::interval(tick);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut client: Option<Client> = None;
    let mut failing = false;
    loop {
        ticks.tick().await;
        let probes = feed.probes();
        if probes.is_empty() {
            continue;
        }
        if client.as_ref().is_none_or(Client::is_closed) {
            client = match connect(&connection).await {
                Ok(c) => Some(c),
                Err(e) => {
                    if !failing {
                        tracing::warn!("feed connection: {e}; retrying every tick");
                        failing = true;
                    }
                    continue;
                }
            };
        }
        let Some(c) = client.as_ref() else { continue };
        match changed(c, &probes).await {
            Ok(tenants) => {
                if failing {
                    tracing::warn!("feed connection back; reading what changed meanwhile");
                    failing = false;
                }
                feed.wake(&tenants);
            }
            Err(e) => {
                if !failing {
                    tracing::warn!("feed: {e}; retrying every tick");
                    failing = true;
                }
                client = None;
            }
        }
    }
}
