//! What an event records: its key (the todo, its version, who and where) and its changes,
//! shared by the event statements (`events`) and the direct append (`events::direct`).

use pgrx::datum::{DatumWithOid, TimestampWithTimeZone};
use pgrx::{pg_sys, IntoDatum};
use serde_json::{Map, Value};

/// The timestamps of `Changes::stamps`, in order.
pub const STAMPS: [&str; 5] = ["created_at", "started_at", "completed_at", "lease_expires_at", "archived_at"];

/// Who and where an event is about: the todo's key, the conversation it is in, the actor.
pub struct Key {
    pub tenant: String,
    pub id: i64,
    pub version: i32,
    pub conversation: Option<String>,
    pub agent: Option<String>,
    pub turn: Option<String>,
}

impl Key {
    /// `$1` to `$7` of every event statement: the key, then the old status.
    pub(super) fn args<'a>(&'a self, old_status: Option<&'a str>) -> Vec<DatumWithOid<'a>> {
        vec![
            self.tenant.as_str().into(),
            self.id.into(),
            self.version.into(),
            self.conversation.as_deref().into(),
            self.agent.as_deref().into(),
            self.turn.as_deref().into(),
            old_status.into(),
        ]
    }
}

/// What an event says changed: the columns other than timestamps as a JSON object, and the
/// timestamps to add to it (`created_at`, `started_at`, `completed_at`, `lease_expires_at`,
/// `archived_at`; `Some(None)`: the column, as null).
pub struct Changes {
    pub values: Map<String, Value>,
    pub stamps: [Option<Option<TimestampWithTimeZone>>; 5],
}

impl Changes {
    /// The event's `changes` object: the values with the timestamps added, each in
    /// PostgreSQL's own JSON spelling of a timestamp (in the session's time zone), as
    /// `to_jsonb` writes it.
    pub(super) fn into_json(self) -> Map<String, Value> {
        let mut values = self.values;
        for (name, stamp) in STAMPS.iter().zip(self.stamps) {
            let Some(stamp) = stamp else { continue };
            values.insert((*name).to_string(), stamp.map_or(Value::Null, |t| Value::String(json_timestamp(t))));
        }
        values
    }
}

/// A timestamp as `to_jsonb` spells it.
fn json_timestamp(t: TimestampWithTimeZone) -> String {
    // SAFETY: encodes a timestamptz datum; the result is a palloc'd C string
    unsafe {
        let text = pg_sys::JsonEncodeDateTime(
            std::ptr::null_mut(),
            t.into_datum().expect("a timestamp is a datum"),
            pg_sys::TIMESTAMPTZOID,
            std::ptr::null(),
        );
        std::ffi::CStr::from_ptr(text).to_string_lossy().into_owned()
    }
}
