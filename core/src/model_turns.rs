//! The dialects whose tools count calls by model turn, and the turn a call of theirs runs in:
//! LangChain allows one `write_todos` per model turn (its dialect, `langchain`, refuses a
//! second write of a list in one turn). An MCP server with no turn configured names the
//! whole session as the turn, which is not a model turn, so their calls go without one.

/// The dialects whose tools allow one write per model turn.
pub const COUNTED_BY_MODEL_TURN: &[&str] = &["langchain"];

/// Whether a call of `tool` (`dialect/name`, as an MCP server names the tool it runs) goes
/// without the turn in context: it is a tool of a dialect that counts model turns, and the
/// turn is `session`, the whole session's (the server's when none is configured).
pub fn goes_without_turn(tool: &str, turn: Option<&str>, session: &str) -> bool {
    let counted = tool.split_once('/').is_some_and(|(dialect, _)| COUNTED_BY_MODEL_TURN.contains(&dialect));
    counted && turn == Some(session)
}

#[cfg(test)]
mod tests {
    use super::goes_without_turn;

    #[test]
    fn a_langchain_call_in_the_session_turn_goes_without_it() {
        assert!(goes_without_turn("langchain/write_todos", Some("s1"), "s1"));
        assert!(!goes_without_turn("langchain/write_todos", Some("turn-7"), "s1"));
        assert!(!goes_without_turn("langchain/write_todos", None, "s1"));
        assert!(!goes_without_turn("claude/TodoWrite", Some("s1"), "s1"));
        assert!(!goes_without_turn("write_todos", Some("s1"), "s1"));
    }
}
