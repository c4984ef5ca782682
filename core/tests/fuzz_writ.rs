//! A bounded-time mutation fuzzer for the writ parser and renderer, with no database.
//! Seeds: every file of tests/corpus/writ plus generated giants (a 1 MiB message, 10,000
//! commands). Each round mutates a seed (byte flips, inserted tokens, splices, truncation)
//! and checks: parsing never panics; every header is one `/todo` line; every parsed command
//! renders back to writ text that parses to the same command; a rendered block never has
//! more lines than its rows. Time budget: FUZZ_SECONDS (default 5); `bin/fuzz` runs longer.
//! Coverage-guided fuzzing (cargo fuzz) needs a nightly toolchain, which this project's
//! machines cannot install; this runs on stable.

use std::time::{Duration, Instant};

use pg_todos_core::status;
use pg_todos_core::writ::{parse, render};

/// xorshift64*: deterministic for a seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "/todo ",
    "/todo",
    "add ",
    "list",
    " all",
    "start ",
    "done ",
    "cancel ",
    "reopen ",
    "delete ",
    "describe ",
    "subject ",
    "help",
    "#",
    "1",
    "007",
    "99999999999999999999999",
    "-",
    ":",
    "/endtodo",
    "```",
    "~~~",
    "\n",
    "\r",
    "\r\n",
    "\t",
    " ",
    "\u{a0}",
    "／",
    "\u{202e}",
    "\u{2028}",
    "\u{0}",
    "▶ ",
    "[END TODO]",
    "١٤",
    "/etc/hosts",
];

fn corpus() -> Vec<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/corpus/writ");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .expect("tests/corpus/writ exists")
        .map(|e| std::fs::read(e.expect("readable entry").path()).expect("readable file"))
        .collect();
    seeds.sort();
    seeds.push("/todo add x\n".repeat(10_000).into_bytes());
    seeds.push(format!("/todo add big\n{}\n/endtodo\n", "a".repeat(1 << 20)).into_bytes());
    seeds
}

fn mutate(rng: &mut Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut v = seeds[rng.below(seeds.len())].clone();
    if v.len() > 4096 && rng.below(4) != 0 {
        v.truncate(4096); // keep most rounds fast; the giants still run whole now and then
    }
    for _ in 0..=rng.below(8) {
        match rng.below(5) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.next() as u8;
            }
            1 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let i = rng.below(v.len() + 1);
                v.splice(i..i, t.iter().copied());
            }
            2 if !v.is_empty() => {
                let i = rng.below(v.len());
                let j = (i + rng.below(16)).min(v.len());
                v.drain(i..j);
            }
            3 => {
                let other = &seeds[rng.below(seeds.len())];
                let cut = rng.below(other.len().min(4096) + 1);
                let i = rng.below(v.len() + 1);
                v.splice(i..i, other[..cut].iter().copied());
            }
            _ => {
                let i = rng.below(v.len() + 1);
                v.truncate(i);
            }
        }
    }
    v
}

/// The checks for one input; returns the number of commands it held.
fn check(input: &str) -> usize {
    let parsed = parse::parse(input);
    for p in &parsed {
        assert!(p.header.starts_with("/todo"), "header {:?} of {:?}", p.header, input);
        assert!(!p.header.contains(['\n', '\r']), "header {:?}", p.header);
        let framed = render::frame(&p.header, "OK");
        assert_eq!(framed.lines().count(), 3, "{framed:?}");
        if let Ok(cmd) = &p.command {
            let again: Vec<_> = parse::parse(&cmd.to_writ()).into_iter().map(|p| p.command).collect();
            assert_eq!(again, vec![Ok(cmd.clone())], "round trip of {cmd:?} from {input:?}");
            if let parse::Command::Add { subject, .. } = cmd {
                let row = render::Row {
                    id: 1,
                    subject: subject.clone(),
                    status: status::Status::Pending,
                    tenant_wide: false,
                    marks: Default::default(),
                };
                assert_eq!(render::list_body(&[row], false).lines().count(), 2, "{subject:?}");
            }
        }
    }
    parsed.len()
}

#[test]
fn fuzz_writ_parser_and_renderer() {
    let seconds: u64 = std::env::var("FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    let seed: u64 = std::env::var("FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let seeds = corpus();
    for s in &seeds {
        check(&String::from_utf8_lossy(s));
    }
    let mut rng = Rng(seed | 1);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let (mut inputs, mut commands, mut bytes) = (0u64, 0u64, 0u64);
    while Instant::now() < deadline {
        let v = mutate(&mut rng, &seeds);
        bytes += v.len() as u64;
        commands += check(&String::from_utf8_lossy(&v)) as u64;
        inputs += 1;
    }
    println!(
        "fuzz: {inputs} inputs ({} seeds, {:.1} MiB, {commands} commands parsed) in {seconds} s, seed {seed}",
        seeds.len(),
        bytes as f64 / (1 << 20) as f64
    );
    assert!(inputs > 0);
}
