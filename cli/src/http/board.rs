//! The arguments of the board's reads, from their queries: its first view (`GET
//! /v1/board?per_list=`), a long list's next page (`GET /v1/board/page`), what changed since a
//! read (`GET /v1/board/changes`) and what its filters match (`GET /v1/board/search`, the
//! archived todos too). Each bad argument is a 400 that names it; `routes` runs the statements.

use std::collections::HashMap;

use axum::extract::Query;
use axum::http::Uri;
use serde_json::Value;

use crate::db::errors::ApiError;

/// How many todos of each list the board reads first when the request names no `per_list`
/// (the extension's largest, as before the board read in pages).
const PER_LIST: i32 = 200;
/// The most todos `also` names (`todo.board_changes`' own bound).
const MAX_ALSO: usize = 200;

/// The request's query as a map; a repeated name, or one the route does not take, is a 400
/// that names it.
fn query(uri: &Uri, takes: &[&str]) -> Result<HashMap<String, String>, ApiError> {
    let Query(pairs): Query<Vec<(String, String)>> =
        Query::try_from_uri(uri).map_err(|e| ApiError::BadRequest(format!("malformed query: {e}")))?;
    let mut map = HashMap::new();
    for (name, value) in pairs {
        if !takes.contains(&name.as_str()) {
            return Err(ApiError::BadRequest(format!(
                "unknown parameter \"{name}\": this route takes {}",
                takes.join(", ")
            )));
        }
        if map.insert(name.clone(), value).is_some() {
            return Err(ApiError::BadRequest(format!("parameter \"{name}\" given twice")));
        }
    }
    Ok(map)
}

/// A whole number parameter, or a 400 that names it.
fn number(q: &HashMap<String, String>, name: &str) -> Result<Option<i32>, ApiError> {
    q.get(name)
        .map(|v| {
            v.parse::<i32>().map_err(|_| ApiError::BadRequest(format!("{name} must be a whole number, not \"{v}\"")))
        })
        .transpose()
}

/// Todo ids, comma-separated (at most `MAX_ALSO`), or a 400 that says what is wrong.
fn ids_of(text: &str) -> Result<Vec<i64>, ApiError> {
    let ids: Vec<&str> = text.split(',').collect();
    if ids.len() > MAX_ALSO {
        return Err(ApiError::BadRequest(format!("also names {} todos: name at most {MAX_ALSO}", ids.len())));
    }
    ids.iter()
        .map(|i| {
            i.trim().parse::<i64>().map_err(|_| {
                ApiError::BadRequest(format!(
                    "also must be todo ids separated by commas; \"{i}\" is not a whole number"
                ))
            })
        })
        .collect()
}

/// `GET /v1/board`'s `per_list`: 1 to 200, 200 when absent.
pub fn per_list(uri: &Uri) -> Result<i32, ApiError> {
    let per_list = number(&query(uri, &["per_list"])?, "per_list")?.unwrap_or(PER_LIST);
    if !(1..=PER_LIST).contains(&per_list) {
        return Err(ApiError::BadRequest(format!("per_list must be from 1 to {PER_LIST}, not {per_list}")));
    }
    Ok(per_list)
}

/// `GET /v1/board/page`'s arguments.
#[derive(Debug, PartialEq, Eq)]
pub struct Page {
    /// None: the tenant-wide pool
    pub list: Option<String>,
    pub after: Option<String>,
    pub size: Option<i32>,
}

/// `GET /v1/board/page`'s `list`, `after` and `page_size`.
pub fn page(uri: &Uri) -> Result<Page, ApiError> {
    let mut q = query(uri, &["list", "after", "page_size"])?;
    let size = number(&q, "page_size")?;
    Ok(Page { list: q.remove("list"), after: q.remove("after"), size })
}

/// `GET /v1/board/changes`' `since` and `also` (ids, comma-separated).
pub fn changes(uri: &Uri) -> Result<(Option<String>, Option<Vec<i64>>), ApiError> {
    let mut q = query(uri, &["since", "also"])?;
    let also = q.get("also").map(|ids| ids_of(ids)).transpose()?;
    Ok((q.remove("since"), also))
}

/// `GET /v1/board/search`'s filters as `todo.board_search` takes them (`list` empty: null,
/// the pool; `archived`: `true` or `false`, a JSON boolean; a blank `status`: a 400).
pub fn search(uri: &Uri) -> Result<Value, ApiError> {
    let q = query(uri, &["list", "status", "q", "who", "archived"])?;
    let mut filters = serde_json::Map::new();
    for (name, value) in q {
        let value = match name.as_str() {
            "list" if value.is_empty() => Value::Null,
            "archived" => Value::Bool(boolean(&name, &value)?),
            // (the extension takes a blank status for none; the route's is one of its statuses)
            "status" if value.trim().is_empty() => {
                return Err(ApiError::BadRequest("status must not be blank: leave it out for any status".into()));
            }
            _ => Value::String(value),
        };
        filters.insert(name, value);
    }
    Ok(Value::Object(filters))
}

/// A parameter that is `true` or `false`, or a 400 that names the values.
fn boolean(name: &str, value: &str) -> Result<bool, ApiError> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ApiError::BadRequest(format!("{name} must be true or false"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn arguments_and_what_to_fix() {
        assert_eq!(per_list(&uri("/v1/board")).unwrap(), 200);
        assert_eq!(per_list(&uri("/v1/board?per_list=30")).unwrap(), 30);
        for bad in ["/v1/board?per_list=0", "/v1/board?per_list=x", "/v1/board?per_list=1&per_list=2", "/v1/board?q=1"]
        {
            assert!(matches!(per_list(&uri(bad)), Err(ApiError::BadRequest(_))), "{bad}");
        }
        assert_eq!(
            page(&uri("/v1/board/page?after=3:4")).unwrap(),
            Page { list: None, after: Some("3:4".into()), size: None }
        );
        assert_eq!(
            changes(&uri("/v1/board/changes?since=1:1:&also=4,%205")).unwrap(),
            (Some("1:1:".into()), Some(vec![4, 5]))
        );
        assert!(changes(&uri("/v1/board/changes?also=4,x")).is_err());
        let many = (0..201).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        assert!(changes(&uri(&format!("/v1/board/changes?also={many}"))).is_err());
        assert_eq!(
            search(&uri("/v1/board/search?list=&q=a%20b")).unwrap(),
            serde_json::json!({"list": null, "q": "a b"})
        );
    }

    #[test]
    fn archived_is_a_boolean() {
        assert_eq!(
            search(&uri("/v1/board/search?archived=true&list=release-1")).unwrap(),
            serde_json::json!({"archived": true, "list": "release-1"})
        );
        assert_eq!(search(&uri("/v1/board/search?archived=false")).unwrap(), serde_json::json!({"archived": false}));
        assert_eq!(
            search(&uri("/v1/board/search?status=canceled")).unwrap(),
            serde_json::json!({"status": "canceled"})
        );
        for bad in ["maybe", "", "1", "TRUE", "true%20"] {
            match search(&uri(&format!("/v1/board/search?archived={bad}"))) {
                Err(ApiError::BadRequest(m)) => assert_eq!(m, "archived must be true or false", "{bad}"),
                other => panic!("archived={bad}: {other:?}"),
            }
        }
        assert!(matches!(search(&uri("/v1/board/search?archived=true&archived=false")), Err(ApiError::BadRequest(_))));
        for blank in ["", "%20"] {
            assert!(matches!(search(&uri(&format!("/v1/board/search?status={blank}"))), Err(ApiError::BadRequest(_))));
        }
    }
}
