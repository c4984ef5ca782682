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
