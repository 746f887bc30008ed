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
