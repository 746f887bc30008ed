//! Elementwise fusion through the facade: `FAST_RUN` compiles elementwise graphs to Composite
//! nodes whose values equal the unfused (`FAST_COMPILE`) function's, for every layout.

use oxtensor::oxtensor_graph::{FunctionGraph, Op, ScalarOp, toposort};
use oxtensor::{DType, Function, Mode, OnUnusedInput, Tensor, Var, function, matrix, tensor};
use proptest::prelude::*;

/// exp(-x²)·sin(y) + log1p(|x·y|)
fn w2(x: &Var, y: &Var) -> Var {
    (-(x * x)).exp() * y.sin() + (x * y).abs().log1p()
}

fn compile(inputs: &[Var], outputs: &[Var], mode: Mode) -> Function {
    function(inputs, outputs)
        .mode(mode)
        .on_unused_input(OnUnusedInput::Ignore)
        .build()
        .unwrap()
}

/// The apply nodes of a compiled function's graph.
fn ops(f: &Function) -> Vec<Op> {
    f.graph()
        .toposort()
        .iter()
        .filter_map(|n| n.op().cloned())
        .collect()
}

fn pseudo_random(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            4.0 * ((s >> 11) as f64 / (1u64 << 53) as f64) - 2.0
        })
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

#[test]
fn reduction_of_a_fused_expression_stays_a_reduce_of_a_composite() {
    let x = matrix("x", DType::F64);
    let y = matrix("y", DType::F64);
    let s = w2(&x, &y).sum(None);
    let args = [
        Tensor::from_slice(&pseudo_random(12, 6), &[3, 4]).unwrap(),
        Tensor::from_slice(&pseudo_random(12, 7), &[3, 4]).unwrap(),
    ];
    let f = check(&[x, y], &[s], &args);
    let ops = ops(&f);
    assert_eq!(ops.len(), 2);
    assert!(matches!(ops[0], Op::Composite(_)));
    assert!(matches!(ops[1], Op::Reduce { .. }));
}

/// A random elementwise expression over `x` and `y` (vectors), `depth` levels deep.
fn expr(x: &Var, y: &Var, codes: &[u8]) -> Var {
    let mut stack: Vec<Var> = vec![x.clone(), y.clone()];
    for &c in codes {
        let a = stack[stack.len() - 1].clone();
        let b = stack[(c as usize / 8) % stack.len()].clone();
        let v = match c % 8 {
            0 => &a + &b,
            1 => &a * &b,
            2 => &a - &b,
            3 => a.sin(),
            4 => a.abs().log1p(),
            5 => (-(&a * &a)).exp(),
            6 => a.tanh() * 2.0,
            _ => oxtensor::ops::maximum(&a, &b).unwrap(),
        };
        stack.push(v);
    }
    stack.pop().unwrap_or_else(|| x.clone())
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
