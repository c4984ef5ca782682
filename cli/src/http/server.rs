//! Accepting and keeping connections, with the limits that keep one client from holding the
//! service: at most `--max-connections` open (past it, new connections wait in the kernel's
//! queue until one closes: they are accepted later, never refused by the service); each
//! connection watched by a timer that closes it when
//!
//! - its request's headers have not all come `--header-timeout` after the connection opened
//!   (the first request) or after the request's first byte (the next ones);
//! - it has been idle between requests (keep-alive) for `--idle-timeout`;
//! - a response has waited `--send-timeout` on a client that reads nothing.
//!
//! With `--tls-cert`, each connection's TLS handshake must end within `--header-timeout`.
//! A request's body has `--body-timeout` (the routes answer 408). HTTP/1.1 only. At shutdown
//! the listening socket closes, idle connections close, requests in flight finish.

use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use axum::Router;
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper_util::rt::TokioIo;
use openssl::ssl::{Ssl, SslAcceptor};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tower::ServiceExt;

use super::config::Limits;
use super::throttle::ClientAddr;

/// "Never" in the connection's clock.
const NONE: u64 = u64::MAX;

/// What the timer of one connection reads: times in milliseconds since the connection
/// opened, `NONE` when unset.
struct Watch {
    opened: Instant,
    /// requests whose response has not been sent whole yet
    in_flight: AtomicUsize,
    /// requests answered so far
    answered: AtomicU64,
    /// the first byte of the next request's headers, while none is in flight
    head_started: AtomicU64,
    /// when the last response was sent whole
    idle_since: AtomicU64,
    /// when a write first found the client not reading, until one goes through
    stalled_since: AtomicU64,
}

impl Watch {
    fn new() -> Watch {
        Watch {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            answered: AtomicU64::new(0),
            head_started: AtomicU64::new(NONE),
            idle_since: AtomicU64::new(NONE),
            stalled_since: AtomicU64::new(NONE),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    /// Why the connection must close now, if it must.
    fn expired(&self, limits: &Limits) -> Option<&'static str> {
        let now = self.now();
        let past = |since: u64, limit: Duration| since != NONE && now.saturating_sub(since) >= limit.as_millis() as u64;
        if past(self.stalled_since.load(Ordering::Relaxed), limits.send_timeout) {
            return Some("send timeout");
        }
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let head = self.head_started.load(Ordering::Relaxed);
        if self.answered.load(Ordering::Relaxed) == 0 {
            // the first request: from the connection's start
            return (now >= limits.header_timeout.as_millis() as u64).then_some("header timeout");
        }
        if past(head, limits.header_timeout) {
            return Some("header timeout");
        }
        (head == NONE && past(self.idle_since.load(Ordering::Relaxed), limits.idle_timeout)).then_some("idle timeout")
    }
}

/// A connection's stream: plain TCP, or TLS over it (`--tls-cert`).
enum Io {
    Plain(TcpStream),
    Tls(Box<tokio_openssl::SslStream<TcpStream>>),
}

impl AsyncRead for Io {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Io::Plain(s) => s.is_write_vectored(),
            Io::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_flush(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Io::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The TLS handshake of a new connection, within `limit` (it counts against the header
/// timeout: a client that opens TCP and never finishes the handshake holds nothing longer);
/// None when it fails or takes longer.
async fn handshake(acceptor: &SslAcceptor, stream: TcpStream, limit: Duration) -> Option<Io> {
    let ssl = Ssl::new(acceptor.context()).ok()?;
    let mut tls = tokio_openssl::SslStream::new(ssl, stream).ok()?;
    match tokio::time::timeout(limit, Pin::new(&mut tls).accept()).await {
        Ok(Ok(())) => Some(Io::Tls(Box::new(tls))),
        _ => None,
    }
}

/// A connection's stream that tells its `Watch` when bytes come in and when writes stall.
struct Watched {
    inner: Io,
    watch: Arc<Watch>,
}

impl Watched {
    fn wrote<T>(&self, r: &Poll<io::Result<T>>) {
        match r {
            Poll::Pending => {
                let _ = self.watch.stalled_since.compare_exchange(
                    NONE,
                    self.watch.now(),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
            Poll::Ready(_) => self.watch.stalled_since.store(NONE, Ordering::Relaxed),
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(())))
            && buf.filled().len() > before
            && self.watch.in_flight.load(Ordering::Relaxed) == 0
        {
            let now = self.watch.now();
            let _ = self.watch.head_started.compare_exchange(NONE, now, Ordering::Relaxed, Ordering::Relaxed);
        }
        r
    }
}

impl AsyncWrite for Watched {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(&r);
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(&r);
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.wrote(&r);
        r
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A response body that tells the `Watch` when it is sent whole (or dropped).
struct Counted {
    inner: Body,
    watch: Arc<Watch>,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.watch.answered.fetch_add(1, Ordering::Relaxed);
        self.watch.idle_since.store(self.watch.now(), Ordering::Relaxed);
        self.watch.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl HttpBody for Counted {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The largest number of files the process may open, after raising its soft limit to the hard
/// one; None when the limit cannot be read.
pub fn raise_file_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit write and read only the struct given
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    Some(limit.rlim_cur)
}

/// Serves `app` on `socket` until `shutdown` turns true, then stops accepting (the socket
/// closes), lets idle connections close and requests in flight finish, and returns once every
/// connection has closed.
pub async fn serve(
    socket: TcpListener,
    tls: Option<SslAcceptor>,
    app: Router,
    limits: Limits,
    mut shutdown: watch::Receiver<bool>,
) {
    let tls = tls.map(Arc::new);
    let places = Arc::new(Semaphore::new(limits.max_connections));
    let limits = Arc::new(limits);
    loop {
        // a place first: past the cap, connections wait in the kernel's queue
        let place = tokio::select! {
            p = places.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            _ = shutdown.wait_for(|down| *down) => break,
        };
        let accepted = tokio::select! {
            a = socket.accept() => a,
            _ = shutdown.wait_for(|down| *down) => break,
        };
        let (stream, peer) = match accepted {
            Ok((stream, peer)) => (stream, peer.ip()),
            Err(e) => {
                // out of file descriptors or the like: wait a little rather than spin
                if !matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionAborted
                        | io::ErrorKind::ConnectionReset
                        | io::ErrorKind::ConnectionRefused
                ) {
                    tracing::error!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let limits = limits.clone();
        let shutdown = shutdown.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let io = match &tls {
                None => Some(Io::Plain(stream)),
                Some(acceptor) => handshake(acceptor, stream, limits.header_timeout).await,
            };
            if let Some(io) = io {
                connection(io, peer, app, &limits, shutdown).await;
            }
            drop(place);
        });
    }
    drop(socket);
    // every place back: every connection closed
    let _ = places.acquire_many(limits.max_connections as u32).await;
}

/// One connection of the client at `peer` (put among each request's extensions as
/// `ClientAddr`), until the client closes it, its timer expires, or (at shutdown) it has no
/// request in flight.
async fn connection(stream: Io, peer: IpAddr, app: Router, limits: &Limits, mut shutdown: watch::Receiver<bool>) {
    let watch = Arc::new(Watch::new());
    let io = TokioIo::new(Watched { inner: stream, watch: watch.clone() });
    let counter = watch.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
        let app = app.clone();
        let watch = counter.clone();
        watch.in_flight.fetch_add(1, Ordering::Relaxed);
        watch.head_started.store(NONE, Ordering::Relaxed);
        async move {
            let mut request = request.map(Body::new);
            request.extensions_mut().insert(ClientAddr(peer));
            let response: Response = app.oneshot(request).await.unwrap_or_else(|e| match e {});
            Ok::<_, std::convert::Infallible>(response.map(|inner| Body::new(Counted { inner, watch })))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.keep_alive(true).header_read_timeout(None);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let tick = (limits.header_timeout.min(limits.idle_timeout).min(limits.send_timeout) / 4)
        .clamp(Duration::from_millis(100), Duration::from_secs(1));
    let mut timer = tokio::time::interval(tick);
    let mut stopping = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            _ = timer.tick() => {
                match watch.expired(limits) {
                    // a client that reads nothing is worth a line (header and idle timeouts are
                    // everyday and would flood the log under a slow-header attack)
                    Some(why @ "send timeout") => {
                        tracing::warn!("a connection closed: {why} (the client read nothing for {} s)", limits.send_timeout.as_secs());
                        return;
                    }
                    Some(_) => return,
                    None => {}
                }
            }
            _ = shutdown.wait_for(|down| *down), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_body: 1,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            send_timeout: Duration::from_secs(30),
            max_connections: 1,
            max_streams: 1,
            max_streams_per_token: 1,
            max_streams_per_tenant: 1,
            stream_buffer: 1,
            token_recheck: Duration::from_secs(3),
            auth_fail_burst: 1,
            auth_fail_per_ks: 1,
            auth_fail_global_per_ks: 1,
            tenant_catch_ups: 1,
            tenant_share: 1,
            tenant_wait: Duration::from_secs(5),
        }
    }

    /// A watch whose clock reads `now_ms`, set up by `f`.
    fn at(now_ms: u64, f: impl Fn(&Watch)) -> Watch {
        let w = Watch::new();
        f(&w);
        Watch { opened: Instant::now() - Duration::from_millis(now_ms), ..w }
    }

    #[test]
    fn the_first_request_has_the_header_timeout_from_the_start() {
        let l = limits();
        assert_eq!(at(9_000, |_| {}).expired(&l), None);
        assert_eq!(at(10_000, |_| {}).expired(&l), Some("header timeout"));
        // a byte sent late does not move the deadline of the first request
        assert_eq!(at(10_000, |w| w.head_started.store(9_500, Ordering::Relaxed)).expired(&l), Some("header timeout"));
        // a request in flight (its body, its answer) is not timed here
        assert_eq!(
            at(100_000, |w| {
                w.in_flight.store(1, Ordering::Relaxed);
            })
            .expired(&l),
            None
        );
    }

    #[test]
    fn later_requests_and_idle_connections() {
        let l = limits();
        let answered = |w: &Watch, idle: u64| {
            w.answered.store(1, Ordering::Relaxed);
            w.idle_since.store(idle, Ordering::Relaxed);
        };
        // idle since 1 s: kept until 61 s
        assert_eq!(at(60_000, |w| answered(w, 1_000)).expired(&l), None);
        assert_eq!(at(61_000, |w| answered(w, 1_000)).expired(&l), Some("idle timeout"));
        // headers begun at 50 s: due at 60 s
        let begun = |w: &Watch| {
            answered(w, 1_000);
            w.head_started.store(50_000, Ordering::Relaxed);
        };
        assert_eq!(at(59_000, begun).expired(&l), None);
        assert_eq!(at(60_000, begun).expired(&l), Some("header timeout"));
    }

    #[test]
    fn a_client_that_reads_nothing_is_let_go() {
        let l = limits();
        let stalled = |w: &Watch| {
            w.in_flight.store(1, Ordering::Relaxed);
            w.stalled_since.store(5_000, Ordering::Relaxed);
        };
        assert_eq!(at(34_000, stalled).expired(&l), None);
        assert_eq!(at(35_000, stalled).expired(&l), Some("send timeout"));
    }
}
