-- pg_todos 1.0.0 -> 1.1.0: nothing lost, nothing written where it should not be. An id is never
-- handed to a second todo (rows that were are repaired), a whole-list write never touches what
-- its writer could not see, the trackers number their tasks from the store.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.1.0'" to load this file. \quit

-- A whole-list write replaces only what a read of the list shows; a cut read says so in the
-- data (issue 52, part 1): the task files' functions say it.
COMMENT ON FUNCTION todo.export_tasks(text) IS
    'Seed 004''s task file of a conversation: {"tasks": [{id, title, description, done}]}, canceled todos left out; a list cut at todo.max_read_todos or todo.max_output_size says so in a top-level "omitted" field (and a NOTICE). Errors: 22023 no tenant in context.';
COMMENT ON FUNCTION todo.import_tasks(text, jsonb) IS
    'Replaces a conversation''s list with a seed 004 task file (matched by id, then title and place; left-out tasks deleted), only the tasks a read of the list shows: those past todo.max_read_todos or todo.max_output_size are kept as they are, counted in the answer''s "kept" field; returns the file after. Errors: 22023 a corrupt file or no tenant in context; 42704 tenant not registered.';
COMMENT ON FUNCTION todo.import(text, jsonb, text, boolean) IS
    'Imports a tracker''s files (format: taskmaster, beads, backlog, claude-todos, claude-tasks; files: an object of path to text) into a list (conversation; NULL: the context''s), another tag or list of the files into <list>#<name>: tasks matched by their ids, so importing the same files again changes nothing; a task whose todo no read of the list shows (past todo.max_read_todos or todo.max_output_size) is kept as it is, counted in "kept"; dry_run: write nothing, say what would change. Returns the counts and each task''s action. Errors: 22023 unknown format, no list, over 10,000 tasks or 64 MiB; 22P02 a bad file (its name, line or field, and what to fix); nothing is written on any error.';
