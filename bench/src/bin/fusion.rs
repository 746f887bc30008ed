//! Elementwise fusion in the interpreter: the W2 expression `exp(-x²)·sin(y) + log1p(|x·y|)` on
//! two float64 vectors of 10⁷ elements, compiled with `FAST_RUN` (one fused Composite node, one
//! blocked pass over memory) and with `FAST_RUN` without the `fusion` pass (one full-size
//! temporary per elementwise node), side by side. Prints the best of several runs and the ratio.
//!
//! Then reductions of a Composite, at the kernel level: the two passes the interpreter runs
//! unfused (the Composite's output materialized, then reduced) against the one-pass kernel
//! `reduce_of_elemwise`, for `sum(exp(-x²)·sin(y))` over 10⁷ float64 elements and the
//! logsumexp-like row sums `sum(exp(x - c), axis=1)` of a 2000×5000 float64 matrix.
//!
//! `cargo run --release -p oxtensor-bench --bin fusion [n]`

use oxtensor::oxtensor_graph::{Axes, FrozenGraph, Op, ReduceOp};
use oxtensor::oxtensor_runtime::kernels::{KernelCtx, eval, reduce_of_elemwise};
use oxtensor::{DType, Function, Mode, Tensor, TensorType, Var, function, vector};
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

    println!("Reduce of a Composite, kernels, best of {REPS}:");
    let scalar = || Var::input(None, TensorType::scalar(DType::F64));
    let (a, b) = (scalar(), scalar());
    let g = FrozenGraph::freeze(&[a.clone(), b.clone()], &[(-(&a * &a)).exp() * b.sin()])
        .unwrap_or_else(|e| panic!("{e}"));
    let vec_type = TensorType::of_rank(DType::F64, 1);
    reduce_row(
        &format!("sum(exp(-x²)·sin(y)), {n} elements"),
        &Op::Composite(g),
        &args,
        &[vec_type.clone(), vec_type],
        &[],
    );
    let (rows, cols) = (2000, 5000);
    let (a, b) = (scalar(), scalar());
    let g = FrozenGraph::freeze(&[a.clone(), b.clone()], &[(&a - &b).exp()])
        .unwrap_or_else(|e| panic!("{e}"));
    let ms: Vec<f64> = (0..rows * cols)
        .map(|i| ((i % 1013) as f64 - 506.0) * 0.01)
        .collect();
    let cs: Vec<f64> = (0..rows).map(|i| (i % 7) as f64 * 0.5).collect();
    let matrix_args = [
        Tensor::from_slice(&ms, &[rows, cols]).unwrap_or_else(|e| panic!("{e}")),
        Tensor::from_slice(&cs, &[rows, 1]).unwrap_or_else(|e| panic!("{e}")),
    ];
    reduce_row(
        &format!("sum(exp(x - c), axis=1), {rows}×{cols}"),
        &Op::Composite(g),
        &matrix_args,
        &[
            TensorType::of_rank(DType::F64, 2),
            TensorType::new(DType::F64, &[None, Some(1)]),
        ],
        &[1],
    );
}

/// Times the sum over `axes` of the single-output `producer` on `args` (of static types
/// `types`) in two passes and in one, checks they agree bit for bit, and prints both.
fn reduce_row(name: &str, producer: &Op, args: &[Tensor], types: &[TensorType], axes: &[usize]) {
    let refs: Vec<&Tensor> = args.iter().collect();
    let out_type = [TensorType::of_rank(DType::F64, args[0].ndim())];
    let ctx = KernelCtx {
        input_types: types,
        output_types: &out_type,
    };
    let reduce = Op::Reduce {
        op: ReduceOp::Sum,
        axes: Axes::from_slice(axes),
    };
    let red_types = (
        [TensorType::of_rank(DType::F64, args[0].ndim())],
        [TensorType::of_rank(DType::F64, args[0].ndim() - axes.len())],
    );
    let red_ctx = KernelCtx {
        input_types: &red_types.0,
        output_types: &red_types.1,
    };
    let two_pass = || {
        let full = eval(producer, &refs, &ctx).unwrap_or_else(|e| panic!("{e}"));
        eval(&reduce, &[&full[0]], &red_ctx).unwrap_or_else(|e| panic!("{e}"))
    };
    let one_pass = || {
        reduce_of_elemwise(producer, 0, ReduceOp::Sum, axes, &refs, &ctx)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert!(
        two_pass()[0].bits_eq(&one_pass()),
        "{name}: one and two passes differ"
    );
    let t2 = oxtensor_bench::best(REPS, || {
        std::hint::black_box(two_pass());
    });
    let t1 = oxtensor_bench::best(REPS, || {
        std::hint::black_box(one_pass());
    });
    println!("  {name}");
    println!(
        "    two passes (Composite, then Reduce)  {:8.2} ms\n    one pass (reduce_of_elemwise)        {:8.2} ms\n    two / one = {:.2}x",
        t2 * 1e3,
        t1 * 1e3,
        t2 / t1
    );
}
