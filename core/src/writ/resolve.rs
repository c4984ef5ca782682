//! Which todo a subject names: among the open todos in scope, an exact match, else a
//! case-insensitive match, else a unique case-insensitive prefix. Pure: no pgrx.

use super::render::Row;

#[derive(Debug, PartialEq, Eq)]
pub enum Resolved {
    One(i64),
    None,
    Ambiguous,
}

/// `rows` are the open todos in scope.
pub fn subject(rows: &[Row], needle: &str) -> Resolved {
    let lower = needle.to_lowercase();
    let stages: [&dyn Fn(&Row) -> bool; 3] = [&|r| r.subject == needle, &|r| r.subject.to_lowercase() == lower, &|r| {
        r.subject.to_lowercase().starts_with(&lower)
    }];
    for matches in stages {
        let mut found = rows.iter().filter(|r| r.status.is_open() && matches(r));
        match (found.next(), found.next()) {
            (Some(r), None) => return Resolved::One(r.id),
            (Some(_), Some(_)) => return Resolved::Ambiguous,
            _ => {}
        }
    }
    Resolved::None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    fn rows() -> Vec<Row> {
        let r = |id, subject: &str, status| Row {
            id,
            subject: subject.into(),
            status,
            tenant_wide: false,
            marks: Default::default(),
        };
        vec![
            r(1, "Review the deploy", Status::Pending),
            r(2, "review the deploy", Status::InProgress),
            r(3, "write the post-mortem", Status::Pending),
            r(4, "write the changelog", Status::Pending),
            r(5, "ship it", Status::Completed),
        ]
    }

    #[test]
    fn exact_then_case_insensitive_then_unique_prefix() {
        assert_eq!(subject(&rows(), "review the deploy"), Resolved::One(2), "exact wins");
        assert_eq!(subject(&rows(), "Review the deploy"), Resolved::One(1), "exact wins");
        assert_eq!(subject(&rows(), "REVIEW THE DEPLOY"), Resolved::Ambiguous, "two case-insensitive matches");
        assert_eq!(subject(&rows(), "WRITE THE POST-MORTEM"), Resolved::One(3));
        assert_eq!(subject(&rows(), "write the p"), Resolved::One(3), "unique prefix");
        assert_eq!(subject(&rows(), "write"), Resolved::Ambiguous, "two prefixes");
        assert_eq!(subject(&rows(), "ship it"), Resolved::None, "only open todos match");
        assert_eq!(subject(&rows(), "nothing like it"), Resolved::None);
    }
}
