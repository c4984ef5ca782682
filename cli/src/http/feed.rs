//! The server's one feed connection: it follows the log. Every tick (`--feed-tick`, 100 ms
//! by default) it finds which of the tenants with an open hub have changes their hub's cursor
//! did not see, and wakes those hubs, which read them (`hub`). No NOTIFY and no LISTEN: a
//! write takes no lock that another tenant's write waits on, and no role learns anything of
//! another tenant's writes. Two sources (`--feed`):
//!
//! - `log` (the default): one statement, `todo.changed_tenants`, probes every watched
//!   tenant's events from its hub's cursor (past `PER_STATEMENT` tenants, a tick asks in
//!   several statements). Nothing runs while no hub is open.
//! - `logical`: `pg_logical_slot_get_binary_changes` decodes the inserts into `todo.events`
//!   from a replication slot of this service (`--feed-slot`, pgoutput, the publication
//!   `--feed-publication`; the slot is made when missing), and only their `tenant_id` is read
//!   (`decode`): its cost follows what was written, not how many tenants are watched. Read
//!   every tick even with no hub open, so the slot holds back no WAL. Decoding bypasses
//!   row-level security, so it only says whom to wake: each hub reads its changes acting for
//!   its tenant. When the slot cannot be read (dropped, invalidated by
//!   `max_slot_wal_keep_size`, no REPLICATION privilege) the feed follows the cursors instead,
//!   and tries to make the slot again every 30 s.
//!
//! The connection is a dedicated tokio-postgres client (not from the pool), with a statement
//! timeout. When it fails, the next tick connects again (warning at most once per outage);
//! meanwhile nothing is lost: the hubs' cursors stay where they were, so the first probe
//! after reconnecting finds whatever committed meanwhile.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::MissedTickBehavior;
use tokio_postgres::{Client, Statement};

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
    /// when the tick that last read every watched tenant's changes began (a tick with none to
    /// read counts): what the feed knows is at most this old
    current_at: Arc<Mutex<Option<tokio::time::Instant>>>,
}

impl Feed {
    /// Starts the feed's task, reading `source` every `tick` through a connection to
    /// `connection`; it runs as long as the process does.
    pub fn start(connection: Target, tick: Duration, source: Source) -> Feed {
        let feed = Feed { watched: Arc::new(Mutex::new(HashMap::new())), current_at: Arc::new(Mutex::new(None)) };
        tokio::spawn(run(connection, tick, feed.clone(), source));
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

    /// How far behind the feed is: the time since the tick that last read every watched
    /// tenant's changes began (about `--feed-tick` while it keeps up; growing while its reads
    /// fail); None before its first tick.
    pub fn lag(&self) -> Option<Duration> {
        self.current_at.lock().unwrap_or_else(|e| e.into_inner()).map(|at| at.elapsed())
    }

    /// The tick that began at `at` read every watched tenant's changes.
    fn current(&self, at: tokio::time::Instant) {
        *self.current_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
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

/// The feed's connection and its two statements, prepared once: a statement run unprepared
/// is two round trips and two transactions (its Parse and its Execute each end in a Sync).
struct Conn {
    client: Client,
    changed: Statement,
    decode: Statement,
}

async fn connect(connection: &Target) -> Result<Conn, String> {
    let (client, conn) = connection.connect().await.map_err(|e| crate::tls::connect_error(&e))?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            tracing::warn!("feed connection: {}", crate::db::error_text(&e));
        }
    });
    client.batch_execute("SET statement_timeout = '10s'").await.map_err(|e| crate::db::error_text(&e))?;
    let changed = client.prepare(CHANGED).await.map_err(|e| crate::db::error_text(&e))?;
    let decode = client.prepare(DECODE).await.map_err(|e| crate::db::error_text(&e))?;
    Ok(Conn { client, changed, decode })
}

/// The tenants among `probes` with changes, asked `PER_STATEMENT` at a time.
async fn changed(conn: &Conn, probes: &[(String, String)]) -> Result<Vec<String>, String> {
    let mut changed = Vec::new();
    for chunk in probes.chunks(PER_STATEMENT) {
        let tenants: Vec<&str> = chunk.iter().map(|(t, _)| t.as_str()).collect();
        let cursors: Vec<&str> = chunk.iter().map(|(_, c)| c.as_str()).collect();
        let row = tokio::time::timeout(TIMEOUT, conn.client.query_one(&conn.changed, &[&tenants, &cursors]))
            .await
            .map_err(|_| format!("no answer in {}s", TIMEOUT.as_secs()))?
            .map_err(|e| crate::db::error_text(&e))?;
        changed.extend(row.try_get::<_, Vec<String>>(0).map_err(|e| e.to_string())?);
    }
    Ok(changed)
}

/// Where the feed learns which tenants changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `todo.changed_tenants` with each hub's cursor (the default)
    Log,
    /// logical decoding of `todo.events` through the replication slot `slot` (pgoutput, the
    /// publication `publication`), falling back to `Log` while the slot is unusable
    Logical { slot: String, publication: String },
}

/// The most changes one tick decodes; the rest waits for the next tick.
const MAX_DECODED: i32 = 100_000;
const DECODE: &str = "SELECT data FROM pg_catalog.pg_logical_slot_get_binary_changes($1, NULL, $2,
    'proto_version', '1', 'publication_names', $3)";
/// How often a feed that fell back from a lost slot tries to make it again.
const SLOT_RETRY: Duration = Duration::from_secs(30);

/// The slot of a logical feed: whether it works now, what its messages said about the
/// relations, and the tenants found in the previous tick.
struct Slot {
    slot: String,
    publication: String,
    usable: bool,
    /// when the slot was last found unusable (a new one is tried `SLOT_RETRY` later)
    failed_at: Option<tokio::time::Instant>,
    relations: super::decode::Relations,
    previous: Vec<String>,
}

impl Slot {
    /// The tenants whose events were decoded since the last call (the slot moves on).
    async fn decode(&mut self, conn: &Conn) -> Result<Vec<String>, String> {
        let rows = tokio::time::timeout(
            TIMEOUT,
            conn.client.query(&conn.decode, &[&self.slot, &MAX_DECODED, &self.publication]),
        )
        .await
        .map_err(|_| format!("no answer in {}s", TIMEOUT.as_secs()))?
        .map_err(|e| crate::db::error_text(&e))?;
        let mut tenants: Vec<String> = Vec::new();
        for row in rows {
            let data: &[u8] = row.try_get(0).map_err(|e| e.to_string())?;
            if let Some(t) = self.relations.tenant(data)? {
                if !tenants.contains(&t) {
                    tenants.push(t);
                }
            }
        }
        Ok(tenants)
    }

    /// Makes the slot when it is missing (and drops it first when PostgreSQL invalidated it).
    /// Errors: on a distributed store (Citus writes the events on its workers: a slot of the
    /// coordinator decodes none of them), the database's.
    async fn ensure(&self, client: &Client) -> Result<(), String> {
        let citus: bool = client
            .query_one("SELECT pg_catalog.to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL", &[])
            .await
            .map_err(|e| crate::db::error_text(&e))?
            .get(0);
        if citus {
            let distributed: bool = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition WHERE logicalrelid = 'todo.todos'::regclass)",
                    &[],
                )
                .await
                .map_err(|e| crate::db::error_text(&e))?
                .get(0);
            if distributed {
                return Err("the store is distributed (Citus): its events are written on the workers, which a slot \
                            of this server does not decode"
                    .into());
            }
        }
        let status: Option<Option<String>> = client
            .query_opt("SELECT wal_status FROM pg_catalog.pg_replication_slots WHERE slot_name = $1", &[&self.slot])
            .await
            .map_err(|e| crate::db::error_text(&e))?
            .map(|r| r.get(0));
        if status == Some(Some("lost".to_string())) {
            client
                .execute("SELECT pg_catalog.pg_drop_replication_slot($1)", &[&self.slot])
                .await
                .map_err(|e| crate::db::error_text(&e))?;
        } else if status.is_some() {
            return Ok(());
        }
        client
            .execute("SELECT pg_catalog.pg_create_logical_replication_slot($1, 'pgoutput')", &[&self.slot])
            .await
            .map(|_| ())
            .map_err(|e| crate::db::error_text(&e))
    }
}

/// The task: every tick, find the tenants that changed (the hubs' cursors probed, or the slot
/// decoded) and wake their hubs.
async fn run(connection: Target, tick: Duration, feed: Feed, source: Source) {
    let mut ticks = tokio::time::interval(tick);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut client: Option<Conn> = None;
    let mut failing = false;
    let mut slot = match source {
        Source::Log => None,
        Source::Logical { slot, publication } => Some(Slot {
            slot,
            publication,
            usable: false,
            failed_at: None,
            relations: Default::default(),
            previous: Vec::new(),
        }),
    };
    loop {
        let began = ticks.tick().await;
        let probes = feed.probes();
        // a slot is read even with no hub open: what it holds back is WAL kept on disk
        if probes.is_empty() && slot.is_none() {
            feed.current(began);
            continue;
        }
        if client.as_ref().is_none_or(|c| c.client.is_closed()) {
            client = match connect(&connection).await {
                Ok(c) => Some(c),
                Err(e) => {
                    crate::metrics::global().feed_failure();
                    if !failing {
                        tracing::warn!("feed connection: {e}; retrying every tick");
                        failing = true;
                    }
                    continue;
                }
            };
        }
        let Some(c) = client.as_ref() else { continue };
        let found = match slot.as_mut() {
            Some(s) => logical_tick(c, s, &probes).await,
            None => changed(c, &probes).await,
        };
        match found {
            Ok(tenants) => {
                if failing {
                    tracing::warn!("feed connection back; reading what changed meanwhile");
                    failing = false;
                }
                feed.wake(&tenants);
                feed.current(began);
            }
            Err(e) => {
                crate::metrics::global().feed_failure();
                if !failing {
                    tracing::warn!("feed: {e}; retrying every tick");
                    failing = true;
                }
                client = None;
            }
        }
    }
}

/// One tick of a logical feed: the tenants decoded from the slot, with those of the previous
/// tick (a hub that read just after the commit was decoded may not have seen it yet: it
/// reads again a tick later). While the slot is unusable, the hubs' cursors are probed
/// instead, and every `SLOT_RETRY` the slot is made again; the tick that finds it usable
/// again also probes the cursors, for what committed meanwhile. Errors: the connection's.
async fn logical_tick(client: &Conn, s: &mut Slot, probes: &[(String, String)]) -> Result<Vec<String>, String> {
    if !s.usable && s.failed_at.is_none_or(|at| at.elapsed() >= SLOT_RETRY) {
        match s.ensure(&client.client).await {
            Ok(()) => {
                s.usable = true;
                if s.failed_at.is_some() {
                    tracing::warn!("feed: replication slot {:?} usable again", s.slot);
                }
                s.failed_at = None;
                s.relations = Default::default();
                // what committed while the slot was unusable: from the cursors
                return changed(client, probes).await;
            }
            Err(e) => {
                tracing::warn!(
                    "feed: replication slot {:?} cannot be made ({e}); following the log's cursors instead",
                    s.slot
                );
                s.failed_at = Some(tokio::time::Instant::now());
            }
        }
    }
    if !s.usable {
        return changed(client, probes).await;
    }
    match s.decode(client).await {
        Ok(tenants) => {
            let mut wake = std::mem::replace(&mut s.previous, tenants.clone());
            wake.extend(tenants);
            Ok(wake)
        }
        Err(e) if client.client.is_closed() => Err(e),
        Err(e) => {
            tracing::warn!("feed: replication slot {:?}: {e}; following the log's cursors instead", s.slot);
            s.usable = false;
            s.failed_at = Some(tokio::time::Instant::now());
            changed(client, probes).await
        }
    }
}
