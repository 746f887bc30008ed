//! The fixed cost of calling a compiled function from Rust, the part of W1 (`sum(x**2)` on 10
//! floats) below the Python binding: run it under `perf record` to see where a tiny call goes.
//!
//! Run with `cargo run --release -p oxtensor --example call_overhead [calls]`.

use oxtensor::{DType, Tensor, function, vector};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let calls: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(200_000);
    let x = vector("x", DType::F64);
    let f = function(std::slice::from_ref(&x), &[(&x * &x).sum(None)]).build()?;
    let xs = Tensor::from_slice(&[0.5; 10], &[10])?;
    // The best of many short rounds: on a busy machine the minimum is the stable statistic.
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        let started = Instant::now();
        for _ in 0..calls {
            std::hint::black_box(f.call_owned(vec![xs.clone()])?);
        }
        best = best.min(started.elapsed().as_nanos() as f64 / calls as f64);
    }
    println!("{best:.1} ns per call (best of 20 rounds of {calls})");
    Ok(())
}
