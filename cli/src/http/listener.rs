//! The server's one LISTEN connection: a dedicated tokio-postgres client (not from the pool)
//! that LISTENs the channel of every tenant with subscribers and wakes that tenant's hub on
//! each notification. Commands run in the order they were sent, so an UNLISTEN of a hub that
//! closed never overtakes the LISTEN of the hub that replaced it. When the connection drops it
//! reconnects with backoff (0.1 s doubling to 5 s), LISTENs every channel again and wakes every
//! hub: whatever committed meanwhile is read from the hubs' cursors, nothing is lost.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_postgres::{AsyncMessage, Client};

use crate::tls::Target;

enum Command {
    /// LISTEN the channel and wake `wake` on its notifications; `done` when the server
    /// acknowledged it (or, with the connection down, when it is recorded for the reconnect)
    Listen {
        channel: String,
        wake: Arc<Notify>,
        done: oneshot::Sender<()>,
    },
    Unlisten {
        channel: String,
    },
}

/// The handle the hubs use; cheap to clone.
#[derive(Clone)]
pub struct Listener {
    commands: mpsc::UnboundedSender<Command>,
}

/// `LISTEN "channel"` (or UNLISTEN), the name quoted as an identifier.
fn statement(verb: &str, channel: &str) -> String {
    format!("{verb} \"{}\"", channel.replace('"', "\"\""))
}

impl Listener {
    /// Starts the connection's task (connecting in the background to `connection`, a libpq
    /// string); it runs until every handle is dropped.
    pub fn start(connection: Target) -> Listener {
        let (commands, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(connection, rx));
        Listener { commands }
    }

    /// LISTENs `channel`, waking `wake` on each notification of it; returns once the server
    /// has acknowledged the LISTEN, so every commit after this call is notified (or, with the
    /// connection down, once the channel is recorded: the reconnect LISTENs it and wakes
    /// `wake`). Never fails.
    pub async fn listen(&self, channel: &str, wake: Arc<Notify>) {
        let (done, acknowledged) = oneshot::channel();
        if self.commands.send(Command::Listen { channel: channel.to_string(), wake, done }).is_ok() {
            let _ = acknowledged.await;
        }
    }

    /// UNLISTENs `channel` (after every command sent before). Never fails, never waits.
    pub fn unlisten(&self, channel: &str) {
        let _ = self.commands.send(Command::Unlisten { channel: channel.to_string() });
    }
}

/// A connection and the channel names of its notifications, in order; the names end when
/// the connection does.
async fn connect(connection: &Target) -> Result<(Client, mpsc::UnboundedReceiver<String>), tokio_postgres::Error> {
    let (client, mut conn) = connection.connect().await?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures::stream::poll_fn(move |cx| conn.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(n)) => {
                    if tx.send(n.channel().to_string()).is_err() {
                        return;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!("LISTEN connection: {}", crate::db::error_text(&e));
                    return;
                }
            }
        }
    });
    Ok((client, rx))
}

/// The task: connect, LISTEN what is wanted, then forward notifications and run commands
/// until the connection drops; then again, after a pause.
async fn run(connection: Target, mut commands: mpsc::UnboundedReceiver<Command>) {
    let mut channels: HashMap<String, Arc<Notify>> = HashMap::new();
    let mut backoff = Duration::from_millis(100);
    let mut reconnecting = false;
    loop {
        let (client, mut notes) = match connect(&connection).await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("LISTEN connection: {}; retrying in {:?}", crate::tls::connect_error(&e), backoff);
                // meanwhile, commands are recorded for the reconnect
                let pause = tokio::time::sleep(backoff);
                tokio::pin!(pause);
                loop {
                    tokio::select! {
                        _ = &mut pause => break,
                        command = commands.recv() => match command {
                            None => return,
                            Some(Command::Listen { channel, wake, done }) => {
                                channels.insert(channel, wake);
                                let _ = done.send(());
                            }
                            Some(Command::Unlisten { channel }) => {
                                channels.remove(&channel);
                            }
                        },
                    }
                }
                backoff = (backoff * 2).min(Duration::from_secs(5));
                reconnecting = true;
                continue;
            }
        };
        let mut up = true;
        for channel in channels.keys() {
            if let Err(e) = client.batch_execute(&statement("LISTEN", channel)).await {
                tracing::warn!("LISTEN: {}", crate::db::error_text(&e));
                up = false;
                break;
            }
        }
        if !up {
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(5));
            continue;
        }
        if reconnecting {
            tracing::warn!("LISTEN connection back; reading what changed meanwhile");
            // what committed while nobody listened is read from each hub's cursor
            channels.values().for_each(|wake| wake.notify_one());
        }
        backoff = Duration::from_millis(100);
        reconnecting = true;
        while up {
            tokio::select! {
                note = notes.recv() => match note {
                    Some(channel) => {
                        if let Some(wake) = channels.get(&channel) {
                            wake.notify_one();
                        }
                    }
                    None => {
                        tracing::warn!("LISTEN connection lost; reconnecting");
                        up = false;
                    }
                },
                command = commands.recv() => match command {
                    None => return,
                    Some(Command::Listen { channel, wake, done }) => {
                        let r = client.batch_execute(&statement("LISTEN", &channel)).await;
                        channels.insert(channel, wake);
                        let _ = done.send(());
                        if let Err(e) = r {
                            tracing::warn!("LISTEN: {}", crate::db::error_text(&e));
                            up = false;
                        }
                    }
                    Some(Command::Unlisten { channel }) => {
                        channels.remove(&channel);
                        if let Err(e) = client.batch_execute(&statement("UNLISTEN", &channel)).await {
                            tracing::warn!("UNLISTEN: {}", crate::db::error_text(&e));
                            up = false;
                        }
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channel_names_are_quoted() {
        assert_eq!(
            statement("LISTEN", "todo_0cc175b9c0f1b6a831c399e269772661"),
            "LISTEN \"todo_0cc175b9c0f1b6a831c399e269772661\""
        );
        assert_eq!(statement("UNLISTEN", "a\"b"), "UNLISTEN \"a\"\"b\"");
    }
}
