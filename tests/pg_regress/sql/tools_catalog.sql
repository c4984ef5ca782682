-- tools_catalog: todo.tools() lists every seed's tools in MCP's tool shape, from the same
-- registry todo.call() dispatches on; unknown tools and schema-breaking arguments get an
-- error object and change nothing.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'agent', 'turn-1') \gset
-- (the seeds' and coord's tools here; each runtime's in its own test, so a new dialect changes
-- no expected output but its own)
SELECT t->>'name' AS name, jsonb_typeof(t->'inputSchema') AS schema, length(t->>'description') > 20 AS described,
       t->>'name' ~ '^[A-Za-z0-9_.-]{1,128}$' AS mcp_name, t->'_meta'->>'pg_todos/dialect' AS dialect
  FROM jsonb_array_elements(todo.tools()) t
 WHERE t->'_meta'->>'pg_todos/dialect' IN ('plan', 'opencode', 'todolist', 'tasks', 'coord');
-- every tool of every dialect: an object schema, a description, a name MCP allows, a dialect
-- todo.dialects() has; no dialect has one name twice
SELECT t->>'name' AS bad_tool FROM jsonb_array_elements(todo.tools()) t
 WHERE jsonb_typeof(t->'inputSchema') <> 'object' OR t->'inputSchema'->>'type' <> 'object'
    OR length(t->>'description') <= 20 OR t->>'name' !~ '^[A-Za-z0-9_.-]{1,128}$'
    OR t->'_meta'->>'pg_todos/dialect' NOT IN (SELECT name FROM todo.dialects());
SELECT t->'_meta'->>'pg_todos/dialect' AS dialect, t->>'name' AS twice FROM jsonb_array_elements(todo.tools()) t
 GROUP BY 1, 2 HAVING count(*) > 1;
-- the dialects, one row each, in catalog order: every tool of todo.tools() is listed under
-- its dialect, in the same order, and no dialect lists a tool todo.tools() does not have
SELECT name, aliases, runtime, description, array_length(tools, 1) AS tools, list_shape FROM todo.dialects()
 WHERE name IN ('plan', 'opencode', 'todolist', 'tasks', 'coord', 'claude-tasks', 'kimi');
-- every dialect: a name (unique, as its aliases), a runtime, a description, a tool
SELECT name AS bad_dialect FROM todo.dialects()
 WHERE name !~ '^[a-z0-9-]+$' OR runtime = '' OR description = '' OR coalesce(array_length(tools, 1), 0) = 0;
SELECT n AS named_twice FROM (SELECT name FROM todo.dialects() UNION ALL SELECT unnest(aliases) FROM todo.dialects()) x(n)
 GROUP BY n HAVING count(*) > 1;
SELECT (SELECT array_agg(d.name || '/' || t ORDER BY d.ord, tool.ord)
          FROM todo.dialects() WITH ORDINALITY d(name, aliases, runtime, description, tools, list_shape, ord),
               unnest(d.tools) WITH ORDINALITY tool(t, ord))
     = (SELECT array_agg((t->'_meta'->>'pg_todos/dialect') || '/' || (t->>'name') ORDER BY ord)
          FROM jsonb_array_elements(todo.tools()) WITH ORDINALITY x(t, ord)) AS dialects_list_the_catalog;
-- a dialect's tool by its qualified name, the seed number too; an unknown dialect is an unknown tool
SELECT todo.call('kimi/SetTodoList', '{}') AS kimi, todo.call('003/todolist__get', '{}') AS by_alias,
       todo.call('nope/SetTodoList', '{}') -> 'error' ->> 'code' AS unknown;
-- nothing but MCP's tool fields
SELECT DISTINCT k FROM jsonb_array_elements(todo.tools()) t, jsonb_object_keys(t) k ORDER BY 1;
-- MCP's hints: every tool has one of five sets (dialect.rs, Effect); the read-only tools
SELECT t->'annotations' AS hints, count(*) FROM jsonb_array_elements(todo.tools()) t GROUP BY 1 ORDER BY 1;
SELECT t->'_meta'->>'pg_todos/dialect' AS dialect, string_agg(t->>'name', ', ' ORDER BY n) AS read_only
  FROM jsonb_array_elements(todo.tools()) WITH ORDINALITY x(t, n) WHERE (t->'annotations'->>'readOnlyHint')::boolean
 GROUP BY 1 ORDER BY min(n);
-- the tools whose result is JSON of one known shape, and what that shape requires
SELECT t->>'name' AS tool, t->'outputSchema'->'required' AS required
  FROM jsonb_array_elements(todo.tools()) WITH ORDINALITY x(t, n) WHERE t ? 'outputSchema' ORDER BY n;
-- every tool's schema is an object schema; every call by name reaches that tool
SELECT count(*) FILTER (WHERE t->'inputSchema'->>'type' = 'object') = count(*) AS all_object_schemas
  FROM jsonb_array_elements(todo.tools()) t;
-- seed 003's schemas, exactly as the seed prints them
SELECT t->'inputSchema' = '{
    "type": "object",
    "required": ["todos"],
    "additionalProperties": false,
    "properties": {
      "todos": {
        "type": "array",
        "items": {
          "type": "object",
          "required": ["content", "status", "activeForm"],
          "additionalProperties": false,
          "properties": {
            "content": {
              "type": "string",
              "minLength": 1
            },
            "status": {
              "type": "string",
              "enum": ["pending", "in_progress", "completed"]
            },
            "activeForm": {
              "type": "string",
              "minLength": 1
            }
          }
        }
      }
    }
  }' AS set_schema_matches_seed
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'todolist__set';
SELECT t->'inputSchema' = '{"type": "object", "additionalProperties": false, "properties": {}}' AS get_schema_matches_seed
  FROM jsonb_array_elements(todo.tools()) t WHERE t->>'name' = 'todolist__get';
-- an unknown tool
SELECT todo.call('nope', '{}');
SELECT todo.call('todo_Write', '{}');
-- a name qualified by its dialect (for when two dialects share a name); a wrong dialect
SELECT todo.call('gemini/write_todos', '{}');
SELECT todo.call('codex/write_todos', '{}');
SELECT todo.call('nosuch/write_todos', '{}');
-- a name several runtimes share: a bare name is the first's tool in catalog order, `dialect/name`
-- any one's (the first dialect of each shared name here; every one is reached by its own)
SELECT t->>'name' AS name, (array_agg(t->'_meta'->>'pg_todos/dialect' ORDER BY n))[1] AS first_dialect
  FROM jsonb_array_elements(todo.tools()) WITH ORDINALITY AS c(t, n) GROUP BY 1 HAVING count(*) > 1 ORDER BY min(n);
SELECT todo.call('todo_write', '{"todos": []}') AS cursor_wants_merge;
SELECT todo.call('qwen/todo_write', '{"todos": []}') AS qwen_clears;
SELECT todo.call('update_plan', '{"plan": [], "explanation": "x"}') AS codex_explains;
SELECT todo.call('zed/update_plan', '{"plan": [{"step": "x", "status": "started"}]}') AS zed_refuses;
-- arguments that break the schema: wrong types, missing and extra fields, not an object
SELECT todo.call('create_todo', '{}');
SELECT todo.call('create_todo', '{"items": "x"}');
SELECT todo.call('create_todo', '{"items": [{"title": 5}]}');
SELECT todo.call('create_todo', '{"items": [{"title": "x", "order": 0}]}');
SELECT todo.call('create_todo', '{"items": [{"title": "x", "bogus": true}]}');
SELECT todo.call('list_todo', '{"status": "done"}');
SELECT todo.call('complete_todo', '{"todoId": 1, "outcome": "x"}');
SELECT todo.call('todowrite', '{"todos": [{"content": "x", "status": "pending"}]}');
SELECT todo.call('todowrite', '{"todos": [{"content": "x", "status": "pending", "priority": "urgent"}]}');
SELECT todo.call('todoread', '{"extra": 1}');
SELECT todo.call('AddTask', '[]');
SELECT todo.call('AddTask', 'null');
SELECT todo.call('DeleteTask', '{"taskId": null}');
SELECT todo.call('todowrite', jsonb_build_object('todos', (SELECT jsonb_agg(jsonb_build_object('content', 'x', 'status', 'pending', 'priority', 'low')) FROM generate_series(1, 1001))));
-- nesting deeper than 32 levels (and deeper than a JSON parser's recursion limit)
SELECT todo.call('todowrite', ('{"todos": ' || repeat('[', 40) || repeat(']', 40) || '}')::jsonb);
SELECT todo.call('todowrite', ('{"todos": ' || repeat('[', 5000) || repeat(']', 5000) || '}')::jsonb);
SELECT todo.rest('POST', '/v1/todos', ('{"subject": ' || repeat('[', 5000) || repeat(']', 5000) || '}')::jsonb);
-- the arguments are read straight from jsonb exactly where a JSON parser reads their text:
-- 127 levels are read (the unknown tool is the error), 128 are not; a number past the
-- parser's range is named as such
SELECT todo.call('no_such_tool', (repeat('[', 127) || repeat(']', 127))::jsonb) -> 'error' ->> 'code' AS code;
SELECT todo.call('no_such_tool', (repeat('[', 128) || repeat(']', 128))::jsonb) -> 'error' ->> 'message' AS message;
SELECT todo.call('todowrite', '{"todos": [{"content": "x", "status": "pending", "priority": 1e400}]}');
SELECT todo.call('todowrite', '{"todos": [{"content": "x", "status": "pending", "priority": 1e308}]}') -> 'error' ->> 'message' AS message;
SELECT todo.rest('POST', '/v1/todos', '{"subject": "x", "priority": 1e400}'::jsonb);
-- nothing was written by any of them
SELECT count(*) AS todos FROM todo.todos;
rollback;
