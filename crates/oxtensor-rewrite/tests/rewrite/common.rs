//! Shared helpers: building inputs, running a pipeline or one rule set, evaluating graphs with
//! the interpreter, and comparing values.

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, PrintOptions, TensorType, Var, debugprint};
use oxtensor_rewrite::{Limits, Optimizer, PassStats, RewriteReport, Rule, RuleSet, apply_rules};
use oxtensor_runtime::{Backend, Interpreter};

/// A float64 input of the given static shape.
pub fn input(name: &str, shape: &[Option<usize>]) -> Var {
    Var::input(Some(name), TensorType::new(DType::F64, shape))
}

/// A float64 vector input of unknown length.
pub fn vector(name: &str) -> Var {
    input(name, &[None])
}

/// A float64 matrix input of unknown shape.
pub fn matrix(name: &str) -> Var {
    input(name, &[None, None])
}

/// Rewrites `outputs` with an optimizer (the full pipeline).
pub fn optimize(outputs: &[Var], optimizer: &Optimizer) -> (Vec<Var>, RewriteReport) {
    oxtensor_rewrite::rewrite_outputs(outputs, optimizer).unwrap_or_else(|e| panic!("{e}"))
}

/// Rewrites `outputs` with `FAST_RUN`; returns the single output.
pub fn fast_run(out: &Var) -> Var {
    optimize(std::slice::from_ref(out), &Optimizer::FAST_RUN).0[0].clone()
}

/// Rewrites with the given rule sets only (in order), to a fixpoint.
pub fn with_rules(out: &Var, sets: &[RuleSet]) -> (Var, PassStats) {
    let rules: Vec<&Rule> = sets.iter().flat_map(|s| s.rules.iter()).collect();
    let (outs, stats) = apply_rules("test", std::slice::from_ref(out), &rules, &Limits::DEFAULT)
        .unwrap_or_else(|e| panic!("{e}"));
    (outs[0].clone(), stats)
}

/// `debugprint` of one variable.
pub fn show(v: &Var) -> String {
    debugprint(std::slice::from_ref(v), PrintOptions::default())
}

/// Asserts that `got` is the same variable as `want`, printing both graphs otherwise.
#[track_caller]
pub fn assert_same(got: &Var, want: &Var) {
    assert!(
        got == want,
        "rewritten graph:\n{}expected:\n{}",
        show(got),
        show(want)
    );
}

/// Evaluates `outputs` on `args` (one per input) with the interpreter.
pub fn eval(inputs: &[Var], outputs: &[Var], args: &[Tensor]) -> Vec<Tensor> {
    let graph = FunctionGraph::new(inputs.to_vec(), outputs.to_vec()).expect("function graph");
    let exec = Interpreter.compile(&graph).expect("compile");
    exec.run(args.to_vec())
        .unwrap_or_else(|e| panic!("run: {e}"))
}

/// Evaluates one output as `f64`s.
pub fn eval1(inputs: &[Var], out: &Var, args: &[Tensor]) -> Vec<f64> {
    eval(inputs, std::slice::from_ref(out), args)[0].to_vec_as::<f64>()
}

/// A deterministic pseudo-random f64 vector in `[lo, hi)` (xorshift; `seed` picks the stream).
pub fn random(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// A tensor of the given shape with random values in `[lo, hi)`.
pub fn random_tensor(shape: &[usize], lo: f64, hi: f64, seed: u64) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_slice(&random(n, lo, hi, seed), shape).expect("tensor")
}

/// Asserts elementwise closeness (relative and absolute tolerance; NaNs must match NaNs).
#[track_caller]
pub fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "lengths differ: {got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= tol * (1.0 + w.abs());
        assert!(
            ok,
            "element {i}: got {g}, want {w}\n got {got:?}\nwant {want:?}"
        );
    }
}

/// Checks that `before` and `after` give the same values (within `tol`) on random arguments
/// (one tensor per input, drawn in `[lo, hi)` with the given shapes).
#[track_caller]
pub fn assert_same_values(
    inputs: &[Var],
    before: &Var,
    after: &Var,
    shapes: &[&[usize]],
    (lo, hi): (f64, f64),
    tol: f64,
) {
    for seed in 1..4 {
        let args: Vec<Tensor> = shapes
            .iter()
            .enumerate()
            .map(|(k, s)| random_tensor(s, lo, hi, seed * 31 + k as u64).cast(inputs[k].dtype()))
            .collect();
        let a = eval1(inputs, before, &args);
        let b = eval1(inputs, after, &args);
        assert_close(&b, &a, tol);
    }
}
