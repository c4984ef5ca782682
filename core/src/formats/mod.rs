//! The trackers' files, read into `interchange::Record`s and written from them: each
//! module parses its tracker's file (a bad one: a `FileError` naming the file, the line or
//! field, and what to fix) and renders records into the file the tracker itself reads back.
//! Pure: no pgrx, tested without a database.

pub mod backlog;
pub mod beads;
pub mod claude;
pub mod taskmaster;
