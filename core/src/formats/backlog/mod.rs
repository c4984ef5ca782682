//! Backlog.md's task files (`backlog/tasks/task-1 - Set-up-database.md`, and the same in
//! `drafts/`, `completed/` and `archive/tasks/`): YAML front matter, then the body's
//! marked sections. `parse` reads one file into a `Record`; `render` writes a `Record` as
//! Backlog.md 1.52.0 writes it (front-matter key order, js-yaml 3's quoting, the section
//! markers, the blank lines and the ending), so Backlog.md reads it back.
//!
//! What a `Record` has no field for goes into `Record.extra` under Backlog.md's own key:
//! `ordinal` (number), `milestone`, `references`, `documentation`, `modifiedFiles`,
//! `reporter`, `onStatusChange`, `subtasks` (the legacy list), `assignee` (the whole list
//! when there are several), `status` (the word, when it is a custom status), `priority` (a
//! word other than high, medium or low) and `folder` (`tasks`, `drafts`, `completed`,
//! `archive/tasks`, `archive/drafts`) and `file` (the file's name: Backlog.md keeps it when
//! the title changes). Other front-matter keys are kept there too, as
//! read, but not written back (Backlog.md drops them when it saves).
//!
//! The YAML reader and writer are hand-written for the subset Backlog.md writes: plain,
//! single- and double-quoted scalars, `|`/`>` block scalars, block and flow lists.
//!
//! Here: the statuses, the files' paths and the dates; `yaml` the YAML subset, `body` the
//! body's sections, `parse` and `render` the whole file.

mod body;
pub mod parse;
pub mod render;
mod yaml;

use serde_json::Value;

use crate::file_names::{component, is_safe_component};
use crate::interchange::{ChecklistItem, ChecklistKind, Comment, FileError, Record};
use crate::status::Status;
use crate::time::iso8601;

/// Backlog.md's default statuses and what they mean in the store.
pub const STATUS_TODO: &str = "To Do";
pub const STATUS_IN_PROGRESS: &str = "In Progress";
pub const STATUS_DONE: &str = "Done";
pub const STATUS_DRAFT: &str = "Draft";

const AC_BEGIN: &str = "<!-- AC:BEGIN -->";
const AC_END: &str = "<!-- AC:END -->";
const DOD_BEGIN: &str = "<!-- DOD:BEGIN -->";
const DOD_END: &str = "<!-- DOD:END -->";
const COMMENTS_BEGIN: &str = "<!-- COMMENTS:BEGIN -->";
const COMMENTS_END: &str = "<!-- COMMENTS:END -->";

/// The store's status for a Backlog.md status word (any case). A word that is not one of
/// the four is a custom status: pending, its word kept in `extra["status"]`.
pub fn status_from_word(word: &str) -> (Status, bool) {
    match word.trim().to_lowercase().as_str() {
        "to do" => (Status::Pending, false),
        "in progress" => (Status::InProgress, false),
        "done" => (Status::Completed, false),
        "draft" => (Status::Deferred, false),
        _ => (Status::Pending, true),
    }
}

/// The Backlog.md status word of a record: the word an archived task had when it was not
/// done (`extra["archived_status"]`: the store archives it canceled), its custom word
/// (`extra["status"]`) while it is still pending, else the word of its status (blocked is `To Do`, review `In Progress`,
/// canceled `Done`, deferred `Draft`).
pub fn status_word(record: &Record) -> String {
    if record.status == Status::Canceled {
        if let Some(Value::String(word)) = record.extra.get("archived_status") {
            return word.clone();
        }
    }
    if record.status == Status::Pending {
        if let Some(Value::String(word)) = record.extra.get("status") {
            return word.clone();
        }
    }
    match record.status {
        Status::Deferred => STATUS_DRAFT.to_string(),
        other => match other.three_state() {
            Status::InProgress => STATUS_IN_PROGRESS.to_string(),
            Status::Completed => STATUS_DONE.to_string(),
            _ => STATUS_TODO.to_string(),
        },
    }
}

/// The folder (under `backlog/`) a record's file lives in: `extra["folder"]` when it still
/// agrees with the record, else archived and completed → `completed`, archived otherwise →
/// `archive/tasks` (`archive/drafts` for a draft), deferred → `drafts`, else `tasks`.
pub fn folder_of(record: &Record) -> &'static str {
    let kept = record.extra.get("folder").and_then(Value::as_str);
    if record.archived {
        match kept {
            Some("archive/tasks") => "archive/tasks",
            Some("archive/drafts") => "archive/drafts",
            Some("completed") if record.status == Status::Completed => "completed",
            _ if record.status == Status::Completed => "completed",
            _ if record.status == Status::Deferred => "archive/drafts",
            _ => "archive/tasks",
        }
    } else if record.status == Status::Deferred {
        "drafts"
    } else {
        "tasks"
    }
}

/// Backlog.md's file-name form of a title (`sanitizeFilename`): `<>:"/\|?*` become `-`,
/// `'(),!@#$%^&+=[]{};` are dropped, runs of white space become `-`, runs of `-` one `-`,
/// and a leading or trailing `-` goes.
pub fn title_slug(title: &str) -> String {
    let mut out = String::new();
    let mut in_space = false;
    for c in title.chars() {
        let c = if "<>:\"/\\|?*".contains(c) { '-' } else { c };
        if "'(),!@#$%^&+=[]{};".contains(c) {
            continue;
        }
        if c.is_whitespace() {
            if !in_space {
                out.push('-');
            }
            in_space = true;
            continue;
        }
        in_space = false;
        out.push(c);
    }
    let mut collapsed = String::new();
    for c in out.chars() {
        if c == '-' && collapsed.ends_with('-') {
            continue;
        }
        collapsed.push(c);
    }
    collapsed.trim_matches('-').to_string()
}

/// The path (relative to the project) Backlog.md gives a record's file:
/// `backlog/<folder>/<lowercase id> - <Title-slug>.md`, the id made one safe file name
/// (`file_names::component`: `../x` is `%2E.%2Fx`) and the slug without control
/// characters. A file keeps its name when the title changes (Backlog.md does not rename on
/// edit): `extra["file"]`, the name it was read from, wins while it still starts with the
/// record's id and is one safe file name.
pub fn file_path(record: &Record) -> String {
    let id = component(&record.id.to_lowercase());
    let name = match record.extra.get("file").and_then(Value::as_str) {
        Some(kept)
            if kept.to_lowercase().starts_with(&format!("{id} - "))
                && kept.ends_with(".md")
                && is_safe_component(kept) =>
        {
            kept.to_string()
        }
        _ => {
            let slug: String = title_slug(&record.title).chars().filter(|c| !c.is_control()).collect();
            format!("{id} - {slug}.md")
        }
    };
    format!("backlog/{}/{name}", folder_of(record))
}

// ---------------------------------------------------------------------------------------
// dates

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD` as microseconds (midnight UTC).
pub fn parse_date(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&s[0..4])?, digits(&s[5..7])?, digits(&s[8..10])?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some(crate::time::days_from_civil(y, m, d) * 86_400_000_000)
}

/// `YYYY-MM-DD HH:mm` (or with a `T`) in UTC as microseconds.
pub fn parse_date_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 16 || !(b[10] == b' ' || b[10] == b'T') || b[13] != b':' {
        return None;
    }
    let day = parse_date(&s[0..10])?;
    let (h, min) = (digits(&s[11..13])?, digits(&s[14..16])?);
    if h > 23 || min > 59 {
        return None;
    }
    Some(day + (h * 3600 + min * 60) * 1_000_000)
}

/// Microseconds as `YYYY-MM-DD HH:mm` (UTC), Backlog.md's created and updated dates.
pub fn format_date_time(us: i64) -> String {
    let iso = iso8601(us);
    format!("{} {}", &iso[0..10], &iso[11..16])
}

/// Microseconds as `YYYY-MM-DD` (UTC), Backlog.md's due dates.
pub fn format_date(us: i64) -> String {
    iso8601(us)[0..10].to_string()
}

#[cfg(test)]
mod tests {
    use super::parse::parse;
    use super::render::*;
    use super::yaml::*;
    use super::*;

    macro_rules! fixture {
        ($path:literal, $file:literal) => {
            ($path, include_str!(concat!("../fixtures/backlog/", $file)))
        };
    }

    /// Every file Backlog.md 1.52.0 wrote in the recorded session (after step a and at the
    /// end), with the path it had under the project.
    fn fixtures() -> Vec<(&'static str, &'static str)> {
        vec![
            fixture!("backlog/tasks/task-1 - Set-up-database.md", "a/task-1 - Set-up-database.md"),
            fixture!("backlog/tasks/task-1.1 - Subtask-of-DB.md", "a/task-1.1 - Subtask-of-DB.md"),
            fixture!("backlog/tasks/task-1.2 - Second-subtask-of-DB.md", "a/task-1.2 - Second-subtask-of-DB.md"),
            fixture!("backlog/tasks/task-2 - Write-API.md", "a/task-2 - Write-API.md"),
            fixture!("backlog/tasks/task-3 - Due-with-time.md", "a/task-3 - Due-with-time.md"),
            fixture!("backlog/tasks/task-4 - Due-date-only.md", "a/task-4 - Due-date-only.md"),
            fixture!("backlog/tasks/task-5 - Status-lower.md", "a/task-5 - Status-lower.md"),
            fixture!("backlog/archive/tasks/task-2 - Write-API.md", "end/archive/tasks/task-2 - Write-API.md"),
            fixture!("backlog/completed/task-1 - Set-up-database.md", "end/completed/task-1 - Set-up-database.md"),
            fixture!("backlog/tasks/task-1.1 - Subtask-of-DB.md", "end/tasks/task-1.1 - Subtask-of-DB.md"),
            fixture!("backlog/tasks/task-1.1.1 - Nested-child.md", "end/tasks/task-1.1.1 - Nested-child.md"),
            fixture!(
                "backlog/tasks/task-1.2 - Second-subtask-of-DB.md",
                "end/tasks/task-1.2 - Second-subtask-of-DB.md"
            ),
            fixture!("backlog/tasks/task-1.3 - Child-of-completed.md", "end/tasks/task-1.3 - Child-of-completed.md"),
            fixture!("backlog/tasks/task-3 - Due-with-time.md", "end/tasks/task-3 - Due-with-time.md"),
            fixture!("backlog/tasks/task-4 - Due-date-only.md", "end/tasks/task-4 - Due-date-only.md"),
            fixture!("backlog/tasks/task-5 - Status-lower.md", "end/tasks/task-5 - Status-lower.md"),
            fixture!("backlog/tasks/task-6 - After-archive.md", "end/tasks/task-6 - After-archive.md"),
            fixture!(
                "backlog/tasks/task-7 - Fix-the-`foo`-bar-baz-qux-v2-—-ünïcode.md",
                "end/tasks/task-7 - Fix-the-`foo`-bar-baz-qux-v2-—-ünïcode.md"
            ),
            fixture!("backlog/tasks/task-8 - Dep-on-completed.md", "end/tasks/task-8 - Dep-on-completed.md"),
            fixture!("backlog/tasks/task-9 - Multi-line.md", "end/tasks/task-9 - Multi-line.md"),
        ]
    }

    #[test]
    fn backlog_round_trips_every_recorded_file() {
        for (path, text) in fixtures() {
            let record = parse(path, text).unwrap_or_else(|e| panic!("{e}"));
            let (rendered_path, rendered) = render(&record);
            assert_eq!(rendered, text, "{path}");
            assert_eq!(rendered_path, path, "{path}");
        }
    }

    const NOV26_2156: i64 = 1_795_730_160_000_000;

    #[test]
    fn backlog_parse_maps_the_fields() {
        let files = fixtures();
        let (path, text) = files[8];
        let r = parse(path, text).unwrap();
        assert_eq!(r.id, "TASK-1");
        assert_eq!(r.title, "Set up database v2");
        assert_eq!(r.status, Status::Completed);
        assert!(r.archived);
        assert_eq!(r.extra["folder"], "completed");
        assert_eq!(r.created_us, Some(NOV26_2156));
        assert_eq!(format_date_time(NOV26_2156), "2026-11-26 21:56");
        assert_eq!(r.updated_us, Some(NOV26_2156));
        assert_eq!(r.labels, vec!["db", "backend"]);
        assert_eq!(r.priority.as_deref(), Some("low"));
        assert_eq!(r.description.as_deref(), Some("Create schema and indexes"));
        assert_eq!(r.plan.as_deref(), Some("p\n\np2 step\n\np3 step"));
        assert_eq!(r.notes.as_deref(), Some("impl notes text"));
        assert_eq!(r.outcome.as_deref(), Some("Did the DB"));
        assert_eq!(r.extra["references"], serde_json::json!(["https://example.com/ref", "src/db.ts"]));
        assert_eq!(r.extra["ordinal"], 1000);
        assert_eq!(
            r.checklist,
            vec![
                ChecklistItem { kind: ChecklistKind::Acceptance, text: "Schema exists".into(), checked: true },
                ChecklistItem { kind: ChecklistKind::Acceptance, text: "Indexes".into(), checked: false },
                ChecklistItem { kind: ChecklistKind::Done, text: "Tests pass".into(), checked: true },
            ]
        );
        assert_eq!(
            r.comments,
            vec![
                Comment { author: Some("@bob".into()), created_us: NOV26_2156, body: "First comment".into() },
                Comment { author: None, created_us: NOV26_2156, body: "Second comment, no author".into() },
            ]
        );

        let r = parse(files[3].0, files[3].1).unwrap();
        assert_eq!(r.assignee.as_deref(), Some("@alice"));
        assert_eq!(r.dependencies, vec!["TASK-1"]);
        assert_eq!(r.issue_type.as_deref(), Some("feature"));
        assert_eq!(r.status, Status::Pending);
        assert!(!r.archived);
        assert!(!r.extra.contains_key("folder"));

        let r = parse(files[7].0, files[7].1).unwrap();
        assert!(r.archived);
        assert_eq!(r.extra["folder"], "archive/tasks");

        let r = parse(files[4].0, files[4].1).unwrap();
        assert_eq!(r.due_us.map(format_date).as_deref(), Some("2026-12-01"));
        let r = parse(files[6].0, files[6].1).unwrap();
        assert_eq!(r.status, Status::InProgress);
        let r = parse(files[10].0, files[10].1).unwrap();
        assert_eq!(r.parent.as_deref(), Some("TASK-1.1"));
        let r = parse(files[19].0, files[19].1).unwrap();
        assert_eq!(r.extra["milestone"], "v1");
        assert_eq!(r.extra["ordinal"], 50);
        assert_eq!(r.description.as_deref(), Some("line1\n\nline2"));
    }

    fn bare(extra_fm: &str) -> String {
        format!(
            "---\nid: TASK-4\ntitle: T\nstatus: To Do\nassignee: []\ncreated_date: '2026-11-26 21:56'\nlabels: []\ndependencies: []\n{extra_fm}---\n\n\n"
        )
    }

    #[test]
    fn backlog_custom_status_draft_and_several_assignees() {
        let text = bare("").replace("status: To Do", "status: Review Pending");
        let r = parse("backlog/tasks/task-4 - T.md", &text).unwrap();
        assert_eq!(r.status, Status::Pending);
        assert_eq!(r.extra["status"], "Review Pending");
        assert_eq!(render(&r).1, text);

        let text = bare("").replace("id: TASK-4", "id: DRAFT-1").replace("status: To Do", "status: Draft");
        let r = parse("backlog/drafts/draft-1 - T.md", &text).unwrap();
        assert_eq!(r.status, Status::Deferred);
        assert_eq!(render(&r), ("backlog/drafts/draft-1 - T.md".to_string(), text));

        let text = bare("").replace("assignee: []", "assignee:\n  - '@alice'\n  - bob");
        let r = parse("backlog/tasks/task-4 - T.md", &text).unwrap();
        assert_eq!(r.assignee.as_deref(), Some("@alice"));
        assert_eq!(r.extra["assignee"], serde_json::json!(["@alice", "bob"]));
        assert_eq!(render(&r).1, text);

        // flow lists and an unquoted @ (as people write by hand) are read too
        let text = bare("").replace("assignee: []", "assignee: [@carol]").replace("labels: []", "labels: [a, 'b c']");
        let r = parse("backlog/tasks/task-4 - T.md", &text).unwrap();
        assert_eq!(r.assignee.as_deref(), Some("@carol"));
        assert_eq!(r.labels, vec!["a", "b c"]);
    }

    #[test]
    fn backlog_yaml_quoting_follows_js_yaml() {
        assert_eq!(yaml_string("Set up database"), "Set up database");
        assert_eq!(yaml_string("@alice"), "'@alice'");
        assert_eq!(yaml_string("https://example.com/ref"), "'https://example.com/ref'");
        assert_eq!(yaml_string("src/db.ts"), "src/db.ts");
        assert_eq!(yaml_string("2026-12-01"), "'2026-12-01'");
        assert_eq!(yaml_string("2026-11-26 21:56"), "'2026-11-26 21:56'");
        assert_eq!(yaml_string("it's"), "it's");
        assert_eq!(yaml_string("'quoted'"), "'''quoted'''");
        assert_eq!(yaml_string("123"), "'123'");
        assert_eq!(yaml_string("1.5"), "'1.5'");
        assert_eq!(yaml_string("true"), "'true'");
        assert_eq!(yaml_string("yes"), "'yes'");
        assert_eq!(yaml_string("null"), "'null'");
        assert_eq!(yaml_string("a #b"), "'a #b'");
        assert_eq!(yaml_string("a#b"), "a#b");
        assert_eq!(yaml_string("- x"), "'- x'");
        assert_eq!(yaml_string(""), "''");
        assert_eq!(yaml_string("trailing "), "'trailing '");
        assert_eq!(yaml_string("two\nlines"), "|-\n  two\n  lines");
        let long = "word ".repeat(20) + "end";
        assert_eq!(
            yaml_string(&long),
            ">-\n  word word word word word word word word word word word word word word word\n  word word word word word end"
        );
        for s in ["two\nlines", long.as_str(), "it's", "'quoted'", "a: b", "x\\\"y"] {
            let text = bare("").replace("title: T", &format!("title: {}", yaml_string(s)));
            let r = parse("backlog/tasks/task-4 - T.md", &text).unwrap_or_else(|e| panic!("{s}: {e}"));
            assert_eq!(r.title, s);
        }
    }

    #[test]
    fn backlog_slug_and_path() {
        assert_eq!(
            title_slug("Fix: the `foo` bar/baz & qux? (v2) — ünïcode"),
            "Fix-the-`foo`-bar-baz-qux-v2-—-ünïcode"
        );
        assert_eq!(title_slug("Add paste-as-markdown support (Web UI)!"), "Add-paste-as-markdown-support-Web-UI");
        let mut r = Record { id: "TASK-12".into(), title: "Done one".into(), ..Default::default() };
        assert_eq!(file_path(&r), "backlog/tasks/task-12 - Done-one.md");
        r.status = Status::Completed;
        r.archived = true;
        assert_eq!(file_path(&r), "backlog/completed/task-12 - Done-one.md");
        r.status = Status::Pending;
        assert_eq!(file_path(&r), "backlog/archive/tasks/task-12 - Done-one.md");
        // ids and titles from anywhere stay one file name in the folder
        let r = Record { id: "../../../../.claude/X".into(), title: "a\u{1b}[2Jb/c\n".into(), ..Default::default() };
        assert_eq!(file_path(&r), "backlog/tasks/%2E.%2F..%2F..%2F..%2F.claude%2Fx - a2Jb-c.md");
        let mut r = Record { id: "TASK-1".into(), title: "t".into(), ..Default::default() };
        r.extra.insert("file".into(), Value::String("task-1 - /../../x.md".into()));
        assert_eq!(file_path(&r), "backlog/tasks/task-1 - t.md");
        r.extra.insert("file".into(), Value::String("task-1 - Kept name.md".into()));
        assert_eq!(file_path(&r), "backlog/tasks/task-1 - Kept name.md");
    }

    #[test]
    fn backlog_reads_back_every_escape_it_writes() {
        let title: String = ('\0'..='\u{A0}').chain(['\u{2028}', '\u{2029}', 'é']).collect();
        let r =
            Record { id: "TASK-1".into(), title: title.clone(), created_us: Some(NOV26_2156), ..Default::default() };
        let (path, text) = render(&r);
        assert_eq!(parse(&path, &text).unwrap().title, title);
    }

    #[test]
    fn backlog_renders_a_new_record() {
        let r = Record {
            id: "TASK-3".into(),
            title: "Agent onboarding: checklist".into(),
            status: Status::InProgress,
            assignee: Some("@alice".into()),
            created_us: Some(NOV26_2156),
            due_us: parse_date("2026-12-01"),
            priority: Some("high".into()),
            description: Some("Line one\nLine two\n".into()),
            checklist: vec![ChecklistItem { kind: ChecklistKind::Done, text: "Tests pass".into(), checked: false }],
            ..Default::default()
        };
        let (path, text) = render(&r);
        assert_eq!(path, "backlog/tasks/task-3 - Agent-onboarding-checklist.md");
        assert_eq!(
            text,
            "---\nid: TASK-3\ntitle: 'Agent onboarding: checklist'\nstatus: In Progress\nassignee:\n  - '@alice'\n\
             created_date: '2026-11-26 21:56'\ndue_date: '2026-12-01'\nlabels: []\ndependencies: []\npriority: high\n---\n\n\
             ## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\nLine one\nLine two\n<!-- SECTION:DESCRIPTION:END -->\n\n\
             ## Definition of Done\n<!-- DOD:BEGIN -->\n- [ ] #1 Tests pass\n<!-- DOD:END -->\n"
        );
        assert_eq!(parse(&path, &text).unwrap().due_us, r.due_us);
    }

    #[test]
    fn backlog_reads_legacy_sections() {
        let text = format!(
            "{}## Description\n\nOld text\n\n## Acceptance Criteria\n\n- [ ] one\n- [x] two\n",
            bare("").trim_end_matches('\n').to_string() + "\n\n"
        );
        let r = parse("backlog/tasks/task-4 - T.md", &text).unwrap();
        assert_eq!(r.description.as_deref(), Some("Old text"));
        assert_eq!(r.checklist.len(), 2);
        assert!(r.checklist[1].checked);
        assert_eq!(r.checklist[0].text, "one");
    }

    fn error_of(text: &str) -> FileError {
        parse("backlog/tasks/task-4 - T.md", text).unwrap_err()
    }

    #[test]
    fn backlog_bad_files_say_where_and_what() {
        let e = error_of("id: TASK-1\n");
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("starts with `---`"), "{e}");

        let e = error_of("---\nid: TASK-4\ntitle: T\nstatus: To Do\n");
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("not closed"), "{e}");

        let e = error_of(&bare("").replace("'2026-11-26 21:56'", "'26/11/2026'"));
        assert_eq!((e.line, e.field.as_deref()), (Some(6), Some("created_date")));
        assert!(e.message.contains("YYYY-MM-DD HH:mm"), "{e}");
        assert_eq!(
            e.to_string(),
            "backlog/tasks/task-4 - T.md, line 6, created_date: `26/11/2026` is not a date: write it as \
             'YYYY-MM-DD HH:mm' (UTC), e.g. '2026-11-26 21:56'"
        );

        let e = error_of(&bare("").replace("status: To Do", "status:\n  - To Do"));
        assert_eq!((e.line, e.field.as_deref()), (Some(4), Some("status")));
        assert!(e.message.contains("status is a list"), "{e}");

        let e = error_of(&bare("due_date: tomorrow\n"));
        assert_eq!((e.line, e.field.as_deref()), (Some(9), Some("due_date")));

        let e = error_of(&bare("ordinal: many\n"));
        assert_eq!(e.field.as_deref(), Some("ordinal"));

        let e = error_of(&bare("").replace("title: T", "title: 'T"));
        assert_eq!((e.line, e.field.as_deref()), (Some(3), Some("title")));
        assert!(e.message.contains("not closed"), "{e}");

        let e = error_of(&bare("").replace("status: To Do\n", ""));
        assert_eq!(e.field.as_deref(), Some("status"));

        let e = error_of(&bare("").replace("id: TASK-4\n", ""));
        assert_eq!(e.field.as_deref(), Some("id"));

        let e =
            error_of(&format!("{}\n\n## Description\n\n<!-- SECTION:DESCRIPTION:BEGIN -->\nx\n", bare("").trim_end()));
        assert!(e.message.contains("<!-- SECTION:DESCRIPTION:END -->"), "{e}");
        assert_eq!(e.line, Some(13));

        let e = error_of(&format!(
            "{}\n\n## Comments\n\n<!-- COMMENTS:BEGIN -->\nauthor: @bob\ncreated: yesterday\n---\nx\n---\n<!-- COMMENTS:END -->\n",
            bare("").trim_end()
        ));
        assert_eq!(e.line, Some(15));
        assert!(e.message.contains("`yesterday`"), "{e}");

        let e = error_of(&format!(
            "{}\n\n## Comments\n\n<!-- COMMENTS:BEGIN -->\nauthor: @bob\n---\nx\n<!-- COMMENTS:END -->\n",
            bare("").trim_end()
        ));
        assert!(e.message.contains("no closing `---`"), "{e}");
    }
}
