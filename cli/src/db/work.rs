//! One request's work in the database: a place in the tenant's share (`gate`), a pooled
//! connection, one transaction with time limits and the tenant's context, one statement,
//! COMMIT; serialization failures and deadlocks run again.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;
use tokio_postgres::types::{FromSqlOwned, ToSql};
use tokio_postgres::Row;

use super::errors::{classify, ApiError, Class};
use super::gate::Gate;

/// The database as the service uses it: the pool, each tenant's share of it, and how its
/// requests come.
#[derive(Clone)]
pub struct Db {
    pub pool: Pool,
    pub gate: Arc<Gate>,
    /// `todo.via` of every transaction: `http` for `pg_todos serve` (the extension's errors then
    /// say how to fix them over HTTP, e.g. `?list=` for a tool that needs a list), `` otherwise
    pub via: &'static str,
}

/// Runs after a serialization failure or a deadlock, at most this many times.
const RETRIES: u32 = 5;

/// A statement that failed: its SQLSTATE when the server sent one, and the answer for it.
#[derive(Debug)]
pub struct Failure {
    pub sqlstate: Option<String>,
    pub answer: ApiError,
}

impl From<Failure> for ApiError {
    fn from(f: Failure) -> ApiError {
        f.answer
    }
}

/// Who a statement acts for: `todo.set_context(tenant, conversation, agent, turn)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Act {
    pub tenant: String,
    /// None: the tenant-wide pool
    pub conversation: Option<String>,
    pub agent: Option<String>,
    pub turn: Option<String>,
    /// the conversation is the list the connection is bound to (`todo.list_bound`): a tool's
    /// own project argument does not move the work to another list
    pub bound: bool,
}

/// `in_context` for the tenant's pool (no conversation, no turn): what the REST routes run.
pub async fn one<T: FromSqlOwned>(
    database: &Db,
    tenant: &str,
    agent: Option<&str>,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<T, Failure> {
    let act = Act { tenant: tenant.to_string(), agent: agent.map(str::to_string), ..Act::default() };
    in_context(database, &act, sql, params).await
}

/// The first column of the one row `sql` returns, run, once the tenant has a place in its
/// share of the pool, on a pooled connection in its own transaction: `lock_timeout` 10 s,
/// `statement_timeout` 30 s, `todo.via` (`Db::via`), `todo.list_bound` (`Act::bound`),
/// `todo.set_context` of `act`, the
/// statement, COMMIT. A
/// serialization failure (40001) or deadlock (40P01) runs the whole transaction again, up to
/// 5 more times, after a short pause. Errors: no place in the tenant's share in time (503), no
/// connection from the pool (503), or the statement's error classified by `ApiError::from_db`
/// (503 for what is not the caller's data, 500 otherwise), with its SQLSTATE; nothing is
/// committed then.
pub async fn in_context<T: FromSqlOwned>(
    database: &Db,
    act: &Act,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<T, Failure> {
    let rows = rows(database, act, &[(sql, params)]).await?;
    let row = rows.into_iter().next().expect("one row per statement");
    row.try_get(0).map_err(|e| Failure { sqlstate: None, answer: ApiError::from_db(&e) })
}

/// A statement and its parameters.
pub type Statement<'a> = (&'a str, &'a [&'a (dyn ToSql + Sync)]);

/// The one row each of `statements` returns, run in order in one transaction as `in_context`
/// runs one (the tenant's share, the time limits and the context, retries, COMMIT). Each runs
/// after the one before has answered, so under READ COMMITTED it sees everything committed
/// before it began, the earlier statements' view included. The rows are whole: a caller may
/// borrow from them (`Row::try_get` of `&str`) instead of copying. Errors: as `in_context`.
pub async fn rows(database: &Db, act: &Act, statements: &[Statement<'_>]) -> Result<Vec<Row>, Failure> {
    let tenant = act.tenant.as_str();
    let _pass = database.gate.enter(tenant).await.map_err(|answer| Failure { sqlstate: None, answer })?;
    let mut db = database.pool.get().await.map_err(|e| Failure { sqlstate: None, answer: ApiError::from_pool(&e) })?;
    let mut retries = 0;
    loop {
        let attempt = async {
            let tx = db.transaction().await?;
            let setup = tx
                .prepare_cached(
                    "SELECT set_config('lock_timeout', '10s', true), set_config('statement_timeout', '30s', true), \
                     set_config('todo.via', $5, true), set_config('todo.list_bound', $6, true), \
                     todo.set_context($1, $2, $3, $4)",
                )
                .await?;
            let bound = if act.bound && act.conversation.is_some() { "on" } else { "" };
            tx.execute(&setup, &[&tenant, &act.conversation, &act.agent, &act.turn, &database.via, &bound]).await?;
            let mut rows = Vec::with_capacity(statements.len());
            for (sql, params) in statements {
                let statement = tx.prepare_cached(sql).await?;
                rows.push(tx.query_one(&statement, params).await?);
            }
            tx.commit().await?;
            Ok::<Vec<Row>, tokio_postgres::Error>(rows)
        };
        match attempt.await {
            Ok(rows) => return Ok(rows),
            Err(e) => {
                let sqlstate = e.code().map(|c| c.code().to_string());
                if retries < RETRIES && sqlstate.as_deref().is_some_and(|s| classify(s) == Class::Retry) {
                    retries += 1;
                    tokio::time::sleep(pause(retries)).await;
                    continue;
                }
                return Err(Failure { answer: ApiError::from_db(&e), sqlstate });
            }
        }
    }
}

/// The pause before the `n`th retry: 10 ms doubling, plus up to as much again of jitter (from
/// the clock's nanoseconds) so that two transactions that failed each other do not meet again.
pub fn pause(n: u32) -> Duration {
    let base = 10u64 << n.min(6);
    let jitter =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| u64::from(d.subsec_nanos()))
            % base;
    Duration::from_millis(base + jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_and_stay_bounded() {
        for n in 1..=5 {
            let p = pause(n).as_millis() as u64;
            let base = 10u64 << n;
            assert!((base..2 * base).contains(&p), "retry {n}: {p} ms");
        }
        assert!(pause(60) < Duration::from_secs(2));
    }
}
