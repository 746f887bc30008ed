//! Shared timing for the benchmark binaries in `src/bin/`.

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
