//! Logging for both commands: `tracing`, one line per event on stderr, the level chosen by
//! `PG_TODOS_LOG` (an `EnvFilter`: `info` by default, with the MCP SDK's (`rmcp`) from `warn`;
//! `warn` for less, `debug` for more, or per module, e.g. `warn,pg_todos_cli::http::routes=info`).
//! Two formats (`pg_todos serve --log-format`): `text`, a timestamp, the level, the message and
//! the event's fields as `key=value`; `json`, one JSON object per line,
//! `{"timestamp", "level", "target", "message", "fields": {…}}` (`Json`, unit-tested).
//! Never a token, a password or a connection string: the messages are written so.

use std::fmt;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::EnvFilter;

/// `info`, with the MCP SDK's own events from `warn` up.
const DEFAULT: &str = "info,rmcp=warn";

/// How a line of the log is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// `<timestamp>  <LEVEL> <message> key=value …`
    #[default]
    Text,
    /// one JSON object per line (`Json`)
    Json,
}

/// Installs the text subscriber (once; a second call does nothing).
pub fn init() {
    init_as(Format::Text)
}

/// Installs the subscriber writing `format` (once; a second call does nothing).
/// `PG_TODOS_LOG` that does not parse falls back to `info` and says so.
pub fn init_as(format: Format) {
    let filter = match std::env::var("PG_TODOS_LOG") {
        Ok(spec) if !spec.trim().is_empty() => EnvFilter::try_new(&spec).unwrap_or_else(|e| {
            eprintln!("pg_todos: PG_TODOS_LOG={spec:?} is not a log filter ({e}); logging at {DEFAULT}");
            EnvFilter::new(DEFAULT)
        }),
        _ => EnvFilter::new(DEFAULT),
    };
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        Format::Text => builder.with_target(false).with_ansi(false).try_init(),
        Format::Json => builder.event_format(Json).try_init(),
    };
}

/// The JSON lines format: `{"timestamp": RFC 3339 in UTC, "level": "INFO", "target": the
/// module, "message": the text, "fields": {every other field of the event}}`, one object per
/// line. A field's value is a JSON number or boolean when it was recorded as one, else its text.
pub struct Json;

/// The fields of one event: the message apart.
#[derive(Default)]
struct Fields {
    message: Option<String>,
    fields: Map<String, Value>,
}

impl Fields {
    fn put(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = Some(match value {
                Value::String(s) => s,
                other => other.to_string(),
            });
        } else {
            self.fields.insert(field.name().to_string(), value);
        }
    }
}

impl Visit for Fields {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(
            field,
            serde_json::Number::from_f64(value).map_or_else(|| Value::from(value.to_string()), Value::Number),
        );
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::from(value));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::from(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, Value::from(format!("{value:?}")));
    }
}

/// One event as its JSON object, at the time `timestamp`: its keys in the order above (the
/// fields' in name order).
pub fn json_line(event: &Event<'_>, timestamp: &str) -> String {
    let mut fields = Fields::default();
    event.record(&mut fields);
    let meta = event.metadata();
    format!(
        "{{\"timestamp\":{},\"level\":{},\"target\":{},\"message\":{},\"fields\":{}}}",
        Value::from(timestamp),
        Value::from(meta.level().as_str()),
        Value::from(meta.target()),
        Value::from(fields.message.unwrap_or_default()),
        Value::Object(fields.fields)
    )
}

impl<S, N> FormatEvent<S, N> for Json
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, _ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        let mut timestamp = String::new();
        SystemTime.format_time(&mut Writer::new(&mut timestamp))?;
        writeln!(writer, "{}", json_line(event, &timestamp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::fmt::MakeWriter;

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Buffer {
        type Writer = Buffer;
        fn make_writer(&'a self) -> Buffer {
            self.clone()
        }
    }

    #[test]
    fn json_lines_hold_timestamp_level_message_and_fields() {
        let buffer = Buffer::default();
        let subscriber = tracing_subscriber::fmt().with_writer(buffer.clone()).event_format(Json).finish();
        tracing::subscriber::with_default(subscriber, || {
            let path = "/v1/todos/7";
            tracing::info!(method = "GET", path = %path, status = 200u16, ms = 3u64, ok = true, "request");
            tracing::warn!("a line with \"quotes\"\nand a line feed");
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert!(text.starts_with("{\"timestamp\":\""), "{text}");
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        let first = &lines[0];
        assert_eq!(first["level"], "INFO");
        assert_eq!(first["message"], "request");
        assert_eq!(first["target"], "pg_todos_cli::log::tests");
        assert_eq!(
            first["fields"],
            serde_json::json!({"method": "GET", "path": "/v1/todos/7", "status": 200, "ms": 3, "ok": true})
        );
        // RFC 3339 in UTC
        let ts = first["timestamp"].as_str().unwrap();
        assert!(ts.len() >= 20 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T', "{ts}");
        assert_eq!(lines[1]["level"], "WARN");
        assert_eq!(lines[1]["message"], "a line with \"quotes\"\nand a line feed");
        assert_eq!(lines[1]["fields"], serde_json::json!({}));
    }
}
