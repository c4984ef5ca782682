//! The SSE hubs: one per tenant with subscribers, each with a mutex, the hub's cursor
//! (`todo.changes_since`) and the queues of its live subscribers. When the feed finds that the
//! tenant changed since the hub's cursor (`feed`: one probe per tick for every hub), the hub
//! reads, under its mutex, what changed since its cursor, a page at a time, and puts each
//! message on every live subscriber's queue (what changed within a tick comes in one read).
//!
//! A subscriber with a `Last-Event-ID` first catches up on its own, a page at a time as it
//! reads them (never the whole catch-up in memory), then joins: under the hub's mutex it reads
//! what changed since its catch-up began, and if that is one page, it takes its place among
//! the live subscribers; otherwise it catches up again from there. So no older state reaches a
//! client after a newer one, and none is missed.
//!
//! Memory is bounded by bytes. A page is read from the database's text straight into its
//! messages' text (`events::page`): about its own size, never a tree of values. A page a
//! subscriber reads for itself (its catch-up, its join) needs a place among its tenant's
//! `--tenant-catch-ups`, taken before the read and given back only once the last byte of the
//! page has left the process (the page's buffer owns the place, and the connection holds the
//! buffer until it has written it): a tenant's catch-ups hold at most that many pages at once,
//! however many of its clients reconnect. A subscriber waits for a place at most
//! `--tenant-wait` when it opens (then 503), and as long as it takes later. The hub's pages are
//! read once for all its live subscribers; a subscriber's queue holds at most
//! `--stream-buffer` bytes (or one page, whatever its size); a subscriber that falls further
//! behind is ended, and reconnects with its last id to catch up. The last subscriber of a
//! tenant to leave closes its hub (the feed stops probing it). Every stream ends at shutdown.
//!
//! Revocation: every read of changes is followed, in its transaction, by a check of the
//! tokens of the streams it is for (the hub's live subscribers, or the one stream catching
//! up), and the streams of a token found revoked end before anything of that read is queued
//! or sent. The check runs after the read, so a token it finds live was revoked, if at all,
//! after everything the read saw had committed: nothing committed after a revocation reaches
//! the token's streams. A stream with nothing to receive ends within `--token-recheck`
//! seconds (`streams`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use futures::Stream;
use tokio::sync::{watch, Notify};
use tokio::time::{interval_at, Instant, Interval};
use tokio_postgres::types::{FromSql, ToSql, Type};

use super::events::{connected, page, valid_cursor, Page, PING};
use super::feed::Feed;
use super::streams::{Slot, Streams, DEAD_TOKENS};
use crate::db::errors::{ApiError, Refusal};
use crate::db::gate::{Gate, Pass};
use crate::db::work::{self, Db};

/// Time between keep-alive comments.
const PING_EVERY: Duration = Duration::from_secs(15);
/// Conversations per page of `todo.changes_since` (the function also stops a page at 256 KiB).
pub const PAGE_SIZE: i32 = 32;
const CHANGES: &str = "SELECT todo.changes_since($1::text, $2::text, $3::integer)";

/// A jsonb (or json) value as the text the server sent, borrowed from the row: no copy.
struct JsonText<'a>(&'a str);

impl<'a> FromSql<'a> for JsonText<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        // jsonb's binary form is a version byte (1) and the text
        let text =
            if *ty == Type::JSONB { raw.strip_prefix(&[1u8]).ok_or("jsonb of an unknown version")? } else { raw };
        Ok(JsonText(std::str::from_utf8(text)?))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSONB || *ty == Type::JSON
    }
}

/// A page's text and the place among its tenant's catch-ups it holds (none for the hub's
/// pages): the place is given back when the last `Bytes` of the page is dropped, that is once
/// the connection has written it all, or the stream has ended.
struct Held {
    text: Vec<u8>,
    _place: Option<Pass>,
}

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        &self.text
    }
}

/// The page's text as bytes to send, holding `place` until they are sent.
fn held(page: Page, place: Option<Pass>) -> Bytes {
    Bytes::from_owner(Held { text: page.text, _place: place })
}

/// A live subscriber's queue: messages in order, their bytes counted against a budget.
struct Queue {
    state: Mutex<QueueState>,
    ready: Notify,
    budget: usize,
}

#[derive(Default)]
struct QueueState {
    items: VecDeque<Bytes>,
    bytes: usize,
    /// fell more than the budget behind: the stream ends
    overflowed: bool,
}

enum Next {
    Message(Bytes),
    Empty,
    Overflowed,
}

impl Queue {
    fn new(budget: usize) -> Queue {
        Queue { state: Mutex::new(QueueState::default()), ready: Notify::new(), budget }
    }

    /// Queues `m`, unless it would take the queue past its budget (an empty queue takes any
    /// one message): then the queue is emptied and marked overflowed.
    fn push(&self, m: &Bytes) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.overflowed {
            return;
        }
        if !s.items.is_empty() && s.bytes + m.len() > self.budget {
            s.overflowed = true;
            s.items.clear();
            s.bytes = 0;
        } else {
            s.bytes += m.len();
            s.items.push_back(m.clone());
        }
        drop(s);
        self.ready.notify_one();
    }

    fn pop(&self) -> Next {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.overflowed {
            return Next::Overflowed;
        }
        match s.items.pop_front() {
            Some(m) => {
                s.bytes -= m.len();
                Next::Message(m)
            }
            None => Next::Empty,
        }
    }
}

/// One tenant's hub.
struct Hub {
    tenant: String,
    /// the cursor up to which changes have been queued; None until the hub's first
    /// subscriber has opened it (the current cursor, which the feed probes from)
    cursor: tokio::sync::Mutex<Option<String>>,
    /// the live subscribers' queues and tokens, by subscriber
    queues: Mutex<HashMap<u64, Live>>,
    /// woken by the feed when the tenant changed since the cursor
    wake: Arc<Notify>,
    /// woken when the last subscriber leaves: the hub's task ends
    closed: Notify,
}

/// A live subscriber: its queue and its bearer token.
struct Live {
    queue: Arc<Queue>,
    token: String,
}

impl Hub {
    fn send(&self, m: Bytes) {
        let queues: Vec<Arc<Queue>> =
            self.queues.lock().unwrap_or_else(|e| e.into_inner()).values().map(|l| l.queue.clone()).collect();
        for q in queues {
            q.push(&m);
        }
    }

    /// The tokens of the live subscribers, each once.
    fn tokens(&self) -> Vec<String> {
        let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let mut tokens: Vec<String> = queues.values().map(|l| l.token.clone()).collect();
        tokens.sort_unstable();
        tokens.dedup();
        tokens
    }

    /// Ends the streams of `dead` tokens (`streams`) and takes their subscribers off the live
    /// ones, before anything more is queued.
    fn drop_revoked(&self, streams: &Streams, dead: &[String]) {
        if dead.is_empty() {
            return;
        }
        streams.revoke(dead);
        self.queues.lock().unwrap_or_else(|e| e.into_inner()).retain(|_, l| !dead.contains(&l.token));
        tracing::info!("{} token(s) revoked: their event streams end", dead.len());
    }
}

struct Entry {
    hub: Arc<Hub>,
    subscribers: usize,
}

/// Every hub of the server, by tenant.
pub struct Hubs {
    tenants: Mutex<HashMap<String, Entry>>,
    feed: Feed,
    db: Db,
    /// the open streams, whose tokens' revocation ends them
    streams: Arc<Streams>,
    /// each tenant's places for pages its subscribers read for themselves
    catch_ups: Arc<Gate>,
    /// bytes a subscriber may fall behind by
    budget: usize,
    next_id: std::sync::atomic::AtomicU64,
    /// true once the server shuts down: every stream ends
    shutdown: watch::Receiver<bool>,
}

/// A subscriber's hold on its hub; dropping it (the stream ends or the client goes away)
/// leaves the hub, and the last to leave closes it.
struct Subscription {
    hubs: Arc<Hubs>,
    hub: Arc<Hub>,
    id: u64,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.hub.queues.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
        let mut tenants = self.hubs.tenants.lock().unwrap_or_else(|e| e.into_inner());
        let Some(entry) = tenants.get_mut(&self.hub.tenant) else { return };
        if !Arc::ptr_eq(&entry.hub, &self.hub) {
            return;
        }
        entry.subscribers -= 1;
        if entry.subscribers == 0 {
            tenants.remove(&self.hub.tenant);
            self.hubs.feed.unwatch(&self.hub.tenant, &self.hub.wake);
            self.hub.closed.notify_one();
        }
    }
}

/// Where a subscriber's stream is.
enum Phase {
    /// catching up on its own: the pages of the changes since `since` after `after`; the
    /// round's cursor (its first page's) goes on the round's last message
    CatchUp { since: String, round: String, after: String },
    /// caught up to `position`: join the live subscribers, or catch up again
    Join { position: String },
    /// a live subscriber with its queue
    Live(Arc<Queue>),
}

/// What a subscriber's stream holds: the messages to send first, where it is, the ping timer,
/// the shutdown and revocation signals, its hold on the hub and its place among the streams.
struct Subscriber {
    pending: VecDeque<Bytes>,
    phase: Phase,
    ping: Interval,
    shutdown: watch::Receiver<bool>,
    subscription: Subscription,
    slot: Slot,
}

impl Hubs {
    /// No hubs yet; they are opened by subscribers, read through `db`, are woken by `feed`,
    /// end the streams of revoked tokens through `streams`, give a tenant's
    /// catch-ups the places of `catch_ups`, let a subscriber fall `budget` bytes behind and end
    /// their streams when `shutdown` turns true.
    pub fn new(
        db: Db,
        feed: Feed,
        streams: Arc<Streams>,
        catch_ups: Arc<Gate>,
        budget: usize,
        shutdown: watch::Receiver<bool>,
    ) -> Arc<Hubs> {
        Arc::new(Hubs {
            tenants: Mutex::new(HashMap::new()),
            feed,
            db,
            streams,
            catch_ups,
            budget,
            next_id: std::sync::atomic::AtomicU64::new(1),
            shutdown,
        })
    }

    /// Subscribes to the tenant's changes, holding `slot` (its place among the streams): a
    /// stream of SSE text that starts with `server.connected` (with the current cursor as its
    /// id), or, after `last_event_id` (a cursor), with `server.connected` and the lists of
    /// every conversation changed since, a page at a time (the last message with the new
    /// cursor as its id; without changes, `server.connected` carries it), then every change as
    /// it commits, `: ping` every 15 s. The stream ends at shutdown, when its token is revoked,
    /// or when the subscriber falls more than the budget behind.
    /// Errors: 400 `malformed Last-Event-ID` (not a snapshot, or one the database refuses,
    /// 22P02); 503 when the tenant's catch-ups hold every place for `--tenant-wait`; 401 when
    /// the token is found revoked with the first page of its catch-up; a database error's
    /// answer (503/500).
    pub async fn subscribe(
        self: &Arc<Self>,
        tenant: &str,
        last_event_id: Option<&str>,
        slot: Slot,
    ) -> Result<impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static, ApiError> {
        let malformed = || ApiError::BadRequest("malformed Last-Event-ID".into());
        if last_event_id.is_some_and(|id| !valid_cursor(id)) {
            return Err(malformed());
        }
        let subscription = self.join(tenant);
        let hub = subscription.hub.clone();
        let (pending, phase) = match last_event_id {
            None => {
                let mut cursor = hub.cursor.lock().await;
                if cursor.is_none() {
                    *cursor = Some(self.open(&hub).await?);
                }
                let queue = self.enlist(&subscription, slot.token());
                (vec![Bytes::from(connected(cursor.as_deref()))], Phase::Live(queue))
            }
            Some(id) => {
                {
                    let mut cursor = hub.cursor.lock().await;
                    if cursor.is_none() {
                        *cursor = Some(self.open(&hub).await?);
                    }
                }
                let place = self.catch_ups.enter(tenant).await?;
                let token = [slot.token().to_string()];
                let (first, dead) = read(&self.db, tenant, Some(id), None, None, &token).await.map_err(|f| match f
                    .sqlstate
                    .as_deref()
                {
                    Some("22P02") => malformed(),
                    _ => f.answer,
                })?;
                if !dead.is_empty() {
                    self.streams.revoke(&dead);
                    return Err(ApiError::Unauthorized(Refusal::Refused));
                }
                match first.next.clone() {
                    None if first.messages == 0 => {
                        (vec![Bytes::from(connected(Some(&first.cursor)))], Phase::Join { position: first.cursor })
                    }
                    None => {
                        let position = first.cursor.clone();
                        (vec![Bytes::from(connected(None)), held(first, Some(place))], Phase::Join { position })
                    }
                    Some(after) => {
                        let (since, round) = (id.to_string(), first.cursor.clone());
                        (
                            vec![Bytes::from(connected(None)), held(first, Some(place))],
                            Phase::CatchUp { since, round, after },
                        )
                    }
                }
            }
        };
        let subscriber = Subscriber {
            pending: pending.into_iter().collect(),
            phase,
            ping: interval_at(Instant::now() + PING_EVERY, PING_EVERY),
            shutdown: self.shutdown.clone(),
            subscription,
            slot,
        };
        Ok(futures::stream::unfold(subscriber, next))
    }

    /// The tenants with a hub, and the live subscribers of them all (the streams receiving
    /// changes as they commit; the other open streams are catching up).
    pub fn counts(&self) -> (usize, usize) {
        let hubs: Vec<Arc<Hub>> =
            self.tenants.lock().unwrap_or_else(|e| e.into_inner()).values().map(|e| e.hub.clone()).collect();
        let live = hubs.iter().map(|h| h.queues.lock().unwrap_or_else(|e| e.into_inner()).len()).sum();
        (hubs.len(), live)
    }

    /// Tells the tenant's live subscribers `message` (an SSE message with no id: a hint that
    /// is not in the change feed, such as a list made on the board, which records no event);
    /// nothing when the tenant has no hub. A subscriber still catching up does not get it.
    pub fn announce(&self, tenant: &str, message: &str) {
        let hub = self.tenants.lock().unwrap_or_else(|e| e.into_inner()).get(tenant).map(|e| e.hub.clone());
        if let Some(hub) = hub {
            hub.send(Bytes::from(message.to_string()));
        }
    }

    /// How far behind the feed that wakes the hubs is (`Feed::lag`).
    pub fn feed_lag(&self) -> Option<Duration> {
        self.feed.lag()
    }

    /// Joins the tenant's hub, opening a new one (and its task) when it has none.
    fn join(self: &Arc<Self>, tenant: &str) -> Subscription {
        let mut tenants = self.tenants.lock().unwrap_or_else(|e| e.into_inner());
        let entry = tenants.entry(tenant.to_string()).or_insert_with(|| {
            let hub = Arc::new(Hub {
                tenant: tenant.to_string(),
                cursor: tokio::sync::Mutex::new(None),
                queues: Mutex::new(HashMap::new()),
                wake: Arc::new(Notify::new()),
                closed: Notify::new(),
            });
            tokio::spawn(run(self.db.clone(), self.streams.clone(), self.feed.clone(), hub.clone()));
            Entry { hub, subscribers: 0 }
        });
        entry.subscribers += 1;
        let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Subscription { hubs: self.clone(), hub: entry.hub.clone(), id }
    }

    /// Makes the subscriber of `token` a live one (call with the hub's cursor mutex held): a
    /// queue of its own that every later change reaches.
    fn enlist(&self, subscription: &Subscription, token: &str) -> Arc<Queue> {
        let queue = Arc::new(Queue::new(self.budget));
        let live = Live { queue: queue.clone(), token: token.to_string() };
        subscription.hub.queues.lock().unwrap_or_else(|e| e.into_inner()).insert(subscription.id, live);
        queue
    }

    /// Opens a hub (its cursor's mutex held): reads the current cursor and has the feed
    /// probe the tenant from there, so every commit after the cursor wakes the hub. Returns
    /// the cursor. Errors: a database error's answer.
    async fn open(&self, hub: &Hub) -> Result<String, ApiError> {
        self.feed.watch(&hub.tenant, hub.wake.clone());
        let (first, _) = read(&self.db, &hub.tenant, None, None, None, &[]).await.map_err(|f| f.answer)?;
        self.feed.moved(&hub.tenant, &hub.wake, &first.cursor);
        Ok(first.cursor)
    }
}

/// One page of the tenant's changes since `since` (None: none, only the cursor), after
/// `after`, as messages (the last of a
/// last page with `round`, the batch's cursor, as its id: see `events::page`), and which of
/// `tokens` (the tokens of the streams it is for) no longer authenticate, checked in the same
/// transaction after the page was read (none checked when there are none). The page's text is
/// read from the row as it came, not copied first. Errors: the statements'.
async fn read(
    db: &Db,
    tenant: &str,
    since: Option<&str>,
    after: Option<&str>,
    round: Option<&str>,
    tokens: &[String],
) -> Result<(Page, Vec<String>), work::Failure> {
    let act = work::Act { tenant: tenant.to_string(), ..work::Act::default() };
    let page_params: [&(dyn ToSql + Sync); 3] = [&since, &after, &PAGE_SIZE];
    let check_params: [&(dyn ToSql + Sync); 1] = [&tokens];
    let statements: Vec<work::Statement<'_>> = if tokens.is_empty() {
        vec![(CHANGES, &page_params)]
    } else {
        vec![(CHANGES, &page_params), (DEAD_TOKENS, &check_params)]
    };
    let rows = work::rows(db, &act, &statements).await?;
    let internal = |e: String| work::Failure { sqlstate: None, answer: ApiError::Internal(e) };
    let dead: Vec<String> = match rows.get(1) {
        Some(row) => row.try_get(0).map_err(|e| internal(e.to_string()))?,
        None => Vec::new(),
    };
    let json: JsonText = rows[0].try_get(0).map_err(|e| internal(e.to_string()))?;
    Ok((page(json.0, round).map_err(internal)?, dead))
}

/// A failure's text, for the log.
fn failure_text(f: &work::Failure) -> String {
    match &f.answer {
        ApiError::Internal(cause) => cause.clone(),
        other => other.parts().1["error"].as_str().unwrap_or_default().to_string(),
    }
}

/// A hub's task: on each wake, queue what changed since the cursor; on an error, say so and
/// try again a second later; end when the hub closes.
async fn run(db: Db, streams: Arc<Streams>, feed: Feed, hub: Arc<Hub>) {
    loop {
        tokio::select! {
            _ = hub.wake.notified() => {}
            _ = hub.closed.notified() => return,
        }
        if let Err(e) = refresh(&db, &streams, &feed, &hub).await {
            tracing::warn!("events of tenant {:?}: {e}", hub.tenant);
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_secs(1)) => hub.wake.notify_one(),
                _ = hub.closed.notified() => return,
            }
        }
    }
}

/// Under the hub's mutex: the changes since the cursor, a page at a time, each page's
/// messages queued for every live subscriber whose token the page's transaction found live
/// (the streams of the others end first), the last of the batch with the batch's cursor, its
/// first page's, as its id; the cursor moved on. Errors: the database's, or an answer without
/// a cursor; the cursor stays then (what was queued comes again: harmless).
async fn refresh(db: &Db, streams: &Streams, feed: &Feed, hub: &Hub) -> Result<(), String> {
    let mut cursor = hub.cursor.lock().await;
    advance(db, streams, feed, hub, &mut cursor).await
}

/// `refresh`, with the hub's mutex held by the caller (`cursor` is what it guards).
async fn advance(
    db: &Db,
    streams: &Streams,
    feed: &Feed,
    hub: &Hub,
    cursor: &mut Option<String>,
) -> Result<(), String> {
    let Some(since) = cursor.clone() else { return Ok(()) };
    let mut round: Option<String> = None;
    let mut after: Option<String> = None;
    loop {
        let tokens = hub.tokens();
        let (p, dead) = read(db, &hub.tenant, Some(&since), after.as_deref(), round.as_deref(), &tokens)
            .await
            .map_err(|f| failure_text(&f))?;
        hub.drop_revoked(streams, &dead);
        let first = round.get_or_insert_with(|| p.cursor.clone()).clone();
        let next = p.next.clone();
        if p.messages > 0 {
            hub.send(held(p, None));
        }
        match next {
            None => {
                feed.moved(&hub.tenant, &hub.wake, &first);
                *cursor = Some(first);
                return Ok(());
            }
            Some(next) => after = Some(next),
        }
    }
}

impl Subscriber {
    /// A place among the tenant's catch-ups for a page this subscriber reads for itself,
    /// waiting as long as it takes; None when the stream ends meanwhile (shutdown, revocation).
    async fn place(&mut self, hubs: &Hubs, tenant: &str) -> Option<Pass> {
        let mut revoked = self.slot.revoked.clone();
        tokio::select! {
            place = hubs.catch_ups.enter_within(tenant, None) => place.ok(),
            _ = self.shutdown.wait_for(|down| *down) => None,
            _ = revoked.wait_for(|r| *r) => None,
        }
    }

    /// Queues the page's messages (none: the place is given back at once).
    fn push(&mut self, page: Page, place: Pass) {
        if page.messages > 0 {
            self.pending.push_back(held(page, Some(place)));
        }
    }
}

/// The stream's next piece of text: what is pending, then the catch-up's pages, then the
/// queue and pings; None (the end) at shutdown, at the token's revocation, or when a catch-up
/// read fails (the client reconnects); an error when the subscriber fell behind (the
/// connection is cut at once: a client that does not read would not read the end either).
async fn next(mut s: Subscriber) -> Option<(Result<Bytes, std::io::Error>, Subscriber)> {
    loop {
        if *s.shutdown.borrow() || *s.slot.revoked.borrow() {
            return None;
        }
        if let Some(m) = s.pending.pop_front() {
            return Some((Ok(m), s));
        }
        let step = match &s.phase {
            Phase::CatchUp { since, round, after } => {
                let (since, round, after) = (since.clone(), round.clone(), after.clone());
                s.catch_up(since, round, after).await
            }
            Phase::Join { position } => {
                let position = position.clone();
                s.join(position).await
            }
            Phase::Live(queue) => {
                let queue = queue.clone();
                s.live(&queue).await
            }
        };
        match step {
            Step::Again => {}
            Step::Send(m) => return Some((m, s)),
            Step::End => return None,
        }
    }
}

/// What one step of a subscriber's stream gives: nothing yet (step again), a piece of text, or
/// the stream's end.
enum Step {
    Again,
    Send(Result<Bytes, std::io::Error>),
    End,
}

impl Subscriber {
    /// The token whose revocation ends the stream, as the reads check it.
    fn tokens(&self) -> [String; 1] {
        [self.slot.token().to_string()]
    }

    /// One page of the catch-up: read with a place among the tenant's catch-ups, queued, and
    /// the phase moved on (to the next page, or to joining the live subscribers).
    async fn catch_up(&mut self, since: String, round: String, after: String) -> Step {
        let (hub, hubs) = (self.subscription.hub.clone(), self.subscription.hubs.clone());
        let Some(place) = self.place(&hubs, &hub.tenant).await else { return Step::End };
        let token = self.tokens();
        let p = tokio::select! {
            p = read(&hubs.db, &hub.tenant, Some(&since), Some(&after), Some(&round), &token) => p,
            _ = self.shutdown.wait_for(|down| *down) => return Step::End,
        };
        let Some(p) = read_page(&hubs, &hub.tenant, p) else { return Step::End };
        self.phase = match p.next.clone() {
            Some(after) => Phase::CatchUp { since, round, after },
            None => Phase::Join { position: round },
        };
        self.push(p, place);
        Step::Again
    }

    /// Caught up to `position`: under the hub's mutex, read what changed since and join the
    /// live subscribers, or catch up again when more than a page changed meanwhile.
    async fn join(&mut self, position: String) -> Step {
        let (hub, hubs) = (self.subscription.hub.clone(), self.subscription.hubs.clone());
        // the place first: the hub's task takes the mutex and no place
        let Some(place) = self.place(&hubs, &hub.tenant).await else { return Step::End };
        let mut cursor = tokio::select! {
            c = hub.cursor.lock() => c,
            _ = self.shutdown.wait_for(|down| *down) => return Step::End,
        };
        // the hub first catches up itself (the feed wakes it up to a tick late): what
        // it reads now goes to the live subscribers only, and this subscriber reads
        // it below, so a change it has read never reaches it again from the hub
        if let Err(e) = advance(&hubs.db, &hubs.streams, &hubs.feed, &hub, &mut cursor).await {
            tracing::warn!("events of tenant {:?}: {e}", hub.tenant);
        }
        let p = read(&hubs.db, &hub.tenant, Some(&position), None, None, &self.tokens()).await;
        let Some(p) = read_page(&hubs, &hub.tenant, p) else { return Step::End };
        match p.next.clone() {
            // more than a page changed meanwhile: catch up again, outside the mutex
            Some(after) => {
                drop(cursor);
                self.phase = Phase::CatchUp { since: position, round: p.cursor.clone(), after };
            }
            // under the mutex: every change after this read reaches the queue
            None => {
                let queue = hubs.enlist(&self.subscription, self.slot.token());
                drop(cursor);
                self.phase = Phase::Live(queue);
            }
        }
        self.push(p, place);
        Step::Again
    }

    /// A live subscriber: the queue's next message, else a ping when the timer ticks first.
    async fn live(&mut self, queue: &Arc<Queue>) -> Step {
        match queue.pop() {
            Next::Message(m) => return Step::Send(Ok(m)),
            Next::Overflowed => {
                let hubs = &self.subscription.hubs;
                tracing::warn!(
                    "an event stream of tenant {:?} fell more than {} bytes behind: ended (it catches up on reconnect)",
                    self.subscription.hub.tenant,
                    hubs.budget
                );
                return Step::Send(Err(std::io::Error::other("the subscriber fell behind")));
            }
            Next::Empty => {}
        }
        let mut revoked = self.slot.revoked.clone();
        let ping = tokio::select! {
            _ = queue.ready.notified() => false,
            _ = self.ping.tick() => true,
            _ = self.shutdown.wait_for(|down| *down) => return Step::End,
            _ = revoked.wait_for(|r| *r) => return Step::End,
        };
        if ping {
            Step::Send(Ok(Bytes::from_static(PING.as_bytes())))
        } else {
            Step::Again
        }
    }
}

/// A catch-up read's page; None (the stream ends) when the read found the stream's token
/// revoked (every stream of those tokens is ended) or failed (logged; the client reconnects).
fn read_page(hubs: &Hubs, tenant: &str, read: Result<(Page, Vec<String>), work::Failure>) -> Option<Page> {
    match read {
        Ok((_, dead)) if !dead.is_empty() => {
            hubs.streams.revoke(&dead);
            None
        }
        Ok((p, _)) => Some(p),
        Err(f) => {
            tracing::warn!("catch-up of tenant {:?}: {}", tenant, failure_text(&f));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: Next) -> String {
        match n {
            Next::Message(m) => String::from_utf8(m.to_vec()).unwrap(),
            Next::Empty => "(empty)".into(),
            Next::Overflowed => "(overflowed)".into(),
        }
    }

    #[test]
    fn a_queue_is_bounded_by_bytes_not_messages() {
        let q = Queue::new(10);
        q.push(&Bytes::from_static(b"12345"));
        q.push(&Bytes::from_static(b"12345"));
        assert_eq!(text(q.pop()), "12345");
        // 5 queued + 6 > 10: past the budget, the queue is emptied and the stream ends
        q.push(&Bytes::from_static(b"123456"));
        assert_eq!(text(q.pop()), "(overflowed)");
        // and stays ended
        q.push(&Bytes::from_static(b"1"));
        assert_eq!(text(q.pop()), "(overflowed)");
        assert_eq!(q.state.lock().unwrap().bytes, 0);
    }

    #[test]
    fn an_empty_queue_takes_a_message_larger_than_its_budget() {
        let q = Queue::new(4);
        q.push(&Bytes::from_static(b"a large list"));
        assert_eq!(text(q.pop()), "a large list");
        assert_eq!(text(q.pop()), "(empty)");
        // many small messages read as they come never end it
        for _ in 0..1000 {
            q.push(&Bytes::from_static(b"abc"));
            assert_eq!(text(q.pop()), "abc");
        }
    }
}
