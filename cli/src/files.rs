//! `pg_todos import` and `pg_todos export`: a tracker's files into a list and back, through
//! `todo.import` and `todo.export` (one transaction each; the extension parses and writes the
//! files' formats, this command only finds the files and writes them out).
//!
//! Where the files are, by format, under PATH (a project's directory) or PATH itself:
//! - `taskmaster`: `.taskmaster/tasks/tasks.json`;
//! - `beads`: `.beads/issues.jsonl`;
//! - `backlog`: `backlog/{tasks,drafts,completed,archive/tasks}/*.md`;
//! - `claude-todos`: the `*.json` files of a directory (`~/.claude/todos`);
//! - `claude-tasks`: `<list>/<id>.json` under a directory (`~/.claude/tasks`), or one list's
//!   directory.
//!
//! The list is `--list`, else `PG_TODOS_CONVERSATION`, else the project's list of PATH (or,
//! for Claude Code's files, of the working directory): `project:<canonical path>`, the list
//! `pg_todos mcp` started there works on.
//!
//! What the files can make this command do is bounded (docs/tools.md says it to users): an
//! export writes only under DIR (every path the database gives checked before any file is
//! written, `plan_writes`), through no symbolic link (`write_replacing`: a new file renamed
//! into place); an import reads no file whose link leads out of the project (`read_inside`);
//! what it prints shows control characters escaped (`file_names::shown`).

use std::path::{Path, PathBuf};

use crate::command::{db_message, flags, list_of, say, shown_path, tenant_of};
use pg_todos_core::file_names;
use pg_todos_core::formats::{format_names, tracker_format, FileLayout};
use serde_json::{Map, Value};

/// The FORMAT argument's help: the formats' names, from the one list of them
/// (`taskmaster, beads, backlog, claude-todos or claude-tasks`).
fn format_help() -> String {
    let names = format_names();
    match names.rsplit_once(", ") {
        Some((first, last)) => format!("{first} or {last}"),
        None => names,
    }
}

#[derive(clap::Parser, Debug)]
#[command(name = "pg_todos import", version, about = "Import a tracker's files into a list", max_term_width = 100)]
struct ImportFlags {
    #[arg(help = format_help())]
    format: String,
    /// The project's directory (or the file, or the directory of the files)
    path: PathBuf,
    /// Tenant [env: PG_TODOS_TENANT] (required)
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// The list [env: PG_TODOS_CONVERSATION]; default: the project's list, project:<path>
    #[arg(long, value_name = "ID")]
    list: Option<String>,
    /// Write nothing: print what would change
    #[arg(long)]
    dry_run: bool,
    /// A libpq URL or key=value string [env: PG_TODOS_DATABASE_URL or DATABASE_URL]
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

#[derive(clap::Parser, Debug)]
#[command(name = "pg_todos export", version, about = "Export a list as a tracker's files", max_term_width = 100)]
struct ExportFlags {
    #[arg(help = format_help())]
    format: String,
    /// The directory to write the files under (a project's directory)
    dir: PathBuf,
    /// Tenant [env: PG_TODOS_TENANT] (required)
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// The list [env: PG_TODOS_CONVERSATION]; default: the project's list, project:<dir>
    #[arg(long, value_name = "ID")]
    list: Option<String>,
    /// A libpq URL or key=value string [env: PG_TODOS_DATABASE_URL or DATABASE_URL]
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

fn db_fail(what: &str, e: &tokio_postgres::Error) -> ! {
    fail(db_message(what, e))
}

/// A connection, or exit 1 saying why not.
async fn connect(database_url: &Option<String>) -> tokio_postgres::Client {
    crate::command::connect(database_url).await.unwrap_or_else(|e| fail(e))
}

/// The directory nothing is read outside of: PATH when it is a directory, else PATH's, with
/// every link resolved.
fn project_root(path: &Path) -> Result<PathBuf, String> {
    let dir = if path.is_dir() {
        path
    } else {
        path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
    };
    std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", shown_path(dir)))
}

/// The text of `p`, refused when a symbolic link (of the file or of a directory on the way)
/// takes it outside `root`: a project's files cannot make the import read the user's own.
fn read_inside(root: &Path, p: &Path) -> Result<String, String> {
    let real = std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", shown_path(p)))?;
    if !real.starts_with(root) {
        return Err(format!(
            "{}: a symbolic link to {}, outside the project {}: import reads nothing outside the project \
             through a link (nothing was imported); copy the file into the project, or import where it is",
            shown_path(p),
            shown_path(&real),
            shown_path(root)
        ));
    }
    std::fs::read_to_string(&real).map_err(|e| format!("{}: {e}", shown_path(p)))
}

/// The `*.json` files of a directory, sorted.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", shown_path(dir)))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    Ok(out)
}

/// The name of a file without its folders.
fn file_name(p: &Path) -> std::borrow::Cow<'_, str> {
    p.file_name().unwrap_or_default().to_string_lossy()
}

/// The files of a format under `path`: (path as the tracker names it, text), sorted by path.
/// None is read through a symbolic link that leaves the project (`project_root`).
fn read_files(format: &str, path: &Path) -> Result<Vec<(String, String)>, String> {
    let inside = project_root(path)?;
    let read = |p: &Path, name: String| read_inside(&inside, p).map(|t| (name, t));
    let Some(tracker) = tracker_format(format) else {
        return Err(format!("unknown format \"{}\": use one of {}", file_names::shown(format), format_names()));
    };
    match tracker.files {
        FileLayout::OneFile(inner) => {
            let file = if path.is_dir() { path.join(inner) } else { path.to_path_buf() };
            Ok(vec![read(&file, inner.to_string())?])
        }
        FileLayout::Folders { root, folders, extension, none_found } => {
            let out = read_folders(path, root, folders, extension, &read)?;
            if out.is_empty() {
                return Err(format!("{}: {none_found}", shown_path(path)));
            }
            Ok(out)
        }
        FileLayout::JsonFiles { prefix } if path.is_dir() => {
            json_files(path)?.iter().map(|f| read(f, format!("{prefix}/{}", file_name(f)))).collect()
        }
        FileLayout::JsonFiles { prefix } => Ok(vec![read(path, format!("{prefix}/{}", file_name(path)))?]),
        FileLayout::ListFolders { prefix } => read_list_folders(path, prefix, &read),
    }
}

/// The reader of one file: (its path, the name the tracker gives it) → (name, text).
type ReadFile<'a> = dyn Fn(&Path, String) -> Result<(String, String), String> + 'a;

/// The files ending in `.<extension>` of `folders` under `path/<root>` (or `path` itself, when
/// it has no `root`), each named `<root>/<folder>/<file>`, folder by folder, sorted in each.
fn read_folders(
    path: &Path,
    root: &str,
    folders: &[&str],
    extension: &str,
    read: &ReadFile,
) -> Result<Vec<(String, String)>, String> {
    let top = if path.join(root).is_dir() { path.join(root) } else { path.to_path_buf() };
    let mut out = Vec::new();
    for folder in folders {
        let dir = top.join(folder);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == extension))
            .collect();
        files.sort();
        for f in files {
            out.push(read(&f, format!("{root}/{folder}/{}", file_name(&f)))?);
        }
    }
    Ok(out)
}

/// The `<list>/<id>.json` files under `path`, or the `*.json` files of `path` when it is one
/// list's directory, each named `<prefix>/<list>/<file>`.
fn read_list_folders(path: &Path, prefix: &str, read: &ReadFile) -> Result<Vec<(String, String)>, String> {
    let direct = json_files(path)?;
    let lists: Vec<PathBuf> = if direct.is_empty() {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| format!("{}: {e}", shown_path(path)))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        dirs
    } else {
        vec![path.to_path_buf()]
    };
    let mut out = Vec::new();
    for list in lists {
        let name = file_name(&list).to_string();
        for f in json_files(&list)? {
            out.push(read(&f, format!("{prefix}/{name}/{}", file_name(&f)))?);
        }
    }
    Ok(out)
}

/// Whether a format's files are kept outside any project (Claude Code's): its list is then
/// the working directory's project's.
fn outside_project(format: &str) -> bool {
    tracker_format(format).is_some_and(|t| t.outside_project)
}

pub async fn import(args: Vec<String>) {
    let f: ImportFlags = flags("pg_todos import", args);
    let tenant = tenant_of(&f.tenant, "import").unwrap_or_else(|e| fail(e));
    let files = read_files(&f.format, &f.path).unwrap_or_else(|e| fail(format!("pg_todos import: {e}")));
    let project = if outside_project(&f.format) { PathBuf::from(".") } else { f.path.clone() };
    let project =
        if project.is_dir() { project } else { project.parent().map_or(PathBuf::from("."), Path::to_path_buf) };
    let list = list_of(&f.list, &project).unwrap_or_else(|e| fail(format!("pg_todos import: {e}")));
    let object: Map<String, Value> = files.into_iter().map(|(p, t)| (p, Value::String(t))).collect();
    let mut client = connect(&f.database_url).await;
    let tx = client.transaction().await.unwrap_or_else(|e| db_fail("import", &e));
    tx.execute("SELECT todo.set_context($1, $2, 'pg_todos-import')", &[&tenant, &list])
        .await
        .unwrap_or_else(|e| db_fail("import", &e));
    let row = tx
        .query_one("SELECT todo.import($1, $2, $3, $4)", &[&f.format, &Value::Object(object), &list, &f.dry_run])
        .await
        .unwrap_or_else(|e| db_fail("import", &e));
    tx.commit().await.unwrap_or_else(|e| db_fail("import", &e));
    let out: Value = row.get(0);
    let verb = |a: &str| match (f.dry_run, a) {
        (true, "added") => "would add",
        (true, "changed") => "would change",
        (_, "added") => "added",
        (_, "changed") => "changed",
        _ => "unchanged",
    };
    for t in out["tasks"].as_array().into_iter().flatten() {
        let action = t["action"].as_str().unwrap_or_default();
        if action != "unchanged" || f.dry_run {
            let fields: Vec<&str> = t["fields"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let fields = if fields.is_empty() { String::new() } else { format!(" ({})", fields.join(", ")) };
            say(format!(
                "{} {} in {}{}",
                verb(action),
                file_names::shown(t["id"].as_str().unwrap_or_default()),
                file_names::shown(t["conversation"].as_str().unwrap_or_default()),
                file_names::shown(&fields)
            ));
        }
    }
    say(format!(
        "{}{} added, {} changed, {} unchanged",
        if f.dry_run { "dry run, nothing written: " } else { "" },
        out["added"],
        out["changed"],
        out["unchanged"]
    ));
}

pub async fn export(args: Vec<String>) {
    let f: ExportFlags = flags("pg_todos export", args);
    let tenant = tenant_of(&f.tenant, "export").unwrap_or_else(|e| fail(e));
    std::fs::create_dir_all(&f.dir).unwrap_or_else(|e| fail(format!("pg_todos export: {}: {e}", shown_path(&f.dir))));
    let project = if outside_project(&f.format) { PathBuf::from(".") } else { f.dir.clone() };
    let list = list_of(&f.list, &project).unwrap_or_else(|e| fail(format!("pg_todos export: {e}")));
    let mut client = connect(&f.database_url).await;
    let tx = client.transaction().await.unwrap_or_else(|e| db_fail("export", &e));
    tx.execute("SELECT todo.set_context($1, $2, 'pg_todos-export')", &[&tenant, &list])
        .await
        .unwrap_or_else(|e| db_fail("export", &e));
    let rows = tx
        .query("SELECT path, content FROM todo.export($1, $2)", &[&f.format, &list])
        .await
        .unwrap_or_else(|e| db_fail("export", &e));
    tx.commit().await.unwrap_or_else(|e| db_fail("export", &e));
    let files: Vec<(String, String)> = rows.into_iter().map(|r| (r.get(0), r.get(1))).collect();
    let plan = plan_writes(&f.dir, files).unwrap_or_else(|e| fail(format!("pg_todos export: {e}")));
    for (target, content) in plan {
        write_replacing(&f.dir, &target, &content)
            .unwrap_or_else(|e| fail(format!("pg_todos export: {}: {e}", shown_path(&f.dir.join(&target)))));
        say(format!("wrote {}", shown_path(&f.dir.join(&target))));
    }
}

/// The parts of a path the database gave, each one plain file name; an error saying why
/// not: absolute, `..`, `.`, empty, `\` or a control character (such a path could leave
/// DIR), or over 255 bytes (no file system takes the name).
fn parts_of(path: &str) -> Result<Vec<&str>, String> {
    let parts: Vec<&str> = path.split('/').collect();
    let Some(bad) = parts.iter().find(|p| !file_names::is_safe_component(p)) else {
        return Ok(parts);
    };
    let too_long = bad.len() > 255 && !bad.chars().any(|c| c == '\\' || c.is_control());
    let (path, bad) = (file_names::shown(path), file_names::shown(bad));
    if too_long {
        return Err(format!(
            "the file name \"{bad}\" of \"{path}\" is over 255 bytes, longer than a file system takes: \
             shorten the id or list name it is made of; nothing was written"
        ));
    }
    Err(format!(
        "the database gave the path \"{path}\", whose part \"{bad}\" is no plain file name (absolute, `..`, `.`, \
         empty, `\\` or a control character): it could leave DIR, so nothing was written; update the extension \
         (ALTER EXTENSION pg_todos UPDATE) and report it"
    ))
}

/// What an export writes: (path under `dir`, text), every path checked before any file is
/// written. Refused: a path that could leave `dir` (`parts_of`), a symbolic link or a file
/// where a directory of a path is, a directory where a file is. A link at a file's own place
/// is fine (`write_replacing` replaces the link, not its target). The project's own
/// `backlog/config.yml` is kept.
fn plan_writes(dir: &Path, files: Vec<(String, String)>) -> Result<Vec<(PathBuf, String)>, String> {
    let mut out = Vec::new();
    for (path, content) in files {
        let parts = parts_of(&path)?;
        let mut at = dir.to_path_buf();
        for part in &parts[..parts.len() - 1] {
            at.push(part);
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(format!(
                        "{}: a symbolic link inside DIR, where the export writes {}: an export writes through no \
                         link (nothing was written); remove the link, or export into another directory",
                        shown_path(&at),
                        file_names::shown(&path)
                    ))
                }
                Ok(m) if !m.is_dir() => {
                    return Err(format!("{}: not a directory (nothing was written)", shown_path(&at)))
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                Err(e) => return Err(format!("{}: {e}", shown_path(&at))),
            }
        }
        let target = dir.join(&path);
        match std::fs::symlink_metadata(&target) {
            Ok(_) if path == "backlog/config.yml" => continue, // the project's own configuration stays
            Ok(m) if m.is_dir() => return Err(format!("{}: a directory (nothing was written)", shown_path(&target))),
            _ => {}
        }
        out.push((PathBuf::from(path), content));
    }
    Ok(out)
}

/// Writes `content` at `dir/rel` without following a symbolic link: each missing directory
/// made alone (one that appeared as a link since `plan_writes` is refused), the text written
/// to a new temporary file beside the target (`O_EXCL`: never through a link), which is then
/// renamed over the target (a link there is replaced, its target untouched). An existing
/// file's permissions are kept.
fn write_replacing(dir: &Path, rel: &Path, content: &str) -> std::io::Result<()> {
    use std::io::Write;
    let target = dir.join(rel);
    let mut at = dir.to_path_buf();
    for part in rel.parent().into_iter().flat_map(Path::components) {
        at.push(part);
        match std::fs::create_dir(&at) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
            _ if !std::fs::symlink_metadata(&at)?.is_dir() => {
                return Err(std::io::Error::other(format!("{}: a link or a file, not a directory", shown_path(&at))))
            }
            _ => {}
        }
    }
    static TEMPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = TEMPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = target.with_file_name(format!(".pg_todos-export-{}-{n}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
        file.write_all(content.as_bytes())?;
        if let Some(m) = std::fs::symlink_metadata(&target).ok().filter(std::fs::Metadata::is_file) {
            file.set_permissions(m.permissions())?;
        }
        std::fs::rename(&temp, &target)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new empty directory of this test's own.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pg_todos-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn file(path: &str) -> (String, String) {
        (path.to_string(), format!("text of {path}"))
    }

    #[test]
    fn a_path_that_could_leave_dir_is_refused() {
        let dir = scratch("leave");
        for bad in
            ["/etc/passwd", "../x.json", "tasks/../../x.json", "tasks/./x", "tasks//x", "", "a\\..\\b", "a/\u{1b}[2J"]
        {
            let e = plan_writes(&dir, vec![file("tasks/ok.json"), file(bad)]).unwrap_err();
            assert!(e.contains("no plain file name") && e.contains("nothing was written"), "{bad}: {e}");
            assert!(!e.contains('\u{1b}'), "{e}");
        }
        let long = format!("tasks/{}.json", "x".repeat(251));
        let e = plan_writes(&dir, vec![file(&long)]).unwrap_err();
        assert!(e.contains("over 255 bytes") && e.contains("shorten"), "{e}");
        let fine = plan_writes(&dir, vec![file("tasks/%2E.%2Fx.json"), file(".beads/issues.jsonl")]).unwrap();
        assert_eq!(fine.len(), 2);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "planning writes nothing");
    }

    #[test]
    fn a_linked_directory_inside_dir_is_refused_before_anything_is_written() {
        let dir = scratch("linked-dir");
        let elsewhere = scratch("linked-dir-elsewhere");
        std::os::unix::fs::symlink(&elsewhere, dir.join("backlog")).unwrap();
        let e = plan_writes(&dir, vec![file(".beads/issues.jsonl"), file("backlog/tasks/task-1 - x.md")]).unwrap_err();
        assert!(e.contains("symbolic link inside DIR") && e.contains("backlog"), "{e}");
        assert!(!dir.join(".beads").exists(), "nothing written before the refusal");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        // a link that appeared after the plan: refused when the directory is made
        std::fs::remove_file(dir.join("backlog")).unwrap();
        let plan = plan_writes(&dir, vec![file("backlog/tasks/task-1 - x.md")]).unwrap();
        std::os::unix::fs::symlink(&elsewhere, dir.join("backlog")).unwrap();
        assert!(write_replacing(&dir, &plan[0].0, "x").is_err());
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn a_linked_file_is_replaced_not_written_through() {
        let dir = scratch("linked-file");
        let victim = scratch("linked-file-victim").join("settings.json");
        std::fs::write(&victim, "SENTINEL").unwrap();
        std::fs::create_dir(dir.join(".beads")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(".beads/issues.jsonl")).unwrap();
        let plan = plan_writes(&dir, vec![file(".beads/issues.jsonl")]).unwrap();
        write_replacing(&dir, &plan[0].0, &plan[0].1).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "SENTINEL");
        let written = dir.join(".beads/issues.jsonl");
        assert!(!std::fs::symlink_metadata(&written).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&written).unwrap(), "text of .beads/issues.jsonl");
        let names: Vec<_> = std::fs::read_dir(dir.join(".beads")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }

    #[test]
    fn an_unknown_format_names_the_formats_in_their_order() {
        let project = scratch("unknown-format");
        let e = read_files("jira", &project).unwrap_err();
        assert_eq!(e, "unknown format \"jira\": use one of taskmaster, beads, backlog, claude-todos, claude-tasks");
        assert_eq!(format_help(), "taskmaster, beads, backlog, claude-todos or claude-tasks");
    }

    #[test]
    fn import_reads_no_link_out_of_the_project() {
        let project = scratch("import");
        let secret = scratch("import-secret").join("issues.jsonl");
        std::fs::write(&secret, "{}").unwrap();
        std::fs::create_dir(project.join(".beads")).unwrap();
        std::os::unix::fs::symlink(&secret, project.join(".beads/issues.jsonl")).unwrap();
        let e = read_files("beads", &project).unwrap_err();
        assert!(e.contains("outside the project") && e.contains("issues.jsonl"), "{e}");
        std::fs::remove_file(project.join(".beads/issues.jsonl")).unwrap();
        std::fs::write(project.join(".beads/real.jsonl"), "{}").unwrap();
        std::os::unix::fs::symlink("real.jsonl", project.join(".beads/issues.jsonl")).unwrap();
        assert_eq!(read_files("beads", &project).unwrap(), [(".beads/issues.jsonl".to_string(), "{}".to_string())]);
    }
}
