//! The plain texts Backlog.md 1.52.0's MCP task tools answer with: the task detail
//! (`task_view`, and the results of `task_create`, `task_edit`, `task_complete`,
//! `task_archive`), `task_list`'s status groups, `task_search`'s list, and the error texts,
//! so the dialect keeps one copy of each wording. Pure: no pgrx; the database layer fills a
//! `TaskView` (`TaskView::from_record` plus the few things only the whole list knows: the
//! file's path, the parent's title, the subtasks, the dependency graph) and a `TaskLine` per
//! listed task.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::formats::backlog::{self, format_date, format_date_time};
use crate::interchange::{ChecklistItem, ChecklistKind, Comment, Record};

/// Backlog.md's default statuses, in board order (`config.yml`'s `statuses`).
pub const DEFAULT_STATUSES: [&str; 3] = ["To Do", "In Progress", "Done"];

/// A task named by id and title (a subtask, a parent).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Link {
    pub id: String,
    pub title: String,
}

/// Whether a task the graph names was found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NodeState {
    #[default]
    Resolved,
    /// no task has the id (printed `TASK-99 - unknown task ID`)
    Missing,
    /// several tasks have it (`… - ambiguous task ID`)
    Ambiguous,
}

/// Why a node is printed without its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Repeat {
    /// it is on the path from the root (` (cycle)`)
    Cycle,
    /// it was printed earlier in the tree (` (shown above)`)
    ShownAbove,
}

/// One node of the Dependency Graph tree: a task and, below it, what it depends on (in the
/// `depends_on` tree) or what depends on it (in `dependents`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphNode {
    pub id: String,
    pub title: Option<String>,
    /// the Backlog.md status word
    pub status: Option<String>,
    pub state: NodeState,
    /// finished: in `completed/` or in the last configured status (printed `[completed]`)
    pub completed: bool,
    pub repeat: Option<Repeat>,
    pub children: Vec<GraphNode>,
}

/// One task as `dependency_graph` needs it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphTask {
    pub id: String,
    pub title: String,
    pub status: String,
    /// in `completed/`, or in the last configured status
    pub finished: bool,
    pub dependencies: Vec<String>,
}

/// What the task detail text shows. `from_record` fills all but `file`'s directory, the
/// parent's title, the subtasks and the graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskView {
    /// the path printed after `File: ` (Backlog.md prints the absolute path; `task_archive`
    /// prints the path it had before the move)
    pub file: String,
    pub id: String,
    pub title: String,
    /// the Backlog.md status word (`To Do`, `In Progress`, `Done`, a custom one)
    pub status: String,
    /// as stored: high, medium, low (printed `High`)
    pub priority: Option<String>,
    pub issue_type: Option<String>,
    pub project: Option<String>,
    pub ordinal: Option<f64>,
    /// as stored (`@alice`); one without `@` is printed with one
    pub assignees: Vec<String>,
    pub reporter: Option<String>,
    pub created_us: Option<i64>,
    /// printed only when set (Backlog.md sets it on the first edit)
    pub updated_us: Option<i64>,
    pub due_us: Option<i64>,
    pub labels: Vec<String>,
    pub milestone: Option<String>,
    pub parent: Option<String>,
    /// the parent's title: task_view prints `Parent: TASK-1 - Title`
    pub parent_title: Option<String>,
    /// the direct subtasks, printed by task_view only
    pub subtasks: Vec<Link>,
    pub references: Vec<String>,
    pub documentation: Vec<String>,
    pub modified_files: Vec<String>,
    /// the trees under `Depends on` and `Dependents` (see `dependency_graph`)
    pub depends_on: Vec<GraphNode>,
    pub dependents: Vec<GraphNode>,
    pub description: Option<String>,
    pub checklist: Vec<ChecklistItem>,
    pub plan: Option<String>,
    pub notes: Option<String>,
    pub comments: Vec<Comment>,
    pub outcome: Option<String>,
}

fn extra_strings(record: &Record, key: &str) -> Vec<String> {
    match record.extra.get(key) {
        Some(Value::Array(items)) => items.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        Some(Value::String(s)) if !s.is_empty() => vec![s.clone()],
        _ => Vec::new(),
    }
}

fn extra_string(record: &Record, key: &str) -> Option<String> {
    record.extra.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string)
}

impl TaskView {
    /// The view of a record (its extras read as `formats::backlog` keeps them), printed
    /// with `file` after `File: `.
    pub fn from_record(record: &Record, file: &str) -> TaskView {
        TaskView {
            file: file.to_string(),
            id: record.id.clone(),
            title: record.title.clone(),
            status: backlog::status_word(record),
            priority: record.priority.clone().or_else(|| extra_string(record, "priority")),
            issue_type: record.issue_type.clone(),
            project: extra_string(record, "project"),
            ordinal: record.extra.get("ordinal").and_then(Value::as_f64),
            assignees: backlog::render::assignees(record),
            reporter: extra_string(record, "reporter"),
            created_us: record.created_us,
            updated_us: record.updated_us,
            due_us: record.due_us,
            labels: record.labels.clone(),
            milestone: extra_string(record, "milestone"),
            parent: record.parent.clone(),
            references: extra_strings(record, "references"),
            documentation: extra_strings(record, "documentation"),
            modified_files: extra_strings(record, "modifiedFiles"),
            description: record.description.clone(),
            checklist: record.checklist.clone(),
            plan: record.plan.clone(),
            notes: record.notes.clone(),
            comments: record.comments.clone(),
            outcome: record.outcome.clone(),
            ..TaskView::default()
        }
    }
}

/// A number as JavaScript prints it (`1000`, `1.5`).
fn js_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

/// The status with its icon: `○ To Do`, `◒ In Progress`, `✔ Done`, `● Blocked`,
/// `◆ Review`, `▣ Testing`, `○` for any other word.
pub fn status_with_icon(status: &str) -> String {
    let icon = match status.trim().to_lowercase().as_str() {
        "done" => "✔",
        "in progress" => "◒",
        "blocked" => "●",
        "review" => "◆",
        "testing" => "▣",
        _ => "○",
    };
    format!("{icon} {status}")
}

/// `high` → `High`; any other word title-cased word by word.
pub fn priority_label(priority: &str) -> String {
    priority
        .split(' ')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Backlog.md's task id order (`compareTaskIds`): the numeric segments after the prefix,
/// a missing segment counting 0, then the text.
pub fn compare_ids(a: &str, b: &str) -> Ordering {
    fn segments(id: &str) -> Vec<u64> {
        let body = match id.find('-') {
            Some(i) if i > 0 && id[..i].chars().all(|c| c.is_ascii_alphabetic()) => &id[i + 1..],
            _ => id,
        };
        let parts: Option<Vec<u64>> = body.split('.').map(leading_int).collect();
        if let Some(p) = parts {
            return p;
        }
        let digits: String =
            body.chars().rev().take_while(char::is_ascii_digit).collect::<Vec<_>>().into_iter().rev().collect();
        vec![digits.parse().unwrap_or(0)]
    }
    // JavaScript's parseInt: leading digits
    fn leading_int(s: &str) -> Option<u64> {
        let d: String = s.trim_start().chars().take_while(char::is_ascii_digit).collect();
        d.parse().ok()
    }
    let (x, y) = (segments(a), segments(b));
    for i in 0..x.len().max(y.len()) {
        let (p, q) = (x.get(i).copied().unwrap_or(0), y.get(i).copied().unwrap_or(0));
        if p != q {
            return p.cmp(&q);
        }
    }
    a.to_lowercase().cmp(&b.to_lowercase())
}

/// The canonical `TASK-<n>[.<m>…]` of an id as a caller may give it: `task-1`, `TASK-1`,
/// `1`, `1.2`, `task-01` (leading zeros dropped). None: not a task id.
pub fn parse_id(s: &str) -> Option<String> {
    let t = s.trim();
    let body = match t.get(..5) {
        Some(p) if p.eq_ignore_ascii_case("task-") => &t[5..],
        _ => t,
    };
    let segs: Vec<&str> = body.split('.').collect();
    if segs.iter().any(|g| g.is_empty() || !g.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let canon: Vec<String> = segs
        .iter()
        .map(|g| g.trim_start_matches('0'))
        .map(|g| if g.is_empty() { "0" } else { g }.to_string())
        .collect();
    Some(format!("TASK-{}", canon.join(".")))
}

fn key_of(id: &str) -> String {
    parse_id(id).unwrap_or_else(|| id.trim().to_uppercase())
}

/// The children of a node of the dependency graph: (its key, the node), upward or downward.
type Children<'a> = dyn Fn(&str, bool) -> Vec<(String, GraphNode)> + 'a;

/// The tree under a node of the dependency graph, upward or downward: a node met again a
/// leaf marked `ShownAbove`, one on its own `path` `Cycle`.
fn walk_graph(
    key: &str,
    upward: bool,
    children: &Children<'_>,
    seen: &mut HashSet<String>,
    path: &mut Vec<String>,
) -> Vec<GraphNode> {
    let mut out = Vec::new();
    for (k, mut n) in children(key, upward) {
        if path.contains(&k) {
            n.repeat = Some(Repeat::Cycle);
        } else if seen.contains(&k) {
            n.repeat = Some(Repeat::ShownAbove);
        } else {
            seen.insert(k.clone());
            if n.state == NodeState::Resolved {
                path.push(k.clone());
                n.children = walk_graph(&k, upward, children, seen, path);
                path.pop();
            }
        }
        out.push(n);
    }
    out
}

/// The two trees of a task's Dependency Graph, as Backlog.md builds them from every task
/// (`tasks` holds the root too): what `root_id` depends on, transitively, and what depends
/// on it. Children are in id order; a task met again is a leaf marked `ShownAbove`, one on
/// its own path `Cycle`; a dependency no task has is a `Missing` leaf (two tasks with the
/// id: `Ambiguous`).
pub fn dependency_graph(root_id: &str, tasks: &[GraphTask]) -> (Vec<GraphNode>, Vec<GraphNode>) {
    let mut by_key: HashMap<String, Option<&GraphTask>> = HashMap::new();
    for t in tasks {
        by_key.entry(key_of(&t.id)).and_modify(|slot| *slot = None).or_insert(Some(t));
    }
    let mut dependents: HashMap<String, Vec<String>> = HashMap::new();
    for t in tasks {
        for d in &t.dependencies {
            let list = dependents.entry(key_of(d)).or_default();
            let k = key_of(&t.id);
            if !list.contains(&k) {
                list.push(k);
            }
        }
    }
    let root = key_of(root_id);
    let node = |key: &str, reference: &str| -> GraphNode {
        match by_key.get(key) {
            Some(Some(t)) => GraphNode {
                id: t.id.clone(),
                title: Some(t.title.clone()),
                status: Some(t.status.clone()),
                completed: t.finished,
                ..GraphNode::default()
            },
            Some(None) => GraphNode { id: key.to_string(), state: NodeState::Ambiguous, ..GraphNode::default() },
            None => {
                let id = if reference.trim().is_empty() { key } else { reference.trim() };
                GraphNode { id: id.to_string(), state: NodeState::Missing, ..GraphNode::default() }
            }
        }
    };
    let children = |key: &str, upward: bool| -> Vec<(String, GraphNode)> {
        let mut out: Vec<(String, GraphNode)> = Vec::new();
        if upward {
            if let Some(Some(t)) = by_key.get(key) {
                for d in &t.dependencies {
                    let k = key_of(d);
                    if !out.iter().any(|(x, _)| *x == k) {
                        out.push((k.clone(), node(&k, d)));
                    }
                }
            }
        } else if let Some(ks) = dependents.get(key) {
            for k in ks {
                out.push((k.clone(), node(k, k)));
            }
        }
        out.sort_by(|a, b| compare_ids(&a.1.id, &b.1.id));
        out
    };
    let mut trees = [true, false].map(|upward| {
        let mut seen = HashSet::from([root.clone()]);
        let mut path = vec![root.clone()];
        walk_graph(&root, upward, &children, &mut seen, &mut path)
    });
    let down = std::mem::take(&mut trees[1]);
    let up = std::mem::take(&mut trees[0]);
    (up, down)
}

fn graph_label(n: &GraphNode) -> String {
    match n.state {
        NodeState::Missing => return format!("{} - unknown task ID", n.id),
        NodeState::Ambiguous => return format!("{} - ambiguous task ID", n.id),
        NodeState::Resolved => {}
    }
    let status = if n.completed { Some("completed") } else { n.status.as_deref().filter(|s| !s.is_empty()) };
    let status = status.map(|s| format!(" [{s}]")).unwrap_or_default();
    match n.title.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        Some(t) => format!("{} - {t}{status}", n.id),
        None => format!("{}{status}", n.id),
    }
}

fn graph_block(heading: &str, tree: &[GraphNode], root_id: &str) -> Vec<String> {
    if tree.is_empty() {
        return Vec::new();
    }
    let root = key_of(root_id);
    let mut all: HashSet<String> = HashSet::new();
    fn collect(nodes: &[GraphNode], all: &mut HashSet<String>) {
        for n in nodes {
            all.insert(key_of(&n.id));
            collect(&n.children, all);
        }
    }
    collect(tree, &mut all);
    all.remove(&root);
    let direct: HashSet<String> = tree.iter().map(|n| key_of(&n.id)).filter(|k| *k != root).collect();
    let mut lines = vec![format!("{heading} ({} direct, {} total):", direct.len(), all.len())];
    fn draw(nodes: &[GraphNode], prefix: &str, lines: &mut Vec<String>) {
        for (i, n) in nodes.iter().enumerate() {
            let last = i + 1 == nodes.len();
            let repeat = match n.repeat {
                Some(Repeat::Cycle) => " (cycle)",
                Some(Repeat::ShownAbove) => " (shown above)",
                None => "",
            };
            lines.push(format!("{prefix}{}{}{repeat}", if last { "└─ " } else { "├─ " }, graph_label(n)));
            if !n.children.is_empty() {
                draw(&n.children, &format!("{prefix}{}", if last { "   " } else { "│  " }), lines);
            }
        }
    }
    draw(tree, "", &mut lines);
    lines
}

const RULE50: &str = "--------------------------------------------------";

fn checklist_lines(items: &[ChecklistItem], kind: ChecklistKind) -> Vec<String> {
    items
        .iter()
        .filter(|i| i.kind == kind)
        .enumerate()
        .map(|(n, i)| format!("{} #{} {}", if i.checked { "- [x]" } else { "- [ ]" }, n + 1, i.text))
        .collect()
}

fn trimmed(s: &Option<String>) -> Option<&str> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// A task detail's fields, from `Status:` to `Milestone:`.
fn push_fields(y: &mut Vec<String>, view: &TaskView) {
    y.push(format!("Status: {}", status_with_icon(&view.status)));
    if let Some(p) = view.priority.as_deref().filter(|p| !p.is_empty()) {
        y.push(format!("Priority: {}", priority_label(p)));
    }
    if let Some(t) = view.issue_type.as_deref().filter(|t| !t.is_empty()) {
        y.push(format!("Type: {t}"));
    }
    if let Some(p) = view.project.as_deref().filter(|p| !p.is_empty()) {
        y.push(format!("Project: {p}"));
    }
    if let Some(o) = view.ordinal {
        y.push(format!("Ordinal: {}", js_number(o)));
    }
    if !view.assignees.is_empty() {
        let names: Vec<String> =
            view.assignees.iter().map(|a| if a.starts_with('@') { a.clone() } else { format!("@{a}") }).collect();
        y.push(format!("Assignee: {}", names.join(", ")));
    }
    if let Some(r) = view.reporter.as_deref().filter(|r| !r.is_empty()) {
        y.push(format!("Reporter: {}", if r.starts_with('@') { r.to_string() } else { format!("@{r}") }));
    }
    y.push(format!(
        "Created: {}",
        view.created_us.map(|c| format!("{} (UTC)", format_date_time(c))).unwrap_or_default()
    ));
    if let Some(u) = view.updated_us {
        y.push(format!("Updated: {} (UTC)", format_date_time(u)));
    }
    if let Some(d) = view.due_us {
        y.push(format!("Due: {}", format_date(d)));
    }
    if !view.labels.is_empty() {
        y.push(format!("Labels: {}", view.labels.join(", ")));
    }
    if let Some(m) = view.milestone.as_deref().filter(|m| !m.is_empty()) {
        y.push(format!("Milestone: {m}"));
    }
}

/// A task detail's parent, subtasks (`in_view`), references and documentation.
fn push_links(y: &mut Vec<String>, view: &TaskView, in_view: bool) {
    if let Some(p) = view.parent.as_deref().filter(|p| !p.is_empty()) {
        match view.parent_title.as_deref().filter(|t| in_view && !t.is_empty()) {
            Some(t) => y.push(format!("Parent: {p} - {t}")),
            None => y.push(format!("Parent: {p}")),
        }
    }
    if in_view && !view.subtasks.is_empty() {
        let mut subs = view.subtasks.clone();
        subs.sort_by(|a, b| compare_ids(&a.id, &b.id));
        y.push(format!("Subtasks ({}):", subs.len()));
        y.extend(subs.iter().map(|s| format!("- {} - {}", s.id, s.title)));
    }
    if !view.references.is_empty() {
        y.push(format!("References: {}", view.references.join(", ")));
    }
    if !view.documentation.is_empty() {
        y.push(format!("Documentation: {}", view.documentation.join(", ")));
    }
}

/// A task detail's `Dependency Graph:`, when the task has dependencies or dependents.
fn push_dependency_graph(y: &mut Vec<String>, view: &TaskView) {
    let up = graph_block("Depends on", &view.depends_on, &view.id);
    let down = graph_block("Dependents", &view.dependents, &view.id);
    if !up.is_empty() || !down.is_empty() {
        y.push(String::new());
        y.push("Dependency Graph:".into());
        y.push(RULE50.into());
        let both = !up.is_empty() && !down.is_empty();
        y.extend(up);
        if both {
            y.push(String::new());
        }
        y.extend(down);
    }
}

/// A task detail's description, checklists, plan, notes and modified files.
fn push_sections(y: &mut Vec<String>, view: &TaskView) {
    y.push(String::new());
    y.push("Description:".into());
    y.push(RULE50.into());
    y.push(trimmed(&view.description).unwrap_or("No description provided").to_string());
    y.push(String::new());
    for (title, kind, empty) in [
        ("Acceptance Criteria:", ChecklistKind::Acceptance, "No acceptance criteria defined"),
        ("Definition of Done:", ChecklistKind::Done, "No Definition of Done items defined"),
    ] {
        y.push(title.into());
        y.push(RULE50.into());
        let lines = checklist_lines(&view.checklist, kind);
        if lines.is_empty() {
            y.push(empty.into());
        } else {
            y.extend(lines);
        }
        y.push(String::new());
    }
    for (title, text) in [("Implementation Plan:", &view.plan), ("Implementation Notes:", &view.notes)] {
        if let Some(t) = trimmed(text) {
            y.push(title.into());
            y.push(RULE50.into());
            y.push(t.to_string());
            y.push(String::new());
        }
    }
    if !view.modified_files.is_empty() {
        y.push(format!("Modified files: {}", view.modified_files.join(", ")));
        y.push(String::new());
    }
}

/// A task detail's `Comments:`, those with a body, numbered from 1 in the task's order.
fn push_comments(y: &mut Vec<String>, view: &TaskView) {
    let comments: Vec<(usize, &Comment)> =
        view.comments.iter().enumerate().filter(|(_, c)| !c.body.trim().is_empty()).map(|(i, c)| (i + 1, c)).collect();
    if !comments.is_empty() {
        y.push("Comments:".into());
        y.push(RULE50.into());
        for (index, c) in comments {
            let mut head = vec![format!("#{index}")];
            if let Some(a) = c.author.as_deref().filter(|a| !a.is_empty()) {
                head.push(a.to_string());
            }
            if c.created_us != 0 {
                head.push(format!("{} (UTC)", format_date_time(c.created_us)));
            }
            y.push(head.join(" - "));
            y.push(c.body.trim().to_string());
            y.push(String::new());
        }
    }
}

/// The task detail as Backlog.md prints it, from `File: <path>` to the one trailing
/// newline. `in_view`: as task_view gives it (with `Subtasks (N):` and the parent's title);
/// false: as the results of task_create, task_edit, task_archive and task_complete (no
/// subtasks, the parent's id alone).
pub fn task_text(view: &TaskView, in_view: bool) -> String {
    let mut y: Vec<String> = Vec::new();
    if !view.file.is_empty() {
        y.push(format!("File: {}", view.file));
        y.push(String::new());
    }
    y.push(format!("Task {} - {}", view.id, view.title));
    y.push("=".repeat(50));
    y.push(String::new());
    push_fields(&mut y, view);
    push_links(&mut y, view, in_view);
    push_dependency_graph(&mut y, view);
    push_sections(&mut y, view);
    push_comments(&mut y, view);
    if let Some(t) = trimmed(&view.outcome) {
        y.push("Final Summary:".into());
        y.push(RULE50.into());
        y.push(t.to_string());
        y.push(String::new());
    }
    y.join("\n")
}

/// task_complete's text: `Completed task TASK-1.`, a blank line, then the detail (with the
/// path in `completed/`).
pub fn completed_text(view: &TaskView) -> String {
    format!("Completed task {}.\n\n{}", view.id, task_text(view, false))
}

/// One task as task_list and task_search print it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskLine {
    pub id: String,
    pub title: String,
    /// the Backlog.md status word (search prints it; a completed task's empty status is
    /// printed `Done`)
    pub status: String,
    pub priority: Option<String>,
    pub issue_type: Option<String>,
    pub project: Option<String>,
    /// acceptance criteria checked and in all (printed ` (ac: 1/2)` when there are any)
    pub ac_checked: usize,
    pub ac_total: usize,
    pub due_us: Option<i64>,
    pub ordinal: Option<f64>,
}

impl TaskLine {
    pub fn from_record(record: &Record) -> TaskLine {
        let ac: Vec<&ChecklistItem> = record.checklist.iter().filter(|i| i.kind == ChecklistKind::Acceptance).collect();
        TaskLine {
            id: record.id.clone(),
            title: record.title.clone(),
            status: backlog::status_word(record),
            priority: record.priority.clone().or_else(|| extra_string(record, "priority")),
            issue_type: record.issue_type.clone(),
            project: extra_string(record, "project"),
            ac_checked: ac.iter().filter(|i| i.checked).count(),
            ac_total: ac.len(),
            due_us: record.due_us,
            ordinal: record.extra.get("ordinal").and_then(Value::as_f64),
        }
    }
}

/// `  [HIGH] [feature] [project] TASK-1 - Title (To Do) (ac: 1/2) (due 2026-12-01)`; the
/// status only with `include_status` (task_search).
pub fn summary_line(t: &TaskLine, include_status: bool) -> String {
    let mut s = String::from("  ");
    if let Some(p) = t.priority.as_deref().filter(|p| !p.is_empty()) {
        s.push_str(&format!("[{}] ", p.to_uppercase()));
    }
    if let Some(ty) = t.issue_type.as_deref().filter(|x| !x.is_empty()) {
        s.push_str(&format!("[{ty}] "));
    }
    if let Some(pr) = t.project.as_deref().filter(|x| !x.is_empty()) {
        s.push_str(&format!("[{pr}] "));
    }
    s.push_str(&format!("{} - {}", t.id, t.title));
    if include_status && !t.status.is_empty() {
        s.push_str(&format!(" ({})", t.status));
    }
    if t.ac_total > 0 {
        s.push_str(&format!(" (ac: {}/{})", t.ac_checked, t.ac_total));
    }
    if let Some(d) = t.due_us {
        s.push_str(&format!(" (due {})", format_date(d)));
    }
    s
}

fn priority_rank(p: Option<&str>) -> u8 {
    match p.map(|p| p.trim().to_lowercase()).as_deref() {
        Some("high") => 3,
        Some("medium") => 2,
        Some("low") => 1,
        _ => 0,
    }
}

/// task_list's order within a group: tasks with an ordinal first, by ordinal; then by
/// priority (high first); then by id.
pub fn compare_for_list(a: &TaskLine, b: &TaskLine) -> Ordering {
    match (a.ordinal, b.ordinal) {
        (Some(_), None) => return Ordering::Less,
        (None, Some(_)) => return Ordering::Greater,
        (Some(x), Some(y)) if x != y => return x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        _ => {}
    }
    priority_rank(b.priority.as_deref())
        .cmp(&priority_rank(a.priority.as_deref()))
        .then_with(|| compare_ids(&a.id, &b.id))
}

/// The text when a list has nothing.
pub const NO_TASKS: &str = "No tasks found.";

/// task_list's content items: one per status group (`To Do:\n  line\n  line`, no trailing
/// newline), the configured `statuses` first in their order (a task's status matched
/// without regard to case), then other statuses as met; each group sorted by
/// `compare_for_list`; `limit` counts lines across the groups. Nothing: `No tasks found.`
pub fn list_groups(tasks: &[TaskLine], statuses: &[&str], limit: Option<usize>) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, Vec<&TaskLine>> = HashMap::new();
    for t in tasks {
        let raw = t.status.trim();
        let canon = statuses.iter().find(|s| s.to_lowercase() == raw.to_lowercase()).map_or(raw, |s| *s).to_string();
        if !groups.contains_key(&canon) {
            order.push(canon.clone());
        }
        groups.entry(canon).or_default().push(t);
    }
    let mut keys: Vec<String> = statuses.iter().filter(|s| groups.contains_key(**s)).map(|s| s.to_string()).collect();
    keys.extend(order.into_iter().filter(|s| !statuses.contains(&s.as_str())));
    let mut remaining = limit;
    let mut items = Vec::new();
    for key in keys {
        let mut bucket = groups.remove(&key).unwrap_or_default();
        bucket.sort_by(|a, b| compare_for_list(a, b));
        if let Some(r) = remaining.as_mut() {
            bucket.truncate(*r);
            *r -= bucket.len();
        }
        if bucket.is_empty() {
            continue;
        }
        let mut lines = vec![format!("{}:", if key.is_empty() { "No Status" } else { key.as_str() })];
        lines.extend(bucket.iter().map(|t| summary_line(t, false)));
        items.push(lines.join("\n"));
    }
    if items.is_empty() {
        items.push(NO_TASKS.to_string());
    }
    items
}

/// task_search's text: `Tasks:` and a line per match (in the order given, with its
/// status), or `No tasks found for "<query>".`
pub fn search_text(query: &str, tasks: &[TaskLine]) -> String {
    if tasks.is_empty() {
        return format!("No tasks found for \"{query}\".");
    }
    let mut lines = vec!["Tasks:".to_string()];
    lines.extend(tasks.iter().map(|t| summary_line(t, true)));
    lines.join("\n")
}

// ---------------------------------------------------------------------------------------
// error texts

const LOCAL_ONLY: &str =
    "Task lookups read only the local working copy; use 'backlog browser' to see tasks from other branches.";

/// `Task not found: task-99` (the id as the caller gave it).
pub fn task_not_found(given: &str) -> String {
    format!("Task not found: {given}")
}

/// task_complete on a task whose status is not Done.
pub fn not_done(id: &str) -> String {
    format!("Task {id} is not Done. Set status to \"Done\" with task_edit before completing it.")
}

/// task_complete on a task already completed (`Failed to complete task: task-1`).
pub fn complete_failed(given: &str) -> String {
    format!("Failed to complete task: {given}")
}

/// An acceptance-criteria or definition-of-done index that is not there: `missing` the
/// indexes asked for, `count` the items the task has (numbered 1..count).
pub fn checklist_index_error(kind: ChecklistKind, missing: &[usize], count: usize) -> String {
    let which: Vec<String> = missing.iter().map(|i| format!("#{i}")).collect();
    let (noun, none) = match kind {
        ChecklistKind::Acceptance => ("Acceptance criterion", "No acceptance criteria are defined."),
        ChecklistKind::Done => ("Definition of Done item", "No Definition of Done items are defined."),
    };
    let available = match count {
        0 => none.to_string(),
        1 => "Available indexes: #1.".to_string(),
        n => format!("Available indexes: #1-#{n}."),
    };
    format!("{noun} {} not found. {available}", which.join(", "))
}

/// Dependencies no task has, as the caller gave them.
pub fn missing_dependencies(given: &[&str]) -> String {
    format!(
        "The following dependencies do not exist: {}. Please create these tasks first or verify the IDs. {LOCAL_ONLY}",
        given.join(", ")
    )
}

/// A parent no task has (`id` canonical: `TASK-99`).
pub fn missing_parent(id: &str) -> String {
    format!(
        "Parent task {id} not found. {LOCAL_ONLY} Use an existing task ID with --parent; use --milestone to assign a task to a milestone."
    )
}

/// A task named among its own dependencies (`id` canonical, `given` as written).
pub fn self_dependency(id: &str, given: &str) -> String {
    format!("Task {id} cannot depend on itself (\"{}\" names this task).", given.trim())
}

/// A due date that is not a date.
pub const DUE_DATE_INVALID: &str = "Due date must be a date in YYYY-MM-DD format (for example, 2026-08-10).";
/// task_list with both `assignee` and `unassigned`.
pub const UNASSIGNED_WITH_ASSIGNEE: &str = "unassigned cannot be combined with assignee.";
/// task_search with nothing to search for.
pub const SEARCH_NEEDS_QUERY: &str = "Search query, modifiedFiles, type filter, or project filter is required";

/// A schema check's text: `Validation failed: <detail>` (the detail also goes in
/// `structuredContent.details`).
pub fn validation_failed(detail: &str) -> String {
    format!("Validation failed: {detail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::backlog::{parse::parse, parse_date};

    const ROOT: &str = "/tmp/bl_real/proj/";

    fn recorded(n: u32) -> Vec<String> {
        let all: Value = serde_json::from_str(include_str!("fixtures/backlog_transcript.json")).unwrap();
        all[n.to_string()]["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_string()).collect()
    }

    fn file(name: &str) -> Record {
        let (path, text) = match name {
            "1a" => (
                "backlog/tasks/task-1 - Set-up-database.md",
                include_str!("formats/fixtures/backlog/a/task-1 - Set-up-database.md"),
            ),
            "1" => (
                "backlog/completed/task-1 - Set-up-database.md",
                include_str!("formats/fixtures/backlog/end/completed/task-1 - Set-up-database.md"),
            ),
            "1.1" => (
                "backlog/tasks/task-1.1 - Subtask-of-DB.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-1.1 - Subtask-of-DB.md"),
            ),
            "1.1.1" => (
                "backlog/tasks/task-1.1.1 - Nested-child.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-1.1.1 - Nested-child.md"),
            ),
            "1.2" => (
                "backlog/tasks/task-1.2 - Second-subtask-of-DB.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-1.2 - Second-subtask-of-DB.md"),
            ),
            "1.3" => (
                "backlog/tasks/task-1.3 - Child-of-completed.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-1.3 - Child-of-completed.md"),
            ),
            "2" => (
                "backlog/tasks/task-2 - Write-API.md",
                include_str!("formats/fixtures/backlog/a/task-2 - Write-API.md"),
            ),
            "3" => (
                "backlog/tasks/task-3 - Due-with-time.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-3 - Due-with-time.md"),
            ),
            "4" => (
                "backlog/tasks/task-4 - Due-date-only.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-4 - Due-date-only.md"),
            ),
            "5" => (
                "backlog/tasks/task-5 - Status-lower.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-5 - Status-lower.md"),
            ),
            "6" => (
                "backlog/tasks/task-6 - After-archive.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-6 - After-archive.md"),
            ),
            "7" => (
                "backlog/tasks/task-7 - Fix-the-`foo`-bar-baz-qux-v2-—-ünïcode.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-7 - Fix-the-`foo`-bar-baz-qux-v2-—-ünïcode.md"),
            ),
            "8" => (
                "backlog/tasks/task-8 - Dep-on-completed.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-8 - Dep-on-completed.md"),
            ),
            "9" => (
                "backlog/tasks/task-9 - Multi-line.md",
                include_str!("formats/fixtures/backlog/end/tasks/task-9 - Multi-line.md"),
            ),
            other => panic!("no fixture {other}"),
        };
        parse(path, text).unwrap()
    }

    fn view_of(r: &Record, dir: &str) -> TaskView {
        let name = backlog::file_path(r).rsplit('/').next().unwrap().to_string();
        TaskView::from_record(r, &format!("{ROOT}backlog/{dir}/{name}"))
    }

    fn graph_task(r: &Record, finished: bool) -> GraphTask {
        GraphTask {
            id: r.id.clone(),
            title: r.title.clone(),
            status: backlog::status_word(r),
            finished,
            dependencies: r.dependencies.clone(),
        }
    }

    #[test]
    fn backlog_view_create_results() {
        let r = file("1a");
        assert_eq!(task_text(&view_of(&r, "tasks"), false), recorded(2)[0]);

        let mut v = view_of(&file("2"), "tasks");
        let tasks = [graph_task(&file("1a"), false), graph_task(&file("2"), false)];
        (v.depends_on, v.dependents) = dependency_graph("TASK-2", &tasks);
        assert_eq!(task_text(&v, false), recorded(3)[0]);
        // task_view of the same task (call 20) is the same text: no subtasks, no parent
        assert_eq!(task_text(&v, true), recorded(20)[0]);

        assert_eq!(task_text(&view_of(&file("1.1"), "tasks"), false), recorded(4)[0]);
        assert_eq!(task_text(&view_of(&file("1.2"), "tasks"), false), recorded(5)[0]);
        assert_eq!(task_text(&view_of(&file("3"), "tasks"), false), recorded(8)[0]);
        assert_eq!(task_text(&view_of(&file("4"), "tasks"), false), recorded(9)[0]);
        assert_eq!(task_text(&view_of(&file("5"), "tasks"), false), recorded(13)[0]);
        assert_eq!(task_text(&view_of(&file("6"), "tasks"), false), recorded(76)[0]);
        assert_eq!(task_text(&view_of(&file("7"), "tasks"), false), recorded(77)[0]);
        assert_eq!(task_text(&view_of(&file("1.1.1"), "tasks"), false), recorded(78)[0]);
        assert_eq!(task_text(&view_of(&file("1.3"), "tasks"), false), recorded(79)[0]);
        assert_eq!(task_text(&view_of(&file("9"), "tasks"), false), recorded(81)[0]);

        let mut v = view_of(&file("8"), "tasks");
        let tasks = [graph_task(&file("1"), true), graph_task(&file("3"), false), graph_task(&file("8"), false)];
        (v.depends_on, v.dependents) = dependency_graph("TASK-8", &tasks);
        assert_eq!(task_text(&v, false), recorded(80)[0]);
    }

    #[test]
    fn backlog_view_task_view_with_subtasks_parent_and_dependents() {
        let r = file("1a");
        let mut v = view_of(&r, "tasks");
        v.subtasks = vec![
            Link { id: "TASK-1.2".into(), title: "Second subtask of DB".into() },
            Link { id: "TASK-1.1".into(), title: "Subtask of DB".into() },
        ];
        let tasks = [graph_task(&r, false), graph_task(&file("2"), false)];
        (v.depends_on, v.dependents) = dependency_graph("TASK-1", &tasks);
        for n in [15, 16, 17] {
            assert_eq!(task_text(&v, true), recorded(n)[0], "call {n}");
        }
        let mut v = view_of(&file("1.1"), "tasks");
        v.parent_title = Some("Set up database".into());
        assert_eq!(task_text(&v, true), recorded(19)[0]);
        assert_eq!(task_text(&v, false), recorded(4)[0]);
    }

    /// Task 1 as the edits of section c leave it: the completed file less what came later.
    fn task1_at(call: u32) -> (TaskView, TaskView) {
        let mut r = file("1");
        let tasks = [graph_task(&file("1a"), false), graph_task(&file("2"), false)];
        r.status = crate::status::Status::InProgress;
        if call < 58 {
            r.title = "Set up database".into();
            r.description = Some("Create schema".into());
        }
        if call == 58 {
            r.due_us = parse_date("2026-11-30");
        }
        if call < 53 {
            r.priority = Some("high".into());
        }
        if call < 52 {
            r.labels = vec!["db".into(), "infra".into()];
        }
        if call < 51 {
            r.extra.remove("references");
        }
        if call < 49 {
            r.notes = Some("n1\n\nn2".into());
        }
        if call < 48 {
            r.outcome = None;
        }
        if call < 47 {
            r.comments.truncate(1);
        }
        if call == 64 {
            r.status = crate::status::Status::Completed;
        }
        let mut edit = view_of(&r, "tasks");
        (edit.depends_on, edit.dependents) = dependency_graph("TASK-1", &tasks);
        let mut view = edit.clone();
        view.subtasks = vec![
            Link { id: "TASK-1.1".into(), title: "Subtask of DB".into() },
            Link { id: "TASK-1.2".into(), title: "Second subtask of DB".into() },
        ];
        (edit, view)
    }

    #[test]
    fn backlog_view_edit_results_and_views() {
        for n in [46, 47, 48, 49, 51, 52, 53, 58, 64] {
            assert_eq!(task_text(&task1_at(n).0, false), recorded(n)[0], "call {n}");
        }
        for n in [50, 54] {
            assert_eq!(task_text(&task1_at(n).1, true), recorded(n)[0], "call {n}");
        }
        // call 59 cleared the due date again: as call 58 without it
        let (mut v, _) = task1_at(59);
        v.due_us = None;
        assert_eq!(task_text(&v, false), recorded(59)[0]);

        // the early edits: status, AC check, AC add, DoD
        let r = file("1a");
        let mut v = view_of(&r, "tasks");
        v.status = "In Progress".into();
        v.updated_us = file("1").updated_us;
        let tasks = [graph_task(&r, false), graph_task(&file("2"), false)];
        (v.depends_on, v.dependents) = dependency_graph("TASK-1", &tasks);
        assert_eq!(task_text(&v, false), recorded(33)[0]);
        v.checklist[0].checked = true;
        assert_eq!(task_text(&v, false), recorded(34)[0]);
        v.checklist[1].text = "Indexes".into();
        v.checklist.push(ChecklistItem { kind: ChecklistKind::Done, text: "Tests pass".into(), checked: true });
        assert_eq!(task_text(&v, false), recorded(39)[0]);
        v.notes = Some("n1".into());
        assert_eq!(task_text(&v, false), recorded(41)[0]);
    }

    #[test]
    fn backlog_view_complete_archive_and_completed_view() {
        let r = file("1");
        let mut v = view_of(&r, "completed");
        let tasks = [graph_task(&r, true), graph_task(&file("2"), false)];
        (v.depends_on, v.dependents) = dependency_graph("TASK-1", &tasks);
        assert_eq!(completed_text(&v), recorded(65)[0]);

        // task_archive prints the old path; the dependency is finished by then
        let mut v = view_of(&file("2"), "tasks");
        (v.depends_on, v.dependents) = dependency_graph("TASK-2", &tasks);
        assert_eq!(task_text(&v, false), recorded(66)[0]);

        // task-2 archived: task-1's view has no graph
        let mut v = view_of(&r, "completed");
        v.subtasks = vec![
            Link { id: "TASK-1.1".into(), title: "Subtask of DB".into() },
            Link { id: "TASK-1.2".into(), title: "Second subtask of DB".into() },
        ];
        assert_eq!(task_text(&v, true), recorded(67)[0]);
    }

    #[test]
    fn backlog_view_graph_trees() {
        let t = |id: &str, deps: &[&str]| GraphTask {
            id: id.into(),
            title: format!("T{id}"),
            status: "To Do".into(),
            finished: false,
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
        };
        let tasks = [t("TASK-1", &["TASK-2", "TASK-3", "task-99"]), t("TASK-2", &["TASK-3"]), t("TASK-3", &["TASK-1"])];
        let (up, down) = dependency_graph("task-1", &tasks);
        let v =
            TaskView { id: "TASK-1".into(), title: "x".into(), depends_on: up, dependents: down, ..Default::default() };
        let text = task_text(&v, true);
        let graph = text.split("Dependency Graph:\n").nth(1).unwrap().split("\n\nDescription:").next().unwrap();
        assert_eq!(
            graph,
            "--------------------------------------------------\n\
             Depends on (3 direct, 3 total):\n\
             ├─ TASK-2 - TTASK-2 [To Do]\n\
             │  └─ TASK-3 - TTASK-3 [To Do]\n\
             │     └─ TASK-1 - TTASK-1 [To Do] (cycle)\n\
             ├─ TASK-3 - TTASK-3 [To Do] (shown above)\n\
             └─ task-99 - unknown task ID\n\
             \n\
             Dependents (1 direct, 2 total):\n\
             └─ TASK-3 - TTASK-3 [To Do]\n\
             \u{20}  ├─ TASK-1 - TTASK-1 [To Do] (cycle)\n\
             \u{20}  └─ TASK-2 - TTASK-2 [To Do]\n\
             \u{20}     └─ TASK-1 - TTASK-1 [To Do] (cycle)"
        );
    }

    fn lines(records: &[Record]) -> Vec<TaskLine> {
        records.iter().map(TaskLine::from_record).collect()
    }

    #[test]
    fn backlog_view_list_groups() {
        assert_eq!(list_groups(&[], &DEFAULT_STATUSES, None), recorded(1));
        let mut two = file("2");
        two.extra.insert("ordinal".into(), 2000.into());
        let all = lines(&[file("5"), file("4"), file("3"), file("1.2"), file("1.1"), two, file("1a")]);
        assert_eq!(list_groups(&all, &DEFAULT_STATUSES, None), recorded(21));
        assert_eq!(list_groups(&all, &DEFAULT_STATUSES, Some(2)), recorded(31));
        let ready: Vec<TaskLine> = all.iter().filter(|t| t.id != "TASK-2").cloned().collect();
        assert_eq!(list_groups(&ready, &DEFAULT_STATUSES, None), recorded(22));

        let end = lines(&[
            file("1.1"),
            file("1.1.1"),
            file("1.2"),
            file("1.3"),
            file("3"),
            file("4"),
            file("5"),
            file("6"),
            file("7"),
            file("8"),
            file("9"),
        ]);
        assert_eq!(list_groups(&end, &DEFAULT_STATUSES, None), recorded(82));
        // a status word in another case goes to the configured group
        let mut lower = end.clone();
        lower.iter_mut().for_each(|t| t.status = t.status.to_lowercase());
        assert_eq!(list_groups(&lower, &DEFAULT_STATUSES, None), recorded(82));
    }

    #[test]
    fn backlog_view_search() {
        assert_eq!(search_text("database", &lines(&[file("1a")])), recorded(26)[0]);
        assert_eq!(search_text("database", &lines(&[file("1")])), recorded(71)[0]);
        assert_eq!(search_text("zzzz-nomatch", &[]), recorded(32)[0]);
        let t = TaskLine {
            id: "TASK-1".into(),
            title: "Title".into(),
            status: "To Do".into(),
            priority: Some("high".into()),
            issue_type: Some("feature".into()),
            ac_checked: 1,
            ac_total: 2,
            due_us: parse_date("2026-12-01"),
            ..Default::default()
        };
        assert_eq!(summary_line(&t, false), "  [HIGH] [feature] TASK-1 - Title (ac: 1/2) (due 2026-12-01)");
        assert_eq!(summary_line(&t, true), "  [HIGH] [feature] TASK-1 - Title (To Do) (ac: 1/2) (due 2026-12-01)");
    }

    #[test]
    fn backlog_view_error_texts() {
        assert_eq!(task_not_found("task-99"), recorded(18)[0]);
        assert_eq!(not_done("TASK-1"), recorded(63)[0]);
        assert_eq!(complete_failed("task-1"), recorded(72)[0]);
        assert_eq!(checklist_index_error(ChecklistKind::Acceptance, &[9], 2), recorded(56)[0]);
        assert_eq!(checklist_index_error(ChecklistKind::Done, &[5], 1), recorded(60)[0]);
        assert_eq!(
            checklist_index_error(ChecklistKind::Acceptance, &[1], 0),
            "Acceptance criterion #1 not found. No acceptance criteria are defined."
        );
        assert_eq!(missing_dependencies(&["task-99"]), recorded(11)[0]);
        assert_eq!(missing_parent("TASK-99"), recorded(12)[0]);
        assert_eq!(DUE_DATE_INVALID, recorded(14)[0]);
        assert_eq!(validation_failed("Field 'title' must be at least 1 characters long"), recorded(6)[0]);
        assert_eq!(
            self_dependency("TASK-3", "task-3"),
            "Task TASK-3 cannot depend on itself (\"task-3\" names this task)."
        );
        assert_eq!(UNASSIGNED_WITH_ASSIGNEE, "unassigned cannot be combined with assignee.");
        assert_eq!(SEARCH_NEEDS_QUERY, "Search query, modifiedFiles, type filter, or project filter is required");
    }

    #[test]
    fn backlog_view_ids() {
        for s in ["task-1", "TASK-1", "1", " Task-1 ", "task-01"] {
            assert_eq!(parse_id(s).as_deref(), Some("TASK-1"), "{s}");
        }
        assert_eq!(parse_id("1.2").as_deref(), Some("TASK-1.2"));
        assert_eq!(parse_id("task-1.1.1").as_deref(), Some("TASK-1.1.1"));
        for s in ["", "task-", "abc", "task-1.", "draft-1", "1..2"] {
            assert_eq!(parse_id(s), None, "{s}");
        }
        let mut ids = vec!["TASK-10", "TASK-1.2", "TASK-2", "TASK-1", "TASK-1.10", "TASK-1.1"];
        ids.sort_by(|a, b| compare_ids(a, b));
        assert_eq!(ids, ["TASK-1", "TASK-1.1", "TASK-1.2", "TASK-1.10", "TASK-2", "TASK-10"]);
        assert_eq!(status_with_icon("Blocked"), "● Blocked");
        assert_eq!(status_with_icon("Draft"), "○ Draft");
        assert_eq!(priority_label("very high"), "Very High");
    }
}
