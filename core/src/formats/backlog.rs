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

// ---------------------------------------------------------------------------------------
// the YAML subset

#[derive(Clone, Debug, PartialEq)]
enum Yaml {
    Null,
    /// a scalar, and whether it was quoted (a quoted scalar is always a string)
    Str(String, bool),
    List(Vec<String>),
}

struct Entry {
    key: String,
    value: Yaml,
    /// the line of the key, from 1 in the file
    line: usize,
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A plain scalar without a trailing ` # comment`.
fn strip_comment(s: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in s.char_indices() {
        if c == '#' && prev_space {
            return s[..i].trim_end();
        }
        prev_space = c == ' ' || c == '\t';
    }
    s.trim_end()
}

/// Reads a quoted scalar starting at `s[0]` (`'` or `"`); returns the text and the rest.
fn read_quoted(s: &str) -> Result<(String, &str), String> {
    let quote = s.chars().next().unwrap_or('\'');
    let mut out = String::new();
    let mut chars = s[1..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == quote {
            if quote == '\'' && chars.peek().map(|&(_, n)| n) == Some('\'') {
                chars.next();
                out.push('\'');
                continue;
            }
            return Ok((out, &s[1 + i + 1..]));
        }
        if quote == '"' && c == '\\' {
            let (_, e) = chars.next().ok_or("a double-quoted string ends in a backslash")?;
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\\' => out.push('\\'),
                '"' => out.push('"'),
                '/' => out.push('/'),
                ' ' => out.push(' '),
                '\t' => out.push('\t'),
                'a' => out.push('\x07'),
                'b' => out.push('\x08'),
                'v' => out.push('\x0B'),
                'f' => out.push('\x0C'),
                'e' => out.push('\x1B'),
                'N' => out.push('\u{85}'),
                '_' => out.push('\u{A0}'),
                'L' => out.push('\u{2028}'),
                'P' => out.push('\u{2029}'),
                'u' | 'x' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let mut hex = String::new();
                    for _ in 0..n {
                        hex.push(chars.next().ok_or("a \\u escape is cut short")?.1);
                    }
                    let code = u32::from_str_radix(&hex, 16).map_err(|_| format!("\\{e}{hex} is not a hex escape"))?;
                    out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
                }
                other => return Err(format!("\\{other} is not an escape YAML knows")),
            }
            continue;
        }
        out.push(c);
    }
    Err(format!("the string opened with {quote} is not closed on its line"))
}

/// One scalar as written after `key: ` or `- `.
fn read_scalar(s: &str) -> Result<Yaml, String> {
    let s = s.trim();
    if s.starts_with('\'') || s.starts_with('"') {
        let (text, rest) = read_quoted(s)?;
        let rest = strip_comment(rest.trim());
        if !rest.is_empty() {
            return Err(format!("`{rest}` follows a quoted string"));
        }
        return Ok(Yaml::Str(text, true));
    }
    let plain = strip_comment(s);
    match plain {
        "" | "~" | "null" | "Null" | "NULL" => Ok(Yaml::Null),
        _ => Ok(Yaml::Str(plain.to_string(), false)),
    }
}

/// A flow list `[a, 'b', "c"]` on one line.
fn read_flow_list(s: &str) -> Result<Vec<String>, String> {
    let inner = s.trim();
    let inner = inner.strip_prefix('[').ok_or("a flow list starts with [")?;
    let inner = strip_comment(inner);
    let inner = inner.strip_suffix(']').ok_or("the list opened with [ is not closed on its line")?;
    let mut items = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        if rest.starts_with('\'') || rest.starts_with('"') {
            let (text, after) = read_quoted(rest)?;
            items.push(text);
            rest = after.trim_start();
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            items.push(rest[..end].trim().to_string());
            rest = &rest[end..];
        }
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(',') {
            rest = after.trim_start();
        } else if !rest.is_empty() {
            return Err(format!("`{rest}` in a flow list: separate the items with commas"));
        }
    }
    Ok(items)
}

/// A block scalar's lines (`|`, `|-`, `>`, `>-`), already taken off their indentation.
fn block_scalar(header: &str, lines: &[&str]) -> String {
    let folded = header.starts_with('>');
    let chomp = if header.contains('-') {
        '-'
    } else if header.contains('+') {
        '+'
    } else {
        ' '
    };
    let mut text = String::new();
    if folded {
        // a line break between two non-empty, non-indented lines folds into a space
        let mut prev_text = false;
        let mut pending_breaks = 0;
        for (i, line) in lines.iter().enumerate() {
            if line.is_empty() {
                pending_breaks += 1;
                continue;
            }
            let more = line.starts_with(' ');
            if i > 0 {
                if pending_breaks == 0 && prev_text && !more {
                    text.push(' ');
                } else {
                    let n = if prev_text && !more { pending_breaks } else { pending_breaks + 1 };
                    text.push_str(&"\n".repeat(n));
                }
            } else {
                text.push_str(&"\n".repeat(pending_breaks));
            }
            pending_breaks = 0;
            text.push_str(line);
            prev_text = !more;
        }
        text.push_str(&"\n".repeat(pending_breaks.min(1)));
        if pending_breaks == 0 {
            text.push('\n');
        }
    } else {
        text = lines.join("\n");
        text.push('\n');
    }
    match chomp {
        '-' => text.trim_end_matches('\n').to_string(),
        '+' => text,
        _ => format!("{}\n", text.trim_end_matches('\n')),
    }
}

/// Reads the front matter (its lines; `first_line` is the file line of the first) into
/// its entries, in order.
fn read_front_matter(lines: &[&str], first_line: usize, file: &str) -> Result<Vec<Entry>, FileError> {
    let err = |i: usize, field: Option<&str>, message: String| FileError {
        file: file.to_string(),
        line: Some(first_line + i),
        field: field.map(str::to_string),
        message,
    };
    let mut entries = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end_matches('\r');
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            i += 1;
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') {
            return Err(err(
                i,
                None,
                format!(
                    "`{}` is indented but belongs to no key: write `key: value` at the start of the line",
                    line.trim()
                ),
            ));
        }
        let Some(colon) = line.find(": ").or_else(|| line.strip_suffix(':').map(|k| k.len())) else {
            return Err(err(i, None, format!("`{line}` is not `key: value`")));
        };
        let key = line[..colon].trim().to_string();
        let raw = line[colon + 1..].trim();
        let key_line = i;
        i += 1;
        let value = if raw.starts_with('[') {
            Yaml::List(read_flow_list(raw).map_err(|m| err(key_line, Some(&key), m))?)
        } else if raw.starts_with('|') || raw.starts_with('>') {
            let (value, next) = read_block_scalar(lines, i, raw);
            i = next;
            value
        } else if raw.is_empty() || raw.starts_with('#') {
            let (value, next) = read_block_list(lines, i, &key, &err)?;
            i = next;
            value
        } else {
            read_scalar(raw).map_err(|m| err(key_line, Some(&key), m))?
        };
        entries.push(Entry { key, value, line: first_line + key_line });
    }
    Ok(entries)
}

/// A block scalar (`|`, `>`, with `raw` its header) whose lines start at `lines[start]`:
/// its value, and the index of the line after it.
fn read_block_scalar(lines: &[&str], start: usize, raw: &str) -> (Yaml, usize) {
    let mut i = start;
    while i < lines.len() && (lines[i].trim().is_empty() || indent_of(lines[i]) > 0) {
        i += 1;
    }
    // trailing empty lines belong to the block only when it is kept (`+`)
    let mut end = i;
    while end > start && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let block: Vec<&str> = lines[start..end].iter().map(|l| l.trim_end_matches('\r')).collect();
    let indent = block.iter().filter(|l| !l.trim().is_empty()).map(|l| indent_of(l)).min().unwrap_or(0);
    let body: Vec<&str> = block.iter().map(|l| if l.len() >= indent { &l[indent..] } else { "" }).collect();
    (Yaml::Str(block_scalar(raw, &body), true), i)
}

/// The block list that may follow `key:` from `lines[start]`, at the key's indentation or
/// deeper (none: null), and the index of the line after it. `err`: the error at a line.
fn read_block_list(
    lines: &[&str],
    start: usize,
    key: &str,
    err: &dyn Fn(usize, Option<&str>, String) -> FileError,
) -> Result<(Yaml, usize), FileError> {
    let mut items = Vec::new();
    let mut i = start;
    while i < lines.len() {
        let l = lines[i].trim_end_matches('\r');
        let t = l.trim_start();
        if t.is_empty() {
            i += 1;
            continue;
        }
        if t == "-" || t.starts_with("- ") {
            match read_scalar(&t[1..]).map_err(|m| err(i, Some(key), m))? {
                Yaml::Str(s, _) => items.push(s),
                Yaml::Null => items.push(String::new()),
                Yaml::List(_) => {}
            }
            i += 1;
        } else if indent_of(l) > 0 {
            return Err(err(i, Some(key), format!("`{t}` under `{key}:` is not a list item: write `  - {t}`")));
        } else {
            break;
        }
    }
    Ok((if items.is_empty() { Yaml::Null } else { Yaml::List(items) }, i))
}

/// Whether js-yaml 3 (`safeDump`) would read a plain scalar as something other than a
/// string: null, a boolean, an integer, a float, a date or timestamp, the merge key.
fn ambiguous(s: &str) -> bool {
    const WORDS: [&str; 11] = ["~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "<<"];
    if WORDS.contains(&s) {
        return true;
    }
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    // integers: 0b…, 0x…, octal, decimal (underscores allowed, not last)
    let int = if let Some(b) = body.strip_prefix("0b") {
        !b.is_empty() && b.chars().all(|c| c == '0' || c == '1' || c == '_')
    } else if let Some(x) = body.strip_prefix("0x") {
        !x.is_empty() && x.chars().all(|c| c.is_ascii_hexdigit() || c == '_')
    } else {
        body.chars().any(|c| c.is_ascii_digit()) && body.chars().all(|c| c.is_ascii_digit() || c == '_')
    };
    if int && !s.ends_with('_') {
        return true;
    }
    // floats: [-+](0|[1-9][0-9_]*)(.[0-9_]*)?([eE][-+]?[0-9]+)?, .5, .inf, .nan
    if matches!(body, ".inf" | ".Inf" | ".INF") || matches!(s, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let float = {
        let (mant, exp) = match body.find(['e', 'E']) {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let exp_ok = exp.is_none_or(|e| {
            let e = e.strip_prefix(['-', '+']).unwrap_or(e);
            !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit())
        });
        let (int_part, frac) = match mant.find('.') {
            Some(i) => (&mant[..i], Some(&mant[i + 1..])),
            None => (mant, None),
        };
        let frac_ok = frac.is_none_or(|f| f.bytes().all(|b| b.is_ascii_digit() || b == b'_'));
        let int_ok = if int_part.is_empty() {
            // `.5`: only without a sign, with digits after the dot
            body.len() == s.len() && frac.is_some_and(|f| !f.is_empty())
        } else {
            int_part == "0"
                || (int_part.as_bytes()[0] != b'0'
                    && int_part.bytes().next().is_some_and(|b| b.is_ascii_digit())
                    && int_part.bytes().all(|b| b.is_ascii_digit() || b == b'_'))
        };
        exp_ok && frac_ok && int_ok
    };
    if float && !s.ends_with('_') {
        return true;
    }
    parse_date(s).is_some() || looks_like_date(s)
}

/// `YYYY-MM-DD` by shape (js-yaml's date pattern does not check the calendar).
fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

fn printable(c: char) -> bool {
    let c = c as u32;
    (0x20..=0x7E).contains(&c)
        || (0xA1..=0xD7FF).contains(&c) && c != 0x2028 && c != 0x2029
        || (0xE000..=0xFFFD).contains(&c) && c != 0xFEFF
        || (0x10000..=0x10FFFF).contains(&c)
        || c == 0x85
}

fn plain_first(c: char) -> bool {
    printable(c) && c != ' ' && c != '\t' && !"-?:,[]{}#&*!|=>'\"%@`".contains(c)
}

fn plain_inner(c: char, prev: Option<char>) -> bool {
    printable(c)
        && !",[]{}:".contains(c)
        && (c != '#' || prev.is_some_and(|p| printable(p) && p != ' ' && p != '\t' && p != '\r' && p != '\n'))
}

/// js-yaml 3's `foldLine`: breaks a line at spaces so the parts keep within `width`.
fn fold_line(line: &[u16], width: usize) -> Vec<u16> {
    if line.is_empty() || line[0] == b' ' as u16 {
        return line.to_vec();
    }
    let (mut start, mut curr) = (0usize, 0usize);
    let mut result: Vec<u16> = Vec::new();
    let sp = b' ' as u16;
    for next in 0..line.len().saturating_sub(1) {
        if !(line[next] == sp && line[next + 1] != sp) {
            continue;
        }
        if next - start > width {
            let end = if curr > start { curr } else { next };
            result.push(b'\n' as u16);
            result.extend_from_slice(&line[start..end]);
            start = end + 1;
        }
        curr = next;
    }
    result.push(b'\n' as u16);
    if line.len() - start > width && curr > start {
        result.extend_from_slice(&line[start..curr]);
        result.push(b'\n' as u16);
        result.extend_from_slice(&line[curr + 1..]);
    } else {
        result.extend_from_slice(&line[start..]);
    }
    result[1..].to_vec()
}

/// One string as js-yaml 3's `safeDump` writes it as the value of a top-level key (or an
/// item of a top-level key's list: the same width).
fn yaml_string(s: &str) -> String {
    if s.is_empty() {
        return "''".to_string();
    }
    const OLD_BOOLEANS: [&str; 16] =
        ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF"];
    if OLD_BOOLEANS.contains(&s) {
        return format!("'{s}'");
    }
    let units: Vec<u16> = s.encode_utf16().collect();
    let width = 78; // lineWidth 80 less the indentation of a top-level value
    let chars: Vec<char> = s.chars().collect();
    let last = *chars.last().unwrap_or(&' ');
    let mut plain = plain_first(chars[0]) && last != ' ' && last != '\t';
    let mut has_break = false;
    let mut foldable = false;
    let mut prev_break: isize = -1;
    let mut prev: Option<char> = None;
    let mut unit_index: isize = 0;
    for &c in &chars {
        if c == '\n' {
            has_break = true;
            foldable = foldable
                || (unit_index - prev_break - 1 > width as isize && units[(prev_break + 1) as usize] != b' ' as u16);
            prev_break = unit_index;
        } else if !printable(c) {
            return double_quoted(s);
        }
        plain = plain && plain_inner(c, prev);
        prev = Some(c);
        unit_index += c.len_utf16() as isize;
    }
    foldable = foldable
        || (unit_index - prev_break - 1 > width as isize
            && units.get((prev_break + 1) as usize).is_some_and(|&u| u != b' ' as u16));
    if !has_break && !foldable {
        return if plain && !ambiguous(s) { s.to_string() } else { format!("'{}'", s.replace('\'', "''")) };
    }
    // block scalars: `|` (literal) or `>` (folded), with js-yaml's header and indentation
    let indent_indicator = s.trim_start_matches('\n').starts_with(' ');
    let clip_keep = s.ends_with('\n');
    let keep = clip_keep && (s.ends_with("\n\n") || s == "\n");
    let chomp = if keep {
        "+"
    } else if clip_keep {
        ""
    } else {
        "-"
    };
    let header = format!("{}{chomp}\n", if indent_indicator { "2" } else { "" });
    let body: String = if foldable { String::from_utf16_lossy(&fold_string(&units, width)) } else { s.to_string() };
    let mut indented = String::new();
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            indented.push('\n');
        }
        if !line.is_empty() {
            indented.push_str("  ");
            indented.push_str(line);
        }
    }
    let indented = indented.strip_suffix('\n').unwrap_or(&indented).to_string();
    format!("{}{header}{indented}", if foldable { ">" } else { "|" })
}

/// js-yaml 3's `foldString` (UTF-16 units, as JavaScript counts).
fn fold_string(s: &[u16], width: usize) -> Vec<u16> {
    let nl = b'\n' as u16;
    let sp = b' ' as u16;
    let first_end = s.iter().position(|&u| u == nl).unwrap_or(s.len());
    let mut result = fold_line(&s[..first_end], width);
    let mut prev_more = s.first().is_some_and(|&u| u == nl || u == sp);
    let mut i = first_end;
    while i < s.len() {
        let breaks_start = i;
        while i < s.len() && s[i] == nl {
            i += 1;
        }
        let breaks = &s[breaks_start..i];
        let line_start = i;
        while i < s.len() && s[i] != nl {
            i += 1;
        }
        let line = &s[line_start..i];
        let more = line.first() == Some(&sp);
        result.extend_from_slice(breaks);
        if !prev_more && !more && !line.is_empty() {
            result.push(nl);
        }
        result.extend(fold_line(line, width));
        prev_more = more;
    }
    result
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\0' => out.push_str("\\0"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0B' => out.push_str("\\v"),
            '\x0C' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\x1B' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{A0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if printable(c) => out.push(c),
            c if (c as u32) <= 0xFF => out.push_str(&format!("\\x{:02X}", c as u32)),
            c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn yaml_list(out: &mut String, key: &str, items: &[String]) {
    if items.is_empty() {
        out.push_str(&format!("{key}: []\n"));
        return;
    }
    out.push_str(&format!("{key}:\n"));
    for item in items {
        out.push_str(&format!("  - {}\n", yaml_string(item)));
    }
}

// ---------------------------------------------------------------------------------------
// the body

/// The text between `begin` and `end` markers, trimmed, with the line of `begin` (from 0
/// in `body`); an error when `begin` has no `end`.
fn between<'a>(body: &'a str, begin: &str, end: &str) -> Result<Option<(&'a str, usize)>, (usize, String)> {
    let Some(b) = body.find(begin) else { return Ok(None) };
    let line = body[..b].matches('\n').count();
    let after = &body[b + begin.len()..];
    let Some(e) = after.find(end) else {
        return Err((line, format!("{begin} has no {end}: close the section with {end} on its own line")));
    };
    let inner = &after[..e];
    let inner = inner.strip_prefix("\r\n").or_else(|| inner.strip_prefix('\n')).unwrap_or(inner);
    Ok(Some((inner.trim_end_matches(['\n', '\r']), line)))
}

/// The lines under `## <title>` (any of `titles`) up to the next `## ` heading, for files
/// written without markers.
fn legacy_section(body: &str, titles: &[&str]) -> Option<String> {
    let lines: Vec<&str> = body.lines().collect();
    let start = lines.iter().position(|l| {
        l.strip_prefix("## ").is_some_and(|t| titles.iter().any(|want| t.trim().eq_ignore_ascii_case(want)))
    })?;
    let rest: Vec<&str> = lines[start + 1..].iter().take_while(|l| !l.starts_with("## ")).copied().collect();
    let text = rest.join("\n").trim().to_string();
    Some(text)
}

fn section_text(body: &str, marker: &str, titles: &[&str]) -> Result<Option<String>, (usize, String)> {
    let begin = format!("<!-- SECTION:{marker}:BEGIN -->");
    let end = format!("<!-- SECTION:{marker}:END -->");
    match between(body, &begin, &end)? {
        Some((text, _)) => Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty())),
        None => Ok(legacy_section(body, titles).filter(|t| !t.is_empty())),
    }
}

/// `- [ ] #1 text` / `- [x] #2 text` (or without the `#n`, as legacy files have them).
fn checkbox(line: &str) -> Option<(bool, String)> {
    let t = line.trim();
    let (checked, rest) = if let Some(r) = t.strip_prefix("- [ ] ") {
        (false, r)
    } else if let Some(r) = t.strip_prefix("- [x] ").or_else(|| t.strip_prefix("- [X] ")) {
        (true, r)
    } else {
        return None;
    };
    let text = match rest.strip_prefix('#') {
        Some(r) => {
            let n = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            if n > 0 && r[n..].starts_with(' ') {
                &r[n + 1..]
            } else {
                rest
            }
        }
        None => rest,
    };
    Some((checked, text.to_string()))
}

fn checklist(
    body: &str,
    begin: &str,
    end: &str,
    titles: &[&str],
    kind: ChecklistKind,
) -> Result<Vec<ChecklistItem>, (usize, String)> {
    let text = match between(body, begin, end)? {
        Some((t, _)) => t.to_string(),
        None => match legacy_section(body, titles) {
            Some(t) => t,
            None => return Ok(Vec::new()),
        },
    };
    Ok(text.lines().filter_map(checkbox).map(|(checked, text)| ChecklistItem { kind, text, checked }).collect())
}

fn comments(body: &str, file: &str, body_line: usize) -> Result<Vec<Comment>, FileError> {
    let err = |line: usize, message: String| FileError {
        file: file.to_string(),
        line: Some(body_line + line),
        field: Some("Comments".to_string()),
        message,
    };
    let (text, start) = match between(body, COMMENTS_BEGIN, COMMENTS_END) {
        Ok(Some((t, l))) => (t, l + 1),
        Ok(None) => return Ok(Vec::new()),
        Err((l, m)) => return Err(err(l, m)),
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim().is_empty() {
            i += 1;
            continue;
        }
        let (mut author, mut created) = (None, None);
        let block_line = i;
        while i < lines.len() && lines[i].trim() != "---" {
            let l = lines[i].trim();
            if let Some(a) = l.strip_prefix("author:") {
                author = Some(a.trim().to_string()).filter(|a| !a.is_empty());
            } else if let Some(c) = l.strip_prefix("created:") {
                let c = c.trim();
                created = Some(parse_date_time(c).or_else(|| parse_date(c)).ok_or_else(|| {
                    err(start + i, format!("the comment's created date `{c}` is not YYYY-MM-DD HH:mm (UTC)"))
                })?);
            } else if !l.is_empty() {
                return Err(err(
                    start + i,
                    format!("`{l}` before a comment's `---`: a comment is `author: …`, `created: …`, `---`, its text, `---`"),
                ));
            }
            i += 1;
        }
        if i >= lines.len() {
            return Err(err(start + block_line, "a comment has no `---` before its text".to_string()));
        }
        i += 1;
        let body_start = i;
        while i < lines.len() && lines[i].trim() != "---" {
            i += 1;
        }
        if i >= lines.len() {
            return Err(err(start + body_start, "a comment's text has no closing `---`".to_string()));
        }
        let text = lines[body_start..i].join("\n").trim().to_string();
        i += 1;
        // Comment.created_us has no "not said": a comment without `created:` is the epoch
        out.push(Comment { author, created_us: created.unwrap_or(0), body: text });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// parse

fn list_value(v: &Yaml) -> Vec<String> {
    match v {
        Yaml::List(items) => items.clone(),
        Yaml::Str(s, _) => vec![s.clone()],
        Yaml::Null => Vec::new(),
    }
}

fn folder_of_path(path: &str) -> &'static str {
    let p = path.replace('\\', "/");
    let dir = p.rsplit_once('/').map(|(d, _)| format!("/{d}/")).unwrap_or_default();
    if dir.ends_with("/archive/tasks/") {
        "archive/tasks"
    } else if dir.ends_with("/archive/drafts/") {
        "archive/drafts"
    } else if dir.ends_with("/completed/") {
        "completed"
    } else if dir.ends_with("/drafts/") {
        "drafts"
    } else {
        "tasks"
    }
}

/// An error about a task file: its line and field when one is to blame.
fn file_error(path: &str, line: Option<usize>, field: Option<&str>, message: String) -> FileError {
    FileError { file: path.to_string(), line, field: field.map(str::to_string), message }
}

/// A task file's front matter read, and its body: (entries, the line the body starts on,
/// the body).
fn split_front_matter(path: &str, text: &str) -> Result<(Vec<Entry>, usize, String), FileError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.first().map(|l| l.trim_end_matches('\r')) != Some("---") {
        return Err(file_error(
            path,
            Some(1),
            None,
            "a task file starts with `---`, then its front matter (id, title, status, …), then `---`".into(),
        ));
    }
    let Some(close) = lines.iter().skip(1).position(|l| l.trim_end_matches('\r') == "---") else {
        return Err(file_error(
            path,
            Some(1),
            None,
            "the front matter opened on line 1 is not closed: add a line `---` after its last key".into(),
        ));
    };
    let fm = &lines[1..1 + close];
    let entries = read_front_matter(fm, 2, path)?;
    let body_first_line = close + 3; // 1-based line of the first body line
    Ok((entries, body_first_line, lines[close + 2..].join("\n")))
}

/// A new record of a task file at `path`: archived in `completed/` and `archive/…/`, its
/// folder (when not `tasks`) and its file name kept in the extra.
fn record_at(path: &str, folder: &str) -> Record {
    let mut record = Record { archived: folder == "completed" || folder.starts_with("archive/"), ..Record::default() };
    if folder != "tasks" {
        record.extra.insert("folder".into(), Value::String(folder.into()));
    }
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    record.extra.insert("file".into(), Value::String(name.to_string()));
    record
}

/// One front matter entry being read into a record: the file, and the entry.
struct EntryAt<'a> {
    path: &'a str,
    key: &'a str,
    value: &'a Yaml,
    line: Option<usize>,
}

impl EntryAt<'_> {
    fn fail(&self, message: String) -> FileError {
        file_error(self.path, self.line, Some(self.key), message)
    }

    /// The entry's one value (None: empty); a list is refused, saying to write `what`.
    fn string(&self, what: &str) -> Result<Option<String>, FileError> {
        match self.value {
            Yaml::Str(s, _) => Ok(Some(s.clone())),
            Yaml::Null => Ok(None),
            Yaml::List(_) => Err(self.fail(format!("{} is a list: write {what}", self.key))),
        }
    }
}

/// Reads one front matter entry into the record; true: it was the status.
fn read_entry(record: &mut Record, e: &EntryAt) -> Result<bool, FileError> {
    match e.key {
        "id" => record.id = e.string("one id, `id: TASK-1`")?.unwrap_or_default(),
        "title" => record.title = e.string("one title, `title: Set up database`")?.unwrap_or_default(),
        "status" => {
            read_status(record, e.string("one status, `status: To Do`")?.unwrap_or_default());
            return Ok(true);
        }
        "assignee" => {
            let all = list_value(e.value);
            record.assignee = all.first().cloned();
            if all.len() > 1 {
                record.extra.insert("assignee".into(), Value::from(all));
            }
        }
        "created_date" | "updated_date" => read_time(record, e)?,
        "due_date" => read_due_date(record, e)?,
        "labels" => record.labels = list_value(e.value),
        "dependencies" => record.dependencies = list_value(e.value),
        "parent_task_id" => record.parent = e.string("one task id, `parent_task_id: TASK-1`")?,
        "priority" => read_priority(record, e)?,
        "type" => record.issue_type = e.string("one type, `type: feature`")?,
        "ordinal" => read_ordinal(record, e)?,
        _ => read_kept_entry(record, e)?,
    }
    Ok(false)
}

/// The status word: the store's status, the word kept when it is custom or the task was
/// archived unfinished.
fn read_status(record: &mut Record, word: String) {
    let (status, custom) = status_from_word(&word);
    record.status = status;
    if record.archived && !status.is_terminal() {
        // the store archives only finished todos: an archived task that was not
        // done was given up on, its word kept for the file
        record.status = Status::Canceled;
        record.extra.insert("archived_status".into(), Value::String(word));
    } else if custom && !word.trim().is_empty() {
        record.extra.insert("status".into(), Value::String(word));
    }
}

/// `created_date` or `updated_date`: a date and time (or a date alone).
fn read_time(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    let Some(s) = e.string("one date, `'2026-11-26 21:56'`")? else { return Ok(()) };
    let us = parse_date_time(s.trim()).or_else(|| parse_date(s.trim())).ok_or_else(|| {
        e.fail(format!("`{s}` is not a date: write it as 'YYYY-MM-DD HH:mm' (UTC), e.g. '2026-11-26 21:56'"))
    })?;
    if e.key == "created_date" {
        record.created_us = Some(us);
    } else {
        record.updated_us = Some(us);
    }
    Ok(())
}

/// `due_date`: a date (a time after it is allowed and dropped).
fn read_due_date(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    let Some(s) = e.string("one date, `'2026-12-01'`")? else { return Ok(()) };
    let s = s.trim();
    let day = if s.len() >= 10 { parse_date(&s[..10]) } else { None };
    let rest_ok = s.len() == 10 || parse_date_time(&s[..s.len().min(16)]).is_some();
    record.due_us = Some(
        day.filter(|_| rest_ok)
            .ok_or_else(|| e.fail(format!("`{s}` is not a due date: write it as 'YYYY-MM-DD', e.g. '2026-12-01'")))?,
    );
    Ok(())
}

/// `priority`: high, medium or low; another word is kept in the extra.
fn read_priority(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    if let Some(p) = e.string("one of high, medium, low")? {
        let lower = p.trim().to_lowercase();
        if matches!(lower.as_str(), "high" | "medium" | "low") {
            record.priority = Some(lower);
        } else if !lower.is_empty() {
            record.extra.insert("priority".into(), Value::String(p));
        }
    }
    Ok(())
}

/// `ordinal`: a number, kept in the extra.
fn read_ordinal(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    let Some(s) = e.string("one number, `ordinal: 1000`")? else { return Ok(()) };
    let n: Value = if let Ok(i) = s.trim().parse::<i64>() {
        Value::from(i)
    } else if let Some(f) = s.trim().parse::<f64>().ok().filter(|f| f.is_finite()) {
        Value::from(f)
    } else {
        return Err(e.fail(format!("`{s}` is not a number: write `ordinal: 1000`")));
    };
    record.extra.insert("ordinal".into(), n);
    Ok(())
}

/// An entry no field holds, kept in the extra (`modified_files` as `modifiedFiles`).
fn read_kept_entry(record: &mut Record, e: &EntryAt) -> Result<(), FileError> {
    match e.key {
        "milestone" | "reporter" | "onStatusChange" => {
            if let Some(s) = e.string("one value")? {
                record.extra.insert(e.key.to_string(), Value::String(s));
            }
        }
        "references" | "documentation" | "subtasks" | "modified_files" => {
            let items = list_value(e.value);
            let key = if e.key == "modified_files" { "modifiedFiles" } else { e.key };
            if !items.is_empty() {
                record.extra.insert(key.to_string(), Value::from(items));
            }
        }
        other => {
            let v = match e.value {
                Yaml::Null => Value::Null,
                Yaml::Str(s, _) => Value::String(s.clone()),
                Yaml::List(items) => Value::from(items.clone()),
            };
            record.extra.insert(other.to_string(), v);
        }
    }
    Ok(())
}

/// The body's sections, checklists and comments read into the record.
fn read_body(record: &mut Record, body: &str, path: &str, body_first_line: usize) -> Result<(), FileError> {
    let body_err = |(l, m): (usize, String)| file_error(path, Some(body_first_line + l), None, m);
    record.description = section_text(body, "DESCRIPTION", &["Description"]).map_err(body_err)?;
    record.plan =
        section_text(body, "PLAN", &["Implementation Plan", "Implementation Plan (Optional)"]).map_err(body_err)?;
    record.notes = section_text(
        body,
        "NOTES",
        &["Implementation Notes", "Implementation Notes (Optional)", "Notes", "Notes & Comments (Optional)"],
    )
    .map_err(body_err)?;
    record.outcome = section_text(body, "FINAL_SUMMARY", &["Final Summary"]).map_err(body_err)?;
    let mut items = checklist(
        body,
        AC_BEGIN,
        AC_END,
        &["Acceptance Criteria", "Acceptance Criteria (Optional)"],
        ChecklistKind::Acceptance,
    )
    .map_err(body_err)?;
    items.extend(checklist(body, DOD_BEGIN, DOD_END, &["Definition of Done"], ChecklistKind::Done).map_err(body_err)?);
    record.checklist = items;
    record.comments = comments(body, path, body_first_line)?;
    Ok(())
}

/// Reads one Backlog.md task file. `path` is relative to the project
/// (`backlog/tasks/task-1 - Title.md`); its folder decides: `drafts/` → status Draft
/// (deferred), `completed/` and `archive/…/` → archived.
pub fn parse(path: &str, text: &str) -> Result<Record, FileError> {
    let (entries, body_first_line, body) = split_front_matter(path, text)?;
    let folder = folder_of_path(path);
    let mut record = record_at(path, folder);
    let mut seen_status = false;
    for Entry { key, value, line } in &entries {
        let entry = EntryAt { path, key, value, line: Some(*line) };
        seen_status |= read_entry(&mut record, &entry)?;
    }
    if record.id.trim().is_empty() {
        return Err(file_error(
            path,
            Some(2),
            Some("id"),
            "the front matter has no id: add `id: TASK-1` (the id in the file name)".into(),
        ));
    }
    if folder.ends_with("drafts") {
        record.status = Status::Deferred;
        record.extra.remove("status");
    } else if !seen_status {
        return Err(file_error(
            path,
            Some(2),
            Some("status"),
            "the front matter has no status: add `status: To Do`".into(),
        ));
    }
    read_body(&mut record, &body, path, body_first_line)?;
    Ok(record)
}

// ---------------------------------------------------------------------------------------
// render

fn extra_str<'a>(record: &'a Record, key: &str) -> Option<&'a str> {
    record.extra.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn extra_list(record: &Record, key: &str) -> Vec<String> {
    match record.extra.get(key) {
        Some(Value::Array(items)) => {
            items.iter().map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())).collect()
        }
        Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}

/// The assignees of a record: the list in `extra["assignee"]` while it still starts with
/// `assignee`, else `assignee` alone.
pub fn assignees(record: &Record) -> Vec<String> {
    let kept = extra_list(record, "assignee");
    match &record.assignee {
        Some(a) if kept.first() == Some(a) => kept,
        Some(a) => vec![a.clone()],
        None => Vec::new(),
    }
}

/// The ordinal of a record (`extra["ordinal"]`), as Backlog.md prints it.
pub fn ordinal_text(record: &Record) -> Option<String> {
    match record.extra.get("ordinal")? {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

fn section_block(title: &str, marker: &str, text: &str) -> Option<String> {
    let text = text.replace("\r\n", "\n");
    let text = text.trim_end();
    if text.trim().is_empty() {
        return None;
    }
    Some(format!("## {title}\n\n<!-- SECTION:{marker}:BEGIN -->\n{text}\n<!-- SECTION:{marker}:END -->"))
}

fn checklist_block(record: &Record, kind: ChecklistKind, title: &str, begin: &str, end: &str) -> Option<String> {
    let items: Vec<&ChecklistItem> = record.checklist.iter().filter(|i| i.kind == kind).collect();
    if items.is_empty() {
        return None;
    }
    let mut lines = vec![format!("## {title}"), begin.to_string()];
    for (n, item) in items.iter().enumerate() {
        lines.push(format!("- [{}] #{} {}", if item.checked { "x" } else { " " }, n + 1, item.text));
    }
    lines.push(end.to_string());
    Some(lines.join("\n"))
}

fn comments_block(record: &Record) -> Option<String> {
    let comments: Vec<&Comment> = record.comments.iter().filter(|c| !c.body.trim().is_empty()).collect();
    if comments.is_empty() {
        return None;
    }
    let mut lines = vec!["## Comments".to_string(), String::new(), COMMENTS_BEGIN.to_string()];
    for (i, c) in comments.iter().enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        if let Some(a) = c.author.as_deref().map(str::trim).filter(|a| !a.is_empty()) {
            lines.push(format!("author: {a}"));
        }
        if c.created_us != 0 {
            lines.push(format!("created: {}", format_date_time(c.created_us)));
        }
        lines.push("---".into());
        lines.push(c.body.replace("\r\n", "\n").trim().to_string());
        lines.push("---".into());
    }
    lines.push(COMMENTS_END.to_string());
    Some(lines.join("\n"))
}

/// A record as Backlog.md writes its file: the path relative to the project
/// (`backlog/<folder>/<lowercase id> - <Title-slug>.md`) and the text.
pub fn render(record: &Record) -> (String, String) {
    let mut fm = String::new();
    fm.push_str(&format!("id: {}\n", yaml_string(&record.id)));
    fm.push_str(&format!("title: {}\n", yaml_string(&record.title)));
    fm.push_str(&format!("status: {}\n", yaml_string(&status_word(record))));
    yaml_list(&mut fm, "assignee", &assignees(record));
    if let Some(r) = extra_str(record, "reporter") {
        fm.push_str(&format!("reporter: {}\n", yaml_string(r)));
    }
    // created_date is always written by Backlog.md; a record without one gets ''
    let created = record.created_us.map(format_date_time).unwrap_or_default();
    fm.push_str(&format!("created_date: {}\n", yaml_string(&created)));
    if let Some(u) = record.updated_us {
        fm.push_str(&format!("updated_date: {}\n", yaml_string(&format_date_time(u))));
    }
    if let Some(d) = record.due_us {
        fm.push_str(&format!("due_date: {}\n", yaml_string(&format_date(d))));
    }
    yaml_list(&mut fm, "labels", &record.labels);
    if let Some(m) = extra_str(record, "milestone") {
        fm.push_str(&format!("milestone: {}\n", yaml_string(m)));
    }
    yaml_list(&mut fm, "dependencies", &record.dependencies);
    for (key, extra_key) in
        [("references", "references"), ("documentation", "documentation"), ("modified_files", "modifiedFiles")]
    {
        let items = extra_list(record, extra_key);
        if !items.is_empty() {
            yaml_list(&mut fm, key, &items);
        }
    }
    if let Some(p) = record.parent.as_deref().filter(|p| !p.is_empty()) {
        fm.push_str(&format!("parent_task_id: {}\n", yaml_string(p)));
    }
    let subtasks = extra_list(record, "subtasks");
    if !subtasks.is_empty() {
        yaml_list(&mut fm, "subtasks", &subtasks);
    }
    if let Some(p) = record.priority.as_deref().or_else(|| extra_str(record, "priority")) {
        fm.push_str(&format!("priority: {}\n", yaml_string(p)));
    }
    if let Some(t) = record.issue_type.as_deref().filter(|t| !t.is_empty()) {
        fm.push_str(&format!("type: {}\n", yaml_string(t)));
    }
    if let Some(o) = ordinal_text(record) {
        fm.push_str(&format!("ordinal: {o}\n"));
    }
    if let Some(s) = extra_str(record, "onStatusChange") {
        fm.push_str(&format!("onStatusChange: {}\n", yaml_string(s)));
    }

    let blocks: Vec<String> = [
        record.description.as_deref().and_then(|d| section_block("Description", "DESCRIPTION", d)),
        checklist_block(record, ChecklistKind::Acceptance, "Acceptance Criteria", AC_BEGIN, AC_END),
        checklist_block(record, ChecklistKind::Done, "Definition of Done", DOD_BEGIN, DOD_END),
        record.plan.as_deref().and_then(|p| section_block("Implementation Plan", "PLAN", p)),
        record.notes.as_deref().and_then(|n| section_block("Implementation Notes", "NOTES", n)),
        comments_block(record),
        record.outcome.as_deref().and_then(|o| section_block("Final Summary", "FINAL_SUMMARY", o)),
    ]
    .into_iter()
    .flatten()
    .collect();
    let body = blocks.join("\n\n");
    // gray-matter's `---\n<yaml>---\n<body>\n`, then serializeTask's blank line after the
    // front matter: an empty body leaves `---\n\n\n`
    let text = format!("---\n{fm}---\n\n{body}\n");
    (file_path(record), text)
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! fixture {
        ($path:literal, $file:literal) => {
            ($path, include_str!(concat!("fixtures/backlog/", $file)))
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
