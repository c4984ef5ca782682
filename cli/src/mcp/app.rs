//! The board as an MCP App (SEP-1865, the extension `io.modelcontextprotocol/ui`): a page
//! the host shows in the chat, in a sandboxed iframe, beside the result of a tool that reads
//! the list. Pure; the server (`super::Tools`) declares, lists and reads it through here.
//!
//! - `ui://pg_todos/board` (`text/html;profile=mcp-app`): `app.html`, one self-contained page
//!   (its own CSS and script, nothing loaded from anywhere: its CSP declares no domain). A read
//!   gives it with the URI of the connection's list (`todo://list/{list}`, or the pool for a
//!   connection with none) in a `<script type="application/json">`, escaped so that no name
//!   ends that element.
//! - The page speaks the app's side of the protocol by hand (JSON-RPC 2.0 over `postMessage`
//!   to the host): `ui/initialize` then `ui/notifications/initialized`; it reads the list with
//!   `resources/read` through the host every 2 s while shown and after each action, and acts
//!   with `tools/call` through the host (coord's `claim_todo`, `finish_todo`, `release_todo`;
//!   the tasks dialect's `AddTask`, which adds to the list where plan's `create_todo` would
//!   need a turn): a connection without a dialect's tools answers `unknown_tool`, which the
//!   page shows, and it offers that dialect's actions no more (without both: a read-only view).
//! - The tools that read the list (`SHOWN_BY`) name the page in `_meta.ui.resourceUri`, as
//!   `tools/list` gives them (the extension's `todo.tools()` knows nothing of it); their text
//!   stays what a host without MCP Apps shows.
//! - `initialize` declares the extension with its one MIME type.

use rmcp::model::{MetaObject, ReadResourceResult, Resource, ResourceContents, ServerCapabilities};
use serde_json::{json, Map, Value};

use super::resources;

/// The extension's identifier, the key of its settings in the capabilities' `extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The page's URI.
pub const URI: &str = "ui://pg_todos/board";
/// The MIME type of an MCP App's HTML page.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// `app.html`, with `SOURCE` where the read puts the list it shows.
const PAGE: &str = include_str!("app.html");
/// What `app.html` holds where a read puts the list it shows, as JSON.
const SOURCE: &str = r#"{"list": null, "uri": "todo://pool", "version": "0"}"#;

/// The tools whose result a host shows with the page, by qualified name (`dialect/name`, the
/// dialect as `_meta."pg_todos/dialect"` names it): each dialect's read of its list (the whole
/// list, or the part of it that is ready to work on), not a read of one todo.
pub const SHOWN_BY: &[&str] = &[
    "plan/list_todo",
    "opencode/todoread",
    "todolist/todolist__get",
    "tasks/ListTasks",
    "coord/ready_todos",
    "claude-tasks/TaskList",
    "pydantic-ai/read_todos",
    "mastra/task_check",
    "beads/list",
    "beads/ready",
    "taskmaster/get_tasks",
    "backlog/task_list",
];

/// `capabilities` with the extension declared among their `extensions` (others kept).
pub fn with_extension(mut capabilities: ServerCapabilities) -> ServerCapabilities {
    let settings = json!({ "mimeTypes": [MIME_TYPE] });
    let Value::Object(settings) = settings else { unreachable!("a JSON object") };
    capabilities.extensions.get_or_insert_with(Default::default).insert(EXTENSION.to_string(), settings);
    capabilities
}

/// The page's `_meta`: its CSP (no domain: the page fetches and loads nothing) and a border.
fn meta() -> MetaObject {
    let ui = json!({ "csp": { "connectDomains": [], "resourceDomains": [] }, "prefersBorder": true });
    MetaObject(Map::from_iter([("ui".to_string(), ui)]))
}

/// The page as `resources/list` gives it.
pub fn listed() -> Resource {
    let mut page = Resource::new(URI, "board")
        .with_title("The board")
        .with_description("This connection's list, live, with buttons to claim, finish and release its todos and to add one: an MCP App that hosts show beside the result of a tool that reads the list.")
        .with_mime_type(MIME_TYPE);
    page.meta = Some(meta());
    page
}

/// The answer to `resources/read` of the page, showing the list `list` (None: the pool).
pub fn read(list: Option<&str>) -> ReadResourceResult {
    let page = ResourceContents::text(page(list), URI).with_mime_type(MIME_TYPE).with_meta(meta());
    ReadResourceResult::new(vec![page])
}

/// `app.html` showing the list `list` (None: the pool): its name and its resource's URI, and
/// this server's version (the app's, in its handshake).
fn page(list: Option<&str>) -> String {
    let source = json!({ "list": list, "uri": resources::uri_of(list), "version": env!("CARGO_PKG_VERSION") });
    PAGE.replacen(SOURCE, &script_json(&source), 1)
}

/// JSON that an HTML `<script>` element holds as it is: `<`, `>` and `&` (and the line
/// separators JavaScript once refused in strings) written as `\u` escapes, which JSON reads
/// back as the same characters; they can stand only inside strings, so nothing else changes.
fn script_json(value: &Value) -> String {
    let mut out = String::new();
    for c in value.to_string().chars() {
        match c {
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// A tool as `todo.tools()` lists it, with `_meta.ui.resourceUri` naming the page when it is
/// one of `SHOWN_BY` (its other `_meta` kept).
pub fn marked(mut tool: Value) -> Value {
    let dialect = tool["_meta"]["pg_todos/dialect"].as_str().unwrap_or_default();
    let name = tool["name"].as_str().unwrap_or_default();
    if SHOWN_BY.contains(&format!("{dialect}/{name}").as_str()) {
        if let Some(meta) = tool["_meta"].as_object_mut() {
            meta.insert("ui".to_string(), json!({ "resourceUri": URI }));
        }
    }
    tool
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn each_tool_that_shows_the_page_reads_a_list_of_the_built_in_catalog() {
        let tools = super::super::built_in::tools();
        let qualified =
            |t: &Value| format!("{}/{}", t["_meta"]["pg_todos/dialect"].as_str().unwrap(), t["name"].as_str().unwrap());
        let reads: BTreeSet<String> =
            tools.iter().filter(|t| t["annotations"]["readOnlyHint"] == true).map(qualified).collect();
        for name in SHOWN_BY {
            assert!(reads.contains(*name), "{name} is no read-only tool of the catalog");
        }
        let marked: Vec<Value> = tools.iter().cloned().map(marked).collect();
        let showing: BTreeSet<String> =
            marked.iter().filter(|t| t["_meta"]["ui"]["resourceUri"] == URI).map(qualified).collect();
        assert_eq!(showing, SHOWN_BY.iter().map(|s| s.to_string()).collect());
        // the rest of the tool is as the extension listed it
        for (before, after) in tools.iter().zip(&marked) {
            let mut after = after.clone();
            after["_meta"].as_object_mut().unwrap().remove("ui");
            assert_eq!(&after, before);
        }
    }

    #[test]
    fn a_read_gives_the_page_with_its_list_and_its_csp() {
        let read = serde_json::to_value(read(Some("project:/home/me/app"))).unwrap();
        let contents = read["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 1);
        assert_eq!((&contents[0]["uri"], &contents[0]["mimeType"]), (&json!(URI), &json!(MIME_TYPE)));
        assert_eq!(contents[0]["_meta"]["ui"]["csp"], json!({ "connectDomains": [], "resourceDomains": [] }));
        let text = contents[0]["text"].as_str().unwrap();
        assert!(text.starts_with("<!DOCTYPE html>"), "{}", &text[..40]);
        let source = r#"{"list":"project:/home/me/app","uri":"todo://list/project%3A%2Fhome%2Fme%2Fapp","version":"#;
        assert!(text.contains(source), "the page names its list");
        assert!(!text.contains(SOURCE), "the placeholder is replaced");
        assert!(page(None).contains(r#"{"list":null,"uri":"todo://pool","version":"#));
        assert_eq!(serde_json::to_value(listed()).unwrap()["_meta"], contents[0]["_meta"]);
    }

    #[test]
    fn no_list_name_ends_the_script_that_holds_it() {
        let name = "</script><img src=x onerror=alert(1)> & \u{2028}";
        let page = page(Some(name));
        let at = page.find("\"list\":").unwrap();
        let held = &page[at..at + page[at..].find('}').unwrap()];
        assert!(!held.contains('<') && !held.contains('>') && !held.contains('&'), "{held}");
        let back: Value = serde_json::from_str(&script_json(&json!({ "list": name }))).unwrap();
        assert_eq!(back["list"], name);
    }

    #[test]
    fn initialize_declares_the_extension_beside_the_others() {
        let caps = ServerCapabilities::builder().enable_tools().enable_tasks().build();
        let caps = serde_json::to_value(with_extension(caps)).unwrap();
        assert_eq!(caps["extensions"][EXTENSION], json!({ "mimeTypes": ["text/html;profile=mcp-app"] }));
        assert_eq!(caps["extensions"].as_object().unwrap().len(), 2, "{caps}");
    }
}
