//! TLS to PostgreSQL with libpq's meaning, for both commands, and the connection pool on a
//! target.
//!
//! The connection string (a URL or `key=value` pairs) may hold `sslmode`, `sslrootcert`,
//! `sslcert` and `sslkey`; `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT` and `PGSSLKEY` apply when
//! it does not. tokio-postgres reads only `sslmode` `disable`, `prefer` and `require`: the
//! other keys are taken out of the string here, and the verification is this connector's.
//!
//! | `sslmode` | encrypted | the server's certificate |
//! |---|---|---|
//! | `disable` | no | – |
//! | `allow`, `prefer` (the default) | when the server offers it | not checked |
//! | `require` | yes | not checked, unless a root certificate is given or `~/.postgresql/root.crt` exists: then as `verify-ca` |
//! | `verify-ca` | yes | signed by a root of `sslrootcert` |
//! | `verify-full` | yes | signed so, and for the host connected to |
//!
//! `sslrootcert` is a PEM file of roots, or `system` for the system's roots; by default
//! `~/.postgresql/root.crt`. A client certificate: `sslcert` and `sslkey` (PEM files; by
//! default `~/.postgresql/postgresql.crt` and `.key` when they exist). A certificate that does
//! not verify is refused, and the error says why and what to check. `sslrootcert` is the
//! only authority trusted (not the system's too). Over a Unix-domain socket no TLS is tried,
//! as libpq, and with `sslmode=disable` neither: then no certificate is read at all (`Tls::Off`:
//! the system's roots take about 50 ms to load, which `pg_todos mcp` would pay at every spawn).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime, Timeouts};
use openssl::ssl::{SslConnector, SslConnectorBuilder, SslFiletype, SslMethod, SslVerifyMode};
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::X509;
use postgres_openssl::MakeTlsConnector;
use tokio_postgres::config::SslMode;
use tokio_postgres::tls::{MakeTlsConnect, TlsConnect};

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(v: &str) -> Result<Mode, String> {
        Ok(match v.trim() {
            "disable" => Mode::Disable,
            "allow" => Mode::Allow,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            other => {
                return Err(format!("sslmode {other:?}: use disable, allow, prefer, require, verify-ca or verify-full"))
            }
        })
    }
}

/// The TLS connector of a target: none when the target never asks for TLS (`sslmode=disable`,
/// or only Unix-domain sockets), so that nothing of TLS is built or read for it.
#[derive(Clone)]
pub enum Tls {
    Off,
    On(MakeTlsConnector),
}

/// `Tls`'s connector for one connection.
pub enum Connect {
    Off,
    On(postgres_openssl::TlsConnector),
}

type Stream<S> = postgres_openssl::TlsStream<S>;
type Failure = Box<dyn std::error::Error + Send + Sync>;

impl<S> MakeTlsConnect<S> for Tls
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + std::fmt::Debug + Send + Sync + 'static,
{
    type Stream = Stream<S>;
    type TlsConnect = Connect;
    type Error = openssl::error::ErrorStack;

    fn make_tls_connect(&mut self, domain: &str) -> Result<Connect, Self::Error> {
        match self {
            Tls::Off => Ok(Connect::Off),
            Tls::On(make) => Ok(Connect::On(MakeTlsConnect::<S>::make_tls_connect(make, domain)?)),
        }
    }
}

impl<S> TlsConnect<S> for Connect
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    type Stream = Stream<S>;
    type Error = Failure;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Stream<S>, Failure>> + Send>>;

    fn connect(self, stream: S) -> Self::Future {
        match self {
            Connect::On(c) => c.connect(stream),
            // never asked: a target with TLS off connects with sslmode disable
            Connect::Off => {
                Box::pin(async { Err("TLS is off for this connection (sslmode=disable or a Unix socket)".into()) })
            }
        }
    }
}

/// What to connect to, and how.
#[derive(Clone)]
pub struct Target {
    /// the connection string's settings, without the TLS keys tokio-postgres does not read
    pub config: tokio_postgres::Config,
    pub tls: Tls,
    pub mode: Mode,
}

impl Target {
    /// Connects once; the connection's task must be polled (spawned) by the caller.
    pub async fn connect(
        &self,
    ) -> Result<
        (tokio_postgres::Client, tokio_postgres::Connection<tokio_postgres::Socket, Stream<tokio_postgres::Socket>>),
        tokio_postgres::Error,
    > {
        self.config.connect(self.tls.clone()).await
    }
}

/// The TLS settings of a connection string, and the string without them.
#[derive(Debug, Default, PartialEq, Eq)]
struct Split {
    rest: String,
    sslmode: Option<String>,
    sslrootcert: Option<String>,
    sslcert: Option<String>,
    sslkey: Option<String>,
}

impl Split {
    fn take(&mut self, key: &str, value: String) -> bool {
        let slot = match key {
            "sslmode" => &mut self.sslmode,
            "sslrootcert" => &mut self.sslrootcert,
            "sslcert" => &mut self.sslcert,
            "sslkey" => &mut self.sslkey,
            _ => return false,
        };
        *slot = Some(value);
        true
    }
}

/// `%XX` decoded (the URL form's values).
fn percent_decoded(v: &str) -> String {
    let bytes = v.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&v[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Takes the TLS keys out of a URL (`postgres://…?sslmode=…`) or a `key=value` string.
/// Errors: a quoted value that does not end.
fn split(connection: &str) -> Result<Split, String> {
    if connection.starts_with("postgres://") || connection.starts_with("postgresql://") {
        Ok(split_url(connection))
    } else {
        split_pairs(connection)
    }
}

/// `split` of a URL: the TLS parameters of its query string taken out.
fn split_url(connection: &str) -> Split {
    let mut out = Split::default();
    let Some((base, query)) = connection.split_once('?') else {
        out.rest = connection.to_string();
        return out;
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            !out.take(&percent_decoded(k), percent_decoded(v))
        })
        .collect();
    out.rest = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    out
}

/// `split` of `key = value` pairs; a value is a word or a quoted string with \' and \\ escapes.
fn split_pairs(connection: &str) -> Result<Split, String> {
    let mut out = Split::default();
    let chars: Vec<char> = connection.chars().collect();
    let mut kept = Vec::new();
    let mut i = 0;
    loop {
        skip_space(&chars, &mut i);
        if i >= chars.len() {
            break;
        }
        let start = i;
        while i < chars.len() && chars[i] != '=' && !chars[i].is_whitespace() {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        skip_space(&chars, &mut i);
        if i >= chars.len() || chars[i] != '=' {
            // not ours to judge: tokio-postgres says what is wrong with it
            kept.push(chars[start..].iter().collect::<String>());
            break;
        }
        i += 1;
        skip_space(&chars, &mut i);
        let value_start = i;
        let value = value_at(&chars, &mut i)
            .ok_or_else(|| format!("the connection string's value of {key} has no closing quote"))?;
        if !out.take(&key, value) {
            kept.push(format!("{key}={}", chars[value_start..i].iter().collect::<String>()));
        }
    }
    out.rest = kept.join(" ");
    Ok(out)
}

/// Moves `i` past the white space at it.
fn skip_space(chars: &[char], i: &mut usize) {
    while *i < chars.len() && chars[*i].is_whitespace() {
        *i += 1;
    }
}

/// The value at `i` of a `key = value` pair, `i` moved past it: a word, or a quoted string
/// with \' and \\ escapes (None: its quote is not closed).
fn value_at(chars: &[char], i: &mut usize) -> Option<String> {
    let mut value = String::new();
    if *i >= chars.len() || chars[*i] != '\'' {
        while *i < chars.len() && !chars[*i].is_whitespace() {
            value.push(chars[*i]);
            *i += 1;
        }
        return Some(value);
    }
    *i += 1;
    while *i < chars.len() {
        match chars[*i] {
            '\\' if *i + 1 < chars.len() => {
                value.push(chars[*i + 1]);
                *i += 2;
            }
            '\'' => {
                *i += 1;
                return Some(value);
            }
            c => {
                value.push(c);
                *i += 1;
            }
        }
    }
    None
}

/// libpq's default file under `~/.postgresql`, when it exists.
fn default_file(env: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<PathBuf> {
    let home = env("HOME").filter(|h| !h.is_empty())?;
    let path = Path::new(&home).join(".postgresql").join(name);
    path.is_file().then_some(path)
}

/// What to connect to, from a connection string and the environment (`PGSSLMODE`,
/// `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`, `HOME`). Errors (a message saying what to fix): a
/// string libpq's syntax does not read, an unknown sslmode, a verify mode without a root
/// certificate, a certificate or key file that cannot be read.
pub fn target(connection: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<Target, String> {
    let parts = split(connection)?;
    let from_env = |var: &str| env(var).filter(|v| !v.trim().is_empty());
    let mode = match parts.sslmode.clone().or_else(|| from_env("PGSSLMODE")) {
        Some(m) => Mode::parse(&m)?,
        None => Mode::Prefer,
    };
    let mut config =
        tokio_postgres::Config::from_str(&parts.rest).map_err(|e| format!("the connection string: {e}"))?;
    // libpq never tries TLS over a Unix-domain socket: with only sockets to connect to, the
    // mode is read (and must be valid) but nothing of TLS is asked for
    let sockets_only = !config.get_hosts().is_empty()
        && config.get_hosts().iter().all(|h| matches!(h, tokio_postgres::config::Host::Unix(_)));
    let mode = if sockets_only { Mode::Disable } else { mode };
    config.ssl_mode(match mode {
        Mode::Disable => SslMode::Disable,
        Mode::Allow | Mode::Prefer => SslMode::Prefer,
        Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
    });
    if mode == Mode::Disable {
        // nothing of TLS is asked for: no connector, no certificate read
        return Ok(Target { config, tls: Tls::Off, mode });
    }
    let root = parts.sslrootcert.clone().or_else(|| from_env("PGSSLROOTCERT"));
    let root: Option<String> = match root {
        Some(r) => Some(r),
        None => default_file(env, "root.crt").map(|p| p.to_string_lossy().into_owned()),
    };
    let mut builder = SslConnector::builder(SslMethod::tls_client()).map_err(|e| format!("TLS: {e}"))?;
    verify_server(&mut builder, mode, root.as_deref())?;
    client_certificate(&mut builder, &parts, env)?;
    postgres_openssl::set_postgresql_alpn(&mut builder).map_err(|e| format!("TLS: {e}"))?;
    let mut tls = MakeTlsConnector::new(builder.build());
    let check_host = mode == Mode::VerifyFull;
    tls.set_callback(move |c, _| {
        c.set_verify_hostname(check_host);
        Ok(())
    });
    Ok(Target { config, tls: Tls::On(tls), mode })
}

/// What the server's certificate must be, by `mode`: verified against `root` (a PEM file's
/// roots alone, or `system`: the system's) for verify-ca and verify-full, and for require when a
/// root certificate is given (libpq's rule); else not verified. Errors: a verify mode without a
/// root certificate, a root file that cannot be read or holds no certificate.
fn verify_server(builder: &mut SslConnectorBuilder, mode: Mode, root: Option<&str>) -> Result<(), String> {
    // what the server's certificate must be
    let verify = match mode {
        Mode::VerifyCa | Mode::VerifyFull => {
            if root.is_none() {
                return Err(format!(
                    "sslmode={}: no root certificate to verify the server with: set sslrootcert (a PEM file, or \
                     system for the system's roots) or PGSSLROOTCERT, or put one in ~/.postgresql/root.crt",
                    if mode == Mode::VerifyCa { "verify-ca" } else { "verify-full" }
                ));
            }
            true
        }
        // libpq: require with a root certificate behaves as verify-ca
        Mode::Require => root.is_some(),
        _ => false,
    };
    if verify {
        match root {
            Some("system") => {
                builder.set_default_verify_paths().map_err(|e| format!("TLS: the system's roots: {e}"))?
            }
            Some(file) => {
                // only this file's roots: SslConnector::builder has loaded the system's already,
                // and libpq trusts sslrootcert alone
                let cannot = |e: &dyn std::fmt::Display| format!("sslrootcert {file:?}: cannot read it: {e}");
                let pem = std::fs::read(file).map_err(|e| cannot(&e))?;
                let certs = X509::stack_from_pem(&pem).map_err(|e| cannot(&e))?;
                if certs.is_empty() {
                    return Err(format!("sslrootcert {file:?}: cannot read it: no certificate in it"));
                }
                let mut store = X509StoreBuilder::new().map_err(|e| cannot(&e))?;
                for cert in certs {
                    store.add_cert(cert).map_err(|e| cannot(&e))?;
                }
                builder.set_cert_store(store.build());
            }
            None => {}
        }
        builder.set_verify(SslVerifyMode::PEER);
    } else {
        builder.set_verify(SslVerifyMode::NONE);
    }
    Ok(())
}

/// The client certificate and its key, from the connection string, the environment or
/// `~/.postgresql`; none when no certificate is found. Errors: a file that cannot be read, a
/// certificate without a key, a key that is not the certificate's.
fn client_certificate(
    builder: &mut SslConnectorBuilder,
    parts: &Split,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), String> {
    let from_env = |var: &str| env(var).filter(|v| !v.trim().is_empty());
    // a client certificate
    let cert = parts
        .sslcert
        .clone()
        .or_else(|| from_env("PGSSLCERT"))
        .or_else(|| default_file(env, "postgresql.crt").map(|p| p.to_string_lossy().into_owned()));
    let key = parts
        .sslkey
        .clone()
        .or_else(|| from_env("PGSSLKEY"))
        .or_else(|| default_file(env, "postgresql.key").map(|p| p.to_string_lossy().into_owned()));
    if let Some(cert) = &cert {
        builder.set_certificate_chain_file(cert).map_err(|e| format!("sslcert {cert:?}: cannot read it: {e}"))?;
        let key = key.ok_or_else(|| format!("sslcert {cert:?} is given but no sslkey: set sslkey or PGSSLKEY"))?;
        builder
            .set_private_key_file(&key, SslFiletype::PEM)
            .map_err(|e| format!("sslkey {key:?}: cannot read it, or it is not the certificate's key: {e}"))?;
    }
    Ok(())
}

/// A pool on `connection` (TLS as it says): `size` connections at most, a connection waited
/// for at most 10 s and opened in at most 5 s; a connection found closed (the database
/// restarted) is dropped and a new one opened.
pub fn pool(connection: &Target, size: usize) -> Result<Pool, String> {
    let manager = Manager::from_config(
        connection.config.clone(),
        connection.tls.clone(),
        ManagerConfig { recycling_method: RecyclingMethod::Fast },
    );
    let timeouts = Timeouts {
        wait: Some(std::time::Duration::from_secs(10)),
        create: Some(std::time::Duration::from_secs(5)),
        recycle: Some(std::time::Duration::from_secs(5)),
    };
    Pool::builder(manager).max_size(size).timeouts(timeouts).runtime(Runtime::Tokio1).build().map_err(|e| e.to_string())
}

/// The words of a connection error, with what to check when it is the server's certificate.
pub fn connect_error(e: &tokio_postgres::Error) -> String {
    let mut text = crate::db::error_text(e);
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text = format!("{text}: {s_text}");
        }
        source = s.source();
    }
    if text.contains("certificate verify failed") {
        // openssl says "hostname mismatch" or "IP address mismatch"
        let hint = if text.to_ascii_lowercase().contains("mismatch") {
            "the host name is not in the server's certificate (connect by a name it holds, or sslmode=verify-ca)"
        } else {
            "the server's certificate is not signed by a root of sslrootcert (check sslrootcert / PGSSLROOTCERT)"
        };
        text = format!("{text} — {hint}");
    }
    text
}

/// Whether a connection error's text (`connect_error`) is a TLS handshake this side refused or
/// could not make: the server's certificate did not verify, or the server offers no TLS where
/// the mode requires it. The server is there: retrying will not help, the configuration must
/// change.
pub fn refused_handshake(cause: &str) -> bool {
    cause.contains("error performing TLS handshake") || cause.contains("certificate verify failed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_handshakes() {
        assert!(refused_handshake("error performing TLS handshake: server does not support TLS"));
        assert!(refused_handshake(
            "error performing TLS handshake: … certificate verify failed … — the server's certificate is not signed by a root of sslrootcert"
        ));
        assert!(!refused_handshake("error connecting to server: Connection refused (os error 111)"));
    }

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn the_tls_keys_come_out_of_both_forms() {
        let s = split("host=db.example.com sslmode=verify-full sslrootcert='/etc/my ca.pem' dbname = app").unwrap();
        assert_eq!(s.rest, "host=db.example.com dbname=app");
        assert_eq!((s.sslmode.as_deref(), s.sslrootcert.as_deref()), (Some("verify-full"), Some("/etc/my ca.pem")));
        let s = split("host='/tmp/it\\'s' password='a b' sslkey=/k.pem").unwrap();
        assert_eq!(s.rest, "host='/tmp/it\\'s' password='a b'");
        assert_eq!(s.sslkey.as_deref(), Some("/k.pem"));
        let s = split("postgres://u@db/app?sslmode=verify-ca&application_name=x&sslrootcert=%2Fetc%2Fca.pem").unwrap();
        assert_eq!(s.rest, "postgres://u@db/app?application_name=x");
        assert_eq!((s.sslmode.as_deref(), s.sslrootcert.as_deref()), (Some("verify-ca"), Some("/etc/ca.pem")));
        assert_eq!(split("postgresql://db/app?sslmode=require").unwrap().rest, "postgresql://db/app");
        assert!(split("host='unclosed").unwrap_err().contains("no closing quote"));
    }

    #[test]
    fn modes_and_their_errors() {
        let t = target("host=db sslmode=require", &none).unwrap();
        assert_eq!((t.mode, t.config.get_ssl_mode()), (Mode::Require, SslMode::Require));
        let t = target("host=db", &none).unwrap();
        assert_eq!((t.mode, t.config.get_ssl_mode()), (Mode::Prefer, SslMode::Prefer));
        let env = |k: &str| (k == "PGSSLMODE").then(|| "disable".to_string());
        assert_eq!(target("host=db", &env).unwrap().config.get_ssl_mode(), SslMode::Disable);
        // the string wins over the environment
        assert_eq!(target("host=db sslmode=allow", &env).unwrap().mode, Mode::Allow);
        let e = target("host=db sslmode=verify-full", &none).err().unwrap();
        assert!(e.starts_with("sslmode=verify-full: no root certificate"), "{e}");
        let e = target("host=db sslmode=maybe", &none).err().unwrap();
        assert_eq!(e, "sslmode \"maybe\": use disable, allow, prefer, require, verify-ca or verify-full");
        let e = target("host=db sslmode=verify-ca sslrootcert=/nonexistent.pem", &none).err().unwrap();
        assert!(e.starts_with("sslrootcert \"/nonexistent.pem\": cannot read it"), "{e}");
        assert!(target("host=db sslmode=verify-full sslrootcert=system", &none).is_ok());
        // over a Unix-domain socket nothing of TLS is asked for (libpq), but the mode must be valid
        let t = target("host=/var/run/postgresql sslmode=verify-full", &none).unwrap();
        assert_eq!((t.mode, t.config.get_ssl_mode()), (Mode::Disable, SslMode::Disable));
        // ... and no connector is built: no certificate is read (the system's roots cost ~50 ms)
        assert!(matches!(t.tls, Tls::Off));
        assert!(matches!(target("host=db sslmode=disable sslcert=/nonexistent.crt", &none).unwrap().tls, Tls::Off));
        assert!(matches!(target("host=db", &none).unwrap().tls, Tls::On(_)));
        assert!(target("host=/tmp sslmode=sure", &none).is_err());
        let e = target("host=db sslcert=/nonexistent.crt", &none).err().unwrap();
        assert!(e.starts_with("sslcert \"/nonexistent.crt\": cannot read it"), "{e}");
    }
}
