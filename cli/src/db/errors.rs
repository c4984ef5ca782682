//! The service's error answers, each a JSON body `{"error": …}` with its status, and which
//! database errors are the caller's to retry (503) rather than the service's fault (500).
//! The classification is pure and unit-tested.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// Why a request has no caller: the 401 answer says it (RFC 6750), in its `WWW-Authenticate`
/// header and its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// no `Authorization: Bearer` header (none, or another scheme): the challenge has no error
    /// code (RFC 6750 3.1)
    Missing,
    /// a bearer header whose token is empty, not text or longer than 512 bytes (not looked up)
    Malformed,
    /// no token of that text (`todo.token_refusal`: unknown)
    Unknown,
    /// revoked by `todo.revoke_token`
    Revoked,
    /// past its `expires_in`
    Expired,
    /// it does not authenticate, and why is not known (an extension older than
    /// `todo.token_refusal`; a stream's token found dead while catching up)
    Refused,
}

impl Refusal {
    /// The refusal `todo.token_refusal` names (`unknown`, `revoked`, `expired`; anything else,
    /// NULL included: `Refused`).
    pub fn from_reason(reason: Option<&str>) -> Refusal {
        match reason {
            Some("unknown") => Refusal::Unknown,
            Some("revoked") => Refusal::Revoked,
            Some("expired") => Refusal::Expired,
            _ => Refusal::Refused,
        }
    }

    /// Its one word: the body's `reason`.
    pub fn reason(self) -> &'static str {
        match self {
            Refusal::Missing => "missing",
            Refusal::Malformed => "malformed",
            Refusal::Unknown => "unknown",
            Refusal::Revoked => "revoked",
            Refusal::Expired => "expired",
            Refusal::Refused => "refused",
        }
    }

    /// What is wrong and what to do, in words: the challenge's `error_description` and the
    /// body's. ASCII without `"` or `\`, as RFC 6750 allows in the header.
    pub fn description(self) -> &'static str {
        match self {
            Refusal::Missing => "no bearer token: send Authorization: Bearer <token>, a token made by todo.create_token",
            Refusal::Malformed => {
                "the bearer token is empty or longer than 512 bytes: send the whole pgt_ token todo.create_token made"
            }
            Refusal::Unknown => {
                "the bearer token is unknown to this service (mistyped, cut short, made in another database, or its tenant deleted): check it, or make one with todo.create_token"
            }
            Refusal::Revoked => "the bearer token was revoked (todo.revoke_token): make a new one with todo.create_token",
            Refusal::Expired => {
                "the bearer token has expired (the expires_in it was made with has passed): make a new one with todo.create_token"
            }
            Refusal::Refused => {
                "the bearer token does not authenticate (unknown, revoked or expired): check it, or make one with todo.create_token"
            }
        }
    }

    /// The `WWW-Authenticate` challenge: `Bearer realm="pg_todos"` for a request with no
    /// token, with `error="invalid_token"` and the description for a token refused.
    pub fn challenge(self) -> String {
        match self {
            Refusal::Missing => format!("Bearer realm=\"{REALM}\""),
            other => format!(
                "Bearer realm=\"{REALM}\", error=\"invalid_token\", error_description=\"{}\"",
                other.description()
            ),
        }
    }

    /// The 401 body: `error` (`invalid_token`, or `unauthorized` for no token), the
    /// description, and the reason's word.
    pub fn body(self) -> Value {
        let error = if self == Refusal::Missing { "unauthorized" } else { "invalid_token" };
        json!({ "error": error, "error_description": self.description(), "reason": self.reason() })
    }
}

/// The realm of the service's challenges.
pub const REALM: &str = "pg_todos";

/// Why a request got no answer from the extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// 401 with `WWW-Authenticate: Bearer realm="pg_todos"` (and, for a token refused,
    /// `error="invalid_token", error_description="…"`) and a body saying why (`Refusal`)
    Unauthorized(Refusal),
    /// 400 `{"error": <message>}`
    BadRequest(String),
    /// 413 `{"error":"request body is larger than N bytes"}`
    TooLarge(usize),
    /// 404 `{"error":"not found"}`
    NotFound,
    /// 403 `{"error": <message>}`: the token may not do this (`X-Actor: person` from a token
    /// not made for a person)
    Forbidden(String),
    /// 408 `{"error":"request body not received within N s"}`
    SlowBody(u64),
    /// 429 `{"error": <message>}` with `Retry-After: 5`: the token has as many event streams
    /// open as it may
    TooMany(String),
    /// 429 `{"error": "too many failed authentications from this address; …"}` with
    /// `Retry-After: <N>`: the client's address failed to authenticate past
    /// `--auth-fail-burst` (or, when the flag is true, every address together past
    /// `--auth-fail-global-rate`); its token, not seen to authenticate, was not looked up
    Throttled(u64, bool),
    /// 503 `{"error": <message>}` with `Retry-After: 1`: a limit of the service (its event
    /// streams, the tenant's share of the pool) is reached; nothing was done
    Busy(String),
    /// 503 `{"error": <text>}` with `Retry-After: 1`: the database is busy, timed out or
    /// away; nothing was committed
    Unavailable(String),
    /// 500 `{"error":"internal error"}`; the cause is logged, never sent
    Internal(String),
}

/// What a request holding U+0000 in a string is told: PostgreSQL stores no U+0000 in text
/// (22021) or jsonb (22P05), whichever value holds it.
pub const NUL_REFUSED: &str = "a string of the request holds \\u0000 (U+0000), which cannot be stored: remove it";

/// Whether a string or key anywhere in `v` holds U+0000 (iteratively: serde_json has already
/// bounded the nesting to 128 levels).
pub fn holds_nul(v: &Value) -> bool {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) if s.contains('\0') => return true,
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => {
                if map.keys().any(|k| k.contains('\0')) {
                    return true;
                }
                stack.extend(map.values());
            }
            _ => {}
        }
    }
    false
}

/// What to do with a database error, by its SQLSTATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// a serialization failure or deadlock: run the transaction again
    Retry,
    /// not the caller's data: a cancel or statement timeout (57014), a lock timeout (55P03),
    /// out of resources (53…), a connection failure (08…), the server going away (57P0x)
    Unavailable,
    /// anything else: a fault of the service or the extension
    Internal,
}

/// The class of a SQLSTATE (five characters).
pub fn classify(sqlstate: &str) -> Class {
    match sqlstate {
        s if pg_todos_core::error::worth_retrying(s) => Class::Retry,
        "57014" | "55P03" => Class::Unavailable,
        s if s.starts_with("53") || s.starts_with("08") || s.starts_with("57P0") => Class::Unavailable,
        _ => Class::Internal,
    }
}

impl ApiError {
    /// The answer for a database error after the retries are spent: 400 `NUL_REFUSED` for a
    /// value holding U+0000 (22021 in text, 22P05 in jsonb: every value sent comes from the
    /// request, and PostgreSQL's own words would name no field); 503 for what is not the
    /// caller's data (a retryable error included, since its retries ran out), and for a
    /// connection the client library saw fail (no SQLSTATE: refused, closed, timed out); 500
    /// otherwise.
    /// Each is counted in the metrics by its SQLSTATE's class (`crate::metrics`).
    pub fn from_db(e: &tokio_postgres::Error) -> ApiError {
        crate::metrics::global().db_error(e.code().map(|c| c.code()));
        if e.code().is_some_and(|c| matches!(c.code(), "22021" | "22P05")) {
            return ApiError::BadRequest(NUL_REFUSED.into());
        }
        match e.code() {
            Some(code) => match classify(code.code()) {
                Class::Retry | Class::Unavailable => ApiError::Unavailable(crate::db::error_text(e)),
                Class::Internal => ApiError::Internal(crate::db::error_text(e)),
            },
            // no SQLSTATE: the connection failed (refused, closed, an I/O error, a timeout),
            // unless the error wraps something else: a value that did not convert, ours
            None => match std::error::Error::source(e) {
                Some(inner) if !inner.is::<std::io::Error>() => ApiError::Internal(e.to_string()),
                _ => ApiError::Unavailable(format!("database unavailable: {e}")),
            },
        }
    }

    /// The answer for a pool that could not hand out a connection in time or could not open
    /// one: 503, whatever the server said (a database not accepting connections says 55000).
    /// A connection that could not be opened is counted in the metrics as a database error
    /// (waiting in vain for a pooled one is not: the pool's gauges show it).
    pub fn from_pool(e: &deadpool_postgres::PoolError) -> ApiError {
        if let deadpool_postgres::PoolError::Backend(e) = e {
            crate::metrics::global().db_error(e.code().map(|c| c.code()));
        }
        ApiError::Unavailable(pool_cause(e))
    }

    /// The status and the JSON body sent.
    pub fn parts(&self) -> (StatusCode, Value) {
        match self {
            ApiError::Unauthorized(refusal) => (StatusCode::UNAUTHORIZED, refusal.body()),
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, json!({ "error": m })),
            ApiError::TooLarge(n) => {
                (StatusCode::PAYLOAD_TOO_LARGE, json!({ "error": format!("request body is larger than {n} bytes") }))
            }
            ApiError::NotFound => (StatusCode::NOT_FOUND, json!({"error": "not found"})),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, json!({ "error": m })),
            ApiError::SlowBody(n) => {
                (StatusCode::REQUEST_TIMEOUT, json!({ "error": format!("request body not received within {n} s") }))
            }
            ApiError::TooMany(m) => (StatusCode::TOO_MANY_REQUESTS, json!({ "error": m })),
            ApiError::Throttled(n, false) => (
                StatusCode::TOO_MANY_REQUESTS,
                json!({ "error": format!(
                    "too many failed authentications from this address (--auth-fail-burst, then --auth-fail-rate a second); try again in {n} s"
                ) }),
            ),
            ApiError::Throttled(n, true) => (
                StatusCode::TOO_MANY_REQUESTS,
                json!({ "error": format!(
                    "too many failed authentications from all addresses together (--auth-fail-global-rate a second); try again in {n} s"
                ) }),
            ),
            ApiError::Busy(m) => (StatusCode::SERVICE_UNAVAILABLE, json!({ "error": m })),
            ApiError::Unavailable(m) => (StatusCode::SERVICE_UNAVAILABLE, json!({ "error": m })),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, json!({"error": "internal error"})),
        }
    }
}

/// Why the pool gave no connection, in words: the database's SQLSTATE and message when it
/// refused one (`55000: database "app" is not currently accepting connections`), else
/// `database unavailable: <the pool's error>`.
pub fn pool_cause(e: &deadpool_postgres::PoolError) -> String {
    match e {
        deadpool_postgres::PoolError::Backend(e) if e.as_db_error().is_some() => crate::db::error_text(e),
        other => format!("database unavailable: {other}"),
    }
}

/// A JSON response: `status` and `body` serialized compactly, `Content-Type: application/json`.
pub fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut r = (status, body.to_string()).into_response();
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(cause) = &self {
            tracing::error!("internal error: {cause}");
        }
        let (status, body) = self.parts();
        let mut r = json_response(status, &body);
        match self {
            ApiError::Unauthorized(refusal) => {
                if let Ok(challenge) = HeaderValue::from_str(&refusal.challenge()) {
                    r.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
                }
            }
            ApiError::Unavailable(_) | ApiError::Busy(_) => {
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            ApiError::TooMany(_) => {
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            }
            ApiError::Throttled(n, _) => {
                r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(n));
            }
            ApiError::SlowBody(_) => {
                r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            _ => {}
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates() {
        for s in ["40001", "40P01"] {
            assert_eq!(classify(s), Class::Retry, "{s}");
        }
        for s in [
            "57014", "55P03", "53000", "53100", "53200", "53300", "53400", "08000", "08006", "08P01", "57P01", "57P02",
            "57P03", "57P04", "57P05",
        ] {
            assert_eq!(classify(s), Class::Unavailable, "{s}");
        }
        // the caller's data or the service's fault
        for s in ["22023", "42704", "22P02", "23505", "42883", "55000", "55006", "57000", "XX000", "P0001"] {
            assert_eq!(classify(s), Class::Internal, "{s}");
        }
    }

    #[test]
    fn bodies() {
        let (status, body) = ApiError::Unauthorized(Refusal::Missing).parts();
        assert_eq!(
            (status, &body["error"], &body["reason"]),
            (StatusCode::UNAUTHORIZED, &json!("unauthorized"), &json!("missing"))
        );
        assert_eq!(ApiError::TooLarge(100).parts().1, json!({"error": "request body is larger than 100 bytes"}));
        assert_eq!(ApiError::NotFound.parts(), (StatusCode::NOT_FOUND, json!({"error": "not found"})));
        // the cause of an internal error is not sent
        assert_eq!(ApiError::Internal("XX000: secret".into()).parts().1, json!({"error": "internal error"}));
        let r = ApiError::Unavailable("57014: canceling statement due to statement timeout".into()).into_response();
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(r.headers()[header::RETRY_AFTER], "1");
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json");
        let r = ApiError::Busy("full".into()).into_response();
        assert_eq!(
            (r.status(), &r.headers()[header::RETRY_AFTER]),
            (StatusCode::SERVICE_UNAVAILABLE, &HeaderValue::from_static("1"))
        );
        let r = ApiError::TooMany("too many".into()).into_response();
        assert_eq!(
            (r.status(), &r.headers()[header::RETRY_AFTER]),
            (StatusCode::TOO_MANY_REQUESTS, &HeaderValue::from_static("5"))
        );
        assert_eq!(ApiError::Forbidden("no".into()).parts(), (StatusCode::FORBIDDEN, json!({"error": "no"})));
        let r = ApiError::Throttled(7, false).into_response();
        assert_eq!(
            (r.status(), &r.headers()[header::RETRY_AFTER]),
            (StatusCode::TOO_MANY_REQUESTS, &HeaderValue::from_static("7"))
        );
        assert!(ApiError::Throttled(7, false).parts().1["error"].as_str().unwrap().ends_with("try again in 7 s"));
        let all = ApiError::Throttled(2, true).parts().1["error"].as_str().unwrap().to_string();
        assert!(all.contains("--auth-fail-global-rate") && all.ends_with("try again in 2 s"), "{all}");
        assert_eq!(
            ApiError::SlowBody(30).parts(),
            (StatusCode::REQUEST_TIMEOUT, json!({"error": "request body not received within 30 s"}))
        );
    }

    #[test]
    fn a_missing_token_is_challenged_without_an_error_code() {
        let r = ApiError::Unauthorized(Refusal::Missing).into_response();
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(r.headers()[header::WWW_AUTHENTICATE], "Bearer realm=\"pg_todos\"");
        assert_eq!(r.headers()[header::CONTENT_TYPE], "application/json");
    }

    #[test]
    fn a_refused_token_is_invalid_token_with_its_reason() {
        for (refusal, reason, words) in [
            (Refusal::Malformed, "malformed", "longer than 512 bytes"),
            (Refusal::Unknown, "unknown", "unknown to this service"),
            (Refusal::Revoked, "revoked", "was revoked (todo.revoke_token)"),
            (Refusal::Expired, "expired", "has expired"),
            (Refusal::Refused, "refused", "unknown, revoked or expired"),
        ] {
            let r = ApiError::Unauthorized(refusal).into_response();
            let challenge = r.headers()[header::WWW_AUTHENTICATE].to_str().unwrap().to_string();
            assert_eq!(
                challenge,
                format!(
                    "Bearer realm=\"pg_todos\", error=\"invalid_token\", error_description=\"{}\"",
                    refusal.description()
                )
            );
            assert!(challenge.contains(words), "{challenge}");
            // RFC 6750: error_description is printable ASCII without " or \
            let d = refusal.description();
            assert!(d.bytes().all(|b| (0x20..=0x7e).contains(&b) && b != b'"' && b != b'\\'), "{d}");
            let (status, body) = ApiError::Unauthorized(refusal).parts();
            assert_eq!(status, StatusCode::UNAUTHORIZED);
            assert_eq!(body, json!({"error": "invalid_token", "error_description": d, "reason": reason}));
        }
        assert_eq!(Refusal::from_reason(Some("revoked")), Refusal::Revoked);
        assert_eq!(Refusal::from_reason(Some("expired")), Refusal::Expired);
        assert_eq!(Refusal::from_reason(Some("unknown")), Refusal::Unknown);
        assert_eq!(Refusal::from_reason(None), Refusal::Refused);
    }
}
