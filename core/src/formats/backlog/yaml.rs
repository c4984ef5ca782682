//! The YAML subset Backlog.md writes: its reader (plain, single- and double-quoted scalars,
//! `|`/`>` block scalars, block and flow lists, read into front matter entries) and its
//! writer (js-yaml 3's quoting and folding).

use super::*;

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Yaml {
    Null,
    /// a scalar, and whether it was quoted (a quoted scalar is always a string)
    Str(String, bool),
    List(Vec<String>),
}

pub(super) struct Entry {
    pub(super) key: String,
    pub(super) value: Yaml,
    /// the line of the key, from 1 in the file
    pub(super) line: usize,
}

pub(super) fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// A plain scalar without a trailing ` # comment`.
pub(super) fn strip_comment(s: &str) -> &str {
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
pub(super) fn read_quoted(s: &str) -> Result<(String, &str), String> {
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
pub(super) fn read_scalar(s: &str) -> Result<Yaml, String> {
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
pub(super) fn read_flow_list(s: &str) -> Result<Vec<String>, String> {
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
pub(super) fn block_scalar(header: &str, lines: &[&str]) -> String {
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
pub(super) fn read_front_matter(lines: &[&str], first_line: usize, file: &str) -> Result<Vec<Entry>, FileError> {
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
pub(super) fn read_block_scalar(lines: &[&str], start: usize, raw: &str) -> (Yaml, usize) {
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
pub(super) fn read_block_list(
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
pub(super) fn ambiguous(s: &str) -> bool {
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
pub(super) fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

pub(super) fn printable(c: char) -> bool {
    let c = c as u32;
    (0x20..=0x7E).contains(&c)
        || (0xA1..=0xD7FF).contains(&c) && c != 0x2028 && c != 0x2029
        || (0xE000..=0xFFFD).contains(&c) && c != 0xFEFF
        || (0x10000..=0x10FFFF).contains(&c)
        || c == 0x85
}

pub(super) fn plain_first(c: char) -> bool {
    printable(c) && c != ' ' && c != '\t' && !"-?:,[]{}#&*!|=>'\"%@`".contains(c)
}

pub(super) fn plain_inner(c: char, prev: Option<char>) -> bool {
    printable(c)
        && !",[]{}:".contains(c)
        && (c != '#' || prev.is_some_and(|p| printable(p) && p != ' ' && p != '\t' && p != '\r' && p != '\n'))
}

/// js-yaml 3's `foldLine`: breaks a line at spaces so the parts keep within `width`.
pub(super) fn fold_line(line: &[u16], width: usize) -> Vec<u16> {
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
pub(super) fn yaml_string(s: &str) -> String {
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
pub(super) fn fold_string(s: &[u16], width: usize) -> Vec<u16> {
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

pub(super) fn double_quoted(s: &str) -> String {
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

pub(super) fn yaml_list(out: &mut String, key: &str, items: &[String]) {
    if items.is_empty() {
        out.push_str(&format!("{key}: []\n"));
        return;
    }
    out.push_str(&format!("{key}:\n"));
    for item in items {
        out.push_str(&format!("  - {}\n", yaml_string(item)));
    }
}
