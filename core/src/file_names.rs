//! Stored text as a part of a file's path, and as a terminal shows it. `todo.export` names
//! files after ids and list names (Claude Code's `tasks/<list>/<id>.json`, Backlog.md's
//! `<id> - <title>.md`); any of them may be text an agent or a file chose, such as
//! `../../.claude/settings`. Each becomes one file name through `component`, which escapes
//! rather than refuses, so that the export of any list succeeds and its import gives back
//! the same ids and lists (`from_component`). Pure.
//!
//! The rule, as docs/tools.md states it: `%`, `/`, `\` and every control character
//! (U+0000–U+001F, U+007F–U+009F) are written `%XX`, the hexadecimal of each of their UTF-8
//! bytes, and so is a leading `.` (`%2E`: no name is `.`, `..` or hidden); the empty text is
//! written `%00` (PostgreSQL's text never holds U+0000, so nothing else is). Nothing else
//! changes: `task-1`, `5.2` and `ünïcode` stay as they are.

/// Whether `c` is written `%XX` wherever it is in a name.
fn escaped(c: char) -> bool {
    matches!(c, '%' | '/' | '\\') || c.is_control()
}

/// One file name (no `/`, `\`, control character, not empty, `.` or `..`, never hidden)
/// made from any text, reversibly: `from_component(&component(s)) == s`.
pub fn component(s: &str) -> String {
    if s.is_empty() {
        return "%00".to_string();
    }
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        if escaped(c) || (i == 0 && c == '.') {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The text a file name made by `component` stands for. A `%XX` (or the `%XX%XX…` of one
/// character's UTF-8 bytes) decodes only to a character `component` escapes there (a file
/// named by hand `100%.json` or `a%20b` keeps its name); `%00` alone is the empty text.
pub fn from_component(name: &str) -> String {
    if name == "%00" {
        return String::new();
    }
    let b = name.as_bytes();
    let byte = |i: usize| -> Option<u8> {
        let h = b.get(i + 1..i + 3).filter(|h| b[i] == b'%' && h.iter().all(u8::is_ascii_hexdigit))?;
        u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < b.len() {
        let first = byte(i).unwrap_or(0);
        let len = match first {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        let bytes: Option<Vec<u8>> = (0..len).map(|k| byte(i + 3 * k)).collect();
        let c = bytes.and_then(|v| std::str::from_utf8(&v).ok()?.chars().next());
        match c.filter(|&c| escaped(c) || (c == '.' && i == 0)) {
            Some(c) => {
                out.push(c);
                i += 3 * len;
            }
            None => {
                let c = name[i..].chars().next().unwrap_or_default();
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

/// Whether `name` is one safe file name: not empty, `.` or `..`, no `/`, `\` or control
/// character, at most 255 bytes (the longest name Linux file systems take).
pub fn is_safe_component(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && name.len() <= 255 && !name.chars().any(escaped_in_path)
}

fn escaped_in_path(c: char) -> bool {
    matches!(c, '/' | '\\') || c.is_control()
}

/// Text as a terminal should show it: control characters (ESC, BEL, newline, …) and the
/// characters that reorder text (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F) written as
/// Rust writes them (`\u{1b}`, `\n`), everything else as it is.
pub fn shown(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else if matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}') {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_become_one_safe_name() {
        for (text, name) in [
            ("../../../../.claude/settings", "%2E.%2F..%2F..%2F..%2F.claude%2Fsettings"),
            ("..", "%2E."),
            (".", "%2E"),
            ("", "%00"),
            (".hidden", "%2Ehidden"),
            ("a\\b", "a%5Cb"),
            ("/etc/passwd", "%2Fetc%2Fpasswd"),
            ("\u{1b}[31mred\u{7}", "%1B[31mred%07"),
            ("c1\u{85}", "c1%C2%85"),
            ("100%", "100%25"),
            ("%2F", "%252F"),
            ("%00", "%2500"),
        ] {
            assert_eq!(component(text), name, "{text:?}");
            assert!(is_safe_component(name), "{name}");
            assert_eq!(from_component(name), text, "{name}");
        }
    }

    #[test]
    fn ordinary_names_stay() {
        for s in ["task-1", "5.2", "TASK-3", "bd-a1b2", "ünïcode list", "s1-agent-s1", "a.b.c", "x."] {
            assert_eq!(component(s), s);
            assert_eq!(from_component(s), s);
        }
    }

    #[test]
    fn names_made_by_hand_keep_their_percent_signs() {
        for s in ["100%", "a%20b", "%41", "%", "%2", "%zz", "x%2Ey"] {
            assert_eq!(from_component(s), s, "{s}");
        }
        // a dot is decoded only where component writes one: at the start
        assert_eq!(from_component("%2E%2E"), ".%2E");
    }

    #[test]
    fn every_text_round_trips() {
        let pieces = ["", ".", "..", "/", "\\", "%", "%2F", "%00", "a", "é", "\u{1b}", "\u{9f}", "\n", " "];
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    let s = format!("{a}{b}{c}");
                    let name = component(&s);
                    assert!(is_safe_component(&name), "{s:?} → {name:?}");
                    assert!(!name.starts_with('.'), "{name}");
                    assert_eq!(from_component(&name), s, "{s:?} → {name:?}");
                }
            }
        }
    }

    #[test]
    fn unsafe_names() {
        for n in ["", ".", "..", "a/b", "a\\b", "a\u{1b}b", "a\nb", &"x".repeat(256)] {
            assert!(!is_safe_component(n), "{n:?}");
        }
        assert!(is_safe_component("...") && is_safe_component(".hidden") && is_safe_component(&"x".repeat(255)));
    }

    #[test]
    fn shown_escapes_control_characters() {
        assert_eq!(shown("bd-\u{1b}[2J\u{7}"), "bd-\\u{1b}[2J\\u{7}");
        assert_eq!(shown("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(shown("abc\u{202E}def"), "abc\\u{202e}def");
        assert_eq!(shown("ünïcode \"quoted\" 'x' \\"), "ünïcode \"quoted\" 'x' \\");
    }
}
