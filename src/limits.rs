//! The input size limits as settings (`todo.max_*`, see `pg_todos_core::limits` for what each
//! bounds, its default and its messages), and the row trigger's check of a todo's free-text
//! columns.
//!
//! Every limit is `SUSET`, like `todo.lease_max`: only a superuser sets it (SET, ALTER ROLE …
//! SET, ALTER DATABASE … SET, postgresql.conf), so an agent or an app role cannot raise its
//! own. A value a plain role SETs before the library is loaded is dropped with a WARNING
//! when it loads.

use std::ffi::{CStr, CString};

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::prelude::*;
use pgrx::varlena::{vardata_any, varsize_any, varsize_any_exhdr};

use crate::errors;
use crate::tupdesc::Deformed;
use pg_todos_core::limits::{self as rules, Exceeded, JsonTextLength, JsonToken, Setting, Size};

macro_rules! settings {
    ($($static:ident: $setting:ident, $name:literal;)*) => {
        $(static $static: GucSetting<i32> = GucSetting::<i32>::new(Setting::$setting.default_value() as i32);)*

        /// Each setting with its name and its value's cell.
        fn table() -> [(Setting, &'static CStr, &'static GucSetting<i32>); 10] {
            [$((Setting::$setting, $name, &$static)),*]
        }
    };
}

settings! {
    SUBJECT_LENGTH: SubjectLength, c"todo.max_subject_length";
    TEXT_LENGTH: TextLength, c"todo.max_text_length";
    NAME_LENGTH: NameLength, c"todo.max_name_length";
    METADATA_SIZE: MetadataSize, c"todo.max_metadata_size";
    MESSAGE_SIZE: MessageSize, c"todo.max_message_size";
    WRIT_COMMANDS: WritCommands, c"todo.max_writ_commands";
    ARGUMENTS_SIZE: ArgumentsSize, c"todo.max_arguments_size";
    BODY_SIZE: BodySize, c"todo.max_body_size";
    OUTPUT_SIZE: OutputSize, c"todo.max_output_size";
    READ_TODOS: ReadTodos, c"todo.max_read_todos";
}

/// Registers the limits (from `_PG_init`), so they show in `pg_settings` with what they bound.
pub fn init() {
    for (setting, name, cell) in table() {
        debug_assert_eq!(name.to_str().ok(), Some(setting.name()));
        // PostgreSQL keeps the description pointers: made once per backend, never freed
        let short: &'static CStr = Box::leak(CString::new(setting.bounds()).expect("no NUL").into_boxed_c_str());
        let long: &'static CStr = Box::leak(
            CString::new(format!(
                "Default {}. Only a superuser sets it (SET, ALTER ROLE/DATABASE ... SET, postgresql.conf): agents cannot raise their own limit.",
                setting.default_value()
            ))
            .expect("no NUL")
            .into_boxed_c_str(),
        );
        let unit = if setting.unit() == rules::Unit::Bytes { GucFlags::UNIT_BYTE } else { GucFlags::default() };
        GucRegistry::define_int_guc(
            name,
            short,
            long,
            cell,
            setting.min_value() as i32,
            setting.max_value() as i32,
            GucContext::Suset,
            unit,
        );
    }
}

/// A limit's value in this transaction.
pub fn get(setting: Setting) -> usize {
    let value = table().into_iter().find(|(s, _, _)| *s == setting).map_or(0, |(_, _, cell)| cell.get());
    usize::try_from(value).unwrap_or(0)
}

/// Refuses an input of `size` over `setting`'s limit (`what` names it in the message).
pub fn check(setting: Setting, what: &str, size: usize) -> Result<(), Exceeded> {
    rules::check(setting, what, size, get(setting))
}

/// Raises a limit's error with its SQLSTATE, message and hint. Never returns.
pub fn raise(e: &Exceeded) -> ! {
    errors::raise(errors::sqlstate_code(e.sqlstate()), e.to_string(), e.hint())
}

/// Called by the row trigger of `todo.todos` (`BEFORE INSERT OR UPDATE`) before it changes
/// anything, with the row's values (`new`, and an update's `old`): refuses a free-text column over its limit with 22001 (`todo.max_subject_length`,
/// `todo.max_text_length`, `todo.max_name_length`, `todo.max_metadata_size`), so plain SQL
/// is held to the limits as the surfaces are. On UPDATE only the columns that change are
/// checked: a row stored before the limits (or under a raised one) can still change status.
/// A restore (`row_security = off`) brings rows as they were.
///
/// Measuring never copies a value under its limit: a text's stored size bounds its length
/// (its characters are counted only when its bytes pass the limit), and metadata's JSON text
/// is measured token by token, never built.
///
/// # Safety
/// `desc` is the rows' tuple descriptor, and the values are those of its columns, in order.
pub unsafe fn check_row(desc: pg_sys::TupleDesc, new: &Deformed, old: Option<&Deformed>) {
    // SAFETY: reads a GUC variable of this backend.
    if unsafe { !pg_sys::row_security } {
        return;
    }
    // SAFETY: the caller's
    unsafe {
        for (i, name, _) in crate::tupdesc::columns(desc) {
            let name = name.to_str().unwrap_or_default();
            let Some(setting) = rules::column_setting(name) else { continue };
            let Some(value) = new.get(i) else { continue };
            if old.and_then(|old| old.get(i)).is_some_and(|before| same_bytes(value, before)) {
                continue;
            }
            let limit = get(setting);
            let size = if name == "labels" {
                // an array: its stored size, in bytes
                let bytes = pg_sys::toast_raw_datum_size(value).saturating_sub(pg_sys::VARHDRSZ);
                over(Size::Exact(bytes), limit)
            } else if setting == Setting::MetadataSize {
                over(json_text_size(value, limit), limit)
            } else {
                text_len(value, limit)
            };
            if let Some(size) = size {
                raise(&Exceeded { what: name.to_string(), setting, size, limit });
            }
        }
    }
}

/// Whether two varlena datums are the same bytes as stored (an unchanged column of an
/// UPDATE is the old row's very value: the same TOAST pointer, or the same inline bytes).
unsafe fn same_bytes(a: pg_sys::Datum, b: pg_sys::Datum) -> bool {
    let (a, b) = (a.cast_mut_ptr::<pg_sys::varlena>(), b.cast_mut_ptr::<pg_sys::varlena>());
    let (la, lb) = (varsize_any(a), varsize_any(b));
    la == lb && std::slice::from_raw_parts(a.cast::<u8>(), la) == std::slice::from_raw_parts(b.cast::<u8>(), lb)
}

/// A text value's length in characters when it passes `limit`, else None.
unsafe fn text_len(value: pg_sys::Datum, limit: usize) -> Option<Size> {
    let bytes = pg_sys::toast_raw_datum_size(value).saturating_sub(pg_sys::VARHDRSZ);
    if bytes <= limit {
        return None; // a character is at least one byte
    }
    let text = pg_sys::pg_detoast_datum_packed(value.cast_mut_ptr());
    let len = varsize_any_exhdr(text);
    let chars = pg_sys::pg_mbstrlen_with_len(vardata_any(text), i32::try_from(len).unwrap_or(i32::MAX));
    let chars = usize::try_from(chars).unwrap_or(0);
    if text as usize != value.value() {
        pg_sys::pfree(text.cast()); // a copy (the value was compressed or out of line)
    }
    (chars > limit).then_some(Size::Exact(chars))
}

/// Measuring JSON text stops this far past its limit (its size is then "more than").
const MEASURE_PAST_LIMIT: usize = 16 * 1024 * 1024;

/// `size` when it passes `limit`.
fn over(size: Size, limit: usize) -> Option<Size> {
    match size {
        Size::Exact(n) if n <= limit => None,
        other => Some(other),
    }
}

/// The length of a jsonb value's JSON text (`jsonb::text`), measured token by token (each
/// number printed alone, then freed), never built: exact up to 16 MiB past `limit`, else
/// `AtLeast`. A few bytes of jsonb can print as megabytes (`1e131071` is 131,072 digits).
unsafe fn json_text_size(value: pg_sys::Datum, limit: usize) -> Size {
    let jsonb = pg_sys::pg_detoast_datum(value.cast_mut_ptr()).cast::<pg_sys::Jsonb>();
    let stop = limit.saturating_add(MEASURE_PAST_LIMIT);
    let mut len = JsonTextLength::new();
    let mut it = pg_sys::JsonbIteratorInit(&mut (*jsonb).root);
    let mut v = std::mem::zeroed::<pg_sys::JsonbValue>();
    // whether each open array is a top-level scalar's (the iterator says so only at its start)
    let mut arrays: Vec<bool> = Vec::new();
    loop {
        let token = pg_sys::JsonbIteratorNext(&mut it, &mut v, false);
        let token = match token {
            pg_sys::JsonbIteratorToken::WJB_DONE => break,
            pg_sys::JsonbIteratorToken::WJB_BEGIN_ARRAY => {
                let raw_scalar = v.val.array.rawScalar;
                arrays.push(raw_scalar);
                JsonToken::BeginArray { raw_scalar }
            }
            pg_sys::JsonbIteratorToken::WJB_END_ARRAY => {
                JsonToken::EndArray { raw_scalar: arrays.pop().unwrap_or(false) }
            }
            pg_sys::JsonbIteratorToken::WJB_BEGIN_OBJECT => JsonToken::BeginObject,
            pg_sys::JsonbIteratorToken::WJB_END_OBJECT => JsonToken::EndObject,
            pg_sys::JsonbIteratorToken::WJB_KEY => JsonToken::Key(scalar_len(&v)),
            pg_sys::JsonbIteratorToken::WJB_VALUE => JsonToken::Value(scalar_len(&v)),
            _ => JsonToken::Elem(scalar_len(&v)),
        };
        len.push(token);
        if len.len() > stop {
            // the iterator and the copy, if any, go with the calling function's memory context
            return Size::AtLeast(stop);
        }
    }
    if jsonb as usize != value.value() {
        pg_sys::pfree(jsonb.cast());
    }
    Size::Exact(len.len())
}

/// A jsonb argument read as a JSON value (`jsonb_value_arg`).
pub enum JsonArg {
    /// SQL NULL
    Null,
    Value(serde_json::Value),
    /// one serde_json would not read from its text
    Unreadable(crate::jsonb::Unreadable),
}

/// Jsonb argument `n` (from 0) of the running SQL call as a JSON value, read only when its
/// JSON text fits `setting`'s limit; else the refusal (`Exceeded`, naming `what`), measured
/// without printing the text. For the functions that take jsonb from any caller
/// (`todo.call`, `todo.call_mcp`, `todo.rest`): `jsonb::text` in SQL would print a number
/// such as `1e131071` whole first. The value is read in place (`jsonb::value`): the value its
/// text would parse to, without the text.
///
/// # Safety
/// `fcinfo` is the running call's, and its argument `n` is declared `jsonb` in its SQL.
pub unsafe fn jsonb_value_arg(
    fcinfo: pg_sys::FunctionCallInfo,
    n: usize,
    setting: Setting,
    what: &str,
) -> Result<JsonArg, Exceeded> {
    // SAFETY: the caller's promise (above)
    unsafe {
        let Some(value) = pgrx::fcinfo::pg_getarg_datum(fcinfo, n) else { return Ok(JsonArg::Null) };
        let limit = get(setting);
        if let Some(size) = over(json_text_size(value, limit), limit) {
            return Err(Exceeded { what: what.to_string(), setting, size, limit });
        }
        let jsonb = pg_sys::pg_detoast_datum(value.cast_mut_ptr()).cast::<pg_sys::Jsonb>();
        Ok(crate::jsonb::value(jsonb).map_or_else(JsonArg::Unreadable, JsonArg::Value))
    }
}

/// How `jsonb::text` prints one scalar.
unsafe fn scalar_len(v: &pg_sys::JsonbValue) -> usize {
    match v.type_ {
        pg_sys::jbvType::jbvString => {
            let s = v.val.string;
            let bytes = std::slice::from_raw_parts(s.val.cast::<u8>(), usize::try_from(s.len).unwrap_or(0));
            rules::json_string_len(bytes)
        }
        pg_sys::jbvType::jbvNumeric => {
            let printed = pgrx::direct_function_call_as_datum(
                pg_sys::numeric_out,
                &[Some(pg_sys::Datum::from(v.val.numeric.cast::<std::ffi::c_void>()))],
            );
            printed.map_or(0, |p| {
                let cstr = p.cast_mut_ptr::<std::ffi::c_char>();
                let n = CStr::from_ptr(cstr).to_bytes().len();
                pg_sys::pfree(cstr.cast());
                n
            })
        }
        pg_sys::jbvType::jbvBool if v.val.boolean => 4,
        pg_sys::jbvType::jbvBool => 5,
        _ => 4, // null
    }
}
