//! Input size limits: the settings that bound what a tenant, an agent or a model can send
//! (the free-text columns of a todo, a writ message and its commands, a tool call's
//! arguments, a REST body) and what a read renders for a model (the writ's output, the open
//! block). Each is a setting a superuser can raise (`todo.max_*`); this module holds their
//! names and defaults, the checks and the messages. Pure: no pgrx (the settings are read and
//! registered by the extension's `limits` module).
//!
//! A value over a limit is refused whole, never cut: a column with SQLSTATE 22001 (raised by
//! the row trigger, so plain SQL is covered too), a whole input with the surface's own error
//! (an `ERR:` block, the tool's error object, REST 413). Output is the exception: a read
//! stops at the limit and says so ([`Capped`]).

use std::fmt;

use crate::columns::{self, LengthLimit};

/// SQLSTATE of a column over its limit: PostgreSQL's `string_data_right_truncation`, what
/// `varchar(n)` raises. Class 22: a data exception, the caller's data.
pub const FIELD_TOO_LONG: &str = "22001";

/// SQLSTATE of a whole input over its limit (a message, arguments, a body, the commands of a
/// message): PostgreSQL's `program_limit_exceeded`. The surfaces answer these in their own
/// words; this is the code their messages are documented under.
pub const INPUT_TOO_LARGE: &str = "54000";

/// One limit: a setting of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    /// `subject`, `active_form`
    SubjectLength,
    /// `description`, `outcome`, `completion_criteria`
    TextLength,
    /// the identifiers: `conversation_id`, `turn_id`, `agent_id`, `agent_type`, `owner`,
    /// `external_id`, `claimed_by`
    NameLength,
    /// `metadata`, as JSON text
    MetadataSize,
    /// a writ message (`todo.todo_writ`)
    MessageSize,
    /// the `/todo` commands of one writ message
    WritCommands,
    /// a tool call's arguments (`todo.call`, `todo.call_mcp`)
    ArgumentsSize,
    /// `todo.rest`'s body
    BodySize,
    /// the text a read renders for a model: the writ's output, the open block and preamble,
    /// the text of `todo.call_mcp`; also the text of the todos one list read holds
    OutputSize,
    /// the todos one list read returns (a tool's list, `todo.list_as`, the writ's list, a
    /// conversation of the change feed): past it the read stops and says how many it left out
    ReadTodos,
}

/// What a limit counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Characters,
    Bytes,
    Commands,
    Todos,
}

impl Unit {
    fn plural(self) -> &'static str {
        match self {
            Unit::Characters => "characters",
            Unit::Bytes => "bytes",
            Unit::Commands => "commands",
            Unit::Todos => "todos",
        }
    }
}

impl Setting {
    pub const ALL: [Setting; 10] = [
        Setting::SubjectLength,
        Setting::TextLength,
        Setting::NameLength,
        Setting::MetadataSize,
        Setting::MessageSize,
        Setting::WritCommands,
        Setting::ArgumentsSize,
        Setting::BodySize,
        Setting::OutputSize,
        Setting::ReadTodos,
    ];

    /// The setting's name (`SET todo.max_subject_length = …`).
    pub fn name(self) -> &'static str {
        match self {
            Setting::SubjectLength => "todo.max_subject_length",
            Setting::TextLength => "todo.max_text_length",
            Setting::NameLength => "todo.max_name_length",
            Setting::MetadataSize => "todo.max_metadata_size",
            Setting::MessageSize => "todo.max_message_size",
            Setting::WritCommands => "todo.max_writ_commands",
            Setting::ArgumentsSize => "todo.max_arguments_size",
            Setting::BodySize => "todo.max_body_size",
            Setting::OutputSize => "todo.max_output_size",
            Setting::ReadTodos => "todo.max_read_todos",
        }
    }

    /// The default: far above what a real agent's list ever holds.
    pub const fn default_value(self) -> usize {
        match self {
            Setting::SubjectLength => 1_000,
            Setting::TextLength => 20_000,
            Setting::NameLength => 256,
            Setting::MetadataSize => 64 * 1024,
            Setting::MessageSize => 256 * 1024,
            Setting::WritCommands => 200,
            Setting::ArgumentsSize | Setting::BodySize | Setting::OutputSize => 1024 * 1024,
            Setting::ReadTodos => 1_000,
        }
    }

    /// The smallest value the setting takes (the output needs room for its closing lines).
    pub const fn min_value(self) -> usize {
        match self {
            Setting::SubjectLength
            | Setting::TextLength
            | Setting::NameLength
            | Setting::WritCommands
            | Setting::ReadTodos => 1,
            Setting::MetadataSize | Setting::MessageSize | Setting::ArgumentsSize | Setting::BodySize => 1024,
            Setting::OutputSize => 4096,
        }
    }

    /// The largest: PostgreSQL's own limit on one value (1 GB); for the identifiers, what
    /// one btree index entry holds (2,704 bytes): `conversation_id` and `external_id` share
    /// one (`todos_external_id`), at up to 4 bytes a character.
    pub const fn max_value(self) -> usize {
        match self {
            Setting::WritCommands | Setting::ReadTodos => 1_000_000,
            Setting::NameLength => 300,
            _ => 1024 * 1024 * 1024 - 1,
        }
    }

    pub fn unit(self) -> Unit {
        match self {
            Setting::SubjectLength | Setting::TextLength | Setting::NameLength => Unit::Characters,
            Setting::WritCommands => Unit::Commands,
            Setting::ReadTodos => Unit::Todos,
            _ => Unit::Bytes,
        }
    }

    /// Whether it bounds a column of `todo.todos` (checked by the row trigger).
    pub fn is_column(self) -> bool {
        matches!(self, Setting::SubjectLength | Setting::TextLength | Setting::NameLength | Setting::MetadataSize)
    }

    /// What it bounds, for `pg_settings.short_desc` and the docs.
    pub fn bounds(self) -> &'static str {
        match self {
            Setting::SubjectLength | Setting::TextLength | Setting::NameLength => self.bounds_columns(),
            Setting::MetadataSize => "Largest metadata of a todo, as JSON text; and largest labels of a todo, in bytes.",
            Setting::MessageSize => "Largest message todo.todo_writ reads.",
            Setting::WritCommands => "Most /todo commands in one writ message.",
            Setting::ArgumentsSize => "Largest arguments of one tool call (todo.call, todo.call_mcp), as JSON text.",
            Setting::BodySize => "Largest body of one todo.rest request, as JSON text.",
            Setting::OutputSize => "Largest text a read renders for a model: the writ's output, the open block and preamble, todo.call_mcp's text; also the todos' text one list read holds.",
            Setting::ReadTodos => "Most todos one list read returns (a tool's list, todo.list_as, the writ's list, a conversation of the change feed); the read says how many it left out.",
        }
    }

    /// `bounds` of a limit on text columns: `Longest a, b or c of a todo, in characters.`, the
    /// columns from `columns::TABLE` (built once).
    fn bounds_columns(self) -> &'static str {
        use std::sync::LazyLock;
        fn text(limit: LengthLimit) -> String {
            format!("Longest {} of a todo, in characters.", columns::listed(&columns::limited(limit)))
        }
        static SUBJECT: LazyLock<String> = LazyLock::new(|| text(LengthLimit::Subject));
        static TEXT: LazyLock<String> = LazyLock::new(|| text(LengthLimit::Text));
        static NAME: LazyLock<String> = LazyLock::new(|| text(LengthLimit::Name));
        match self {
            Setting::SubjectLength => &SUBJECT,
            Setting::TextLength => &TEXT,
            _ => &NAME,
        }
    }

    /// The `columns::LengthLimit` this setting is, for the settings that bound columns.
    fn of_column(limit: LengthLimit) -> Setting {
        match limit {
            LengthLimit::Subject => Setting::SubjectLength,
            LengthLimit::Text => Setting::TextLength,
            LengthLimit::Name => Setting::NameLength,
            LengthLimit::Metadata => Setting::MetadataSize,
        }
    }

    /// The SQLSTATE of a value over this limit.
    pub fn sqlstate(self) -> &'static str {
        if self.is_column() {
            FIELD_TOO_LONG
        } else {
            INPUT_TOO_LARGE
        }
    }
}

/// The setting that bounds a column of `todo.todos`; None for the columns that are not free
/// text (ids, numbers, times, `status` and `priority` with their CHECKs) and for `tenant_id`,
/// which only an administrator writes (`todo.tenants`).
pub fn column_setting(column: &str) -> Option<Setting> {
    columns::by_name(column).and_then(|c| c.limit).map(|(limit, _)| Setting::of_column(limit))
}

/// How large a refused value is: exact, or (a value so large that measuring it stopped) at
/// least this.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    Exact(usize),
    AtLeast(usize),
}

/// A value over its limit: what it is, its size and the limit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exceeded {
    /// what was measured: a column's name, `message`, `arguments`, `body`, or a tool's
    /// arguments (`TaskCreate: arguments`)
    pub what: String,
    pub setting: Setting,
    pub size: Size,
    pub limit: usize,
}

impl Exceeded {
    pub fn sqlstate(&self) -> &'static str {
        self.setting.sqlstate()
    }

    /// The error's HINT: what to do about it.
    pub fn hint(&self) -> String {
        let shorten = match self.setting {
            Setting::MessageSize | Setting::WritCommands => "send the /todo commands in several messages",
            Setting::ArgumentsSize => "send less in one call",
            Setting::BodySize => "send less in one request",
            _ => "shorten it",
        };
        format!(
            "{shorten}; a superuser can raise {} (SET, ALTER ROLE … SET or ALTER DATABASE … SET)",
            self.setting.name()
        )
    }
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = self.setting.unit().plural();
        let size = match self.size {
            Size::Exact(n) => n.to_string(),
            Size::AtLeast(n) => format!("more than {n}"),
        };
        let is = if self.what.ends_with("arguments") || matches!(self.what.as_str(), "labels" | "notes") {
            "are"
        } else {
            "is"
        };
        match self.setting.unit() {
            Unit::Commands => write!(f, "{} has {size} /todo commands", self.what)?,
            Unit::Todos => write!(f, "{} holds {size} todos", self.what)?,
            Unit::Characters => write!(f, "{} {is} {size} characters long", self.what)?,
            Unit::Bytes if self.setting == Setting::MetadataSize && self.what != "labels" => {
                write!(f, "{} {is} {size} bytes of JSON", self.what)?
            }
            Unit::Bytes => write!(f, "{} {is} {size} bytes", self.what)?,
        }
        write!(f, "; the limit is {} {unit} ({})", self.limit, self.setting.name())
    }
}

/// Refuses `size` over `limit`.
pub fn check(setting: Setting, what: &str, size: usize, limit: usize) -> Result<(), Exceeded> {
    if size > limit {
        Err(Exceeded { what: what.to_string(), setting, size: Size::Exact(size), limit })
    } else {
        Ok(())
    }
}

/// PostgreSQL's JSON text of a jsonb value (`jsonb::text`, `jsonb_out`), measured token by
/// token without building it: the row trigger walks a jsonb and feeds each token here, so
/// that measuring never costs more than the largest scalar (a number such as `1e131071`
/// prints 131,072 digits from a few bytes of jsonb).
#[derive(Clone, Debug, Default)]
pub struct JsonTextLength {
    len: usize,
    /// no ", " before the next item (just after an opening bracket or a key)
    first: bool,
}

/// One token of a jsonb iterator (`JsonbIteratorNext`), with the printed length of a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonToken {
    /// `raw_scalar`: a top-level scalar, printed without brackets
    BeginArray {
        raw_scalar: bool,
    },
    EndArray {
        raw_scalar: bool,
    },
    BeginObject,
    EndObject,
    /// a key, its printed length (quotes and escapes included)
    Key(usize),
    /// an object's scalar value, its printed length
    Value(usize),
    /// an array's scalar element, its printed length
    Elem(usize),
}

impl JsonTextLength {
    pub fn new() -> JsonTextLength {
        JsonTextLength { len: 0, first: true }
    }

    /// The length so far.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds one token, as `JsonbToCString` prints it: `{"a": 1, "b": [1, 2]}`.
    pub fn push(&mut self, token: JsonToken) {
        let sep = if self.first { 0 } else { 2 };
        match token {
            JsonToken::BeginArray { raw_scalar } => {
                self.len += sep + usize::from(!raw_scalar);
                self.first = true;
            }
            JsonToken::BeginObject => {
                self.len += sep + 1;
                self.first = true;
            }
            JsonToken::Key(n) => {
                self.len += sep + n + 2; // `"key": `
                self.first = true;
            }
            JsonToken::Value(n) => {
                self.len += n;
                self.first = false;
            }
            JsonToken::Elem(n) => {
                self.len += sep + n;
                self.first = false;
            }
            JsonToken::EndArray { raw_scalar } => {
                self.len += usize::from(!raw_scalar);
                self.first = false;
            }
            JsonToken::EndObject => {
                self.len += 1;
                self.first = false;
            }
        }
    }
}

/// The printed length of a JSON string, quotes included, as PostgreSQL's `escape_json`
/// writes it: `\b \f \n \r \t \" \\` take two bytes, other control characters six
/// (`\u001f`), everything else itself.
pub fn json_string_len(bytes: &[u8]) -> usize {
    2 + bytes
        .iter()
        .map(|b| match b {
            b'\x08' | b'\x0c' | b'\n' | b'\r' | b'\t' | b'"' | b'\\' => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum::<usize>()
}

/// Text built line by line up to a byte budget: a read renders into it and stops building
/// once the budget is spent. A line that does not fit is cut at a character boundary and
/// ends with `…` (when at least [`MIN_CUT`] bytes are left; otherwise it is left out), and
/// every line after it is only counted. Nothing kept ever passes the budget.
#[derive(Clone, Debug)]
pub struct Capped {
    text: String,
    budget: usize,
    lines: usize,
    full: bool,
    /// lines left out (after the one that was cut)
    omitted: usize,
}

/// The fewest bytes worth keeping of a line that is cut.
pub const MIN_CUT: usize = 16;

const ELLIPSIS: &str = "…";

impl Capped {
    pub fn new(budget: usize) -> Capped {
        Capped { text: String::new(), budget, lines: 0, full: false, omitted: 0 }
    }

    /// No budget: everything is kept.
    pub fn unbounded() -> Capped {
        Capped::new(usize::MAX)
    }

    /// Whether the budget is spent: later lines are only counted.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Spends the budget: every later line is only counted.
    pub fn stop(&mut self) {
        self.full = true;
    }

    /// The lines left out whole.
    pub fn omitted(&self) -> usize {
        self.omitted
    }

    /// The bytes the next line may take (its separating newline counted).
    pub fn room(&self) -> usize {
        if self.full {
            return 0;
        }
        let sep = usize::from(self.lines > 0);
        self.budget.saturating_sub(self.text.len() + sep)
    }

    /// Whether a line of `len` bytes fits whole.
    pub fn fits(&self, len: usize) -> bool {
        !self.full && len <= self.room()
    }

    /// Adds one line (it must hold no newline; a line with newlines counts as one).
    pub fn line(&mut self, line: &str) {
        if self.full {
            self.omitted += 1;
            return;
        }
        let room = self.room();
        if line.len() <= room {
            self.push_line(line);
            return;
        }
        self.full = true;
        if room >= MIN_CUT {
            let cut = floor_char_boundary(line, room - ELLIPSIS.len());
            let kept = format!("{}{ELLIPSIS}", &line[..cut]);
            self.push_line(&kept);
        } else {
            self.omitted += 1;
        }
    }

    /// Adds a line built by `build` only when there is room for some of it: `build` gets the
    /// bytes it may take (more is cut).
    pub fn line_with(&mut self, build: impl FnOnce(usize) -> String) {
        if self.full {
            self.omitted += 1;
        } else {
            let line = build(self.room());
            self.line(&line);
        }
    }

    /// Counts `n` lines that were never built, after the budget was spent.
    pub fn skip(&mut self, n: usize) {
        if n > 0 {
            debug_assert!(self.full, "skip only after the budget is spent");
            self.full = true;
            self.omitted += n;
        }
    }

    /// Every line of `text`.
    pub fn text(&mut self, text: &str) {
        for line in text.split('\n') {
            self.line(line);
        }
    }

    fn push_line(&mut self, line: &str) {
        if self.lines > 0 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.lines += 1;
    }

    /// The text kept.
    pub fn into_text(self) -> String {
        self.text
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// The largest index not above `at` that is a character boundary of `s`.
pub fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0)
}

/// `s` cut to at most `max` bytes, at a character boundary.
pub fn prefix(s: &str, max: usize) -> &str {
    &s[..floor_char_boundary(s, max)]
}

/// The line that ends a read cut at the output limit: how much was left out and why.
pub fn cut_notice(omitted_lines: usize, limit: usize) -> String {
    let setting = Setting::OutputSize.name();
    match omitted_lines {
        0 => format!("… output limit of {limit} bytes reached ({setting})"),
        1 => format!("… 1 more line not shown: output limit of {limit} bytes reached ({setting})"),
        n => format!("… {n} more lines not shown: output limit of {limit} bytes reached ({setting})"),
    }
}

/// Bytes of the output limit kept for the lines that close a cut read: the notice, a frame's
/// end and the writ's last block (each well under it).
pub const OUTPUT_RESERVE: usize = 512;

/// A model's text (a tool's result text) cut to the output limit: unchanged when it fits;
/// else its first bytes, then the notice. Never longer than `limit`.
pub fn cap_text(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut capped = Capped::new(limit.saturating_sub(OUTPUT_RESERVE));
    for line in text.split('\n') {
        if capped.is_full() {
            capped.skip(1);
        } else {
            capped.line(line);
        }
    }
    let omitted = capped.omitted();
    let mut out = capped.into_text();
    out.push('\n');
    out.push_str(&cut_notice(omitted, limit));
    out
}

/// The sentence a list read that stopped at its limits adds for a model: how many todos it
/// shows, how many it left out, and which settings stopped it.
pub fn omitted_note(shown: usize, omitted: u64) -> String {
    format!(
        "… and {omitted} more todo{} not shown (this read shows {shown}: it stops at {} todos or {} bytes of text, whichever comes first)",
        if omitted == 1 { "" } else { "s" },
        Setting::ReadTodos.name(),
        Setting::OutputSize.name()
    )
}

/// The sentence a whole-list write adds to its answer when the list holds todos a read of it
/// does not show (`kept` of them): it changed, deleted or archived none of those, only the
/// todos a read shows.
pub fn kept_note(kept: u64) -> String {
    format!(
        "… kept {kept} more todo{} as {} (a read of this list does not show {}: it stops at {} todos or {} bytes of text, whichever comes first); a whole-list write changes only the todos a read shows",
        if kept == 1 { "" } else { "s" },
        if kept == 1 { "it is" } else { "they are" },
        if kept == 1 { "it" } else { "them" },
        Setting::ReadTodos.name(),
        Setting::OutputSize.name()
    )
}

/// Whether `text` is one of the notes a cut read or a write that kept todos adds
/// (`omitted_note`, `kept_note`): a model that copies a read back whole may send it as an
/// item, and a whole-list write makes no todo of it.
pub fn is_list_note(text: &str) -> bool {
    let t = text.trim();
    let settings = format!("{} todos or {} bytes of text", Setting::ReadTodos.name(), Setting::OutputSize.name());
    (t.starts_with("… and ") || t.starts_with("… kept ")) && t.contains(&settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn the_column_limits_describe_their_columns_as_released() {
        assert_eq!(Setting::SubjectLength.bounds(), "Longest subject or active_form of a todo, in characters.");
        assert_eq!(
            Setting::TextLength.bounds(),
            "Longest description, outcome, completion_criteria, notes or plan of a todo, in characters."
        );
        assert_eq!(
            Setting::NameLength.bounds(),
            "Longest conversation_id, turn_id, agent_id, agent_type, owner, external_id, claimed_by or issue_type of a todo, in characters."
        );
        let released = [
            ("subject", Some(Setting::SubjectLength)),
            ("active_form", Some(Setting::SubjectLength)),
            ("notes", Some(Setting::TextLength)),
            ("claimed_by", Some(Setting::NameLength)),
            ("issue_type", Some(Setting::NameLength)),
            ("metadata", Some(Setting::MetadataSize)),
            ("labels", Some(Setting::MetadataSize)),
            ("tenant_id", None),
            ("status", None),
            ("position", None),
            ("no_such_column", None),
        ];
        for (column, setting) in released {
            assert_eq!(column_setting(column), setting, "{column}");
        }
        let text_columns: Vec<&str> = columns::TABLE.iter().filter(|c| c.limit.is_some()).map(|c| c.name).collect();
        assert_eq!(text_columns.len(), 17);
    }

    #[test]
    fn every_setting_has_a_name_a_default_and_a_range() {
        let mut names: Vec<&str> = Setting::ALL.iter().map(|s| s.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Setting::ALL.len(), "names are unique");
        for s in Setting::ALL {
            assert!(s.name().starts_with("todo.max_"), "{s:?}");
            assert!(s.min_value() <= s.default_value() && s.default_value() <= s.max_value(), "{s:?}");
            assert!(s.max_value() <= i32::MAX as usize, "{s:?}: a GUC is an int");
            assert!(s.bounds().ends_with('.'), "{s:?}");
        }
        assert_eq!(Setting::SubjectLength.default_value(), 1000);
        assert_eq!(Setting::TextLength.default_value(), 20_000);
        assert_eq!(Setting::MetadataSize.default_value(), 65_536);
        assert_eq!(Setting::MessageSize.default_value(), 262_144);
        assert_eq!(Setting::WritCommands.default_value(), 200);
        assert_eq!(Setting::OutputSize.default_value(), 1_048_576);
        assert!(Setting::OutputSize.min_value() >= 2 * OUTPUT_RESERVE);
    }

    #[test]
    fn free_text_columns_have_a_limit_and_the_others_none() {
        for (column, setting) in [
            ("subject", Setting::SubjectLength),
            ("active_form", Setting::SubjectLength),
            ("description", Setting::TextLength),
            ("outcome", Setting::TextLength),
            ("completion_criteria", Setting::TextLength),
            ("conversation_id", Setting::NameLength),
            ("turn_id", Setting::NameLength),
            ("agent_id", Setting::NameLength),
            ("agent_type", Setting::NameLength),
            ("owner", Setting::NameLength),
            ("external_id", Setting::NameLength),
            ("claimed_by", Setting::NameLength),
            ("metadata", Setting::MetadataSize),
        ] {
            assert_eq!(column_setting(column), Some(setting), "{column}");
            assert!(setting.is_column());
            assert_eq!(setting.sqlstate(), "22001");
        }
        for column in ["tenant_id", "id", "status", "priority", "position", "version", "fence", "created_at"] {
            assert_eq!(column_setting(column), None, "{column}");
        }
        for s in [Setting::MessageSize, Setting::WritCommands, Setting::ArgumentsSize, Setting::BodySize] {
            assert!(!s.is_column());
            assert_eq!(s.sqlstate(), "54000");
        }
    }

    #[test]
    fn a_column_over_its_limit_is_the_callers_data() {
        use crate::error::{disposition, Disposition};
        // raised by the row trigger inside a writ command or a tool call: the runner turns it
        // into that command's ERR: line or the tool's error object, never an aborted call
        assert_eq!(disposition(FIELD_TOO_LONG), Disposition::Answer);
        // the whole inputs are answered by the surfaces before anything runs; were one raised,
        // it would not be mistaken for the caller's data
        assert_eq!(disposition(INPUT_TOO_LARGE), Disposition::Raise);
    }

    #[test]
    fn a_refusal_says_the_size_the_limit_and_the_setting() {
        let e = check(Setting::SubjectLength, "subject", 2000, 1000).unwrap_err();
        assert_eq!(
            e.to_string(),
            "subject is 2000 characters long; the limit is 1000 characters (todo.max_subject_length)"
        );
        assert_eq!(e.sqlstate(), "22001");
        assert_eq!(
            e.hint(),
            "shorten it; a superuser can raise todo.max_subject_length (SET, ALTER ROLE … SET or ALTER DATABASE … SET)"
        );
        assert!(check(Setting::SubjectLength, "subject", 1000, 1000).is_ok(), "the limit itself is allowed");
        let e = check(Setting::TextLength, "description", 20_001, 20_000).unwrap_err();
        assert_eq!(
            e.to_string(),
            "description is 20001 characters long; the limit is 20000 characters (todo.max_text_length)"
        );
        let e = Exceeded {
            what: "metadata".into(),
            setting: Setting::MetadataSize,
            size: Size::AtLeast(65536),
            limit: 65536,
        };
        assert_eq!(
            e.to_string(),
            "metadata is more than 65536 bytes of JSON; the limit is 65536 bytes (todo.max_metadata_size)"
        );
        let e = check(Setting::MessageSize, "message", 300_000, 262_144).unwrap_err();
        assert_eq!(e.to_string(), "message is 300000 bytes; the limit is 262144 bytes (todo.max_message_size)");
        assert_eq!(e.sqlstate(), "54000");
        assert!(e.hint().starts_with("send the /todo commands in several messages"));
        let e = check(Setting::WritCommands, "message", 201, 200).unwrap_err();
        assert_eq!(e.to_string(), "message has 201 /todo commands; the limit is 200 commands (todo.max_writ_commands)");
        let e = check(Setting::ArgumentsSize, "TaskCreate: arguments", 20_000_000, 1_048_576).unwrap_err();
        assert_eq!(
            e.to_string(),
            "TaskCreate: arguments are 20000000 bytes; the limit is 1048576 bytes (todo.max_arguments_size)"
        );
        let e = check(Setting::BodySize, "body", 2_000_000, 1_048_576).unwrap_err();
        assert_eq!(e.to_string(), "body is 2000000 bytes; the limit is 1048576 bytes (todo.max_body_size)");
        assert!(e.hint().contains("todo.max_body_size"));
    }

    /// The tokens `JsonbIteratorNext` gives for a value (keys in jsonb's order do not matter
    /// for the length).
    fn tokens(v: &Value, top: bool, in_object: bool, out: &mut Vec<JsonToken>) {
        let scalar = |v: &Value| match v {
            Value::String(s) => json_string_len(s.as_bytes()),
            other => other.to_string().len(),
        };
        match v {
            Value::Object(map) => {
                out.push(JsonToken::BeginObject);
                for (k, v) in map {
                    out.push(JsonToken::Key(json_string_len(k.as_bytes())));
                    tokens(v, false, true, out);
                }
                out.push(JsonToken::EndObject);
            }
            Value::Array(items) => {
                out.push(JsonToken::BeginArray { raw_scalar: false });
                for v in items {
                    tokens(v, false, false, out);
                }
                out.push(JsonToken::EndArray { raw_scalar: false });
            }
            other if top => {
                out.push(JsonToken::BeginArray { raw_scalar: true });
                out.push(JsonToken::Elem(scalar(other)));
                out.push(JsonToken::EndArray { raw_scalar: true });
            }
            other if in_object => out.push(JsonToken::Value(scalar(other))),
            other => out.push(JsonToken::Elem(scalar(other))),
        }
    }

    fn measured(v: &Value) -> usize {
        let mut toks = Vec::new();
        tokens(v, true, false, &mut toks);
        let mut len = JsonTextLength::new();
        for t in toks {
            len.push(t);
        }
        len.len()
    }

    #[test]
    fn json_text_is_measured_as_postgresql_prints_it() {
        // the strings are what `SELECT '<json>'::jsonb::text` prints
        for (value, printed) in [
            (json!({}), "{}"),
            (json!([]), "[]"),
            (json!({"a": 1}), r#"{"a": 1}"#),
            (json!({"a": 1, "b": [1, 2, {"c": null}], "d": {}}), r#"{"a": 1, "b": [1, 2, {"c": null}], "d": {}}"#),
            (json!([[], [[]], {"x": [true, false]}]), r#"[[], [[]], {"x": [true, false]}]"#),
            (json!({"k": {"n": {"m": "v"}}, "z": []}), r#"{"k": {"n": {"m": "v"}}, "z": []}"#),
            (json!("top"), r#""top""#),
            (json!(7), "7"),
            (json!({"s": "a\"b\\c\nd\u{1}é"}), "{\"s\": \"a\\\"b\\\\c\\nd\\u0001é\"}"),
        ] {
            assert_eq!(measured(&value), printed.len(), "{printed}");
        }
        assert_eq!(json_string_len(b"\x08\x0c\x1f"), 2 + 2 + 2 + 6);
        assert_eq!(json_string_len("ü".as_bytes()), 4);
    }

    #[test]
    fn capped_text_never_passes_its_budget() {
        for budget in [0, 1, 15, 16, 17, 40, 100, 1000] {
            let mut c = Capped::new(budget);
            for i in 0..50 {
                c.line(&format!("line {i} {}", "ü".repeat(i)));
            }
            assert!(c.as_str().len() <= budget, "{budget}");
            assert!(c.is_full(), "{budget}");
            assert!(c.omitted() > 0, "{budget}");
        }
        let mut c = Capped::new(30);
        c.line("one");
        c.line("two");
        assert_eq!((c.as_str(), c.is_full(), c.room()), ("one\ntwo", false, 22));
        c.line("a line much longer than the budget");
        assert!(c.is_full());
        assert_eq!(c.as_str(), "one\ntwo\na line much longer …");
        c.line("more");
        c.line_with(|_| unreachable!("nothing is built after the budget is spent"));
        c.skip(3);
        assert_eq!(c.omitted(), 5);
        let mut small = Capped::new(12);
        small.line("0123456789");
        small.line("too long for the rest");
        assert_eq!((small.as_str(), small.omitted()), ("0123456789", 1), "under MIN_CUT left: left out");
        let mut u = Capped::unbounded();
        u.text("a\nb\n");
        assert_eq!(u.into_text(), "a\nb\n");
    }

    #[test]
    fn line_with_gets_the_room() {
        let mut c = Capped::new(20);
        c.line("12345");
        c.line_with(|room| {
            assert_eq!(room, 14);
            "x".repeat(room)
        });
        assert_eq!(c.as_str().len(), 20);
        assert!(!c.is_full());
    }

    #[test]
    fn cut_notices() {
        assert_eq!(cut_notice(0, 4096), "… output limit of 4096 bytes reached (todo.max_output_size)");
        assert_eq!(
            cut_notice(1, 4096),
            "… 1 more line not shown: output limit of 4096 bytes reached (todo.max_output_size)"
        );
        assert_eq!(
            cut_notice(12345, 1048576),
            "… 12345 more lines not shown: output limit of 1048576 bytes reached (todo.max_output_size)"
        );
        assert!(cut_notice(usize::MAX, i32::MAX as usize).len() < OUTPUT_RESERVE / 2);
    }

    #[test]
    fn cap_text_keeps_what_fits() {
        assert_eq!(cap_text("short", 4096), "short");
        let long = (0..10_000).map(|i| format!("task {i}")).collect::<Vec<_>>().join("\n");
        let capped = cap_text(&long, 4096);
        assert!(capped.len() <= 4096, "{}", capped.len());
        assert!(capped.starts_with("task 0\ntask 1\n"));
        assert!(capped.ends_with("reached (todo.max_output_size)"), "{capped}");
        let one_line = "x".repeat(10_000);
        let capped = cap_text(&one_line, 4096);
        assert!(capped.len() <= 4096 && capped.contains("xxx…\n… output limit of 4096 bytes"), "{capped}");
    }

    #[test]
    fn prefixes_cut_at_character_boundaries() {
        assert_eq!(prefix("héllo", 2), "h");
        assert_eq!(prefix("héllo", 3), "hé");
        assert_eq!(prefix("héllo", 100), "héllo");
        assert_eq!(floor_char_boundary("ü", 1), 0);
    }

    #[test]
    fn list_notes_are_recognised_and_nothing_else_is() {
        assert!(is_list_note(&omitted_note(53, 7)));
        assert!(is_list_note(&format!("  {}\n", kept_note(1))));
        assert!(kept_note(7).starts_with("… kept 7 more todos as they are"));
        assert!(kept_note(1).starts_with("… kept 1 more todo as it is"));
        assert!(!is_list_note("… and 7 more todos"));
        assert!(!is_list_note("write the todo.max_read_todos docs"));
    }

    #[test]
    fn omitted_note_counts_and_names_the_settings() {
        assert_eq!(
            omitted_note(1000, 99_000),
            "… and 99000 more todos not shown (this read shows 1000: it stops at todo.max_read_todos todos or todo.max_output_size bytes of text, whichever comes first)"
        );
        assert!(omitted_note(3, 1).starts_with("… and 1 more todo not shown"));
    }
}
