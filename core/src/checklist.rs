//! Roo Code's markdown checklist: one todo a line, `[ ]` pending, `[x]` completed, `[-]` or
//! `[~]` in progress, an optional leading `- `. Pure: tested without a database.

use crate::status::Status;

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
            let mut marks = inner[..close].chars().filter(|c| !c.is_whitespace());
            let status = match (marks.next(), marks.next()) {
                (None, None) => Status::Pending,
                (Some('x' | 'X'), None) => Status::Completed,
                (Some('-' | '~'), None) => Status::InProgress,
                _ => return None,
            };
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
    fn content_keeps_its_brackets_and_inner_spaces() {
        assert_eq!(items("[ ] fix [the] parser  now"), vec![("fix [the] parser  now".into(), Pending)]);
    }
}
