//! The service's metrics in Prometheus's text format (version 0.0.4), written by hand: a few
//! counters and one histogram kept in memory, and the gauges read when `/metrics` is asked
//! (`pg_todos serve --metrics-listen`). No crate: the format is a page of text, and every
//! family and label is ours to choose. Pure but for the process-wide instance (`global`), which
//! the database errors (`db::errors`) and the requests (`http::routes`) count into;
//! unit-tested.
//!
//! Every label value comes from a closed set, never from a request as it was sent: a route is
//! its template (`/v1/todos/{*rest}`, never `/v1/todos/7`), a method one of eight or `OTHER`,
//! a SQLSTATE class two characters of `[0-9A-Z]` or `other`. So a hostile client cannot grow
//! the number of series.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The upper bounds of the latency histogram's buckets, in seconds (`+Inf` follows).
pub const BUCKETS: [f64; 14] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// The route label of a request that matched no route (a 404 of the fallback).
pub const UNMATCHED: &str = "unmatched";

/// The methods counted by name; any other is `OTHER`.
const METHODS: [&str; 8] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"];

/// A request's method as a label: one of `METHODS`, else `OTHER` (an extension method is any
/// token a client makes up).
pub fn method_label(method: &str) -> &'static str {
    METHODS.iter().find(|m| **m == method).copied().unwrap_or("OTHER")
}

/// A SQLSTATE's class as a label: its first two characters when the code is five of
/// `[0-9A-Z]`, else `other`.
pub fn sqlstate_class(code: &str) -> String {
    let b = code.as_bytes();
    if b.len() == 5 && b.iter().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()) {
        code[..2].to_string()
    } else {
        "other".to_string()
    }
}

/// One (method, route)'s latencies: a count per bucket (not cumulative), the sum in
/// microseconds, the count.
#[derive(Default, Clone)]
struct Latency {
    buckets: [u64; BUCKETS.len()],
    sum_micros: u64,
    count: u64,
}

/// What is counted as it happens. Cheap to update: a mutex held for a map lookup, or an atomic.
#[derive(Default)]
pub struct Metrics {
    /// answers by (method, route, status)
    requests: Mutex<BTreeMap<(&'static str, String, u16), u64>>,
    /// latencies by (method, route)
    latency: Mutex<BTreeMap<(&'static str, String), Latency>>,
    /// 401 answers
    token_refusals: AtomicU64,
    /// database errors by SQLSTATE class (`client`: the client library's, no SQLSTATE)
    db_errors: Mutex<BTreeMap<String, u64>>,
    /// reads of the feed that failed
    feed_failures: AtomicU64,
}

/// The gauges, read when the metrics are asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gauges {
    /// the pool's connections: its size, the idle ones among them, its most, and the callers
    /// waiting for one (deadpool's `Status`)
    pub pool_size: usize,
    pub pool_idle: usize,
    pub pool_max: usize,
    pub pool_waiting: usize,
    /// open event streams receiving changes as they commit
    pub streams_live: usize,
    /// open event streams still catching up (`Last-Event-ID`) or about to join
    pub streams_catching_up: usize,
    /// `--max-streams`
    pub streams_max: usize,
    /// tenants with a hub (at least one stream open)
    pub hubs: usize,
    /// how long since the feed last knew every watched tenant's changes: None before its
    /// first tick
    pub feed_lag: Option<Duration>,
}

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// One answered request: its method, its route's template (or `UNMATCHED`), its status,
    /// and the time until its response's head (an event stream's life is not counted).
    pub fn request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let method = method_label(method);
        {
            let mut r = self.requests.lock().unwrap_or_else(|e| e.into_inner());
            *r.entry((method, route.to_string(), status)).or_insert(0) += 1;
        }
        {
            let mut l = self.latency.lock().unwrap_or_else(|e| e.into_inner());
            let entry = l.entry((method, route.to_string())).or_default();
            let seconds = took.as_secs_f64();
            if let Some(i) = BUCKETS.iter().position(|b| seconds <= *b) {
                entry.buckets[i] += 1;
            }
            entry.sum_micros = entry.sum_micros.saturating_add(u64::try_from(took.as_micros()).unwrap_or(u64::MAX));
            entry.count += 1;
        }
        if status == 401 {
            self.token_refusals.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A database error that became an answer: its SQLSTATE, or None for one the client
    /// library saw (a connection refused or closed, a value that did not convert).
    pub fn db_error(&self, sqlstate: Option<&str>) {
        let class = sqlstate.map_or_else(|| "client".to_string(), sqlstate_class);
        let mut e = self.db_errors.lock().unwrap_or_else(|e| e.into_inner());
        *e.entry(class).or_insert(0) += 1;
    }

    /// A read of the feed that failed.
    pub fn feed_failure(&self) {
        self.feed_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// Every family, in the text format, with `gauges` and the build's `version`.
    pub fn render(&self, gauges: &Gauges, version: &str) -> String {
        let mut out = String::with_capacity(4096);
        family(&mut out, "pg_todos_build_info", "gauge", "Always 1; the version of pg_todos serve as a label.");
        sample(&mut out, "pg_todos_build_info", &[("version", version)], 1.0);
        self.render_requests(&mut out);
        self.render_latency(&mut out);
        self.render_refusals_and_errors(&mut out);
        render_pool(&mut out, gauges);
        render_streams(&mut out, gauges);
        self.render_feed(&mut out, gauges);
        out
    }

    /// `pg_todos_http_requests_total`: requests by method, route and status.
    fn render_requests(&self, out: &mut String) {
        family(
            out,
            "pg_todos_http_requests_total",
            "counter",
            "Requests answered, by method, route template and status.",
        );
        let requests = self.requests.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for ((method, route, status), n) in &requests {
            let status = status.to_string();
            sample(
                out,
                "pg_todos_http_requests_total",
                &[("method", method), ("route", route), ("status", &status)],
                *n as f64,
            );
        }
    }

    /// `pg_todos_http_request_duration_seconds`: the latency histogram by method and route.
    fn render_latency(&self, out: &mut String) {
        let name = "pg_todos_http_request_duration_seconds";
        family(
            out,
            name,
            "histogram",
            "Time from a request's arrival to its response's head, by method and route template.",
        );
        let latency = self.latency.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for ((method, route), l) in &latency {
            let mut cumulative = 0;
            for (bound, n) in BUCKETS.iter().zip(l.buckets) {
                cumulative += n;
                let le = number(*bound);
                sample(
                    out,
                    &format!("{name}_bucket"),
                    &[("method", method), ("route", route), ("le", &le)],
                    cumulative as f64,
                );
            }
            let labels = [("method", *method), ("route", route.as_str())];
            sample(
                out,
                &format!("{name}_bucket"),
                &[("method", method), ("route", route), ("le", "+Inf")],
                l.count as f64,
            );
            sample(out, &format!("{name}_sum"), &labels, l.sum_micros as f64 / 1e6);
            sample(out, &format!("{name}_count"), &labels, l.count as f64);
        }
    }

    /// The requests refused for their token and the database errors that became answers.
    fn render_refusals_and_errors(&self, out: &mut String) {
        family(
            out,
            "pg_todos_http_token_refusals_total",
            "counter",
            "Requests refused with 401: no bearer token, or one unknown, malformed or revoked.",
        );
        sample(out, "pg_todos_http_token_refusals_total", &[], self.token_refusals.load(Ordering::Relaxed) as f64);

        family(
            out,
            "pg_todos_db_errors_total",
            "counter",
            "Database errors that became an answer (after any retries), by SQLSTATE class; class client: the client library's, no SQLSTATE.",
        );
        let errors = self.db_errors.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for (class, n) in &errors {
            sample(out, "pg_todos_db_errors_total", &[("class", class)], *n as f64);
        }
    }

    /// The feed's lag and its failed reads.
    fn render_feed(&self, out: &mut String, gauges: &Gauges) {
        family(
            out,
            "pg_todos_feed_lag_seconds",
            "gauge",
            "Seconds since the feed last read every followed tenant's changes (about --feed-tick while it keeps up; growing while its reads fail or are slow).",
        );
        if let Some(lag) = gauges.feed_lag {
            sample(out, "pg_todos_feed_lag_seconds", &[], lag.as_secs_f64());
        }
        family(
            out,
            "pg_todos_feed_failures_total",
            "counter",
            "Reads of the feed that failed (it connects again next tick).",
        );
        sample(out, "pg_todos_feed_failures_total", &[], self.feed_failures.load(Ordering::Relaxed) as f64);
    }
}

/// The connection pool's gauges.
fn render_pool(out: &mut String, gauges: &Gauges) {
    family(
        out,
        "pg_todos_db_pool_connections",
        "gauge",
        "The pool's open connections: in_use by a request or a stream's read, idle.",
    );
    let in_use = gauges.pool_size.saturating_sub(gauges.pool_idle);
    sample(out, "pg_todos_db_pool_connections", &[("state", "in_use")], in_use as f64);
    sample(out, "pg_todos_db_pool_connections", &[("state", "idle")], gauges.pool_idle as f64);
    family(out, "pg_todos_db_pool_max_connections", "gauge", "The pool's size at most (--pool-size).");
    sample(out, "pg_todos_db_pool_max_connections", &[], gauges.pool_max as f64);
    family(out, "pg_todos_db_pool_waiting", "gauge", "Callers waiting for a pooled connection.");
    sample(out, "pg_todos_db_pool_waiting", &[], gauges.pool_waiting as f64);
}

/// The event streams' and hubs' gauges.
fn render_streams(out: &mut String, gauges: &Gauges) {
    family(
        out,
        "pg_todos_event_streams",
        "gauge",
        "Open event streams (GET /v1/events) by kind: live (receiving changes as they commit), catching_up (reading what changed since its Last-Event-ID).",
    );
    sample(out, "pg_todos_event_streams", &[("kind", "live")], gauges.streams_live as f64);
    sample(out, "pg_todos_event_streams", &[("kind", "catching_up")], gauges.streams_catching_up as f64);
    family(out, "pg_todos_event_streams_max", "gauge", "Open event streams at most (--max-streams).");
    sample(out, "pg_todos_event_streams_max", &[], gauges.streams_max as f64);
    family(out, "pg_todos_event_hubs", "gauge", "Tenants with an open event stream, each followed by the feed.");
    sample(out, "pg_todos_event_hubs", &[], gauges.hubs as f64);
}

/// The process's metrics.
pub fn global() -> &'static Metrics {
    static GLOBAL: OnceLock<Metrics> = OnceLock::new();
    GLOBAL.get_or_init(Metrics::new)
}

/// `# HELP` and `# TYPE` of a family.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let help = help.replace('\\', "\\\\").replace('\n', "\\n");
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

/// One sample line: `name{label="value",…} value`.
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(k);
            out.push_str("=\"");
            escape(out, v);
            out.push('"');
        }
        out.push('}');
    }
    out.push(' ');
    out.push_str(&number(value));
    out.push('\n');
}

/// A label value with `\`, `"` and line feeds escaped, as the format says.
fn escape(out: &mut String, v: &str) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A value as Go's strconv would read it: an integer without a point, `+Inf`, `NaN`.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample: its name, its labels, its value.
    type Sample = (String, Vec<(String, String)>, f64);

    /// The samples of `text` as (name, labels, value), checking each line's syntax: a comment
    /// (`# HELP name text`, `# TYPE name kind`) or `name{k="v",…} value`.
    fn parse(text: &str) -> Vec<Sample> {
        let mut samples = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# ") {
                let mut parts = rest.splitn(3, ' ');
                let (word, name) = (parts.next().unwrap(), parts.next().unwrap());
                assert!(word == "HELP" || word == "TYPE", "{line}");
                assert!(name.starts_with("pg_todos_"), "{line}");
                continue;
            }
            let (series, value) = line.rsplit_once(' ').unwrap();
            let value: f64 = match value {
                "+Inf" => f64::INFINITY,
                v => v.parse().unwrap_or_else(|_| panic!("{line}")),
            };
            let (name, labels) = match series.split_once('{') {
                None => (series.to_string(), vec![]),
                Some((name, rest)) => {
                    let rest = rest.strip_suffix('}').unwrap();
                    let mut labels = vec![];
                    let mut chars = rest.chars().peekable();
                    while chars.peek().is_some() {
                        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
                        assert_eq!(chars.next(), Some('"'), "{line}");
                        let mut value = String::new();
                        loop {
                            match chars.next().unwrap() {
                                '\\' => value.push(match chars.next().unwrap() {
                                    'n' => '\n',
                                    c => c,
                                }),
                                '"' => break,
                                c => value.push(c),
                            }
                        }
                        labels.push((key, value));
                        if chars.peek() == Some(&',') {
                            chars.next();
                        }
                    }
                    (name.to_string(), labels)
                }
            };
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{line}");
            samples.push((name, labels, value));
        }
        samples
    }

    fn value(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        samples
            .iter()
            .find(|(n, l, _)| {
                n == name
                    && l.len() == labels.len()
                    && labels.iter().all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
            })
            .map(|s| s.2)
    }

    #[test]
    fn an_empty_registry_declares_every_family() {
        let text = Metrics::new().render(&Gauges::default(), "1.0.0");
        let families: Vec<&str> =
            text.lines().filter_map(|l| l.strip_prefix("# TYPE ")).map(|l| l.split(' ').next().unwrap()).collect();
        assert_eq!(
            families,
            [
                "pg_todos_build_info",
                "pg_todos_http_requests_total",
                "pg_todos_http_request_duration_seconds",
                "pg_todos_http_token_refusals_total",
                "pg_todos_db_errors_total",
                "pg_todos_db_pool_connections",
                "pg_todos_db_pool_max_connections",
                "pg_todos_db_pool_waiting",
                "pg_todos_event_streams",
                "pg_todos_event_streams_max",
                "pg_todos_event_hubs",
                "pg_todos_feed_lag_seconds",
                "pg_todos_feed_failures_total",
            ]
        );
        let samples = parse(&text);
        assert_eq!(value(&samples, "pg_todos_build_info", &[("version", "1.0.0")]), Some(1.0));
        assert_eq!(value(&samples, "pg_todos_http_token_refusals_total", &[]), Some(0.0));
        // no feed tick yet: no lag sample rather than a made-up one
        assert_eq!(value(&samples, "pg_todos_feed_lag_seconds", &[]), None);
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn requests_counted_by_method_route_and_status_with_latencies() {
        let m = Metrics::new();
        m.request("GET", "/v1/todos", 200, Duration::from_micros(800));
        m.request("GET", "/v1/todos", 200, Duration::from_millis(30));
        m.request("GET", "/v1/todos", 401, Duration::from_millis(2));
        m.request("BREW", UNMATCHED, 404, Duration::from_secs(60));
        let samples = parse(&m.render(&Gauges::default(), "1.0.0"));
        let requests = "pg_todos_http_requests_total";
        assert_eq!(
            value(&samples, requests, &[("method", "GET"), ("route", "/v1/todos"), ("status", "200")]),
            Some(2.0)
        );
        assert_eq!(
            value(&samples, requests, &[("method", "GET"), ("route", "/v1/todos"), ("status", "401")]),
            Some(1.0)
        );
        // a made-up method is OTHER
        assert_eq!(
            value(&samples, requests, &[("method", "OTHER"), ("route", "unmatched"), ("status", "404")]),
            Some(1.0)
        );
        assert_eq!(value(&samples, "pg_todos_http_token_refusals_total", &[]), Some(1.0));
        // buckets are cumulative; +Inf is the count
        let bucket = |le: &str| {
            value(
                &samples,
                "pg_todos_http_request_duration_seconds_bucket",
                &[("method", "GET"), ("route", "/v1/todos"), ("le", le)],
            )
        };
        assert_eq!(bucket("0.001"), Some(1.0));
        assert_eq!(bucket("0.0025"), Some(2.0));
        assert_eq!(bucket("0.025"), Some(2.0));
        assert_eq!(bucket("0.05"), Some(3.0));
        assert_eq!(bucket("30"), Some(3.0));
        assert_eq!(bucket("+Inf"), Some(3.0));
        let labels = [("method", "GET"), ("route", "/v1/todos")];
        assert_eq!(value(&samples, "pg_todos_http_request_duration_seconds_count", &labels), Some(3.0));
        let sum = value(&samples, "pg_todos_http_request_duration_seconds_sum", &labels).unwrap();
        assert!((sum - 0.0328).abs() < 1e-9, "{sum}");
        // past the last bound: only in +Inf
        let other = [("method", "OTHER"), ("route", "unmatched")];
        let slow = |le: &str| {
            let mut l = other.to_vec();
            l.push(("le", le));
            value(&samples, "pg_todos_http_request_duration_seconds_bucket", &l)
        };
        assert_eq!((slow("30"), slow("+Inf")), (Some(0.0), Some(1.0)));
    }

    #[test]
    fn database_errors_by_sqlstate_class() {
        let m = Metrics::new();
        m.db_error(Some("40001"));
        m.db_error(Some("40P01"));
        m.db_error(Some("57014"));
        m.db_error(None);
        m.db_error(Some("bad\"1"));
        let samples = parse(&m.render(&Gauges::default(), "1.0.0"));
        let errors = |class: &str| value(&samples, "pg_todos_db_errors_total", &[("class", class)]);
        assert_eq!(
            (errors("40"), errors("57"), errors("client"), errors("other")),
            (Some(2.0), Some(1.0), Some(1.0), Some(1.0))
        );
        assert_eq!(sqlstate_class("22P02"), "22");
        assert_eq!(sqlstate_class("2"), "other");
        assert_eq!(sqlstate_class("22p02"), "other");
    }

    #[test]
    fn gauges() {
        let g = Gauges {
            pool_size: 5,
            pool_idle: 2,
            pool_max: 16,
            pool_waiting: 7,
            streams_live: 3,
            streams_catching_up: 1,
            streams_max: 256,
            hubs: 2,
            feed_lag: Some(Duration::from_millis(250)),
        };
        let m = Metrics::new();
        m.feed_failure();
        let samples = parse(&m.render(&g, "1.0.0"));
        let v = |name: &str, labels: &[(&str, &str)]| value(&samples, name, labels).unwrap();
        assert_eq!(v("pg_todos_db_pool_connections", &[("state", "in_use")]), 3.0);
        assert_eq!(v("pg_todos_db_pool_connections", &[("state", "idle")]), 2.0);
        assert_eq!(v("pg_todos_db_pool_max_connections", &[]), 16.0);
        assert_eq!(v("pg_todos_db_pool_waiting", &[]), 7.0);
        assert_eq!(v("pg_todos_event_streams", &[("kind", "live")]), 3.0);
        assert_eq!(v("pg_todos_event_streams", &[("kind", "catching_up")]), 1.0);
        assert_eq!(v("pg_todos_event_streams_max", &[]), 256.0);
        assert_eq!(v("pg_todos_event_hubs", &[]), 2.0);
        assert_eq!(v("pg_todos_feed_lag_seconds", &[]), 0.25);
        assert_eq!(v("pg_todos_feed_failures_total", &[]), 1.0);
    }

    #[test]
    fn label_values_are_escaped() {
        let mut out = String::new();
        sample(&mut out, "x", &[("route", "a\"b\\c\nd")], 1.5);
        assert_eq!(out, "x{route=\"a\\\"b\\\\c\\nd\"} 1.5\n");
        let parsed = parse(&out.replace("x{", "pg_todos_x{"));
        assert_eq!(parsed[0].1, [("route".to_string(), "a\"b\\c\nd".to_string())]);
        assert_eq!((number(f64::INFINITY), number(3.0), number(0.0025)), ("+Inf".into(), "3".into(), "0.0025".into()));
        assert_eq!(method_label("PATCH"), "PATCH");
        assert_eq!(method_label("patch"), "OTHER");
    }
}
