//! Nanoseconds per draw of the bulk fills (`fill_normal`, `fill_exponential`, `fill_uniform`)
//! and of one-at-a-time draws of the same values:
//! `cargo run --release -p oxtensor-random --example fill_speed`.

use oxtensor_random::default_rng;
use std::hint::black_box;
use std::time::Instant;

/// The best time per draw, in ns, over 7 rounds of `calls` calls of `f` filling `out`.
fn best(out: &mut [f64], calls: usize, mut f: impl FnMut(&mut [f64])) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..calls {
            f(out);
            black_box(&out);
        }
        best = best.min(t.elapsed().as_secs_f64() / (calls * out.len()) as f64);
    }
    best * 1e9
}

fn main() {
    for n in [1000, 1_000_000] {
        let calls = 10_000_000 / n;
        let mut out = vec![0.0; n];
        let mut g = default_rng(0);
        let normal = best(&mut out, calls, |o| g.fill_normal(0.0, 1.0, o));
        let one = best(&mut out, calls, |o| o.fill_with(|| g.standard_normal()));
        let exponential = best(&mut out, calls, |o| g.fill_exponential(1.0, o));
        let uniform = best(&mut out, calls, |o| g.fill_uniform(0.0, 1.0, o));
        let words = best(&mut out, calls, |o| {
            o.fill_with(|| f64::from_bits(g.bit_generator_mut().next_u64()))
        });
        println!(
            "n={n:>8}: ns per draw: normal {normal:.2} (one at a time {one:.2}), \
             exponential {exponential:.2}, uniform {uniform:.2}, raw 64-bit words {words:.2}"
        );
    }
}
