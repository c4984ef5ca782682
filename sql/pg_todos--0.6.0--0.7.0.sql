-- pg_todos 0.6.0 → 0.7.0: scaling out on Citus (todo.distribute and what a distributed
-- store needs). Each ALTER TABLE does one thing (Citus refuses several subcommands in one
-- statement on a distributed table).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.7.0'" to load this file. \quit
