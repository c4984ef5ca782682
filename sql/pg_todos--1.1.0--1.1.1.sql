-- pg_todos 1.1.0 -> 1.1.1: the code rebuilt for growth (one column table, a tracker format as one
-- declaration, no function over 80 lines); behaviour unchanged. In SQL only comments change:
-- todo.import and todo.export point at the one list of tracker formats (docs/tools.md) instead of
-- naming the formats, and a token's default list is said to serve its REST calls as well as MCP.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.1.1'" to load this file. \quit

COMMENT ON FUNCTION todo.import(text, jsonb, text, boolean) IS
    'Imports a tracker''s files (format: a tracker''s format, each listed with its files in docs/tools.md, "Trackers'' files"; files: an object of path to text) into a list (conversation; NULL: the context''s), another tag or list of the files into <list>#<name>: tasks matched by their ids, so importing the same files again changes nothing; a task whose todo no read of the list shows (past todo.max_read_todos or todo.max_output_size) is kept as it is, counted in "kept"; dry_run: write nothing, say what would change. Returns the counts and each task''s action. Errors: 22023 unknown format, no list, over 10,000 tasks or 64 MiB; 22P02 a bad file (its name, line or field, and what to fix); nothing is written on any error.';

COMMENT ON FUNCTION todo.export(text, text) IS
    'Exports a list (conversation; NULL: the context''s) as a tracker''s files (format: one of todo.import''s): each file''s path, as the tracker keeps it, and its text, which the tracker reads back. Errors: 22023 unknown format or no list.';

COMMENT ON COLUMN todo.tokens.default_list IS 'The list (conversation) the token''s requests work on when they name none: its MCP calls (/mcp, unless ?list= names one) and its REST calls (/v1/todos); NULL: the tenant-wide pool.';

COMMENT ON FUNCTION todo.create_token(text, text, boolean, text, interval) IS
    'Creates a bearer token of the HTTP service for a tenant; returns its id and its secret, shown only this once (only a hash is stored). person => true: a token for a person (the board), the only kind that may act as person:<label> (X-Actor: person); false (the default): an agent''s. default_list: the list (conversation) its requests work on when they name none: its MCP calls (/mcp, unless ?list= names one) and its REST calls (/v1/todos); NULL: the tenant-wide pool. expires_in: how long it authenticates (NULL, the default: until revoked). Errors: 22023 blank label or default list, or an expires_in not above zero; 22004 person NULL; 42704 unknown tenant.';
