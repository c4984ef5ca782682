-- tools_cut_reads: a whole-list write replaces only what a read of the list shows (issue 52,
-- part 1). A read stops at todo.max_read_todos todos or todo.max_output_size bytes of text;
-- an agent that writes back exactly what a cut read showed must not delete, cancel or change
-- the todos past the cut: the write keeps them and says so. Each dialect's read copied back
-- into its write, under the byte cap (4kB: 4 of 10 todos of 1,000-character descriptions) and
-- the count cap (3 todos).
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
\t on
\a
-- ten todos t1..t10 in a list of their own, each with 1,000 characters of description
CREATE FUNCTION pg_temp.fill(conv text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM todo.set_context('acme', conv, 'agent');
  INSERT INTO todo.todos (conversation_id, subject, description)
  SELECT conv, 't' || g, repeat('d', 1000) FROM generate_series(1, 10) g;
END $$;
-- the list's todos, archived ones too: subject and status, in order (PL/pgSQL: Citus plans no
-- statement of an SQL function that has parameters)
CREATE FUNCTION pg_temp.list(conv text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN (SELECT count(*) || ': ' || string_agg(subject || '=' || status || CASE WHEN archived_at IS NULL THEN '' ELSE '(archived)' END, ' ' ORDER BY position, id)
            FROM todo.todos WHERE conversation_id = conv);
END $$;

-- the byte cap
SET LOCAL todo.max_output_size = '4kB';
-- OpenCode: todoread shows 4; its output's last line says the list goes on
SELECT pg_temp.fill('opencode');
SELECT split_part(todo.call('todoread', '{}')->>'output', E'\n', -1);
SELECT jsonb_array_length(todo.call('todoread', '{}')->'metadata'->'todos');
-- written back as read, t1 completed: t1..t4 are the writer's, t5..t10 stay
SELECT todo.call('todowrite', jsonb_build_object('todos',
         jsonb_set(todo.call('todoread', '{}')->'metadata'->'todos', '{0,status}', '"completed"')))->>'title';
SELECT pg_temp.list('opencode');
-- a shown todo left out is deleted; the ones never shown are not
SELECT todo.call('todowrite', jsonb_build_object('todos',
         (todo.call('todoread', '{}')->'metadata'->'todos') - 1))->>'title';
SELECT pg_temp.list('opencode');
-- the read's note copied back as an item makes no todo (over MCP, an answer in JSON carries
-- it as a field of its own, so the answer still parses)
SELECT todo.call('todowrite', jsonb_build_object('todos',
         (todo.call('todoread', '{}')->'metadata'->'todos')
         || jsonb_build_object('content', (todo.call_mcp('todoread', '{}')->'content'->0->>'text')::jsonb->>'pg_todos/omitted',
                               'status', 'pending', 'priority', 'medium')))->>'title';
SELECT pg_temp.list('opencode');
-- through MCP the write's answer says how many it kept, in its text (a field of an answer in
-- JSON) and its _meta
SELECT r->'_meta', (r->'content'->0->>'text')::jsonb->>'pg_todos/kept'
  FROM todo.call_mcp('todowrite', jsonb_build_object('todos', todo.call('todoread', '{}')->'metadata'->'todos')) r;

-- Claude Code's TodoWrite: the list as it reads it, written back
SELECT pg_temp.fill('claude');
SELECT todo.call('TodoWrite', todo.list_as('claude-todowrite', 'claude')) ? 'error' AS refused;
SELECT pg_temp.list('claude');
-- Gemini CLI's write_todos
SELECT pg_temp.fill('gemini');
SELECT todo.call('write_todos', todo.list_as('gemini', 'gemini')) ? 'error' AS refused;
SELECT pg_temp.list('gemini');
-- the todolist toolset's todolist__set, from todolist__get
SELECT pg_temp.fill('todolist');
SELECT todo.call('todolist__set', todo.call('todolist__get', '{}') - 'summary') ? 'error' AS refused;
SELECT pg_temp.list('todolist');
-- Codex's update_plan
SELECT pg_temp.fill('codex');
SELECT todo.call('update_plan', jsonb_build_object('plan', todo.list_as('codex', 'codex')->'plan'));
SELECT pg_temp.list('codex');
-- seed 004's task files: export_tasks says it is cut, inside the file; import_tasks of it
-- keeps what the file did not hold and says so in its answer
SELECT pg_temp.fill('tasks');
SELECT jsonb_array_length(todo.export_tasks('tasks')->'tasks'), todo.export_tasks('tasks')->>'omitted';
SELECT jsonb_array_length(f->'tasks'), f->>'kept'
  FROM todo.import_tasks('tasks', todo.export_tasks('tasks')) f;
SELECT pg_temp.list('tasks');
-- a tracker's files holding every task, imported onto a list a read shows 4 of: those 4
-- are matched, the other 6 are kept as they are (not added a second time)
SELECT pg_temp.fill('tm');
RESET todo.max_output_size;
CREATE TEMP TABLE tm_files AS
  SELECT jsonb_object_agg(path, content) AS files FROM todo.export('taskmaster', 'tm');
SET LOCAL todo.max_output_size = '4kB';
SELECT i->'added', i->'changed', i->'unchanged', i->'kept', i->>'note',
       (SELECT jsonb_agg(jsonb_build_array(t->'id', t->'fields')) FROM jsonb_array_elements(i->'tasks') t WHERE t->>'action' = 'changed')
  FROM tm_files, todo.import('taskmaster', files, 'tm') i;
SELECT pg_temp.list('tm');
RESET todo.max_output_size;

-- the count cap: the same, 3 todos a read
SET LOCAL todo.max_read_todos = 3;
SELECT pg_temp.fill('opencode3');
SELECT todo.call('todowrite', jsonb_build_object('todos',
         (todo.call('todoread', '{}')->'metadata'->'todos') - 0))->>'title';
SELECT pg_temp.list('opencode3');
SELECT pg_temp.fill('claude3');
SELECT todo.call('TodoWrite', todo.list_as('claude-todowrite', 'claude3')) ? 'error' AS refused;
SELECT pg_temp.list('claude3');
SELECT pg_temp.fill('codex3');
SELECT todo.call('update_plan', jsonb_build_object('plan', '[]'::jsonb));
SELECT pg_temp.list('codex3');
SELECT pg_temp.fill('tasks3');
SELECT jsonb_array_length(f->'tasks'), f->>'kept'
  FROM todo.import_tasks('tasks3', todo.export_tasks('tasks3')) f;
SELECT pg_temp.list('tasks3');
RESET todo.max_read_todos;
-- with no cap in the way, a write replaces the whole list as before
SELECT todo.set_context('acme', 'tasks3', 'agent') IS NOT NULL;
SELECT todo.call('todowrite', '{"todos": [{"content": "only", "status": "pending", "priority": "low"}]}')->>'title';
SELECT pg_temp.list('tasks3');
rollback;
