//! The native backend against the interpreter on the workloads, side by side:
//!
//! * W2 `exp(-x²)·sin(y) + log1p(|x·y|)` on 10^7 float64, as one Composite node and as
//!   separate Elemwise nodes;
//! * W3 row-wise logsumexp of a 2000×2000 float64 matrix (max, sub, exp, sum, log, add),
//!   unfused and with `exp(x - max)` fused into the sum;
//! * `exp` on one thread with and without glibc's vector math library (10^7 elements, and
//!   2^16 elements resident in cache, where memory bandwidth does not hide the difference);
//! * compile time, cold (empty cache) and warm (from the cache).
//!
//! `cargo run --release -p oxtensor-bench --bin native`

use oxtensor::oxtensor_graph::{FunctionGraph, TensorType, Var, build};
use oxtensor::oxtensor_runtime::{Backend, Executable, Interpreter};
use oxtensor::{DType, Tensor};
use oxtensor_bench::best;
use oxtensor_native::{NativeBackend, NativeConfig};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const N: usize = 10_000_000;
const ROWS: usize = 2000;
const REPS: usize = 7;

fn input(name: &str, ndim: usize) -> Var {
    Var::input(Some(name), TensorType::of_rank(DType::F64, ndim))
}

fn scalar(name: &str) -> Var {
    Var::input(Some(name), TensorType::scalar(DType::F64))
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// `exp(-x²)·sin(y) + log1p(|x·y|)` built from separate nodes.
fn w2(x: &Var, y: &Var) -> Var {
    let e = ok(build::exp(&ok(build::neg(&ok(build::sqr(x))))));
    let l = ok(build::log1p(&ok(build::abs(&ok(build::mul(x, y))))));
    ok(build::add(&ok(build::mul(&e, &ok(build::sin(y)))), &l))
}

/// W2 as one Composite node over `x` and `y`.
fn w2_fused(x: &Var, y: &Var) -> Var {
    let s = [scalar("s0"), scalar("s1")];
    let inner = w2(&s[0], &s[1]);
    ok(build::composite(&s, &[inner], &[x.clone(), y.clone()])).remove(0)
}

/// Row-wise logsumexp; with `fused`, `exp(x - max)` is one Composite feeding the sum.
fn w3(x: &Var, fused: bool) -> Var {
    let m = ok(build::max(x, Some(&[1]), true));
    let e = if fused {
        let s = [scalar("s0"), scalar("s1")];
        let inner = ok(build::exp(&ok(build::sub(&s[0], &s[1]))));
        ok(build::composite(&s, &[inner], &[x.clone(), m.clone()])).remove(0)
    } else {
        ok(build::exp(&ok(build::sub(x, &m))))
    };
    let s = ok(build::sum(&e, Some(&[1]), false));
    let m0 = ok(build::max(x, Some(&[1]), false));
    ok(build::add(&ok(build::log(&s)), &m0))
}

fn graph(inputs: &[Var], out: Var) -> FunctionGraph {
    ok(FunctionGraph::new(inputs.to_vec(), vec![out]))
}

fn native(dir: &Path, parallel: bool, vector_math: bool) -> NativeBackend {
    ok(NativeBackend::with_config(NativeConfig {
        cache_dir: Some(dir.to_path_buf()),
        parallel,
        vector_math,
        ..NativeConfig::default()
    }))
}

fn time_run(exec: &Arc<dyn Executable>, values: &[Tensor]) -> f64 {
    best(REPS, || {
        black_box(ok(exec.run(values)));
    })
}

/// Times `g` in the interpreter and the native backend, checks they agree, prints a row.
fn compare(name: &str, g: &FunctionGraph, backend: &NativeBackend, values: &[Tensor]) {
    let i = ok(Interpreter.compile(g));
    let n = ok(backend.compile(g));
    let (a, b) = (ok(i.run(values)), ok(n.run(values)));
    let diff = a[0]
        .to_vec_as::<f64>()
        .iter()
        .zip(b[0].to_vec_as::<f64>())
        .map(|(p, q)| ((p - q) / p.abs().max(1e-300)).abs())
        .fold(0.0f64, f64::max);
    let (ti, tn) = (time_run(&i, values), time_run(&n, values));
    println!(
        "{name:<46} {:>9.2} ms {:>9.2} ms {:>7.2}x   (max rel diff {diff:.1e})",
        ti * 1e3,
        tn * 1e3,
        ti / tn
    );
}

fn main() {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cache = ok(tempfile::tempdir());
    let backend = native(cache.path(), true, true);
    println!("interpreter vs native backend, best of {REPS}, {threads} cores");
    println!(
        "{:<46} {:>12} {:>12} {:>8}",
        "workload", "interp", "native", "speedup"
    );

    let xs: Vec<f64> = (0..N).map(|i| (i as f64 * 1e-6).sin() * 2.0).collect();
    let ys: Vec<f64> = (0..N).map(|i| (i as f64 * 3e-7).cos() * 3.0).collect();
    let xt = ok(Tensor::from_slice(&xs, &[N]));
    let yt = ok(Tensor::from_slice(&ys, &[N]));
    let (x, y) = (input("x", 1), input("y", 1));
    let vals = [xt.clone(), yt.clone()];
    let g_w2f = graph(&[x.clone(), y.clone()], w2_fused(&x, &y));
    compare("W2 10^7 f64, one Composite", &g_w2f, &backend, &vals);
    let g_w2 = graph(&[x.clone(), y.clone()], w2(&x, &y));
    compare(
        "W2 10^7 f64, separate Elemwise nodes",
        &g_w2,
        &backend,
        &vals,
    );

    let mt = ok(xt.reshape(&[ROWS, N / ROWS]))
        .view(&[ROWS, ROWS], &[(N / ROWS) as isize, 1], 0)
        .unwrap_or_else(|e| panic!("{e}"))
        .to_contiguous();
    let m = input("m", 2);
    let g_w3 = graph(std::slice::from_ref(&m), w3(&m, false));
    compare(
        "W3 logsumexp 2000x2000, unfused",
        &g_w3,
        &backend,
        std::slice::from_ref(&mt),
    );
    let g_w3f = graph(std::slice::from_ref(&m), w3(&m, true));
    compare(
        "W3 logsumexp 2000x2000, exp fused into sum",
        &g_w3f,
        &backend,
        std::slice::from_ref(&mt),
    );

    println!();
    println!("exp on one thread (10^7 elements; and 2^16, cache-resident, per element):");
    let g_exp = graph(std::slice::from_ref(&x), ok(build::exp(&x)));
    let small = ok(Tensor::from_slice(&xs[..1 << 16], &[1 << 16]));
    for (label, vm) in [("scalar libm", false), ("libmvec (vector math)", true)] {
        let b = native(cache.path(), false, vm);
        let exec = ok(b.compile(&g_exp));
        let t = time_run(&exec, std::slice::from_ref(&xt));
        let t_small = best(REPS, || {
            for _ in 0..20 {
                black_box(ok(exec.run(std::slice::from_ref(&small))));
            }
        }) / 20.0;
        println!(
            "  {label:<24} {:>9.2} ms   {:>6.2} ns/element in cache",
            t * 1e3,
            t_small * 1e9 / (1 << 16) as f64
        );
    }
    let exec = ok(Interpreter.compile(&g_exp));
    let t = time_run(&exec, std::slice::from_ref(&xt));
    println!(
        "  {:<24} {:>9.2} ms   (all {threads} cores)",
        "interpreter",
        t * 1e3
    );

    println!();
    println!("compile time (C generation + cc + load):");
    for (name, g) in [
        ("W2 Composite", &g_w2f),
        ("W2 separate nodes", &g_w2),
        ("W3 unfused", &g_w3),
        ("W3 fused", &g_w3f),
    ] {
        let fresh = ok(tempfile::tempdir());
        let b = native(fresh.path(), true, true);
        let t = Instant::now();
        let (_, cold) = ok(b.compile_graph(g));
        let t_cold = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (_, warm) = ok(b.compile_graph(g));
        let t_warm = t.elapsed().as_secs_f64();
        assert!(!cold.cache_hit && warm.cache_hit);
        println!(
            "  {name:<20} {} kernels   cold {:>8.1} ms   warm {:>6.2} ms",
            cold.kernels,
            t_cold * 1e3,
            t_warm * 1e3
        );
    }
}
