//! Elementwise fusion in the interpreter: the W2 expression `exp(-x²)·sin(y) + log1p(|x·y|)` on
//! two float64 vectors of 10⁷ elements, compiled with `FAST_RUN` (one fused Composite node, one
//! blocked pass over memory) and with `FAST_RUN` without the `fusion` pass (one full-size
//! temporary per elementwise node), side by side. Prints the best of several runs and the ratio.
//!
//! `cargo run --release -p oxtensor-bench --bin fusion [n]`

use oxtensor::{DType, Function, Mode, Tensor, Var, function, vector};
use std::time::Instant;

const REPS: usize = 5;

/// exp(-x²)·sin(y) + log1p(|x·y|)
fn w2(x: &Var, y: &Var) -> Var {
    (-(x * x)).exp() * y.sin() + (x * y).abs().log1p()
}

/// The best wall time of `REPS` calls (after one warm-up), in seconds.
fn best(f: &Function, args: &[Tensor]) -> f64 {
    let run = || f.call(args).unwrap_or_else(|e| panic!("call: {e}"));
    run();
    (0..REPS)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(run());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(10_000_000);
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);
    let out = w2(&x, &y);
    let build = |mode: Mode| {
        function(&[x.clone(), y.clone()], std::slice::from_ref(&out))
            .mode(mode)
            .build()
            .unwrap_or_else(|e| panic!("compile: {e}"))
    };
    let fused = build(Mode::FAST_RUN);
    let unfused = build(Mode::FAST_RUN.excluding(&["fusion"]));
    let xs: Vec<f64> = (0..n)
        .map(|i| ((i % 1000) as f64 - 500.0) * 0.004)
        .collect();
    let ys: Vec<f64> = (0..n).map(|i| ((i % 777) as f64 - 388.0) * 0.01).collect();
    let args = [
        Tensor::from_slice(&xs, &[n]).unwrap_or_else(|e| panic!("{e}")),
        Tensor::from_slice(&ys, &[n]).unwrap_or_else(|e| panic!("{e}")),
    ];
    let a = fused.call(&args).unwrap_or_else(|e| panic!("{e}"));
    let b = unfused.call(&args).unwrap_or_else(|e| panic!("{e}"));
    assert!(a[0].bits_eq(&b[0]), "fused and unfused values differ");
    let nodes = |f: &Function| f.graph().toposort().len();
    let (tf, tu) = (best(&fused, &args), best(&unfused, &args));
    println!("W2 on {n} float64 elements, interpreter, best of {REPS}:");
    println!(
        "  fused   (FAST_RUN)                    {:2} nodes  {:8.2} ms  {:6.2} ns/elem",
        nodes(&fused),
        tf * 1e3,
        tf * 1e9 / n as f64
    );
    println!(
        "  unfused (FAST_RUN excluding fusion)   {:2} nodes  {:8.2} ms  {:6.2} ns/elem",
        nodes(&unfused),
        tu * 1e3,
        tu * 1e9 / n as f64
    );
    println!("  unfused / fused = {:.2}x", tu / tf);
}
