//! The Server-Sent Events of `/v1/events`, as text: OpenCode's bus shape (`data:` lines of
//! `{"type", "properties"}`), one `todo.updated` message per changed conversation, and the
//! cursor of `todo.changes_since` as the event id of the last message of a batch only, so a
//! client cut mid-batch reconnects (`Last-Event-ID`) from the batch's start. Pure,
//! unit-tested; `hub` sends them.

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

/// `todo.changes_since`'s answer (`{"cursor", "changes": [{"conversation_id", "todos"}]}`)
/// as its cursor and its messages, one `todo.updated` per change
/// (`{"sessionID": <conversation_id>, "todos": […]}`), the last one with `id: <cursor>`.
/// Errors: an answer without a cursor that is a snapshot (see `valid_cursor`) or without a
/// list of changes.
pub fn batch(answer: &Value) -> Result<(String, Vec<String>), String> {
    let cursor = answer["cursor"]
        .as_str()
        .filter(|c| valid_cursor(c))
        .ok_or_else(|| format!("changes_since: no cursor in {answer}"))?;
    let changes = answer["changes"].as_array().ok_or_else(|| format!("changes_since: no changes in {answer}"))?;
    let last = changes.len().saturating_sub(1);
    let messages = changes
        .iter()
        .enumerate()
        .map(|(i, change)| {
            let properties = json!({"sessionID": change["conversation_id"], "todos": change["todos"]});
            message((i == last).then_some(cursor), &bus("todo.updated", &properties))
        })
        .collect();
    Ok((cursor.to_string(), messages))
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
    fn messages() {
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
            ]
        });
        let (cursor, m) = batch(&answer).unwrap();
        assert_eq!(cursor, "790:795:");
        assert_eq!(m.len(), 3);
        assert_eq!(
            m[0],
            "data: {\"type\":\"todo.updated\",\"properties\":{\"sessionID\":\"c1\",\"todos\":[{\"content\":\"a\",\"id\":\"1\",\"priority\":\"medium\",\"status\":\"pending\"}]}}\n\n"
        );
        assert_eq!(m[1], "data: {\"type\":\"todo.updated\",\"properties\":{\"sessionID\":null,\"todos\":[]}}\n\n");
        assert_eq!(
            m[2],
            "id: 790:795:\ndata: {\"type\":\"todo.updated\",\"properties\":{\"sessionID\":\"c3\",\"todos\":[]}}\n\n"
        );
        // no changes: no messages, the cursor still moves
        let (cursor, m) = batch(&json!({"cursor": "800:800:", "changes": []})).unwrap();
        assert_eq!((cursor.as_str(), m.len()), ("800:800:", 0));
    }

    #[test]
    fn answers_without_a_cursor_are_errors() {
        assert!(batch(&json!({"changes": []})).is_err());
        assert!(batch(&json!({"cursor": "1:2:\nid: x", "changes": []})).is_err());
        assert!(batch(&json!({"cursor": "1:2:"})).is_err());
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
