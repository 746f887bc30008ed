//! The linear-algebra rules, and the einsum rule: expected graphs and equal values on random
//! (diagonally dominant) matrices.

use crate::common::*;
use oxtensor_graph::build::{self as b, linalg as la};
use oxtensor_graph::{AssumeA, Var};
use oxtensor_rewrite::rules::{EINSUM, FOLD, LINALG, USELESS};

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

/// `eye(3)` in float64.
fn eye3() -> Var {
    let three = Var::int_constant(3);
    b::eye(
        &three,
        &three,
        &Var::int_constant(0),
        oxtensor_data::DType::F64,
    )
    .unwrap()
}

#[test]
fn det_of_a_triangular_matrix_is_the_product_of_its_diagonal() {
    let m = matrix("m");
    let diag_prod =
        |x: &Var| linalg(&b::prod(&la::diagonal(x).unwrap(), Some(&[-1]), false).unwrap());
    let lower = la::tril(&m, 0).unwrap();
    assert_same(&linalg(&la::det(&lower).unwrap()), &diag_prod(&m));
    assert_same(
        &linalg(&la::det(&la::triu(&m, 0).unwrap()).unwrap()),
        &diag_prod(&m),
    );
    let l = la::cholesky(&m, true, true).unwrap();
    assert_same(&linalg(&la::det(&l).unwrap()), &diag_prod(&l));
    let lt = la::matrix_transpose(&l).unwrap();
    assert_same(
        &linalg(&la::det(&lt).unwrap()),
        &diag_prod(&la::matrix_transpose(&l).unwrap()),
    );
    for t in [lower, la::triu(&m, 0).unwrap(), lt] {
        rewrites_to_same_values(std::slice::from_ref(&m), &la::det(&t).unwrap(), &[&[3, 3]]);
    }
    let l = la::cholesky(&spd(&m), true, true).unwrap();
    rewrites_to_same_values(std::slice::from_ref(&m), &la::det(&l).unwrap(), &[&[3, 3]]);
}

#[test]
fn inv_and_solve_of_a_triangular_matrix_are_triangular_solves() {
    let (m, y) = (matrix("m"), matrix("y"));
    let lower = la::tril(&dominant(&m), 0).unwrap();
    let solve = |a: &Var, transposed: bool| {
        la::solve(a, &y, AssumeA::General, false, transposed, Some(2)).unwrap()
    };
    assert_same(
        &linalg(&solve(&la::tril(&m, 0).unwrap(), true)),
        &la::solve_triangular(&m, &y, true, true, false, Some(2)).unwrap(),
    );
    let upper = la::triu(&dominant(&m), 0).unwrap();
    let factor = la::cholesky(&spd(&m), false, true).unwrap();
    for t in [lower, upper, factor.clone()] {
        rewrites_to_same_values(std::slice::from_ref(&m), &la::inv(&t).unwrap(), &[&[3, 3]]);
        for transposed in [false, true] {
            rewrites_to_same_values(
                &[m.clone(), y.clone()],
                &solve(&t, transposed),
                &[&[3, 3], &[3, 2]],
            );
        }
    }
    // det(inv(U)) for a Cholesky factor U: the inverse is a triangular solve, itself triangular.
    let det_inv = la::det(&la::inv(&factor).unwrap()).unwrap();
    let after = linalg(&det_inv);
    assert!(!show(&after).contains("Det"), "{}", show(&after));
    rewrites_to_same_values(std::slice::from_ref(&m), &det_inv, &[&[3, 3]]);
}

#[test]
fn identity_like_matrices_drop_out() {
    let (x, y, v) = (matrix("x"), matrix("y"), vector("v"));
    let eye = eye3();
    let y32 = input("y32", &[Some(3), Some(2)]);
    let solve = la::solve(&eye, &y32, AssumeA::General, false, false, Some(2)).unwrap();
    assert_same(&linalg(&solve), &y32);
    let solve = la::solve(&eye, &y, AssumeA::General, false, false, Some(2)).unwrap();
    rewrites_to_same_values(std::slice::from_ref(&y), &solve, &[&[3, 2]]);
    // Constant folding turns eye(3) into a constant identity matrix, still recognised.
    assert_same(&linalg(&la::inv(&eye).unwrap()), &linalg(&eye));
    assert_same(
        &linalg(&la::cholesky(&eye, true, false).unwrap()),
        &linalg(&eye),
    );
    // eye * x is diagonal for a matrix or vector x.
    for (ins, scaled, small) in [
        (
            vec![x.clone(), y.clone()],
            b::mul(&eye, &x).unwrap(),
            &[3usize, 3][..],
        ),
        (
            vec![v.clone(), y.clone()],
            b::mul(&v, &eye).unwrap(),
            &[3][..],
        ),
    ] {
        rewrites_to_same_values(&ins[..1], &la::det(&scaled).unwrap(), &[small]);
        rewrites_to_same_values(&ins[..1], &la::inv(&scaled).unwrap(), &[small]);
        let solve = la::solve(&scaled, &y, AssumeA::General, false, false, Some(2)).unwrap();
        rewrites_to_same_values(&ins, &solve, &[small, &[3, 2]]);
    }
}

#[test]
fn cholesky_of_a_diagonal_matrix_is_its_square_root() {
    let (v, s) = (vector("v"), input("s", &[]));
    let d = la::diag_embed(&v).unwrap();
    let si = b::mul(&eye3(), &s).unwrap();
    for (x, m, shape) in [(&v, &d, &[3usize][..]), (&s, &si, &[][..])] {
        let before = la::cholesky(m, true, true).unwrap();
        let after = linalg(&before);
        assert!(!show(&after).contains("Cholesky"), "{}", show(&after));
        let ins = std::slice::from_ref(x);
        // Positive entries give the root, any non-positive one NaNs everywhere, as the kernel.
        assert_same_values(ins, &before, &after, &[shape], (0.5, 2.0), 1e-12);
        assert_same_values(ins, &before, &after, &[shape], (-2.0, 0.5), 1e-12);
    }
    // A raising Cholesky keeps its error for a non-positive diagonal.
    let raising = la::cholesky(&d, true, false).unwrap();
    assert!(show(&linalg(&raising)).contains("Cholesky"));
}

#[test]
fn log_det_of_a_cholesky_factor_is_a_sum_of_logs() {
    let m = matrix("m");
    let l = la::cholesky(&m, true, true).unwrap();
    let want = linalg(&b::sum(&la::diagonal(&l).unwrap().log(), Some(&[-1]), false).unwrap());
    assert_same(&linalg(&la::det(&l).unwrap().log()), &want);
    let l = la::cholesky(&spd(&m), true, true).unwrap();
    rewrites_to_same_values(&[m], &la::det(&l).unwrap().log(), &[&[3, 3]]);
}

#[test]
fn eigenvalues_and_singular_values_alone_skip_the_vectors() {
    let m = matrix("m");
    let (w, v) = la::eigh(&m, true).unwrap();
    assert_same(&linalg(&w), &la::eigvalsh(&m, true).unwrap());
    let s = la::svd(&m, true, true).unwrap()[1].clone();
    assert_same(&linalg(&s), &la::svd(&m, false, false).unwrap()[0]);
    rewrites_to_same_values(std::slice::from_ref(&m), &s, &[&[3, 4]]);
    // With the eigenvectors read too, the decomposition stays whole.
    let both = b::add(
        &b::sum(&v, None, false).unwrap(),
        &b::sum(&w, None, false).unwrap(),
    )
    .unwrap();
    assert!(!show(&linalg(&both)).contains("Eigvalsh"));
}

/// `ij,jk,kl->il` built on three matrices of unknown shape (one einsum node), and the same
/// node rebuilt on inputs of static shapes `(2, 6), (6, 6), (6, 6)`, with those inputs.
fn unplanned_einsum() -> (Var, Var, Vec<Var>) {
    let spec = "ij,jk,kl->il";
    let unknown = [matrix("a"), matrix("b"), matrix("c")];
    let e = b::einsum(spec, &unknown).unwrap();
    let fixed: Vec<Var> = [("a", 2), ("b", 6), ("c", 6)]
        .into_iter()
        .map(|(name, rows)| input(name, &[Some(rows), Some(6)]))
        .collect();
    let map = unknown.iter().cloned().zip(fixed.iter().cloned()).collect();
    let replaced = oxtensor_graph::clone_replace(std::slice::from_ref(&e), &map).unwrap();
    (e, replaced[0].clone(), fixed)
}

// einsum{s}(x…) with every shape static → einsum(s, x…) planned and inlined
#[test]
fn einsum_replan() {
    let (_, replaced, fixed) = unplanned_einsum();
    let want = b::einsum("ij,jk,kl->il", &fixed).unwrap();
    assert_same(&with_rules(&replaced, &[EINSUM]).0, &want);
    let ins = fixed.clone();
    assert_same_values(
        &ins,
        &replaced,
        &want,
        &[&[2, 6], &[6, 6], &[6, 6]],
        (-1.0, 1.0),
        1e-12,
    );
}

// einsum{s}(x…) with an unknown shape stays
#[test]
fn einsum_replan_waits_for_static_shapes() {
    let (e, _, _) = unplanned_einsum();
    assert_same(&with_rules(&e, &[EINSUM]).0, &e);
}
