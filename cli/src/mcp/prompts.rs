//! The MCP server's prompts, which hosts show as commands (`/plan`, `/standup`, `/handoff`):
//! each one declaration in `PROMPTS` (its name, title, description, arguments), and the text
//! it gives the model made from its arguments and, for the ones about the list, from the list
//! the connection works on, read through the extension (`todo.list_as`, `todo.todo_open_block`)
//! in the call's context. Pure but for that read: `render` takes what was read.

use rmcp::model::{Prompt, PromptArgument};
use serde_json::{Map, Value};

/// One prompt.
pub struct Declared {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// (name, description, required)
    pub arguments: &'static [(&'static str, &'static str, bool)],
    /// what it reads of the list first (None: nothing)
    pub reads: Option<Read>,
}

/// What a prompt reads of the connection's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// `todo.list_as('claude-tasks', list)`: every task, its status, owner and blockers
    Tasks,
    /// `todo.todo_open_block(list)`: the open todos, as a sub-agent's delegation context has them
    OpenBlock,
}

/// Every prompt, in the order `prompts/list` gives them.
pub const PROMPTS: &[Declared] = &[
    Declared {
        name: "plan",
        title: "Plan a task into todos",
        description: "Break a task into todos on the shared list, then work through them.",
        arguments: &[("task", "The task to plan", true)],
        reads: None,
    },
    Declared {
        name: "standup",
        title: "Stand-up of the list",
        description: "What was done, what is in progress and by whom, what is blocked and what comes next, from the list as it is now.",
        arguments: &[],
        reads: Some(Read::Tasks),
    },
    Declared {
        name: "handoff",
        title: "Hand the list to a sub-agent",
        description: "The open todos of the list and how to work them, for the agent that takes them over.",
        arguments: &[("agent", "Who takes the list over (a sub-agent's name or role)", false)],
        reads: Some(Read::OpenBlock),
    },
];

/// Why a prompt that reads a list's tasks (`Read::Tasks`) is refused on a connection with no
/// list (the tenant-wide pool): `{name}` is the prompt's.
pub const NO_LIST: &str = "prompt \"{name}\" reads this connection's list, and it has none (it works on the tenant-wide pool): name a list with ?list=<id> on the /mcp URL, the X-Todo-List header or a token made with a default list";

/// The declared prompt of `name`.
pub fn find(name: &str) -> Option<&'static Declared> {
    PROMPTS.iter().find(|p| p.name == name)
}

/// Every prompt as MCP lists it.
pub fn listed() -> Vec<Prompt> {
    PROMPTS
        .iter()
        .map(|p| {
            let arguments = p
                .arguments
                .iter()
                .map(|(name, about, required)| {
                    PromptArgument::new(*name).with_description(*about).with_required(*required)
                })
                .collect();
            Prompt::new(p.name, Some(p.description), Some(arguments)).with_title(p.title)
        })
        .collect()
}

/// The arguments, checked against the prompt's: each a string, the required ones given and not
/// blank, no other. Errors, in words for the client (MCP's -32602): what to fix.
pub fn checked(p: &Declared, given: &Map<String, Value>) -> Result<Map<String, Value>, String> {
    if let Some(other) = given.keys().find(|k| !p.arguments.iter().any(|(name, ..)| name == k)) {
        let known: Vec<&str> = p.arguments.iter().map(|(name, ..)| *name).collect();
        return Err(format!("prompt {:?} has no argument {other:?} (its arguments: {})", p.name, list_or_none(&known)));
    }
    if let Some((name, ..)) = p.arguments.iter().find(|(name, _, required)| {
        *required && given.get(*name).and_then(Value::as_str).is_none_or(|v| v.trim().is_empty())
    }) {
        return Err(format!("prompt {:?} needs the argument {name:?}", p.name));
    }
    if let Some((name, _)) = given.iter().find(|(_, v)| !v.is_string()) {
        return Err(format!("prompt {:?}: the argument {name:?} must be a string", p.name));
    }
    Ok(given.clone())
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The text a prompt gives the model: from its checked arguments, the list's name (None: the
/// tenant-wide pool) and what it read of the list (`Declared::reads`).
pub fn render(p: &Declared, args: &Map<String, Value>, list: Option<&str>, read: &Value) -> String {
    let arg = |name: &str| args.get(name).and_then(Value::as_str).map(str::trim).filter(|v| !v.is_empty());
    let list = list.map_or_else(|| "the tenant-wide pool".to_string(), |l| format!("the list {l:?}"));
    match p.name {
        "plan" => format!(
            "Plan this task as todos on {list}, then work through them:\n\n{}\n\nBreak it into concrete steps, \
             each a todo another agent or a person could pick up, in the order they should be done, and write \
             them with this server's todo tools. Read the list first: other agents and people share it, so add \
             only what is not on it yet. Mark a todo in progress when you start it and completed when it is done.",
            arg("task").unwrap_or_default()
        ),
        "standup" => standup(&list, read),
        _ => handoff(&list, arg("agent"), read.as_str().unwrap_or_default()),
    }
}

/// The stand-up: the tasks of `todo.list_as('claude-tasks', …)` by what they are doing.
fn standup(list: &str, read: &Value) -> String {
    let tasks = read["tasks"].as_array().map(Vec::as_slice).unwrap_or_default();
    let line = |t: &Value| {
        let mut s =
            format!("- #{} {}", t["id"].as_str().unwrap_or_default(), t["subject"].as_str().unwrap_or_default());
        if let Some(owner) = t["owner"].as_str() {
            s.push_str(&format!(" ({owner})"));
        }
        let blockers: Vec<String> = t["blockedBy"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(|b| b.as_str().map(|b| format!("#{b}")))
            .collect();
        if !blockers.is_empty() {
            s.push_str(&format!(" (waiting for {})", blockers.join(", ")));
        }
        s
    };
    let blocked = |t: &&Value| t["blockedBy"].as_array().is_some_and(|b| !b.is_empty());
    let status = |t: &&Value, s: &str| t["status"] == s;
    let sections: [(&str, Vec<&Value>); 4] = [
        ("Done", tasks.iter().filter(|t| status(t, "completed")).collect()),
        ("In progress", tasks.iter().filter(|t| status(t, "in_progress")).collect()),
        ("Blocked", tasks.iter().filter(|t| status(t, "pending") && blocked(t)).collect()),
        ("Next", tasks.iter().filter(|t| status(t, "pending") && !blocked(t)).collect()),
    ];
    let mut text = format!(
        "Give a stand-up of {list}: what was done, what is in progress and who holds it, what is blocked and \
         on what, and what comes next. Keep it short and name todos by their ids.\n\n{list} has {} todos.",
        tasks.len()
    );
    for (title, shown) in sections.iter().filter(|(_, shown)| !shown.is_empty()) {
        text.push_str(&format!("\n{title}:\n"));
        text.push_str(&shown.iter().map(|t| line(t)).collect::<Vec<_>>().join("\n"));
    }
    if let Some(note) = read["pg_todos/omitted"].as_str() {
        text.push_str(&format!("\n({note})"));
    }
    text
}

/// The hand-over: who takes the list over, how to work it, and its open block.
fn handoff(list: &str, agent: Option<&str>, block: &str) -> String {
    let who = agent.map_or_else(String::new, |a| format!(" as {a}"));
    let open = if block.trim().is_empty() { format!("Nothing is open on {list}.") } else { block.to_string() };
    format!(
        "You are taking over the open todos of {list}{who}. Work through them in order: mark a todo in progress \
         (or claim it) before you start it and completed when it is done, with this server's todo tools. Other \
         agents and people share the list: add what you find still to do, and leave what others hold.\n\n{open}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn arguments_are_checked_against_the_prompts() {
        let plan = find("plan").unwrap();
        assert_eq!(checked(plan, &args(json!({}))).unwrap_err(), "prompt \"plan\" needs the argument \"task\"");
        assert_eq!(
            checked(plan, &args(json!({"task": "  "}))).unwrap_err(),
            "prompt \"plan\" needs the argument \"task\""
        );
        assert_eq!(
            checked(plan, &args(json!({"task": "x", "steps": "3"}))).unwrap_err(),
            "prompt \"plan\" has no argument \"steps\" (its arguments: task)"
        );
        assert!(checked(find("handoff").unwrap(), &args(json!({"agent": 3})))
            .unwrap_err()
            .contains("must be a string"));
        assert!(checked(find("standup").unwrap(), &args(json!({}))).is_ok());
        assert!(find("nope").is_none());
    }

    #[test]
    fn the_standup_sorts_the_list_by_what_each_todo_is_doing() {
        let read = json!({"tasks": [
            {"id": "1", "subject": "Read the issue", "status": "completed", "blockedBy": []},
            {"id": "2", "subject": "Fix the parser", "status": "in_progress", "owner": "claude@s1", "blockedBy": []},
            {"id": "3", "subject": "Release", "status": "pending", "blockedBy": ["2"]},
            {"id": "4", "subject": "Tell the team", "status": "pending", "blockedBy": []}]});
        let text = render(find("standup").unwrap(), &Map::new(), Some("app"), &read);
        assert!(text.ends_with(
            "the list \"app\" has 4 todos.\nDone:\n- #1 Read the issue\nIn progress:\n- #2 Fix the parser (claude@s1)\n\
             Blocked:\n- #3 Release (waiting for #2)\nNext:\n- #4 Tell the team"
        ), "{text}");
    }

    #[test]
    fn the_handoff_carries_the_open_block_or_says_nothing_is_open() {
        let p = find("handoff").unwrap();
        let text = render(p, &args(json!({"agent": "tester"})), None, &json!("Open todos:\n#4 [pending] x"));
        assert!(text.starts_with("You are taking over the open todos of the tenant-wide pool as tester."), "{text}");
        assert!(text.ends_with("\n\nOpen todos:\n#4 [pending] x"), "{text}");
        assert!(render(p, &Map::new(), Some("l"), &json!("")).ends_with("Nothing is open on the list \"l\"."));
    }
}
