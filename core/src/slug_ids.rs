//! Ids made from a task's content, as Mastra's harness makes them (its `assignTaskIds`):
//! `task_` and a slug of the content, so that a model that sends a list without ids gets the
//! same ids back for the same tasks.

use std::collections::{HashMap, HashSet};

/// The longest slug.
const MAX: usize = 48;

/// The slug of a task's content: its ASCII letters and digits, lower-cased, each run of
/// anything else between them one `_`, at most 48 characters (a `_` may end it when the
/// limit falls after one).
pub fn slug(content: &str) -> String {
    let mut slug = String::new();
    let mut separator = false;
    for c in content.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            if separator && !slug.is_empty() && slug.len() < MAX {
                slug.push('_');
            }
            if slug.len() >= MAX {
                break;
            }
            slug.push(c);
            separator = false;
        } else {
            separator = !slug.is_empty();
        }
    }
    slug
}

/// `id`, or `id_2`, `id_3`, … the first neither used nor reserved.
fn unique(id: String, used: &HashSet<String>, reserved: &HashSet<String>) -> String {
    if !used.contains(&id) && !reserved.contains(&id) {
        return id;
    }
    (2..).map(|n| format!("{id}_{n}")).find(|next| !used.contains(next) && !reserved.contains(next)).unwrap_or(id)
}

/// The ids of a list sent whole (`tasks`: each one's id if it has one, and its content), given
/// the list before (`previous`: id and content): an explicit id, its first use in the list;
/// else the id of the one previous task of the same content, when that content is sent once
/// without an id and no task asks for that id explicitly; else `task_<slug>` (`_<n>` for the
/// n-th task of that content), made unique against the ids used and asked for.
pub fn assign_ids(tasks: &[(Option<String>, String)], previous: &[(&str, &str)]) -> Vec<String> {
    let explicit: HashSet<String> = tasks.iter().filter_map(|(id, _)| id.clone()).collect();
    let mut idless: HashMap<&str, usize> = HashMap::new();
    for (id, content) in tasks {
        if id.is_none() {
            *idless.entry(content.as_str()).or_default() += 1;
        }
    }
    let reusable: HashMap<usize, String> = tasks
        .iter()
        .enumerate()
        .filter(|(_, (id, content))| id.is_none() && idless.get(content.as_str()) == Some(&1))
        .filter_map(|(i, (_, content))| {
            let mut matches = previous.iter().filter(|(id, c)| c == content && !explicit.contains(*id));
            match (matches.next(), matches.next()) {
                (Some((only, _)), None) => Some((i, only.to_string())),
                _ => None,
            }
        })
        .collect();
    let reserved: HashSet<String> = explicit.iter().cloned().chain(reusable.values().cloned()).collect();
    let mut used = HashSet::new();
    let mut occurrences: HashMap<&str, usize> = HashMap::new();
    tasks
        .iter()
        .enumerate()
        .map(|(i, (id, content))| {
            let n = occurrences.entry(content.as_str()).or_default();
            *n += 1;
            let slug = slug(content);
            let base = if slug.is_empty() { "item" } else { &slug };
            let fallback = if *n > 1 { format!("task_{base}_{n}") } else { format!("task_{base}") };
            let id = match (id.as_ref().filter(|id| !used.contains(*id)), reusable.get(&i)) {
                (Some(id), _) => id.clone(),
                (None, Some(again)) if !used.contains(again) => again.clone(),
                _ => unique(fallback, &used, &reserved),
            };
            used.insert(id.clone());
            id
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(id: Option<&str>, content: &str) -> (Option<String>, String) {
        (id.map(str::to_string), content.to_string())
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("Fix authentication bug"), "fix_authentication_bug");
        assert_eq!(slug("  Héllo, Wörld!! 2nd-pass "), "h_llo_w_rld_2nd_pass");
        assert_eq!(slug("snake_case-and.dots/slash"), "snake_case_and_dots_slash");
        assert_eq!(slug("!!!"), "");
        assert_eq!(slug(&format!("{} B", "A".repeat(47))), format!("{}_", "a".repeat(47)));
        assert_eq!(slug(&"a ".repeat(40)).len(), 48);
    }

    #[test]
    fn ids_as_mastra_assigns_them() {
        let three = [t(None, "Write tests"), t(None, "Write tests"), t(None, "Write tests")];
        assert_eq!(assign_ids(&three, &[]), ["task_write_tests", "task_write_tests_2", "task_write_tests_3"]);
        // a repeated explicit id: the second gets a made one
        assert_eq!(assign_ids(&[t(Some("dup"), "A"), t(Some("dup"), "B")], &[]), ["dup", "task_b"]);
        // a made id never takes one asked for explicitly
        let mixed = [t(None, "Write tests"), t(Some("task_write_tests"), "Run checks")];
        assert_eq!(assign_ids(&mixed, &[]), ["task_write_tests_2", "task_write_tests"]);
        // one previous task of the same content lends its id; two do not
        assert_eq!(assign_ids(&[t(None, "Review diff")], &[("review", "Review diff")]), ["review"]);
        let ambiguous = [("first", "Review diff"), ("second", "Review diff")];
        assert_eq!(
            assign_ids(&[t(None, "Review diff"), t(None, "Review diff")], &ambiguous),
            ["task_review_diff", "task_review_diff_2"]
        );
        assert_eq!(assign_ids(&[t(None, "!!!"), t(None, "???")], &[]), ["task_item", "task_item_2"]);
        // a collision of a made id with a suffix: the next free one
        let clash = [t(Some("task_write_tests_2"), "x"), t(None, "Write tests"), t(None, "Write tests")];
        assert_eq!(assign_ids(&clash, &[]), ["task_write_tests_2", "task_write_tests", "task_write_tests_2_2"]);
    }
}
