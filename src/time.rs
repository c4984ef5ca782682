//! Every time conversion in one place: the pure formats of `pg_todos_core::time` (epoch
//! seconds, ISO 8601) and, here, PostgreSQL's clock and `timestamptz` values.

use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;

pub use pg_todos_core::time::*;

use crate::errors;

/// Unix microseconds of the transaction's start: the `now()` every lease is measured by.
pub fn now_us() -> i64 {
    // SAFETY: reads the current transaction's start time.
    unix_from_postgres(unsafe { pg_sys::GetCurrentTransactionStartTimestamp() })
}

/// A timestamptz in Unix microseconds.
pub fn unix_us(t: TimestampWithTimeZone) -> i64 {
    unix_from_postgres(pg_sys::TimestampTz::from(t))
}

/// Unix microseconds as a timestamptz. Errors: 22008 when out of range.
pub fn timestamptz(unix_us: i64) -> TimestampWithTimeZone {
    TimestampWithTimeZone::try_from(postgres_from_unix(unix_us)).unwrap_or_else(|_| {
        errors::raise(PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW, "timestamp out of range", "")
    })
}
