-- writ_open_block: todo_open_block(conversation) and todo_open_preamble(conversation)
-- reproduce the seed's blocks; both are best-effort and never raise.
begin;
INSERT INTO todo.tenants (tenant_id) VALUES ('acme');
SELECT todo.set_context('acme', 'conv-1', 'supervisor') \gset
\t on
\a
-- nothing open: empty strings
SELECT todo.todo_open_block('conv-1') = '' AS empty_block, todo.todo_open_preamble('conv-1') = '' AS empty_preamble;
-- the seed's list (ids aside): 1 in progress, 2 pending, one of them tenant-wide
SELECT todo.todo_writ(E'/todo add review the canary deploy status\n/todo add write the post-mortem');
INSERT INTO todo.todos (conversation_id, subject) VALUES (NULL, 'file the rollback ticket');
INSERT INTO todo.todos (conversation_id, subject) VALUES ('conv-2', 'another thread''s todo');
SELECT todo.todo_writ(E'/todo start 1\n/todo list');
SELECT todo.todo_open_block('conv-1');
SELECT todo.todo_open_preamble('conv-1');
-- the delegation envelope a runtime builds around it
SELECT format(E'[DELEGATION CONTEXT]\nOriginal request: …\nDelegated by: index\nPipeline depth: 1/2\n%s\n[END DELEGATION CONTEXT]',
              todo.todo_open_block('conv-1'));
-- another conversation sees its own rows and the tenant-wide pool; no conversation: the pool
SELECT todo.todo_open_block('conv-2');
SELECT todo.todo_open_block(NULL);
-- done items leave the block
SELECT todo.todo_writ(E'/todo done 1\n/todo done 2\n/todo cancel 3') IS NOT NULL AS marked;
SELECT todo.todo_open_block('conv-1') = '' AS empty_again;
-- best-effort: no tenant in context gives '' and a WARNING, never an error
SET LOCAL todo.tenant = '';
SELECT todo.todo_open_block('conv-2') = '' AS empty_without_tenant;
SELECT todo.todo_open_preamble('conv-2') = '' AS empty_without_tenant;
rollback;
