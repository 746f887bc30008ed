//! Per-call overhead from Rust, the part of W1 (`sum(x**2)`, x float64[10]) that is ours
//! rather than Python's: `Function::call` with input checks, and the bare executable, on the
//! interpreter and on the native backend (small nodes on the interpreter's kernels, as by
//! default, and every node in C).
//!
//! `cargo run --release -p oxtensor-bench --bin overhead`

use oxtensor::oxtensor_graph::{FunctionGraph, build};
use oxtensor::oxtensor_runtime::{Backend, Executable, Interpreter};
use oxtensor::{DType, Mode, Tensor, function, vector};
use oxtensor_bench::best;
use oxtensor_native::{NativeBackend, NativeConfig};
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

fn native(interpret_below: usize) -> NativeBackend {
    ok(NativeBackend::with_config(NativeConfig {
        interpret_below,
        ..NativeConfig::default()
    }))
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

    let graph = ok(FunctionGraph::new(vec![x.clone()], vec![out.clone()]));
    let (graph, _) = ok(Mode::default().rewrite(&graph));
    let backends: [(&str, Arc<dyn Executable>); 3] = [
        ("interp", ok(Interpreter.compile(&graph))),
        ("native (small on interp)", ok(native(256).compile(&graph))),
        ("native (all in C)", ok(native(0).compile(&graph))),
    ];
    let only = std::env::var("OVERHEAD_ONLY").ok();
    for (name, exec) in backends {
        if only.as_deref().is_some_and(|o| !name.starts_with(o)) {
            continue;
        }
        let t = per_call(|| {
            black_box(ok(exec.run(vec![input.clone()])));
        });
        println!("Executable::run, {name:25} {t:7.1} ns");
    }
}
