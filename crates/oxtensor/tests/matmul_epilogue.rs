//! Epilogue fusion: an elementwise program that is the only reader of a matrix product (the
//! bias and activation of `relu(x@w + b)`) becomes one `FusedMatMul` node, in both backends,
//! with the values of the unfused graph.

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::oxtensor_graph::Op;
use oxtensor::{DType, Function, Mode, Tensor, Var, matrix, tensor};
use oxtensor::{ops, vector};
use oxtensor_testkit::{Tol, assert_close};

use crate::fusion::{compile, ops as ops_of};
use crate::random_graphs::pseudo_random;

fn fused_count(f: &Function) -> usize {
    ops_of(f)
        .iter()
        .filter(|o| matches!(o, Op::FusedMatMul { .. }))
        .count()
}

fn relu(v: &Var) -> Var {
    ops::maximum(v, &ops::weak_constant(0.0.into(), v.dtype())).unwrap()
}

/// A random `rows`×`cols` tensor of `dtype` from `seed`.
fn random(rows: usize, cols: usize, seed: u64, dtype: DType) -> Tensor {
    Tensor::from_slice(&pseudo_random(rows * cols, seed), &[rows, cols])
        .unwrap()
        .cast(dtype)
}

/// The interpreter with every rewrite, fusion included.
fn interp() -> Mode {
    Mode::new("interp", "fast_run").expect("mode")
}

#[test]
fn bias_and_activation_fuse_into_the_product() {
    let x = matrix("x", DType::F64);
    let w1 = matrix("w1", DType::F64);
    let b1 = vector("b1", DType::F64);
    let w2 = matrix("w2", DType::F64);
    let out = relu(&(&x.matmul(&w1) + &b1)).matmul(&w2);
    let inputs = [x, w1, b1, w2];
    for mode in [Mode::FAST_RUN, interp()] {
        let f = compile(&inputs, std::slice::from_ref(&out), mode);
        let ops = ops_of(&f);
        assert_eq!(fused_count(&f), 1, "{}", f.dprint(Default::default()));
        // The second product has no epilogue: it stays a plain product, and no elementwise
        // node remains.
        assert!(ops.iter().any(|o| matches!(o, Op::MatMul)));
        assert!(
            !ops.iter()
                .any(|o| matches!(o, Op::Composite(_) | Op::Elemwise(_))),
            "{}",
            f.dprint(Default::default())
        );
        let text = f.dprint(Default::default());
        assert!(text.contains("MatMul{then="), "{text}");
    }
    let off = compile(
        &inputs,
        std::slice::from_ref(&out),
        Mode::FAST_RUN.excluding(&["fusion"]),
    );
    assert_eq!(fused_count(&off), 0);
    let plain = compile(&inputs, std::slice::from_ref(&out), Mode::FAST_COMPILE);
    assert_eq!(fused_count(&plain), 0);
}

#[test]
fn a_product_read_elsewhere_or_returned_is_not_fused() {
    let x = matrix("x", DType::F64);
    let w = matrix("w", DType::F64);
    let b = vector("b", DType::F64);
    let p = x.matmul(&w);
    let inputs = [x.clone(), w.clone(), b.clone()];
    // The product is an output too.
    let f = compile(&inputs, &[relu(&(&p + &b)), p.clone()], Mode::FAST_RUN);
    assert_eq!(fused_count(&f), 0, "{}", f.dprint(Default::default()));
    // The product has a second reader that is not elementwise.
    let s = p.sum(None);
    let f = compile(&inputs, &[relu(&(&p + &b)), s], Mode::FAST_RUN);
    assert_eq!(fused_count(&f), 0, "{}", f.dprint(Default::default()));
    // A matrix·vector product is not a panel product.
    let f = compile(&inputs, &[relu(&(&x.matmul(&b) + 1.0))], Mode::FAST_RUN);
    assert_eq!(fused_count(&f), 0, "{}", f.dprint(Default::default()));
    // Integer products stay unfused.
    let (xi, wi) = (matrix("xi", DType::I64), matrix("wi", DType::I64));
    let f = compile(
        &[xi.clone(), wi.clone()],
        &[&xi.matmul(&wi) + 1i64],
        Mode::FAST_RUN,
    );
    assert_eq!(fused_count(&f), 0, "{}", f.dprint(Default::default()));
}

/// One epilogue case: a graph over `x` (m×k), `w` (k×n), `row` (a bias along rows, shape
/// (n,)), `col` (a bias along columns, shape (m, 1)).
type Case = fn(&Var, &Var, &Var, &Var) -> Var;

/// The epilogues tested: relu of a row bias, tanh of a column bias, a bias alone, a scale, and
/// both biases around a relu.
const CASES: [(&str, Case); 5] = [
    ("relu(x@w + row)", |x, w, row, _| {
        relu(&(&x.matmul(w) + row))
    }),
    ("tanh(x@w + col)", |x, w, _, col| {
        (&x.matmul(w) + col).tanh()
    }),
    ("x@w + row", |x, w, row, _| &x.matmul(w) + row),
    ("2.5·(x@w)", |x, w, _, _| &x.matmul(w) * 2.5),
    ("relu(x@w + row)/2 + col", |x, w, row, col| {
        &(relu(&(&x.matmul(w) + row)) * 0.5) + col
    }),
];

/// The tolerance of a fused product against an unfused one: the sums may be accumulated in
/// another order (panels of rows against the whole product), and `tanh` may round
/// differently between a vector and a scalar loop. In float32 a reordered sum of k terms of
/// magnitude ~1 differs by ~k·2⁻²⁴ of the largest term.
fn tol(dtype: DType) -> Tol {
    match dtype {
        DType::F32 => Tol::MATH_LIBRARIES.or_scaled(1e-5),
        _ => Tol::MATH_LIBRARIES.or_scaled(1e-12),
    }
}

/// Compiles `case` fused (native and interpreter) and unfused, and compares them on the
/// arguments; `x_arg` may be any view of an m×k matrix.
fn check_case(
    name: &str,
    case: Case,
    dtype: DType,
    (m, k, n): (usize, usize, usize),
    x_arg: Tensor,
) {
    let x = matrix("x", dtype);
    let w = matrix("w", dtype);
    let row = vector("row", dtype);
    let col = tensor("col", dtype, &[None, Some(1)]);
    let out = case(&x, &w, &row, &col);
    let inputs = [x, w, row, col];
    let args = [
        x_arg,
        random(k, n, 2, dtype),
        Tensor::from_slice(&pseudo_random(n, 3), &[n])
            .unwrap()
            .cast(dtype),
        random(m, 1, 4, dtype),
    ];
    let reference = compile(&inputs, std::slice::from_ref(&out), Mode::FAST_COMPILE)
        .call(&args)
        .unwrap();
    for (label, mode) in [("native", Mode::FAST_RUN), ("interpreter", interp())] {
        let f = compile(&inputs, std::slice::from_ref(&out), mode);
        assert_eq!(
            fused_count(&f),
            1,
            "{name}: {}",
            f.dprint(Default::default())
        );
        let got = f.call(&args).unwrap();
        let what = format!("{name}, {label}, {dtype}, {m}×{k}·{k}×{n}");
        assert_close(&what, &got[0], &reference[0], tol(dtype));
    }
}

#[test]
fn fused_values_match_the_unfused_graph() {
    for dtype in [DType::F64, DType::F32] {
        for (i, (name, case)) in CASES.iter().enumerate() {
            // Small, odd shapes: one panel.
            let shapes = [(7, 5, 3), (1, 9, 4), (33, 17, 12)];
            for (j, &(m, k, n)) in shapes.iter().enumerate() {
                let x = random(m, k, 10 + (i * 3 + j) as u64, dtype);
                check_case(name, *case, dtype, (m, k, n), x);
            }
        }
        // More than one panel of the epilogue (2^16 elements), run in parallel.
        let (m, k, n) = (600, 8, 130);
        check_case(
            CASES[0].0,
            CASES[0].1,
            dtype,
            (m, k, n),
            random(m, k, 7, dtype),
        );
        check_case(
            CASES[1].0,
            CASES[1].1,
            dtype,
            (m, k, n),
            random(m, k, 8, dtype),
        );
    }
}

#[test]
fn fused_values_on_strided_and_empty_operands() {
    for dtype in [DType::F64, DType::F32] {
        // x is every other column of a wider matrix, rows reversed: strides (-2k, 2).
        let (m, k, n) = (140, 24, 30);
        let wide = random(m, 2 * k, 21, dtype);
        let strided = wide
            .view(&[m, k], &[-(2 * k as isize), 2], (m - 1) * 2 * k)
            .unwrap();
        // x transposed in memory: a k×m matrix read with strides (1, m).
        let transposed = random(k, m, 22, dtype)
            .view(&[m, k], &[1, m as isize], 0)
            .unwrap();
        for (name, case) in &CASES {
            check_case(name, *case, dtype, (m, k, n), strided.clone());
            check_case(name, *case, dtype, (m, k, n), transposed.clone());
        }
        // k = 0: the product is zeros and the epilogue still applies (relu of the bias).
        check_case(
            CASES[0].0,
            CASES[0].1,
            dtype,
            (4, 0, 3),
            random(4, 0, 1, dtype),
        );
    }
}

#[test]
fn gradients_through_a_fused_product_verify() {
    // The gradient graph itself holds products whose only reader is elementwise.
    verify_grad(
        |v| {
            let h = relu(&(&v[0].matmul(&v[1]) + &v[2])).tanh();
            Ok(h.matmul(&v[3]).sum(None))
        },
        &[
            random(5, 4, 31, DType::F64),
            random(4, 6, 32, DType::F64),
            Tensor::from_slice(&pseudo_random(6, 33), &[6]).unwrap(),
            random(6, 2, 34, DType::F64),
        ],
        &VerifyGradOptions::default(),
    )
    .unwrap();
}
