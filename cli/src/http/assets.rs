//! The board's files, built into the binary: its page (served at `/`), its style sheet and its
//! plain ES modules (served at `/board/<name>`), with no build step. The page holds no inline
//! script, style or event handler, so the board's Content-Security-Policy needs no hash:
//! `script-src 'self'; style-src 'self'`. Each file is served with the strong ETag of its text
//! and, to a client that takes gzip, its gzip: both made once (`served`, `super::encoding`).

use std::sync::LazyLock;

use axum::body::Bytes;

use super::encoding;

/// One file of the board: the path it is served at, its Content-Type, its text.
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub text: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// The board's files: the page (served at `/`) first, then its style and modules (served at `/board/<name>`).
pub const BOARD: &[Asset] = &[
    Asset { path: "/", content_type: "text/html; charset=utf-8", text: include_str!("../../assets/board/index.html") },
    Asset {
        path: "/board/board.css",
        content_type: "text/css; charset=utf-8",
        text: include_str!("../../assets/board/board.css"),
    },
    Asset { path: "/board/main.js", content_type: JS, text: include_str!("../../assets/board/main.js") },
    Asset { path: "/board/actions.js", content_type: JS, text: include_str!("../../assets/board/actions.js") },
    Asset { path: "/board/api.js", content_type: JS, text: include_str!("../../assets/board/api.js") },
    Asset { path: "/board/archived.js", content_type: JS, text: include_str!("../../assets/board/archived.js") },
    Asset { path: "/board/attention.js", content_type: JS, text: include_str!("../../assets/board/attention.js") },
    Asset { path: "/board/bulk.js", content_type: JS, text: include_str!("../../assets/board/bulk.js") },
    Asset { path: "/board/columns.js", content_type: JS, text: include_str!("../../assets/board/columns.js") },
    Asset { path: "/board/detail.js", content_type: JS, text: include_str!("../../assets/board/detail.js") },
    Asset { path: "/board/dom.js", content_type: JS, text: include_str!("../../assets/board/dom.js") },
    Asset { path: "/board/filters.js", content_type: JS, text: include_str!("../../assets/board/filters.js") },
    Asset { path: "/board/focus.js", content_type: JS, text: include_str!("../../assets/board/focus.js") },
    Asset { path: "/board/format.js", content_type: JS, text: include_str!("../../assets/board/format.js") },
    Asset { path: "/board/live.js", content_type: JS, text: include_str!("../../assets/board/live.js") },
    Asset { path: "/board/move.js", content_type: JS, text: include_str!("../../assets/board/move.js") },
    Asset { path: "/board/notes.js", content_type: JS, text: include_str!("../../assets/board/notes.js") },
    Asset { path: "/board/notices.js", content_type: JS, text: include_str!("../../assets/board/notices.js") },
    Asset { path: "/board/reorder.js", content_type: JS, text: include_str!("../../assets/board/reorder.js") },
    Asset { path: "/board/search.js", content_type: JS, text: include_str!("../../assets/board/search.js") },
    Asset { path: "/board/store.js", content_type: JS, text: include_str!("../../assets/board/store.js") },
    Asset { path: "/board/todo.js", content_type: JS, text: include_str!("../../assets/board/todo.js") },
    Asset { path: "/board/views.js", content_type: JS, text: include_str!("../../assets/board/views.js") },
];

/// One representation of a board file: its bytes and their strong ETag (quoted).
pub struct Representation {
    pub bytes: Bytes,
    pub etag: String,
}

/// A board file as served: its text, and its gzip when it has `encoding::MIN_SIZE` bytes or
/// more (at the best level), each with its own ETag, the hash of the text (`-gzip` after the
/// gzip's).
pub struct Served {
    pub asset: &'static Asset,
    pub identity: Representation,
    pub gzip: Option<Representation>,
}

impl Served {
    fn new(asset: &'static Asset) -> Served {
        let text = asset.text.as_bytes();
        let gzip = (text.len() >= encoding::MIN_SIZE).then(|| Representation {
            bytes: Bytes::from(encoding::gzip(text, 9)),
            etag: encoding::etag(text, "-gzip"),
        });
        Served {
            asset,
            identity: Representation { bytes: Bytes::from_static(text), etag: encoding::etag(text, "") },
            gzip,
        }
    }
}

/// The board's files as served, in `BOARD`'s order: hashed and compressed at the first request.
static SERVED: LazyLock<Vec<Served>> = LazyLock::new(|| BOARD.iter().map(Served::new).collect());

/// The board's file served at `path`, if there is one.
pub fn served(path: &str) -> Option<&'static Served> {
    SERVED.iter().find(|s| s.asset.path == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asset(path: &str) -> Option<&'static Asset> {
        BOARD.iter().find(|a| a.path == path)
    }

    /// The values of `attr="…"` in the tags `<tag …>` of an HTML text.
    fn attributes(html: &str, tag: &str, attr: &str) -> Vec<String> {
        let open = format!("<{tag} ");
        let key = format!(" {attr}=\"");
        let mut out = Vec::new();
        for piece in html.split(&open).skip(1) {
            let tag_text = &piece[..piece.find('>').expect("a tag ends")];
            if let Some(at) = tag_text.find(&key) {
                let value = &tag_text[at + key.len()..];
                out.push(value[..value.find('"').expect("a quoted value ends")].to_string());
            }
        }
        out
    }

    /// The modules a module imports: `import … from "./x.js"` and `import "./x.js"`.
    fn imports(js: &str) -> Vec<String> {
        let mut out = Vec::new();
        for statement in js.split("import ").skip(1) {
            let head = &statement[..statement.find(';').unwrap_or(statement.len())];
            let Some(quote) = head.find("\"./") else { continue };
            let name = &head[quote + 3..];
            out.push(name[..name.find('"').expect("a quoted name ends")].to_string());
        }
        out
    }

    /// Whether a text holds ` on<letters>="` (an inline event handler attribute).
    fn has_inline_handler(text: &str) -> bool {
        text.match_indices(" on").any(|(i, _)| {
            let rest = &text[i + 3..];
            let letters = rest.bytes().take_while(|b| b.is_ascii_lowercase()).count();
            letters > 0 && rest[letters..].starts_with("=\"")
        })
    }

    #[test]
    fn the_page_comes_first_and_paths_are_unique() {
        assert_eq!(BOARD[0].path, "/");
        assert!(BOARD[0].content_type.starts_with("text/html"));
        for (i, a) in BOARD.iter().enumerate() {
            assert!(BOARD[i + 1..].iter().all(|b| b.path != a.path), "{} twice", a.path);
            if i > 0 {
                assert!(a.path.starts_with("/board/"), "{}", a.path);
                let kind = if a.path.ends_with(".css") { "text/css" } else { "text/javascript" };
                assert!(a.content_type.starts_with(kind), "{}: {}", a.path, a.content_type);
            }
        }
    }

    #[test]
    fn every_file_named_is_served() {
        let page = BOARD[0].text;
        let scripts = attributes(page, "script", "src");
        let links: Vec<String> =
            attributes(page, "link", "href").into_iter().filter(|h| !h.starts_with("data:")).collect();
        assert!(scripts.contains(&"/board/main.js".to_string()), "{scripts:?}");
        assert!(links.contains(&"/board/board.css".to_string()), "{links:?}");
        for name in scripts.iter().chain(&links) {
            assert!(asset(name).is_some(), "the page names {name}, which is not served");
        }
        for a in BOARD.iter().filter(|a| a.path.ends_with(".js")) {
            for name in imports(a.text) {
                let path = format!("/board/{name}");
                assert!(asset(&path).is_some(), "{} imports {name}, which is not served", a.path);
            }
        }
        // and every module is used: the page's module or one it imports names it
        for a in BOARD.iter().filter(|a| a.path.ends_with(".js")) {
            let name = &a.path["/board/".len()..];
            let named = scripts.iter().any(|s| s == a.path)
                || BOARD.iter().any(|b| b.path.ends_with(".js") && imports(b.text).iter().any(|i| i == name));
            assert!(named, "{} is served but nothing loads it", a.path);
        }
    }

    #[test]
    fn nothing_inline_that_the_policy_would_block() {
        for a in BOARD {
            for (i, _) in a.text.match_indices("<script") {
                let tag_end = i + a.text[i..].find('>').expect("a tag ends");
                assert!(a.text[i..tag_end].contains(" src=\""), "{}: an inline <script> at {i}", a.path);
                assert!(a.text[tag_end + 1..].starts_with("</script>"), "{}: code inside <script src> at {i}", a.path);
            }
            assert!(!a.text.contains("<style"), "{}: an inline <style>", a.path);
            assert!(!a.text.contains(" style=\""), "{}: a style attribute", a.path);
            assert!(!has_inline_handler(a.text), "{}: an inline event handler", a.path);
        }
        assert!(has_inline_handler(r#"<button onclick="x()">"#) && !has_inline_handler(r#"<b one two="x">"#));
    }

    #[test]
    fn every_file_is_tagged_and_its_gzip_is_its_text() {
        use std::io::Read;
        let mut tags = std::collections::HashSet::new();
        for a in BOARD {
            let s = served(a.path).expect("served");
            assert_eq!(s.identity.bytes, a.text.as_bytes());
            let gzip = s.gzip.as_ref().unwrap_or_else(|| panic!("{}: {} bytes, not compressed", a.path, a.text.len()));
            let mut back = String::new();
            flate2::read::GzDecoder::new(&gzip.bytes[..]).read_to_string(&mut back).unwrap();
            assert!(back == a.text && gzip.bytes.len() < a.text.len() / 2, "{}", a.path);
            assert_eq!(gzip.etag, format!("{}-gzip\"", s.identity.etag.trim_end_matches('"')));
            assert!(tags.insert(s.identity.etag.clone()) && tags.insert(gzip.etag.clone()), "{}", a.path);
        }
        assert!(served("/board/nothing.js").is_none());
    }
}
