//! The `/todo` writ grammar: which lines of an agent's message are commands, and what each
//! says. Pure: no pgrx, no database; `parse` never panics, on any input.
//!
//! - A command is a line that starts, at column 0, with `/todo ` (or is exactly `/todo`);
//!   trailing spaces, tabs and `\r` are ignored. Lines end at `\n`, `\r\n` or a lone `\r`.
//! - Lines inside fenced code blocks (``` or ~~~, up to three spaces of indent) never run.
//! - `/todo add <subject>` followed by a line that is neither empty nor a slash command opens
//!   a body: every following line is description until a line that is exactly `/endtodo`.
//!   With no terminator the add is truncated and nothing after its head line runs.

/// How a command names a todo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `14` or `#14`. An id too large for an i64 is kept as 0, which no todo has.
    Id(i64),
    /// Anything else: matched against open subjects (exact, case-insensitive, unique prefix).
    Subject(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Start,
    Done,
    Cancel,
}

impl Mark {
    pub fn verb(self) -> &'static str {
        match self {
            Mark::Start => "start",
            Mark::Done => "done",
            Mark::Cancel => "cancel",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Subject,
    Description,
}

impl Field {
    pub fn verb(self) -> &'static str {
        match self {
            Field::Subject => "subject",
            Field::Description => "describe",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Add {
        subject: String,
        description: Option<String>,
    },
    List {
        all: bool,
    },
    Mark(Mark, Target),
    Reopen(i64),
    Delete(i64),
    Set {
        field: Field,
        id: i64,
        text: String,
    },
    Help,
    /// `/todo claim [<id>]`: the next ready todo in scope, or this one
    Claim(Option<i64>),
    Heartbeat(i64),
    Release(i64),
    /// `/todo block <id> on <on>` / `/todo unblock <id> on <on>`
    Block {
        id: i64,
        on: i64,
    },
    Unblock {
        id: i64,
        on: i64,
    },
    Ready,
    /// `/todo subtask <parent>: <subject>`, with a body as for add
    Subtask {
        parent: i64,
        subject: String,
        description: Option<String>,
    },
}

/// Why a command line does not run. `Display` is the text after `ERR: `.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    UnknownVerb,
    AddWithoutSubject,
    MissingTerminator,
    /// the usage line of a verb whose arguments are wrong
    Usage(&'static str),
}

pub const VERBS_USAGE: &str = "usage: /todo (add|list|start|done|cancel|reopen|describe|subject|delete|help) [args]";

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::UnknownVerb => f.write_str(VERBS_USAGE),
            ParseError::AddWithoutSubject => f.write_str("/todo add requires a subject"),
            ParseError::MissingTerminator => f.write_str("missing /endtodo terminator"),
            ParseError::Usage(u) => write!(f, "usage: {u}"),
        }
    }
}

/// The usage line of each verb that takes arguments.
pub fn usage(verb: &str) -> &'static str {
    match verb {
        "list" => "/todo list [all]",
        "start" => "/todo start <id|subject>",
        "done" => "/todo done <id|subject>",
        "cancel" => "/todo cancel <id|subject>",
        "reopen" => "/todo reopen <id>",
        "delete" => "/todo delete <id>",
        "describe" => "/todo describe <id>: <text>",
        "subject" => "/todo subject <id>: <text>",
        "claim" => "/todo claim [<id>]",
        "heartbeat" => "/todo heartbeat <id>",
        "release" => "/todo release <id>",
        "block" => "/todo block <id> on <id>",
        "unblock" => "/todo unblock <id> on <id>",
        "ready" => "/todo ready",
        "subtask" => "/todo subtask <id>: <subject>",
        _ => "/todo add <subject>",
    }
}

/// One command found in a message: the head line as written (for the result's frame) and
/// what it asks, or why it cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub header: String,
    pub command: Result<Command, ParseError>,
}

/// Splits at `\n`, `\r\n` and lone `\r`.
fn lines(message: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = message.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                out.push(&message[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&message[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < message.len() {
        out.push(&message[start..]);
    }
    out
}

fn trim_end(line: &str) -> &str {
    line.trim_end_matches([' ', '\t', '\r'])
}

fn is_sep(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// A fence opener or closer: up to three spaces, then three or more ` or ~.
fn fence(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.len() - rest.trim_start_matches(ch).len();
    (len >= 3).then(|| (ch, len, &rest[len..]))
}

/// The head of a `/todo` command line, or None for prose.
fn command_rest(line: &str) -> Option<&str> {
    let line = trim_end(line);
    let rest = line.strip_prefix("/todo")?;
    if rest.is_empty() || rest.starts_with(is_sep) {
        Some(rest.trim_start_matches(is_sep))
    } else {
        None
    }
}

/// `/todo…`, `/endtodo`, or another `/word` command: ends a single-line add.
fn is_slash_command(line: &str) -> bool {
    let line = trim_end(line);
    if line.starts_with("/todo") || line == "/endtodo" {
        return true;
    }
    let Some(rest) = line.strip_prefix('/') else { return false };
    let word_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len());
    word_len > 0 && rest.as_bytes()[0].is_ascii_alphabetic() && rest[word_len..].chars().next().is_none_or(is_sep)
}

/// `14` or `#14` (ASCII digits, leading zeros allowed).
pub fn parse_id(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('#').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<i64>().unwrap_or(0))
}

fn split_verb(rest: &str) -> (&str, &str) {
    match rest.find(is_sep) {
        Some(i) => (&rest[..i], rest[i..].trim_matches(is_sep)),
        None => (rest, ""),
    }
}

/// `<id>: <text>` for describe and subject.
fn id_and_text(args: &str) -> Option<(i64, String)> {
    let (id, text) = args.split_once(':')?;
    let id = parse_id(id.trim_matches(is_sep))?;
    let text = text.trim_matches(is_sep);
    (!text.is_empty()).then(|| (id, text.to_string()))
}

/// `<id> on <id>` for block and unblock.
fn id_on_id(args: &str) -> Option<(i64, i64)> {
    let mut words = args.split(is_sep).filter(|w| !w.is_empty());
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some(id), Some("on"), Some(on), None) => Some((parse_id(id)?, parse_id(on)?)),
        _ => None,
    }
}

fn single(verb: &str, args: &str) -> Result<Command, ParseError> {
    let bad = || ParseError::Usage(usage(verb));
    match verb {
        "list" => match args {
            "" => Ok(Command::List { all: false }),
            "all" => Ok(Command::List { all: true }),
            _ => Err(bad()),
        },
        "start" | "done" | "cancel" => {
            let mark = match verb {
                "start" => Mark::Start,
                "done" => Mark::Done,
                _ => Mark::Cancel,
            };
            if args.is_empty() {
                return Err(bad());
            }
            let target = match parse_id(args) {
                Some(id) => Target::Id(id),
                None => Target::Subject(args.to_string()),
            };
            Ok(Command::Mark(mark, target))
        }
        "reopen" => parse_id(args).map(Command::Reopen).ok_or_else(bad),
        "delete" => parse_id(args).map(Command::Delete).ok_or_else(bad),
        "describe" | "subject" => {
            let field = if verb == "subject" { Field::Subject } else { Field::Description };
            id_and_text(args).map(|(id, text)| Command::Set { field, id, text }).ok_or_else(bad)
        }
        "help" => Ok(Command::Help),
        "claim" if args.is_empty() => Ok(Command::Claim(None)),
        "claim" => parse_id(args).map(|id| Command::Claim(Some(id))).ok_or_else(bad),
        "heartbeat" => parse_id(args).map(Command::Heartbeat).ok_or_else(bad),
        "release" => parse_id(args).map(Command::Release).ok_or_else(bad),
        "block" | "unblock" => {
            let (id, on) = id_on_id(args).ok_or_else(bad)?;
            Ok(if verb == "block" { Command::Block { id, on } } else { Command::Unblock { id, on } })
        }
        "ready" if args.is_empty() => Ok(Command::Ready),
        "ready" => Err(bad()),
        _ => Err(ParseError::UnknownVerb),
    }
}

/// Every command of `message`, in order.
pub fn parse(message: &str) -> Vec<Parsed> {
    let lines = lines(message);
    let mut out = Vec::new();
    let mut fenced: Option<(char, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if let Some((ch, len)) = fenced {
            if matches!(fence(line), Some((c, l, rest)) if c == ch && l >= len && rest.trim().is_empty()) {
                fenced = None;
            }
            continue;
        }
        if let Some((ch, len, _)) = fence(line) {
            fenced = Some((ch, len));
            continue;
        }
        let Some(rest) = command_rest(line) else { continue };
        let header = trim_end(line).to_string();
        let (verb, args) = split_verb(rest);
        if verb != "add" && verb != "subtask" {
            out.push(Parsed { header, command: single(verb, args) });
            continue;
        }
        // add and subtask: single-line, or a body up to /endtodo
        let opens_body = lines.get(i).is_some_and(|next| !trim_end(next).is_empty() && !is_slash_command(next));
        let mut description = None;
        if opens_body {
            let Some(end) = lines[i..].iter().position(|l| trim_end(l) == "/endtodo") else {
                out.push(Parsed { header, command: Err(ParseError::MissingTerminator) });
                break; // truncated: nothing after the head line runs
            };
            let body: Vec<&str> = lines[i..i + end].iter().map(|l| l.trim_end_matches('\r')).collect();
            description = Some(body.join("\n"));
            i += end + 1;
        }
        let command = if verb == "subtask" {
            id_and_text(args)
                .map(|(parent, subject)| Command::Subtask { parent, subject, description })
                .ok_or(ParseError::Usage(usage("subtask")))
        } else if args.is_empty() {
            Err(ParseError::AddWithoutSubject)
        } else {
            Ok(Command::Add { subject: args.to_string(), description })
        };
        out.push(Parsed { header, command });
    }
    out
}

impl Command {
    /// The verb that says this command (`usage` is keyed by it).
    pub fn verb(&self) -> &'static str {
        match self {
            Command::Add { .. } => "add",
            Command::List { .. } => "list",
            Command::Mark(m, _) => m.verb(),
            Command::Reopen(_) => "reopen",
            Command::Delete(_) => "delete",
            Command::Set { field, .. } => field.verb(),
            Command::Help => "help",
            Command::Claim(_) => "claim",
            Command::Heartbeat(_) => "heartbeat",
            Command::Release(_) => "release",
            Command::Block { .. } => "block",
            Command::Unblock { .. } => "unblock",
            Command::Ready => "ready",
            Command::Subtask { .. } => "subtask",
        }
    }

    /// The writ text that says this command (the inverse of `parse`).
    pub fn to_writ(&self) -> String {
        match self {
            Command::Add { subject, description: None } => format!("/todo add {subject}"),
            Command::Add { subject, description: Some(d) } => {
                format!("/todo add {subject}\n{d}\n/endtodo")
            }
            Command::List { all: false } => "/todo list".into(),
            Command::List { all: true } => "/todo list all".into(),
            Command::Mark(m, Target::Id(id)) => format!("/todo {} {id}", m.verb()),
            Command::Mark(m, Target::Subject(s)) => format!("/todo {} {s}", m.verb()),
            Command::Reopen(id) => format!("/todo reopen {id}"),
            Command::Delete(id) => format!("/todo delete {id}"),
            Command::Set { field, id, text } => format!("/todo {} {id}: {text}", field.verb()),
            Command::Help => "/todo help".into(),
            Command::Claim(None) => "/todo claim".into(),
            Command::Claim(Some(id)) => format!("/todo claim {id}"),
            Command::Heartbeat(id) => format!("/todo heartbeat {id}"),
            Command::Release(id) => format!("/todo release {id}"),
            Command::Block { id, on } => format!("/todo block {id} on {on}"),
            Command::Unblock { id, on } => format!("/todo unblock {id} on {on}"),
            Command::Ready => "/todo ready".into(),
            Command::Subtask { parent, subject, description: None } => format!("/todo subtask {parent}: {subject}"),
            Command::Subtask { parent, subject, description: Some(d) } => {
                format!("/todo subtask {parent}: {subject}\n{d}\n/endtodo")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds(message: &str) -> Vec<Result<Command, ParseError>> {
        parse(message).into_iter().map(|p| p.command).collect()
    }

    fn add(subject: &str, description: Option<&str>) -> Result<Command, ParseError> {
        Ok(Command::Add { subject: subject.into(), description: description.map(Into::into) })
    }

    #[test]
    fn prose_is_ignored_and_commands_run_in_order() {
        let m = "I'll plan this.\n/todo add review the deploy status\nthen\n/todo list\n /todo list\nsee /todo list";
        // "then" is not empty and not a slash command: it opens a body with no terminator
        assert_eq!(cmds(m), vec![Err(ParseError::MissingTerminator)]);
        let m = "I'll plan this.\n/todo add review the deploy status\n\nthen\n/todo list\n /todo list\nsee /todo list";
        assert_eq!(cmds(m), vec![add("review the deploy status", None), Ok(Command::List { all: false })]);
    }

    #[test]
    fn headers_are_the_head_lines() {
        let p = parse("/todo start #14  \r\n/todo add x\nbody\n/endtodo");
        assert_eq!(p[0].header, "/todo start #14");
        assert_eq!(p[1].header, "/todo add x");
    }

    #[test]
    fn verbs() {
        use Command::*;
        assert_eq!(
            cmds("/todo list\n/todo list all\n/todo start 14\n/todo done #15\n/todo cancel write the post-mortem\n/todo reopen 3\n/todo delete #4\n/todo describe 14: bumped to next sprint\n/todo subject 14:  review the canary\n/todo help"),
            vec![
                Ok(List { all: false }),
                Ok(List { all: true }),
                Ok(Mark(super::Mark::Start, Target::Id(14))),
                Ok(Mark(super::Mark::Done, Target::Id(15))),
                Ok(Mark(super::Mark::Cancel, Target::Subject("write the post-mortem".into()))),
                Ok(Reopen(3)),
                Ok(Delete(4)),
                Ok(Set { field: Field::Description, id: 14, text: "bumped to next sprint".into() }),
                Ok(Set { field: Field::Subject, id: 14, text: "review the canary".into() }),
                Ok(Help),
            ]
        );
    }

    #[test]
    fn usage_errors() {
        assert_eq!(cmds("/todo frobnicate 3"), vec![Err(ParseError::UnknownVerb)]);
        assert_eq!(cmds("/todo"), vec![Err(ParseError::UnknownVerb)]);
        assert_eq!(cmds("/todo Add x"), vec![Err(ParseError::UnknownVerb)], "verbs are lowercase");
        assert_eq!(cmds("/todo add"), vec![Err(ParseError::AddWithoutSubject)]);
        assert_eq!(cmds("/todo add   "), vec![Err(ParseError::AddWithoutSubject)]);
        assert_eq!(cmds("/todo start"), vec![Err(ParseError::Usage("/todo start <id|subject>"))]);
        assert_eq!(cmds("/todo reopen foo"), vec![Err(ParseError::Usage("/todo reopen <id>"))]);
        assert_eq!(cmds("/todo delete"), vec![Err(ParseError::Usage("/todo delete <id>"))]);
        assert_eq!(cmds("/todo list everything"), vec![Err(ParseError::Usage("/todo list [all]"))]);
        for bad in ["/todo describe 14 no colon", "/todo describe x: y", "/todo describe 14:", "/todo describe 14:   "]
        {
            assert_eq!(cmds(bad), vec![Err(ParseError::Usage("/todo describe <id>: <text>"))], "{bad}");
        }
        assert_eq!(
            ParseError::UnknownVerb.to_string(),
            "usage: /todo (add|list|start|done|cancel|reopen|describe|subject|delete|help) [args]"
        );
        assert_eq!(ParseError::Usage(usage("describe")).to_string(), "usage: /todo describe <id>: <text>");
    }

    #[test]
    fn coordination_verbs() {
        use Command::*;
        assert_eq!(
            cmds("/todo claim\n/todo claim #14\n/todo heartbeat 14\n/todo release 14\n/todo block 15 on #14\n/todo unblock #15  on  14\n/todo ready\n/todo subtask 3: write the tests"),
            vec![
                Ok(Claim(None)),
                Ok(Claim(Some(14))),
                Ok(Heartbeat(14)),
                Ok(Release(14)),
                Ok(Block { id: 15, on: 14 }),
                Ok(Unblock { id: 15, on: 14 }),
                Ok(Ready),
                Ok(Subtask { parent: 3, subject: "write the tests".into(), description: None }),
            ]
        );
        assert_eq!(
            cmds("/todo subtask 3: write the tests\nunit and regress\n/endtodo\n/todo ready"),
            vec![
                Ok(Subtask {
                    parent: 3,
                    subject: "write the tests".into(),
                    description: Some("unit and regress".into())
                }),
                Ok(Ready)
            ]
        );
        for (bad, verb) in [
            ("/todo claim next", "claim"),
            ("/todo heartbeat", "heartbeat"),
            ("/todo release x", "release"),
            ("/todo block 15", "block"),
            ("/todo block 15 14", "block"),
            ("/todo block 15 on", "block"),
            ("/todo block 15 on 14 and 13", "block"),
            ("/todo unblock 15 from 14", "unblock"),
            ("/todo ready now", "ready"),
            ("/todo subtask write the tests", "subtask"),
            ("/todo subtask 3:", "subtask"),
        ] {
            assert_eq!(cmds(bad), vec![Err(ParseError::Usage(usage(verb)))], "{bad}");
        }
        assert_eq!(usage("block"), "/todo block <id> on <id>");
    }

    #[test]
    fn not_commands() {
        for m in [
            "/todos list",
            "/todolist",
            " /todo list",
            "\t/todo list",
            "／todo list",
            "/TODO list",
            "/todo\u{a0}list",
            "say /todo list",
        ] {
            assert_eq!(cmds(m), vec![], "{m:?}");
        }
    }

    #[test]
    fn block_form() {
        assert_eq!(
            cmds("/todo add write the post-mortem\ntimeline\n\n/etc/hosts was wrong\n/endtodo\n/todo list"),
            vec![
                add("write the post-mortem", Some("timeline\n\n/etc/hosts was wrong")),
                Ok(Command::List { all: false })
            ]
        );
        // next line empty, a /todo command, /endtodo, or another /word command: single-line
        for next in ["", "   ", "/todo list", "/endtodo", "/agent researcher go", "/schedule"] {
            let p = cmds(&format!("/todo add x\n{next}"));
            assert_eq!(p[0], add("x", None), "{next:?}");
        }
        // a path is not a command: it opens a body
        assert_eq!(cmds("/todo add x\n/etc/hosts\n/endtodo"), vec![add("x", Some("/etc/hosts"))]);
        // /todo lines inside a body are description, not commands
        assert_eq!(cmds("/todo add x\nnote\n/todo delete 3\n/endtodo"), vec![add("x", Some("note\n/todo delete 3"))]);
        // terminator with trailing spaces and CRLF
        assert_eq!(cmds("/todo add x\r\nline one\r\n/endtodo  \r\n"), vec![add("x", Some("line one"))]);
    }

    #[test]
    fn truncated_block_stops_everything_after_its_head() {
        assert_eq!(
            cmds("/todo list\n/todo add x\nbody line\n/todo delete 3\n/todo list"),
            vec![Ok(Command::List { all: false }), Err(ParseError::MissingTerminator)]
        );
        assert_eq!(parse("/todo add x\nbody")[0].header, "/todo add x");
    }

    #[test]
    fn add_without_subject_still_swallows_its_body() {
        assert_eq!(
            cmds("/todo add\nbody\n/todo delete 1\n/endtodo\n/todo list"),
            vec![Err(ParseError::AddWithoutSubject), Ok(Command::List { all: false })]
        );
    }

    #[test]
    fn fenced_code_never_runs() {
        let m = "Example:\n```\n/todo delete 3\n```\n~~~~sh\n/todo delete 4\n~~~\nstill fenced\n/todo delete 5\n~~~~\n/todo list";
        assert_eq!(cmds(m), vec![Ok(Command::List { all: false })]);
        // an unclosed fence swallows the rest
        assert_eq!(cmds("```\n/todo list"), vec![]);
        // indented up to three spaces still fences
        assert_eq!(cmds("   ```\n/todo list\n   ```\n/todo help"), vec![Ok(Command::Help)]);
    }

    #[test]
    fn ids() {
        assert_eq!(parse_id("14"), Some(14));
        assert_eq!(parse_id("#14"), Some(14));
        assert_eq!(parse_id("007"), Some(7));
        assert_eq!(parse_id("1234567890123456789012345"), Some(0), "too large: an id nobody has");
        for s in ["", "#", "-3", "+3", "1.5", "١٤", "14a", "# 14"] {
            assert_eq!(parse_id(s), None, "{s:?}");
        }
        // a non-id target is a subject
        assert_eq!(cmds("/todo done -3"), vec![Ok(Command::Mark(Mark::Done, Target::Subject("-3".into())))]);
    }

    #[test]
    fn line_endings() {
        assert_eq!(lines("a\rb\r\nc\nd"), vec!["a", "b", "c", "d"]);
        assert_eq!(cmds("/todo list\r/todo help"), vec![Ok(Command::List { all: false }), Ok(Command::Help)]);
    }
}
