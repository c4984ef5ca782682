//! Compression and revalidation, pure but for the middleware `json`:
//!
//! - A client whose `Accept-Encoding` takes gzip (`gzip` or `x-gzip`, else `*`, with a q above
//!   0; names and parameters in any case: RFC 9110 §12.5.3) gets the JSON answers of the routes
//!   `json` wraps, and the board's files, gzipped, when they are at least `MIN_SIZE` bytes;
//!   every such answer says `Vary: Accept-Encoding`, compressed or not. No header, an empty
//!   one, `gzip;q=0`: identity. The event stream and `/mcp` are never wrapped.
//! - `json` compresses only a body whose whole length is known (the routes build it in memory,
//!   `json_response`): it never waits on a stream, and never holds more than the body and its
//!   gzip. A body of `INLINE_SIZE` bytes or more is compressed off the runtime's threads.
//! - The board's files carry a strong ETag, a hash of their text (`etag`), and are
//!   revalidated: `If-None-Match` is matched by weak comparison, lists and `*` included
//!   (`none_match`, RFC 9110 §13.1.2).

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use flate2::write::GzEncoder;
use flate2::Compression;
use http_body::Body as _;
use std::io::Write;

use crate::db::errors::ApiError;

/// The smallest body compressed: below it, gzip's header and the round trip save nothing.
pub const MIN_SIZE: usize = 1024;

/// The largest body compressed on the runtime's own thread (about a millisecond's work).
const INLINE_SIZE: usize = 64 * 1024;

/// The level of the answers compressed per request (the board's files, made once, get the best).
const LEVEL: u32 = 5;

/// Whether the request's `Accept-Encoding` (every line of it) takes gzip: `gzip` or `x-gzip`
/// with a q above 0, or, when neither is named, `*` with one. No header, or an empty one:
/// identity only. A coding with a q that is not a number from 0 to 1 is ignored.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let (mut named, mut any) = (None, None);
    for line in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(line) = line.to_str() else { continue };
        for item in line.split(',') {
            let mut params = item.split(';').map(str::trim);
            let coding = params.next().unwrap_or("").to_ascii_lowercase();
            let Some(q) = quality(params) else { continue };
            match coding.as_str() {
                // the highest q of a coding named twice
                "gzip" | "x-gzip" => named = Some(named.map_or(q, |n: f32| n.max(q))),
                "*" => any = Some(any.map_or(q, |a: f32| a.max(q))),
                _ => {}
            }
        }
    }
    named.or(any).is_some_and(|q| q > 0.0)
}

/// The q of a coding's parameters (1 without one); None when it is not a number from 0 to 1.
fn quality<'a>(params: impl Iterator<Item = &'a str>) -> Option<f32> {
    let mut q = 1.0;
    for param in params {
        let Some((name, value)) = param.split_once('=') else { continue };
        if name.trim().eq_ignore_ascii_case("q") {
            q = value.trim().parse::<f32>().ok().filter(|q| (0.0..=1.0).contains(q))?;
        }
    }
    Some(q)
}

/// `text` gzipped at `level` (0 to 9).
pub fn gzip(text: &[u8], level: u32) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(text.len() / 3 + 64), Compression::new(level));
    // writing into a Vec cannot fail
    encoder.write_all(text).expect("gzip into memory");
    encoder.finish().expect("gzip into memory")
}

/// The strong ETag of a text, quoted: the first 20 hex digits of its SHA-256, and `suffix`
/// (a representation of another encoding has a tag of its own).
pub fn etag(text: &[u8], suffix: &str) -> String {
    let hex: String = openssl::sha::sha256(text)[..10].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}{suffix}\"")
}

/// Whether an `If-None-Match` value (`*`, or a list of entity tags, weak or strong) matches
/// `etag` (quoted, strong) by weak comparison: the request's copy is current, the answer 304.
/// A value that does not parse matches nothing (the file is sent whole).
pub fn none_match(value: &str, etag: &str) -> bool {
    let mut rest = value.trim();
    if rest == "*" {
        return true;
    }
    while !rest.is_empty() {
        let tag = rest.strip_prefix("W/").unwrap_or(rest);
        let Some(inner) = tag.strip_prefix('"') else { return false };
        let Some(end) = inner.find('"') else { return false };
        if inner[..end] == etag[1..etag.len() - 1] {
            return true;
        }
        rest = inner[end + 1..].trim_start();
        match rest.strip_prefix(',') {
            Some(next) => rest = next.trim_start_matches([' ', '\t', ',']),
            None if rest.is_empty() => {}
            None => return false,
        }
    }
    false
}

/// Middleware over the JSON routes: an answer of `Content-Type: application/json` says `Vary:
/// Accept-Encoding`, and is gzipped when the request takes gzip and its body, whole in
/// memory, has at least `MIN_SIZE` bytes (and shrinks). Any other answer passes unchanged.
pub async fn json(request: Request, next: Next) -> Response {
    let takes_gzip = accepts_gzip(request.headers());
    let response = next.run(request).await;
    let h = response.headers();
    let is_json = h.get(header::CONTENT_TYPE).is_some_and(|t| t.as_bytes().starts_with(b"application/json"));
    if !is_json || h.contains_key(header::CONTENT_ENCODING) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts.headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    let whole = body.size_hint().exact().and_then(|n| usize::try_from(n).ok());
    let Some(size) = whole.filter(|n| takes_gzip && *n >= MIN_SIZE) else {
        return Response::from_parts(parts, body);
    };
    let bytes = match axum::body::to_bytes(body, size).await {
        Ok(bytes) => bytes,
        Err(e) => return ApiError::Internal(format!("reading an answer to compress it: {e}")).into_response(),
    };
    let packed = if size < INLINE_SIZE {
        gzip(&bytes, LEVEL)
    } else {
        let whole = bytes.clone();
        match tokio::task::spawn_blocking(move || gzip(&whole, LEVEL)).await {
            Ok(packed) => packed,
            Err(e) => return ApiError::Internal(format!("compressing an answer: {e}")).into_response(),
        }
    };
    if packed.len() >= bytes.len() {
        return Response::from_parts(parts, Body::from(bytes));
    }
    parts.headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(Bytes::from(packed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(lines: &[&str]) -> bool {
        let mut h = HeaderMap::new();
        for line in lines {
            h.append(header::ACCEPT_ENCODING, HeaderValue::from_str(line).unwrap());
        }
        accepts_gzip(&h)
    }

    #[test]
    fn accept_encoding_is_parsed_as_rfc_9110_says() {
        for yes in [
            &["gzip"][..],
            &["gzip, deflate, br, zstd"],
            &["GZip"],
            &["x-gzip"],
            &["br;q=1.0, gzip;q=0.8, *;q=0.1"],
            &["deflate", "gzip;q=0.5"],
            &["*"],
            &["identity;q=1, *;q=0.5"],
            &["gzip ; Q=0.001"],
            &["gzip;q=0, gzip;q=1"],
            &["gzip;level=9"],
        ] {
            assert!(accepts(yes), "{yes:?}");
        }
        for no in [
            &[][..],
            &[""],
            &["identity"],
            &["br, deflate"],
            &["gzip;q=0"],
            &["gzip; q=0.000"],
            &["GZIP;Q=0"],
            &["*;q=0"],
            &["gzip;q=0, *"],
            &["*, gzip;q=0"],
            &["x-gzip;q=0", "*;q=1"],
            &["gzip;q=2"],
            &["gzip;q=-1"],
            &["gzip;q=nope"],
            &["gzipped", "xgzip"],
        ] {
            assert!(!accepts(no), "{no:?}");
        }
    }

    #[test]
    fn if_none_match_by_weak_comparison() {
        let tag = etag(b"console.log(1)", "");
        assert_eq!(tag.len(), 22);
        assert!(tag.starts_with('"') && tag.ends_with('"') && tag[1..21].chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(tag, etag(b"console.log(1)", ""));
        assert_ne!(tag, etag(b"console.log(2)", ""));
        let gz = etag(b"console.log(1)", "-gzip");
        assert_eq!(gz, format!("{}-gzip\"", &tag[..21]));
        let bare = &tag[1..21];
        for hit in [
            tag.clone(),
            format!("W/{tag}"),
            "*".to_string(),
            " * ".to_string(),
            format!("\"other\", {tag}"),
            format!("W/\"other\" ,W/{tag}"),
            format!("\"a,b\", {tag}"),
            format!("\"x\",,\t{tag}"),
        ] {
            assert!(none_match(&hit, &tag), "{hit}");
        }
        for miss in [
            String::new(),
            "\"other\"".to_string(),
            format!("\"{bare}-gzip\""),
            bare.to_string(),
            format!("w/{tag}"),
            format!("\"{bare}"),
            format!("\"other\" {tag}"),
            format!("\"other\"; {tag}"),
            "*, \"other\"".to_string(),
        ] {
            assert!(!none_match(&miss, &tag), "{miss}");
        }
        assert!(none_match(&gz, &gz) && !none_match(&gz, &tag) && !none_match(&tag, &gz));
    }

    /// (status, Content-Encoding, Vary, body) of GET `path` of `app`, with `accept` as
    /// Accept-Encoding.
    async fn get(app: &axum::Router, path: &str, accept: Option<&str>) -> (u16, String, String, Bytes) {
        let mut request = Request::builder().uri(path);
        if let Some(a) = accept {
            request = request.header(header::ACCEPT_ENCODING, a);
        }
        let r = tower::ServiceExt::oneshot(app.clone(), request.body(Body::empty()).unwrap()).await.unwrap();
        let text = |name| r.headers().get(name).map_or(String::new(), |v: &HeaderValue| v.to_str().unwrap().into());
        let (status, encoding, vary) = (r.status().as_u16(), text(header::CONTENT_ENCODING), text(header::VARY));
        (status, encoding, vary, axum::body::to_bytes(r.into_body(), usize::MAX).await.unwrap())
    }

    #[tokio::test]
    async fn the_middleware_gzips_whole_json_answers_of_1_kb_or_more() {
        use crate::db::errors::json_response;
        use axum::http::StatusCode;
        use axum::routing::get as route;
        use serde_json::json;
        let answer = |n: usize| json!({"todos": vec!["a todo"; n]});
        let (big, huge) = (answer(200), answer(20_000));
        let app = axum::Router::new()
            .route("/big", route(move || async move { json_response(StatusCode::OK, &big) }))
            .route("/huge", route(move || async move { json_response(StatusCode::NOT_FOUND, &huge) }))
            .route("/small", route(|| async { json_response(StatusCode::OK, &json!({"a": 1})) }))
            .route("/text", route(|| async { "x".repeat(4000) }))
            .route(
                "/stream",
                route(|| async {
                    let chunks = futures::stream::iter([Ok::<_, std::io::Error>("[1,".repeat(2000)), Ok("2]".into())]);
                    ([(header::CONTENT_TYPE, "application/json")], Body::from_stream(chunks))
                }),
            )
            .layer(axum::middleware::from_fn(json));
        for (path, n) in [("/big", 200), ("/huge", 20_000)] {
            let (status, encoding, vary, packed) = get(&app, path, Some("gzip")).await;
            let (_, plain_encoding, plain_vary, plain) = get(&app, path, None).await;
            assert_eq!(
                (encoding.as_str(), vary.as_str(), plain_vary.as_str()),
                ("gzip", "accept-encoding", "accept-encoding")
            );
            assert!(plain_encoding.is_empty() && plain == answer(n).to_string() && packed.len() < plain.len() / 4);
            let mut back = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&packed[..]), &mut back).unwrap();
            assert_eq!((status, back), (if n == 200 { 200 } else { 404 }, plain.to_vec()), "{path}");
            assert_eq!(get(&app, path, Some("gzip;q=0")).await.1, "");
        }
        // under 1 kB: identity, and still Vary; not JSON: untouched; not whole: identity
        let small = get(&app, "/small", Some("gzip")).await;
        assert_eq!((small.1.as_str(), small.2.as_str(), &small.3[..]), ("", "accept-encoding", &b"{\"a\":1}"[..]));
        let text = get(&app, "/text", Some("gzip")).await;
        assert_eq!((text.1.as_str(), text.2.as_str(), text.3.len()), ("", "", 4000));
        let stream = get(&app, "/stream", Some("gzip")).await;
        assert_eq!((stream.1.as_str(), stream.2.as_str(), stream.3.len()), ("", "accept-encoding", 6002));
    }

    #[test]
    fn gzip_round_trips() {
        use std::io::Read;
        let text = "{\"todos\": [".to_string() + &"{\"subject\": \"a todo\"},".repeat(100) + "]}";
        let packed = gzip(text.as_bytes(), LEVEL);
        assert!(packed.len() < text.len() / 4, "{} of {}", packed.len(), text.len());
        let mut back = String::new();
        flate2::read::GzDecoder::new(&packed[..]).read_to_string(&mut back).unwrap();
        assert_eq!(back, text);
    }
}
