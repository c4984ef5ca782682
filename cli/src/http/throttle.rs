//! Failed authentications, rate-limited: what caps the token lookups that fail (each one a
//! database round trip), without ever refusing a token that authenticates for someone else's
//! failures.
//!
//! - Per client address, a token bucket of `burst` tries refilled at `rate` a second. A
//!   lookup that fails (401: an unknown or revoked token) takes one; one that succeeds takes
//!   none. An address whose bucket is empty is refused (429 with `Retry-After`, no database
//!   round trip) until it has refilled one.
//! - Across every address, one more bucket of `global_burst` tries refilled at `global_rate`
//!   a second (`--auth-fail-global-rate`): spreading the failures over many addresses (2,000
//!   of them made 2,939 lookups a second in 1.0.0) does not multiply the lookups.
//! - A token seen to authenticate in the last hour (`KNOWN_FOR`; kept as a keyed 64-bit hash,
//!   never the token) passes both buckets: a client behind the same address as one that
//!   fails (a NAT, a proxy) keeps working. It is still looked up on every request (a revoked
//!   token is refused, forgotten and charged). A token never seen to authenticate cannot be
//!   told from the failures without the lookup the limit exists to save: from an address or a
//!   service whose bucket is empty it waits `Retry-After` like them.
//! - Requests without a token are refused (401) without a lookup and charge nothing.
//!
//! A lookup admitted takes its tries when it is admitted and gets them back if its token
//! turns out good (or the database does not answer): lookups in flight at once never pass on
//! one try together. An address that never failed has no bucket of its own.
//!
//! An address is an IPv4 address, or the /64 of an IPv6 address (a client may hold many
//! addresses of its /64); an IPv4-mapped IPv6 address is its IPv4 address. Behind a reverse
//! proxy every client has the proxy's address, unless the proxy is trusted
//! (`--trusted-proxies`, `Proxies`): then the client is read from `X-Forwarded-For`.
//!
//! Memory is bounded: at most `MAX_ADDRESSES` buckets and `MAX_KNOWN` known tokens. A bucket
//! refilled to `burst` says nothing more than no bucket, so it is forgotten: at least every
//! minute, and whenever the map is full; when every bucket is still short, the one closest to
//! full is forgotten for a new one. Pure (the clock is the caller's), unit-tested.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most addresses with a bucket at once (about 50 bytes each).
pub const MAX_ADDRESSES: usize = 16_384;

/// The most tokens known to authenticate at once (about 24 bytes each).
pub const MAX_KNOWN: usize = 65_536;

/// How long a token seen to authenticate passes the buckets after it was last seen to.
pub const KNOWN_FOR: Duration = Duration::from_secs(3600);

/// How often buckets refilled to `burst` are forgotten.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// The address of the client of a request (the TCP peer), put among its extensions by the
/// server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

/// What a bucket is kept by: an IPv4 address, or an IPv6 /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    V4(u32),
    V6(u64),
}

impl Key {
    fn of(addr: IpAddr) -> Key {
        match addr {
            IpAddr::V4(a) => Key::V4(a.into()),
            IpAddr::V6(a) => match a.to_ipv4_mapped() {
                Some(v4) => Key::V4(v4.into()),
                None => Key::V6((u128::from(a) >> 64) as u64),
            },
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// tries left at `at`
    tries: f64,
    at: Instant,
}

/// A bucket's rate and size.
#[derive(Debug, Clone, Copy)]
struct Refill {
    /// tries given back a second
    rate: f64,
    burst: f64,
}

impl Refill {
    fn new(rate: f64, burst: f64) -> Refill {
        Refill { rate: rate.max(f64::MIN_POSITIVE), burst: burst.max(1.0) }
    }

    /// The tries `b` has at `now`.
    fn tries(&self, b: &Bucket, now: Instant) -> f64 {
        (b.tries + self.rate * now.saturating_duration_since(b.at).as_secs_f64()).min(self.burst)
    }

    /// Takes a try of `b` at `now`. Errors: the whole seconds until it has one (at least 1).
    fn take(&self, b: &mut Bucket, now: Instant) -> Result<(), u64> {
        let tries = self.tries(b, now);
        if tries >= 1.0 {
            *b = Bucket { tries: tries - 1.0, at: now };
            Ok(())
        } else {
            Err((((1.0 - tries) / self.rate).ceil() as u64).max(1))
        }
    }

    /// Adds `n` tries to `b` at `now` (a negative `n` takes them), within 0 and `burst`.
    fn add(&self, b: &mut Bucket, n: f64, now: Instant) {
        let tries = self.tries(b, now);
        *b = Bucket { tries: (tries + n).clamp(0.0, self.burst), at: now };
    }
}

/// How `admit` let a lookup through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// the token was seen to authenticate: nothing taken
    Known,
    /// a try of the service's bucket taken, and of the address's when `address` (it has a
    /// bucket); given back by `settle` unless the lookup fails
    Taken { address: bool },
}

/// Why `admit` refused a lookup, with the whole seconds until a try comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// the client's address failed as often as it may (`--auth-fail-burst`, `--auth-fail-rate`)
    Address(u64),
    /// every address together did (`--auth-fail-global-rate`)
    Everyone(u64),
}

/// What a lookup `admit`ted came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// the token authenticates
    Good,
    /// the token does not (401)
    Failed,
    /// no answer (the database away): neither
    Unknown,
}

pub struct Throttle {
    address: Refill,
    everyone: Refill,
    /// the key of the known tokens' hashes, this process's own
    keys: RandomState,
    inner: Mutex<Inner>,
}

struct Inner {
    buckets: HashMap<Key, Bucket>,
    swept: Instant,
    everyone: Bucket,
    /// the hashes of tokens seen to authenticate, with when they last were
    known: HashMap<u64, Instant>,
}

impl Throttle {
    /// `burst` failed lookups of one address at once (at least 1), then `rate` a second (more
    /// than 0); `global_rate` a second of every address together, with a burst of a second's
    /// worth and at least `burst`.
    pub fn new(rate: f64, burst: usize, global_rate: f64, now: Instant) -> Throttle {
        let everyone = Refill::new(global_rate, global_rate.max(burst as f64).ceil());
        Throttle {
            address: Refill::new(rate, burst as f64),
            everyone,
            keys: RandomState::new(),
            inner: Mutex::new(Inner {
                buckets: HashMap::new(),
                swept: now,
                everyone: Bucket { tries: everyone.burst, at: now },
                known: HashMap::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the token `token` of a client at `addr` may be looked up at `now`: `Known`
    /// (nothing taken) for a token seen to authenticate in the last `KNOWN_FOR`; else
    /// `Taken`, a try of the service's bucket and of the address's (when it has one) taken.
    /// Errors: which bucket is empty, and the seconds until it has a try again.
    pub fn admit(&self, addr: IpAddr, token: &str, now: Instant) -> Result<Admitted, Refused> {
        let hash = self.keys.hash_one(token);
        let mut inner = self.lock();
        if inner.known.get(&hash).is_some_and(|seen| now.saturating_duration_since(*seen) < KNOWN_FOR) {
            return Ok(Admitted::Known);
        }
        let key = Key::of(addr);
        if let Some(b) = inner.buckets.get(&key) {
            let mut b = *b;
            self.address.take(&mut b, now).map_err(Refused::Address)?;
            let mut all = inner.everyone;
            self.everyone.take(&mut all, now).map_err(Refused::Everyone)?;
            inner.buckets.insert(key, b);
            inner.everyone = all;
            return Ok(Admitted::Taken { address: true });
        }
        let mut all = inner.everyone;
        self.everyone.take(&mut all, now).map_err(Refused::Everyone)?;
        inner.everyone = all;
        Ok(Admitted::Taken { address: false })
    }

    /// What the lookup `admit` let through came to: a good token is known from now on and
    /// gives back the tries taken, as does no answer; a failure keeps them (a known token
    /// that fails, revoked since, is forgotten and charged to both buckets; an address
    /// without a bucket gets one, a try short).
    pub fn settle(&self, addr: IpAddr, token: &str, admitted: Admitted, outcome: Outcome, now: Instant) {
        let hash = self.keys.hash_one(token);
        let mut inner = self.lock();
        match (outcome, admitted) {
            (Outcome::Good, _) => self.remember(&mut inner, hash, now),
            (Outcome::Failed, Admitted::Known) => {
                inner.known.remove(&hash);
                let mut all = inner.everyone;
                self.everyone.add(&mut all, -1.0, now);
                inner.everyone = all;
                self.charge(&mut inner, addr, now);
            }
            (Outcome::Failed, Admitted::Taken { address: false }) => self.charge(&mut inner, addr, now),
            _ => {}
        }
        if let (Outcome::Good | Outcome::Unknown, Admitted::Taken { address }) = (outcome, admitted) {
            let mut all = inner.everyone;
            self.everyone.add(&mut all, 1.0, now);
            inner.everyone = all;
            if let Some(b) = inner.buckets.get_mut(&Key::of(addr)).filter(|_| address) {
                self.address.add(b, 1.0, now);
            }
        }
    }

    /// Remembers the token of hash `hash` as seen to authenticate at `now` (the oldest
    /// forgotten when `MAX_KNOWN` are).
    fn remember(&self, inner: &mut Inner, hash: u64, now: Instant) {
        if !inner.known.contains_key(&hash) && inner.known.len() >= MAX_KNOWN {
            inner.known.retain(|_, seen| now.saturating_duration_since(*seen) < KNOWN_FOR);
            if inner.known.len() >= MAX_KNOWN {
                let oldest = inner.known.iter().min_by_key(|(_, seen)| **seen).map(|(h, _)| *h);
                oldest.map(|h| inner.known.remove(&h));
            }
        }
        inner.known.insert(hash, now);
    }

    /// Charges a failed lookup of `addr` at `now`: one try less of its bucket (none left is
    /// the least), made if it has none.
    fn charge(&self, inner: &mut Inner, addr: IpAddr, now: Instant) {
        let key = Key::of(addr);
        if now.saturating_duration_since(inner.swept) >= SWEEP_EVERY {
            self.forget_full(inner, now);
        }
        if !inner.buckets.contains_key(&key) && inner.buckets.len() >= MAX_ADDRESSES {
            self.make_room(inner, now);
        }
        let bucket = inner.buckets.entry(key).or_insert(Bucket { tries: self.address.burst, at: now });
        self.address.add(bucket, -1.0, now);
    }

    /// Forgets the buckets refilled to `burst`.
    fn forget_full(&self, inner: &mut Inner, now: Instant) {
        inner.buckets.retain(|_, b| self.address.tries(b, now) < self.address.burst);
        inner.swept = now;
    }

    /// Room for one more bucket: the full ones forgotten, else the one closest to full.
    fn make_room(&self, inner: &mut Inner, now: Instant) {
        self.forget_full(inner, now);
        if inner.buckets.len() < MAX_ADDRESSES {
            return;
        }
        let tries = |b: &Bucket| self.address.tries(b, now);
        let fullest = inner.buckets.iter().max_by(|a, b| tries(a.1).total_cmp(&tries(b.1))).map(|(k, _)| *k);
        if let Some(k) = fullest {
            inner.buckets.remove(&k);
        }
    }

    /// The addresses with a bucket (for tests).
    pub fn addresses(&self) -> usize {
        self.lock().buckets.len()
    }
}

/// The reverse proxies whose `X-Forwarded-For` names the client (`--trusted-proxies`): its
/// addresses and prefixes. None by default: the client is the TCP peer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Proxies(Vec<(IpAddr, u8)>);

/// `ip` with an IPv4-mapped IPv6 address as its IPv4 address.
fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(a) => a.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// An address of a forwarded header: `192.0.2.1`, `2001:db8::1`, or either with a port
/// (`192.0.2.1:5000`, `[2001:db8::1]:5000`).
fn forwarded_ip(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    entry.parse::<IpAddr>().ok().or_else(|| entry.parse::<std::net::SocketAddr>().ok().map(|s| s.ip())).map(plain)
}

impl Proxies {
    /// From a comma-separated list of addresses and prefixes, e.g. `127.0.0.1, 10.0.0.0/8,
    /// fd00::/8` (blank: none). Errors: an entry that is neither, named, saying what to write.
    pub fn parse(list: &str) -> Result<Proxies, String> {
        let mut nets = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (ip, bits) = entry.split_once('/').unwrap_or((entry, ""));
            let ip = ip.parse::<IpAddr>().ok().map(plain);
            let max = if matches!(ip, Some(IpAddr::V4(_))) { 32 } else { 128 };
            let bits = if bits.is_empty() { Some(max) } else { bits.parse::<u8>().ok().filter(|b| *b <= max) };
            match (ip, bits) {
                (Some(ip), Some(bits)) => nets.push((ip, bits)),
                _ => {
                    return Err(format!(
                        "--trusted-proxies {entry:?}: use addresses or prefixes, e.g. 127.0.0.1,10.0.0.0/8,fd00::/8"
                    ))
                }
            }
        }
        Ok(Proxies(nets))
    }

    /// Whether `ip` is one of the trusted proxies.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = plain(ip);
        self.0.iter().any(|(net, bits)| match (net, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(*bits)).unwrap_or(0);
                u32::from(*n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(*bits)).unwrap_or(0);
                u128::from(*n) & mask == u128::from(a) & mask
            }
            _ => false,
        })
    }

    /// The client of a request from `peer` whose `X-Forwarded-For` headers are `forwarded`
    /// (in order): `peer` when it is not a trusted proxy; else the entries are read from the
    /// right (each the address the one after it saw) while they are trusted proxies: the first
    /// that is not is the client. An entry that is not an address stops the walk at the trusted
    /// proxy that wrote it; a header of trusted proxies only names the leftmost.
    pub fn client(&self, peer: IpAddr, forwarded: &[&str]) -> IpAddr {
        let mut client = plain(peer);
        for entry in forwarded.iter().rev().flat_map(|h| h.rsplit(',')) {
            if !self.contains(client) {
                break;
            }
            match forwarded_ip(entry) {
                Some(ip) => client = ip,
                None => break,
            }
        }
        client
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    /// A lookup of `token` from `a` at `now` that comes to `outcome`, if admitted.
    fn look(t: &Throttle, a: IpAddr, token: &str, outcome: Outcome, now: Instant) -> Result<Admitted, Refused> {
        let admitted = t.admit(a, token, now)?;
        t.settle(a, token, admitted, outcome, now);
        Ok(admitted)
    }

    #[test]
    fn a_burst_then_a_rate() {
        let t0 = Instant::now();
        let t = Throttle::new(0.5, 3, 1000.0, t0);
        let a = ip("192.0.2.1");
        let fail = |now, n: usize| look(&t, a, &format!("bad-{n}"), Outcome::Failed, now).map(|_| ());
        for n in 0..3 {
            assert_eq!(fail(t0, n), Ok(()));
        }
        // empty: refused, 2 s until one try comes back at 0.5 a second
        assert_eq!(t.admit(a, "bad-x", t0), Err(Refused::Address(2)));
        assert_eq!(t.admit(a, "bad-x", t0 + Duration::from_millis(1500)), Err(Refused::Address(1)));
        assert_eq!(fail(t0 + Duration::from_secs(2), 4), Ok(()));
        assert!(t.admit(a, "bad-y", t0 + Duration::from_secs(2)).is_err());
        // another address has its own bucket
        assert_eq!(t.admit(ip("192.0.2.2"), "bad-z", t0), Ok(Admitted::Taken { address: false }));
        // never more than the burst: a long quiet spell gives back 3 tries, not more
        let later = t0 + Duration::from_secs(3600);
        for n in 10..13 {
            assert_eq!(fail(later, n), Ok(()));
        }
        assert!(t.admit(a, "bad-w", later).is_err());
    }

    #[test]
    fn a_token_seen_to_authenticate_is_never_refused_for_others_failures() {
        let t0 = Instant::now();
        let t = Throttle::new(0.01, 2, 1.0, t0);
        let nat = ip("203.0.113.9");
        // the good client authenticates once: known from then on
        assert_eq!(look(&t, nat, "good", Outcome::Good, t0), Ok(Admitted::Taken { address: false }));
        // a bad client behind the same address empties the address's bucket and the service's
        for n in 0..2 {
            look(&t, nat, &format!("bad-{n}"), Outcome::Failed, t0).unwrap();
        }
        assert!(matches!(t.admit(nat, "bad-9", t0), Err(Refused::Address(_))));
        assert!(matches!(t.admit(ip("198.51.100.1"), "bad-9", t0), Err(Refused::Everyone(_))));
        // the good token passes, as often as it is sent, and takes nothing
        for _ in 0..11 {
            assert_eq!(look(&t, nat, "good", Outcome::Good, t0), Ok(Admitted::Known));
        }
        // a token never seen to authenticate waits like the failures (it cannot be told apart)
        assert!(t.admit(nat, "new-good", t0).is_err());
        // an hour after it was last seen, it is no longer known
        let later = t0 + KNOWN_FOR;
        assert_eq!(t.admit(nat, "good", later - Duration::from_secs(1)), Ok(Admitted::Known));
        assert!(matches!(t.admit(nat, "good", later + Duration::from_secs(400)), Ok(Admitted::Taken { .. })));
    }

    #[test]
    fn a_known_token_revoked_since_is_forgotten_and_charged() {
        let t0 = Instant::now();
        let t = Throttle::new(0.01, 1, 5.0, t0);
        let a = ip("192.0.2.50");
        look(&t, a, "was-good", Outcome::Good, t0).unwrap();
        assert_eq!(look(&t, a, "was-good", Outcome::Failed, t0), Ok(Admitted::Known));
        // forgotten, and the address's one try spent
        assert_eq!(t.admit(a, "was-good", t0), Err(Refused::Address(100)));
    }

    #[test]
    fn spreading_failures_over_addresses_does_not_multiply_lookups() {
        let t0 = Instant::now();
        // 50 failures per address at once, but 10 a second for all of them
        let t = Throttle::new(5.0, 50, 10.0, t0);
        let admitted = (0..2000u32)
            .filter(|i| look(&t, IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i)), "bad", Outcome::Failed, t0).is_ok())
            .count();
        // the service's burst: a second's worth, at least one address's burst
        assert_eq!(admitted, 50);
        assert_eq!(t.admit(ip("10.9.9.9"), "bad", t0), Err(Refused::Everyone(1)));
        // a second later, 10 more
        let later = t0 + Duration::from_secs(1);
        let admitted = (0..100u32)
            .filter(|i| look(&t, IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + i)), "bad", Outcome::Failed, later).is_ok())
            .count();
        assert_eq!(admitted, 10);
        // lookups of good tokens and lookups without an answer give their try back
        let t = Throttle::new(5.0, 1, 1.0, t0);
        for n in 0..5 {
            look(&t, ip("192.0.2.7"), &format!("good-{n}"), Outcome::Good, t0).unwrap();
            look(&t, ip("192.0.2.7"), &format!("away-{n}"), Outcome::Unknown, t0).unwrap();
        }
        assert_eq!(t.admit(ip("192.0.2.8"), "other", t0), Ok(Admitted::Taken { address: false }));
    }

    #[test]
    fn lookups_in_flight_take_a_try_each() {
        let t0 = Instant::now();
        let t = Throttle::new(1.0, 2, 1000.0, t0);
        let a = ip("198.51.100.7");
        // failures of lookups admitted together, before the bucket was made, do not dig it
        // deeper than empty
        let together: Vec<_> = (0..10).map(|n| (n, t.admit(a, &format!("b{n}"), t0).unwrap())).collect();
        for (n, admitted) in together {
            t.settle(a, &format!("b{n}"), admitted, Outcome::Failed, t0);
        }
        assert_eq!(t.admit(a, "b", t0), Err(Refused::Address(1)));
        // once it has a bucket, lookups in flight at once take a try each: one try, one lookup
        let later = t0 + Duration::from_secs(1);
        assert_eq!(t.admit(a, "x", later), Ok(Admitted::Taken { address: true }));
        assert_eq!(t.admit(a, "y", later), Err(Refused::Address(1)));
        // a good token gives its try back
        t.settle(a, "x", Admitted::Taken { address: true }, Outcome::Good, later);
        assert_eq!(t.admit(a, "z", later), Ok(Admitted::Taken { address: true }));
        // a failure keeps it
        t.settle(a, "z", Admitted::Taken { address: true }, Outcome::Failed, later);
        assert!(t.admit(a, "w", later).is_err());
    }

    #[test]
    fn an_ipv6_client_is_its_64() {
        let t0 = Instant::now();
        let t = Throttle::new(1.0, 1, 1000.0, t0);
        look(&t, ip("2001:db8:1:2::1"), "bad", Outcome::Failed, t0).unwrap();
        assert!(t.admit(ip("2001:db8:1:2:ffff::9"), "bad2", t0).is_err());
        assert_eq!(t.admit(ip("2001:db8:1:3::1"), "bad2", t0), Ok(Admitted::Taken { address: false }));
        // an IPv4-mapped address is the IPv4 address
        look(&t, ip("203.0.113.5"), "bad", Outcome::Failed, t0).unwrap();
        assert!(t.admit(IpAddr::V6(Ipv4Addr::new(203, 0, 113, 5).to_ipv6_mapped()), "bad3", t0).is_err());
        assert!(t.admit(IpAddr::V6(Ipv6Addr::LOCALHOST), "bad3", t0).is_ok());
    }

    #[test]
    fn memory_is_bounded() {
        let t0 = Instant::now();
        let t = Throttle::new(1.0, 2, 1e9, t0);
        let addr = |i: usize| IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i as u32));
        let charge = |t: &Throttle, a, now| t.charge(&mut t.lock(), a, now);
        // more addresses than the map holds, each failing once (none refilled yet)
        for i in 0..MAX_ADDRESSES + 100 {
            charge(&t, addr(i), t0);
        }
        assert_eq!(t.addresses(), MAX_ADDRESSES);
        // the newest address is remembered: its second failure empties its bucket
        charge(&t, addr(MAX_ADDRESSES + 100), t0);
        charge(&t, addr(MAX_ADDRESSES + 100), t0);
        assert!(t.admit(addr(MAX_ADDRESSES + 100), "x", t0).is_err());
        assert_eq!(t.addresses(), MAX_ADDRESSES);
        // an emptied bucket is kept over one that is only short
        let t = Throttle::new(1.0, 2, 1e9, t0);
        charge(&t, addr(0), t0);
        charge(&t, addr(0), t0);
        for i in 1..MAX_ADDRESSES + 50 {
            charge(&t, addr(i), t0);
        }
        assert!(t.admit(addr(0), "x", t0).is_err(), "the emptied bucket survives");
        // refilled buckets are forgotten within a minute of the next failure
        let later = t0 + Duration::from_secs(61);
        charge(&t, addr(0), later);
        assert_eq!(t.addresses(), 1);
        // known tokens: at most MAX_KNOWN, the oldest forgotten
        let t = Throttle::new(1.0, 2, 1e9, t0);
        for i in 0..MAX_KNOWN + 10 {
            let now = t0 + Duration::from_millis(i as u64);
            t.settle(addr(0), &format!("t{i}"), Admitted::Known, Outcome::Good, now);
        }
        assert_eq!(t.lock().known.len(), MAX_KNOWN);
        let now = t0 + Duration::from_secs(100);
        assert!(matches!(t.admit(addr(0), "t0", now), Ok(Admitted::Taken { .. })));
        assert_eq!(t.admit(addr(0), &format!("t{}", MAX_KNOWN + 9), now), Ok(Admitted::Known));
    }

    #[test]
    fn trusted_proxies_name_the_client() {
        let p = Proxies::parse("127.0.0.1, 10.0.0.0/8,fd00::/8").unwrap();
        assert!(p.contains(ip("10.1.2.3")) && p.contains(ip("fd12::1")) && p.contains(ip("::ffff:127.0.0.1")));
        assert!(!p.contains(ip("11.0.0.1")) && !p.contains(ip("127.0.0.2")));
        // a peer that is not a trusted proxy: the peer, whatever it says
        assert_eq!(p.client(ip("192.0.2.1"), &["198.51.100.1"]), ip("192.0.2.1"));
        // from a trusted proxy: the rightmost address that is not one
        assert_eq!(p.client(ip("127.0.0.1"), &["198.51.100.1"]), ip("198.51.100.1"));
        assert_eq!(p.client(ip("127.0.0.1"), &["6.6.6.6, 198.51.100.1, 10.0.0.7"]), ip("198.51.100.1"));
        assert_eq!(p.client(ip("127.0.0.1"), &["6.6.6.6", "198.51.100.1:4711", "10.0.0.7"]), ip("198.51.100.1"));
        assert_eq!(p.client(ip("127.0.0.1"), &["[2001:db8::5]:80"]), ip("2001:db8::5"));
        // no header, or a garbled entry: the last trusted proxy
        assert_eq!(p.client(ip("127.0.0.1"), &[]), ip("127.0.0.1"));
        assert_eq!(p.client(ip("127.0.0.1"), &["6.6.6.6, unknown, 10.0.0.7"]), ip("10.0.0.7"));
        // none trusted by default
        assert_eq!(Proxies::default().client(ip("127.0.0.1"), &["198.51.100.1"]), ip("127.0.0.1"));
        assert_eq!(Proxies::parse(" ").unwrap(), Proxies::default());
        for bad in ["proxy.example", "10.0.0.0/33", "::/129", "10.0.0.1/x"] {
            assert_eq!(
                Proxies::parse(bad).unwrap_err(),
                format!("--trusted-proxies {bad:?}: use addresses or prefixes, e.g. 127.0.0.1,10.0.0.0/8,fd00::/8")
            );
        }
    }
}
