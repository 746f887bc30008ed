//! Property: rewriting random expressions with `FAST_RUN` keeps their type and their values
//! (within rounding), and so does rewriting the result again. (The pipeline is not idempotent:
//! a later pass can create what an earlier one would simplify, such as `x * (sqr(x) * x)` from
//! `x * x ** 3`.)

use crate::common::*;
use oxtensor_data::Tensor;
use oxtensor_graph::Var;
use oxtensor_rewrite::Optimizer;
use proptest::prelude::*;

/// A small expression language over two vectors, total on finite inputs of moderate size.
#[derive(Clone, Debug)]
enum Expr {
    X,
    Y,
    Const(f64),
    Add(Box<Expr>, Box<Expr>),
    Sub(Box<Expr>, Box<Expr>),
    Mul(Box<Expr>, Box<Expr>),
    /// `a / (1 + b²)`.
    Div(Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    /// `log(1 + a²)`.
    LogSq(Box<Expr>),
    Sigmoid(Box<Expr>),
    /// `exp(tanh(a))`.
    ExpTanh(Box<Expr>),
    /// `a ** k` for a small integer k.
    Pow(Box<Expr>, i32),
    /// `sum(a) + 0 * a`: a reduction broadcast back.
    SumBack(Box<Expr>),
    /// `exp(a) / sum(exp(a))`.
    Softmax(Box<Expr>),
    /// `log(sum(exp(a))) - a`.
    LogSumExp(Box<Expr>),
    /// `log(1 + exp(a)) + (exp(a) - 1) + log(1 - sigmoid(a))`.
    Stabilizable(Box<Expr>),
    /// `1 / (1 + exp(-a)) + exp(a) / (1 + exp(a))`: the logistic function written by hand.
    NaiveSigmoid(Box<Expr>),
    /// `(a/(1 + b²) - b/(2 + a²)) · (1 + b²) · (2 + a²)`: divisions that cancel.
    Cancel(Box<Expr>, Box<Expr>),
}

fn build(e: &Expr, x: &Var, y: &Var) -> Var {
    let b = |e: &Expr| build(e, x, y);
    match e {
        Expr::X => x.clone(),
        Expr::Y => y.clone(),
        Expr::Const(c) => x * 0.0 + *c,
        Expr::Add(a, c) => b(a) + b(c),
        Expr::Sub(a, c) => b(a) - b(c),
        Expr::Mul(a, c) => b(a) * b(c),
        Expr::Div(a, c) => b(a) / (1.0 + b(c).sqr()),
        Expr::Neg(a) => -b(a),
        Expr::LogSq(a) => (1.0 + b(a).powf(2.0)).log(),
        Expr::Sigmoid(a) => b(a).sigmoid(),
        Expr::ExpTanh(a) => b(a).tanh().exp(),
        Expr::Pow(a, k) => b(a).powf(*k),
        Expr::SumBack(a) => {
            let s = b(a).sum(None);
            &s + &(b(a) * 0.0)
        }
        Expr::Softmax(a) => {
            let e = b(a).exp();
            &e / &e.sum(None)
        }
        Expr::LogSumExp(a) => b(a).exp().sum(None).log() - b(a),
        Expr::Stabilizable(a) => {
            let a = b(a);
            (1.0 + a.exp()).log() + (a.exp() - 1.0) + (1.0 - a.sigmoid()).log()
        }
        Expr::NaiveSigmoid(a) => {
            let a = b(a);
            1.0 / (1.0 + (-&a).exp()) + a.exp() / (1.0 + a.exp())
        }
        Expr::Cancel(a, c) => {
            let (a, c) = (b(a), b(c));
            let (s, t) = (1.0 + c.sqr(), 2.0 + a.sqr());
            (&a / &s - &c / &t) * &s * &t
        }
    }
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        Just(Expr::X),
        Just(Expr::Y),
        prop_oneof![Just(0.0), Just(1.0), Just(-1.0), Just(2.0), Just(0.5)].prop_map(Expr::Const),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        let two = (inner.clone(), inner.clone());
        prop_oneof![
            two.clone()
                .prop_map(|(a, b)| Expr::Add(Box::new(a), Box::new(b))),
            two.clone()
                .prop_map(|(a, b)| Expr::Sub(Box::new(a), Box::new(b))),
            two.clone()
                .prop_map(|(a, b)| Expr::Mul(Box::new(a), Box::new(b))),
            two.clone()
                .prop_map(|(a, b)| Expr::Div(Box::new(a), Box::new(b))),
            two.prop_map(|(a, b)| Expr::Cancel(Box::new(a), Box::new(b))),
            inner.clone().prop_map(|a| Expr::Neg(Box::new(a))),
            inner.clone().prop_map(|a| Expr::LogSq(Box::new(a))),
            inner.clone().prop_map(|a| Expr::Sigmoid(Box::new(a))),
            inner.clone().prop_map(|a| Expr::ExpTanh(Box::new(a))),
            (inner.clone(), 1..5i32).prop_map(|(a, k)| Expr::Pow(Box::new(a), k)),
            inner.clone().prop_map(|a| Expr::SumBack(Box::new(a))),
            inner.clone().prop_map(|a| Expr::Softmax(Box::new(a))),
            inner.clone().prop_map(|a| Expr::LogSumExp(Box::new(a))),
            inner.clone().prop_map(|a| Expr::Stabilizable(Box::new(a))),
            inner.prop_map(|a| Expr::NaiveSigmoid(Box::new(a))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fast_run_keeps_types_and_values(e in expr(), seed in 0u64..1000) {
        let (x, y) = (vector("x"), vector("y"));
        let before = build(&e, &x, &y);
        let (after, report) = optimize(std::slice::from_ref(&before), &Optimizer::FAST_RUN);
        prop_assert_eq!(after[0].ty(), before.ty());
        let args = [
            Tensor::from_slice(&random(5, -1.5, 1.5, seed), &[5]).unwrap(),
            Tensor::from_slice(&random(5, -1.5, 1.5, seed + 7), &[5]).unwrap(),
        ];
        let inputs = [x.clone(), y.clone()];
        let want = eval1(&inputs, &before, &args);
        let got = eval1(&inputs, &after[0], &args);
        for (g, w) in got.iter().zip(&want) {
            prop_assert!((g - w).abs() <= 1e-9 * (1.0 + w.abs()), "{got:?} vs {want:?}\n{report}");
        }
        let (again, _) = optimize(&after, &Optimizer::FAST_RUN);
        prop_assert_eq!(again[0].ty(), before.ty());
        let twice = eval1(&inputs, &again[0], &args);
        for (g, w) in twice.iter().zip(&want) {
            prop_assert!((g - w).abs() <= 1e-9 * (1.0 + w.abs()), "{twice:?} vs {want:?}");
        }
    }
}
