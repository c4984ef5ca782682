//! The Server-Sent Events of `/v1/events`, as text: OpenCode's bus shape (`data:` lines of
//! `{"type", "properties"}`), one `todo.updated` message per changed conversation, and the
//! cursor of `todo.changes_since` as the event id of the last message of a batch only (a
//! batch may span several pages), so a client cut mid-batch reconnects (`Last-Event-ID`) from
//! the batch's start. Pure, unit-tested; `hub` sends them.

use serde_json::{json, Value};

/// The keep-alive comment, sent every 15 s.
pub const PING: &str = ": ping\n\n";

/// One message: `id: <id>` when given, then the data (one line of JSON), then a blank line.
pub fn message(id: Option<&str>, data: &str) -> String {
    match id {
        Some(id) => format!("id: {id}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// OpenCode's bus event `{"type": …, "properties": …}` as one line, `type` first as
/// OpenCode writes it.
pub fn bus(kind: &str, properties: &Value) -> String {
    format!("{{\"type\":{},\"properties\":{properties}}}", Value::from(kind))
}

/// The first message of a stream: `{"type":"server.connected","properties":{}}`, with the
/// cursor as its id when given.
pub fn connected(id: Option<&str>) -> String {
    message(id, &bus("server.connected", &json!({})))
}

/// One page of `todo.changes_since(since, after, page_size)`: its cursor, the `data` of one
/// `todo.updated` message per change (`{"sessionID": <conversation_id>, "todos": […]}`), and
/// the `after` of the next page (None on the last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub cursor: String,
    pub updates: Vec<String>,
    pub next: Option<String>,
}

/// The page of an answer `{"cursor", "changes": [{"conversation_id", "todos"}], "next"}`.
/// Errors: an answer without a cursor that is a snapshot (see `valid_cursor`), without a
/// list of changes, or with a `next` that is not text or null.
pub fn page(answer: &Value) -> Result<Page, String> {
    let cursor = answer["cursor"]
        .as_str()
        .filter(|c| valid_cursor(c))
        .ok_or_else(|| format!("changes_since: no cursor in {answer}"))?;
    let changes = answer["changes"].as_array().ok_or_else(|| format!("changes_since: no changes in {answer}"))?;
    let next = match &answer["next"] {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => return Err(format!("changes_since: next is {other}")),
    };
    let updates = changes
        .iter()
        .map(|change| bus("todo.updated", &json!({"sessionID": change["conversation_id"], "todos": change["todos"]})))
        .collect();
    Ok(Page { cursor: cursor.to_string(), updates, next })
}

/// The messages of `updates`, the last one with `id: <last_id>` when given.
pub fn messages(updates: Vec<String>, last_id: Option<&str>) -> Vec<String> {
    let last = updates.len().saturating_sub(1);
    updates.into_iter().enumerate().map(|(i, data)| message(if i == last { last_id } else { None }, &data)).collect()
}

/// Whether `s` reads as a `pg_snapshot` (`xmin:xmax:xip,…`, e.g. `783:790:785` or `790:790:`):
/// what a `Last-Event-ID` must be. The database checks the numbers; this keeps out anything
/// else, a line break above all.
pub fn valid_cursor(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    let number = |p: &str| !p.is_empty() && p.len() <= 20 && p.bytes().all(|b| b.is_ascii_digit());
    parts.len() == 3 && number(parts[0]) && number(parts[1]) && (parts[2].is_empty() || parts[2].split(',').all(number))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_text() {
        assert_eq!(
            connected(Some("10:12:11")),
            "id: 10:12:11\ndata: {\"type\":\"server.connected\",\"properties\":{}}\n\n"
        );
        assert_eq!(connected(None), "data: {\"type\":\"server.connected\",\"properties\":{}}\n\n");
        // JSON with a line break in a string stays on one line
        assert_eq!(bus("t", &json!({"a": "x\ny"})), "{\"type\":\"t\",\"properties\":{\"a\":\"x\\ny\"}}");
    }

    #[test]
    fn only_the_last_message_of_a_batch_carries_the_cursor() {
        let answer = json!({
            "cursor": "790:795:",
            "changes": [
                {"conversation_id": "c1", "todos": [{"content": "a", "status": "pending", "priority": "medium", "id": "1"}]},
                {"conversation_id": null, "todos": []},
                {"conversation_id": "c3", "todos": []},
            ],
            "next": null
        });
        let p = page(&answer).unwrap();
        assert_eq!((p.cursor.as_str(), p.next.as_deref(), p.updates.len()), ("790:795:", None, 3));
        let m = messages(p.updates, Some(&p.cursor));
        assert_eq!(
            m[0],
            "data: {\"type\":\"todo.updated\",\"properties\":{\"sessionID\":\"c1\",\"todos\":[{\"content\":\"a\",\"id\":\"1\",\"priority\":\"medium\",\"status\":\"pending\"}]}}\n\n"
        );
        assert_eq!(m[1], "data: {\"type\":\"todo.updated\",\"properties\":{\"sessionID\":null,\"todos\":[]}}\n\n");
        assert_eq!(
            m[2],
            "id: 790:795:\ndata: {\"type\":\"todo.updated\",\"properties\":{\"sessionID\":\"c3\",\"todos\":[]}}\n\n"
        );
        // a page with more to come: no id on any message
        let p = page(&json!({"cursor": "800:800:", "changes": [{"conversation_id": "c", "todos": []}], "next": "c"}))
            .unwrap();
        assert_eq!(p.next.as_deref(), Some("c"));
        assert!(messages(p.updates, None).iter().all(|m| m.starts_with("data: ")));
        // no changes: no messages, the cursor still moves
        let p = page(&json!({"cursor": "800:800:", "changes": [], "next": null})).unwrap();
        assert_eq!((p.cursor.as_str(), p.updates.len()), ("800:800:", 0));
        assert!(messages(p.updates, Some("800:800:")).is_empty());
    }

    #[test]
    fn answers_without_a_cursor_are_errors() {
        assert!(page(&json!({"changes": []})).is_err());
        assert!(page(&json!({"cursor": "1:2:\nid: x", "changes": []})).is_err());
        assert!(page(&json!({"cursor": "1:2:"})).is_err());
        assert!(page(&json!({"cursor": "1:2:", "changes": [], "next": 3})).is_err());
    }

    #[test]
    fn cursors() {
        for ok in ["783:790:785", "790:790:", "1:5:2,3,4", "18446744073709551615:18446744073709551615:"] {
            assert!(valid_cursor(ok), "{ok}");
        }
        for bad in [
            "",
            "1:2",
            "1:2:3:4",
            "a:2:",
            "1:2:3,",
            "1:2:,3",
            ":2:",
            "1: 2:",
            "1:2:\n",
            "-1:2:",
            "123456789012345678901:1:",
        ] {
            assert!(!valid_cursor(bad), "{bad:?}");
        }
    }
}
