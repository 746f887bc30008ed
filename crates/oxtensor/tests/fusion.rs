//! Elementwise fusion through the facade: `FAST_RUN` compiles elementwise graphs to Composite
//! nodes whose values equal the unfused (`FAST_COMPILE`) function's, for every layout.

use oxtensor::oxtensor_graph::{FunctionGraph, Op, ReduceOp, ScalarOp, toposort};
use oxtensor::{DType, Function, Mode, OnUnusedInput, Tensor, Var, function, matrix, tensor};
use proptest::prelude::*;
use random_graphs::{expr, pseudo_random};

use crate::random_graphs;

/// exp(-x²)·sin(y) + log1p(|x·y|)
fn w2(x: &Var, y: &Var) -> Var {
    (-(x * x)).exp() * y.sin() + (x * y).abs().log1p()
}

/// `outputs` of `inputs` compiled in `mode` (unused inputs allowed).
pub(crate) fn compile(inputs: &[Var], outputs: &[Var], mode: Mode) -> Function {
    function(inputs, outputs)
        .mode(mode)
        .on_unused_input(OnUnusedInput::Ignore)
        .build()
        .unwrap()
}

/// The apply nodes of a compiled function's graph.
pub(crate) fn ops(f: &Function) -> Vec<Op> {
    f.graph()
        .toposort()
        .iter()
        .filter_map(|n| n.op().cloned())
        .collect()
}

/// Asserts equal values (NaNs equal), bit for bit when `tol` is 0, else within `tol` relative.
#[track_caller]
fn assert_close(a: &[Tensor], b: &[Tensor], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (u, v) in a.iter().zip(b) {
        assert_eq!(u.shape(), v.shape());
        assert_eq!(u.dtype(), v.dtype());
        let (p, q) = (u.to_vec_as::<f64>(), v.to_vec_as::<f64>());
        for (x, y) in p.iter().zip(&q) {
            let close = (x - y).abs() <= tol * (1.0 + y.abs());
            assert!(
                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()) || close,
                "{x} vs {y}"
            );
        }
    }
}

/// Compiles `outputs` with FAST_RUN, and compares its values on `args` with FAST_RUN without
/// fusion (within a few ulp: the native backend's vector math may round differently from the
/// scalar path) and with FAST_COMPILE (within rounding: the other passes rewrite the
/// arithmetic).
fn check(inputs: &[Var], outputs: &[Var], args: &[Tensor]) -> Function {
    let fused = compile(inputs, outputs, Mode::FAST_RUN);
    let got = fused.call(args).unwrap();
    let unfused = compile(inputs, outputs, Mode::FAST_RUN.excluding(&["fusion"]));
    assert_close(&got, &unfused.call(args).unwrap(), 1e-14);
    let plain = compile(inputs, outputs, Mode::FAST_COMPILE);
    let tol = if got.iter().any(|t| t.dtype() == DType::F32) {
        1e-5
    } else {
        1e-12
    };
    assert_close(&got, &plain.call(args).unwrap(), tol);
    fused
}

#[test]
fn w2_compiles_to_one_composite() {
    let x = matrix("x", DType::F64);
    let y = matrix("y", DType::F64);
    let f = compile(&[x.clone(), y.clone()], &[w2(&x, &y)], Mode::FAST_RUN);
    let ops = ops(&f);
    assert_eq!(ops.len(), 1, "{}", f.dprint(Default::default()));
    assert!(matches!(ops[0], Op::Composite(_)));
    let off = compile(
        &[x.clone(), y.clone()],
        &[w2(&x, &y)],
        Mode::FAST_RUN.excluding(&["fusion"]),
    );
    assert!(self::ops(&off).len() > 3);
    assert!(
        compile(&[x.clone(), y.clone()], &[w2(&x, &y)], Mode::FAST_COMPILE)
            .graph()
            .toposort()
            .iter()
            .all(|n| !matches!(n.op(), Some(Op::Composite(_))))
    );
}

#[test]
fn w2_values_match_unfused_across_layouts_and_dtypes() {
    // Broadcasting a row against a matrix, in float64 and float32.
    for dtype in [DType::F64, DType::F32] {
        let x = matrix("x", dtype);
        let y = tensor("y", dtype, &[Some(1), None]);
        let xs = Tensor::from_slice(&pseudo_random(5000 * 3, 1), &[5000, 3])
            .unwrap()
            .cast(dtype);
        let ys = Tensor::from_slice(&pseudo_random(3, 2), &[1, 3])
            .unwrap()
            .cast(dtype);
        let f = check(&[x.clone(), y.clone()], &[w2(&x, &y)], &[xs, ys]);
        // sin(y) broadcasts along rows: it is computed once per column, outside the group.
        assert_eq!(ops(&f).len(), 2, "{}", f.dprint(Default::default()));
    }
    // Integer inputs (promoted to float inside), large enough to run in parallel.
    let x = matrix("x", DType::I64);
    let y = matrix("y", DType::I32);
    let n: usize = 300 * 400;
    let xs: Vec<i64> = (0..n as i64).map(|i| i % 7 - 3).collect();
    let ys: Vec<i32> = (0..n as i32).map(|i| i % 5 - 2).collect();
    check(
        &[x.clone(), y.clone()],
        &[w2(&x, &y)],
        &[
            Tensor::from_slice(&xs, &[300, 400]).unwrap(),
            Tensor::from_slice(&ys, &[300, 400]).unwrap(),
        ],
    );
    // Empty and non-contiguous (transposed) inputs.
    let x = matrix("x", DType::F64);
    let y = matrix("y", DType::F64);
    let empty = Tensor::zeros(DType::F64, &[0, 4]).unwrap();
    check(
        &[x.clone(), y.clone()],
        &[w2(&x, &y)],
        &[empty.clone(), empty],
    );
    let a = Tensor::from_slice(&pseudo_random(7 * 9000, 3), &[7, 9000]).unwrap();
    let b = Tensor::from_slice(&pseudo_random(7 * 9000, 4), &[9000, 7]).unwrap();
    check(
        &[x.clone(), y.clone()],
        &[w2(&x, &y)],
        &[a, b.permute(&[1, 0])],
    );
}

#[test]
fn shared_intermediates_are_not_duplicated() {
    let x = matrix("x", DType::F64);
    let e = x.exp();
    let outs = [(&e + 1.0).log(), &e * &x, e.sum(None)];
    let args = [Tensor::from_slice(&pseudo_random(6, 5), &[2, 3]).unwrap()];
    let f = check(std::slice::from_ref(&x), &outs, &args);
    let mut exps = 0;
    for op in ops(&f) {
        match op {
            Op::Elemwise(ScalarOp::Exp) => exps += 1,
            Op::Composite(g) => {
                exps += toposort(g.outputs())
                    .iter()
                    .filter(|n| n.op() == Some(&Op::Elemwise(ScalarOp::Exp)))
                    .count();
            }
            _ => {}
        }
    }
    assert_eq!(exps, 1, "{}", f.dprint(Default::default()));
}

/// The fusion pass makes a reduction of a fused expression one `FusedReduce` node, which both
/// backends run in one pass and `debugprint` shows with its program.
#[test]
fn reduction_of_a_fused_expression_becomes_one_fused_reduce() {
    let x = matrix("x", DType::F64);
    let y = matrix("y", DType::F64);
    let s = w2(&x, &y).sum(None);
    let args = [
        Tensor::from_slice(&pseudo_random(12, 6), &[3, 4]).unwrap(),
        Tensor::from_slice(&pseudo_random(12, 7), &[3, 4]).unwrap(),
    ];
    let f = check(&[x, y], &[s], &args);
    let ops = ops(&f);
    assert_eq!(ops.len(), 1, "{ops:?}");
    let Op::FusedReduce { op, axes, body } = &ops[0] else {
        panic!("expected a FusedReduce, got {:?}", ops[0]);
    };
    assert_eq!((*op, axes.as_slice()), (ReduceOp::Sum, &[0, 1][..]));
    assert_eq!(body.input_types().len(), 2);
    let printed = f.dprint(Default::default());
    assert!(printed.starts_with("Sum{axes=(0, 1), of="), "{printed}");
    assert!(printed.contains("Inner graphs:"), "{printed}");
}

/// A reduction of a value that is also read elsewhere (here, a graph output) stays a `Reduce`:
/// the value is stored anyway.
#[test]
fn a_reduction_of_a_stored_value_is_not_fused() {
    let x = matrix("x", DType::F64);
    let e = x.exp();
    let args = [Tensor::from_slice(&pseudo_random(12, 6), &[3, 4]).unwrap()];
    let f = check(
        std::slice::from_ref(&x),
        &[e.clone(), e.sum(Some(&[1]))],
        &args,
    );
    let ops = ops(&f);
    assert!(
        ops.iter().any(|o| matches!(o, Op::Reduce { .. })),
        "{ops:?}"
    );
    assert!(
        !ops.iter().any(|o| matches!(o, Op::FusedReduce { .. })),
        "{ops:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn random_expressions_match_unfused(
        codes in proptest::collection::vec(any::<u8>(), 1..12),
        n in 0usize..50,
        seed in any::<u64>(),
    ) {
        let x = tensor("x", DType::F64, &[None]);
        let y = tensor("y", DType::F64, &[None]);
        let out = expr(&x, &y, &codes);
        let args = [
            Tensor::from_slice(&pseudo_random(n, seed), &[n]).unwrap(),
            Tensor::from_slice(&pseudo_random(n, seed ^ 1), &[n]).unwrap(),
        ];
        check(&[x, y], &[out], &args);
    }
}

#[test]
fn fused_graph_is_a_function_graph_fixpoint() {
    let x = matrix("x", DType::F64);
    let y = matrix("y", DType::F64);
    let f = compile(&[x.clone(), y.clone()], &[w2(&x, &y)], Mode::FAST_RUN);
    let again = Mode::FAST_RUN.rewrite(f.graph()).unwrap().0;
    let g: &FunctionGraph = f.graph();
    assert_eq!(again.outputs(), g.outputs());
}

/// log(1 + e^t), exact in f64 at every argument.
fn softplus(t: f64) -> f64 {
    t.max(0.0) + (-t.abs()).exp().ln_1p()
}

/// The logistic function, exact in f64 at every argument.
fn logistic(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 / (1.0 + (-t).exp())
    } else {
        t.exp() / (1.0 + t.exp())
    }
}

/// `x @ w` for a row-major `n × k` matrix.
fn matvec(x: &[f64], w: &[f64]) -> Vec<f64> {
    x.chunks(w.len())
        .map(|row| row.iter().zip(w).map(|(a, b)| a * b).sum())
        .collect()
}

/// `xᵀ @ v` for a row-major `n × k` matrix.
fn matvec_t(x: &[f64], v: &[f64], k: usize) -> Vec<f64> {
    let mut out = vec![0.0; k];
    for (row, vi) in x.chunks(k).zip(v) {
        for (o, a) in out.iter_mut().zip(row) {
            *o += a * vi;
        }
    }
    out
}

#[track_caller]
fn assert_near(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.is_finite() && (g - w).abs() <= tol * (1.0 + w.abs()),
            "got {got:?}\nwant {want:?}"
        );
    }
}

#[test]
fn naive_logistic_regression_has_finite_correct_values_and_gradients() {
    // PyTensor's documentation example: p_1 = 1 / (1 + exp(-dot(x, w) - b)), on data that
    // saturates the sigmoid (|x·w| up to ~1000).
    let x = matrix("x", DType::F64);
    let y = oxtensor::vector("y", DType::F64);
    let w = oxtensor::vector("w", DType::F64);
    let b = oxtensor::scalar("b", DType::F64);
    let z = oxtensor::ops::dot(&x, &w).unwrap();
    let p1 = 1.0 / (1.0 + (-&z - &b).exp());
    let xent = -&y * p1.log() - (1.0 - &y) * (1.0 - &p1).log();
    let cost = xent.mean(None) + 0.01 * (&w * &w).sum(None);
    let g = oxtensor::grad_vars(&cost, &[w.clone(), b.clone()]).unwrap();
    let inputs = [x.clone(), y.clone(), w.clone(), b.clone()];
    let outputs = [xent, cost, g[0].clone(), g[1].clone()];
    let (n, k) = (6, 3);
    let xs: Vec<f64> = pseudo_random(n * k, 11).iter().map(|v| 300.0 * v).collect();
    let ys = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0];
    let ws = [1.5, -1.0, 2.0];
    let bs = 0.3;
    let args = [
        Tensor::from_slice(&xs, &[n, k]).unwrap(),
        Tensor::from_slice(&ys, &[n]).unwrap(),
        Tensor::from_slice(&ws, &[k]).unwrap(),
        Tensor::scalar(bs),
    ];
    // The stable references.
    let zs: Vec<f64> = matvec(&xs, &ws).iter().map(|v| v + bs).collect();
    assert!(zs.iter().any(|v| v.abs() > 700.0), "{zs:?}");
    let want_xent: Vec<f64> = zs
        .iter()
        .zip(&ys)
        .map(|(z, y)| y * softplus(-z) + (1.0 - y) * softplus(*z))
        .collect();
    let want_cost =
        want_xent.iter().sum::<f64>() / n as f64 + 0.01 * ws.iter().map(|v| v * v).sum::<f64>();
    let resid: Vec<f64> = zs
        .iter()
        .zip(&ys)
        .map(|(z, y)| (logistic(*z) - y) / n as f64)
        .collect();
    let want_gw: Vec<f64> = matvec_t(&xs, &resid, k)
        .iter()
        .zip(&ws)
        .map(|(g, w)| g + 0.02 * w)
        .collect();
    let want_gb = resid.iter().sum::<f64>();
    for mode in [Mode::FAST_RUN, Mode::new("py", "fast_run").unwrap()] {
        let f = compile(&inputs, &outputs, mode);
        let got = f.call(&args).unwrap();
        let text = f.dprint(Default::default());
        assert_near(&got[0].to_vec_as::<f64>(), &want_xent, 1e-12);
        assert_near(&got[1].to_vec_as::<f64>(), &[want_cost], 1e-12);
        assert_near(&got[2].to_vec_as::<f64>(), &want_gw, 1e-12);
        assert_near(&got[3].to_vec_as::<f64>(), &[want_gb], 1e-12);
        assert!(!text.contains("exp("), "the naive form is left:\n{text}");
    }
    // Without the stabilization the gradient is NaN.
    let naive = compile(&inputs, &outputs, Mode::FAST_RUN.excluding(&["stabilize"]));
    let got = naive.call(&args).unwrap();
    assert!(got[2].to_vec_as::<f64>().iter().any(|v| v.is_nan()));
}

#[test]
fn logistic_regression_gradient_graph_is_clean() {
    // p = sigmoid(X w); nll = -mean(y log p + (1 - y) log(1 - p)); [nll, grad(nll, w)]
    let w = oxtensor::vector("w", DType::F64);
    let x = matrix("X", DType::F64);
    let y = oxtensor::vector("y", DType::F64);
    let p = oxtensor::ops::dot(&x, &w).unwrap().sigmoid();
    let nll = -(&y * &p.log() + (1.0 - &y) * (1.0 - &p).log()).mean(None);
    let g = oxtensor::grad_vars(&nll, std::slice::from_ref(&w)).unwrap();
    let inputs = [w.clone(), x.clone(), y.clone()];
    let f = compile(&inputs, &[nll, g[0].clone()], Mode::FAST_RUN);
    let text = f.dprint(Default::default());
    let nodes = f.graph().toposort();
    let count =
        |pred: &dyn Fn(&Op) -> bool| nodes.iter().filter(|n| n.op().is_some_and(pred)).count();
    // No allocation, the two products (X·w and Xᵀ·v, a matrix-vector product), and one
    // Composite computing the per-example loss and the gradient's vector in one pass, sigmoid
    // included.
    assert_eq!(count(&|o| matches!(o, Op::Alloc { .. })), 0, "{text}");
    assert_eq!(count(&|o| matches!(o, Op::MatMul)), 2, "{text}");
    let vector_composites: Vec<_> = nodes
        .iter()
        .filter(|n| matches!(n.op(), Some(Op::Composite(_))) && n.types()[0].ndim() == 1)
        .collect();
    assert_eq!(vector_composites.len(), 1, "{text}");
    assert_eq!(vector_composites[0].types().len(), 2, "{text}");
    assert!(
        !nodes.iter().any(|n| n.types().iter().any(|t| t.ndim() == 2)
            && matches!(n.op(), Some(Op::DimShuffle { order }) if order.contains(&None))),
        "{text}"
    );
    assert!(text.contains("sigmoid"), "{text}");
    // Values: nll and Xᵀ(sigmoid(Xw) - y)/n, also at saturating |Xw| ~ 1000.
    let (n, k) = (7, 4);
    for scale in [1.0, 400.0] {
        let xs: Vec<f64> = pseudo_random(n * k, 12).iter().map(|v| scale * v).collect();
        let ys = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0];
        let ws = [0.7, -1.2, 0.4, 1.1];
        let got = f
            .call(&[
                Tensor::from_slice(&ws, &[k]).unwrap(),
                Tensor::from_slice(&xs, &[n, k]).unwrap(),
                Tensor::from_slice(&ys, &[n]).unwrap(),
            ])
            .unwrap();
        let zs = matvec(&xs, &ws);
        let nll: f64 = zs
            .iter()
            .zip(&ys)
            .map(|(z, y)| y * softplus(-z) + (1.0 - y) * softplus(*z))
            .sum::<f64>()
            / n as f64;
        let resid: Vec<f64> = zs
            .iter()
            .zip(&ys)
            .map(|(z, y)| (logistic(*z) - y) / n as f64)
            .collect();
        assert_near(&got[0].to_vec_as::<f64>(), &[nll], 1e-12);
        assert_near(&got[1].to_vec_as::<f64>(), &matvec_t(&xs, &resid, k), 1e-12);
    }
}

#[test]
fn sibling_groups_are_one_composite_with_several_outputs() {
    let x = matrix("x", DType::F64);
    let y = matrix("y", DType::F64);
    let outs = [x.exp() * &y, (x.sin() + &y).tanh()];
    let args = [
        Tensor::from_slice(&pseudo_random(40 * 30, 21), &[40, 30]).unwrap(),
        Tensor::from_slice(&pseudo_random(40 * 30, 22), &[40, 30]).unwrap(),
    ];
    let f = check(&[x, y], &outs, &args);
    let ops = ops(&f);
    assert_eq!(ops.len(), 1, "{}", f.dprint(Default::default()));
    let node = &f.graph().toposort()[0];
    assert!(matches!(node.op(), Some(Op::Composite(_))));
    assert_eq!(node.types().len(), 2);
}

/// Standard normal pseudo-random numbers (Box–Muller over [`pseudo_random`]).
fn normal(n: usize, seed: u64) -> Vec<f64> {
    let u = pseudo_random(2 * n, seed);
    u.chunks(2)
        .map(|p| {
            let (a, b) = ((p[0] + 2.0) / 4.0, (p[1] + 2.0) / 4.0);
            (-2.0 * (1.0 - a).ln()).sqrt() * (std::f64::consts::TAU * b).cos()
        })
        .collect()
}

#[test]
fn documentation_logistic_regression_trains_like_numpy_on_saturating_data() {
    // python/tests/test_pytensor_docs.py::test_logistic_regression_example, in Rust: 50 steps
    // of gradient descent with shared w, b and updates, on unscaled data (|x·w| ~ 30–100, the
    // sigmoid saturates), against NumPy's loop with the closed-form gradient.
    let (n, feats, steps) = (400, 784, 50);
    let xs = normal(n * feats, 31);
    let ys: Vec<f64> = pseudo_random(n, 32)
        .iter()
        .map(|v| if *v > 0.0 { 1.0 } else { 0.0 })
        .collect();
    let w0 = normal(feats, 33);
    let x = matrix("x", DType::F64);
    let y = oxtensor::vector("y", DType::F64);
    let w = oxtensor::shared(Tensor::from_slice(&w0, &[feats]).unwrap(), Some("w"));
    let b = oxtensor::shared(Tensor::scalar(0.0), Some("b"));
    let p1 = 1.0 / (1.0 + (-oxtensor::ops::dot(&x, &w).unwrap() - &b).exp());
    let prediction = oxtensor::ops::gt(&p1, &oxtensor::ops::scalar_constant(0.5.into())).unwrap();
    let xent = -&y * p1.log() - (1.0 - &y) * (1.0 - &p1).log();
    let cost = xent.mean(None) + 0.01 * w.powf(2.0).sum(None);
    let g = oxtensor::grad_vars(&cost, &[w.clone(), b.clone()]).unwrap();
    let train = function(&[x.clone(), y.clone()], &[prediction, xent])
        .updates(&[
            (w.clone(), &w - &(0.1 * &g[0])),
            (b.clone(), &b - &(0.1 * &g[1])),
        ])
        .build()
        .unwrap();
    let args = [
        Tensor::from_slice(&xs, &[n, feats]).unwrap(),
        Tensor::from_slice(&ys, &[n]).unwrap(),
    ];
    for _ in 0..steps {
        let out = train.call(&args).unwrap();
        assert!(out[1].to_vec_as::<f64>().iter().all(|v| v.is_finite()));
    }
    // NumPy's loop: p_1 = 1 / (1 + exp(-(x @ w) - b)); g = (p_1 - y) / n.
    let (mut wr, mut br) = (w0.clone(), 0.0);
    for _ in 0..steps {
        let g: Vec<f64> = matvec(&xs, &wr)
            .iter()
            .zip(&ys)
            .map(|(z, y)| (1.0 / (1.0 + (-z - br).exp()) - y) / n as f64)
            .collect();
        let gw = matvec_t(&xs, &g, feats);
        let gb: f64 = g.iter().sum();
        for (wi, gi) in wr.iter_mut().zip(&gw) {
            *wi -= 0.1 * (gi + 0.02 * *wi);
        }
        br -= 0.1 * gb;
    }
    let got_w = oxtensor::get_value(&w).unwrap().to_vec_as::<f64>();
    let got_b = oxtensor::get_value(&b).unwrap().item::<f64>().unwrap();
    for (g, r) in got_w.iter().zip(&wr) {
        assert!((g - r).abs() <= 1e-12 + 1e-8 * r.abs(), "{g} vs {r}");
    }
    assert!(
        (got_b - br).abs() <= 1e-12 + 1e-8 * br.abs(),
        "{got_b} vs {br}"
    );
}
