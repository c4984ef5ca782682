//! Waiting claims as MCP tasks (the Tasks extension, `io.modelcontextprotocol/tasks`,
//! SEP-2663). Pure; the server (`super::Tools`) runs the statements.
//!
//! - Only coord's `claim_todo` with `wait_seconds` (1 to 3600), called by a client that
//!   declares the extension, becomes a task: `todo.claim_wait` tries the claim and stores the
//!   wait before the reply. A claim granted at once is answered as the plain result; otherwise
//!   the reply is the task (`resultType: "task"`). Every other call stays synchronous, and so
//!   does this one from a client without the extension (one try).
//! - `tasks/get` is `todo.claim_wait_get`, which tries the claim again while the task is
//!   working: the waiting lives in the database, not in this process, so a restart of the
//!   service loses nothing and no worker runs. `tasks/cancel` is `todo.claim_wait_cancel`.
//!   `tasks/update` has nothing to answer: a waiting claim never asks for input.
//! - A task of another tenant, or one that ended over an hour ago, is unknown: -32602 with
//!   `data.taskId`.

use rmcp::model::{CallToolResponse, CallToolResult, CreateTaskResult, DetailedTask, TaskPayload};
use serde_json::Value;

/// The tool that may wait, by its qualified name.
const WAITING_TOOL: &str = "coord/claim_todo";

/// The statement that starts a waiting claim.
pub const START: &str = "SELECT todo.claim_wait($1)";
/// The statement that looks at (and tries again) a waiting claim.
pub const GET: &str = "SELECT todo.claim_wait_get($1)";
/// The statement that cancels a waiting claim.
pub const CANCEL: &str = "SELECT todo.claim_wait_cancel($1)";

/// Why `tasks/update` is refused.
pub const NO_INPUT: &str = "a waiting claim asks for no input: tasks/update has nothing to answer";

/// Whether the call of `tool` (as the server runs it: qualified, or bare when every dialect
/// is exposed) with `args` waits as a task.
pub fn waits(tool: &str, args: &Value) -> bool {
    let claim = tool == WAITING_TOOL || Some(tool) == WAITING_TOOL.split_once('/').map(|(_, bare)| bare);
    claim && args.get("wait_seconds").and_then(Value::as_i64).is_some_and(|w| (1..=3600).contains(&w))
}

/// `todo.claim_wait`'s task as the call's answer: the claim's result when the task ended at
/// once, else the task's handle.
pub fn answer(task: Value) -> Result<CallToolResponse, String> {
    let DetailedTask { task, payload, .. } = detailed(task)?;
    Ok(match payload {
        TaskPayload::Completed { result } => {
            let result: CallToolResult = serde_json::from_value(Value::Object(result))
                .map_err(|e| format!("todo.claim_wait: a result that is no CallToolResult: {e}"))?;
            CallToolResponse::Complete(result)
        }
        _ => CallToolResponse::Task(CreateTaskResult::new(task)),
    })
}

/// A task as the extension's functions answer it, read.
pub fn detailed(task: Value) -> Result<DetailedTask, String> {
    serde_json::from_value(task).map_err(|e| format!("todo.claim_wait: an answer that is no task: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_claim_with_a_wait_waits() {
        assert!(waits("coord/claim_todo", &json!({"wait_seconds": 60})));
        assert!(waits("claim_todo", &json!({"wait_seconds": 1, "lease_seconds": 30})));
        assert!(!waits("coord/claim_todo", &json!({})));
        assert!(!waits("coord/claim_todo", &json!({"wait_seconds": 0})));
        assert!(!waits("coord/claim_todo", &json!({"wait_seconds": 3601})));
        assert!(!waits("coord/claim_todo", &json!({"wait_seconds": "60"})));
        assert!(!waits("beads/claim", &json!({"wait_seconds": 60})));
        assert!(!waits("TaskUpdate", &json!({"wait_seconds": 60})));
    }

    fn task(status: &str) -> Value {
        json!({"taskId": "0b6e1b9e-3c3f-4d2a-9a57-0d5c1f1e2a3b", "status": status, "statusMessage": "m",
               "createdAt": "2026-11-29T10:00:00.000Z", "lastUpdatedAt": "2026-11-29T10:00:00.000Z",
               "ttlMs": 3_660_000, "pollIntervalMs": 1000})
    }

    #[test]
    fn a_working_wait_is_answered_as_its_handle_and_a_claim_at_once_as_the_result() {
        let CallToolResponse::Task(created) = answer(task("working")).unwrap() else { panic!("not a task") };
        let wire = serde_json::to_value(&created).unwrap();
        assert_eq!(wire["resultType"], "task");
        assert_eq!(wire["taskId"], "0b6e1b9e-3c3f-4d2a-9a57-0d5c1f1e2a3b");
        assert_eq!(wire["pollIntervalMs"], 1000);
        let mut done = task("completed");
        done["result"] = json!({"content": [{"type": "text", "text": "{\"claimed\":true}"}], "structuredContent": {"claimed": true, "id": 3}, "isError": false});
        let CallToolResponse::Complete(r) = answer(done).unwrap() else { panic!("not a result") };
        assert_eq!(r.structured_content, Some(json!({"claimed": true, "id": 3})));
        assert!(answer(json!({"claimed": true})).is_err());
    }
}
