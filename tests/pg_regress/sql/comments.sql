-- comments: every function, table, view and column of schema todo, and the private schema
-- todo_internal and its functions, explain themselves in \df+, \d+ and \dn+ (a COMMENT), so
-- a new object without one fails here.
SELECT 'function ' || p.oid::regprocedure AS uncommented
  FROM pg_proc p
 WHERE p.pronamespace IN ('todo'::regnamespace, 'todo_internal'::regnamespace)
   AND obj_description(p.oid, 'pg_proc') IS NULL
UNION ALL
SELECT 'schema ' || n.nspname
  FROM pg_namespace n
 WHERE n.nspname = 'todo_internal' AND obj_description(n.oid, 'pg_namespace') IS NULL
UNION ALL
SELECT 'relation ' || c.oid::regclass
  FROM pg_class c
 WHERE c.relnamespace = 'todo'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p')
   AND obj_description(c.oid, 'pg_class') IS NULL
UNION ALL
SELECT 'column ' || c.oid::regclass || '.' || a.attname
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relnamespace = 'todo'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'p')
   AND a.attnum > 0 AND NOT a.attisdropped AND col_description(c.oid, a.attnum) IS NULL
ORDER BY 1;
-- and how many there are of each, so the check cannot pass by looking at nothing
SELECT count(*) AS functions FROM pg_proc WHERE pronamespace = 'todo'::regnamespace;
SELECT count(*) AS internal_functions FROM pg_proc WHERE pronamespace = 'todo_internal'::regnamespace;
SELECT count(*) AS columns_commented
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relnamespace = 'todo'::regnamespace AND c.relkind IN ('r', 'v') AND a.attnum > 0 AND NOT a.attisdropped
   AND col_description(c.oid, a.attnum) IS NOT NULL;
