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
    let mut out = String::new();
    pretty(&mut out, j, 0);
    out
}

fn pretty(out: &mut String, j: &Json, indent: usize) {
    let entries: Vec<(Option<&str>, Json)> = match j {
        Json::Value(Value::Object(m)) => m.iter().map(|(k, v)| (Some(k.as_str()), Json::Value(v.clone()))).collect(),
        Json::Value(Value::Array(a)) => a.iter().map(|v| (None, Json::Value(v.clone()))).collect(),
        Json::Value(Value::Number(n)) => {
            return match n.as_f64().filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21) {
                Some(whole) => out.push_str(&format!("{}", whole as i64)),
                None => out.push_str(&n.to_string()),
            }
        }
        Json::Value(v) => return out.push_str(&v.to_string()),
        Json::Object(kv) => kv.iter().map(|(k, v)| (Some(k.as_str()), v.clone())).collect(),
        Json::Array(a) => a.iter().map(|v| (None, v.clone())).collect(),
    };
    let is_object = matches!(j, Json::Object(_) | Json::Value(Value::Object(_)));
    let (open, close) = if is_object { ('{', '}') } else { ('[', ']') };
    out.push(open);
    if entries.is_empty() {
        out.push(close);
        return;
    }
    for (i, (key, value)) in entries.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        out.push_str(&" ".repeat(indent + 2));
        if let Some(key) = key {
            out.push_str(&Value::String(key.to_string()).to_string());
            out.push_str(": ");
        }
        pretty(out, value, indent + 2);
    }
    out.push('\n');
    out.push_str(&" ".repeat(indent));
    out.push(close);
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
}
