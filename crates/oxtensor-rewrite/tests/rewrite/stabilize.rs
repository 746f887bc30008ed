//! The stabilization rules: expected graphs, equal values where the naive form is accurate, and
//! finite correct values at extreme inputs where the naive form overflows or cancels. The
//! references are computed here in f64 where that is exact (or by the identity's closed form).

use crate::common::*;
use oxtensor_data::Tensor;
use oxtensor_graph::build as b;
use oxtensor_graph::{ScalarOp, Var};
use oxtensor_rewrite::Optimizer;
use oxtensor_rewrite::rules::{FOLD, STABILIZE, USELESS};

fn stabilize(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS, STABILIZE]).0
}

fn vec_of(values: &[f64]) -> Tensor {
    Tensor::from_slice(values, &[values.len()]).unwrap()
}

/// Evaluates `out` after `FAST_RUN` on one vector argument.
fn run_fast(x: &Var, out: &Var, values: &[f64]) -> Vec<f64> {
    eval1(std::slice::from_ref(x), &fast_run(out), &[vec_of(values)])
}

#[test]
fn log1p_from_log_of_one_plus() {
    let x = vector("x");
    let before = (1.0 + &x).log();
    assert_same(&stabilize(&before), &x.log1p());
    assert_same(&stabilize(&(&x + 1.0).log()), &x.log1p());
    assert_same(&stabilize(&(1.0 - &x).log()), &(-&x).log1p());
    assert_same_values(
        std::slice::from_ref(&x),
        &before,
        &stabilize(&before),
        &[&[6]],
        (-0.5, 2.0),
        1e-12,
    );
    // Through the whole pipeline, after canonicalization moved the constant.
    let got = run_fast(&x, &before, &[1e-300, 1e-17, -1e-17]);
    assert_close(&got, &[1e-300, 1e-17, -1e-17], 1e-15);
}

#[test]
fn expm1_from_exp_minus_one() {
    let x = vector("x");
    let before = x.exp() - 1.0;
    assert_same(&stabilize(&before), &x.expm1());
    assert_same_values(
        std::slice::from_ref(&x),
        &before,
        &stabilize(&before),
        &[&[6]],
        (-2.0, 2.0),
        1e-12,
    );
    // FAST_RUN sees the canonical form exp(x) + (-1).
    let (_, report) = optimize(std::slice::from_ref(&before), &Optimizer::FAST_RUN);
    assert_eq!(report.hits("expm1_from_add"), 1);
    let got = run_fast(&x, &before, &[1e-300, -1e-20, 0.0]);
    assert_close(&got, &[1e-300, -1e-20, 0.0], 1e-15);
}

#[test]
fn softplus_from_log_one_plus_exp() {
    let x = vector("x");
    let before = (1.0 + x.exp()).log();
    assert_same(&stabilize(&before), &x.softplus());
    let got = run_fast(&x, &before, &[1000.0, -1000.0, 0.0, 800.0]);
    assert_close(&got, &[1000.0, 0.0, std::f64::consts::LN_2, 800.0], 1e-15);
}

#[test]
fn log_sigmoid_and_its_complement() {
    let x = vector("x");
    let ls = x.sigmoid().log();
    assert_same(&stabilize(&ls), &-(-&x).softplus());
    // log(1 - sigmoid(x)) = -softplus(x): through 1 - sigmoid(x) → sigmoid(-x).
    let l1 = (1.0 - x.sigmoid()).log();
    assert_same(&stabilize(&l1), &-x.softplus());
    assert_same_values(
        std::slice::from_ref(&x),
        &ls,
        &stabilize(&ls),
        &[&[6]],
        (-5.0, 5.0),
        1e-12,
    );
    assert_same_values(
        std::slice::from_ref(&x),
        &l1,
        &stabilize(&l1),
        &[&[6]],
        (-5.0, 5.0),
        1e-12,
    );
    // At ±1000 the naive forms give -inf; the true values are -1000 (to 1e-434).
    assert_close(
        &run_fast(&x, &ls, &[-1000.0, 1000.0]),
        &[-1000.0, 0.0],
        1e-15,
    );
    assert_close(
        &run_fast(&x, &l1, &[1000.0, -1000.0]),
        &[-1000.0, 0.0],
        1e-15,
    );
}

#[test]
fn one_minus_sigmoid() {
    let x = vector("x");
    let before = 1.0 - x.sigmoid();
    assert_same(&stabilize(&before), &(-&x).sigmoid());
    // 1 - sigmoid(40) is 0 in f64; the true value is e^-40 / (1 + e^-40).
    let want = (-40.0f64).exp() / (1.0 + (-40.0f64).exp());
    assert_close(&run_fast(&x, &before, &[40.0]), &[want], 1e-15);
}

#[test]
fn logsumexp_is_shifted_by_the_maximum() {
    let x = vector("x");
    let before = x.exp().sum(None).log();
    let after = stabilize(&before);
    let m = b::max(&x, None, false).unwrap();
    let m = b::switch(&m.isinf(), &Var::scalar_constant(0.0, m.dtype()), &m).unwrap();
    let shifted = &x - &b::dimshuffle(&m, &[None]).unwrap();
    assert_same(&after, &(&m + &shifted.exp().sum(None).log()));
    assert_same_values(
        std::slice::from_ref(&x),
        &before,
        &after,
        &[&[7]],
        (-3.0, 3.0),
        1e-12,
    );
    let ln2 = std::f64::consts::LN_2;
    let cases: [(&[f64], f64); 4] = [
        (&[800.0, 800.0], 800.0 + ln2),
        (&[-1000.0, -1000.0], -1000.0 + ln2),
        (&[f64::NEG_INFINITY, f64::NEG_INFINITY], f64::NEG_INFINITY),
        (&[1e-300, -1e-300], ln2),
    ];
    for (args, want) in cases {
        assert_close(&run_fast(&x, &before, args), &[want], 1e-15);
    }
}

#[test]
fn logsumexp_over_an_axis_with_keepdims() {
    let m = matrix("m");
    let before = b::log(&b::sum(&m.exp(), Some(&[1]), true).unwrap()).unwrap();
    let after = fast_run(&before);
    assert_eq!(after.ty(), before.ty());
    let args = [Tensor::from_slice(&[800.0, 800.0, 1.0, -1000.0, -1000.0, 2.0], &[2, 3]).unwrap()];
    let got = eval1(std::slice::from_ref(&m), &after, &args);
    let lse = |a: f64, b: f64, c: f64| {
        let mx = a.max(b).max(c);
        mx + ((a - mx).exp() + (b - mx).exp() + (c - mx).exp()).ln()
    };
    assert_close(
        &got,
        &[lse(800.0, 800.0, 1.0), lse(-1000.0, -1000.0, 2.0)],
        1e-15,
    );
    let args = [random_tensor(&[3, 4], -3.0, 3.0, 9)];
    let naive = eval1(std::slice::from_ref(&m), &before, &args);
    assert_close(
        &eval1(std::slice::from_ref(&m), &after, &args),
        &naive,
        1e-12,
    );
}

#[test]
fn softmax_is_shifted() {
    let x = vector("x");
    let e = x.exp();
    let before = &e / &e.sum(None);
    let after = stabilize(&before);
    let shifted = (&x - &b::dimshuffle(&b::max(&x, None, false).unwrap(), &[None]).unwrap()).exp();
    let want = &shifted / &b::dimshuffle(&shifted.sum(None), &[None]).unwrap();
    assert_same(&after, &want);
    assert_same_values(
        std::slice::from_ref(&x),
        &before,
        &after,
        &[&[5]],
        (-3.0, 3.0),
        1e-12,
    );
    let got = run_fast(&x, &before, &[1000.0, 1000.0, -1000.0]);
    assert_close(&got, &[0.5, 0.5, 0.0], 1e-15);
}

#[test]
fn softmax_over_rows_with_keepdims() {
    let m = matrix("m");
    let e = m.exp();
    let before = &e / &b::sum(&e, Some(&[1]), true).unwrap();
    let (_, report) = optimize(std::slice::from_ref(&before), &Optimizer::FAST_RUN);
    assert_eq!(report.hits("softmax"), 1);
    let args = [Tensor::from_slice(&[1000.0, 1000.0, 0.0, 0.0], &[2, 2]).unwrap()];
    let got = eval1(std::slice::from_ref(&m), &fast_run(&before), &args);
    assert_close(&got, &[0.5, 0.5, 0.5, 0.5], 1e-15);
}

#[test]
fn log_softmax_two_ways() {
    let x = vector("x");
    let e = x.exp();
    let via_softmax = (&e / &e.sum(None)).log();
    let via_lse = &x - &b::log(&b::sum(&e, None, true).unwrap()).unwrap();
    for before in [via_softmax, via_lse] {
        let got = run_fast(&x, &before, &[1000.0, 0.0, -1000.0]);
        assert_close(&got, &[0.0, -1000.0, -2000.0], 1e-15);
        let after = fast_run(&before);
        assert_same_values(
            std::slice::from_ref(&x),
            &before,
            &after,
            &[&[6]],
            (-3.0, 3.0),
            1e-12,
        );
    }
}

#[test]
fn excluding_stabilize_keeps_the_naive_forms() {
    let x = vector("x");
    let before = (1.0 + &x).log();
    let mode = Optimizer::FAST_RUN.excluding(&["stabilize"]);
    let (out, report) = optimize(std::slice::from_ref(&before), &mode);
    assert!(report.pass("stabilize").is_none());
    assert_eq!(report.hits("log1p_from_log"), 0);
    let has_log1p = oxtensor_graph::toposort(&out)
        .iter()
        .any(|n| n.op() == Some(&oxtensor_graph::Op::Elemwise(ScalarOp::Log1p)));
    assert!(!has_log1p, "{}", show(&out[0]));
    // log(1 + 1e-300) is 0 without the rewrite.
    assert_eq!(
        eval1(std::slice::from_ref(&x), &out[0], &[vec_of(&[1e-300])]),
        vec![0.0]
    );
}
