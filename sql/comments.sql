-- What \df+ and \d+ show for every function, table and column of schema todo that the SQL
-- files beside this one do not comment where they create it (the functions pgrx generates
-- from Rust, the columns of the tables and views). Run last.

-- Context
COMMENT ON FUNCTION todo.set_context(text, text, text, text) IS
    'Sets the context for the current transaction, as SET LOCAL would: tenant (required, registered in todo.tenants), conversation (NULL: tenant-wide), agent, turn. Returns nothing. Errors: 22023 tenant NULL or blank; 42501 a role bound to another tenant; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.current_tenant() IS
    'The tenant in context (todo.tenant, set in this transaction; for a role bound to a tenant and no tenant set, its own); the default of every tenant_id column. Errors: 22023 when none is set, or only by an earlier transaction (never "all tenants"); 42501 a role bound to another tenant.';
COMMENT ON FUNCTION todo.current_conversation() IS
    'The conversation in context (todo.conversation), or NULL: tenant-wide. Raises nothing.';
COMMENT ON FUNCTION todo.current_agent() IS
    'The agent in context (todo.agent), or NULL. Raises nothing.';
COMMENT ON FUNCTION todo.current_turn() IS
    'The turn in context (todo.turn), or NULL. Raises nothing.';
COMMENT ON FUNCTION todo.channel() IS
    'The LISTEN channel of the context''s tenant''s change hints: todo_ and 40 hex digits of an HMAC of the tenant id under this installation''s secret key, so only a role acting for the tenant learns it. Hints are sent only with todo.notify = hint: an empty payload, at commit, at most one per tenant per 100 ms per backend; read what changed with todo.changes_since. Errors: 22023 no tenant in context, 42501 a role bound to another tenant.';

-- The writ and the open block
COMMENT ON FUNCTION todo.todo_writ(text) IS
    'Runs every /todo command line of a message (seed 000) in the context''s conversation; returns each command echoed with its OK:/ERR: result and [END TODO]. A rule''s refusal is an ERR: line, never an error. Errors: 22004 a NULL message; 22023 no tenant in context; 42704 tenant not registered; a cancel, timeout, deadlock, serialization failure or lock timeout is raised with nothing committed.';
COMMENT ON FUNCTION todo.todo_open_block(text) IS
    'The open todos of a conversation plus the tenant-wide pool, as a sub-agent''s delegation block ("Open todos (mark progress as you go — …):"); '''' when nothing is open. Best effort: a failed probe (no tenant, no privileges) is a WARNING and ''''. Errors: only the errors to retry are raised (57014 a cancel or timeout, 40P01 a deadlock, 40001 a serialization failure, 55P03 a lock timeout; docs/errors.md).';
COMMENT ON FUNCTION todo.todo_open_preamble(text) IS
    'The same list framed for the supervisor''s own turn ([OPEN TODOS] … [END OPEN TODOS]); '''' when nothing is open. Best effort, as todo_open_block. Errors: only the errors to retry are raised (57014 a cancel or timeout, 40P01 a deadlock, 40001 a serialization failure, 55P03 a lock timeout; docs/errors.md).';

-- Tool dialects
COMMENT ON FUNCTION todo.tools() IS
    'Every tool of every dialect (todo.dialects() lists them) as MCP tool objects {name, description, inputSchema, _meta: {"pg_todos/dialect"}}, in catalog order. Raises nothing.';
COMMENT ON FUNCTION todo.dialects() IS
    'Every tool dialect, in catalog order: its name (for pg_todos mcp --tools, /mcp?tools= and todo.call(''dialect/tool'', ...)), earlier names still accepted, the runtime or tracker it speaks for, what its tools do, their names, and the shape todo.list_as reads a list in (NULL: none). Raises nothing.';
COMMENT ON FUNCTION todo.board_act(jsonb) IS
    'One change a person makes on the board, for the tenant and agent in context (pg_todos serve sets person:<label>): {"op": add | edit | move | status | reorder | block | unblock | release | create_list | archive | unarchive | comment | check | add_item | bulk, ...its fields}; edit (labels and due_at too), move (to another list or under another parent) and status take the version the person read and refuse a todo changed since; bulk does up to 200 of them on as many todos, all or none. Returns {"status": <http status>, "body": {"todo", ...} or {"error", "current"?}} as todo.rest does: 400 a bad action, 404 no such todo, 409 the lifecycle, a claim, a cycle or a stale version, 422 a value over its limit. Errors: 22023 no tenant in context, 22004 a NULL action.';
COMMENT ON FUNCTION todo.board_todo(bigint) IS
    'One todo of the tenant in context as the board''s detail panel shows it (archived too): {"status": 200, "body": {"todo", "subtasks", "blocked_by", "blocks" (at most 200 each), "history" (its newest 100 events: who did what, when), "comments" (its newest 100), "checklists" ({"acceptance", "done"}: each item''s position, text and checked), and the *_omitted counts}}, or {"status": 404}. Errors: 22023 no tenant in context, 22004 a NULL id.';
COMMENT ON FUNCTION todo.acp_plan(text) IS
    'A conversation''s list as an Agent Client Protocol v1 session/update "plan" ({"sessionUpdate": "plan", "entries": [{content, priority, status}]}). Errors: 22004 a NULL conversation; 22023 no tenant in context.';
COMMENT ON FUNCTION todo.export_tasks(text) IS
    'Seed 004''s task file of a conversation: {"tasks": [{id, title, description, done}]}, canceled todos left out; a list cut at todo.max_read_todos or todo.max_output_size says so in a top-level "omitted" field (and a NOTICE). Errors: 22004 a NULL conversation; 22023 no tenant in context.';
COMMENT ON FUNCTION todo.import(text, jsonb, text, boolean) IS
    'Imports a tracker''s files (format: a tracker''s format, each listed with its files in docs/tools.md, "Trackers'' files"; files: an object of path to text) into a list (conversation; NULL: the context''s), another tag or list of the files into <list>#<name>: tasks matched by their ids, so importing the same files again changes nothing; a task whose todo no read of the list shows (past todo.max_read_todos or todo.max_output_size) is kept as it is, counted in "kept"; dry_run: write nothing, say what would change. Returns the counts and each task''s action. Errors: 22023 unknown format, no list, over 10,000 tasks or 64 MiB; 22P02 a bad file (its name, line or field, and what to fix); nothing is written on any error.';
COMMENT ON FUNCTION todo.export(text, text) IS
    'Exports a list (conversation; NULL: the context''s) as a tracker''s files (format: one of todo.import''s): each file''s path, as the tracker keeps it, and its text, which the tracker reads back. Errors: 22023 unknown format or no list.';
COMMENT ON FUNCTION todo.import_tasks(text, jsonb) IS
    'Replaces a conversation''s list with a seed 004 task file (matched by id, then title and place; left-out tasks deleted), only the tasks a read of the list shows: those past todo.max_read_todos or todo.max_output_size are kept as they are, counted in the answer''s "kept" field; returns the file after. Errors: 22004 a NULL conversation or file; 22023 a corrupt file or no tenant in context; 42704 tenant not registered.';

-- todo.todos
COMMENT ON COLUMN todo.todos.tenant_id IS 'The tenant (default: todo.current_tenant()); row-level security shows only the context''s tenant.';
COMMENT ON COLUMN todo.todos.id IS 'Per-tenant id, handed out in order (todo.counters, todo.id_ranges); the number agents say (#3).';
COMMENT ON COLUMN todo.todos.turn_id IS 'The turn that created the todo (todo.turn in context).';
COMMENT ON COLUMN todo.todos.agent_id IS 'The agent that created the todo (todo.agent in context).';
COMMENT ON COLUMN todo.todos.subject IS 'What to do, in a line (required, not blank).';
COMMENT ON COLUMN todo.todos.description IS 'Details, free text.';
COMMENT ON COLUMN todo.todos.active_form IS 'The present-continuous form a runtime shows while it is in progress (Claude Code''s activeForm).';
COMMENT ON COLUMN todo.todos.priority IS 'high, medium or low, or NULL.';
COMMENT ON COLUMN todo.todos.completion_criteria IS 'How to tell it is done, free text.';
COMMENT ON COLUMN todo.todos.agent_type IS 'The kind of agent meant to do it (a sub-agent type), free text.';
COMMENT ON COLUMN todo.todos.outcome IS 'What came of it, set when it is finished (todo.finish''s outcome).';
COMMENT ON COLUMN todo.todos.created_at IS 'When the todo was added.';
COMMENT ON COLUMN todo.todos.updated_at IS 'When the todo last changed (set by the row trigger). A lease renewal (todo.heartbeat) is not a change: it keeps updated_at, so it can be a HOT update.';
COMMENT ON COLUMN todo.todos.started_at IS 'When it first went in_progress (set by the row trigger).';
COMMENT ON COLUMN todo.todos.completed_at IS 'When it was completed or canceled; cleared by a reopen (set by the row trigger).';

-- todo.tenants, todo.tokens
COMMENT ON COLUMN todo.tenants.tenant_id IS 'The tenant''s id, as todo.set_context takes it.';
COMMENT ON COLUMN todo.tenants.name IS 'A display name, free text.';
COMMENT ON COLUMN todo.tenants.created_at IS 'When the tenant was registered.';
COMMENT ON COLUMN todo.tokens.token_id IS 'The token''s id (todo.revoke_token takes it).';
COMMENT ON COLUMN todo.tokens.tenant_id IS 'The tenant the token acts for.';
COMMENT ON COLUMN todo.tokens.created_at IS 'When todo.create_token made it.';

-- todo.events
COMMENT ON COLUMN todo.events.tenant_id IS 'The tenant of the todo.';
COMMENT ON COLUMN todo.events.todo_id IS 'The todo that changed.';
COMMENT ON COLUMN todo.events.version IS 'The todo''s version after the change (its insert: 1).';
COMMENT ON COLUMN todo.events.action IS 'insert, update or delete.';
COMMENT ON COLUMN todo.events.conversation_id IS 'The todo''s conversation (NULL: tenant-wide).';
COMMENT ON COLUMN todo.events.turn_id IS 'The turn in context when it changed.';
COMMENT ON COLUMN todo.events.old_status IS 'The status before (NULL for an insert).';
COMMENT ON COLUMN todo.events.new_status IS 'The status after (NULL for a delete).';
COMMENT ON COLUMN todo.events.event_at IS 'When the change was made (its transaction''s start).';

-- todo.dependencies
COMMENT ON COLUMN todo.dependencies.tenant_id IS 'The tenant of both todos.';
COMMENT ON COLUMN todo.dependencies.todo_id IS 'The todo that waits.';
COMMENT ON COLUMN todo.dependencies.depends_on IS 'The todo it waits for; the edge holds until that one is completed or canceled.';
COMMENT ON COLUMN todo.dependencies.created_at IS 'When the edge was added.';

-- todo.checklist_items, todo.comments
COMMENT ON COLUMN todo.checklist_items.tenant_id IS 'The tenant of the todo (by default the one in context).';
COMMENT ON COLUMN todo.checklist_items.todo_id IS 'The todo the item is on.';
COMMENT ON COLUMN todo.checklist_items.kind IS 'Which list: acceptance (its acceptance criteria) or done (its definition of done).';
COMMENT ON COLUMN todo.checklist_items.position IS 'Its place in its list, from 1 (Backlog.md''s #1, #2, …); at most 100.';
COMMENT ON COLUMN todo.checklist_items.text IS 'What is to be true.';
COMMENT ON COLUMN todo.checklist_items.checked IS 'Whether it is checked off.';
COMMENT ON COLUMN todo.comments.tenant_id IS 'The tenant of the todo (by default the one in context).';
COMMENT ON COLUMN todo.comments.todo_id IS 'The todo commented on.';
COMMENT ON COLUMN todo.comments.position IS 'Its place among the todo''s comments, from 1, in the order written; at most 1000.';
COMMENT ON COLUMN todo.comments.author IS 'Who wrote it (Backlog.md''s commentAuthor); NULL: not said.';
COMMENT ON COLUMN todo.comments.body IS 'What it says.';
COMMENT ON COLUMN todo.comments.created_at IS 'When it was written.';

-- id allocation (internal)
COMMENT ON COLUMN todo.counters.tenant_id IS 'The tenant.';
COMMENT ON COLUMN todo.counters.last_id IS 'The highest id handed out to the tenant so far.';
COMMENT ON COLUMN todo.id_ranges.tenant_id IS 'The tenant.';
COMMENT ON COLUMN todo.id_ranges.slot IS 'Which of the tenant''s ranges (concurrent writers take different slots).';
COMMENT ON COLUMN todo.id_ranges.next_id IS 'The next id this range hands out.';
COMMENT ON COLUMN todo.id_ranges.last_id IS 'The last id of the range.';

-- todo.roles, todo.locks (internal)
COMMENT ON COLUMN todo.roles.role IS 'The role granted.';
COMMENT ON COLUMN todo.roles.tenant_id IS 'The one tenant the role may act for; NULL: any tenant (a service).';
COMMENT ON COLUMN todo.roles.plain_sql IS 'true: an app (plain SQL on todo.todos); false: an agent (the functions only).';
COMMENT ON COLUMN todo.roles.granted_at IS 'When todo.grant_usage first granted it.';
COMMENT ON COLUMN todo.locks.tenant_id IS 'The tenant.';
COMMENT ON COLUMN todo.locks.name IS 'What the row serializes: list:<conversation> (whole-list replaces) or dependencies (the graph).';
COMMENT ON COLUMN todo.locks.checklist IS 'On a list row: the markdown document Goose''s and Continue''s tools wrote (its notes as text, each checkbox line as the todo it became), read back with the todos as they are now.';
COMMENT ON COLUMN todo.locks.written_in_turn IS 'On a list row: the turn of its last LangChain write_todos (LangChain allows one per model turn).';
COMMENT ON COLUMN todo.locks.properties IS 'On a list row: what dialects keep about the list as a whole (Task Master''s tag: its description and when it was made; on a project''s list, its current tag). NULL: nothing.';

-- todo.distribution
COMMENT ON COLUMN todo.distribution.singleton IS 'Always true: the table holds at most one row.';
COMMENT ON COLUMN todo.distribution.distributed_at IS 'When todo.distribute() first spread the store.';
COMMENT ON COLUMN todo.distribution.distributed_by IS 'The role that ran it.';
COMMENT ON COLUMN todo.distribution.pg_todos_version IS 'pg_todos'' version then.';
COMMENT ON COLUMN todo.distribution.citus_version IS 'Citus''s version then.';

-- todo.needs_attention
COMMENT ON COLUMN todo.needs_attention.tenant_id IS 'The tenant.';
COMMENT ON COLUMN todo.needs_attention.todo_id IS 'The todo.';
COMMENT ON COLUMN todo.needs_attention.conversation_id IS 'Its conversation (NULL: tenant-wide).';
COMMENT ON COLUMN todo.needs_attention.subject IS 'Its subject.';
COMMENT ON COLUMN todo.needs_attention.status IS 'Its status.';
COMMENT ON COLUMN todo.needs_attention.claimed_by IS 'Who holds (or held) the claim, if any.';
COMMENT ON COLUMN todo.needs_attention.for_seconds IS 'Seconds since "since".';
