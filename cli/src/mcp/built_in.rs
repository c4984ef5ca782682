//! The catalog this program was built with (`catalog.json`, written by `bin/catalog` from the
//! extension of the same checkout): the tools `todo.tools()` lists and the dialects'
//! names and aliases. The MCP server lists it while the database is away, so that a client
//! never meets an empty (or failed) `tools/list` at start; every call then says the database
//! is away. Once the database answers, the server lists the database's own catalog again.

use std::collections::BTreeSet;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::config;

/// `catalog.json`, as `bin/catalog` wrote it.
const CATALOG: &str = include_str!("catalog.json");

/// The catalog, parsed once: (the dialects as `config::KNOWN_DIALECTS` reads them, the tools).
fn parsed() -> &'static (Value, Arc<Vec<Value>>) {
    static PARSED: OnceLock<(Value, Arc<Vec<Value>>)> = OnceLock::new();
    PARSED.get_or_init(|| {
        let mut all: Value = serde_json::from_str(CATALOG).unwrap_or_default();
        let tools = match all["tools"].take() {
            Value::Array(tools) => tools,
            _ => Vec::new(),
        };
        (all["dialects"].take(), Arc::new(tools))
    })
}

/// Every tool of the built-in catalog, as `todo.tools()` lists them.
pub fn tools() -> Arc<Vec<Value>> {
    Arc::clone(&parsed().1)
}

/// The dialects of the built-in catalog, as `config::KNOWN_DIALECTS` reads them.
pub fn dialects() -> &'static Value {
    &parsed().0
}

/// The dialects of `names` the built-in catalog knows, by their names (an alias made the
/// name); a name it does not know is left out (a dialect of a newer extension: the database's
/// catalog, once it answers, says whether it is there).
pub fn known(names: &BTreeSet<String>) -> BTreeSet<String> {
    names.iter().filter_map(|n| config::resolve(&BTreeSet::from([n.clone()]), dialects()).ok()).flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_catalog_has_every_dialect_and_tool() {
        let tools = tools();
        assert!(tools.len() > 90, "{}", tools.len());
        assert!(tools.iter().all(|t| t["name"].is_string() && t["inputSchema"]["type"] == "object"));
        let named: BTreeSet<&str> = tools.iter().filter_map(|t| t["_meta"]["pg_todos/dialect"].as_str()).collect();
        let dialects: BTreeSet<&str> =
            dialects().as_array().unwrap().iter().filter_map(|d| d["name"].as_str()).collect();
        assert_eq!(named, dialects, "every dialect has tools, and every tool's dialect is listed");
        let asked = BTreeSet::from(["003".to_string(), "coord".to_string(), "no-such".to_string()]);
        assert_eq!(known(&asked), BTreeSet::from(["coord".to_string(), "todolist".to_string()]));
    }
}
