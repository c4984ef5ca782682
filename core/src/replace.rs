//! Whole-list replace (seeds 002 and 003, and seed 004's import): which stored todo each
//! incoming item is, so the items that survive keep their identity (timestamps, history).
//! Pure: no pgrx.
//!
//! Matching: first by id (an incoming id that names a stored todo of the list), then by
//! content and place: each remaining item takes the first not-yet-taken stored todo with the
//! same content, in list order. Stored todos nobody took are removed.

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub id: i64,
    pub content: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Incoming {
    pub id: Option<i64>,
    pub content: String,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Plan {
    /// for each incoming item, the stored todo it is (None: a new todo)
    pub matched: Vec<Option<i64>>,
    /// stored todos no incoming item took, in list order
    pub removed: Vec<i64>,
}

pub fn plan(stored: &[Stored], incoming: &[Incoming]) -> Plan {
    let mut taken = vec![false; stored.len()];
    let mut matched: Vec<Option<i64>> = vec![None; incoming.len()];
    for (i, item) in incoming.iter().enumerate() {
        if let Some(id) = item.id {
            if let Some(s) = stored.iter().position(|s| s.id == id) {
                if !taken[s] {
                    taken[s] = true;
                    matched[i] = Some(id);
                }
            }
        }
    }
    for (i, item) in incoming.iter().enumerate() {
        if matched[i].is_some() {
            continue;
        }
        if let Some(s) = (0..stored.len()).find(|&s| !taken[s] && stored[s].content == item.content) {
            taken[s] = true;
            matched[i] = Some(stored[s].id);
        }
    }
    let removed = stored.iter().zip(&taken).filter(|(_, t)| !**t).map(|(s, _)| s.id).collect();
    Plan { matched, removed }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(items: &[(i64, &str)]) -> Vec<Stored> {
        items.iter().map(|(id, c)| Stored { id: *id, content: c.to_string() }).collect()
    }

    fn incoming(items: &[(Option<i64>, &str)]) -> Vec<Incoming> {
        items.iter().map(|(id, c)| Incoming { id: *id, content: c.to_string() }).collect()
    }

    #[test]
    fn same_list_keeps_every_identity() {
        let s = stored(&[(1, "a"), (2, "b"), (3, "c")]);
        let p = plan(&s, &incoming(&[(None, "a"), (None, "b"), (None, "c")]));
        assert_eq!(p, Plan { matched: vec![Some(1), Some(2), Some(3)], removed: vec![] });
    }

    #[test]
    fn reorder_insert_and_remove_by_content() {
        let s = stored(&[(1, "a"), (2, "b"), (3, "c")]);
        let p = plan(&s, &incoming(&[(None, "c"), (None, "new"), (None, "a")]));
        assert_eq!(p, Plan { matched: vec![Some(3), None, Some(1)], removed: vec![2] });
    }

    #[test]
    fn duplicates_pair_up_in_order() {
        let s = stored(&[(1, "x"), (2, "x")]);
        let p = plan(&s, &incoming(&[(None, "x"), (None, "x"), (None, "x")]));
        assert_eq!(p, Plan { matched: vec![Some(1), Some(2), None], removed: vec![] });
    }

    #[test]
    fn ids_win_over_content_and_unknown_ids_fall_back_to_content() {
        let s = stored(&[(1, "a"), (2, "b")]);
        // id 2 renamed to "a"; the other "a" has a foreign id (a ULID) and matches by content
        let p = plan(&s, &incoming(&[(Some(2), "a"), (Some(999), "a")]));
        assert_eq!(p, Plan { matched: vec![Some(2), Some(1)], removed: vec![] });
        // one id named twice: the second is new
        let p = plan(&s, &incoming(&[(Some(1), "a"), (Some(1), "zzz")]));
        assert_eq!(p, Plan { matched: vec![Some(1), None], removed: vec![2] });
    }

    #[test]
    fn empty_list_removes_everything() {
        let s = stored(&[(1, "a"), (2, "b")]);
        assert_eq!(plan(&s, &[]), Plan { matched: vec![], removed: vec![1, 2] });
    }
}
