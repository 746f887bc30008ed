//! Shared timing and inputs for the benchmark binaries in `src/bin/`.

use oxtensor::oxtensor_graph::TensorType;
use oxtensor::{DType, Var};
use std::time::Instant;

/// The fastest of `reps` timed runs of `f` (after one warm-up run), in seconds. The minimum is
/// the least noisy statistic on a shared machine.
pub fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The value of a result, or a panic with its error: a benchmark has no one to report to.
pub fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// `n` deterministic values in `[-1, 1)` from `seed` (a linear congruential sequence), so
/// every run and every contender gets the same inputs.
pub fn noise(n: usize, seed: u64) -> Vec<f64> {
    let step = |s: u64| {
        s.wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
    };
    let mut s = step(seed);
    (0..n)
        .map(|_| {
            s = step(s);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// An unnamed float64 input of rank `ndim`.
pub fn f64_input(ndim: usize) -> Var {
    Var::input(None, TensorType::of_rank(DType::F64, ndim))
}

/// Timed runs per row: the environment variable `var` when set to a number, else `default`.
pub fn reps(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
