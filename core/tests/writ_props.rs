//! Property tests of the writ parser and renderer, with no database: the pure modules are
//! used through the pg_todos_core crate, which has no pgrx.
//! Run: cargo test -p pg_todos_core --test writ_props

use parse::{Command, Field, Mark, Target};
use pg_todos_core::status;
use pg_todos_core::writ::{parse, render};
use proptest::prelude::*;
use status::Status;

/// Text on one line with no separator at either end: what a subject or an argument can be.
fn one_line() -> impl Strategy<Value = String> {
    "[^\\x00-\\x1f\\x7f\\u{85}\\u{2028}\\u{2029}]{1,40}"
        .prop_map(|s| s.trim_matches([' ', '\t']).to_string())
        .prop_filter("non-empty", |s| !s.is_empty())
}

fn subject_target() -> impl Strategy<Value = String> {
    one_line().prop_filter("not an id", |s| parse::parse_id(s).is_none())
}

/// A body: its first line opens a body (not empty, not a slash command), and no line is the
/// terminator.
fn description() -> impl Strategy<Value = String> {
    (
        one_line(),
        prop::collection::vec(prop_oneof![Just(String::new()), one_line(), Just("/etc/hosts".to_string())], 0..4),
    )
        .prop_filter("first line opens a body", |(first, _)| !first.starts_with('/'))
        .prop_filter("no terminator", |(_, rest)| rest.iter().all(|l| l.trim_end() != "/endtodo"))
        .prop_map(|(first, rest)| std::iter::once(first).chain(rest).collect::<Vec<_>>().join("\n"))
}

fn id() -> impl Strategy<Value = i64> {
    1..=i64::MAX
}

fn command() -> impl Strategy<Value = Command> {
    let mark = prop_oneof![Just(Mark::Start), Just(Mark::Done), Just(Mark::Cancel)];
    let field = prop_oneof![Just(Field::Subject), Just(Field::Description)];
    prop_oneof![
        (one_line(), prop::option::of(description()))
            .prop_map(|(subject, description)| Command::Add { subject, description }),
        any::<bool>().prop_map(|all| Command::List { all }),
        (mark.clone(), id()).prop_map(|(m, id)| Command::Mark(m, Target::Id(id))),
        (mark, subject_target()).prop_map(|(m, s)| Command::Mark(m, Target::Subject(s))),
        id().prop_map(Command::Reopen),
        id().prop_map(Command::Delete),
        (field, id(), one_line().prop_filter("no leading colon", |t| !t.starts_with(':')))
            .prop_map(|(field, id, text)| Command::Set { field, id, text }),
        Just(Command::Help),
        prop::option::of(id()).prop_map(Command::Claim),
        id().prop_map(Command::Heartbeat),
        id().prop_map(Command::Release),
        (id(), id()).prop_map(|(id, on)| Command::Block { id, on }),
        (id(), id()).prop_map(|(id, on)| Command::Unblock { id, on }),
        Just(Command::Ready),
        (id(), one_line().prop_filter("no leading colon", |t| !t.starts_with(':')), prop::option::of(description()))
            .prop_map(|(parent, subject, description)| Command::Subtask { parent, subject, description }),
    ]
}

/// Pieces that make nasty messages when strung together.
fn nasty() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("/todo ".to_string()),
        Just("/todo".to_string()),
        Just("add ".to_string()),
        Just("list".to_string()),
        Just(" all".to_string()),
        Just("start #".to_string()),
        Just("done ".to_string()),
        Just("describe 1:".to_string()),
        Just("claim ".to_string()),
        Just("block 1 on 2".to_string()),
        Just("subtask 3:".to_string()),
        Just("/endtodo".to_string()),
        Just("```".to_string()),
        Just("~~~".to_string()),
        Just("\n".to_string()),
        Just("\r".to_string()),
        Just("\r\n".to_string()),
        Just("\t".to_string()),
        Just("\u{a0}".to_string()),
        Just("／".to_string()),
        Just("\u{202e}".to_string()),
        Just("00000000000000000000000014".to_string()),
        Just("-3".to_string()),
        Just("١٤".to_string()),
        any::<String>(),
    ];
    prop::collection::vec(pieces, 0..40).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_never_panics(message in any::<String>()) {
        let _ = parse::parse(&message);
    }

    #[test]
    fn parse_never_panics_on_nasty_messages(message in nasty()) {
        for p in parse::parse(&message) {
            // a header is always one /todo line
            prop_assert!(p.header.starts_with("/todo"));
            prop_assert!(!p.header.contains('\n') && !p.header.contains('\r'));
        }
    }

    #[test]
    fn a_rendered_command_parses_back_to_itself(cmd in command()) {
        let text = cmd.to_writ();
        prop_assert_eq!(text.split(' ').nth(1), Some(cmd.verb()), "{:?}", text);
        let parsed = parse::parse(&text);
        prop_assert_eq!(parsed.len(), 1, "{:?}", text);
        prop_assert_eq!(&parsed[0].command, &Ok(cmd));
        prop_assert_eq!(parsed[0].header.as_str(), text.lines().next().unwrap().trim_end_matches([' ', '\t']));
    }

    #[test]
    fn a_message_of_commands_parses_back_to_them(cmds in prop::collection::vec(command(), 1..8), prose in one_line()) {
        // commands separated by prose lines that are not commands (a blank line after each
        // single-line add keeps the prose out of a body)
        let prose = format!("note: {prose}");
        let text = cmds.iter().map(|c| format!("{}\n\n{prose}", c.to_writ())).collect::<Vec<_>>().join("\n");
        let parsed: Vec<_> = parse::parse(&text).into_iter().map(|p| p.command).collect();
        prop_assert_eq!(parsed, cmds.into_iter().map(Ok).collect::<Vec<_>>());
    }

    #[test]
    fn no_stored_text_adds_a_line_to_a_block(subjects in prop::collection::vec(any::<String>(), 1..10)) {
        let rows: Vec<render::Row> = subjects.iter().enumerate().map(|(i, s)| render::Row { marks: Default::default(),
            id: i as i64 + 1,
            subject: s.clone(),
            status: Status::ALL[i % 4],
            tenant_wide: i % 3 == 0,
        }).collect();
        let all = render::list_body(&rows, true);
        prop_assert_eq!(all.lines().count(), rows.len() + 1);
        // `lines()` splits at \n only; a renderer must not emit other line breaks either
        let breaks = ['\r', '\u{2028}', '\u{2029}', '\u{85}', '\u{b}', '\u{c}'];
        prop_assert!(!all.contains(breaks), "a line break in {:?}", all);
        let framed = render::frame(&subjects[0], &all);
        prop_assert_eq!(framed.lines().count(), rows.len() + 3);
        prop_assert_eq!(framed.lines().last(), Some("[END TODO]"));
    }
}
