//! Bounded integers: NumPy's `Generator.integers` for `int64` and `int32`, and the masked
//! `random_interval` its shuffles and hypergeometric sampler use.
//!
//! Lemire's multiply-and-reject ("Fast Random Integer Generation in an Interval", 2019) is the
//! default; the older masked rejection is available for streams made with `use_masked=True`.
//! Ranges that fit in 32 bits draw 32-bit words (from the [`Pcg64`](crate::Pcg64) buffer).

use crate::error::{RandomError, Result};
use crate::generator::Generator;

/// Which rejection method turns random words into a bounded integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoundedMethod {
    /// Lemire's nearly divisionless method (NumPy's default).
    #[default]
    Lemire,
    /// Draw, mask to the next power of two minus one, reject values above the range.
    Masked,
}

/// The smallest all-ones bit mask covering `max`.
fn mask_for(max: u64) -> u64 {
    if max == 0 {
        0
    } else {
        u64::MAX >> max.leading_zeros()
    }
}

impl Generator {
    fn lemire_u32(&mut self, rng: u32) -> u32 {
        let excl = rng + 1;
        let mut m = u64::from(self.bitgen.next_u32()) * u64::from(excl);
        let mut leftover = m as u32;
        if leftover < excl {
            let threshold = (u32::MAX - rng) % excl;
            while leftover < threshold {
                m = u64::from(self.bitgen.next_u32()) * u64::from(excl);
                leftover = m as u32;
            }
        }
        (m >> 32) as u32
    }

    fn lemire_u64(&mut self, rng: u64) -> u64 {
        let excl = rng + 1;
        let mut m = u128::from(self.bitgen.next_u64()) * u128::from(excl);
        let mut leftover = m as u64;
        if leftover < excl {
            let threshold = (u64::MAX - rng) % excl;
            while leftover < threshold {
                m = u128::from(self.bitgen.next_u64()) * u128::from(excl);
                leftover = m as u64;
            }
        }
        (m >> 64) as u64
    }

    fn masked_u32(&mut self, rng: u32) -> u32 {
        let mask = mask_for(u64::from(rng)) as u32;
        loop {
            let v = self.bitgen.next_u32() & mask;
            if v <= rng {
                return v;
            }
        }
    }

    fn masked_u64(&mut self, rng: u64) -> u64 {
        let mask = mask_for(rng);
        loop {
            let v = self.bitgen.next_u64() & mask;
            if v <= rng {
                return v;
            }
        }
    }

    /// An integer uniform on `[0, rng]` as NumPy's `random_bounded_uint64`: 32-bit words when
    /// the range fits (a plain one for the full 32-bit range), a plain 64-bit word for the full
    /// 64-bit range.
    pub fn bounded_u64(&mut self, rng: u64, method: BoundedMethod) -> u64 {
        if rng == 0 {
            0
        } else if rng == u64::from(u32::MAX) {
            u64::from(self.bitgen.next_u32())
        } else if let Ok(r32) = u32::try_from(rng) {
            u64::from(match method {
                BoundedMethod::Lemire => self.lemire_u32(r32),
                BoundedMethod::Masked => self.masked_u32(r32),
            })
        } else if rng == u64::MAX {
            self.bitgen.next_u64()
        } else {
            match method {
                BoundedMethod::Lemire => self.lemire_u64(rng),
                BoundedMethod::Masked => self.masked_u64(rng),
            }
        }
    }

    /// An integer uniform on `[0, rng]` as NumPy's `random_buffered_bounded_uint32`.
    pub fn bounded_u32(&mut self, rng: u32, method: BoundedMethod) -> u32 {
        if rng == 0 {
            0
        } else if rng == u32::MAX {
            self.bitgen.next_u32()
        } else {
            match method {
                BoundedMethod::Lemire => self.lemire_u32(rng),
                BoundedMethod::Masked => self.masked_u32(rng),
            }
        }
    }

    /// NumPy's `random_interval(max)`: uniform on `[0, max]` by masked rejection, with 32-bit
    /// words when `max` fits (used by `shuffle`, `permutation` and small hypergeometric draws).
    pub fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mask = mask_for(max);
        if max <= u64::from(u32::MAX) {
            loop {
                let v = u64::from(self.bitgen.next_u32()) & mask;
                if v <= max {
                    return v;
                }
            }
        }
        loop {
            let v = self.bitgen.next_u64() & mask;
            if v <= max {
                return v;
            }
        }
    }

    /// `integers(low, high, dtype=int64, endpoint=endpoint)` with the given method: uniform on
    /// `[low, high)`, or `[low, high]` when `endpoint`.
    pub fn integers_with(
        &mut self,
        low: i64,
        high: i64,
        endpoint: bool,
        method: BoundedMethod,
    ) -> Result<i64> {
        let high_incl = inclusive_high(low, high, endpoint)?;
        let rng = high_incl.wrapping_sub(low) as u64;
        Ok((low as u64).wrapping_add(self.bounded_u64(rng, method)) as i64)
    }

    /// `integers(low, high, endpoint=endpoint)` (int64, Lemire).
    pub fn integers(&mut self, low: i64, high: i64, endpoint: bool) -> Result<i64> {
        self.integers_with(low, high, endpoint, BoundedMethod::Lemire)
    }

    /// `integers(low, high, dtype=int32, endpoint=endpoint)` with the given method.
    pub fn integers_i32_with(
        &mut self,
        low: i32,
        high: i32,
        endpoint: bool,
        method: BoundedMethod,
    ) -> Result<i32> {
        // `high_incl` lies in `[low, high]`, so it fits an i32.
        let high_incl = inclusive_high(i64::from(low), i64::from(high), endpoint)? as i32;
        let rng = high_incl.wrapping_sub(low) as u32;
        Ok((low as u32).wrapping_add(self.bounded_u32(rng, method)) as i32)
    }

    /// `integers(low, high, dtype=int32, endpoint=endpoint)` (Lemire).
    pub fn integers_i32(&mut self, low: i32, high: i32, endpoint: bool) -> Result<i32> {
        self.integers_i32_with(low, high, endpoint, BoundedMethod::Lemire)
    }
}

/// The largest value `integers(low, high, endpoint=…)` may return: `high`, or `high - 1`
/// without `endpoint`; an error naming `high` when the range is empty.
fn inclusive_high(low: i64, high: i64, endpoint: bool) -> Result<i64> {
    let high_incl = if endpoint {
        high
    } else {
        high.checked_sub(1)
            .ok_or_else(|| RandomError::new("high", "low >= high (expected low < high)"))?
    };
    if low > high_incl {
        return Err(RandomError::new(
            "high",
            format!(
                "low {} high (expected low {} high, got low={low}, high={high})",
                if endpoint { ">" } else { ">=" },
                if endpoint { "<=" } else { "<" }
            ),
        ));
    }
    Ok(high_incl)
}
