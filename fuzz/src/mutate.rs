//! A small, deterministic (seeded) mutator in the style of AFL's havoc stage: bit and
//! byte flips, interesting values, inserted and deleted runs, duplicated runs, splices
//! with another input and dictionary tokens. No coverage feedback: it leans on a good
//! seed corpus and the dictionary.

/// SplitMix64: small, fast, reproducible from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator with this seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

const INTERESTING: &[u8] = &[
    0, 1, 0x7f, 0x80, 0xff, b'\n', b' ', b'0', b'9', b'"', b'<', b'>', b'*', b',', b'\\',
];

/// Tokens every target's inputs are likely to contain.
pub const DICTIONARY: &[&str] = &[
    "float",
    "double",
    "int",
    "unsigned",
    "long long",
    "const",
    "*",
    ",",
    "__restrict__",
    "complex<float>",
    "pycuda::complex<double>",
    "__half",
    "bool",
    "size_t",
    "x[i]",
    "[i]",
    "i",
    "n",
    "=",
    "+=",
    "++",
    "&",
    "->",
    ".",
    "::",
    "//",
    "/*",
    "*/",
    "\"",
    "'",
    "if",
    "?",
    "&&",
    "#include",
    "#include \"",
    "#include <",
    "include_next",
    "sm_",
    "compute_",
    "lto_",
    "90a",
    "100f",
    "8.6",
    "-arch=",
    "--gpu-architecture=",
    "-I",
    "--include-path=",
    "-D",
    "=",
    "K",
    "M",
    "G",
    "iB",
    "RUCUDAJT",
    "\u{0}",
    "é",
    "\u{1F600}",
];

/// One mutated copy of `input` (`other`: a second input to splice from), at most
/// `max_len` bytes.
pub fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], max_len: usize) -> Vec<u8> {
    let mut v = input.to_vec();
    let rounds = 1 + rng.below(8);
    for _ in 0..rounds {
        match rng.below(10) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = INTERESTING[rng.below(INTERESTING.len())];
            }
            2 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.next_u64() as u8;
            }
            3 => {
                let at = rng.below(v.len() + 1);
                let n = 1 + rng.below(8);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
                v.splice(at..at, bytes);
            }
            4 if !v.is_empty() => {
                let at = rng.below(v.len());
                let n = 1 + rng.below((v.len() - at).min(16));
                v.drain(at..at + n);
            }
            5 if !v.is_empty() => {
                let at = rng.below(v.len());
                let n = 1 + rng.below((v.len() - at).min(32));
                let run = v[at..at + n].to_vec();
                let to = rng.below(v.len() + 1);
                v.splice(to..to, run);
            }
            6 if !other.is_empty() => {
                let cut = rng.below(v.len() + 1);
                let from = rng.below(other.len());
                v.truncate(cut);
                v.extend_from_slice(&other[from..]);
            }
            7 | 8 => {
                let token = DICTIONARY[rng.below(DICTIONARY.len())].as_bytes();
                let at = rng.below(v.len() + 1);
                v.splice(at..at, token.iter().copied());
            }
            _ if v.len() >= 4 => {
                // Overwrite a little-endian u32 with a boundary value (lengths, counts).
                let at = rng.below(v.len() - 3);
                let value: u32 = [0, 1, 0xff, 0xffff, u32::MAX, 0x8000_0000, 64][rng.below(7)];
                v[at..at + 4].copy_from_slice(&value.to_le_bytes());
            }
            _ => v.push(rng.next_u64() as u8),
        }
    }
    v.truncate(max_len);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_reproducible_and_bounded() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            let x = mutate(&mut a, b"float a, float *x", b"int *y", 64);
            let y = mutate(&mut b, b"float a, float *x", b"int *y", 64);
            assert_eq!(x, y);
            assert!(x.len() <= 64);
        }
    }
}
