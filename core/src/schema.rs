//! Checks a tool's arguments against its JSON Schema: the subset the catalog uses (`type`,
//! `properties`, `required`, `additionalProperties: false`, `enum`, `minLength`, `minimum`,
//! `maximum`, `items`, `maxItems`). Pure: no pgrx. The first problem found is reported, with
//! the path to it (`todos[2].status`).

use serde_json::Value;

/// Arguments nested deeper than this are refused before they are walked.
pub const MAX_DEPTH: usize = 32;
/// No array in any tool's arguments may hold more items than this (the seeds' schemas set
/// no bound; a whole-list replace of more than this is not a todo list).
pub const MAX_ITEMS: usize = 1000;

fn type_ok(expected: &str, v: &Value) -> bool {
    match expected {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where a value is in the arguments: the chain from the root, written out only for an error.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Field(&'a Path<'a>, &'a str),
    Item(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// `todos[2].status`; the root is `arguments`.
    fn show(&self) -> String {
        match self {
            Path::Root => "arguments".to_string(),
            _ => {
                let mut out = String::new();
                self.write(&mut out);
                out
            }
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Field(parent, name) => {
                parent.write(out);
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Path::Item(parent, i) => {
                parent.write(out);
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
}

fn depth(v: &Value) -> usize {
    match v {
        Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
        Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// `Ok` or the first problem, as `path: what is wrong`.
pub fn validate(schema: &Value, value: &Value) -> Result<(), String> {
    if depth(value) > MAX_DEPTH {
        return Err(format!("arguments are nested more than {MAX_DEPTH} levels deep"));
    }
    check(schema, value, &Path::Root)
}

fn check(schema: &Value, v: &Value, path: &Path<'_>) -> Result<(), String> {
    let Some(schema) = schema.as_object() else { return Ok(()) };
    match schema.get("type") {
        Some(Value::String(t)) if !type_ok(t, v) => {
            return Err(format!("{}: expected {t}, got {}", path.show(), type_name(v)));
        }
        Some(Value::Array(ts)) if !ts.iter().any(|t| t.as_str().is_some_and(|t| type_ok(t, v))) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            return Err(format!("{}: expected {}, got {}", path.show(), names.join(" or "), type_name(v)));
        }
        _ => {}
    }
    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.contains(v) {
            let names: Vec<String> = options.iter().map(|o| o.as_str().map_or(o.to_string(), String::from)).collect();
            return Err(format!("{}: must be one of {}", path.show(), names.join(", ")));
        }
    }
    match v {
        Value::String(s) => {
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64) {
                if (s.chars().count() as u64) < min {
                    return Err(format!(
                        "{}: must be at least {min} character{} long",
                        path.show(),
                        if min == 1 { "" } else { "s" }
                    ));
                }
            }
        }
        Value::Number(n) => {
            let n = n.as_f64().unwrap_or(f64::NAN);
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64) {
                if n < min {
                    return Err(format!("{}: must be at least {min}", path.show()));
                }
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64) {
                if n > max {
                    return Err(format!("{}: must be at most {max}", path.show()));
                }
            }
        }
        Value::Array(items) => {
            if items.len() > MAX_ITEMS {
                return Err(format!("{}: at most {MAX_ITEMS} items, got {}", path.show(), items.len()));
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64) {
                if items.len() as u64 > max {
                    return Err(format!("{}: at most {max} items, got {}", path.show(), items.len()));
                }
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(item_schema, item, &Path::Item(path, i))?;
                }
            }
        }
        Value::Object(obj) => {
            let props = schema.get("properties").and_then(Value::as_object);
            if let Some(Value::Array(required)) = schema.get("required") {
                for r in required.iter().filter_map(Value::as_str) {
                    if !obj.contains_key(r) {
                        return Err(format!("{}: required", Path::Field(path, r).show()));
                    }
                }
            }
            let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
            for (k, val) in obj {
                match props.and_then(|p| p.get(k)) {
                    Some(s) => check(s, val, &Path::Field(path, k))?,
                    None if closed => return Err(format!("{}: unknown field", Path::Field(path, k).show())),
                    None => {}
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object", "required": ["todos"], "additionalProperties": false,
            "properties": {"todos": {"type": "array", "maxItems": 3, "items": {
                "type": "object", "required": ["content", "status"], "additionalProperties": false,
                "properties": {
                    "content": {"type": "string", "minLength": 1},
                    "status": {"type": "string", "enum": ["pending", "done"]},
                    "order": {"type": "integer", "minimum": 1},
                    "note": {"type": ["string", "null"]}
                }}}}
        })
    }

    #[test]
    fn accepts_what_fits() {
        assert_eq!(validate(&schema(), &json!({"todos": []})), Ok(()));
        assert_eq!(
            validate(&schema(), &json!({"todos": [{"content": "x", "status": "done", "order": 2, "note": null}]})),
            Ok(())
        );
    }

    #[test]
    fn names_the_first_problem_and_where() {
        let cases = [
            (json!([]), "arguments: expected object, got array"),
            (json!({}), "todos: required"),
            (json!({"todos": [], "extra": 1}), "extra: unknown field"),
            (json!({"todos": "x"}), "todos: expected array, got string"),
            (json!({"todos": [{"content": "x"}]}), "todos[0].status: required"),
            (
                json!({"todos": [{"content": "", "status": "done"}]}),
                "todos[0].content: must be at least 1 character long",
            ),
            (json!({"todos": [{"content": 5, "status": "done"}]}), "todos[0].content: expected string, got integer"),
            (json!({"todos": [{"content": "x", "status": "nope"}]}), "todos[0].status: must be one of pending, done"),
            (json!({"todos": [{"content": "x", "status": "done", "order": 0}]}), "todos[0].order: must be at least 1"),
            (
                json!({"todos": [{"content": "x", "status": "done", "order": 1.5}]}),
                "todos[0].order: expected integer, got number",
            ),
            (
                json!({"todos": [{"content": "x", "status": "done", "note": 1}]}),
                "todos[0].note: expected string or null, got integer",
            ),
            (json!({"todos": [1, 2, 3, 4]}), "todos: at most 3 items, got 4"),
        ];
        for (args, expected) in cases {
            assert_eq!(validate(&schema(), &args), Err(expected.to_string()), "{args}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_up_front() {
        let mut v = json!(1);
        for _ in 0..100 {
            v = json!([v]);
        }
        assert_eq!(
            validate(&schema(), &json!({"todos": v})),
            Err("arguments are nested more than 32 levels deep".into())
        );
    }
}
