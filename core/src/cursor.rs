//! The change feed's cursor: the text of a PostgreSQL `pg_snapshot` (`xmin:xmax:xip,…`), as
//! `todo.changes_since` hands it out. A cursor a caller sends back is checked here before
//! PostgreSQL parses it, so a malformed one gets the store's own error, not `pg_snapshot`'s.

/// The longest cursor accepted, in bytes (a snapshot lists the transactions running when it
/// was taken: a few thousand at most on a busy server).
pub const MAX_CURSOR_BYTES: usize = 64 * 1024;

/// Whether `text` is a snapshot as PostgreSQL writes one: `xmin:xmax:` then the running
/// transactions, comma-separated, strictly ascending, each from xmin (inclusive) to xmax
/// (exclusive); xmin ≤ xmax, neither with the invalid transaction id 0 in its low 32 bits
/// (0, 4294967296, …); decimal digits only (at most 20 each), no spaces.
pub fn is_cursor(text: &str) -> bool {
    if text.len() > MAX_CURSOR_BYTES {
        return false;
    }
    let mut parts = text.splitn(3, ':');
    let (Some(xmin), Some(xmax), Some(xip)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let (Some(xmin), Some(xmax)) = (number(xmin), number(xmax)) else { return false };
    // PostgreSQL's pg_snapshot refuses an xmin or xmax whose transaction id proper (the low 32
    // bits; the high ones are the epoch) is 0, the invalid id: 4294967296 is epoch 1, id 0
    if xmin > xmax || !valid_xid(xmin) || !valid_xid(xmax) {
        return false;
    }
    if xip.is_empty() {
        return true;
    }
    let mut last: Option<u64> = None;
    for x in xip.split(',') {
        let Some(x) = number(x) else { return false };
        if x < xmin || x >= xmax || last.is_some_and(|l| x <= l) {
            return false;
        }
        last = Some(x);
    }
    true
}

/// Whether a full transaction id's 32-bit transaction id is valid (not 0).
fn valid_xid(full: u64) -> bool {
    full & 0xFFFF_FFFF != 0
}

/// A decimal number of 1 to 20 digits that fits in 64 bits.
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 20 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_postgres_writes() {
        for ok in [
            "783:790:785",
            "1:1:",
            "783:790:",
            "783:790:783,785,789",
            "18446744073709551614:18446744073709551615:",
            "4294967297:4294967297:",
        ] {
            assert!(is_cursor(ok), "{ok}");
        }
    }

    #[test]
    fn refuses_anything_else() {
        for bad in [
            "",
            "x",
            "1:2",
            "0:1:",
            "5:4:",
            "1:5:5",
            "1:5:0",
            "2:5:1",
            "1:5:3,3",
            "1:5:4,3",
            "1:5:3,",
            " 1:2:",
            "1:2: ",
            "+1:2:",
            "1:99999999999999999999999:",
            "1:18446744073709551616:",
            "1:2:\u{0}",
            "4294967296:4294967296:",
            "1:4294967296:",
            "4294967296:4294967297:",
        ] {
            assert!(!is_cursor(bad), "{bad:?}");
        }
        assert!(!is_cursor(&format!("1:{}:", "9".repeat(MAX_CURSOR_BYTES))));
    }
}
