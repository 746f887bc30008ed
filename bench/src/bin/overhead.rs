//! Per-call overhead from Rust, the part of W1 (`sum(x**2)`, x float64[10]) that is ours
//! rather than Python's: `Function::call` with input checks, and the bare executable on the
//! interpreter and on the native backend; the same for a small elementwise output, `x*x + 1`.
//!
//! `cargo run --release -p oxtensor-bench --bin overhead`

use oxtensor::oxtensor_graph::{FunctionGraph, build};
use oxtensor::oxtensor_runtime::{Backend, Executable, Interpreter};
use oxtensor::{DType, Mode, Tensor, function, vector};
use oxtensor_bench::best;
use oxtensor_native::NativeBackend;
use std::hint::black_box;
use std::sync::Arc;

const REPS: usize = 7;

/// Calls per timed run: `$OVERHEAD_CALLS`, else 200,000 (a few thousand under callgrind).
fn calls() -> usize {
    std::env::var("OVERHEAD_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000)
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// Nanoseconds per call of `f`, the best of [`REPS`] runs of [`calls`] calls.
fn per_call(mut f: impl FnMut()) -> f64 {
    let n = calls();
    best(REPS, || {
        for _ in 0..n {
            f();
        }
    }) * 1e9
        / n as f64
}

fn main() {
    let x = vector("x", DType::F64);
    let out = ok(build::sum(&ok(build::sqr(&x)), None, false));
    let input = ok(Tensor::from_slice(&[0.5f64; 10], &[10]));

    let f = ok(function(std::slice::from_ref(&x), std::slice::from_ref(&out)).build());
    let t = per_call(|| {
        black_box(ok(f.call(std::slice::from_ref(&input))));
    });
    println!("Function::call, FAST_RUN, checked inputs  {t:7.1} ns");
    f.set_trust_input(true);
    let t = per_call(|| {
        black_box(ok(f.call(std::slice::from_ref(&input))));
    });
    println!("Function::call, FAST_RUN, trust_input     {t:7.1} ns");

    // W1, and an elementwise output (`x·x + 1`, one Composite) for the small elementwise path.
    let elementwise = &ok(build::mul(&x, &x)) + 1.0;
    let only = std::env::var("OVERHEAD_ONLY").ok();
    for (label, out) in [("sum(x**2)", out), ("x*x + 1", elementwise)] {
        let graph = ok(FunctionGraph::new(vec![x.clone()], vec![out]));
        let (graph, _) = ok(Mode::default().rewrite(&graph));
        let backends: [(&str, Arc<dyn Executable>); 2] = [
            ("interp", ok(Interpreter.compile(&graph))),
            ("native", ok(ok(NativeBackend::new()).compile(&graph))),
        ];
        for (name, exec) in backends {
            if only.as_deref().is_some_and(|o| !name.starts_with(o)) {
                continue;
            }
            let t = per_call(|| {
                black_box(ok(exec.run(vec![input.clone()])));
            });
            println!("Executable::run, {label:10} {name:7} {t:7.1} ns");
        }
    }
}
