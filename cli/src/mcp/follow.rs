//! Resource subscriptions over stdio (`resources/subscribe`): the server follows the change
//! feed (`todo.changes_since`, the log every surface's writes leave) while a subscription is
//! open, every half second, and sends `notifications/resources/updated` for each subscribed
//! list that changed (a change of the tenant-wide pool changes every list, which shows it).
//! One follower per server; it stops when the last subscription ends. A database away is
//! waited out: the cursor stays where it was, so nothing committed meanwhile is missed.

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use super::{failure, locked, Scope, Tools};
use crate::db::work::{self, Act};

/// How often the feed is read while a subscription is open.
const TICK: Duration = Duration::from_millis(500);
/// The most lists one read of the feed gives (`todo.changes_since`'s page).
const PAGE: i32 = 1000;
/// The most resources one client may be subscribed to at once.
pub const MAX_SUBSCRIPTIONS: usize = 100;

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

    /// The feed's cursor now (`todo.changes_since(NULL)`).
    async fn cursor(&self, act: &Act) -> Result<String, String> {
        let none: Option<&str> = None;
        let page: Value = work::in_context(&self.db, act, "SELECT todo.changes_since($1)", &[&none])
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
                work::in_context(&self.db, act, "SELECT todo.changes_since($1, $2, $3)", &[&since, &after, &PAGE])
                    .await
                    .map_err(|f| failure(f, &self.origin))?;
            next_cursor.get_or_insert_with(|| page["cursor"].as_str().unwrap_or(since).to_string());
            for change in page["changes"].as_array().map(Vec::as_slice).unwrap_or_default() {
                changed.insert(change["conversation_id"].as_str().map(str::to_string));
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
                let touched = changed.contains(&list) || changed.contains(&None);
                if touched && peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_err() {
                    return; // the client is gone
                }
            }
        }
    }
}
