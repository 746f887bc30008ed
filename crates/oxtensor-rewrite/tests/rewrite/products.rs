//! Products and quotients (set `products`): cancelled factors and factors distributed over
//! sums: expected graphs, equal values where nothing is 0 or infinite, finite values where the
//! cancelled factor underflows, and the `nan_unsafe` exclusion.

use crate::common::*;
use oxtensor_data::Tensor;
use oxtensor_graph::{Op, ScalarOp, Var};
use oxtensor_rewrite::Optimizer;
use oxtensor_rewrite::rules::{ALGEBRA, FOLD, PRODUCTS, USELESS};

fn canon(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS, ALGEBRA, PRODUCTS]).0
}

fn mul(xs: &[Var]) -> Var {
    Var::apply1(Op::Elemwise(ScalarOp::Mul), xs).unwrap()
}

/// Random values in [0.5, 2): no factor is near 0.
fn check_values(inputs: &[Var], before: &Var, after: &Var) {
    // Six elements, or the input's static length.
    let extents: Vec<[usize; 1]> = inputs
        .iter()
        .map(|v| [v.ty().shape[0].unwrap_or(6)])
        .collect();
    let shapes: Vec<&[usize]> = extents.iter().map(|e| &e[..]).collect();
    assert_same_values(inputs, before, after, &shapes, (0.5, 2.0), 1e-12);
}

#[test]
fn common_factors_cancel() {
    let (x, y, z) = (vector("x"), vector("y"), vector("z"));
    // (x·y)/x → y
    let before = &(&x * &y) / &x;
    assert_same(&canon(&before), &y);
    check_values(&[x.clone(), y.clone()], &before, &canon(&before));
    // (x·y)/(z·x) → y/z
    let before = &(&x * &y) / &(&z * &x);
    let after = canon(&before);
    assert_same(&after, &(&y / &z));
    check_values(&[x.clone(), y.clone(), z.clone()], &before, &after);
    // (y/x)·x → y, and through a square: (x·y)/sqr(x) → y/x
    assert_same(&canon(&(&(&y / &x) * &x)), &y);
    assert_same(&canon(&(&(&x * &y) / &x.sqr())), &(&y / &x));
    // x/x would be a constant 1 without x's extents: left alone.
    let before = &x / &x;
    assert_same(&canon(&before), &before);
}

#[test]
fn cancelling_is_nan_unsafe() {
    let (x, y) = (vector("x"), vector("y"));
    let before = &(&x * &y) / &x;
    let args = [
        Tensor::from_slice(&[0.0], &[1]).unwrap(),
        Tensor::from_slice(&[3.0], &[1]).unwrap(),
    ];
    let inputs = [x.clone(), y.clone()];
    assert!(eval1(&inputs, &before, &args)[0].is_nan());
    assert_eq!(eval1(&inputs, &fast_run(&before), &args), vec![3.0]);
    let (kept, report) = optimize(
        std::slice::from_ref(&before),
        &Optimizer::FAST_RUN.excluding(&["nan_unsafe"]),
    );
    assert_eq!(report.hits("div_cancel"), 0);
    assert!(eval1(&inputs, &kept[0], &args)[0].is_nan());
}

#[test]
fn factors_distribute_over_a_sum_when_that_cancels_divisions() {
    let (a, b, x, y) = (vector("a"), vector("b"), vector("x"), vector("y"));
    // ((a/x + b/y)·x·y) → a·y + b·x
    let before = &(&(&a / &x) + &(&b / &y)) * &x * &y;
    let after = canon(&before);
    assert_same(&after, &(&(&a * &y) + &(&b * &x)));
    check_values(
        &[a.clone(), b.clone(), x.clone(), y.clone()],
        &before,
        &after,
    );
    // ((a/x - b/y)·x·y) → a·y - b·x
    let before = &(&(&a / &x) - &(&b / &y)) * &x * &y;
    let after = canon(&before);
    assert_same(&after, &(&(&a * &y) - &(&b * &x)));
    check_values(
        &[a.clone(), b.clone(), x.clone(), y.clone()],
        &before,
        &after,
    );
    // ((a/x + b)·x) → a + b·x
    let before = &(&(&a / &x) + &b) * &x;
    let after = canon(&before);
    assert_same(&after, &(&a + &(&b * &x)));
    check_values(&[a.clone(), b.clone(), x.clone()], &before, &after);
    // ((a + b)·x): nothing cancels, so it stays.
    let before = &(&a + &b) * &x;
    assert_same(&canon(&before), &before);
}

#[test]
fn the_logistic_gradient_form_cancels() {
    // The gradient of y·log(s) + (1-y)·log(t), t = 1 - s, through s' = s·t:
    // ((g·y)/s - (g·z)/t)·s·t → g·y·t - g·z·s
    let (g, y, z, s, t) = (
        vector("g"),
        vector("y"),
        vector("z"),
        vector("s"),
        vector("t"),
    );
    let before = &(&(&(&g * &y) / &s) - &(&(&g * &z) / &t)) * &s * &t;
    let after = canon(&before);
    let want = &mul(&[g.clone(), y.clone(), t.clone()]) - &mul(&[g.clone(), z.clone(), s.clone()]);
    assert_same(&after, &want);
    let inputs = [g, y, z, s, t];
    check_values(&inputs, &before, &after);
    // Where s underflowed to 0 the naive form is NaN; the rewritten one is g·y·t.
    let one = |v: f64| Tensor::from_slice(&[v], &[1]).unwrap();
    let args = [one(0.5), one(1.0), one(0.0), one(0.0), one(1.0)];
    assert!(eval1(&inputs, &before, &args)[0].is_nan());
    assert_eq!(eval1(&inputs, &after, &args), vec![0.5]);
}

#[test]
fn a_factor_that_would_vanish_from_a_sum_is_kept_unless_its_shape_is_static() {
    let (a, b, x) = (vector("a"), vector("b"), vector("x"));
    // ((a/x + b/x)·x): distributing x would drop it (and its shape check).
    let before = &(&(&a / &x) + &(&b / &x)) * &x;
    assert_same(&canon(&before), &before);
    let (p, q, r) = (
        input("p", &[Some(3)]),
        input("q", &[Some(3)]),
        input("r", &[Some(3)]),
    );
    let before = &(&(&p / &r) + &(&q / &r)) * &r;
    let after = canon(&before);
    assert_same(&after, &(&p + &q));
    check_values(&[p, q, r], &before, &after);
}
