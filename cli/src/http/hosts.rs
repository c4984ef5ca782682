//! Which names the service answers to, against DNS rebinding: a page of another site whose
//! name is made to resolve to this machine reaches the service with its own name in `Host`
//! (and its origin in `Origin`). Every request but `/healthz` and `/readyz` must name the
//! service: its `Host`, and its `Origin` when it has one (browsers send it), must be
//!
//! - an IP address (`127.0.0.1`, `[::1]`, the address listened on: a rebinding needs a name,
//!   and a request reaches the service only at an address it listens on),
//! - `localhost`, which a browser resolves to this machine and no site can rebind,
//! - or a name of `--allowed-hosts` (`PG_TODOS_ALLOWED_HOSTS`): the names a reverse proxy
//!   or the clients use (`todos.example.com`), any port; `*` allows every name (only behind
//!   a proxy that checks them itself).
//!
//! Ports are not compared: a rebinding page uses the service's own port. A refusal is 403,
//! naming the setting. Pure, unit-tested.

/// The names `--allowed-hosts` adds, lowercased, without a port or a trailing dot.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hosts {
    names: Vec<String>,
    /// `*`: every name
    any: bool,
}

/// The host of `authority` (`name`, `name:port`, `[v6]:port`, `1.2.3.4:port`), lowercased,
/// without its port or a trailing dot; None when it is empty or has a user part.
fn host_of(authority: &str) -> Option<String> {
    let a = authority.trim();
    if a.is_empty() || a.contains('@') || a.contains('/') {
        return None;
    }
    let host = match a.strip_prefix('[') {
        Some(rest) => format!("[{}]", rest.split_once(']')?.0),
        None => a
            .rsplit_once(':')
            .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
            .map_or(a, |(h, _)| h)
            .to_string(),
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// Whether `host` (as `host_of` gives it) is an IP address.
fn is_ip(host: &str) -> bool {
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    bare.parse::<std::net::IpAddr>().is_ok()
}

impl Hosts {
    /// From a comma-separated list of names, each with or without a port (ignored), or `*`
    /// (blank: none). Errors: an entry that is not a name, naming it.
    pub fn parse(list: &str) -> Result<Hosts, String> {
        let mut hosts = Hosts::default();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "*" {
                hosts.any = true;
                continue;
            }
            let name = host_of(entry)
                .filter(|h| h.chars().all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c)))
                .ok_or_else(|| {
                format!("--allowed-hosts {entry:?}: use host names, e.g. todos.example.com,todos.internal:8443")
            })?;
            hosts.names.push(name);
        }
        Ok(hosts)
    }

    fn allows(&self, host: &str) -> bool {
        self.any || host == "localhost" || is_ip(host) || self.names.iter().any(|n| n == host)
    }

    /// Whether a request with these `Host` and `Origin` headers names this service. Errors:
    /// what to change, naming the host refused and the setting.
    pub fn check(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), String> {
        let fix = "add it to --allowed-hosts (PG_TODOS_ALLOWED_HOSTS) if this service is reached by that name, e.g. behind a reverse proxy";
        if let Some(raw) = host {
            match host_of(raw) {
                Some(h) if self.allows(&h) => {}
                _ => return Err(format!("Host {raw:?} is not a name of this service (DNS rebinding?): {fix}")),
            }
        }
        if let Some(raw) = origin {
            let h = raw.split_once("://").and_then(|(_, rest)| host_of(rest));
            match h {
                Some(h) if self.allows(&h) => {}
                _ => {
                    return Err(format!(
                        "Origin {raw:?} is not a page of this service (DNS rebinding, or another site's page?): {fix}"
                    ))
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_names_and_addresses_are_allowed() {
        let h = Hosts::default();
        for host in [
            "localhost",
            "localhost:8787",
            "LocalHost.",
            "127.0.0.1",
            "127.0.0.1:8787",
            "[::1]:8787",
            "[::1]",
            "10.0.0.5:80",
        ] {
            assert_eq!(h.check(Some(host), None), Ok(()), "{host}");
        }
        assert_eq!(h.check(None, None), Ok(()));
        for origin in ["http://localhost:6274", "http://127.0.0.1:8787", "https://[::1]:8443"] {
            assert_eq!(h.check(Some("127.0.0.1:8787"), Some(origin)), Ok(()), "{origin}");
        }
    }

    #[test]
    fn other_names_are_refused_saying_what_to_set() {
        let h = Hosts::default();
        let e = h.check(Some("evil.example.com"), Some("http://evil.example.com")).unwrap_err();
        assert!(e.starts_with("Host \"evil.example.com\" is not a name of this service"), "{e}");
        assert!(e.contains("--allowed-hosts (PG_TODOS_ALLOWED_HOSTS)"), "{e}");
        for host in ["evil.example.com:8787", "localhost.evil.example", "127.0.0.1.nip.io", "", "user@localhost"] {
            assert!(h.check(Some(host), None).is_err(), "{host}");
        }
        // the Host of the service, an Origin of another site (or none a browser can name)
        for origin in ["http://evil.example.com", "null", "file://", "chrome-extension://abc", "localhost"] {
            let e = h.check(Some("127.0.0.1:8787"), Some(origin)).unwrap_err();
            assert!(e.starts_with(&format!("Origin {origin:?} is not a page of this service")), "{e}");
        }
    }

    #[test]
    fn the_setting_adds_names() {
        let h = Hosts::parse(" todos.example.com, Todos.Internal:8443 ,").unwrap();
        assert_eq!(h.check(Some("todos.example.com"), Some("https://todos.example.com")), Ok(()));
        assert_eq!(h.check(Some("todos.internal:9000"), Some("https://TODOS.internal")), Ok(()));
        assert!(h.check(Some("other.example.com"), None).is_err());
        assert!(h.check(Some("todos.example.com"), Some("https://evil.example")).is_err());
        let any = Hosts::parse("*").unwrap();
        assert_eq!(any.check(Some("whatever.example"), Some("https://else.example")), Ok(()));
        assert_eq!(Hosts::parse("").unwrap(), Hosts::default());
        for bad in ["http://todos.example.com", "todos example", "a@b"] {
            assert_eq!(
                Hosts::parse(bad).unwrap_err(),
                format!("--allowed-hosts {bad:?}: use host names, e.g. todos.example.com,todos.internal:8443")
            );
        }
    }
}
