//! NumPy's `SeedSequence`: turns user entropy (an int, a big int, a list of ints) and a spawn
//! key into well-mixed 32-bit words, so that `default_rng(seed)` here and in NumPy start from
//! the same PCG64 state.
//!
//! The algorithm is Robert O'Neill's `seed_seq` design as NumPy implements it
//! (`numpy/random/bit_generator.pyx`): entropy words are hashed into a pool of `pool_size`
//! words, every pool word is mixed into every other, and output words are drawn by hashing the
//! pool cyclically with a second multiplier sequence.

use crate::error::{RandomError, Result};

const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;

/// NumPy's default pool size (`DEFAULT_POOL_SIZE`), in 32-bit words.
pub const DEFAULT_POOL_SIZE: usize = 4;

/// Splits a non-negative integer, given as little-endian 32-bit words, the way NumPy's
/// `_int_to_uint32_array` does: trailing zero words dropped, but zero itself is `[0]`.
pub fn int_words(words_le: &[u32]) -> Vec<u32> {
    let len = words_le.iter().rposition(|&w| w != 0).map_or(1, |i| i + 1);
    let mut out = words_le[..len.min(words_le.len())].to_vec();
    if out.is_empty() {
        out.push(0);
    }
    out
}

/// The 32-bit words of a `u128` as NumPy coerces a Python int (little-endian, no padding).
pub fn u128_words(value: u128) -> Vec<u32> {
    int_words(&[
        value as u32,
        (value >> 32) as u32,
        (value >> 64) as u32,
        (value >> 96) as u32,
    ])
}

/// One `hashmix` step: hashes `value` with the running constant, which it advances.
fn hashmix(value: u32, hash_const: &mut u32) -> u32 {
    let mut v = value ^ *hash_const;
    *hash_const = hash_const.wrapping_mul(MULT_A);
    v = v.wrapping_mul(*hash_const);
    v ^ (v >> XSHIFT)
}

/// Combines two words so that each affects every bit of the result.
fn mix(x: u32, y: u32) -> u32 {
    let r = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    r ^ (r >> XSHIFT)
}

/// A seed sequence equal to NumPy's `np.random.SeedSequence(entropy, spawn_key=..., pool_size=...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSequence {
    entropy: Vec<u32>,
    spawn_key: Vec<u64>,
    pool_size: usize,
    n_children_spawned: u64,
    pool: Vec<u32>,
}

impl SeedSequence {
    /// The sequence for an integer seed, as `SeedSequence(seed)`.
    pub fn from_u128(seed: u128) -> Self {
        Self::from_entropy_words(u128_words(seed))
    }

    /// The sequence for a list of integer seeds, as `SeedSequence([a, b, ...])`: each is split
    /// into its own 32-bit words and the words are concatenated.
    pub fn from_ints(seeds: &[u128]) -> Self {
        Self::from_entropy_words(seeds.iter().flat_map(|&s| u128_words(s)).collect())
    }

    /// The sequence for entropy already coerced to NumPy's `uint32` word array (for integers
    /// beyond 128 bits use [`int_words`] on their little-endian words).
    pub fn from_entropy_words(entropy: Vec<u32>) -> Self {
        Self::build(entropy, Vec::new(), DEFAULT_POOL_SIZE)
    }

    /// The general constructor, `SeedSequence(entropy, spawn_key=spawn_key, pool_size=pool_size)`
    /// with entropy given as words; NumPy requires `pool_size >= 4`.
    pub fn with_spawn_key(
        entropy: Vec<u32>,
        spawn_key: Vec<u64>,
        pool_size: usize,
    ) -> Result<Self> {
        if pool_size < DEFAULT_POOL_SIZE {
            return Err(RandomError::new(
                "pool_size",
                format!("expected at least {DEFAULT_POOL_SIZE} words, got {pool_size}"),
            ));
        }
        Ok(Self::build(entropy, spawn_key, pool_size))
    }

    fn build(entropy: Vec<u32>, spawn_key: Vec<u64>, pool_size: usize) -> Self {
        let mut seq = Self {
            entropy,
            spawn_key,
            pool_size,
            n_children_spawned: 0,
            pool: vec![0; pool_size],
        };
        seq.mix_entropy();
        seq
    }

    /// The entropy words this sequence was made from.
    pub fn entropy(&self) -> &[u32] {
        &self.entropy
    }

    /// The spawn key: the path of child indices from the root sequence.
    pub fn spawn_key(&self) -> &[u64] {
        &self.spawn_key
    }

    /// The number of 32-bit words in the pool.
    pub fn pool_size(&self) -> usize {
        self.pool_size
    }

    /// How many children [`spawn`](Self::spawn) has made so far.
    pub fn n_children_spawned(&self) -> u64 {
        self.n_children_spawned
    }

    /// The mixed pool (NumPy's `SeedSequence.pool`).
    pub fn pool(&self) -> &[u32] {
        &self.pool
    }

    /// Entropy and spawn key as one word array (`get_assembled_entropy`): the entropy is padded
    /// with zeros to the pool size when a spawn key follows, so keys cannot collide with entropy.
    fn assembled_entropy(&self) -> Vec<u32> {
        let mut words = self.entropy.clone();
        if !self.spawn_key.is_empty() && words.len() < self.pool_size {
            words.resize(self.pool_size, 0);
        }
        for &k in &self.spawn_key {
            words.extend(u128_words(u128::from(k)));
        }
        words
    }

    fn mix_entropy(&mut self) {
        let entropy = self.assembled_entropy();
        let mut hash_const = INIT_A;
        let n = self.pool.len();
        for i in 0..n {
            let word = entropy.get(i).copied().unwrap_or(0);
            self.pool[i] = hashmix(word, &mut hash_const);
        }
        for src in 0..n {
            for dst in 0..n {
                if src != dst {
                    let h = hashmix(self.pool[src], &mut hash_const);
                    self.pool[dst] = mix(self.pool[dst], h);
                }
            }
        }
        for &word in entropy.iter().skip(n) {
            for dst in 0..n {
                let h = hashmix(word, &mut hash_const);
                self.pool[dst] = mix(self.pool[dst], h);
            }
        }
    }

    /// `generate_state(n_words, np.uint32)`: `n_words` output words.
    pub fn generate_state_u32(&self, n_words: usize) -> Vec<u32> {
        let mut hash_const = INIT_B;
        (0..n_words)
            .map(|i| {
                let mut v = self.pool[i % self.pool.len()] ^ hash_const;
                hash_const = hash_const.wrapping_mul(MULT_B);
                v = v.wrapping_mul(hash_const);
                v ^ (v >> XSHIFT)
            })
            .collect()
    }

    /// `generate_state(n_words, np.uint64)`: pairs of 32-bit words, low word first.
    pub fn generate_state_u64(&self, n_words: usize) -> Vec<u64> {
        self.generate_state_u32(2 * n_words)
            .chunks_exact(2)
            .map(|p| u64::from(p[0]) | (u64::from(p[1]) << 32))
            .collect()
    }

    /// `spawn(n_children)`: independent child sequences whose spawn keys extend this one's
    /// with the next child indices.
    pub fn spawn(&mut self, n_children: u64) -> Vec<SeedSequence> {
        let start = self.n_children_spawned;
        self.n_children_spawned += n_children;
        (start..start + n_children)
            .map(|i| {
                let mut key = self.spawn_key.clone();
                key.push(i);
                Self::build(self.entropy.clone(), key, self.pool_size)
            })
            .collect()
    }
}
