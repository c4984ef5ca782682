// In-database tests, run by `cargo pgrx test` (each #[pg_test] in its own rolled-back
// transaction, as a superuser: row-level security is tested as a plain role in
// tests/pg_regress/sql/rls.sql instead). Included into src/lib.rs as `mod tests`.

use pgrx::prelude::*;

/// Runs `sql` and returns "SQLSTATE: message" of the error it raises, or None.
fn error_of(sql: &str) -> Option<String> {
    Spi::run(
        "CREATE OR REPLACE FUNCTION pg_temp.error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
         BEGIN EXECUTE q; RETURN NULL;
         EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$",
    )
    .unwrap();
    Spi::get_one_with_args::<String>("SELECT pg_temp.error_of($1)", &[sql.into()]).unwrap()
}

fn one<T: FromDatum + IntoDatum>(sql: &str) -> Option<T> {
    Spi::get_one::<T>(sql).unwrap()
}

fn run(sql: &str) {
    Spi::run(sql).unwrap()
}

/// Tenants a and b registered; context: tenant a, conversation c1, agent planner, turn t1.
fn setup() {
    run("INSERT INTO todo.tenants (tenant_id) VALUES ('a'), ('b')");
    run("SELECT todo.set_context('a', 'c1', 'planner', 't1')");
}

fn add(subject: &str) -> i64 {
    Spi::get_one_with_args::<i64>("INSERT INTO todo.todos (subject) VALUES ($1) RETURNING id", &[subject.into()])
        .unwrap()
        .unwrap()
}

// ---- context ----

#[pg_test]
fn context_missing_tenant_is_an_error_not_all_tenants() {
    run("INSERT INTO todo.tenants (tenant_id) VALUES ('a')");
    let expected = "22023: no tenant in context: todo.tenant is not set";
    assert_eq!(error_of("SELECT todo.current_tenant()").as_deref(), Some(expected));
    assert_eq!(error_of("INSERT INTO todo.todos (subject) VALUES ('x')").as_deref(), Some(expected));
    for blank in ["", "   "] {
        run(&format!("SELECT set_config('todo.tenant', '{blank}', true)"));
        assert_eq!(error_of("SELECT todo.current_tenant()").as_deref(), Some(expected));
    }
}

#[pg_test]
fn context_set_context_sets_all_four_for_the_transaction() {
    setup();
    assert_eq!(one::<String>("SELECT todo.current_tenant()").as_deref(), Some("a"));
    assert_eq!(one::<String>("SELECT current_setting('todo.tenant')").as_deref(), Some("a"));
    assert_eq!(one::<String>("SELECT todo.current_conversation()").as_deref(), Some("c1"));
    assert_eq!(one::<String>("SELECT todo.current_agent()").as_deref(), Some("planner"));
    assert_eq!(one::<String>("SELECT todo.current_turn()").as_deref(), Some("t1"));
    // NULL conversation = tenant-wide
    run("SELECT todo.set_context('b')");
    assert_eq!(one::<String>("SELECT todo.current_conversation()"), None);
    assert_eq!(one::<String>("SELECT todo.current_agent()"), None);
}

#[pg_test]
fn context_set_context_rejects_blank_and_unregistered_tenants() {
    setup();
    assert_eq!(
        error_of("SELECT todo.set_context(NULL)").as_deref(),
        Some("22023: todo.set_context: tenant must be a non-empty string")
    );
    assert_eq!(
        error_of("SELECT todo.set_context(' ')").as_deref(),
        Some("22023: todo.set_context: tenant must be a non-empty string")
    );
    assert_eq!(
        error_of("SELECT todo.set_context('nobody')").as_deref(),
        Some("42704: tenant \"nobody\" is not registered")
    );
}

#[pg_test]
fn context_defaults_fill_a_plain_insert() {
    setup();
    let (tenant, conv) = Spi::get_two::<String, String>(
        "INSERT INTO todo.todos (subject) VALUES ('x') RETURNING tenant_id, conversation_id",
    )
    .unwrap();
    assert_eq!((tenant.as_deref(), conv.as_deref()), (Some("a"), Some("c1")));
    let (agent, turn) =
        Spi::get_two::<String, String>("SELECT agent_id, turn_id FROM todo.todos WHERE tenant_id = 'a'").unwrap();
    assert_eq!((agent.as_deref(), turn.as_deref()), (Some("planner"), Some("t1")));
}

// ---- ids and positions ----

#[pg_test]
fn ids_count_per_tenant_from_one() {
    setup();
    assert_eq!((add("one"), add("two"), add("three")), (1, 2, 3));
    run("SELECT todo.set_context('b')");
    assert_eq!(add("b's first"), 1, "tenant b's ids do not reveal tenant a's activity");
    run("SELECT todo.set_context('a')");
    assert_eq!(add("four"), 4);
    assert_eq!(one::<i64>("SELECT position FROM todo.todos WHERE tenant_id = 'a' AND id = 4"), Some(4));
}

#[pg_test]
fn ids_explicit_id_moves_the_counter_past_it() {
    setup();
    run("INSERT INTO todo.todos (id, subject) VALUES (40, 'imported')");
    assert_eq!(add("next"), 41);
    run("INSERT INTO todo.todos (id, subject) VALUES (7, 'older import')");
    assert_eq!(add("after"), 42, "a lower explicit id does not move the counter back");
}

#[pg_test]
fn ids_and_tenant_never_change() {
    setup();
    let id = add("x");
    assert_eq!(
        error_of(&format!("UPDATE todo.todos SET id = 99 WHERE tenant_id = 'a' AND id = {id}")).as_deref(),
        Some("0A000: todo #1: tenant_id and id cannot be changed")
    );
    assert_eq!(
        error_of(&format!("UPDATE todo.todos SET tenant_id = 'b' WHERE tenant_id = 'a' AND id = {id}")).as_deref(),
        Some("0A000: todo #1: tenant_id and id cannot be changed")
    );
}

// ---- lifecycle: the transition table through the trigger ----

fn set_status(id: i64, status: &str) -> Option<String> {
    error_of(&format!("UPDATE todo.todos SET status = '{status}' WHERE tenant_id = 'a' AND id = {id}"))
}

fn status_of(id: i64) -> String {
    one::<String>(&format!("SELECT status FROM todo.todos WHERE tenant_id = 'a' AND id = {id}")).unwrap()
}

#[pg_test]
fn lifecycle_every_pair_follows_the_rust_table() {
    use crate::status::{check_transition, Status};
    setup();
    for from in Status::ALL {
        for to in Status::ALL {
            let id = add(&format!("{from} to {to}"));
            // reach `from` by an allowed path
            match from {
                Status::Pending => {}
                s => assert_eq!(set_status(id, s.as_str()), None),
            }
            let err = set_status(id, to.as_str());
            if check_transition(from, to).is_ok() {
                assert_eq!(err, None, "{from} -> {to}");
                assert_eq!(status_of(id), to.as_str());
            } else {
                assert_eq!(err, Some(format!("55000: todo #{id}: a todo cannot move from {from} to {to}")),);
                assert_eq!(status_of(id), from.as_str(), "a forbidden transition changes nothing");
            }
        }
    }
}

#[pg_test]
fn lifecycle_cancelled_is_accepted_and_stored_as_canceled() {
    setup();
    let id = add("x");
    assert_eq!(set_status(id, "cancelled"), None);
    assert_eq!(status_of(id), "canceled");
    let id2 = one::<i64>("INSERT INTO todo.todos (subject, status) VALUES ('y', 'cancelled') RETURNING id").unwrap();
    assert_eq!(status_of(id2), "canceled");
}

#[pg_test]
fn lifecycle_unknown_status_is_rejected() {
    setup();
    let id = add("x");
    assert_eq!(set_status(id, "done").as_deref(), Some("22023: invalid todo status \"done\""));
    assert_eq!(status_of(id), "pending");
}

// ---- stamps ----

fn stamps(id: i64) -> (bool, bool, bool) {
    let (s, c, u) = Spi::get_three::<bool, bool, bool>(&format!(
        "SELECT started_at IS NOT NULL, completed_at IS NOT NULL, updated_at > created_at
           FROM todo.todos WHERE tenant_id = 'a' AND id = {id}"
    ))
    .unwrap();
    (s.unwrap(), c.unwrap(), u.unwrap())
}

#[pg_test]
fn stamps_start_complete_reopen() {
    setup();
    let id = add("x");
    assert_eq!(stamps(id), (false, false, false));
    assert_eq!(set_status(id, "in_progress"), None);
    assert!(stamps(id).0, "entering in_progress stamps started_at");
    assert!(!stamps(id).1);
    assert_eq!(set_status(id, "completed"), None);
    assert!(stamps(id).1, "entering completed stamps completed_at");
    assert_eq!(
        one::<bool>(&format!("SELECT completed_at = now() FROM todo.todos WHERE tenant_id = 'a' AND id = {id}")),
        Some(true)
    );
    assert_eq!(set_status(id, "pending"), None);
    assert!(!stamps(id).1, "reopening clears completed_at");
    assert_eq!(set_status(id, "canceled"), None);
    assert!(stamps(id).1, "entering canceled stamps completed_at");
}

#[pg_test]
fn stamps_completed_at_given_by_the_writer_is_kept() {
    setup();
    let id = add("x");
    run(&format!(
        "UPDATE todo.todos SET status = 'completed', completed_at = '2020-01-02 03:04:05+00'
          WHERE tenant_id = 'a' AND id = {id}"
    ));
    assert_eq!(
        one::<bool>(&format!(
            "SELECT completed_at = '2020-01-02 03:04:05+00' FROM todo.todos WHERE tenant_id = 'a' AND id = {id}"
        )),
        Some(true)
    );
    let id2 = one::<i64>(
        "INSERT INTO todo.todos (subject, status, completed_at) VALUES ('y', 'completed', '2021-01-01 00:00:00+00') RETURNING id",
    )
    .unwrap();
    assert_eq!(
        one::<bool>(&format!(
            "SELECT completed_at = '2021-01-01 00:00:00+00' FROM todo.todos WHERE tenant_id = 'a' AND id = {id2}"
        )),
        Some(true)
    );
}

#[pg_test]
fn stamps_rows_born_in_progress_or_terminal() {
    setup();
    let id = one::<i64>("INSERT INTO todo.todos (subject, status) VALUES ('x', 'in_progress') RETURNING id").unwrap();
    assert_eq!(stamps(id), (true, false, false));
    let id = one::<i64>("INSERT INTO todo.todos (subject, status) VALUES ('y', 'completed') RETURNING id").unwrap();
    assert_eq!(stamps(id), (false, true, false));
}

#[pg_test]
fn stamps_updated_at_and_version_on_every_update() {
    setup();
    let id = add("x");
    // updated_at is now(), the transaction's start: compare with a written-back old value
    run(&format!("UPDATE todo.todos SET updated_at = '2000-01-01' , created_at = '2000-01-01' WHERE tenant_id = 'a' AND id = {id}"));
    run(&format!("UPDATE todo.todos SET subject = 'y' WHERE tenant_id = 'a' AND id = {id}"));
    assert!(stamps(id).2, "updated_at moved on");
    assert_eq!(one::<i32>(&format!("SELECT version FROM todo.todos WHERE tenant_id = 'a' AND id = {id}")), Some(3));
}

// ---- events ----

#[pg_test]
fn events_every_change_is_logged() {
    setup();
    let id = add("x");
    set_status(id, "in_progress");
    run(&format!("UPDATE todo.todos SET subject = 'renamed' WHERE tenant_id = 'a' AND id = {id}"));
    set_status(id, "completed");
    run(&format!("DELETE FROM todo.todos WHERE tenant_id = 'a' AND id = {id}"));
    let log = one::<String>(&format!(
        "SELECT string_agg(format('%s %s %s>%s %s', version, action, old_status, new_status, agent_id), ' | ' ORDER BY version)
           FROM todo.events WHERE tenant_id = 'a' AND todo_id = {id}"
    ))
    .unwrap();
    assert_eq!(
        log,
        "1 insert <NULL>>pending planner | 2 update pending>in_progress planner | \
         3 update in_progress>in_progress planner | 4 update in_progress>completed planner | \
         5 delete completed><NULL> planner"
            .replace("<NULL>", "")
    );
    assert_eq!(
        one::<String>(&format!(
            "SELECT changes::text FROM todo.events WHERE tenant_id = 'a' AND todo_id = {id} AND version = 3"
        ))
        .as_deref(),
        Some(r#"{"subject": "renamed"}"#)
    );
}

#[pg_test]
fn events_no_op_update_is_not_logged() {
    setup();
    let id = add("x");
    run(&format!("UPDATE todo.todos SET subject = subject WHERE tenant_id = 'a' AND id = {id}"));
    assert_eq!(
        one::<i64>(&format!("SELECT count(*) FROM todo.events WHERE tenant_id = 'a' AND todo_id = {id}")),
        Some(1)
    );
}

#[pg_test]
fn tenants_deleting_a_tenant_deletes_everything_it_owns() {
    setup();
    add("x");
    add("y");
    run("SELECT todo.set_context('b')");
    add("b's");
    run("DELETE FROM todo.tenants WHERE tenant_id = 'a'");
    for table in ["todo.todos", "todo.events", "todo.counters"] {
        assert_eq!(one::<i64>(&format!("SELECT count(*) FROM {table} WHERE tenant_id = 'a'")), Some(0), "{table}");
        assert_eq!(one::<i64>(&format!("SELECT count(*) FROM {table} WHERE tenant_id = 'b'")), Some(1), "{table}");
    }
}

// ---- claims and dependencies ----

#[pg_test]
fn claims_a_live_claim_admits_only_its_holder_even_in_plain_sql() {
    setup();
    let id = add("build");
    run("SET LOCAL todo.agent = 'agent-a'");
    assert_eq!(one::<i64>("SELECT fence FROM todo.claim()"), Some(1));
    run("SET LOCAL todo.agent = 'agent-b'");
    let err = error_of(&format!("UPDATE todo.todos SET status = 'completed' WHERE id = {id}")).unwrap();
    assert!(err.starts_with("55006: #1 is claimed by agent-a until "), "{err}");
    run("SET LOCAL todo.agent = 'agent-a'");
    run(&format!("UPDATE todo.todos SET status = 'completed' WHERE id = {id}"));
    let sql = format!("SELECT claimed_by IS NULL AND lease_expires_at IS NULL FROM todo.todos WHERE id = {id}");
    assert_eq!(one::<bool>(&sql), Some(true), "finishing ends the claim");
}

#[pg_test]
fn claims_a_lapsed_claim_is_claimable_again_and_fences_out_its_holder() {
    setup();
    let id = add("build");
    run("SET LOCAL todo.agent = 'agent-a'");
    run("SELECT * FROM todo.claim()");
    run(&format!("UPDATE todo.todos SET lease_expires_at = now() - interval '1 second' WHERE id = {id}"));
    let err = error_of(&format!("SELECT todo.finish({id})")).unwrap();
    assert!(err.starts_with("55000: your claim on #1 (fence 1) expired at "), "{err}");
    run("SET LOCAL todo.agent = 'agent-b'");
    assert_eq!(one::<i64>("SELECT fence FROM todo.claim()"), Some(2), "no cleanup needed");
    run("SET LOCAL todo.agent = 'agent-a'");
    assert_eq!(
        error_of(&format!("SELECT todo.finish({id}, 1)")).as_deref(),
        Some("55000: fence 1 is not the current claim on #1 (fence 2): it was claimed again")
    );
}

#[pg_test]
fn dependencies_refuse_cycles_and_hold_back_the_ready_queue() {
    setup();
    let (a, b, c) = (add("a"), add("b"), add("c"));
    run(&format!("SELECT todo.block({b}, {a}), todo.block({c}, {b})"));
    assert_eq!(
        error_of(&format!("SELECT todo.block({a}, {c})")).as_deref(),
        Some("22023: blocking #1 on #3 would make a cycle: #3 already waits for #1 (#3 → #2 → #1)")
    );
    assert_eq!(one::<Vec<i64>>("SELECT array_agg(id ORDER BY id) FROM todo.ready()"), Some(vec![a]));
    run(&format!("UPDATE todo.todos SET status = 'canceled' WHERE id = {a}"));
    assert_eq!(
        one::<Vec<i64>>("SELECT array_agg(id ORDER BY id) FROM todo.ready()"),
        Some(vec![b]),
        "a canceled todo no longer blocks"
    );
}

#[pg_test]
fn dependencies_are_searched_once_per_new_edge() {
    setup();
    let (a, b, c) = (add("a"), add("b"), add("c"));
    let start = crate::store::edges::searches();
    let searched = || crate::store::edges::searches() - start;
    run(&format!("SELECT todo.block({b}, {a})"));
    assert_eq!(searched(), 1, "todo.block searches; the row trigger does not search its edge again");
    run(&format!("SELECT todo.todo_writ('/todo block {c} on {b}')"));
    assert_eq!(searched(), 2, "the writ: one search");
    assert!(error_of(&format!("SELECT todo.block({a}, {c})")).is_some_and(|e| e.starts_with("22023: ")));
    assert_eq!(searched(), 3, "a refused edge: one search, nothing inserted");
    run(&format!("INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('a', {c}, {a})"));
    assert_eq!(searched(), 4, "plain SQL: the row trigger searches");
    assert_eq!(
        error_of(&format!("INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('a', {a}, {c})"))
            .as_deref(),
        Some("22023: blocking #1 on #3 would make a cycle: #3 already waits for #1 (#3 → #1)")
    );
    assert_eq!(searched(), 5);
    // the mark todo.block leaves for its own insert is gone after it: a plain INSERT of an
    // edge it checked is searched again
    run(&format!("SELECT todo.block({c}, {b})"));
    assert_eq!(searched(), 6, "an edge already there: one search");
    assert!(error_of(&format!(
        "INSERT INTO todo.dependencies (tenant_id, todo_id, depends_on) VALUES ('a', {c}, {b})"
    ))
    .is_some_and(|e| e.starts_with("23505: ")));
    assert_eq!(searched(), 7, "the trigger searched before the key refused the duplicate");
    assert!(!crate::store::edges::checked_by_operation("a", c, b), "no mark is left");
}

// ---- plans ----

#[pg_test]
fn statements_run_their_generic_plan_on_one_server() {
    setup();
    run("INSERT INTO todo.tenants (tenant_id) SELECT 't' || g FROM generate_series(1, 12) g");
    let (custom_before, generic_before) = crate::store::plans_made();
    // more calls per statement than the plan cache's five custom plans before it compares
    for t in 1..=12 {
        run(&format!("SELECT todo.set_context('t{t}', 'c{}', 'planner')", t % 3));
        run("SELECT todo.todo_writ('/todo add first\n/todo add second\n/todo start 1\n/todo done 1\n/todo block 2 on 1')");
        run("SELECT todo.todo_writ('/todo list')");
        run("SELECT todo.todo_open_block(todo.current_conversation())");
        run(
            r#"SELECT todo.call('todowrite', '{"todos": [{"content": "x", "status": "pending", "priority": "high"}]}')"#,
        );
        run("SELECT todo.rest('PATCH', '/v1/todos/2', '{\"status\": \"in_progress\"}')");
        run("SELECT todo.release(c.id, c.fence) FROM todo.claim() c");
    }
    let (custom, generic) = crate::store::plans_made();
    assert_eq!(custom - custom_before, 0, "no statement was planned for its values");
    assert!(generic - generic_before > 12 * 10, "the statements ran: {} generic plans", generic - generic_before);
}

/// The statements the extension has run through its kept plans (`store::plans_made`).
fn statements_run() -> i64 {
    let (custom, generic) = crate::store::plans_made();
    custom + generic
}

#[pg_test]
fn a_claim_of_the_next_is_a_probe_and_one_statement_a_release_and_a_finish_one_each() {
    setup();
    let (a, b) = (add("first"), add("second"));
    let before = statements_run();
    assert_eq!(one::<i64>("SELECT id FROM todo.claim()"), Some(a), "the first ready todo");
    // one probe (does any todo of the tenant wait for another?), then one UPDATE: a tenant
    // whose todos wait for nothing is claimed from a plan without the waiting checks (1.2.0)
    assert_eq!(statements_run() - before, 2, "the claim of the next ready todo: a probe and one UPDATE");
    run(&format!("SELECT todo.release({a})"));
    let claimed = |id: i64| -> i64 { one(&format!("SELECT fence FROM todo.claim({id})")).expect("claimed") };
    let fence = claimed(a);
    let before = statements_run();
    run(&format!("SELECT todo.release({a}, {fence})"));
    assert_eq!(statements_run() - before, 1, "the release: one UPDATE");
    assert_eq!(one::<String>(&format!("SELECT status FROM todo.todos WHERE id = {a}")).as_deref(), Some("pending"));
    let fence = claimed(b);
    let before = statements_run();
    run(&format!("SELECT todo.finish({b}, {fence}, outcome => 'shipped')"));
    assert_eq!(statements_run() - before, 1, "the finish: one UPDATE");
    assert_eq!(
        one::<String>(&format!("SELECT status || ' ' || outcome FROM todo.todos WHERE id = {b}")).as_deref(),
        Some("completed shipped")
    );
    // refused: the long way, for the same errors as before, and nothing written
    let before = statements_run();
    assert!(error_of(&format!("SELECT todo.finish({b}, {fence})")).is_some_and(|e| e.starts_with("55000: ")));
    assert!(statements_run() - before > 1, "a refused finish locks and reads the todo for its error");
    assert!(error_of(&format!("SELECT todo.release({a}, {fence})")).is_some_and(|e| e.starts_with("55000: ")));
    let fence = claimed(a);
    run("SELECT todo.set_context('a', 'c1', 'someone-else', 't1')");
    assert!(error_of(&format!("SELECT todo.release({a}, {fence})")).is_some_and(|e| e.starts_with("55006: ")));
    assert!(error_of(&format!("SELECT todo.finish({a}, {fence})")).is_some_and(|e| e.starts_with("55006: ")));
    assert_eq!(
        one::<String>(&format!("SELECT status || ' ' || claimed_by FROM todo.todos WHERE id = {a}")).as_deref(),
        Some("in_progress planner")
    );
}

#[pg_test]
fn a_batch_finish_is_one_statement_and_a_refusal_in_it_finishes_none() {
    setup();
    let ids: Vec<i64> = (0..4).map(|k| add(&format!("job {k}"))).collect();
    let fences =
        || -> String { one::<String>("SELECT string_agg(fence::text, ',' ORDER BY id) FROM todo.todos").unwrap() };
    assert_eq!(one::<i64>("SELECT count(*) FROM todo.claim_batch(3)"), Some(3));
    let claimed = fences();
    let (done, fenced) = (&ids[..3], claimed.split(',').take(3).collect::<Vec<_>>().join(","));
    let list = |ids: &[i64]| ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    let finish =
        |ids: &str, fences: &str| format!("SELECT todo.finish_batch('{{{ids}}}', '{{{fences}}}', outcome => 'ok')");
    // refused: another agent's fence for the third (a stale one) finishes none of the three
    let stale = format!("{},{},0", fenced.split(',').next().unwrap(), fenced.split(',').nth(1).unwrap());
    assert!(error_of(&finish(&list(done), &stale)).is_some_and(|e| e.starts_with("55000: ")), "a stale fence");
    assert_eq!(one::<i64>("SELECT count(*) FROM todo.todos WHERE status = 'in_progress'"), Some(3), "none finished");
    let before = statements_run();
    assert_eq!(one::<i64>(&finish(&list(done), &fenced)), Some(3));
    assert_eq!(statements_run() - before, 1, "one UPDATE finishes the batch");
    assert_eq!(
        one::<String>("SELECT string_agg(status || ' ' || coalesce(outcome, '-'), ',' ORDER BY id) FROM todo.todos")
            .as_deref(),
        Some("completed ok,completed ok,completed ok,pending -")
    );
    let logged = "SELECT count(*) FROM todo.events WHERE old_status = 'in_progress' AND new_status = 'completed'";
    assert_eq!(one::<i64>(logged), Some(3), "each finish leaves its event");
    // finished already, or open and unclaimed: the long way, with finish's own errors
    assert!(error_of(&finish(&list(&ids[..1]), "")).is_some_and(|e| e.starts_with("55000: ")), "finished");
    assert_eq!(one::<i64>(&format!("SELECT todo.finish_batch('{{{}}}')", ids[3])), Some(1), "an unclaimed todo");
    // a batch is at most todo.max_read_todos todos, as docs/coordination.md says
    run("SET todo.max_read_todos = 2");
    let over = error_of(&finish(&list(&[ids[0] + 100, ids[0] + 101, ids[0] + 102]), ""));
    assert!(over.as_deref().is_some_and(|e| e.starts_with("22023: ") && e.contains("todo.max_read_todos")), "{over:?}");
}
