//! The interpreter on 10^7-element elementwise graphs and reductions, against plain Rust loops
//! written for the same job. Prints the best of several runs and the ratio interpreter / loop.
//!
//! `cargo run --release -p oxtensor-bench --bin interp`

use oxtensor::{DType, Mode, Tensor, Var, function, matrix, ops, vector};
use oxtensor_bench::best;
use std::hint::black_box;

const N: usize = 10_000_000;
const REPS: usize = 7;

fn row(name: &str, interp: f64, plain: f64) {
    println!(
        "{name:<44} {:>9.2} ms {:>9.2} ms {:>7.2}x",
        interp * 1e3,
        plain * 1e3,
        interp / plain
    );
}

/// Compiles for the interpreter (with every rewrite), whatever FAST_RUN's backend is.
fn compile(inputs: &[Var], out: Var) -> oxtensor::Function {
    let mode = Mode::by_name("interp").expect("the interpreter mode");
    function(inputs, &[out])
        .mode(mode)
        .build()
        .unwrap_or_else(|e| panic!("compile: {e}"))
}

fn main() {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("interpreter vs plain Rust loop, {N} elements, best of {REPS}, {threads} cores");
    println!(
        "{:<44} {:>12} {:>12} {:>8}",
        "workload", "interp", "plain loop", "ratio"
    );
    let xs: Vec<f64> = (0..N).map(|i| (i as f64 * 1e-6).sin()).collect();
    let ys: Vec<f64> = (0..N).map(|i| (i as f64 * 3e-7).cos()).collect();
    let xt = Tensor::from_slice(&xs, &[N]).expect("tensor");
    let yt = Tensor::from_slice(&ys, &[N]).expect("tensor");
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);

    let add = compile(&[x.clone(), y.clone()], &x + &y);
    let t_i = best(REPS, || {
        black_box(add.call(&[xt.clone(), yt.clone()]).expect("call"));
    });
    let t_p = best(REPS, || {
        let out: Vec<f64> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
        black_box(out);
    });
    row("x + y", t_i, t_p);

    let expr = (-(&x * &x)).exp() * y.sin() + (&x * &y).abs().log1p();
    let fused = compile(&[x.clone(), y.clone()], expr);
    let t_i = best(REPS, || {
        black_box(fused.call(&[xt.clone(), yt.clone()]).expect("call"));
    });
    let t_p = best(REPS, || {
        let out: Vec<f64> = xs
            .iter()
            .zip(&ys)
            .map(|(a, b)| (-(a * a)).exp() * b.sin() + (a * b).abs().ln_1p())
            .collect();
        black_box(out);
    });
    row("exp(-x²)·sin(y)+log1p(|xy|) (unfused)", t_i, t_p);

    let sum = compile(std::slice::from_ref(&x), x.sum(None));
    let t_i = best(REPS, || {
        black_box(sum.call(std::slice::from_ref(&xt)).expect("call"));
    });
    let t_p = best(REPS, || {
        let mut acc = [0.0f64; 4];
        for c in xs.chunks_exact(4) {
            for k in 0..4 {
                acc[k] += c[k];
            }
        }
        black_box(acc.iter().sum::<f64>());
    });
    row("sum(x)", t_i, t_p);

    let m = matrix("m", DType::F64);
    let mt = xt.reshape(&[1000, N / 1000]).expect("reshape");
    let rows = compile(std::slice::from_ref(&m), m.sum(Some(&[1])));
    let t_i = best(REPS, || {
        black_box(rows.call(std::slice::from_ref(&mt)).expect("call"));
    });
    let t_p = best(REPS, || {
        let out: Vec<f64> = xs.chunks_exact(N / 1000).map(|r| r.iter().sum()).collect();
        black_box(out);
    });
    row("sum(m, axis=1), m 1000×10000", t_i, t_p);

    let cols = compile(std::slice::from_ref(&m), m.sum(Some(&[0])));
    let t_i = best(REPS, || {
        black_box(cols.call(std::slice::from_ref(&mt)).expect("call"));
    });
    let t_p = best(REPS, || {
        let mut out = vec![0.0f64; N / 1000];
        for r in xs.chunks_exact(N / 1000) {
            for (o, v) in out.iter_mut().zip(r) {
                *o += v;
            }
        }
        black_box(out);
    });
    row("sum(m, axis=0), m 1000×10000", t_i, t_p);

    let mx = compile(
        std::slice::from_ref(&x),
        ops::max(&x, None, false).expect("max"),
    );
    let t_i = best(REPS, || {
        black_box(mx.call(std::slice::from_ref(&xt)).expect("call"));
    });
    let t_p = best(REPS, || {
        black_box(xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    });
    row("max(x)", t_i, t_p);
}
