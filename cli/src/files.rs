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

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

const FORMATS: &str = "taskmaster, beads, backlog, claude-todos, claude-tasks";

#[derive(clap::Parser, Debug)]
#[command(name = "pg_todos import", version, about = "Import a tracker's files into a list", max_term_width = 100)]
struct ImportFlags {
    /// taskmaster, beads, backlog, claude-todos or claude-tasks
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
    /// taskmaster, beads, backlog, claude-todos or claude-tasks
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

/// A line on standard output; a reader that went away (`| head`) does not stop the work.
fn say(line: String) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{line}");
}

fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

/// Flags read by clap; help and version printed (exit 0), errors exit 2.
fn flags<F: clap::Parser>(name: &str, args: Vec<String>) -> F {
    match F::try_parse_from(std::iter::once(name.to_string()).chain(args)) {
        Ok(f) => f,
        Err(e) => e.exit(),
    }
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.trim().is_empty())
}

/// The files of a format under `path`: (path as the tracker names it, text), sorted by path.
fn read_files(format: &str, path: &Path) -> Result<Vec<(String, String)>, String> {
    let read = |p: &Path, name: String| {
        std::fs::read_to_string(p).map(|t| (name, t)).map_err(|e| format!("{}: {e}", p.display()))
    };
    let json_files = |dir: &Path| -> Result<Vec<PathBuf>, String> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        out.sort();
        Ok(out)
    };
    let one = |inner: &str| -> Result<Vec<(String, String)>, String> {
        let file = if path.is_dir() { path.join(inner) } else { path.to_path_buf() };
        Ok(vec![read(&file, inner.to_string())?])
    };
    match format {
        "taskmaster" => one(".taskmaster/tasks/tasks.json"),
        "beads" => one(".beads/issues.jsonl"),
        "backlog" => {
            let root = if path.join("backlog").is_dir() { path.join("backlog") } else { path.to_path_buf() };
            let mut out = Vec::new();
            for folder in ["tasks", "drafts", "completed", "archive/tasks", "archive/drafts"] {
                let dir = root.join(folder);
                let Ok(entries) = std::fs::read_dir(&dir) else { continue };
                let mut files: Vec<PathBuf> = entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "md"))
                    .collect();
                files.sort();
                for f in files {
                    let name = format!("backlog/{folder}/{}", f.file_name().unwrap_or_default().to_string_lossy());
                    out.push(read(&f, name)?);
                }
            }
            if out.is_empty() {
                return Err(format!("{}: no Backlog.md task files (backlog/tasks/*.md, …) there", path.display()));
            }
            Ok(out)
        }
        "claude-todos" if path.is_dir() => json_files(path)?
            .iter()
            .map(|f| read(f, format!("todos/{}", f.file_name().unwrap_or_default().to_string_lossy())))
            .collect(),
        "claude-todos" => {
            Ok(vec![read(path, format!("todos/{}", path.file_name().unwrap_or_default().to_string_lossy()))?])
        }
        "claude-tasks" => {
            let direct = json_files(path)?;
            let lists: Vec<PathBuf> = if direct.is_empty() {
                let mut dirs: Vec<PathBuf> = std::fs::read_dir(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?
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
                let name = list.file_name().unwrap_or_default().to_string_lossy().to_string();
                for f in json_files(&list)? {
                    out.push(read(
                        &f,
                        format!("tasks/{name}/{}", f.file_name().unwrap_or_default().to_string_lossy()),
                    )?);
                }
            }
            Ok(out)
        }
        other => Err(format!("unknown format \"{other}\": use one of {FORMATS}")),
    }
}

/// The list: the flag, the variable, else the project's list of `dir`.
fn list_of(flag: &Option<String>, dir: &Path) -> Result<String, String> {
    if let Some(l) = flag.clone().or_else(|| env("PG_TODOS_CONVERSATION")) {
        return Ok(l);
    }
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(format!("project:{}", dir.display()))
}

/// A connection, its task spawned; the extension's errors as `SQLSTATE: message` and hint.
async fn connect(database_url: &Option<String>) -> tokio_postgres::Client {
    let connection = database_url
        .clone()
        .or_else(|| env("PG_TODOS_DATABASE_URL"))
        .or_else(|| env("DATABASE_URL"))
        .unwrap_or_else(|| crate::db::libpq_env(&|k| std::env::var(k).ok(), "pg_todos"));
    let target = crate::tls::target(&connection, &|k| std::env::var(k).ok()).unwrap_or_else(|e| fail(e));
    let (client, conn) = target.connect().await.unwrap_or_else(|e| fail(crate::tls::connect_error(&e)));
    tokio::spawn(conn);
    client
}

fn db_fail(what: &str, e: &tokio_postgres::Error) -> ! {
    match e.as_db_error() {
        Some(d) => fail(format!(
            "pg_todos {what}: {}: {}{}",
            d.code().code(),
            d.message(),
            d.hint().map(|h| format!("\nhint: {h}")).unwrap_or_default()
        )),
        None => fail(format!("pg_todos {what}: {e}")),
    }
}

pub async fn import(args: Vec<String>) {
    let f: ImportFlags = flags("pg_todos import", args);
    let tenant = f
        .tenant
        .clone()
        .or_else(|| env("PG_TODOS_TENANT"))
        .unwrap_or_else(|| fail("pg_todos import: no tenant: pass --tenant <id> or set PG_TODOS_TENANT"));
    let files = read_files(&f.format, &f.path).unwrap_or_else(|e| fail(format!("pg_todos import: {e}")));
    let project = if f.format.starts_with("claude") { PathBuf::from(".") } else { f.path.clone() };
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
            println!(
                "{} {} in {}{fields}",
                verb(action),
                t["id"].as_str().unwrap_or_default(),
                t["conversation"].as_str().unwrap_or_default()
            );
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
    let tenant = f
        .tenant
        .clone()
        .or_else(|| env("PG_TODOS_TENANT"))
        .unwrap_or_else(|| fail("pg_todos export: no tenant: pass --tenant <id> or set PG_TODOS_TENANT"));
    std::fs::create_dir_all(&f.dir).unwrap_or_else(|e| fail(format!("pg_todos export: {}: {e}", f.dir.display())));
    let project = if f.format.starts_with("claude") { PathBuf::from(".") } else { f.dir.clone() };
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
    for row in rows {
        let (path, content): (String, String) = (row.get(0), row.get(1));
        let target = f.dir.join(&path);
        if path == "backlog/config.yml" && target.exists() {
            continue; // the project's own configuration stays
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| fail(format!("pg_todos export: {}: {e}", parent.display())));
        }
        std::fs::write(&target, content)
            .unwrap_or_else(|e| fail(format!("pg_todos export: {}: {e}", target.display())));
        say(format!("wrote {}", target.display()));
    }
}
