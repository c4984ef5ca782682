//! Backlog.md's own check of a tool's arguments, before the tool runs, in its words.

use serde_json::Value;

use super::super::helpers::js_type;
use super::listed::LISTED;
use super::project::refused;
use crate::backlog_view as view;

/// Backlog.md's own check of a tool's arguments (before it runs): `Validation failed:
/// <detail>` with the first detail, as its server words them.
pub(super) fn precheck(name: &str, args: &Value) -> Option<Value> {
    let schema = super::super::helpers::listed_schema(LISTED, name);
    let detail = view_check(&schema, args)?;
    Some(refused("VALIDATION_ERROR", view::validation_failed(&detail)))
}

/// The first thing `args` breaks of `schema`, in Backlog.md's words.
fn view_check(schema: &Value, args: &Value) -> Option<String> {
    let props = schema.get("properties")?.as_object()?;
    let Some(obj) = args.as_object() else { return Some("Arguments must be an object".into()) };
    if let Some(unknown) = obj.keys().find(|k| !props.contains_key(*k)) {
        return Some(format!("Unknown field '{unknown}' is not allowed"));
    }
    for req in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
        if obj.get(req).is_none_or(Value::is_null) {
            return Some(format!("Required field '{req}' is missing or null"));
        }
    }
    for (key, value) in obj {
        let p = &props[key];
        let types: Vec<&str> = match p.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let kind = js_type(value);
        if !types.is_empty() && !types.contains(&kind) {
            let want = if types[0] == "array" { "an array".to_string() } else { format!("a {}", types[0]) };
            return Some(format!("Field '{key}' must be {want}"));
        }
        if let Value::String(s) = value {
            if let Some(min) = p.get("minLength").and_then(Value::as_u64).filter(|m| (s.chars().count() as u64) < *m) {
                return Some(format!("Field '{key}' must be at least {min} characters long"));
            }
            if let Some(max) = p.get("maxLength").and_then(Value::as_u64).filter(|m| (s.chars().count() as u64) > *m) {
                return Some(format!("Field '{key}' must be at most {max} characters long"));
            }
            if let Some(options) = p.get("enum").and_then(Value::as_array) {
                let norm = |x: &str| x.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
                if !options.iter().filter_map(Value::as_str).any(|o| norm(o) == norm(s)) {
                    let list: Vec<&str> = options.iter().filter_map(Value::as_str).collect();
                    return Some(format!("Field '{key}' must be one of: {}", list.join(", ")));
                }
            }
        }
        if let (Value::Array(items), Some(item)) = (value, p.get("items")) {
            for (n, v) in items.iter().enumerate() {
                if let (Some(min), Some(x)) = (item.get("minimum").and_then(Value::as_f64), v.as_f64()) {
                    if x < min {
                        return Some(format!("Field '{key}[{n}]' must be at least {min}"));
                    }
                }
            }
        }
    }
    None
}
