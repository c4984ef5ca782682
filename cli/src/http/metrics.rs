//! The metrics listener (`--metrics-listen`): `GET /metrics` in Prometheus's text format
//! (`crate::metrics`), on an address of its own, with no token (a scraper has none), so it
//! must be one that only the monitoring can reach. Anything else there is 404. The gauges are
//! read as the metrics are asked for: the pool's status, the open event streams, the feed.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use deadpool_postgres::Pool;

use super::hub::Hubs;
use super::streams::Streams;
use crate::metrics::{global, Gauges};

/// What the gauges are read from.
#[derive(Clone)]
pub struct Sources {
    pub pool: Pool,
    pub hubs: Arc<Hubs>,
    pub streams: Arc<Streams>,
    /// `--max-streams`
    pub max_streams: usize,
}

/// The Content-Type of the text format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `/metrics`, and 404 for any other path.
pub fn router(sources: Sources) -> Router {
    Router::new()
        .route("/metrics", get(metrics))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found: the metrics are at /metrics\n") })
        .with_state(sources)
}

/// The gauges as they are now.
fn gauges(s: &Sources) -> Gauges {
    let pool = s.pool.status();
    let (hubs, live) = s.hubs.counts();
    Gauges {
        pool_size: pool.size,
        pool_idle: pool.available,
        pool_max: pool.max_size,
        pool_waiting: pool.waiting,
        streams_live: live,
        streams_catching_up: s.streams.open_count().saturating_sub(live),
        streams_max: s.max_streams,
        hubs,
        feed_lag: s.hubs.feed_lag(),
    }
}

async fn metrics(State(sources): State<Sources>) -> Response {
    let text = global().render(&gauges(&sources), env!("CARGO_PKG_VERSION"));
    let mut r = text.into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    r
}
