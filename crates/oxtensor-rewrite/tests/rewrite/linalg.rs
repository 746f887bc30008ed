//! The linear-algebra rules: expected graphs and equal values on random (diagonally dominant)
//! matrices.

use crate::common::*;
use oxtensor_graph::build::{self as b, linalg as la};
use oxtensor_graph::{AssumeA, Var};
use oxtensor_rewrite::rules::{FOLD, LINALG, USELESS};

fn linalg(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS, LINALG]).0
}

/// `m + 4 I` for a 3×3 input `m`, so random values give a well-conditioned matrix.
fn dominant(m: &Var) -> Var {
    let three = Var::int_constant(3);
    let eye = b::eye(&three, &three, &Var::int_constant(0), m.dtype()).unwrap();
    b::add(
        m,
        &b::with_scalar(oxtensor_graph::ScalarOp::Mul, &eye, 4.0, false).unwrap(),
    )
    .unwrap()
}

#[test]
fn inv_matmul_to_solve() {
    let (m, y) = (matrix("m"), matrix("y"));
    let plain = b::matmul(&la::inv(&m).unwrap(), &y).unwrap();
    let want = la::solve(&m, &y, AssumeA::General, false, false, Some(2)).unwrap();
    assert_same(&linalg(&plain), &want);
    let before = b::matmul(&la::inv(&dominant(&m)).unwrap(), &y).unwrap();
    let ins = [m, y];
    assert_same_values(
        &ins,
        &before,
        &linalg(&before),
        &[&[3, 3], &[3, 2]],
        (-1.0, 1.0),
        1e-12,
    );
}

#[test]
fn log_det_to_slogdet_keeps_the_nan_of_a_negative_determinant() {
    let m = matrix("m");
    let before = la::det(&m).unwrap().log();
    let after = linalg(&before);
    assert_ne!(after, before);
    let ins = [m.clone()];
    assert_same_values(&ins, &before, &after, &[&[3, 3]], (-1.0, 1.0), 1e-12);
    let abs_before = la::det(&m).unwrap().abs().log();
    assert_same(&linalg(&abs_before), &la::slogdet(&m).unwrap().1);
}

/// `before` rewritten is not `before`, and computes the same values on random inputs.
fn rewrites_to_same_values(ins: &[Var], before: &Var, shapes: &[&[usize]]) {
    let after = linalg(before);
    assert_ne!(&after, before, "no rewrite of {}", show(before));
    assert_same_values(ins, before, &after, shapes, (-1.0, 1.0), 1e-10);
}

#[test]
fn trace_of_matmul_becomes_an_elementwise_sum() {
    let (x, y) = (matrix("x"), matrix("y"));
    let before = la::trace(&b::matmul(&x, &y).unwrap()).unwrap();
    let want = b::sum(
        &b::mul(&x, &la::matrix_transpose(&y).unwrap()).unwrap(),
        Some(&[-2, -1]),
        false,
    )
    .unwrap();
    assert_same(&linalg(&before), &want);
    rewrites_to_same_values(&[x, y], &before, &[&[3, 4], &[4, 3]]);
}

#[test]
fn det_inv_and_solve_of_diagonal_matrices_are_elementwise() {
    let (v, y, s) = (vector("v"), matrix("y"), input("s", &[]));
    let d = la::diag_embed(&v).unwrap();
    let three = Var::int_constant(3);
    let eye = b::eye(
        &three,
        &three,
        &Var::int_constant(0),
        oxtensor_data::DType::F64,
    )
    .unwrap();
    let si = b::mul(&eye, &s).unwrap();
    assert_same(
        &linalg(&la::det(&d).unwrap()),
        &b::prod(&v, Some(&[-1]), false).unwrap(),
    );
    for (ins, m) in [
        (vec![v.clone(), y.clone()], &d),
        (vec![s.clone(), y.clone()], &si),
    ] {
        let small: &[usize] = if ins[0] == v { &[3] } else { &[] };
        rewrites_to_same_values(&ins[..1], &la::det(m).unwrap(), &[small]);
        rewrites_to_same_values(&ins[..1], &la::inv(m).unwrap(), &[small]);
        let solve = la::solve(m, &y, AssumeA::General, false, false, Some(2)).unwrap();
        rewrites_to_same_values(&ins, &solve, &[small, &[3, 2]]);
    }
}

#[test]
fn solve_with_a_cholesky_product_becomes_cho_solve() {
    let (m, y) = (matrix("m"), matrix("y"));
    let solve_gram = |l: &Var| {
        let a = b::matmul(l, &la::matrix_transpose(l).unwrap()).unwrap();
        la::solve(&a, &y, AssumeA::General, false, false, Some(2)).unwrap()
    };
    let l = la::cholesky(&m, true, true).unwrap();
    assert_same(
        &linalg(&solve_gram(&l)),
        &la::cho_solve(&l, &y, true, Some(2)).unwrap(),
    );
    let before = solve_gram(&la::cholesky(&spd(&m), true, true).unwrap());
    rewrites_to_same_values(&[m, y.clone()], &before, &[&[3, 3], &[3, 2]]);
}

#[test]
fn cholesky_of_a_product_of_lower_factors_is_the_factor() {
    let m = matrix("m");
    let l = la::cholesky(&m, true, true).unwrap();
    let a = b::matmul(&l, &la::matrix_transpose(&l).unwrap()).unwrap();
    assert_same(&linalg(&la::cholesky(&a, true, true).unwrap()), &l);
    // An upper factor U gives Uᵀ U; and tril(x) may have negative diagonal entries.
    let u = la::cholesky(&m, false, true).unwrap();
    let a = b::matmul(&la::matrix_transpose(&u).unwrap(), &u).unwrap();
    assert_same(&linalg(&la::cholesky(&a, false, true).unwrap()), &u);
    let t = la::tril(&dominant(&m), 0).unwrap();
    let a = b::matmul(&t, &la::matrix_transpose(&t).unwrap()).unwrap();
    rewrites_to_same_values(
        std::slice::from_ref(&m),
        &la::cholesky(&a, true, true).unwrap(),
        &[&[3, 3]],
    );
    let neg = b::neg(&dominant(&m)).unwrap();
    let t = la::tril(&neg, 0).unwrap();
    let a = b::matmul(&t, &la::matrix_transpose(&t).unwrap()).unwrap();
    rewrites_to_same_values(&[m], &la::cholesky(&a, false, true).unwrap(), &[&[3, 3]]);
}

/// `m mᵀ + 3 I`: symmetric positive definite for any `m`.
fn spd(m: &Var) -> Var {
    let three = Var::int_constant(3);
    let eye = b::eye(&three, &three, &Var::int_constant(0), m.dtype()).unwrap();
    let g = b::matmul(m, &la::matrix_transpose(m).unwrap()).unwrap();
    b::add(
        &g,
        &b::with_scalar(oxtensor_graph::ScalarOp::Mul, &eye, 3.0, false).unwrap(),
    )
    .unwrap()
}
