//! NumPy's `PCG64` bit generator: a 128-bit linear congruential generator whose output is the
//! XSL-RR permutation of its state (O'Neill, "PCG: A Family of Simple Fast Space-Efficient
//! Statistically Good Algorithms for Random Number Generation", 2014).
//!
//! Besides 64-bit words it hands out 32-bit words the way NumPy does: one 64-bit draw gives two
//! 32-bit words, the low half first, the high half kept in `uinteger` until the next call.

use crate::seed_sequence::SeedSequence;

/// The LCG multiplier (`PCG_DEFAULT_MULTIPLIER_128`).
pub const PCG64_MULTIPLIER: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;

/// The distance `jumped` moves: 2^128 times the golden ratio's fractional part, made odd, so that
/// jumped streams are far apart (NumPy's `PCG64.jump_inplace`).
pub const PCG64_JUMP: u128 = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835;

/// The complete state of a [`Pcg64`], as NumPy's `bit_generator.state` dict holds it:
/// `{'state': {'state': .., 'inc': ..}, 'has_uint32': .., 'uinteger': ..}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Pcg64State {
    /// The 128-bit LCG state.
    pub state: u128,
    /// The 128-bit increment (always odd).
    pub inc: u128,
    /// Whether `uinteger` holds the high half of the last 64-bit draw, unread.
    pub has_uint32: bool,
    /// The buffered high 32 bits (meaningful only when `has_uint32`).
    pub uinteger: u32,
}

/// The PCG64 generator (XSL-RR 128/64), identical in stream to NumPy's `PCG64`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcg64 {
    state: u128,
    inc: u128,
    has_uint32: bool,
    uinteger: u32,
}

impl Pcg64 {
    /// `PCG64(seed)` for an integer seed, through `SeedSequence(seed)`.
    pub fn seed_from_u128(seed: u128) -> Self {
        Self::from_seed_sequence(&SeedSequence::from_u128(seed))
    }

    /// `PCG64(seed_seq)`: the state and increment are the 4 64-bit words
    /// `seed_seq.generate_state(4, uint64)`, read as (state high, state low, inc high, inc low)
    /// and fed to PCG's `srandom`.
    pub fn from_seed_sequence(seq: &SeedSequence) -> Self {
        let w = seq.generate_state_u64(4);
        let initstate = (u128::from(w[0]) << 64) | u128::from(w[1]);
        let initseq = (u128::from(w[2]) << 64) | u128::from(w[3]);
        Self::from_state_and_sequence(initstate, initseq)
    }

    /// PCG's `srandom(initstate, initseq)`: the increment is `2 * initseq + 1` and the state is
    /// `initstate` stepped in between two LCG steps.
    pub fn from_state_and_sequence(initstate: u128, initseq: u128) -> Self {
        let mut g = Self {
            state: 0,
            inc: (initseq << 1) | 1,
            has_uint32: false,
            uinteger: 0,
        };
        g.step();
        g.state = g.state.wrapping_add(initstate);
        g.step();
        g
    }

    /// A generator with exactly this state (the increment is forced odd, as PCG requires).
    pub fn from_state(s: Pcg64State) -> Self {
        Self {
            state: s.state,
            inc: s.inc | 1,
            has_uint32: s.has_uint32,
            uinteger: s.uinteger,
        }
    }

    /// The full state, for saving or comparing with NumPy's `bit_generator.state`.
    pub fn state(&self) -> Pcg64State {
        Pcg64State {
            state: self.state,
            inc: self.inc,
            has_uint32: self.has_uint32,
            uinteger: self.uinteger,
        }
    }

    #[inline]
    fn step(&mut self) {
        self.state = self
            .state
            .wrapping_mul(PCG64_MULTIPLIER)
            .wrapping_add(self.inc);
    }

    /// The next 64 random bits: step the LCG, then XSL-RR of the new state.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let s = self.state;
        let xored = ((s >> 64) as u64) ^ (s as u64);
        xored.rotate_right((s >> 122) as u32)
    }

    /// The next 32 random bits, buffered as NumPy does: the low half of a fresh 64-bit word now,
    /// its high half on the next call.
    pub fn next_u32(&mut self) -> u32 {
        if self.has_uint32 {
            self.has_uint32 = false;
            return self.uinteger;
        }
        let word = self.next_u64();
        self.has_uint32 = true;
        self.uinteger = (word >> 32) as u32;
        word as u32
    }

    /// A double in `[0, 1)` from the top 53 bits of one 64-bit word (NumPy's `next_double`).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// A float in `[0, 1)` from the top 24 bits of one 32-bit word (NumPy's `next_float`).
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// Moves the state `delta` steps ahead (modulo 2^128) in O(log delta) time, and drops the
    /// buffered 32-bit word, as NumPy's `PCG64.advance` does.
    pub fn advance(&mut self, delta: u128) {
        let mut acc_mult: u128 = 1;
        let mut acc_plus: u128 = 0;
        let mut cur_mult = PCG64_MULTIPLIER;
        let mut cur_plus = self.inc;
        let mut d = delta;
        while d > 0 {
            if d & 1 == 1 {
                acc_mult = acc_mult.wrapping_mul(cur_mult);
                acc_plus = acc_plus.wrapping_mul(cur_mult).wrapping_add(cur_plus);
            }
            cur_plus = cur_mult.wrapping_add(1).wrapping_mul(cur_plus);
            cur_mult = cur_mult.wrapping_mul(cur_mult);
            d >>= 1;
        }
        self.state = acc_mult.wrapping_mul(self.state).wrapping_add(acc_plus);
        self.has_uint32 = false;
        self.uinteger = 0;
    }

    /// A copy advanced by `jumps` times [`PCG64_JUMP`] (NumPy's `PCG64.jumped(jumps)`), for
    /// parallel streams that do not overlap.
    pub fn jumped(&self, jumps: u128) -> Self {
        let mut g = self.clone();
        g.advance(PCG64_JUMP.wrapping_mul(jumps));
        g
    }
}
