//! The native backend against the interpreter on the workloads, side by side:
//!
//! * W2 `exp(-x²)·sin(y) + log1p(|x·y|)` on 10^7 float64, as one Composite node and as
//!   separate Elemwise nodes;
//! * W3 row-wise logsumexp of a 2000×2000 float64 matrix (max, sub, exp, sum, log, add),
//!   unfused and with `exp(x - max)` fused into the sum;
//! * W5 (below) run through the facade with FAST_RUN's rewrites;
//! * W2 and W3 on one thread, with data resident in cache;
//! * `exp` on one thread with and without glibc's vector math library (10^7 elements, and
//!   2^16 elements resident in cache, where memory bandwidth does not hide the difference);
//! * compile time, cold (empty cache) and warm (from the cache), of the graphs above and of
//!   W5, the logistic-regression NLL and its gradient (X 10000×100) in one function built
//!   through the facade with FAST_RUN's rewrites.
//!
//! `cargo run --release -p oxtensor-bench --bin native [run|cache|compile]` (every section by
//! default)

use oxtensor::oxtensor_graph::{FunctionGraph, TensorType, Var, build};
use oxtensor::oxtensor_runtime::{Backend, Executable, Interpreter};
use oxtensor::{DType, Mode, Optimizer, Tensor};
use oxtensor_bench::best;
use oxtensor_native::{NativeBackend, NativeConfig};
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

const N: usize = 10_000_000;
const ROWS: usize = 2000;
const REPS: usize = 7;
const CACHE_REPS: usize = 300;

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

/// W5's inputs and outputs: `-mean(y·log p + (1-y)·log(1-p))` with `p = sigmoid(X·w)`, and
/// its gradient with respect to `w`, for constant `X` (10000×100) and `y`.
fn w5() -> (Vec<Var>, Vec<Var>) {
    let (n, d) = (10_000usize, 100usize);
    let xs: Vec<f64> = (0..n * d)
        .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
        .collect();
    let ys: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i % 3 == 0))).collect();
    let xc = Var::constant(ok(Tensor::from_slice(&xs, &[n, d])));
    let yc = Var::constant(ok(Tensor::from_slice(&ys, &[n])));
    let w = input("w", 1);
    let p = ok(build::sigmoid(&ok(build::dot(&xc, &w))));
    let ll = &yc * &p.log() + &(1.0 - &yc) * &(1.0 - &p).log();
    let nll = -ll.mean(None);
    let g = ok(oxtensor::grad_vars(&nll, std::slice::from_ref(&w))).remove(0);
    (vec![w], vec![nll, g])
}

/// Compiles W5 through the facade (FAST_RUN rewrites, then `backend`): the seconds it took.
fn compile_w5(backend: &Arc<NativeBackend>, inputs: &[Var], outputs: &[Var]) -> f64 {
    let mode = Mode::with_backend(backend.clone(), Optimizer::FAST_RUN);
    let t = Instant::now();
    black_box(ok(oxtensor::function(inputs, outputs).mode(mode).build()));
    t.elapsed().as_secs_f64()
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
        black_box(ok(exec.run(values.to_vec())));
    })
}

/// Times `g` in the interpreter and the native backend, checks they agree, prints a row.
fn compare(name: &str, g: &FunctionGraph, backend: &NativeBackend, values: &[Tensor]) {
    let i = ok(Interpreter.compile(g));
    let n = ok(backend.compile(g));
    let (a, b) = (ok(i.run(values.to_vec())), ok(n.run(values.to_vec())));
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

/// The run-time rows: W2, W3 and `exp`.
/// W5 (value and gradient) through the facade with FAST_RUN's rewrites, on the interpreter
/// and the native backend: the best of [`CACHE_REPS`] calls each.
fn w5_row(dir: &Path) {
    let (inputs, outputs) = w5();
    let w: Vec<f64> = (0..100)
        .map(|i| (f64::from(i) * 0.37).sin() * 0.1)
        .collect();
    let args = [ok(Tensor::from_slice(&w, &[100]))];
    let time = |mode: Mode| {
        let f = ok(oxtensor::function(&inputs, &outputs).mode(mode).build());
        best(CACHE_REPS, || {
            black_box(ok(f.call(&args)));
        })
    };
    let native = Arc::new(native(dir, true, true));
    let tn = time(Mode::with_backend(native, Optimizer::FAST_RUN));
    let ti = time(ok(Mode::by_name("interp").ok_or("no interp mode")));
    println!(
        "{:<46} {:>9.3} ms {:>9.3} ms {:>7.1}x",
        "W5 logreg NLL + gradient, X 10000x100",
        ti * 1e3,
        tn * 1e3,
        ti / tn
    );
}

fn run_rows() {
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
    w5_row(cache.path());

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
                black_box(ok(exec.run(vec![small.clone()])));
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
}

/// Best of three compile times of one graph: from an empty cache (the shared objects, drivers
/// and monoids, built too), with the shared objects cached but not the function, and from the
/// cache.
struct CompileTimes {
    empty: f64,
    cold: f64,
    warm: f64,
}

/// Times `compile` (which compiles one graph with the backend given) as [`CompileTimes`]
/// says.
fn compile_times(compile: impl Fn(&Arc<NativeBackend>) -> f64) -> CompileTimes {
    let mut t = CompileTimes {
        empty: f64::INFINITY,
        cold: f64::INFINITY,
        warm: f64::INFINITY,
    };
    for _ in 0..3 {
        let fresh = ok(tempfile::tempdir());
        let b = Arc::new(native(fresh.path(), true, true));
        t.empty = t.empty.min(compile(&b));
        t.warm = t.warm.min(compile(&b));
        for e in ok(b.cache().entries()) {
            b.cache().remove(&e.key);
        }
        t.cold = t.cold.min(compile(&b));
    }
    t
}

/// The compile-time rows.
fn compile_rows() {
    println!("compile time, best of 3 (C generation + cc + load; W5: the whole function() call):");
    println!(
        "  {:<20} {:>7} {:>6}   {:>11} {:>14} {:>9}",
        "", "kernels", "lines", "empty cache", "objects cached", "warm"
    );
    let (x, y, m) = (input("x", 1), input("y", 1), input("m", 2));
    let xy = [x.clone(), y.clone()];
    let mm = std::slice::from_ref(&m);
    let (inputs, outputs) = w5();
    let w5_graph = {
        let dir = ok(tempfile::tempdir());
        let b = Arc::new(native(dir.path(), true, true));
        let mode = Mode::with_backend(b, Optimizer::FAST_RUN);
        ok(oxtensor::function(&inputs, &outputs).mode(mode).build())
            .graph()
            .clone()
    };
    let rows = [
        ("W2 Composite", graph(&xy, w2_fused(&x, &y))),
        ("W2 separate nodes", graph(&xy, w2(&x, &y))),
        ("W3 unfused", graph(mm, w3(&m, false))),
        ("W3 fused", graph(mm, w3(&m, true))),
        ("W5 logreg NLL+grad", w5_graph),
    ];
    for (name, g) in &rows {
        let t = if name.starts_with("W5") {
            compile_times(|b| compile_w5(b, &inputs, &outputs))
        } else {
            compile_times(|b| {
                let t = Instant::now();
                black_box(ok(b.compile_graph(g)));
                t.elapsed().as_secs_f64()
            })
        };
        let dir = ok(tempfile::tempdir());
        let b = native(dir.path(), true, true);
        let (_, info) = ok(b.compile_graph(g));
        let lines = b.generate(g).lines().count();
        println!(
            "  {name:<20} {:>7} {lines:>6}   {:>8.1} ms {:>11.1} ms {:>6.2} ms",
            info.kernels,
            t.empty * 1e3,
            t.cold * 1e3,
            t.warm * 1e3
        );
    }
}

/// The W2 and W3 graphs on one thread with data resident in cache (2^16 elements, a 256×256
/// matrix): the generated code's speed without memory bandwidth or the other cores' load in
/// the way. Nanoseconds per element, best of many calls.
fn cache_rows() {
    println!("one thread, in cache (2^16 elements; 256x256), best of {CACHE_REPS} calls:");
    let cache = ok(tempfile::tempdir());
    let backend = native(cache.path(), false, true);
    let n = 1 << 16;
    let xs: Vec<f64> = (0..n).map(|i| (i as f64 * 1e-3).sin() * 2.0).collect();
    let ys: Vec<f64> = (0..n).map(|i| (i as f64 * 3e-4).cos() * 3.0).collect();
    let xt = ok(Tensor::from_slice(&xs, &[n]));
    let yt = ok(Tensor::from_slice(&ys, &[n]));
    let mt = ok(xt.reshape(&[256, 256]));
    let (x, y, m) = (input("x", 1), input("y", 1), input("m", 2));
    let xy = [x.clone(), y.clone()];
    let mm = std::slice::from_ref(&m);
    let rows = [
        (
            "W2 one Composite",
            graph(&xy, w2_fused(&x, &y)),
            vec![xt.clone(), yt.clone()],
        ),
        (
            "W2 separate Elemwise nodes",
            graph(&xy, w2(&x, &y)),
            vec![xt, yt],
        ),
        (
            "W3 logsumexp, unfused",
            graph(mm, w3(&m, false)),
            vec![mt.clone()],
        ),
        (
            "W3 logsumexp, exp fused into sum",
            graph(mm, w3(&m, true)),
            vec![mt],
        ),
    ];
    for (name, g, values) in &rows {
        let exec = ok(backend.compile(g));
        let t = best(CACHE_REPS, || {
            black_box(ok(exec.run(values.to_vec())));
        });
        println!("  {name:<36} {:>7.3} ns/element", t * 1e9 / n as f64);
    }
}

fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    if what != "compile" && what != "cache" {
        run_rows();
    }
    if what != "compile" && what != "run" {
        println!();
        cache_rows();
    }
    if what != "run" && what != "cache" {
        println!();
        compile_rows();
    }
}
