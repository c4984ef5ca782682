//! The Server-Sent Events of `/v1/events`, as text: OpenCode's bus shape (`data:` lines of
//! `{"type", "properties"}`), one `todo.updated` message per changed conversation, and the
//! cursor of `todo.changes_since` as the event id of the last message of a batch only (a
//! batch may span several pages), so a client cut mid-batch reconnects (`Last-Event-ID`) from
//! the batch's start. A page of changes is read from the database's text into its messages'
//! text directly, never as a tree of values. Pure, unit-tested; `hub` sends them.

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

/// A list made on the board (`todo.board_act`'s `create_list`, which records no event):
/// `{"type":"board.list.created","properties":{"list": <name>}}`, with no id (it is no place in
/// the change feed: a client reconnecting does not get it again).
pub fn list_created(list: &str) -> String {
    message(None, &bus("board.list.created", &json!({ "list": list })))
}

/// One page of `todo.changes_since(since, after, page_size)`: its cursor, the `after` of the
/// next page (None on the last), and its changes as SSE text, ready to send: one `todo.updated`
/// message per change (`{"sessionID": <conversation_id>, "todos": […]}`), the last one with
/// the batch's id when the page is the batch's last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub cursor: String,
    pub next: Option<String>,
    /// the messages, one after the other
    pub text: Vec<u8>,
    /// how many messages
    pub messages: usize,
}

/// The page of `json`, the text of an answer `{"cursor", "changes": [{"conversation_id",
/// "todos"}], "next"}`, read without building it as a tree: each change's `conversation_id`
/// and `todos` are copied from `json` into the messages as they are (their white space left
/// out), so the page costs about its own size once more, never a multiple of it. On the last
/// page (`next` null) the last message carries `id: <round>`, the batch's cursor (its first
/// page's), or this page's own cursor when `round` is None. Errors: an answer without a cursor
/// that is a snapshot (see `valid_cursor`), without a list of changes, with a change that is
/// not an object, or with a `next` that is not text or null.
pub fn page(json: &str, round: Option<&str>) -> Result<Page, String> {
    use serde_json::value::RawValue;
    use std::collections::HashMap;
    let shown = || json.chars().take(200).collect::<String>();
    let top: HashMap<&str, &RawValue> =
        serde_json::from_str(json).map_err(|e| format!("changes_since: {e} in {}", shown()))?;
    let cursor: String = top
        .get("cursor")
        .and_then(|c| serde_json::from_str::<String>(c.get()).ok())
        .filter(|c| valid_cursor(c))
        .ok_or_else(|| format!("changes_since: no cursor in {}", shown()))?;
    let changes: Vec<HashMap<&str, &RawValue>> = top
        .get("changes")
        .and_then(|c| serde_json::from_str(c.get()).ok())
        .ok_or_else(|| format!("changes_since: no changes in {}", shown()))?;
    let next = match top.get("next").map(|n| serde_json::from_str::<Option<String>>(n.get())) {
        None => None,
        Some(Ok(next)) => next,
        Some(Err(_)) => return Err(format!("changes_since: next is {}", top["next"].get())),
    };
    let id = if next.is_none() { Some(round.unwrap_or(&cursor)) } else { None };
    let mut text = Vec::with_capacity(json.len() + changes.len() * 80);
    let last = changes.len().saturating_sub(1);
    for (i, change) in changes.iter().enumerate() {
        if let Some(id) = id.filter(|_| i == last) {
            text.extend_from_slice(b"id: ");
            text.extend_from_slice(id.as_bytes());
            text.push(b'\n');
        }
        text.extend_from_slice(b"data: {\"type\":\"todo.updated\",\"properties\":{\"sessionID\":");
        compact(&mut text, change.get("conversation_id").map_or("null", |c| c.get()));
        text.extend_from_slice(b",\"todos\":");
        compact(&mut text, change.get("todos").map_or("null", |t| t.get()));
        text.extend_from_slice(b"}}\n\n");
    }
    Ok(Page { cursor, next, text, messages: changes.len() })
}

/// Appends the JSON text `raw` to `out` without its white space outside strings (PostgreSQL
/// prints jsonb with a space after each `:` and `,`): one line, as an SSE `data:` needs (a
/// JSON string holds no line break, only `\n`).
fn compact(out: &mut Vec<u8>, raw: &str) {
    let mut in_string = false;
    let mut escaped = false;
    for &b in raw.as_bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if b.is_ascii_whitespace() {
            continue;
        }
        out.push(b);
    }
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
        // a list made on the board: no id, its name as JSON (quotes and line breaks escaped)
        assert_eq!(
            list_created("q3 \"plan\"\n"),
            "data: {\"type\":\"board.list.created\",\"properties\":{\"list\":\"q3 \\\"plan\\\"\\n\"}}\n\n"
        );
        // JSON with a line break in a string stays on one line
        assert_eq!(bus("t", &json!({"a": "x\ny"})), "{\"type\":\"t\",\"properties\":{\"a\":\"x\\ny\"}}");
    }

    fn text(p: &Page) -> String {
        String::from_utf8(p.text.clone()).unwrap()
    }

    #[test]
    fn only_the_last_message_of_a_batch_carries_the_cursor() {
        // as PostgreSQL prints jsonb: keys by length, a space after each colon and comma
        let answer = r#"{"next": null, "cursor": "790:795:", "changes": [{"todos": [{"id": "1", "status": "pending", "content": "a, b: \"c\"", "priority": "medium"}], "conversation_id": "c1"}, {"todos": [], "conversation_id": null}, {"todos": [], "conversation_id": "c 3"}]}"#;
        let p = page(answer, None).unwrap();
        assert_eq!((p.cursor.as_str(), p.next.as_deref(), p.messages), ("790:795:", None, 3));
        assert_eq!(
            text(&p),
            concat!(
                r#"data: {"type":"todo.updated","properties":{"sessionID":"c1","todos":[{"id":"1","status":"pending","content":"a, b: \"c\"","priority":"medium"}]}}"#,
                "\n\n",
                r#"data: {"type":"todo.updated","properties":{"sessionID":null,"todos":[]}}"#,
                "\n\nid: 790:795:\n",
                r#"data: {"type":"todo.updated","properties":{"sessionID":"c 3","todos":[]}}"#,
                "\n\n"
            )
        );
        // every message is JSON that reads as the change
        for (i, event) in text(&p).split("\n\n").filter(|e| !e.is_empty()).enumerate() {
            let data = event.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
            let v: Value = serde_json::from_str(data).unwrap();
            assert_eq!(v["type"], "todo.updated");
            assert_eq!(v["properties"]["sessionID"], [json!("c1"), Value::Null, json!("c 3")][i]);
        }
        // the last page of a batch of several: the batch's cursor, not its own
        let last = r#"{"cursor": "800:800:", "changes": [{"conversation_id": "c", "todos": []}], "next": null}"#;
        let p = page(last, Some("790:795:")).unwrap();
        assert!(text(&p).starts_with("id: 790:795:\ndata: "), "{}", text(&p));
        // a page with more to come: no id on any message
        let more = r#"{"cursor": "800:800:", "changes": [{"conversation_id": "c", "todos": []}], "next": "c"}"#;
        let p = page(more, None).unwrap();
        assert_eq!(p.next.as_deref(), Some("c"));
        assert!(!text(&p).contains("id: "));
        // no changes: no messages, the cursor still moves
        let p = page(r#"{"cursor": "800:800:", "changes": [], "next": null}"#, None).unwrap();
        assert_eq!((p.cursor.as_str(), p.messages, p.text.len()), ("800:800:", 0, 0));
    }

    #[test]
    fn compacting_keeps_strings_whole() {
        let mut out = Vec::new();
        compact(&mut out, "[ {\"a b\": \" x \\\" , y \\\\\" } , 1 ,\n 2 ]");
        assert_eq!(String::from_utf8(out).unwrap(), "[{\"a b\":\" x \\\" , y \\\\\"},1,2]");
    }

    #[test]
    fn answers_without_a_cursor_are_errors() {
        assert!(page(r#"{"changes": []}"#, None).is_err());
        assert!(page("{\"cursor\": \"1:2:\\nid: x\", \"changes\": []}", None).is_err());
        assert!(page(r#"{"cursor": "1:2:"}"#, None).is_err());
        assert!(page(r#"{"cursor": "1:2:", "changes": [], "next": 3}"#, None).is_err());
        assert!(page(r#"{"cursor": "1:2:", "changes": [1]}"#, None).is_err());
        assert!(page("not json", None).is_err());
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
