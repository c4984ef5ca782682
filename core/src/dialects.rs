//! The tool dialects' names: what each set of tools is, as `_meta."pg_todos/dialect"`, the
//! MCP server's `--tools` and the docs name it. The seed numbers of earlier releases are
//! accepted as aliases until the next release.

/// (name, the seed-number alias it replaces, what it is)
pub const DIALECTS: &[(&str, &str, &str)] = &[
    ("plan", "001", "a supervisor's per-turn plan: create_todo, list_todo, complete_todo"),
    ("opencode", "002", "OpenCode's session todos: todowrite, todoread"),
    ("todolist", "003", "the todolist MCP toolset: todolist__get, todolist__set"),
    ("tasks", "004", "a conversation's task list: ListTasks, AddTask, CompleteTask, UncompleteTask, DeleteTask"),
    ("coord", "coord", "multi-agent coordination: claims, leases, dependencies, the ready queue, subtasks"),
    ("claude-tasks", "claude-tasks", "Claude Code's task tools: TaskCreate, TaskUpdate, TaskList, TaskGet"),
    ("claude-todowrite", "claude-todowrite", "Claude Code's TodoWrite"),
    ("codex", "codex", "OpenAI Codex CLI's update_plan"),
    ("gemini", "gemini", "Gemini CLI's write_todos"),
    ("cursor", "cursor", "Cursor's todo_write"),
    ("roo", "roo", "Roo Code's update_todo_list"),
    ("copilot", "copilot", "GitHub Copilot's manage_todo_list (VS Code)"),
    ("langchain", "langchain", "LangChain's and deepagents' write_todos"),
    ("openhands", "openhands", "OpenHands' task_tracker"),
    ("qwen", "qwen", "Qwen Code's todo_write"),
    ("goose", "goose", "Goose's todo__todo_write"),
    ("hermes", "hermes", "Nous Hermes agent's todo"),
    ("crush", "crush", "Charm Crush's todos"),
    ("kimi", "kimi", "Moonshot Kimi CLI's SetTodoList"),
    ("vibe", "vibe", "Mistral Vibe's todo"),
    ("zed", "zed", "Zed agent's update_plan"),
    ("continue", "continue", "Continue CLI's Checklist"),
];

/// The dialect a name or alias means (`"003"` → `"todolist"`); None for neither.
pub fn canonical(name: &str) -> Option<&'static str> {
    DIALECTS.iter().find(|(n, alias, _)| *n == name || *alias == name).map(|(n, _, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases() {
        assert_eq!(canonical("todolist"), Some("todolist"));
        assert_eq!(canonical("003"), Some("todolist"));
        assert_eq!(canonical("001"), Some("plan"));
        assert_eq!(canonical("coord"), Some("coord"));
        assert_eq!(canonical("claude-tasks"), Some("claude-tasks"));
        assert_eq!(canonical("roo"), Some("roo"));
        assert_eq!(canonical("continue"), Some("continue"));
        assert_eq!(canonical("005"), None);
        assert_eq!(canonical("writ"), None, "the writ is not a tool dialect");
    }
}
