//! The rules every stored todo obeys, whoever writes it: what the CHECK constraints of
//! `todo.todos` said until 0.9.0. The before-write trigger applies them to the row it is
//! about to store, once per row in compiled code, instead of PostgreSQL re-reading eleven
//! constraint expressions from their stored text for every statement that writes the table.
//! A violation is reported as the constraint was: SQLSTATE 23514, the same constraint name.

/// The columns the rules read, as the row is about to be stored (None: NULL).
#[derive(Debug, Default, Clone, Copy)]
pub struct Row<'a> {
    pub id: Option<i64>,
    pub conversation_id: Option<&'a str>,
    pub subject: Option<&'a str>,
    pub status: Option<&'a str>,
    pub priority: Option<&'a str>,
    /// Whether `metadata` is a JSON object (None: NULL)
    pub metadata_is_object: Option<bool>,
    pub external_id: Option<&'a str>,
    pub archived: bool,
    pub completed: bool,
    pub parent_id: Option<i64>,
    pub claimed: bool,
    pub leased: bool,
}

/// A broken rule: the constraint's name and what to fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Violation {
    pub constraint: &'static str,
    pub hint: &'static str,
}

const fn v(constraint: &'static str, hint: &'static str) -> Violation {
    Violation { constraint, hint }
}

/// The first rule `row` breaks, in the constraints' name order (the order PostgreSQL
/// checked them in). A NULL passes a rule, as it passes a CHECK constraint.
pub fn first_violation(row: &Row<'_>) -> Option<Violation> {
    let terminal = row.status.map(|s| s == "completed" || s == "canceled");
    let checks: [(bool, Violation); 11] = [
        (
            row.archived && !row.completed,
            v("todos_archived_at_check", "only a finished todo (completed_at set) can be archived"),
        ),
        (
            row.claimed != row.leased || (row.claimed && row.status.is_some_and(|s| s != "in_progress")),
            v("todos_claim_check", "claimed_by and lease_expires_at are set together, and only on an in_progress todo"),
        ),
        (
            terminal.is_some_and(|t| t != row.completed),
            v("todos_completed_at_check", "completed_at is set exactly when the status is completed or canceled"),
        ),
        (
            row.conversation_id == Some(""),
            v("todos_conversation_id_check", "a conversation id is not empty (NULL: tenant-wide)"),
        ),
        (row.external_id == Some(""), v("todos_external_id_check", "an external id is not empty (or NULL)")),
        (row.id.is_some_and(|id| id <= 0), v("todos_id_check", "a todo id is positive")),
        (row.metadata_is_object == Some(false), v("todos_metadata_check", "metadata is a JSON object (or NULL)")),
        (
            row.parent_id.is_some() && row.parent_id == row.id,
            v("todos_parent_id_check", "a todo is not its own parent"),
        ),
        (
            row.priority.is_some_and(|p| !matches!(p, "high" | "medium" | "low")),
            v("todos_priority_check", "priority is high, medium or low (or NULL)"),
        ),
        (
            row.status.is_some_and(|s| crate::status::Status::ALL.iter().all(|known| known.as_str() != s)),
            v("todos_status_check", "status is pending, in_progress, completed, canceled, blocked, deferred or review"),
        ),
        (
            row.subject.is_some_and(|s| s.trim_matches(' ').is_empty()),
            v("todos_subject_check", "a subject has text other than spaces"),
        ),
    ];
    checks.into_iter().find(|(broken, _)| *broken).map(|(_, violation)| violation)
}

/// The message PostgreSQL gave for a broken CHECK constraint of `relation`.
pub fn message(relation: &str, violation: &Violation) -> String {
    format!("new row for relation \"{relation}\" violates check constraint \"{}\"", violation.constraint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> Row<'static> {
        Row { id: Some(1), subject: Some("write it"), status: Some("pending"), ..Row::default() }
    }

    fn broken(row: Row<'_>) -> Option<&'static str> {
        first_violation(&row).map(|v| v.constraint)
    }

    #[test]
    fn a_valid_row_breaks_nothing() {
        assert_eq!(broken(valid()), None);
        let done = Row { status: Some("completed"), completed: true, archived: true, ..valid() };
        assert_eq!(broken(done), None);
        let claimed = Row { status: Some("in_progress"), claimed: true, leased: true, ..valid() };
        assert_eq!(broken(claimed), None);
        let full = Row {
            conversation_id: Some("c"),
            priority: Some("low"),
            metadata_is_object: Some(true),
            external_id: Some("x"),
            parent_id: Some(2),
            ..valid()
        };
        assert_eq!(broken(full), None);
    }

    #[test]
    fn nulls_pass_as_they_pass_a_check_constraint() {
        let all_null = Row::default();
        assert_eq!(broken(all_null), None);
    }

    #[test]
    fn each_rule_names_its_constraint() {
        assert_eq!(broken(Row { subject: Some("  "), ..valid() }), Some("todos_subject_check"));
        // only spaces are trimmed, as btrim() trims
        assert_eq!(broken(Row { subject: Some("\t"), ..valid() }), None);
        assert_eq!(broken(Row { subject: Some(""), ..valid() }), Some("todos_subject_check"));
        assert_eq!(broken(Row { id: Some(0), ..valid() }), Some("todos_id_check"));
        assert_eq!(broken(Row { id: Some(-5), ..valid() }), Some("todos_id_check"));
        assert_eq!(broken(Row { conversation_id: Some(""), ..valid() }), Some("todos_conversation_id_check"));
        assert_eq!(broken(Row { external_id: Some(""), ..valid() }), Some("todos_external_id_check"));
        assert_eq!(broken(Row { priority: Some("urgent"), ..valid() }), Some("todos_priority_check"));
        assert_eq!(broken(Row { priority: Some("High"), ..valid() }), Some("todos_priority_check"));
        assert_eq!(broken(Row { metadata_is_object: Some(false), ..valid() }), Some("todos_metadata_check"));
        assert_eq!(broken(Row { parent_id: Some(1), ..valid() }), Some("todos_parent_id_check"));
        assert_eq!(broken(Row { status: Some("done"), ..valid() }), Some("todos_status_check"));
        assert_eq!(broken(Row { archived: true, ..valid() }), Some("todos_archived_at_check"));
        assert_eq!(broken(Row { completed: true, ..valid() }), Some("todos_completed_at_check"));
        assert_eq!(broken(Row { status: Some("canceled"), ..valid() }), Some("todos_completed_at_check"));
        assert_eq!(broken(Row { claimed: true, ..valid() }), Some("todos_claim_check"));
        assert_eq!(broken(Row { leased: true, status: Some("in_progress"), ..valid() }), Some("todos_claim_check"));
        assert_eq!(broken(Row { claimed: true, leased: true, ..valid() }), Some("todos_claim_check"));
    }

    #[test]
    fn the_first_broken_rule_in_name_order_wins() {
        let row = Row { subject: Some(" "), id: Some(-1), priority: Some("x"), ..valid() };
        assert_eq!(broken(row), Some("todos_id_check"));
        let row = Row { archived: true, subject: Some(" "), ..valid() };
        assert_eq!(broken(row), Some("todos_archived_at_check"));
    }

    #[test]
    fn the_message_is_postgresqls() {
        let violation = first_violation(&Row { subject: Some(" "), ..valid() }).unwrap();
        assert_eq!(
            message("todos", &violation),
            "new row for relation \"todos\" violates check constraint \"todos_subject_check\""
        );
    }
}
