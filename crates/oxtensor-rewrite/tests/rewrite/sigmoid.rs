//! The logistic function written with `exp` (set `sigmoid`): expected graphs, equal values on
//! moderate inputs, and finite correct values at ±1000, where the naive forms overflow, against
//! references computed here with the two-branch formula.

use crate::common::*;
use oxtensor_data::Tensor;
use oxtensor_graph::build as b;
use oxtensor_graph::{Op, ScalarOp, Var};
use oxtensor_rewrite::rules::{FOLD, PRODUCTS, SIGMOID, STABILIZE, USELESS};

fn stabilize(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS, STABILIZE, SIGMOID, PRODUCTS]).0
}

/// The logistic function, exact in f64 at every argument.
fn logistic(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        x.exp() / (1.0 + x.exp())
    }
}

fn vec_of(values: &[f64]) -> Tensor {
    Tensor::from_slice(values, &[values.len()]).unwrap()
}

const EXTREMES: [f64; 5] = [-1000.0, -40.0, 0.0, 40.0, 1000.0];

#[test]
fn naive_forms_become_sigmoid() {
    let x = vector("x");
    let one_plus = |t: &Var| 1.0 + t.exp();
    let cases = [
        // 1/(1+exp(-x)) → sigmoid(x)
        (1.0 / one_plus(&-&x), x.sigmoid()),
        // 1/(1+exp(x)) → sigmoid(-x)
        (1.0 / one_plus(&x), (-&x).sigmoid()),
        // exp(x)/(1+exp(x)) → sigmoid(x)
        (x.exp() / one_plus(&x), x.sigmoid()),
        // exp(x)/(exp(x)+1), the canonical order → sigmoid(x)
        (x.exp() / (x.exp() + 1.0), x.sigmoid()),
        // (1+exp(x))^-1 and reciprocal(1+exp(x)) → sigmoid(-x)
        (one_plus(&x).powf(-1.0), (-&x).sigmoid()),
        (b::reciprocal(&one_plus(&x)).unwrap(), (-&x).sigmoid()),
        // 1/(1+exp(-x - 2)): the negation is built in canonical form, 2 + x
        (1.0 / one_plus(&(-&x - 2.0)), (2.0 + &x).sigmoid()),
    ];
    for (before, want) in cases {
        let after = stabilize(&before);
        // (Constant folding turns the builders' padded constants into constants of rank 1.)
        assert_same(&after, &stabilize(&want));
        assert_same_values(
            std::slice::from_ref(&x),
            &before,
            &after,
            &[&[7]],
            (-5.0, 5.0),
            1e-12,
        );
    }
}

#[test]
fn naive_sigmoid_is_exact_at_the_extremes_through_fast_run() {
    let x = vector("x");
    let naive = 1.0 / (1.0 + (-&x).exp());
    let other = x.exp() / (1.0 + x.exp());
    let want: Vec<f64> = EXTREMES.iter().map(|&v| logistic(v)).collect();
    for before in [naive, other] {
        let got = eval1(
            std::slice::from_ref(&x),
            &fast_run(&before),
            &[vec_of(&EXTREMES)],
        );
        assert_close(&got, &want, 1e-15);
    }
    // log of the naive form: -softplus(-x), finite at -1000 where log(0) was -inf.
    let log_p = (1.0 / (1.0 + (-&x).exp())).log();
    let got = eval1(
        std::slice::from_ref(&x),
        &fast_run(&log_p),
        &[vec_of(&[-1000.0, 1000.0])],
    );
    assert_close(&got, &[-1000.0, 0.0], 1e-15);
}

#[test]
fn a_factor_over_one_plus_exp_becomes_a_product_with_sigmoid() {
    let (x, y) = (vector("x"), vector("y"));
    // y/(1+exp(x)) → y·sigmoid(-x)
    let before = &y / &(1.0 + x.exp());
    let after = stabilize(&before);
    assert_same(&after, &(&y * &(-&x).sigmoid()));
    assert_same_values(&[x, y], &before, &after, &[&[6], &[6]], (-3.0, 3.0), 1e-12);
}

#[test]
fn exp_times_sigmoid_of_the_negation_is_sigmoid() {
    let (x, y) = (vector("x"), vector("y"));
    // exp(x)·sigmoid(-x) → sigmoid(x)
    let before = x.exp() * (-&x).sigmoid();
    assert_same(&stabilize(&before), &x.sigmoid());
    // y·exp(-x)·sigmoid(x) → y·sigmoid(-x)
    let before = &y * &(-&x).exp() * x.sigmoid();
    let after = stabilize(&before);
    assert_same(&after, &(&y * &(-&x).sigmoid()));
    assert_same_values(
        &[x.clone(), y],
        &before,
        &after,
        &[&[6], &[6]],
        (-3.0, 3.0),
        1e-12,
    );
    // Not the negation: left alone.
    let before = x.exp() * x.sigmoid();
    assert_same(&stabilize(&before), &before);
}

#[test]
fn the_gradient_of_the_naive_form_becomes_the_logistic_derivative() {
    // d/dx 1/(1+exp(-x)) as the gradient writes it: g / (1+exp(-x))² · exp(-x).
    let (x, g) = (vector("x"), vector("g"));
    let t = -&x;
    let before = &(&g / &(1.0 + t.exp()).sqr()) * &t.exp();
    let after = stabilize(&before);
    // g·sigmoid(x)·sigmoid(x) from the denominator, then exp(-x)·sigmoid(x) → sigmoid(-x).
    let want = Var::apply1(
        Op::Elemwise(ScalarOp::Mul),
        &[g.clone(), (-&x).sigmoid(), x.sigmoid()],
    )
    .unwrap();
    assert_same(&after, &want);
    assert_same_values(
        &[x.clone(), g.clone()],
        &before,
        &after,
        &[&[6], &[6]],
        (-3.0, 3.0),
        1e-12,
    );
    let ones = vec_of(&[1.0; 5]);
    let got = eval(
        &[x.clone(), g.clone()],
        &[fast_run(&before)],
        &[vec_of(&EXTREMES), ones.clone()],
    )[0]
    .to_vec_as::<f64>();
    let want: Vec<f64> = EXTREMES
        .iter()
        .map(|&v| logistic(v) * logistic(-v))
        .collect();
    assert_close(&got, &want, 1e-15);
    // The naive gradient is NaN at -1000 (inf/inf · inf).
    let naive = eval(&[x, g], &[before], &[vec_of(&EXTREMES), ones])[0].to_vec_as::<f64>();
    assert!(naive[0].is_nan(), "{naive:?}");
}

#[test]
fn other_denominators_are_left_alone() {
    let (x, y) = (vector("x"), vector("y"));
    for before in [
        1.0 / (2.0 + x.exp()),
        1.0 / (1.0 + x.exp() + &y),
        1.0 / (1.0 + x.exp2()),
    ] {
        assert_same(&stabilize(&before), &with_rules(&before, &[FOLD]).0);
    }
}
