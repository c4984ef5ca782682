-- pg_todos 0.8.0 -> 0.9.0: hardening against hostile input (roles bound to a tenant, agent and
-- app roles, the context valid only in the transaction that set it, row locks instead of
-- advisory locks, input limits, a polynomial cycle check, a bounded board and event catch-up).
\echo Use "ALTER EXTENSION pg_todos UPDATE TO '0.9.0'" to load this file. \quit
