//! The JSON helpers the trackers' formats share: `Json`, a JSON value whose objects keep the key
//! order a tracker writes (serde_json's own maps sort their keys), written the way JavaScript's
//! `JSON.stringify(v, null, 2)` or Go's `json.Marshal` writes it; an ISO 8601 / RFC 3339 time
//! reader; and the errors for text that is not JSON at all or a field that is wrong.

use serde_json::Value;

use crate::interchange::FileError;

/// A JSON value whose objects are written in the order given (a tracker's own key order).
/// A plain `Value` inside is written as serde_json holds it (its objects' keys sorted).
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Value(Value),
    Object(Vec<(String, Json)>),
    Array(Vec<Json>),
}

impl From<Value> for Json {
    fn from(v: Value) -> Json {
        Json::Value(v)
    }
}

impl From<&str> for Json {
    fn from(s: &str) -> Json {
        Json::Value(Value::String(s.to_string()))
    }
}

impl From<String> for Json {
    fn from(s: String) -> Json {
        Json::Value(Value::String(s))
    }
}

/// An ordered object being built: `obj.put("id", 1)`, in the order the tracker writes.
#[derive(Default)]
pub(crate) struct Obj(pub Vec<(String, Json)>);

impl Obj {
    pub fn put(&mut self, key: &str, value: impl Into<Json>) {
        self.0.push((key.to_string(), value.into()));
    }

    pub fn done(self) -> Json {
        Json::Object(self.0)
    }
}

/// `JSON.stringify(v, null, 2)`: two spaces a level, `"key": value`, empty arrays and
/// objects as `[]` and `{}`, no newline at the end. Strings are escaped the same way
/// (`\"`, `\\`, `\n`, `\t`, … and `\u00XX` for the other control characters; nothing else),
/// and a whole number held as a float is written as an integer (JavaScript has one number
/// type: `50.0` is `50`).
pub fn to_js_pretty(j: &Json) -> String {
    let mut out = Vec::new();
    pretty(&mut out, Node::Ordered(j), 0);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A value `pretty` writes, borrowed: a `Json`, or a plain `Value` inside one.
#[derive(Clone, Copy)]
enum Node<'a> {
    Ordered(&'a Json),
    Plain(&'a Value),
}

/// Writes `node` at `indent` spaces, borrowing every member: nothing is copied, so a
/// document costs its size, whatever its depth.
fn pretty(out: &mut Vec<u8>, node: Node<'_>, indent: usize) {
    let mut write = |out: &mut Vec<u8>, node, indent| pretty(out, node, indent);
    match node {
        Node::Ordered(Json::Value(v)) => pretty(out, Node::Plain(v), indent),
        Node::Ordered(Json::Object(kv)) => {
            members(out, ('{', '}'), kv.iter().map(|(k, v)| (Some(k.as_str()), Node::Ordered(v))), indent, &mut write)
        }
        Node::Ordered(Json::Array(a)) => {
            members(out, ('[', ']'), a.iter().map(|v| (None, Node::Ordered(v))), indent, &mut write)
        }
        Node::Plain(Value::Object(m)) => {
            members(out, ('{', '}'), m.iter().map(|(k, v)| (Some(k.as_str()), Node::Plain(v))), indent, &mut write)
        }
        Node::Plain(Value::Array(a)) => {
            members(out, ('[', ']'), a.iter().map(|v| (None, Node::Plain(v))), indent, &mut write)
        }
        Node::Plain(Value::Number(n)) => {
            match n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21) {
                Some(whole) => out.extend_from_slice((whole as i64).to_string().as_bytes()),
                None => out.extend_from_slice(n.to_string().as_bytes()),
            }
        }
        Node::Plain(v) => scalar(out, v),
    }
}

/// An object's or array's members, a line each, `"key": value` for an object's, each value
/// written by `write` (at its indent).
fn members<'a, V>(
    out: &mut Vec<u8>,
    (open, close): (char, char),
    entries: impl Iterator<Item = (Option<&'a str>, V)>,
    indent: usize,
    write: &mut dyn FnMut(&mut Vec<u8>, V, usize),
) {
    out.push(open as u8);
    let mut any = false;
    for (key, value) in entries {
        out.extend_from_slice(if any { b",\n" } else { b"\n" });
        any = true;
        out.extend(std::iter::repeat_n(b' ', indent + 2));
        if let Some(key) = key {
            self::key(out, key);
            out.extend_from_slice(b": ");
        }
        write(out, value, indent + 2);
    }
    if any {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', indent));
    }
    out.push(close as u8);
}

/// The order of an object's keys in a document `to_js_pretty_ordered` writes: given the
/// members the object is nested under (outermost first; "" for an array's item) and the
/// object, its keys in the order to write them.
pub type KeyOrder<'v> = dyn Fn(&[&'v str], &'v serde_json::Map<String, Value>) -> Vec<&'v str> + 'v;

/// `to_js_pretty` of a plain `Value` whose objects' keys are written in the order `order`
/// gives, borrowing the value (nothing is copied): a runtime's answer built as a `Value`.
pub fn to_js_pretty_ordered<'v>(v: &'v Value, order: &KeyOrder<'v>) -> String {
    let mut out = Vec::new();
    in_order(&mut out, v, order, &mut Vec::new(), 0);
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// A member `in_order` writes: its key (None in an array), and the name it is nested under
/// ("" in an array) with its value.
type Member<'v> = (Option<&'v str>, (&'v str, &'v Value));

fn in_order<'v>(out: &mut Vec<u8>, v: &'v Value, order: &KeyOrder<'v>, within: &mut Vec<&'v str>, indent: usize) {
    let (brackets, entries): (_, Vec<Member<'v>>) = match v {
        Value::Object(m) => (('{', '}'), order(within, m).into_iter().map(|k| (Some(k), (k, &m[k]))).collect()),
        Value::Array(a) => (('[', ']'), a.iter().map(|v| (None, ("", v))).collect()),
        other => return pretty(out, Node::Plain(other), indent),
    };
    let mut write = |out: &mut Vec<u8>, (name, v): (&'v str, &'v Value), indent| {
        within.push(name);
        in_order(out, v, order, within, indent);
        within.pop();
    };
    members(out, brackets, entries.into_iter(), indent, &mut write)
}

/// A string, boolean or null as serde_json writes it (a string escaped as JavaScript's
/// `JSON.stringify` escapes it).
fn scalar(out: &mut Vec<u8>, v: &Value) {
    serde_json::to_writer(out, v).expect("a scalar is written to memory");
}

/// A member's key, as a JSON string.
fn key(out: &mut Vec<u8>, k: &str) {
    serde_json::to_writer(out, k).expect("a string is written to memory");
}

/// Go's `json.Marshal`: compact, and HTML-safe as Go escapes by default (`<`, `>`, `&`,
/// U+2028 and U+2029 as `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`).
pub(crate) fn to_go_compact(j: &Json) -> String {
    let mut out = String::new();
    compact(&mut out, j);
    out
}

fn compact(out: &mut String, j: &Json) {
    match j {
        Json::Value(v) => out.push_str(&go_escape(&v.to_string())),
        Json::Object(kv) => {
            out.push('{');
            for (i, (k, v)) in kv.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&go_escape(&Value::String(k.clone()).to_string()));
                out.push(':');
                compact(out, v);
            }
            out.push('}');
        }
        Json::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                compact(out, v);
            }
            out.push(']');
        }
    }
}

/// serde_json's compact text with Go's HTML escapes (the characters never occur inside an
/// escape sequence, so replacing them in the written text is safe).
fn go_escape(s: &str) -> String {
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// Reads an ISO 8601 / RFC 3339 time, `2026-01-08T21:17:16.264Z` or
/// `2026-04-18T16:19:12-07:00` (a date alone is midnight UTC), as microseconds since the
/// Unix epoch. Digits beyond microseconds are dropped. None: not such a time.
pub(crate) fn parse_iso8601(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter().all(u8::is_ascii_digit).then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let days = crate::time::days_from_civil(y, mo, d);
    if b.len() == 10 {
        return Some(days * 86_400_000_000);
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) || b.get(13) != Some(&b':') || b.get(16) != Some(&b':') {
        return None;
    }
    let (h, mi, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut micros = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 6 {
                micros = micros * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..6 {
            micros *= 10;
        }
    }
    let offset_secs = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let off = num(i + 1, 2)? * 3600 + num(i + 4, 2)? * 60;
            if *sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => return None,
    };
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_secs;
    Some(secs * 1_000_000 + micros)
}

/// The error for text that is not JSON: the line serde_json stopped at, and what it found.
pub(crate) fn not_json(file: &str, line: Option<usize>, e: &serde_json::Error) -> FileError {
    FileError {
        file: file.to_string(),
        line: Some(line.unwrap_or(e.line())),
        field: None,
        message: format!("not valid JSON ({e}); fix the syntax there"),
    }
}

/// An error about one field of a file.
pub(crate) fn field_error(file: &str, line: Option<usize>, field: &str, message: String) -> FileError {
    FileError { file: file.to_string(), line, field: Some(field.to_string()), message }
}

/// A JSON value as a file shows it, for error messages (`"finished"`, `3`, `nothing`).
pub(crate) fn shown(v: Option<&Value>) -> String {
    match v {
        None => "nothing".to_string(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 60 {
                format!("{}…", s.chars().take(60).collect::<String>())
            } else {
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::time::iso8601;

    #[test]
    fn iso_times() {
        assert_eq!(parse_iso8601("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_iso8601("2026-11-22T02:49:08.123Z"), Some(1_795_315_748_123_000));
        assert_eq!(parse_iso8601("2026-11-22T02:49:08.123456789Z"), Some(1_795_315_748_123_456));
        assert_eq!(parse_iso8601("2026-11-21T19:49:08.1-07:00"), Some(1_795_315_748_100_000));
        assert_eq!(parse_iso8601("2000-02-29"), Some(951_782_400_000_000));
        assert_eq!(parse_iso8601("1969-12-31T23:59:59.999Z"), Some(-1_000));
        for us in [0, 1_795_315_748_123_000, -86_400_000_000, 951_782_400_000_000] {
            assert_eq!(parse_iso8601(&iso8601(us)), Some(us));
        }
        for bad in ["", "yesterday", "2026-13-01T00:00:00Z", "2026-01-01T00:00:00", "2026-01-01T00:00:00.Z"] {
            assert_eq!(parse_iso8601(bad), None, "{bad}");
        }
    }

    #[test]
    fn writers() {
        let mut o = Obj::default();
        o.put("z", json!(1));
        o.put("a", Json::Array(vec![]));
        o.put("m", json!({"b": [1, {}], "a": "<&>\n"}));
        let j = o.done();
        assert_eq!(
            to_js_pretty(&j),
            "{\n  \"z\": 1,\n  \"a\": [],\n  \"m\": {\n    \"a\": \"<&>\\n\",\n    \"b\": [\n      1,\n      {}\n    ]\n  }\n}"
        );
        assert_eq!(to_go_compact(&j), r#"{"z":1,"a":[],"m":{"a":"\u003c\u0026\u003e\n","b":[1,{}]}}"#);
    }

    #[test]
    fn the_pretty_writer_writes_every_kind_of_member_as_javascript_does() {
        let mut inner = Obj::default();
        inner.put("say \"hi\"", json!(50.0));
        inner.put("half", json!(1.5));
        inner.put("none", json!({}));
        let j = Json::Array(vec![
            inner.done(),
            Json::Array(vec![json!(null).into(), json!(true).into(), "\u{1}\t".into()]),
            json!([[-3, 1e21]]).into(),
        ]);
        assert_eq!(
            to_js_pretty(&j),
            "[\n  {\n    \"say \\\"hi\\\"\": 50,\n    \"half\": 1.5,\n    \"none\": {}\n  },\n  [\n    null,\n    true,\n    \"\\u0001\\t\"\n  ],\n  [\n    [\n      -3,\n      1e+21\n    ]\n  ]\n]"
        );
    }
}
