//! JSON values handed to PostgreSQL as jsonb, built in place: the event log's `changes` and
//! the replies of the functions that return jsonb (`Jsonb`). pgrx's `JsonB` prints the value
//! as JSON text and has `jsonb_in` parse it again, which cost more than the rest of a small
//! reply's work.

use pgrx::prelude::*;
use serde_json::Value;

/// A function's jsonb result, built in place. The same jsonb as pgrx's `JsonB` gives (keys
/// sorted and unique as jsonb keeps them, numbers as `jsonb_in` reads them); a value with a
/// NUL character in a string (which jsonb refuses) goes through `JsonB`, for its error.
pub struct Jsonb(pub Value);

pgrx::impl_sql_translatable!(Jsonb, "jsonb");

// SAFETY: returns the datum `datum` builds, a jsonb in the current memory context, as pgrx's
// `JsonB` does.
unsafe impl pgrx::callconv::BoxRet for Jsonb {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut pgrx::callconv::FcInfo<'fcx>) -> pgrx::datum::Datum<'fcx> {
        if has_nul(&self.0) {
            return unsafe { pgrx::JsonB(self.0).box_into(fcinfo) };
        }
        unsafe { fcinfo.return_raw_datum(datum(&self.0)) }
    }
}

/// Whether a string of `value` (a key or a value) holds a NUL character.
fn has_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => s.contains('\0'),
        Value::Array(items) => items.iter().any(has_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || has_nul(v)),
        _ => false,
    }
}

/// `value` as a jsonb datum, built in place (no JSON text printed and parsed again); numbers
/// as `jsonb_in` reads the text serde_json prints for them. No string of `value` holds a NUL
/// character (see `Jsonb`).
pub fn datum(value: &Value) -> pg_sys::Datum {
    let mut state: *mut pg_sys::JsonbParseState = std::ptr::null_mut();
    // SAFETY: every JsonbValue pushed points into `value`, which outlives the conversion
    // (JsonbValueToJsonb copies it all into the result).
    unsafe {
        let root = match value {
            Value::Object(_) | Value::Array(_) => push(&mut state, pg_sys::JsonbIteratorToken::WJB_VALUE, value),
            // a scalar alone: JsonbValueToJsonb wraps it as jsonb keeps a scalar document
            scalar => return pg_sys::Datum::from(pg_sys::JsonbValueToJsonb(&mut scalar_value(scalar))),
        };
        pg_sys::Datum::from(pg_sys::JsonbValueToJsonb(root))
    }
}

/// Pushes `value` as `token` (a key's value, an array element); a container is pushed whole.
///
/// # Safety
/// `state` is a parse state being built; `value` outlives it.
unsafe fn push(state: *mut *mut pg_sys::JsonbParseState, token: u32, value: &Value) -> *mut pg_sys::JsonbValue {
    use pg_sys::JsonbIteratorToken::*;
    unsafe {
        match value {
            Value::Object(map) => {
                pg_sys::pushJsonbValue(state, WJB_BEGIN_OBJECT, std::ptr::null_mut());
                for (key, item) in map {
                    let mut key = string(key);
                    pg_sys::pushJsonbValue(state, WJB_KEY, &mut key);
                    push(state, WJB_VALUE, item);
                }
                pg_sys::pushJsonbValue(state, WJB_END_OBJECT, std::ptr::null_mut())
            }
            Value::Array(items) => {
                pg_sys::pushJsonbValue(state, WJB_BEGIN_ARRAY, std::ptr::null_mut());
                for item in items {
                    push(state, WJB_ELEM, item);
                }
                pg_sys::pushJsonbValue(state, WJB_END_ARRAY, std::ptr::null_mut())
            }
            scalar => {
                let mut scalar = scalar_value(scalar);
                pg_sys::pushJsonbValue(state, token, &mut scalar)
            }
        }
    }
}

fn string(s: &str) -> pg_sys::JsonbValue {
    let mut v = pg_sys::JsonbValue { type_: pg_sys::jbvType::jbvString, ..Default::default() };
    v.val.string = pg_sys::JsonbValue__bindgen_ty_1__bindgen_ty_1 { len: s.len() as i32, val: s.as_ptr() as *mut _ };
    v
}

/// A scalar (not an object or an array) as a JsonbValue.
fn scalar_value(value: &Value) -> pg_sys::JsonbValue {
    let mut v = pg_sys::JsonbValue::default();
    match value {
        Value::String(s) => return string(s),
        Value::Null => v.type_ = pg_sys::jbvType::jbvNull,
        Value::Bool(b) => {
            v.type_ = pg_sys::jbvType::jbvBool;
            v.val.boolean = *b;
        }
        Value::Number(n) => {
            v.type_ = pg_sys::jbvType::jbvNumeric;
            // SAFETY: builds a numeric from an integer, or from the number's text as numeric_in reads it
            v.val.numeric = unsafe {
                match n.as_i64() {
                    Some(i) => pg_sys::int64_to_numeric(i),
                    None => {
                        let text = std::ffi::CString::new(n.to_string()).expect("a number has no NUL");
                        let datum = pgrx::direct_function_call_as_datum(
                            pg_sys::numeric_in,
                            &[text.as_c_str().into_datum(), pg_sys::InvalidOid.into_datum(), (-1i32).into_datum()],
                        )
                        .expect("numeric_in gives a numeric");
                        datum.cast_mut_ptr()
                    }
                }
            };
        }
        Value::Object(_) | Value::Array(_) => unreachable!("containers are pushed by push"),
    }
    v
}

/// How many arrays and objects deep serde_json reads JSON text (its recursion limit): a value
/// nested this deep or deeper is refused by `value`, as `serde_json::from_str` refuses its text.
const READ_DEPTH: usize = 128;

/// A container being read by `value`: an array's items, or an object's fields and the key
/// whose value comes next.
enum Open {
    Array(Vec<Value>),
    Object(serde_json::Map<String, Value>, Option<String>),
}

/// Why `value` did not read a jsonb document: where `serde_json::from_str` fails on its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// arrays and objects nested `READ_DEPTH` or more deep
    TooDeep,
    /// a number serde_json cannot hold (`1e400`)
    Number,
}

/// What a number serde_json cannot hold is called in an error ("arguments hold …", "body
/// holds …").
pub const NUMBER_OUT_OF_RANGE: &str = "a number out of range (at most about 1.8e308 in magnitude)";

impl Unreadable {
    /// Why serde_json refused a JSON text (one PostgreSQL accepted as json: nesting or a
    /// number is all it can refuse).
    pub fn of(e: &serde_json::Error) -> Unreadable {
        if e.to_string().starts_with("number out of range") {
            Unreadable::Number
        } else {
            Unreadable::TooDeep
        }
    }
}

/// A jsonb document as a JSON value, read in place: the value `serde_json::from_str` gives of
/// its text (`jsonb_out`), without printing and parsing the text; where that parse fails, why.
///
/// # Safety
/// `jsonb` points to a detoasted jsonb.
pub unsafe fn value(jsonb: *mut pg_sys::Jsonb) -> Result<Value, Unreadable> {
    use pg_sys::JsonbIteratorToken::*;
    unsafe {
        let mut it = pg_sys::JsonbIteratorInit(&mut (*jsonb).root);
        let mut v = std::mem::zeroed::<pg_sys::JsonbValue>();
        let mut open: Vec<Open> = Vec::new();
        loop {
            let token = pg_sys::JsonbIteratorNext(&mut it, &mut v, false);
            let done = match token {
                WJB_DONE => return Err(Unreadable::TooDeep),
                WJB_BEGIN_ARRAY | WJB_BEGIN_OBJECT => {
                    if token == WJB_BEGIN_ARRAY && v.val.array.rawScalar {
                        // a scalar document is an array of one marked raw: its element (with
                        // no container open) is the value
                        continue;
                    }
                    if open.len() + 1 >= READ_DEPTH {
                        return Err(Unreadable::TooDeep);
                    }
                    open.push(if token == WJB_BEGIN_ARRAY {
                        Open::Array(Vec::with_capacity(usize::try_from(v.val.array.nElems).unwrap_or(0)))
                    } else {
                        Open::Object(serde_json::Map::new(), None)
                    });
                    continue;
                }
                WJB_KEY => {
                    if let Some(Open::Object(_, key)) = open.last_mut() {
                        *key = Some(text(&v));
                    }
                    continue;
                }
                WJB_END_ARRAY => match open.pop() {
                    Some(Open::Array(items)) => Value::Array(items),
                    _ => unreachable!("jsonb's iterator closes the array it opened"),
                },
                WJB_END_OBJECT => match open.pop() {
                    Some(Open::Object(fields, _)) => Value::Object(fields),
                    _ => unreachable!("jsonb's iterator closes the object it opened"),
                },
                _ => scalar(&v).ok_or(Unreadable::Number)?,
            };
            match open.last_mut() {
                None => return Ok(done),
                Some(Open::Array(items)) => items.push(done),
                Some(Open::Object(fields, key)) => {
                    fields.insert(key.take().unwrap_or_default(), done);
                }
            }
        }
    }
}

/// A jsonb string's text (jsonb holds the database's encoding; read as `jsonb_out`'s text
/// was, lossily as UTF-8).
///
/// # Safety
/// `v` is a string JsonbValue the iterator gave.
unsafe fn text(v: &pg_sys::JsonbValue) -> String {
    unsafe {
        let s = v.val.string;
        let bytes = std::slice::from_raw_parts(s.val.cast::<u8>(), usize::try_from(s.len).unwrap_or(0));
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// A jsonb scalar as a JSON value; a number as serde_json reads `numeric_out`'s text (None:
/// one it cannot hold).
///
/// # Safety
/// `v` is a scalar JsonbValue the iterator gave.
unsafe fn scalar(v: &pg_sys::JsonbValue) -> Option<Value> {
    unsafe {
        Some(match v.type_ {
            pg_sys::jbvType::jbvString => Value::String(text(v)),
            pg_sys::jbvType::jbvBool => Value::Bool(v.val.boolean),
            pg_sys::jbvType::jbvNumeric => {
                let printed = pgrx::direct_function_call::<&std::ffi::CStr>(
                    pg_sys::numeric_out,
                    &[Some(pg_sys::Datum::from(v.val.numeric.cast::<std::ffi::c_void>()))],
                )?;
                let number = serde_json::from_slice::<Value>(printed.to_bytes()).ok();
                pg_sys::pfree(printed.as_ptr().cast_mut().cast());
                number?
            }
            _ => Value::Null,
        })
    }
}
