//! Seed 000's `/v1/todos` routes: which route a method and path name, and the query string.
//! Pure: no pgrx.

#[derive(Debug, PartialEq, Eq)]
pub enum Route {
    Create,
    List,
    PatchMany,
    Get(i64),
    Patch(i64),
    Delete(i64),
}

#[derive(Debug, PartialEq, Eq)]
pub enum RouteError {
    /// 404 `{"error": "not found"}`
    NotFound,
    /// 405 `{"error": "method not allowed"}`
    MethodNotAllowed,
    /// 400 `{"error": "bad todo id"}`
    BadId,
}

/// The route for `method` (any case) and `path` (query string already split off; one
/// trailing slash allowed).
pub fn route(method: &str, path: &str) -> Result<Route, RouteError> {
    let path = path.strip_suffix('/').filter(|p| !p.is_empty()).unwrap_or(path);
    let method = method.to_ascii_uppercase();
    if path == "/v1/todos" {
        return match method.as_str() {
            "POST" => Ok(Route::Create),
            "GET" => Ok(Route::List),
            "PATCH" => Ok(Route::PatchMany),
            _ => Err(RouteError::MethodNotAllowed),
        };
    }
    let Some(id) = path.strip_prefix("/v1/todos/") else { return Err(RouteError::NotFound) };
    if id.contains('/') {
        return Err(RouteError::NotFound);
    }
    let id = parse_id(id).ok_or(RouteError::BadId);
    match method.as_str() {
        "GET" => Ok(Route::Get(id?)),
        "PATCH" => Ok(Route::Patch(id?)),
        "DELETE" => Ok(Route::Delete(id?)),
        _ => Err(RouteError::MethodNotAllowed),
    }
}

/// A todo id in a path or a body: ASCII digits, 1 to i64::MAX.
pub fn parse_id(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>().ok().filter(|id| *id > 0)
}

/// Splits `path?query` and decodes the query's `key=value` pairs (`+` and `%XX` decoded;
/// a key given twice keeps its last value).
pub fn split_query(target: &str) -> (&str, Vec<(String, String)>) {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let pairs = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    (path, pairs)
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match s.get(i + 1..i + 3).filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit())) {
                Some(hex) => {
                    out.push(u8::from_str_radix(hex, 16).expect("two hex digits"));
                    i += 2;
                }
                None => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The last value of `key`, if given.
pub fn param<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes() {
        assert_eq!(route("POST", "/v1/todos"), Ok(Route::Create));
        assert_eq!(route("get", "/v1/todos/"), Ok(Route::List));
        assert_eq!(route("PATCH", "/v1/todos"), Ok(Route::PatchMany));
        assert_eq!(route("GET", "/v1/todos/14"), Ok(Route::Get(14)));
        assert_eq!(route("PATCH", "/v1/todos/14"), Ok(Route::Patch(14)));
        assert_eq!(route("DELETE", "/v1/todos/14"), Ok(Route::Delete(14)));
        assert_eq!(route("DELETE", "/v1/todos"), Err(RouteError::MethodNotAllowed));
        assert_eq!(route("PUT", "/v1/todos/14"), Err(RouteError::MethodNotAllowed));
        assert_eq!(route("GET", "/v1/todo"), Err(RouteError::NotFound));
        assert_eq!(route("GET", "/v1/todos/14/x"), Err(RouteError::NotFound));
        for bad in ["abc", "-1", "0", "1.5", "99999999999999999999", "%31"] {
            assert_eq!(route("GET", &format!("/v1/todos/{bad}")), Err(RouteError::BadId), "{bad}");
        }
    }

    #[test]
    fn query_strings() {
        let (path, q) = split_query("/v1/todos?conversation_id=conv%2042&status=pending&limit=5&limit=7&x");
        assert_eq!(path, "/v1/todos");
        assert_eq!(param(&q, "conversation_id"), Some("conv 42"));
        assert_eq!(param(&q, "status"), Some("pending"));
        assert_eq!(param(&q, "limit"), Some("7"));
        assert_eq!(param(&q, "x"), Some(""));
        assert_eq!(param(&q, "agent_id"), None);
        assert_eq!(split_query("/v1/todos").1, vec![]);
        assert_eq!(decode("a+b%zz%4"), "a b%zz%4");
        assert_eq!(decode("%E2%9C%93"), "✓");
    }
}
