//! The SSE hubs: one per tenant with subscribers, each a broadcast of messages, a mutex and
//! the hub's cursor (`todo.changes_since`). On a notification of the tenant's channel the hub
//! reads, under its mutex, what changed since its cursor and broadcasts it (bursts of
//! notifications coalesce into one read); a new subscriber, under the same mutex, subscribes
//! to the broadcast and then reads its catch-up (`Last-Event-ID`), so no older state reaches a
//! client after a newer one, and none is missed. A subscriber that falls behind the broadcast
//! is disconnected: it reconnects with its last id and catches up. The last subscriber of a
//! tenant to leave closes its hub (UNLISTEN).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::Bytes;
use deadpool_postgres::Pool;
use futures::Stream;
use serde_json::Value;
use tokio::sync::{broadcast, watch, Notify};
use tokio::time::{interval_at, Instant, Interval};

use super::errors::ApiError;
use super::events::{batch, connected, valid_cursor, PING};
use super::listener::Listener;
use super::work;

/// Messages a subscriber may fall behind by before it is disconnected.
const BACKLOG: usize = 4096;
/// Time between keep-alive comments.
const PING_EVERY: Duration = Duration::from_secs(15);
const CHANGES: &str = "SELECT todo.changes_since($1)";

/// One tenant's hub.
struct Hub {
    tenant: String,
    sender: broadcast::Sender<Bytes>,
    /// the cursor up to which changes have been broadcast; None until the hub's first
    /// subscriber has opened it (LISTEN, then the current cursor)
    cursor: tokio::sync::Mutex<Option<String>>,
    /// the tenant's channel, once read
    channel: OnceLock<String>,
    /// woken by the tenant's notifications (and by a reconnect of the LISTEN connection)
    wake: Arc<Notify>,
    /// woken when the last subscriber leaves: the hub's task ends
    closed: Notify,
}

struct Entry {
    hub: Arc<Hub>,
    subscribers: usize,
}

/// Every hub of the server, by tenant.
pub struct Hubs {
    tenants: Mutex<HashMap<String, Entry>>,
    listener: Listener,
    pool: Pool,
    /// true once the server shuts down: every stream ends
    shutdown: watch::Receiver<bool>,
}

/// A subscriber's hold on its hub; dropping it (the stream ends or the client goes away)
/// leaves the hub, and the last to leave closes it.
struct Subscription {
    hubs: Arc<Hubs>,
    hub: Arc<Hub>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut tenants = self.hubs.tenants.lock().unwrap_or_else(|e| e.into_inner());
        let Some(entry) = tenants.get_mut(&self.hub.tenant) else { return };
        if !Arc::ptr_eq(&entry.hub, &self.hub) {
            return;
        }
        entry.subscribers -= 1;
        if entry.subscribers == 0 {
            tenants.remove(&self.hub.tenant);
            // under the lock: this UNLISTEN is sent before a new hub of the tenant can LISTEN
            if let Some(channel) = self.hub.channel.get() {
                self.hubs.listener.unlisten(channel);
            }
            self.hub.closed.notify_one();
        }
    }
}

/// What a subscriber's stream holds: the messages to send first, the broadcast, the ping
/// timer, the shutdown signal, its hold on the hub.
struct Subscriber {
    first: VecDeque<String>,
    receiver: broadcast::Receiver<Bytes>,
    ping: Interval,
    shutdown: watch::Receiver<bool>,
    _subscription: Subscription,
}

impl Hubs {
    /// No hubs yet; they are opened by subscribers, read from `pool`, LISTEN through
    /// `listener` and end their streams when `shutdown` turns true.
    pub fn new(pool: Pool, listener: Listener, shutdown: watch::Receiver<bool>) -> Arc<Hubs> {
        Arc::new(Hubs { tenants: Mutex::new(HashMap::new()), listener, pool, shutdown })
    }

    /// Subscribes to the tenant's changes: a stream of SSE text that starts with
    /// `server.connected` (with the current cursor as its id), or, after `last_event_id` (a
    /// cursor), with `server.connected` and the lists of every conversation changed since
    /// (the last message with the new cursor as its id; without changes, `server.connected`
    /// carries it), then every change as it commits, `: ping` every 15 s. The stream ends at
    /// shutdown or when the subscriber falls more than 4,096 messages behind.
    /// Errors: 400 `malformed Last-Event-ID` (not a snapshot, or one the database refuses,
    /// 22P02); a database error's answer (503/500).
    pub async fn subscribe(
        self: &Arc<Self>,
        tenant: &str,
        last_event_id: Option<&str>,
    ) -> Result<impl Stream<Item = Result<Bytes, Infallible>> + Send + 'static, ApiError> {
        let malformed = || ApiError::BadRequest("malformed Last-Event-ID".into());
        if last_event_id.is_some_and(|id| !valid_cursor(id)) {
            return Err(malformed());
        }
        let subscription = self.join(tenant);
        let hub = subscription.hub.clone();
        let mut cursor = hub.cursor.lock().await;
        if cursor.is_none() {
            *cursor = Some(self.open(&hub).await?);
        }
        let receiver = hub.sender.subscribe();
        let first = match last_event_id {
            None => vec![connected(cursor.as_deref())],
            Some(id) => {
                let answer: Value = work::one(&self.pool, tenant, None, CHANGES, &[&id]).await.map_err(|f| match f
                    .sqlstate
                    .as_deref()
                {
                    Some("22P02") => malformed(),
                    _ => f.answer,
                })?;
                let (now, messages) = batch(&answer).map_err(ApiError::Internal)?;
                if messages.is_empty() {
                    vec![connected(Some(&now))]
                } else {
                    std::iter::once(connected(None)).chain(messages).collect()
                }
            }
        };
        drop(cursor);
        let subscriber = Subscriber {
            first: first.into(),
            receiver,
            ping: interval_at(Instant::now() + PING_EVERY, PING_EVERY),
            shutdown: self.shutdown.clone(),
            _subscription: subscription,
        };
        Ok(futures::stream::unfold(subscriber, next))
    }

    /// Joins the tenant's hub, opening a new one (and its task) when it has none.
    fn join(self: &Arc<Self>, tenant: &str) -> Subscription {
        let mut tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        let entry = tenants.entry(tenant.to_string()).or_insert_with(|| {
            let hub = Arc::new(Hub {
                tenant: tenant.to_string(),
                sender: broadcast::channel(BACKLOG).0,
                cursor: tokio::sync::Mutex::new(None),
                channel: OnceLock::new(),
                wake: Arc::new(Notify::new()),
                closed: Notify::new(),
            });
            tokio::spawn(run(self.pool.clone(), hub.clone()));
            Entry { hub, subscribers: 0 }
        });
        entry.subscribers += 1;
        Subscription { hubs: self.clone(), hub: entry.hub.clone() }
    }

    /// Opens a hub (its cursor's mutex held): reads the tenant's channel, LISTENs it, then
    /// reads the current cursor, in that order, so every commit after the cursor is notified.
    /// Returns the cursor. Errors: a database error's answer.
    async fn open(&self, hub: &Hub) -> Result<String, ApiError> {
        let channel: String = work::one(&self.pool, &hub.tenant, None, "SELECT todo.channel()", &[]).await?;
        let _ = hub.channel.set(channel.clone());
        self.listener.listen(&channel, hub.wake.clone()).await;
        let answer: Value = work::one(&self.pool, &hub.tenant, None, CHANGES, &[&None::<&str>]).await?;
        let (cursor, _) = batch(&answer).map_err(ApiError::Internal)?;
        Ok(cursor)
    }
}

/// A hub's task: on each wake, broadcast what changed since the cursor; on an error, say so
/// and try again a second later; end when the hub closes.
async fn run(pool: Pool, hub: Arc<Hub>) {
    loop {
        tokio::select! {
            _ = hub.wake.notified() => {}
            _ = hub.closed.notified() => return,
        }
        if let Err(e) = refresh(&pool, &hub).await {
            eprintln!("pg_todos serve: events of tenant {:?}: {e}", hub.tenant);
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(1)) => hub.wake.notify_one(),
                _ = hub.closed.notified() => return,
            }
        }
    }
}

/// Under the hub's mutex: `changes_since(cursor)`, one message per change broadcast (the last
/// with the new cursor as its id), the cursor moved on. Errors: the database's, or an answer
/// without a cursor; the cursor stays then.
async fn refresh(pool: &Pool, hub: &Hub) -> Result<(), String> {
    let mut cursor = hub.cursor.lock().await;
    let Some(since) = cursor.clone() else { return Ok(()) };
    let answer: Value = work::one(pool, &hub.tenant, None, CHANGES, &[&since]).await.map_err(|f| {
        let (_, body) = f.answer.parts();
        match f.answer {
            ApiError::Internal(cause) => cause,
            _ => body["error"].as_str().unwrap_or_default().to_string(),
        }
    })?;
    let (now, messages) = batch(&answer)?;
    for m in messages {
        // no receivers is no error: the hub is closing
        let _ = hub.sender.send(Bytes::from(m));
    }
    *cursor = Some(now);
    Ok(())
}

/// The stream's next piece of text: the first messages, then broadcasts and pings; None (the
/// end) at shutdown or when the subscriber fell behind.
async fn next(mut s: Subscriber) -> Option<(Result<Bytes, Infallible>, Subscriber)> {
    if let Some(m) = s.first.pop_front() {
        return Some((Ok(Bytes::from(m)), s));
    }
    let piece = tokio::select! {
        r = s.receiver.recv() => r.ok()?,
        _ = s.ping.tick() => Bytes::from_static(PING.as_bytes()),
        _ = s.shutdown.wait_for(|down| *down) => return None,
    };
    Some((Ok(piece), s))
}
