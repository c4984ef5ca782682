//! JSON values printed as the runtimes' own languages print them, for the models that read
//! that text: Python's `repr()` (LangChain's `write_todos` answer), Python's
//! `json.dumps(..., ensure_ascii=False)` with its default separators (Hermes' `todo`) and
//! JavaScript's `JSON.stringify` (Qwen Code's reminder). An object's keys come out in the
//! order `order` gives (the order the runtime builds them in; keys it does not name follow,
//! sorted), as the store's JSON values keep no order of their own. Pure.

use serde_json::{Map, Value};

/// An object's entries in `order`, then the keys `order` does not name.
fn entries<'a>(map: &'a Map<String, Value>, order: &[&str]) -> Vec<(&'a String, &'a Value)> {
    let mut out: Vec<(&String, &Value)> = map.iter().collect();
    out.sort_by_key(|(k, _)| order.iter().position(|o| o == k).unwrap_or(order.len()));
    out
}

/// `repr()` of the Python value a JSON value loads as: `{'k': 'v', 'n': [1, True, None]}`.
/// Strings as Python quotes them (single quotes unless the text holds a single quote and no
/// double one); floats with their `.0`. Keys in the value's order.
pub fn python_repr(v: &Value, order: &[&str]) -> String {
    let mut out = String::new();
    write_repr(v, order, &mut out);
    out
}

fn write_repr(v: &Value, order: &[&str], out: &mut String) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => out.push_str(&repr_str(s)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, order, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in entries(map, order).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&repr_str(k));
                out.push_str(": ");
                write_repr(item, order, out);
            }
            out.push('}');
        }
    }
}

/// A number as Python prints it: integers as they are, floats with a fraction (`1.0`).
fn number(n: &serde_json::Number) -> String {
    if n.is_f64() {
        let text = n.to_string();
        if text.contains(['.', 'e', 'E']) {
            text
        } else {
            format!("{text}.0")
        }
    } else {
        n.to_string()
    }
}

/// `repr()` of a str.
pub fn repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if !printable(c) => {
                let code = c as u32;
                if code <= 0xff {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code <= 0xffff {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// Whether Python's `str.isprintable()` holds for a character, for the characters an agent
/// sends: control characters, the C1 block, separators other than the space and the format
/// characters are not.
fn printable(c: char) -> bool {
    !(c.is_control()
        || matches!(c, '\u{a0}' | '\u{ad}' | '\u{2028}' | '\u{2029}' | '\u{feff}')
        || ('\u{2000}'..='\u{200f}').contains(&c)
        || ('\u{202a}'..='\u{202f}').contains(&c)
        || ('\u{2060}'..='\u{206f}').contains(&c)
        || c == '\u{3000}')
}

/// `json.dumps(v, ensure_ascii=False)`: `", "` between items, `": "` after keys, strings
/// escaped as Python's encoder does (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, other
/// control characters as `\u00XX`).
pub fn python_dumps(v: &Value, order: &[&str]) -> String {
    let mut out = String::new();
    write_json(v, order, ", ", ": ", &mut out);
    out
}

fn write_json(v: &Value, order: &[&str], comma: &str, colon: &str, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => dumps_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                write_json(item, order, comma, colon, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in entries(map, order).into_iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                dumps_str(k, out);
                out.push_str(colon);
                write_json(item, order, comma, colon, out);
            }
            out.push('}');
        }
    }
}

/// `JSON.stringify(v)`: no spaces; strings escaped as JavaScript does (as `python_dumps`).
pub fn js_stringify(v: &Value, order: &[&str]) -> String {
    let mut out = String::new();
    write_json(v, order, ",", ":", &mut out);
    out
}

fn dumps_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repr_as_python_prints_it() {
        assert_eq!(
            python_repr(&json!([{"status": "pending", "content": "Run tests"}]), &["content", "status"]),
            "[{'content': 'Run tests', 'status': 'pending'}]"
        );
        assert_eq!(python_repr(&json!([true, false, null, 1, 1.5, 2.0]), &[]), "[True, False, None, 1, 1.5, 2.0]");
        assert_eq!(repr_str("it's"), "\"it's\"");
        assert_eq!(repr_str("it's \"x\""), "'it\\'s \"x\"'");
        assert_eq!(repr_str("a\\b\nc\td\u{1}e\u{7f}"), "'a\\\\b\\nc\\td\\x01e\\x7f'");
        assert_eq!(repr_str("café ✓ 🎉"), "'café ✓ 🎉'");
        assert_eq!(repr_str("zero\u{200b}width"), "'zero\\u200bwidth'");
        assert_eq!(python_repr(&json!([]), &[]), "[]");
    }

    #[test]
    fn dumps_as_python_prints_it() {
        assert_eq!(
            python_dumps(&json!({"todos": [{"id": "1", "content": "Ünïcode \"q\"\n"}], "n": 2}), &["todos", "id"]),
            "{\"todos\": [{\"id\": \"1\", \"content\": \"Ünïcode \\\"q\\\"\\n\"}], \"n\": 2}"
        );
        assert_eq!(python_dumps(&json!([null, true, "\u{1}"]), &[]), "[null, true, \"\\u0001\"]");
        assert_eq!(
            js_stringify(
                &json!([{"id": "a", "status": "pending", "content": "x", "blockedBy": ["b"]}]),
                &["content", "status", "id"]
            ),
            "[{\"content\":\"x\",\"status\":\"pending\",\"id\":\"a\",\"blockedBy\":[\"b\"]}]"
        );
    }
}
