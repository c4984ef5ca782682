-- pg_todos 1.0.0 -> 1.1.0: nothing lost, nothing written where it should not be. An id is never
-- handed to a second todo (rows that were are repaired), a whole-list write never touches what
-- its writer could not see, the trackers number their tasks from the store.
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '1.1.0'" to load this file. \quit
