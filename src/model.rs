//! A todo as the surfaces read it, and the time formats they print. Pure: no pgrx.

use serde::Deserialize;

use crate::status::Status;

/// One row of `todo.todos`, timestamps as microseconds since the Unix epoch.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct Todo {
    pub id: i64,
    pub conversation_id: Option<String>,
    pub turn_id: Option<String>,
    pub agent_id: Option<String>,
    pub subject: String,
    pub description: Option<String>,
    pub active_form: Option<String>,
    #[serde(deserialize_with = "status_from_str")]
    pub status: Status,
    pub priority: Option<String>,
    pub position: i64,
    pub completion_criteria: Option<String>,
    pub agent_type: Option<String>,
    pub outcome: Option<String>,
    pub created_us: i64,
    pub updated_us: i64,
    pub started_us: Option<i64>,
    pub completed_us: Option<i64>,
}

fn status_from_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Status, D::Error> {
    let s = String::deserialize(d)?;
    Status::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("bad status {s}")))
}

/// Seconds since the epoch (floor), as seed 000's REST shape prints timestamps.
pub fn epoch_seconds(us: i64) -> i64 {
    us.div_euclid(1_000_000)
}

/// ISO 8601 in UTC with milliseconds, as JavaScript's `toISOString()` prints it
/// (`2026-11-22T02:49:08.123Z`): seed 001's timestamps.
pub fn iso8601(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let millis = us.rem_euclid(1_000_000) / 1000;
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil_from_days (H. Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_formats() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_795_315_748_123_456), "2026-11-22T02:49:08.123Z");
        assert_eq!(iso8601(951_782_400_000_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(-1_000), "1969-12-31T23:59:59.999Z");
        assert_eq!(epoch_seconds(1_795_315_748_999_999), 1_795_315_748);
        assert_eq!(epoch_seconds(-1), -1);
    }
}
