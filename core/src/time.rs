//! Every time conversion: Unix epoch microseconds (how rows reach the surfaces) to each
//! seed's printed form, and PostgreSQL's own timestamp epoch. Pure: no pgrx; the database
//! side (`src/clock.rs`) converts PostgreSQL timestamps with `POSTGRES_EPOCH_US`.

/// 2000-01-01 in Unix microseconds: PostgreSQL's timestamp epoch.
pub const POSTGRES_EPOCH_US: i64 = 946_684_800_000_000;

/// A PostgreSQL timestamp (microseconds since 2000-01-01) in Unix microseconds.
pub fn unix_from_postgres(pg_us: i64) -> i64 {
    pg_us + POSTGRES_EPOCH_US
}

/// Unix microseconds as a PostgreSQL timestamp (microseconds since 2000-01-01).
pub fn postgres_from_unix(unix_us: i64) -> i64 {
    unix_us - POSTGRES_EPOCH_US
}

/// Seconds since the epoch (floor), as seed 000's REST shape prints timestamps.
pub fn epoch_seconds(us: i64) -> i64 {
    us.div_euclid(1_000_000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`; the
/// inverse of the day arithmetic in `iso8601`).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z", sod / 3600, sod % 3600 / 60, sod % 60)
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
        assert_eq!(unix_from_postgres(0), 946_684_800_000_000);
        assert_eq!(postgres_from_unix(unix_from_postgres(12_345)), 12_345);
    }
}
