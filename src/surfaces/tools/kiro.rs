//! The kiro dialect: Kiro CLI's `todo_list` (Amazon Q Developer CLI's), named TODO lists
//! that persist across sessions: `create` (a new list, its id the time in milliseconds),
//! `complete` (tasks by 0-based index, with a `context_update` for the work log and the files
//! modified), `load`, `add` and `remove` (by 0-based indices), `lookup` (every list). A
//! list is a todo of the conversation in context (its description the subject; marked
//! `kiro_list` with its id in the metadata, which also keeps its work log and modified files)
//! with its tasks as todos under it, in order, in the list's own turn (`kiro-list:<todo
//! id>`); a `context_update` is also the outcome of the tasks it completes, so the event log
//! keeps it with them. The model reads Kiro's `TODO LIST STATE: {…}` and ` ID: …` lines, its
//! lookup blocks, and its refusals (`Failed to validate tool parameters: …`), which write
//! nothing.

use serde_json::{json, Value};

use super::dialect::{Answer, Dialect, Effect, ListAs, Tool};
use super::helpers::{
    error, error_message, failed, item_turn, meta_text, metadata, ordered_json, rooted, session, str_arg, strings,
    Rooted,
};
use crate::ops::single::{self, json_fields, Change, NewTodo};
use crate::ops::{Find, Scope};
use crate::status::Status;

/// The metadata keys of a list's todo: its id, its work log, the files modified.
const LIST: &str = "kiro_list";
const CONTEXT: &str = "kiro_context";
const FILES: &str = "kiro_modified_files";
const KIND: &str = "kiro-list";
const COMMANDS: &str = "`create`, `complete`, `load`, `add`, `remove`, `lookup`";
const NO_LIST: &str = "No todo list exists with the given ID";

static TODO_LIST: Tool = Tool {
    name: "todo_list",
    description: "A tool for creating a TODO list and keeping track of tasks. This tool should be requested EVERY time the user gives you a task that will take multiple steps. A TODO list should be made BEFORE executing any steps. Steps should be marked off AS YOU COMPLETE THEM. DO NOT display your own tasks or todo list AT ANY POINT; this is done for you. Complete the tasks in the same order that you provide them. If the user tells you to skip a step, DO NOT mark it as completed.",
    input_schema: || {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "enum": ["create", "complete", "load", "add", "remove", "lookup"], "description": "The command to run. Allowed options are `create`, `complete`, `load`, `add`, `remove`, and `lookup`. Call `lookup` without arguments to see a list of all existing TODO list IDs."},
                "tasks": {"description": "Required parameter of `create` command containing the list of DISTINCT tasks to be added to the TODO list.", "type": "array", "items": {"type": "string"}},
                "todo_list_description": {"description": "Required parameter of `create` command containing a BRIEF summary of the todo list being created. The summary should be detailed enough to refer to without knowing the problem context beforehand.", "type": "string"},
                "completed_indices": {"description": "Required parameter of `complete` command containing the 0-INDEXED numbers of EVERY completed task. Each task should be marked as completed IMMEDIATELY after it is finished.", "type": "array", "items": {"type": "integer"}},
                "context_update": {"description": "Required parameter of `complete` command containing important task context. Use this command to track important information about the task AND information about files you have read.", "type": "string"},
                "modified_files": {"description": "Optional parameter of `complete` command containing a list of paths of files that were modified during the task. This is useful for tracking file changes that are important to the task.", "type": "array", "items": {"type": "string"}},
                "load_id": {"description": "Required parameter of `load` command containing ID of todo list to load", "type": "string"},
                "current_id": {"description": "Required parameter of `complete`, `add`, and `remove` commands containing the ID of the currently loaded todo list. The ID will ALWAYS be provided after every `todo_list` call after the serialized todo list state.", "type": "string"},
                "new_tasks": {"description": "Required parameter of `add` command containing a list of new tasks to be added to the to-do list.", "type": "array", "items": {"type": "string"}},
                "insert_indices": {"description": "Required parameter of `add` command containing a list of 0-INDEXED positions to insert the new tasks. There MUST be an index for every new task being added.", "type": "array", "items": {"type": "integer"}},
                "new_description": {"description": "Optional parameter of `add` and `remove` containing a new todo list description. Use this when the updated set of tasks significantly change the goal or overall procedure of the todo list.", "type": "string"},
                "remove_indices": {"description": "Required parameter of `remove` command containing a list of 0-INDEXED positions of tasks to remove.", "type": "array", "items": {"type": "integer"}}
            },
            "required": ["command"]
        })
    },
    precheck: Some(parse_check),
    run: todo_list,
    effect: Effect::Changes,
    output_schema: None,
    text: Some(text),
    // Kiro reads its arguments leniently (serde): nulls for the optional fields, anything
    // for the fields a command does not use; `parse_check` and the commands check the rest
    accepts: Some(|| json!({"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}})),
};

/// Kiro's refusal of arguments it cannot read: serde's words in its sentence.
fn unreadable(why: &str) -> Value {
    error(
        "invalid_arguments",
        format!("Failed to validate tool parameters: {why}. The model has either suggested tool parameters which are incompatible with the existing tools, or has suggested one or more tool that does not exist in the list of known tools."),
    )
}

/// Kiro's refusal of arguments it read but does not accept.
fn invalid(why: &str) -> Value {
    error("invalid_arguments", format!("Failed to validate tool parameters: {why}"))
}

/// What serde says of a field a command needs: missing, or of the wrong type.
fn field_problem(args: &Value, key: &str, kind: &str) -> Option<String> {
    let v = match args.get(key) {
        None => return Some(format!("missing field `{key}`")),
        Some(v) => v,
    };
    let wrong = |expected: &str| Some(format!("invalid type: {}, expected {expected}", serde_shape(v)));
    match kind {
        "string" if !v.is_string() => wrong("a string"),
        "strings" | "indices" if !v.is_array() => wrong("a sequence"),
        "strings" => v
            .as_array()?
            .iter()
            .find(|s| !s.is_string())
            .map(|s| format!("invalid type: {}, expected a string", serde_shape(s))),
        "indices" => v.as_array()?.iter().find(|i| i.as_u64().is_none()).map(|i| match i.as_i64() {
            Some(n) => format!("invalid value: integer `{n}`, expected usize"),
            None => format!("invalid type: {}, expected usize", serde_shape(i)),
        }),
        _ => None,
    }
}

/// A JSON value as serde's errors name it.
fn serde_shape(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

/// Reads the arguments as Kiro does (its command's fields, by type), before anything else.
fn parse_check(args: &Value) -> Option<Value> {
    let Some(command) = args.get("command") else { return Some(unreadable("missing field `command`")) };
    let fields: &[(&str, &str)] = match command.as_str() {
        Some("create") => &[("tasks", "strings"), ("todo_list_description", "string")],
        Some("complete") => &[("completed_indices", "indices"), ("context_update", "string"), ("current_id", "string")],
        Some("load") => &[("load_id", "string")],
        Some("add") => &[("new_tasks", "strings"), ("insert_indices", "indices"), ("current_id", "string")],
        Some("remove") => &[("remove_indices", "indices"), ("current_id", "string")],
        Some("lookup") => &[],
        Some(other) => return Some(unreadable(&format!("unknown variant `{other}`, expected one of {COMMANDS}"))),
        None => return Some(unreadable(&format!("invalid type: {}, expected a string", serde_shape(command)))),
    };
    let optional: &[(&str, &str)] = match command.as_str() {
        Some("complete") => &[("modified_files", "strings")],
        Some("add" | "remove") => &[("new_description", "string")],
        _ => &[],
    };
    fields
        .iter()
        .find_map(|(key, kind)| field_problem(args, key, kind))
        .or_else(|| {
            optional
                .iter()
                .filter(|(key, _)| args.get(*key).is_some_and(|v| !v.is_null()))
                .find_map(|(key, kind)| field_problem(args, key, kind))
        })
        .map(|why| unreadable(&why))
}

fn indices(args: &Value, key: &str) -> Vec<usize> {
    args[key]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_u64)
        .map(|i| i as usize)
        .collect()
}

/// The list of id `id` in the conversation.
fn find(scope: &Scope, conv: &str, id: &str) -> Option<Rooted> {
    rooted(scope, conv, KIND, LIST, Some(id)).pop()
}

fn meta_list(root: &crate::todo::Todo, key: &str) -> Vec<Value> {
    metadata(root).get(key).and_then(Value::as_array).cloned().unwrap_or_default()
}

/// The keys of Kiro's `TodoListState`, in the order serde writes its struct's fields.
const KEY_ORDER: &[&str] =
    &["tasks", "task_description", "completed", "description", "context", "modified_files", "id"];

/// A list as Kiro keeps it: `{tasks: [{task_description, completed}], description, context,
/// modified_files, id}`.
fn list_state(list: &Rooted) -> Value {
    let tasks: Vec<Value> = list
        .items
        .iter()
        .map(|t| json!({"task_description": t.subject, "completed": t.status == Status::Completed}))
        .collect();
    json!({
        "tasks": tasks,
        "description": list.root.subject,
        "context": meta_list(&list.root, CONTEXT),
        "modified_files": meta_list(&list.root, FILES),
        "id": meta_text(&list.root, LIST).unwrap_or_default(),
    })
}

/// `TODO LIST STATE: {…}` and the list's id, as Kiro answers every command but lookup.
fn state(list: &Rooted) -> Value {
    let state = list_state(list);
    json!(format!("TODO LIST STATE: {}\n\n ID: {}", ordered_json(&state, KEY_ORDER), str_arg(&state, "id")))
}

/// The list after a change, read again.
fn reread(scope: &Scope, conv: &str, id: &str) -> Answer {
    Ok(find(scope, conv, id).map_or_else(|| json!(NO_LIST), |l| state(&l)))
}

fn todo_list(scope: &Scope, args: &Value) -> Answer {
    let conv = session(scope, "todo_list")?;
    match args["command"].as_str().unwrap_or_default() {
        "create" => create(scope, conv, args),
        "lookup" => Ok(lookup(scope, conv)),
        "load" => {
            let id = args["load_id"].as_str().unwrap_or_default();
            Ok(find(scope, conv, id).map_or_else(|| json!(NO_LIST), |l| state(&l)))
        }
        command => {
            let id = args["current_id"].as_str().unwrap_or_default();
            let Some(list) = find(scope, conv, id) else { return Ok(json!(NO_LIST)) };
            match command {
                "complete" => complete(scope, &list, args)?,
                "add" => add(scope, conv, &list, args)?,
                _ => remove(scope, &list, args)?,
            }
            reread(scope, conv, id)
        }
    }
}

fn create(scope: &Scope, conv: &str, args: &Value) -> Answer {
    let tasks = strings(args, "tasks");
    let description = args["todo_list_description"].as_str().unwrap_or_default();
    if tasks.is_empty() {
        return Err(invalid("No tasks were provided"));
    }
    if tasks.iter().any(|t| t.trim().is_empty()) {
        return Err(invalid("Tasks cannot be empty"));
    }
    if description.is_empty() {
        return Err(invalid("No task description was provided"));
    }
    if description.trim().is_empty() {
        // Kiro takes a blank description; the store needs a subject
        return Err(invalid("The task description must not be blank"));
    }
    // the time in milliseconds, as Kiro names lists; the next free one in this list's place
    let mut id = crate::time::now_us() / 1000;
    while find(scope, conv, &id.to_string()).is_some() {
        id += 1;
    }
    let fields = json_fields([
        ("conversation_id", json!(conv)),
        ("subject", json!(description)),
        ("metadata", json!({ LIST: id.to_string(), CONTEXT: [], FILES: [] })),
    ]);
    let root = single::add(scope, NewTodo { fields, ..NewTodo::default() }).map_err(failed)?;
    for task in &tasks {
        add_task(scope, conv, root.id, task)?;
    }
    reread(scope, conv, &id.to_string())
}

fn add_task(scope: &Scope, conv: &str, root: i64, task: &str) -> Result<i64, Value> {
    let fields = json_fields([
        ("conversation_id", json!(conv)),
        ("turn_id", json!(item_turn(KIND, root))),
        ("subject", json!(task)),
    ]);
    single::add(scope, NewTodo { parent: Some(root), fields, id: None }).map(|t| t.id).map_err(failed)
}

/// Kiro's refusal of an index past the list (its words end in ", ").
fn out_of_bounds(i: usize, len: usize) -> Value {
    invalid(&format!("Index {i} is out of bounds for length {len}, "))
}

fn complete(scope: &Scope, list: &Rooted, args: &Value) -> Result<(), Value> {
    let done = indices(args, "completed_indices");
    let context = args["context_update"].as_str().unwrap_or_default();
    if done.is_empty() {
        return Err(invalid("At least one completed index must be provided"));
    }
    if context.is_empty() {
        return Err(invalid("No context update was provided"));
    }
    if let Some(i) = done.iter().find(|i| **i >= list.items.len()) {
        return Err(out_of_bounds(*i, list.items.len()));
    }
    for i in done {
        let task = &list.items[i];
        if task.status != Status::Completed {
            let change = Change {
                status: Some(Status::Completed),
                via_reopen: true,
                fields: json_fields([("outcome", json!(context))]),
                ..Change::default()
            };
            single::change(scope, Find::Anywhere, task.id, change).map_err(failed)?;
        }
    }
    let mut log = meta_list(&list.root, CONTEXT);
    log.push(json!(context));
    let mut files = meta_list(&list.root, FILES);
    files.extend(strings(args, "modified_files").into_iter().map(Value::String));
    let meta = json_fields([(CONTEXT, Value::Array(log)), (FILES, Value::Array(files))]);
    single::change(scope, Find::Anywhere, list.root.id, Change { metadata: Some(meta), ..Change::default() })
        .map(|_| ())
        .map_err(failed)
}

/// `new_description`, when given: checked (not blank) and written.
fn new_description(args: &Value) -> Result<Option<String>, Value> {
    match args.get("new_description").and_then(Value::as_str) {
        Some(d) if d.trim().is_empty() => Err(invalid("New description cannot be empty")),
        other => Ok(other.map(str::to_string)),
    }
}

fn describe(scope: &Scope, list: &Rooted, description: Option<String>) -> Result<(), Value> {
    let Some(d) = description else { return Ok(()) };
    let change = Change::fields(json_fields([("subject", json!(d))]));
    single::change(scope, Find::Anywhere, list.root.id, change).map(|_| ()).map_err(failed)
}

fn unique(list: &[usize]) -> bool {
    let mut seen = std::collections::HashSet::new();
    list.iter().all(|i| seen.insert(*i))
}

fn add(scope: &Scope, conv: &str, list: &Rooted, args: &Value) -> Result<(), Value> {
    let tasks = strings(args, "new_tasks");
    let at = indices(args, "insert_indices");
    if tasks.iter().any(|t| t.trim().is_empty()) {
        return Err(invalid("New tasks cannot be empty"));
    }
    if !unique(&at) {
        return Err(invalid("Insertion indices must be unique"));
    }
    if tasks.len() != at.len() {
        return Err(invalid("Must provide an index for every new task"));
    }
    let description = new_description(args)?;
    if let Some(i) = at.iter().find(|i| **i > list.items.len()) {
        return Err(out_of_bounds(*i, list.items.len()));
    }
    // each insertion into the list as the ones before it left it, as Vec::insert does
    let mut order: Vec<i64> = list.items.iter().map(|t| t.id).collect();
    for (i, task) in at.into_iter().zip(&tasks) {
        let id = add_task(scope, conv, list.root.id, task)?;
        order.insert(i.min(order.len()), id);
    }
    single::reorder(scope, &order);
    describe(scope, list, description)
}

fn remove(scope: &Scope, list: &Rooted, args: &Value) -> Result<(), Value> {
    let gone = indices(args, "remove_indices");
    if !unique(&gone) {
        return Err(invalid("Removal indices must be unique"));
    }
    let description = new_description(args)?;
    if let Some(i) = gone.iter().find(|i| **i >= list.items.len()) {
        return Err(out_of_bounds(*i, list.items.len()));
    }
    for i in gone {
        single::delete(scope, Find::Anywhere, list.items[i].id).map_err(failed)?;
    }
    describe(scope, list, description)
}

/// Every list of the conversation: its description, how many of its tasks are done, its id.
fn lookup(scope: &Scope, conv: &str) -> Value {
    let lists = rooted(scope, conv, KIND, LIST, None);
    if lists.is_empty() {
        return json!("No todo lists exist");
    }
    let blocks: Vec<String> = lists
        .iter()
        .map(|l| {
            let done = l.items.iter().filter(|t| t.status == Status::Completed).count();
            let id = meta_text(&l.root, LIST).unwrap_or_default();
            format!("Description: {} \nStatus: {done}/{} \nID: {id}", l.root.subject, l.items.len())
        })
        .collect();
    json!(blocks.join("\n\n"))
}

fn text(out: &Value) -> String {
    error_message(out).or(out.as_str()).unwrap_or_default().to_string()
}

/// The conversation's Kiro lists as Kiro keeps them, `[{tasks, description, context,
/// modified_files, id}]` (`todo.list_as`).
fn list_as(scope: &Scope, conv: &str) -> Value {
    rooted(scope, conv, KIND, LIST, None).iter().map(list_state).collect()
}

/// The kiro dialect.
pub static DIALECT: Dialect = Dialect {
    name: "kiro",
    aliases: &[],
    runtime: "Kiro CLI (Amazon Q Developer CLI)",
    description: "todo_list: named lists that persist, 0-based indices, a work log of context updates",
    tools: &[&TODO_LIST],
    list_as: Some(ListAs {
        shape: "its lists `[{tasks: [{task_description, completed}], description, context, modified_files, id}]`",
        read: list_as,
    }),
};
