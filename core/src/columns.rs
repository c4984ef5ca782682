//! The columns of `todo.todos`, declared once: each column's name and SQL type, the length
//! limit that bounds it, whether a read of a whole todo returns it (and since which schema),
//! whether the board's JSON shows it, and whether a surface may write it. Every column list
//! of the extension (what reads select, what writes accept, what the board shows, what the
//! length limits name) is derived from `TABLE`, so that a new column is one line here plus
//! the schema (`sql/bootstrap.sql` and an upgrade script).
//!
//! Pure: no pgrx. The lists a statement needs are built once (constants, or once per backend),
//! never per row.

/// Which length limit bounds a column (the settings of `limits::Setting` that bound columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthLimit {
    /// `todo.max_subject_length`: a short line of text
    Subject,
    /// `todo.max_text_length`: free text
    Text,
    /// `todo.max_name_length`: an identifier
    Name,
    /// `todo.max_metadata_size`: JSON text, or an array's bytes
    Metadata,
}

/// Whether a read of a whole todo (a `Todo`) returns a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    /// No: the claim columns, `version` and `tenant_id` are read where they are needed.
    No,
    /// Yes, on every schema.
    Always,
    /// Yes, as NULL on a schema older than 1.0.0 (a column 1.0.0 added, or one the library
    /// reads since then).
    Since1_0,
}

/// One column of `todo.todos`.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// Its name in `todo.todos`.
    pub name: &'static str,
    /// Its SQL type, as a cast or a record definition spells it.
    pub sql_type: &'static str,
    /// The length limit that bounds it, and where its limit's description names it (from 0);
    /// None: not free text (ids, numbers, times, `status` and `priority` with their CHECKs),
    /// or `tenant_id`, which only an administrator writes.
    pub limit: Option<(LengthLimit, u8)>,
    /// Whether a read of a whole todo returns it.
    pub read: Read,
    /// Whether the board's JSON of a todo shows it (under its name).
    pub board: bool,
    /// Whether a surface may write it (an insert's or an update's columns).
    pub writable: bool,
}

/// A column with no limit, not read, not shown, not writable; the table's lines change what differs.
const fn column(name: &'static str, sql_type: &'static str) -> Column {
    Column { name, sql_type, limit: None, read: Read::No, board: false, writable: false }
}

impl Column {
    const fn limit(mut self, limit: LengthLimit, place: u8) -> Column {
        self.limit = Some((limit, place));
        self
    }
    const fn read(mut self) -> Column {
        self.read = Read::Always;
        self
    }
    const fn read_since_1_0(mut self) -> Column {
        self.read = Read::Since1_0;
        self
    }
    const fn board(mut self) -> Column {
        self.board = true;
        self
    }
    const fn writable(mut self) -> Column {
        self.writable = true;
        self
    }

    /// The column as a read selects it: its name, `metadata` as its JSON text.
    pub const fn read_expression(&self) -> &'static str {
        if str_eq(self.sql_type, "jsonb") {
            match self.name.as_bytes() {
                b"metadata" => "metadata::text",
                _ => panic!("a jsonb column read as text needs its expression here"),
            }
        } else {
            self.name
        }
    }
}

use LengthLimit::{Metadata, Name, Subject, Text};

/// The columns of `todo.todos`, in its order (`sql/bootstrap.sql`).
pub const TABLE: [Column; 32] = [
    column("tenant_id", "text"),
    column("id", "bigint").read().board(),
    column("conversation_id", "text").limit(Name, 0).read().board().writable(),
    column("turn_id", "text").limit(Name, 1).read().writable(),
    column("agent_id", "text").limit(Name, 2).read().board().writable(),
    column("subject", "text").limit(Subject, 0).read().board().writable(),
    column("description", "text").limit(Text, 0).read().board().writable(),
    column("active_form", "text").limit(Subject, 1).read().board().writable(),
    column("status", "text").read().board().writable(),
    column("priority", "text").read().board().writable(),
    column("position", "bigint").read().writable(),
    column("completion_criteria", "text").limit(Text, 2).read().board().writable(),
    column("agent_type", "text").limit(Name, 3).read().writable(),
    column("outcome", "text").limit(Text, 1).read().board().writable(),
    column("version", "integer").board(),
    column("created_at", "timestamptz").read().board(),
    column("updated_at", "timestamptz").read().board(),
    column("started_at", "timestamptz").read().board(),
    column("completed_at", "timestamptz").read().board(),
    column("parent_id", "bigint").read_since_1_0().board(),
    column("claimed_by", "text").limit(Name, 6).board(),
    column("lease_expires_at", "timestamptz").board(),
    column("fence", "bigint").board(),
    column("owner", "text").limit(Name, 4).read().board().writable(),
    column("metadata", "jsonb").limit(Metadata, 0).read().writable(),
    column("external_id", "text").limit(Name, 5).read().writable(),
    column("archived_at", "timestamptz").read_since_1_0().board().writable(),
    column("labels", "text[]").limit(Metadata, 1).read_since_1_0().board().writable(),
    column("issue_type", "text").limit(Name, 7).read_since_1_0().writable(),
    column("due_at", "timestamptz").read_since_1_0().board().writable(),
    column("notes", "text").limit(Text, 3).read_since_1_0().writable(),
    column("plan", "text").limit(Text, 4).read_since_1_0().writable(),
];

/// Whether two texts are equal, in a constant.
const fn str_eq(a: &str, b: &str) -> bool {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    while let ([x, rest_a @ ..], [y, rest_b @ ..]) = (a, b) {
        if *x != *y {
            return false;
        }
        (a, b) = (rest_a, rest_b);
    }
    a.is_empty() && b.is_empty()
}

/// How many columns a read of a whole todo returns.
pub const READ_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < TABLE.len() {
        if !matches!(TABLE[i].read, Read::No) {
            n += 1;
        }
        i += 1;
    }
    n
};

/// How many columns a surface may write.
const WRITABLE_COUNT: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < TABLE.len() {
        if TABLE[i].writable {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The columns a read of a whole todo returns, in the table's order.
pub const READ: [Column; READ_COUNT] = {
    let mut out = [TABLE[0]; READ_COUNT];
    let (mut n, mut i) = (0, 0);
    while i < TABLE.len() {
        if !matches!(TABLE[i].read, Read::No) {
            out[n] = TABLE[i];
            n += 1;
        }
        i += 1;
    }
    out
};

/// The names of the columns a read of a whole todo returns, in its order.
pub const READ_NAMES: [&str; READ_COUNT] = {
    let mut out = [""; READ_COUNT];
    let mut i = 0;
    while i < READ_COUNT {
        out[i] = READ[i].name;
        i += 1;
    }
    out
};

/// The names of the columns a surface may write, in the table's order.
pub const WRITABLE: [&str; WRITABLE_COUNT] = {
    let mut out = [""; WRITABLE_COUNT];
    let (mut n, mut i) = (0, 0);
    while i < TABLE.len() {
        if TABLE[i].writable {
            out[n] = TABLE[i].name;
            n += 1;
        }
        i += 1;
    }
    out
};

/// Where a read of a whole todo returns column `name` (from 0). Meant for constants
/// (`const { at("subject") }`): a column that reads do not return stops the build.
pub const fn at(name: &str) -> usize {
    let mut i = 0;
    while i < READ_COUNT {
        if str_eq(READ[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("not a column a read returns")
}

/// Column `name` of `todo.todos`; None when it has none.
pub fn by_name(name: &str) -> Option<&'static Column> {
    TABLE.iter().find(|c| c.name == name)
}

/// The columns a read of a whole todo selects, comma-separated and unqualified (for
/// statements on `todo.todos` alone, and their RETURNING); with `before_1_0`, those
/// `Read::Since1_0` are NULLs of their type (for a schema older than 1.0.0).
pub fn read_list(before_1_0: bool) -> String {
    let each = READ.iter().map(|c| match c.read {
        Read::Since1_0 if before_1_0 => format!("NULL::{}", c.sql_type),
        _ => c.read_expression().to_string(),
    });
    each.collect::<Vec<_>>().join(", ")
}

/// The names of the columns `limit` bounds, in the order its description names them.
pub fn limited(limit: LengthLimit) -> Vec<&'static str> {
    let mut named: Vec<(u8, &'static str)> =
        TABLE.iter().filter_map(|c| c.limit.filter(|l| l.0 == limit).map(|l| (l.1, c.name))).collect();
    named.sort_unstable();
    named.into_iter().map(|(_, name)| name).collect()
}

/// `a, b or c`: names as a sentence lists them.
pub fn listed(names: &[&str]) -> String {
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_is_named_once() {
        let mut names: Vec<&str> = TABLE.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
    }

    #[test]
    fn the_table_is_the_schema_in_its_order() {
        let sql = include_str!("../../sql/bootstrap.sql");
        let start = sql.find("CREATE TABLE todo.todos (").expect("todo.todos") + "CREATE TABLE todo.todos (".len();
        let body = &sql[start..];
        let body = &body[..body.find("\n);").expect("its end")];
        let columns: Vec<&str> = body
            .lines()
            .filter(|l| l.starts_with("    ") && !l.starts_with("     "))
            .map(|l| l.split_whitespace().next().unwrap_or_default())
            .filter(|w| !matches!(*w, "PRIMARY" | "CONSTRAINT" | "REFERENCES"))
            .collect();
        let types: Vec<&str> = body
            .lines()
            .filter(|l| l.starts_with("    ") && !l.starts_with("     "))
            .filter_map(|l| l.split_whitespace().nth(1).map(|t| t.trim_end_matches(',')))
            .take(columns.len())
            .collect();
        assert_eq!(columns, TABLE.iter().map(|c| c.name).collect::<Vec<_>>());
        assert_eq!(types, TABLE.iter().map(|c| c.sql_type).collect::<Vec<_>>());
    }

    #[test]
    fn reads_and_writes_derive_from_the_table() {
        assert_eq!(READ_COUNT, 27);
        assert_eq!(READ_NAMES[at("subject")], "subject");
        assert_eq!(READ_NAMES[at("archived_at")], "archived_at");
        let all = read_list(false);
        assert_eq!(all.split(", ").count(), READ_COUNT);
        assert!(all.contains(", metadata::text, "));
        let old = read_list(true);
        assert!(old.contains("NULL::text[]") && !old.contains("labels") && !old.contains("parent_id"));
        for name in WRITABLE {
            let column = by_name(name).expect("a column");
            assert!(!matches!(column.read, Read::No), "{name}: a written column is read back");
        }
        assert!(!WRITABLE.contains(&"claimed_by") && !WRITABLE.contains(&"tenant_id"));
    }

    #[test]
    fn the_board_shows_the_columns_it_showed() {
        let mut shown: Vec<&str> = TABLE.iter().filter(|c| c.board).map(|c| c.name).collect();
        shown.sort_unstable();
        let mut released = [
            "id",
            "conversation_id",
            "subject",
            "description",
            "active_form",
            "status",
            "priority",
            "owner",
            "agent_id",
            "outcome",
            "completion_criteria",
            "claimed_by",
            "lease_expires_at",
            "fence",
            "version",
            "parent_id",
            "created_at",
            "updated_at",
            "started_at",
            "completed_at",
            "archived_at",
            // 1.2.0: the cards show labels and due dates
            "labels",
            "due_at",
        ];
        released.sort_unstable();
        assert_eq!(shown, released);
    }

    #[test]
    fn each_limit_names_its_columns_in_one_order() {
        for limit in [Subject, Text, Name, Metadata] {
            let mut places: Vec<u8> =
                TABLE.iter().filter_map(|c| c.limit.filter(|l| l.0 == limit).map(|l| l.1)).collect();
            places.sort_unstable();
            assert_eq!(places, (0..places.len() as u8).collect::<Vec<_>>(), "{limit:?}");
        }
        assert_eq!(listed(&limited(Subject)), "subject or active_form");
        assert_eq!(limited(Metadata), ["metadata", "labels"]);
        assert_eq!(listed(&["a"]), "a");
    }
}
