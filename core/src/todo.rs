//! A todo as the surfaces read it. Pure: no pgrx.

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
