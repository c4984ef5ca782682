//! Markdown checklists. Roo Code's: one todo a line, `[ ]` pending, `[x]` completed, `[-]`
//! or `[~]` in progress, an optional leading `- `. Goose's and Continue's: a whole document,
//! its checkbox lines the todos, everything else notes, kept so that the document reads back
//! as it was written while its todos change through any dialect. Pure: tested without a
//! database.

use serde_json::{json, Value};

use crate::status::Status;

/// The status a checkbox's mark means (the text between the brackets, spaces allowed
/// around it); None: not a checkbox.
fn mark_status(mark: &str) -> Option<Status> {
    let mut marks = mark.chars().filter(|c| !c.is_whitespace());
    match (marks.next(), marks.next()) {
        (None, None) => Some(Status::Pending),
        (Some('x' | 'X'), None) => Some(Status::Completed),
        (Some('-' | '~'), None) => Some(Status::InProgress),
        _ => None,
    }
}

/// The mark a status is written with when the document's own mark no longer says it.
fn mark_of(s: Status) -> &'static str {
    match s.three_state() {
        Status::Completed => "x",
        Status::InProgress => "-",
        _ => " ",
    }
}

/// One checkbox line of a document, in the pieces that let it be written again exactly:
/// `lead` (indent, bullet, the space after it, `[`), `mark`, `gap` (`]` and the spaces after
/// it), `content`, `end` (trailing spaces and the line break).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckboxLine {
    pub lead: String,
    pub mark: String,
    pub gap: String,
    pub content: String,
    pub end: String,
}

impl CheckboxLine {
    pub fn status(&self) -> Status {
        mark_status(&self.mark).unwrap_or(Status::Pending)
    }
}

/// A line of a checklist document: a checkbox, or any other text (kept with its break).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocumentLine {
    Checkbox(CheckboxLine),
    Text(String),
}

/// Splits a document into its lines: a checkbox line is, after any indent, an optional
/// bullet (`-`, `*`, `+` or `1.`) and spaces, `[<mark>]`, at least one space and content that
/// is not blank. Concatenating the lines gives the document back, byte for byte.
pub fn parse_document(md: &str) -> Vec<DocumentLine> {
    md.split_inclusive('\n')
        .map(|line| checkbox(line).map_or_else(|| DocumentLine::Text(line.to_string()), DocumentLine::Checkbox))
        .collect()
}

fn checkbox(line: &str) -> Option<CheckboxLine> {
    let body = line.trim_end();
    let end = &line[body.len()..];
    let indent = body.len() - body.trim_start().len();
    let mut rest = &body[indent..];
    let bullet = if let Some(r) = rest.strip_prefix(['-', '*', '+']) {
        r
    } else {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match rest[digits..].strip_prefix(['.', ')']) {
            Some(r) if digits > 0 => r,
            _ => rest,
        }
    };
    if bullet.len() != rest.len() {
        if !bullet.starts_with(char::is_whitespace) {
            return None;
        }
        rest = bullet.trim_start();
    }
    let inner = rest.strip_prefix('[')?;
    let close = inner.find(']')?;
    let mark = &inner[..close];
    mark_status(mark)?;
    let after = &inner[close + 1..];
    let content = after.trim_start();
    if content.is_empty() || content.len() == after.len() {
        return None;
    }
    let lead_len = body.len() - rest.len() + 1;
    Some(CheckboxLine {
        lead: body[..lead_len].to_string(),
        mark: mark.to_string(),
        gap: format!("]{}", &after[..after.len() - content.len()]),
        content: content.to_string(),
        end: end.to_string(),
    })
}

/// A document as it is stored, each checkbox line tied to its todo: an array of strings
/// (other text) and `{"todo", "lead", "mark", "gap", "end"}` objects (the content is the
/// todo's subject). `ids`: the todo of each checkbox line, in order.
pub fn stored_document(lines: &[DocumentLine], ids: &[i64]) -> Value {
    let mut ids = ids.iter();
    Value::Array(
        lines
            .iter()
            .map(|line| match line {
                DocumentLine::Text(t) => json!(t),
                DocumentLine::Checkbox(c) => json!({
                    "todo": ids.next().copied().unwrap_or(0),
                    "lead": c.lead, "mark": c.mark, "gap": c.gap, "end": c.end,
                }),
            })
            .collect(),
    )
}

/// A stored document written with its todos as they are now: `todos` is the list (id,
/// status, subject) in order. A checkbox line keeps its mark while its todo's status is the
/// one the mark says, else gets the status's mark (`x`, `-`, a space); a line whose todo is
/// no longer on the list is left out; a todo of the list the document does not name (added
/// through another dialect) gets a `- [ ] ` line after the document's last checkbox line (at
/// the end when it has none).
pub fn render_document(stored: &Value, todos: &[(i64, Status, &str)]) -> String {
    let parts = stored.as_array().map(Vec::as_slice).unwrap_or_default();
    let named: Vec<i64> = parts.iter().filter_map(|p| p.get("todo").and_then(Value::as_i64)).collect();
    let extra: Vec<String> = todos
        .iter()
        .filter(|(id, _, _)| !named.contains(id))
        .map(|(_, status, subject)| format!("- [{}] {subject}", mark_of(*status)))
        .collect();
    let last_item = parts.iter().rposition(|p| p.get("todo").is_some()).map_or(parts.len(), |i| i + 1);
    let mut out = String::new();
    // at the end, the added lines end as the document does (with a line break or without)
    let push_extra = |out: &mut String, at_end: bool| {
        let closed = !at_end || out.ends_with('\n');
        for line in &extra {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(line);
            if closed {
                out.push('\n');
            }
        }
    };
    for (i, part) in parts.iter().enumerate() {
        if i == last_item {
            push_extra(&mut out, false);
        }
        match part {
            Value::String(t) => out.push_str(t),
            item => {
                let id = item["todo"].as_i64().unwrap_or(0);
                let Some((_, status, subject)) = todos.iter().find(|(t, _, _)| *t == id) else { continue };
                let text = |k: &str| item[k].as_str().unwrap_or_default().to_string();
                let mark = text("mark");
                let mark = if mark_status(&mark).map(Status::three_state) == Some(status.three_state()) {
                    mark
                } else {
                    mark_of(*status).to_string()
                };
                out.push_str(&format!("{}{mark}{}{subject}{}", text("lead"), text("gap"), text("end")));
            }
        }
    }
    if last_item == parts.len() {
        push_extra(&mut out, true);
    }
    out
}

/// The checklist's items: (content, status), in order. A line is an item when, trimmed, it
/// is `[<mark>] <content>` with an optional leading `-`, spaces allowed inside the brackets.
pub fn parse_checklist(md: &str) -> Vec<(String, Status)> {
    md.lines()
        .filter_map(|line| {
            let mut rest = line.trim();
            if let Some(r) = rest.strip_prefix('-') {
                rest = r.trim_start();
            }
            let inner = rest.strip_prefix('[')?;
            let close = inner.find(']')?;
            if close == 0 {
                return None;
            }
            let status = mark_status(&inner[..close])?;
            let after = &inner[close + 1..];
            let content = after.trim();
            (after.starts_with(char::is_whitespace) && !content.is_empty()).then(|| (content.to_string(), status))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use Status::*;

    fn items(md: &str) -> Vec<(String, Status)> {
        parse_checklist(md)
    }

    #[test]
    fn marks_and_prefixes() {
        assert_eq!(
            items("[x] Analyze\n- [-] Design\n[ ] Build\n  [~] Review  \n-[X] Ship\n[ x ] Spaced"),
            vec![
                ("Analyze".into(), Completed),
                ("Design".into(), InProgress),
                ("Build".into(), Pending),
                ("Review".into(), InProgress),
                ("Ship".into(), Completed),
                ("Spaced".into(), Completed),
            ]
        );
    }

    #[test]
    fn lines_that_are_not_items_are_ignored() {
        for md in [
            "",
            "not an item",
            "[] empty",
            "[x]no space",
            "[x]   ",
            "[?] unknown",
            "[xx] two marks",
            "* [x] star",
            "[x",
        ] {
            assert_eq!(items(md), vec![], "{md:?}");
        }
        assert_eq!(
            items("# Plan\r\n[x] one\r\n\r\nnotes\n[ ] two"),
            vec![("one".into(), Completed), ("two".into(), Pending)]
        );
    }

    #[test]
    fn a_document_splits_into_lines_that_give_it_back() {
        let md = "# Plan\r\n\nSome notes.\n- [ ] Write the parser  \n  * [x] Nested done\n1. [-] Numbered\n[~]   bare\n- [ ]\n-[x] no space\nend without break";
        let lines = parse_document(md);
        let boxes: Vec<(&str, Status)> = lines
            .iter()
            .filter_map(|l| match l {
                DocumentLine::Checkbox(c) => Some((c.content.as_str(), c.status())),
                DocumentLine::Text(_) => None,
            })
            .collect();
        assert_eq!(
            boxes,
            vec![
                ("Write the parser", Pending),
                ("Nested done", Completed),
                ("Numbered", InProgress),
                ("bare", InProgress)
            ]
        );
        let again: String = lines
            .iter()
            .map(|l| match l {
                DocumentLine::Checkbox(c) => format!("{}{}{}{}{}", c.lead, c.mark, c.gap, c.content, c.end),
                DocumentLine::Text(t) => t.clone(),
            })
            .collect();
        assert_eq!(again, md);
    }

    #[test]
    fn a_stored_document_renders_its_todos_as_they_are_now() {
        let md = "Notes\n- [ ] one\n  - [X] two\nmore notes\n- [ ] three\ntail";
        let stored = stored_document(&parse_document(md), &[1, 2, 3]);
        // unchanged: the same text
        assert_eq!(render_document(&stored, &[(1, Pending, "one"), (2, Completed, "two"), (3, Pending, "three")]), md);
        // one started, one renamed, one gone, one added elsewhere
        assert_eq!(
            render_document(&stored, &[(1, InProgress, "one"), (2, Completed, "TWO"), (4, Blocked, "four")]),
            "Notes\n- [-] one\n  - [X] TWO\nmore notes\n- [ ] four\ntail"
        );
        // a document without a checkbox: added todos at the end
        let notes = stored_document(&parse_document("just notes"), &[]);
        assert_eq!(render_document(&notes, &[(7, Completed, "x")]), "just notes\n- [x] x");
        let closed = stored_document(&parse_document("- [ ] a\n"), &[1]);
        assert_eq!(render_document(&closed, &[(1, Pending, "a"), (2, Pending, "b")]), "- [ ] a\n- [ ] b\n");
        assert_eq!(render_document(&json!([]), &[]), "");
    }

    #[test]
    fn content_keeps_its_brackets_and_inner_spaces() {
        assert_eq!(items("[ ] fix [the] parser  now"), vec![("fix [the] parser  now".into(), Pending)]);
    }
}
