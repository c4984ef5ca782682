//! Who a request acts for: the tenant and label of its bearer token (`todo.authenticate`),
//! whether the token was made for a person, and the agent recorded on what it writes
//! (`X-Agent-Id`, `X-Actor: person`, the latter only with a person's token). The header
//! parsing is pure and unit-tested; the token is never logged.

use axum::http::HeaderMap;
use deadpool_postgres::Client;

use crate::db::errors::{ApiError, Refusal};

/// A token's tenant and label, and whether it was made for a person, as `todo.authenticate`
/// answers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub tenant: String,
    pub label: String,
    pub person: bool,
    /// the list its MCP calls work on when the request names none
    pub default_list: Option<String>,
}

/// Longest token sent to the database; a longer one is refused unread.
const MAX_TOKEN: usize = 512;

/// The token of an `Authorization: Bearer <token>` header (scheme in any case, spaces around
/// the token ignored); None when the header is missing, not text, of another scheme, empty or
/// longer than 512 bytes.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    token(headers).ok()
}

/// The bearer token, or why there is none: `Missing` for no `Authorization` header or one of
/// another scheme, `Malformed` for a bearer header whose token is not text, empty or longer
/// than 512 bytes.
pub fn token(headers: &HeaderMap) -> Result<&str, Refusal> {
    let Some(value) = headers.get(axum::http::header::AUTHORIZATION) else { return Err(Refusal::Missing) };
    let value = value.to_str().map_err(|_| match value.as_bytes().get(..7) {
        Some(p) if p.eq_ignore_ascii_case(b"bearer ") => Refusal::Malformed,
        _ => Refusal::Missing,
    })?;
    let value = value.trim();
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Refusal::Missing);
    }
    let token = token.trim();
    if token.is_empty() || token.len() > MAX_TOKEN {
        return Err(Refusal::Malformed);
    }
    Ok(token)
}

/// The agent a request acts as: `person:<label>` with `X-Actor: person` (the board sends it)
/// from a token made for a person, else `X-Agent-Id` when present and not blank, else the
/// token's label. Errors: 403 for `X-Actor: person` from a token not made for a person; 400
/// for an `X-Agent-Id` starting with `person:` in any case (only a person's token makes a
/// person), an `X-Actor` other than `person` or `agent`, a header that is not text.
pub fn actor(headers: &HeaderMap, identity: &Identity) -> Result<String, ApiError> {
    let text = |name: &str| match headers.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim().to_string()))
            .map_err(|_| ApiError::BadRequest(format!("{name} must be text"))),
    };
    let agent = text("x-agent-id")?.filter(|a| !a.is_empty());
    if agent.as_deref().is_some_and(|a| a.get(..7).is_some_and(|p| p.eq_ignore_ascii_case("person:"))) {
        return Err(ApiError::BadRequest("X-Agent-Id may not start with person:".into()));
    }
    match text("x-actor")?.map(|a| a.to_ascii_lowercase()).as_deref() {
        Some("person") if identity.person => Ok(format!("person:{}", identity.label)),
        Some("person") => Err(ApiError::Forbidden(
            "X-Actor: person needs a token made for a person (todo.create_token(tenant, label, person => true))".into(),
        )),
        None | Some("" | "agent") => Ok(agent.unwrap_or_else(|| identity.label.clone())),
        Some(_) => Err(ApiError::BadRequest("X-Actor must be person or agent".into())),
    }
}

/// The identity of the request's bearer token, through `todo.authenticate` on `db`.
/// Errors: 401 (`ApiError::Unauthorized`) saying why: no bearer token, a malformed one, or
/// one the database does not authenticate, with the reason `todo.token_refusal` gives
/// (asked only then: an extension without it answers `Refused`); a database error's answer
/// (503/500) when the check itself fails.
pub async fn authenticate(db: &Client, headers: &HeaderMap) -> Result<Identity, ApiError> {
    let token = token(headers).map_err(ApiError::Unauthorized)?;
    let lookup = async {
        let statement =
            db.prepare_cached("SELECT tenant_id, label, person, default_list FROM todo.authenticate($1)").await?;
        db.query_opt(&statement, &[&token]).await
    };
    let Some(row) = lookup.await.map_err(|e| ApiError::from_db(&e))? else {
        return Err(ApiError::Unauthorized(refusal(db, token).await?));
    };
    Ok(Identity {
        tenant: row.get(0),
        label: row.get::<_, Option<String>>(1).unwrap_or_default(),
        person: row.get::<_, Option<bool>>(2).unwrap_or(false),
        default_list: row.get(3),
    })
}

/// Why `token` does not authenticate (`todo.token_refusal`); `Refused` when the extension
/// has no such function (older than 1.0.0) or the role may not call it. Errors: a database
/// error's answer for any other failure.
async fn refusal(db: &Client, token: &str) -> Result<Refusal, ApiError> {
    match db.query_one("SELECT todo.token_refusal($1)", &[&token]).await {
        Ok(row) => Ok(Refusal::from_reason(row.get::<_, Option<String>>(0).as_deref())),
        Err(e) if e.code().is_some_and(|c| matches!(c.code(), "42883" | "42501")) => Ok(Refusal::Refused),
        Err(e) => Err(ApiError::from_db(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn bearer_tokens() {
        let t = "pgt_".to_string() + &"ab".repeat(32);
        assert_eq!(bearer(&headers(&[("authorization", &format!("Bearer {t}"))])), Some(t.as_str()));
        assert_eq!(bearer(&headers(&[("authorization", &format!("bearer   {t} "))])), Some(t.as_str()));
        assert_eq!(bearer(&headers(&[])), None);
        assert_eq!(bearer(&headers(&[("authorization", "Basic dXNlcjpwYXNz")])), None);
        assert_eq!(bearer(&headers(&[("authorization", "Bearer")])), None);
        assert_eq!(bearer(&headers(&[("authorization", "Bearer   ")])), None);
        assert_eq!(bearer(&headers(&[("authorization", &format!("Bearer {}", "x".repeat(513)))])), None);
        let mut odd = HeaderMap::new();
        odd.insert("authorization", HeaderValue::from_bytes(b"Bearer \xff\xfe").unwrap());
        assert_eq!(bearer(&odd), None);
    }

    #[test]
    fn why_there_is_no_token() {
        assert_eq!(token(&headers(&[])), Err(Refusal::Missing));
        assert_eq!(token(&headers(&[("authorization", "Basic dXNlcjpwYXNz")])), Err(Refusal::Missing));
        assert_eq!(token(&headers(&[("authorization", "Bearer")])), Err(Refusal::Malformed));
        assert_eq!(token(&headers(&[("authorization", "bearer   ")])), Err(Refusal::Malformed));
        assert_eq!(
            token(&headers(&[("authorization", &format!("Bearer {}", "x".repeat(513)))])),
            Err(Refusal::Malformed)
        );
        assert_eq!(token(&headers(&[("authorization", "Bearer pgt_1")])), Ok("pgt_1"));
        let mut odd = HeaderMap::new();
        odd.insert("authorization", HeaderValue::from_bytes(b"Bearer \xff\xfe").unwrap());
        assert_eq!(token(&odd), Err(Refusal::Malformed));
        odd.insert("authorization", HeaderValue::from_bytes(b"Digest \xff").unwrap());
        assert_eq!(token(&odd), Err(Refusal::Missing));
    }

    #[test]
    fn actors() {
        let agent = Identity { tenant: "acme".into(), label: "ci-bot".into(), person: false, default_list: None };
        let alice = Identity { tenant: "acme".into(), label: "alice".into(), person: true, default_list: None };
        assert_eq!(actor(&headers(&[]), &agent).unwrap(), "ci-bot");
        assert_eq!(actor(&headers(&[("x-agent-id", "planner")]), &agent).unwrap(), "planner");
        assert_eq!(actor(&headers(&[("x-agent-id", "  ")]), &agent).unwrap(), "ci-bot");
        assert_eq!(actor(&headers(&[("x-actor", "person")]), &alice).unwrap(), "person:alice");
        assert_eq!(
            actor(&headers(&[("x-actor", "Person"), ("x-agent-id", "planner")]), &alice).unwrap(),
            "person:alice"
        );
        assert_eq!(actor(&headers(&[("x-actor", "agent"), ("x-agent-id", "planner")]), &alice).unwrap(), "planner");
        // a person's token acts as an agent by default
        assert_eq!(actor(&headers(&[]), &alice).unwrap(), "alice");
        // an agent's token may not act as a person, in any spelling
        for spelling in ["person", "Person", "PERSON", " person "] {
            assert!(
                matches!(actor(&headers(&[("x-actor", spelling)]), &agent), Err(ApiError::Forbidden(m)) if m.contains("person => true")),
                "{spelling}"
            );
        }
        for id in ["person:bob", "Person:bob", "PERSON:bob", "pErSoN:", "  person:bob"] {
            assert_eq!(
                actor(&headers(&[("x-agent-id", id)]), &agent).unwrap_err(),
                ApiError::BadRequest("X-Agent-Id may not start with person:".into()),
                "{id}"
            );
        }
        // even with a person's token and header: the agent id is refused, not overridden
        assert!(actor(&headers(&[("x-agent-id", "person:bob"), ("x-actor", "person")]), &alice).is_err());
        // not a prefix: fine
        assert_eq!(actor(&headers(&[("x-agent-id", "persona")]), &agent).unwrap(), "persona");
        assert_eq!(actor(&headers(&[("x-agent-id", "pers:on")]), &agent).unwrap(), "pers:on");
        assert_eq!(
            actor(&headers(&[("x-actor", "robot")]), &agent).unwrap_err(),
            ApiError::BadRequest("X-Actor must be person or agent".into())
        );
    }
}
