//! `todo.list_as(dialect, conversation)`: a conversation's list as a dialect's tools show it,
//! so that a list written through any dialect reads back in another's shape. Each dialect
//! with a shape declares it (`Dialect::list_as`); `todo.dialects()` lists them.

use pgrx::prelude::*;
use serde_json::Value;

use super::catalog::dialect;
use super::helpers::notice_omitted;
use crate::jsonb::Jsonb;
use crate::ops::Scope;
use crate::session;

/// A conversation's list (in the context's tenant) in `dialect`'s shape (its name or an
/// alias; `todo.dialects()` gives each dialect's `list_shape`). Each shows what its runtime
/// can: a blocked todo is pending where there is no blocked status; canceled todos only
/// where there is a canceled one; archived todos nowhere.
///
/// Errors: 22004 a NULL dialect or conversation; 22023 for a dialect with no list shape (its read tools through `todo.call` read
/// its lists) or none of that name, or when no tenant is in context; 42704 when the tenant
/// is not registered.
#[pg_extern(stable, parallel_restricted, security_definer)]
#[search_path(pg_catalog, todo, pg_temp)]
fn list_as(dialect: Option<&str>, conversation: Option<&str>) -> Jsonb {
    let dialect = crate::errors::required(dialect, "todo.list_as: dialect");
    let conversation = crate::errors::required(conversation, "todo.list_as: conversation");
    let (out, omitted) = session::with_omitted(|| list_shape(dialect, conversation));
    notice_omitted("todo.list_as", omitted);
    Jsonb(out)
}

/// `list_as`' list, in `name`'s shape.
fn list_shape(name: &str, conversation: &str) -> Value {
    match self::dialect(name).and_then(|d| d.list_as.as_ref()) {
        Some(shape) => (shape.read)(&Scope::reading(Some(conversation)), conversation),
        None => crate::errors::raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("todo.list_as: no list shape for dialect \"{name}\""),
            "use a dialect that has one: SELECT name FROM todo.dialects() WHERE list_shape IS NOT NULL lists them (the others read their lists with their own tools through todo.call)",
        ),
    }
}

extension_sql!(
    r#"
COMMENT ON FUNCTION todo.list_as(text, text) IS
    'A conversation''s list in a dialect''s shape: todo.dialects() lists the dialects that have one (list_shape) and what it is. Errors: 22004 a NULL dialect or conversation; 22023 a dialect with no list shape or none of that name, or no tenant in context; 42501 a role bound to another tenant; 42704 tenant not registered.';
"#,
    name = "list_as_comment",
    requires = [list_as]
);
