//! Failed authentications, rate-limited per client address: a token bucket per address of
//! `burst` tries, refilled at `rate` a second. A failed authentication (401: no token, an
//! unknown or revoked one) takes one; a successful one takes none. An address whose bucket is
//! empty is refused before its token is looked up (429 with `Retry-After`, no database round
//! trip), whatever the token, until the bucket has refilled one.
//!
//! An address that has failed before (it has a bucket) takes its try when it is admitted, and
//! gets it back if the token turns out good: so requests of one address in flight at once
//! never pass on one try together, and its lookups stay within `burst` and then `rate` a
//! second however many connections it opens. An address that never failed has no bucket and
//! is admitted free.
//!
//! An address is an IPv4 address, or the /64 of an IPv6 address (a client may hold many
//! addresses of its /64); an IPv4-mapped IPv6 address is its IPv4 address. Behind a proxy every
//! client has the proxy's address: the settings are then the proxy's.
//!
//! Memory is bounded: at most `MAX_ADDRESSES` buckets. A bucket refilled to `burst` says
//! nothing more than no bucket, so it is forgotten: at least every minute, and whenever the map
//! is full; when every bucket is still short, the one closest to full is forgotten for a new
//! one. Pure (the clock is the caller's), unit-tested.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most addresses with a bucket at once (about 50 bytes each).
pub const MAX_ADDRESSES: usize = 16_384;

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

/// How `admit` let a lookup through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admitted {
    /// the address has no bucket: nothing taken
    Free,
    /// a try of its bucket taken, given back by `settle` unless the token fails
    Taken,
}

pub struct Throttle {
    /// tries given back a second
    rate: f64,
    burst: f64,
    inner: Mutex<Inner>,
}

struct Inner {
    buckets: HashMap<Key, Bucket>,
    swept: Instant,
}

impl Throttle {
    /// `burst` failed authentications at once (at least 1), then `rate` a second (more than 0).
    pub fn new(rate: f64, burst: usize, now: Instant) -> Throttle {
        Throttle {
            rate: rate.max(f64::MIN_POSITIVE),
            burst: burst.max(1) as f64,
            inner: Mutex::new(Inner { buckets: HashMap::new(), swept: now }),
        }
    }

    /// The tries a bucket has at `now`.
    fn tries(&self, b: &Bucket, now: Instant) -> f64 {
        (b.tries + self.rate * now.saturating_duration_since(b.at).as_secs_f64()).min(self.burst)
    }

    /// Whether `addr` may have a token looked up at `now`: `Admitted::Taken` when it has a
    /// bucket, whose try it takes (`settle` gives it back for a good token), `Admitted::Free`
    /// when it has none. Errors: the whole seconds until its bucket has a try again (at least
    /// 1), when it has none.
    pub fn admit(&self, addr: IpAddr, now: Instant) -> Result<Admitted, u64> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        match inner.buckets.get_mut(&Key::of(addr)) {
            Some(b) => {
                let tries = (b.tries + self.rate * now.saturating_duration_since(b.at).as_secs_f64()).min(self.burst);
                if tries >= 1.0 {
                    *b = Bucket { tries: tries - 1.0, at: now };
                    Ok(Admitted::Taken)
                } else {
                    Err((((1.0 - tries) / self.rate).ceil() as u64).max(1))
                }
            }
            None => Ok(Admitted::Free),
        }
    }

    /// What the lookup of a token `admit`ted came to: a failed authentication takes a try
    /// (already taken when `admitted` is `Taken`); anything else (a good token, the database
    /// away) gives back the try taken.
    pub fn settle(&self, addr: IpAddr, admitted: Admitted, failed: bool, now: Instant) {
        match (admitted, failed) {
            (Admitted::Free, true) => self.charge(addr, now),
            (Admitted::Taken, false) => {
                let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(b) = inner.buckets.get_mut(&Key::of(addr)) {
                    let tries = self.tries(b, now);
                    *b = Bucket { tries: (tries + 1.0).min(self.burst), at: now };
                }
            }
            _ => {}
        }
    }

    /// Charges a failed authentication of `addr` at `now`: one try less (none left is the
    /// least).
    fn charge(&self, addr: IpAddr, now: Instant) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let key = Key::of(addr);
        if now.saturating_duration_since(inner.swept) >= SWEEP_EVERY {
            self.forget_full(&mut inner, now);
        }
        if !inner.buckets.contains_key(&key) && inner.buckets.len() >= MAX_ADDRESSES {
            self.make_room(&mut inner, now);
        }
        let bucket = inner.buckets.entry(key).or_insert(Bucket { tries: self.burst, at: now });
        let tries = self.tries(bucket, now);
        *bucket = Bucket { tries: (tries - 1.0).max(0.0), at: now };
    }

    /// Forgets the buckets refilled to `burst`.
    fn forget_full(&self, inner: &mut Inner, now: Instant) {
        inner.buckets.retain(|_, b| self.tries(b, now) < self.burst);
        inner.swept = now;
    }

    /// Room for one more bucket: the full ones forgotten, else the one closest to full.
    fn make_room(&self, inner: &mut Inner, now: Instant) {
        self.forget_full(inner, now);
        if inner.buckets.len() < MAX_ADDRESSES {
            return;
        }
        let fullest =
            inner.buckets.iter().max_by(|a, b| self.tries(a.1, now).total_cmp(&self.tries(b.1, now))).map(|(k, _)| *k);
        if let Some(k) = fullest {
            inner.buckets.remove(&k);
        }
    }

    /// The addresses with a bucket (for tests).
    pub fn addresses(&self) -> usize {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_burst_then_a_rate() {
        let t0 = Instant::now();
        let t = Throttle::new(0.5, 3, t0);
        let a = ip("192.0.2.1");
        let fail = |now| {
            let admitted = t.admit(a, now)?;
            t.settle(a, admitted, true, now);
            Ok::<_, u64>(())
        };
        for _ in 0..3 {
            assert_eq!(fail(t0), Ok(()));
        }
        // empty: refused, 2 s until one try comes back at 0.5 a second
        assert_eq!(t.admit(a, t0), Err(2));
        assert_eq!(t.admit(a, t0 + Duration::from_millis(1500)), Err(1));
        assert_eq!(fail(t0 + Duration::from_secs(2)), Ok(()));
        assert!(t.admit(a, t0 + Duration::from_secs(2)).is_err());
        // another address has its own bucket
        assert_eq!(t.admit(ip("192.0.2.2"), t0), Ok(Admitted::Free));
        // never more than the burst: a long quiet spell gives back 3 tries, not more
        let later = t0 + Duration::from_secs(3600);
        for _ in 0..3 {
            assert_eq!(fail(later), Ok(()));
        }
        assert!(t.admit(a, later).is_err());
    }

    #[test]
    fn successes_are_not_charged_and_charges_stop_at_empty() {
        let t0 = Instant::now();
        let t = Throttle::new(1.0, 2, t0);
        let a = ip("198.51.100.7");
        // an address that never failed has no bucket at all
        for _ in 0..100 {
            assert_eq!(t.admit(a, t0), Ok(Admitted::Free));
            t.settle(a, Admitted::Free, false, t0);
        }
        assert_eq!(t.addresses(), 0);
        // failures of lookups admitted together, before the bucket was made, do not dig it
        // deeper than empty
        for _ in 0..10 {
            t.settle(a, Admitted::Free, true, t0);
        }
        assert_eq!(t.admit(a, t0), Err(1));
        // once it has a bucket, lookups in flight at once take a try each: one try, one lookup
        let later = t0 + Duration::from_secs(1);
        assert_eq!(t.admit(a, later), Ok(Admitted::Taken));
        assert_eq!(t.admit(a, later), Err(1));
        // a good token gives its try back
        t.settle(a, Admitted::Taken, false, later);
        assert_eq!(t.admit(a, later), Ok(Admitted::Taken));
        // a failure keeps it
        t.settle(a, Admitted::Taken, true, later);
        assert!(t.admit(a, later).is_err());
    }

    #[test]
    fn an_ipv6_client_is_its_64() {
        let t0 = Instant::now();
        let t = Throttle::new(1.0, 1, t0);
        t.charge(ip("2001:db8:1:2::1"), t0);
        assert!(t.admit(ip("2001:db8:1:2:ffff::9"), t0).is_err());
        assert_eq!(t.admit(ip("2001:db8:1:3::1"), t0), Ok(Admitted::Free));
        // an IPv4-mapped address is the IPv4 address
        t.charge(ip("203.0.113.5"), t0);
        assert!(t.admit(IpAddr::V6(Ipv4Addr::new(203, 0, 113, 5).to_ipv6_mapped()), t0).is_err());
        assert!(t.admit(IpAddr::V6(Ipv6Addr::LOCALHOST), t0).is_ok());
    }

    #[test]
    fn memory_is_bounded() {
        let t0 = Instant::now();
        let t = Throttle::new(1.0, 2, t0);
        let addr = |i: usize| IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i as u32));
        // more addresses than the map holds, each failing once (none refilled yet)
        for i in 0..MAX_ADDRESSES + 100 {
            t.charge(addr(i), t0);
        }
        assert_eq!(t.addresses(), MAX_ADDRESSES);
        // the newest address is remembered: its second failure empties its bucket
        t.charge(addr(MAX_ADDRESSES + 100), t0);
        t.charge(addr(MAX_ADDRESSES + 100), t0);
        assert!(t.admit(addr(MAX_ADDRESSES + 100), t0).is_err());
        assert_eq!(t.addresses(), MAX_ADDRESSES);
        // an emptied bucket is kept over one that is only short
        let t = Throttle::new(1.0, 2, t0);
        t.charge(addr(0), t0);
        t.charge(addr(0), t0);
        for i in 1..MAX_ADDRESSES + 50 {
            t.charge(addr(i), t0);
        }
        assert!(t.admit(addr(0), t0).is_err(), "the emptied bucket survives");
        // refilled buckets are forgotten within a minute of the next failure
        let later = t0 + Duration::from_secs(61);
        t.charge(addr(0), later);
        assert_eq!(t.addresses(), 1);
    }
}
