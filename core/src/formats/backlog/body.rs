//! A task file's body: its marked sections (and the legacy `## Title` ones), its checklists
//! and its comments.

use super::*;

/// The text between `begin` and `end` markers, trimmed, with the line of `begin` (from 0
/// in `body`); an error when `begin` has no `end`.
pub(super) fn between<'a>(body: &'a str, begin: &str, end: &str) -> Result<Option<(&'a str, usize)>, (usize, String)> {
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
pub(super) fn legacy_section(body: &str, titles: &[&str]) -> Option<String> {
    let lines: Vec<&str> = body.lines().collect();
    let start = lines.iter().position(|l| {
        l.strip_prefix("## ").is_some_and(|t| titles.iter().any(|want| t.trim().eq_ignore_ascii_case(want)))
    })?;
    let rest: Vec<&str> = lines[start + 1..].iter().take_while(|l| !l.starts_with("## ")).copied().collect();
    let text = rest.join("\n").trim().to_string();
    Some(text)
}

pub(super) fn section_text(body: &str, marker: &str, titles: &[&str]) -> Result<Option<String>, (usize, String)> {
    let begin = format!("<!-- SECTION:{marker}:BEGIN -->");
    let end = format!("<!-- SECTION:{marker}:END -->");
    match between(body, &begin, &end)? {
        Some((text, _)) => Ok(Some(text.trim().to_string()).filter(|t| !t.is_empty())),
        None => Ok(legacy_section(body, titles).filter(|t| !t.is_empty())),
    }
}

/// `- [ ] #1 text` / `- [x] #2 text` (or without the `#n`, as legacy files have them).
pub(super) fn checkbox(line: &str) -> Option<(bool, String)> {
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

pub(super) fn checklist(
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

pub(super) fn comments(body: &str, file: &str, body_line: usize) -> Result<Vec<Comment>, FileError> {
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
