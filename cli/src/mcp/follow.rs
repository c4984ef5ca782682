//! Resource subscriptions over stdio (`resources/subscribe`): the server follows the change
//! feed (`todo.changed_lists`: which lists the log every surface's writes leave names, not
//! their todos) while a subscription is
//! open, every half second, and sends `notifications/resources/updated` for each subscribed
//! list that changed (a change of the tenant-wide pool changes every list, which shows it).
//! One follower per server; it stops when the last subscription ends. A database away is
//! waited out: the cursor stays where it was, so nothing committed meanwhile is missed.
//!
//! Protocol 2026-07-28 replaces `resources/subscribe` with `subscriptions/listen`, a request
//! that stays open (over HTTP, a streamed response) and carries the notifications of the URIs
//! it names: each such request follows the feed the same way for as long as it is open
//! (`listen`), over stdio and over `/mcp`. A listen names at most `MAX_SUBSCRIPTIONS` URIs
//! (the rest are not acknowledged); a URI of a list the connection may not read is
//! acknowledged and never notified; at most `MAX_LISTENERS` are open in one process at once.

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{ResourceUpdatedNotification, ResourceUpdatedNotificationParam, ServerNotification};
use rmcp::service::SubscriptionContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::Value;

use super::resources::{self, MAX_SUBSCRIPTIONS};
use super::{failure, locked, Scope, Tools, STOPPING};
use crate::db::work::{self, Act};

/// How often the feed is read while a subscription is open.
const TICK: Duration = Duration::from_millis(500);
/// The most lists one read of the feed gives (`todo.changed_lists`'s page).
const PAGE: i32 = 1000;
/// The most `subscriptions/listen` requests open at once in one process.
pub const MAX_LISTENERS: usize = 200;

/// The open `subscriptions/listen` requests of this process.
static LISTENERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One open listen, counted while it lives.
struct Listening;

impl Listening {
    /// A place among the open listens; None when `MAX_LISTENERS` are open.
    fn take() -> Option<Listening> {
        let order = std::sync::atomic::Ordering::SeqCst;
        let taken = LISTENERS.fetch_update(order, order, |n| (n < MAX_LISTENERS).then_some(n + 1)).is_ok();
        taken.then_some(Listening)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        LISTENERS.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Whether the resource of `list` (None: the pool) shows one of the `changed` lists: its own,
/// or the pool, which every list shows.
fn shows_a_change(changed: &BTreeSet<Option<String>>, list: &Option<String>) -> bool {
    changed.contains(list) || changed.contains(&None)
}

impl Tools {
    /// Subscribes the client to `uri`, the resource of `list` (None: the pool), and starts the
    /// follower when none runs: the feed's cursor is taken first, so every change committed
    /// after this call is heard. Errors, in words for the client: past `MAX_SUBSCRIPTIONS`
    /// (`Ok(Err)`: the client's to fix, -32602), the database's (`Err`).
    pub(super) async fn subscribe_to(
        &self,
        scope: &Scope,
        uri: String,
        list: Option<String>,
        peer: Peer<RoleServer>,
    ) -> Result<Result<(), String>, String> {
        let held = locked(&self.subscriptions).len();
        if held >= MAX_SUBSCRIPTIONS && !locked(&self.subscriptions).contains_key(&uri) {
            return Ok(Err(format!(
                "at most {MAX_SUBSCRIPTIONS} resources may be subscribed to at once, and this client has {held}: resources/unsubscribe one first"
            )));
        }
        let act = Act { conversation: None, turn: None, ..scope.act.clone() };
        let start = if self.following.swap(true, std::sync::atomic::Ordering::SeqCst) {
            None
        } else {
            match self.cursor(&act).await {
                Ok(cursor) => Some(cursor),
                Err(e) => {
                    self.following.store(false, std::sync::atomic::Ordering::SeqCst);
                    return Err(e);
                }
            }
        };
        locked(&self.subscriptions).insert(uri, list);
        if let Some(cursor) = start {
            let tools = self.clone();
            tokio::spawn(async move { tools.follow(act, cursor, peer).await });
        }
        Ok(Ok(()))
    }

    /// The feed's cursor now (`todo.changed_lists(NULL)`).
    async fn cursor(&self, act: &Act) -> Result<String, String> {
        let none: Option<&str> = None;
        let page: Value = work::in_context(&self.db, act, "SELECT todo.changed_lists($1)", &[&none])
            .await
            .map_err(|f| failure(f, &self.origin))?;
        Ok(page["cursor"].as_str().unwrap_or_default().to_string())
    }

    /// The lists changed since `since` (None in the set: the pool), and the cursor to read
    /// from next, reading the feed a page at a time.
    async fn changed(&self, act: &Act, since: &str) -> Result<(BTreeSet<Option<String>>, String), String> {
        let (mut changed, mut next_cursor, mut after) = (BTreeSet::new(), None, None::<String>);
        loop {
            let page: Value =
                work::in_context(&self.db, act, "SELECT todo.changed_lists($1, $2, $3)", &[&since, &after, &PAGE])
                    .await
                    .map_err(|f| failure(f, &self.origin))?;
            next_cursor.get_or_insert_with(|| page["cursor"].as_str().unwrap_or(since).to_string());
            for list in page["lists"].as_array().map(Vec::as_slice).unwrap_or_default() {
                changed.insert(list.as_str().map(str::to_string));
            }
            match page["next"].as_str() {
                Some(next) => after = Some(next.to_string()),
                None => break,
            }
        }
        Ok((changed, next_cursor.unwrap_or_else(|| since.to_string())))
    }

    /// Follows the feed from `cursor` while a subscription is open, telling the client of each
    /// subscribed list that changed.
    async fn follow(&self, act: Act, mut cursor: String, peer: Peer<RoleServer>) {
        loop {
            tokio::time::sleep(TICK).await;
            let wanted = locked(&self.subscriptions).clone();
            if wanted.is_empty() {
                self.following.store(false, std::sync::atomic::Ordering::SeqCst);
                // a subscription that came in meanwhile, while this one was still running,
                // started no follower of its own: follow on for it
                if locked(&self.subscriptions).is_empty()
                    || self.following.swap(true, std::sync::atomic::Ordering::SeqCst)
                {
                    return;
                }
                continue;
            }
            let (changed, next) = match self.changed(&act, &cursor).await {
                Ok(read) => read,
                Err(e) => {
                    tracing::warn!("following the change feed for resources/subscribe: {e}; trying again");
                    continue;
                }
            };
            cursor = next;
            for (uri, list) in wanted {
                let touched = shows_a_change(&changed, &list);
                if touched && peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_err() {
                    return; // the client is gone
                }
            }
        }
    }

    /// Runs one `subscriptions/listen` (protocol 2026-07-28) until the client cancels it or
    /// goes: follows the feed from now and sends `notifications/resources/updated` on the
    /// listen for each acknowledged URI whose list changed (and that this connection may
    /// read). Errors: `MAX_LISTENERS` open already; the database away at the start.
    pub(super) async fn listen_for(&self, listen: SubscriptionContext) -> Result<(), McpError> {
        let Some(_place) = Listening::take() else {
            return Err(McpError::invalid_request(
                format!("at most {MAX_LISTENERS} subscriptions/listen requests may be open at once in this server: try again later"),
                None,
            ));
        };
        let scope =
            self.checked_scope(listen.request_context()).await.map_err(|e| McpError::internal_error(e, None))?;
        let own = scope.act.conversation.clone();
        let wanted: Vec<(String, Option<String>)> = listen
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .filter_map(|uri| resources::list_of(uri).ok().map(|list| (uri.clone(), list)))
            .filter(|(_, list)| resources::reachable(own.as_deref(), scope.act.bound, list.as_deref()).is_ok())
            .collect();
        let act = Act { conversation: None, turn: None, ..scope.act.clone() };
        let mut cursor =
            self.cursor(&act).await.map_err(|e| McpError::internal_error(format!("database error: {e}"), None))?;
        let mut stopping = STOPPING.subscribe();
        loop {
            tokio::select! {
                _ = listen.cancelled() => return Ok(()),
                _ = stopping.wait_for(|stop| *stop) => return Ok(()),
                _ = tokio::time::sleep(TICK) => {}
            }
            let (changed, next) = match self.changed(&act, &cursor).await {
                Ok(read) => read,
                Err(e) => {
                    tracing::warn!("following the change feed for subscriptions/listen: {e}; trying again");
                    continue;
                }
            };
            cursor = next;
            for (uri, list) in &wanted {
                if !shows_a_change(&changed, list) {
                    continue;
                }
                let updated = ResourceUpdatedNotification::new(ResourceUpdatedNotificationParam::new(uri.clone()));
                if listen.sink().send(ServerNotification::ResourceUpdatedNotification(updated)).await.is_err() {
                    return Ok(()); // the listen ended, or the client is gone
                }
            }
        }
    }
}
