//! The trackers' files, read into `interchange::Record`s and written from them: each
//! module parses its tracker's file (a bad one: a `FileError` naming the file, the line or
//! field, and what to fix) and renders records into the file the tracker itself reads back.
//! Pure: no pgrx, tested without a database.
//!
//! What several formats share is in `json`: `Json`, a JSON value whose objects keep the key
//! order a tracker writes, its JavaScript and Go writers, an ISO 8601 time reader, the errors.
//!
//! The formats themselves are declared once each in `trackers` (`TRACKER_FORMATS`), the one
//! list the extension and the command take a format's name from.

pub mod backlog;
pub mod beads;
pub mod claude;
pub mod json;
pub mod taskmaster;
pub mod trackers;

pub use json::{to_js_pretty, to_js_pretty_ordered, Json, KeyOrder};
pub use trackers::{format_names, tracker_format, FileLayout, TrackerFormat, TRACKER_FORMATS};
