//! FastMCP's check of a tool's arguments against Task Master's zod schema, before the tool runs.

use serde_json::Value;

use super::super::helpers::error;
use super::super::helpers::js_type;
use super::listed::LISTED;

/// FastMCP's refusal of arguments Task Master's zod schema does not take (before the tool
/// runs), in zod's words: each field in the schema's order.
pub(super) fn zod_check(tool: &str, args: &Value) -> Option<Value> {
    let raw = super::super::helpers::listed_schema_text(LISTED, tool);
    let schema: Value = serde_json::from_str(raw).ok()?;
    let props = schema.get("properties")?.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut keys: Vec<&String> = props.keys().collect();
    keys.sort_by_key(|k| raw.find(&format!("\"{k}\":")).unwrap_or(usize::MAX));
    let mut issues = Vec::new();
    for k in keys {
        let p = &props[k.as_str()];
        let want = p.get("type").and_then(Value::as_str).unwrap_or("string");
        let issue = match args.get(k.as_str()) {
            None if required.contains(&k.as_str()) => {
                Some(format!("Invalid input: expected {want}, received undefined"))
            }
            None => None,
            Some(v) if js_type(v) != want => Some(format!("Invalid input: expected {want}, received {}", js_type(v))),
            Some(v) => {
                let s = v.as_str().unwrap_or_default();
                let options: Vec<&str> = p
                    .get("enum")
                    .and_then(Value::as_array)
                    .map(|e| e.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if !options.is_empty() && !options.contains(&s) {
                    let quoted: Vec<String> = options.iter().map(|o| format!("\"{o}\"")).collect();
                    Some(format!("Invalid option: expected one of {}", quoted.join("|")))
                } else if k == "id" && matches!(tool, "get_task" | "set_task_status") {
                    let valid = |id: &str| {
                        let dotted = id.split('.').all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
                        let display = id.trim_start_matches(|c: char| c.is_ascii_alphabetic());
                        let display = display.strip_prefix('-').unwrap_or(display);
                        dotted
                            || (display.len() < id.len()
                                && !display.is_empty()
                                && display.bytes().all(|b| b.is_ascii_digit()))
                    };
                    let ids: Vec<&str> = s.split(',').map(str::trim).filter(|i| !i.is_empty()).collect();
                    if s.is_empty() {
                        Some("Task ID(s) cannot be empty".to_string())
                    } else if ids.is_empty() || !ids.iter().all(|i| valid(i)) {
                        Some("Invalid task ID format. Expected numeric (e.g., '15'), subtask (e.g., '15.2'), or display ID (e.g., 'HAM-123'). Multiple IDs should be comma-separated.".to_string())
                    } else {
                        None
                    }
                } else {
                    None
                }
            }
        };
        if let Some(i) = issue {
            issues.push(format!("{k}: {i}"));
        }
    }
    (!issues.is_empty()).then(|| {
        error(
            "invalid_arguments",
            format!(
                "Tool '{tool}' parameter validation failed: {}. Please check the parameter types and values according to the tool's schema.",
                issues.join(", ")
            ),
        )
    })
}
