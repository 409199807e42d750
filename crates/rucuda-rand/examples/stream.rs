//! Writes the raw 32-bit outputs of one generator's CPU reference to stdout, little-endian,
//! until stdout closes: what `testu01/smallcrush` reads.
//!
//! `cargo run --release -p rucuda-rand --example stream -- GENERATOR [SEED] [STATES]`,
//! GENERATOR one of philox, xorwow, mrg32k3a, sobol32, scrambled_sobol32, sobol64,
//! scrambled_sobol64. With STATES > 1 the words are what our fill kernel writes for that
//! many states (`curand_init(seed, i, 0)` for state i, 16-byte chunks in turn); for Sobol,
//! dimension 0 alone, or dimensions `0..STATES` in the same chunked layout.

use std::io::Write;

use rucuda_rand::mrg32k3a::reference::Mrg32k3aState;
use rucuda_rand::philox::reference::Philox4x32_10State;
use rucuda_rand::reference::{fill, CurandState};
use rucuda_rand::sobol::reference::{Sobol32State, Sobol64State};
use rucuda_rand::sobol::{direction, scramble};
use rucuda_rand::xorwow::reference::XorwowState;
use rucuda_rand::Distribution;

fn pump<S: CurandState>(mut states: Vec<S>, sixty_four: bool) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    let mut bytes = Vec::with_capacity(1 << 20);
    loop {
        bytes.clear();
        if sixty_four {
            let mut words = vec![0u64; 1 << 16];
            fill(&mut states, &mut words, Distribution::Raw);
            for w in words {
                bytes.extend_from_slice(&w.to_le_bytes());
            }
        } else {
            let mut words = vec![0u32; 1 << 17];
            fill(&mut states, &mut words, Distribution::Raw);
            for w in words {
                bytes.extend_from_slice(&w.to_le_bytes());
            }
        }
        out.write_all(&bytes)?;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map(String::as_str).unwrap_or("philox");
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1234);
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let result = match which {
        "philox" => pump(
            (0..n as u64)
                .map(|i| Philox4x32_10State::new(seed, i, 0))
                .collect(),
            false,
        ),
        "xorwow" => pump(
            (0..n as u64)
                .map(|i| XorwowState::new(seed, i, 0))
                .collect(),
            false,
        ),
        "mrg32k3a" => pump(
            (0..n as u64)
                .map(|i| Mrg32k3aState::new(seed, i, 0))
                .collect(),
            false,
        ),
        "sobol32" | "scrambled_sobol32" => {
            let scrambled = which.starts_with("scrambled");
            let states: Vec<Sobol32State> = (0..n)
                .map(|d| {
                    if scrambled {
                        let v = scramble::scrambled_dimension_32(d, seed).expect("dimension");
                        let c = scramble::scramble_constants_32(d + 1, seed)[d];
                        Sobol32State::scrambled(v, c, 0)
                    } else {
                        Sobol32State::new(direction::direction_vectors_32(d).expect("dimension"), 0)
                    }
                })
                .collect();
            pump(states, false)
        }
        "sobol64" | "scrambled_sobol64" => {
            let scrambled = which.starts_with("scrambled");
            let states: Vec<Sobol64State> = (0..n)
                .map(|d| {
                    if scrambled {
                        let v = scramble::scrambled_dimension_64(d, seed).expect("dimension");
                        let c = scramble::scramble_constants_64(d + 1, seed)[d];
                        Sobol64State::scrambled(v, c, 0)
                    } else {
                        Sobol64State::new(direction::direction_vectors_64(d).expect("dimension"), 0)
                    }
                })
                .collect();
            pump(states, true)
        }
        other => {
            eprintln!("stream: unknown generator {other}");
            std::process::exit(2);
        }
    };
    // A closed pipe (the test battery is done) ends the stream.
    if let Err(e) = result {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("stream: {e}");
            std::process::exit(1);
        }
    }
}
