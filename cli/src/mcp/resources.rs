//! Lists as MCP resources: what their URIs are, which ones a connection may read, and what a
//! read gives. Pure; the server (`super::Tools`) reads the database.
//!
//! - `todo://list/{list}`: the list (a conversation) `{list}`, percent-encoded as RFC 6570
//!   expands a simple string (`project:/home/me/app` is `todo://list/project%3A%2Fhome%2Fme%2Fapp`);
//!   `todo://pool`: the tenant-wide pool. The tenant is always the connection's: a URI names no
//!   tenant, and no read reaches another's.
//! - A connection bound to a list (`--conversation`, `?list=`, a token's default list: the
//!   `bound` of its context) reads that list and the pool, no other; any other connection reads
//!   any list of its tenant. `resources/list` gives the connection's own list and the pool;
//!   `resources/templates/list` the template of a list.
//! - A read gives the list twice, as the writ shows it (`/todo list`, `text/plain`) and as the
//!   REST API answers it (`GET /v1/todos?conversation_id=…`, `application/json`): each is a
//!   bounded read (the writ's `todo.max_output_size`, the API's 200 todos), the list's open and
//!   finished todos with the pool's.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use rmcp::model::{Resource, ResourceTemplate, SubscriptionFilter};

/// A list's URI before its name.
const LIST: &str = "todo://list/";
/// The tenant-wide pool's URI.
pub const POOL: &str = "todo://pool";
/// The template of a list's URI (RFC 6570).
pub const TEMPLATE: &str = "todo://list/{list}";

/// What RFC 6570's simple expansion leaves as it is: letters, digits and `-._~`.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// The URI of a list (None: the tenant-wide pool).
pub fn uri_of(list: Option<&str>) -> String {
    match list {
        Some(list) => format!("{LIST}{}", utf8_percent_encode(list, UNRESERVED)),
        None => POOL.to_string(),
    }
}

/// The list a URI names (Ok(None): the pool). Errors, in words for the client (MCP's -32602,
/// with the URI in `data.uri`): a URI of no list.
pub fn list_of(uri: &str) -> Result<Option<String>, String> {
    if uri == POOL {
        return Ok(None);
    }
    let unknown = || {
        format!("unknown resource {uri:?}: a list is {TEMPLATE} (the list's name percent-encoded), the tenant-wide pool {POOL}")
    };
    let encoded = uri.strip_prefix(LIST).filter(|e| !e.is_empty() && !e.contains('/')).ok_or_else(unknown)?;
    let list = percent_decode_str(encoded).decode_utf8().map_err(|_| unknown())?;
    if list.trim().is_empty() || list.chars().any(char::is_control) {
        return Err(unknown());
    }
    Ok(Some(list.into_owned()))
}

/// Whether a connection whose list is `own` (`bound`: named for it) may read `list`. Errors:
/// why not, naming both.
pub fn reachable(own: Option<&str>, bound: bool, list: Option<&str>) -> Result<(), String> {
    match (bound, own, list) {
        (true, Some(own), Some(list)) if own != list => Err(format!(
            "this connection is bound to the list {own:?}: it reads that list and the pool, not the list {list:?}"
        )),
        _ => Ok(()),
    }
}

/// The resources a connection lists: its own list, when it has one, and the pool.
pub fn listed(own: Option<&str>) -> Vec<Resource> {
    let mut listed = Vec::new();
    if let Some(list) = own {
        listed.push(
            Resource::new(uri_of(Some(list)), list)
                .with_title(format!("The list {list}"))
                .with_description("This connection's list, with the tenant-wide pool: as the writ shows it (text/plain) and as the REST API answers it (application/json).")
                .with_mime_type("text/plain"),
        );
    }
    listed.push(
        Resource::new(POOL, "pool")
            .with_title("The tenant-wide pool")
            .with_description("The todos of no list, which every list of the tenant shows.")
            .with_mime_type("text/plain"),
    );
    listed
}

/// The template of a list's URI.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![ResourceTemplate::new(TEMPLATE, "list")
        .with_title("A list")
        .with_description("A list of this tenant by its name (percent-encoded), with the tenant-wide pool; a connection bound to a list reads that one only.")
        .with_mime_type("text/plain")]
}

/// The most resources one client may be subscribed to at once (`resources/subscribe`), and
/// the most URIs one `subscriptions/listen` is acknowledged for.
pub const MAX_SUBSCRIPTIONS: usize = 100;

/// What a `subscriptions/listen` is acknowledged for: the resource URIs it names that are a
/// list's or the pool's, the first `MAX_SUBSCRIPTIONS` of them.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let uris: Vec<String> = requested
        .resource_subscriptions
        .iter()
        .flatten()
        .filter(|uri| list_of(uri).is_ok())
        .take(MAX_SUBSCRIPTIONS)
        .cloned()
        .collect();
    SubscriptionFilter::builder().resource_subscriptions(uris).build()
}

/// The REST path that reads a list (None: the pool) as JSON.
pub fn rest_path(list: Option<&str>) -> String {
    match list {
        Some(list) => format!("/v1/todos?conversation_id={}", utf8_percent_encode(list, UNRESERVED)),
        None => "/v1/todos?conversation_id=tenant".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lists_uri_names_it_and_nothing_else() {
        for list in ["app", "project:/home/me/app", "a b/c?d#e%f", "ünï"] {
            let uri = uri_of(Some(list));
            assert!(uri.starts_with("todo://list/") && !uri[12..].contains('/'), "{uri}");
            assert_eq!(list_of(&uri), Ok(Some(list.to_string())), "{uri}");
        }
        assert_eq!(uri_of(Some("project:/home/me/app")), "todo://list/project%3A%2Fhome%2Fme%2Fapp");
        assert_eq!(list_of(POOL), Ok(None));
        for bad in [
            "todo://list/",
            "todo://list/a/b",
            "todo://lists/a",
            "file:///etc/passwd",
            "todo://list/%0A",
            "todo://list/%FF",
            "todo://list/%20",
        ] {
            let e = list_of(bad).unwrap_err();
            assert!(e.starts_with(&format!("unknown resource {bad:?}")), "{e}");
        }
    }

    #[test]
    fn a_bound_connection_reads_its_list_and_the_pool_only() {
        assert!(reachable(Some("a"), true, Some("a")).is_ok());
        assert!(reachable(Some("a"), true, None).is_ok());
        assert_eq!(
            reachable(Some("a"), true, Some("b")).unwrap_err(),
            "this connection is bound to the list \"a\": it reads that list and the pool, not the list \"b\""
        );
        assert!(reachable(Some("a"), false, Some("b")).is_ok());
        assert!(reachable(None, false, Some("b")).is_ok());
        assert_eq!(rest_path(Some("a b")), "/v1/todos?conversation_id=a%20b");
    }
}
