//! Gradients of `betainc` with respect to its shapes and of `hyp2f1` with respect to its
//! parameters, through the graph: equal in both backends (interpreter and native) to
//! oxtensor-special's derivative functions, and checked against finite differences with
//! `verify_grad` on domains wider than `special_functions.rs` samples (tails of `betainc`,
//! x < −1 and the `1 − x` connection region of `hyp2f1`).

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::oxtensor_graph::SpecialFn;
use oxtensor::{DType, Mode, Tensor, Var, function, grad_vars, ops, vector};
use oxtensor_testkit::{Tol, assert_close};

/// The interpreter and the native backend, both pipelines.
fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_COMPILE,
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
    ]
}

/// Columns of `points` as tensors.
fn columns(points: &[&[f64]]) -> Vec<Tensor> {
    let n = points.len();
    (0..points[0].len())
        .map(|k| {
            let col: Vec<f64> = points.iter().map(|p| p[k]).collect();
            Tensor::from_slice(&col, &[n]).expect("tensor")
        })
        .collect()
}

/// The gradient of `sum(f(inputs))` with respect to every input, at `points`, in `mode`.
fn gradients(f: SpecialFn, points: &[&[f64]], mode: &Mode) -> Vec<Tensor> {
    let xs: Vec<Var> = (0..f.arity())
        .map(|i| vector(&format!("x{i}"), DType::F64))
        .collect();
    let y = ops::special(f, &xs).expect("build");
    let grads = grad_vars(&y.sum(None), &xs).expect("grad");
    let fun = function(&xs, &grads)
        .mode(mode.clone())
        .build()
        .expect("compile");
    fun.call(&columns(points)).expect("call")
}

const BETAINC_POINTS: &[&[f64]] = &[
    &[2.0, 3.0, 0.4],
    &[0.3, 0.7, 0.02],
    &[25.0, 4.0, 0.97],
    &[150.0, 200.0, 0.43],
    &[0.05, 40.0, 1e-6],
    &[7.5, 0.2, 0.999_9],
];

const HYP2F1_POINTS: &[&[f64]] = &[
    &[0.5, 1.5, 2.25, 0.3],
    &[1.3, -2.7, 3.1, -0.8],
    &[0.7, 1.3, 2.9, -3.0],
    &[-1.5, 2.25, 4.1, -40.0],
    &[2.0, 0.75, 3.6, 0.95],
    &[0.25, 1.75, 2.0, 0.97],
    &[-3.0, 1.5, 2.5, 0.6],
];

/// A function, its points, and its derivative functions in parameter order.
type Case = (SpecialFn, &'static [&'static [f64]], Vec<SpecialFn>);

#[test]
fn parameter_gradients_are_the_derivative_functions_in_both_backends() {
    let cases: [Case; 2] = [
        (
            SpecialFn::BetaInc,
            BETAINC_POINTS,
            vec![SpecialFn::BetaIncDa, SpecialFn::BetaIncDb],
        ),
        (
            SpecialFn::Hyp2F1,
            HYP2F1_POINTS,
            vec![
                SpecialFn::Hyp2F1Da,
                SpecialFn::Hyp2F1Db,
                SpecialFn::Hyp2F1Dc,
            ],
        ),
    ];
    for (f, points, derivatives) in cases {
        let args = columns(points);
        for mode in modes() {
            let got = gradients(f, points, &mode);
            for (k, d) in derivatives.iter().enumerate() {
                let xs: Vec<Var> = args.iter().map(|t| Var::constant(t.clone())).collect();
                let direct = ops::special(*d, &xs).expect("build");
                let want = function(&[], &[direct])
                    .mode(Mode::new("interp", "fast_run").expect("mode"))
                    .build()
                    .expect("compile")
                    .call(&[])
                    .expect("call")
                    .remove(0);
                assert_close(
                    &format!("{f:?} d/d{k} in {mode:?}"),
                    &got[k],
                    &want,
                    Tol::ulps(2),
                );
                let direct: Vec<f64> = points
                    .iter()
                    .map(|p| match d.export().entry {
                        oxtensor_special::EntryF64::Ternary(g) => g(p[0], p[1], p[2]),
                        oxtensor_special::EntryF64::Quaternary(g) => g(p[0], p[1], p[2], p[3]),
                        _ => f64::NAN,
                    })
                    .collect();
                let direct = Tensor::from_slice(&direct, &[points.len()]).expect("tensor");
                assert_close(&format!("{d:?} direct"), &want, &direct, Tol::EXACT);
            }
        }
    }
}

/// `verify_grad` of `f` with every input free, at `points`.
fn check_fd(f: SpecialFn, points: &[&[f64]], rel_tol: f64) {
    let free = columns(points);
    let opts = VerifyGradOptions {
        rel_tol: Some(rel_tol),
        ..VerifyGradOptions::default()
    };
    let result = verify_grad(|xs| Ok(ops::special(f, xs)?), &free, &opts);
    assert!(result.is_ok(), "{f:?}: {result:?}");
}

#[test]
fn parameter_gradients_match_finite_differences() {
    // The points whose derivatives are moderate (finite differences of the 1e-6 and 0.9999
    // tails would need steps below the default).
    check_fd(SpecialFn::BetaInc, &BETAINC_POINTS[..4], 1e-4);
    check_fd(SpecialFn::Hyp2F1, HYP2F1_POINTS, 1e-4);
    // The x-derivatives of the derivative functions (the second-order rules).
    for d in [SpecialFn::BetaIncDa, SpecialFn::BetaIncDb] {
        let free = columns(&BETAINC_POINTS[..4]);
        let fixed: Vec<Var> = free[..2].iter().map(|t| Var::constant(t.clone())).collect();
        let result = verify_grad(
            |xs| {
                Ok(ops::special(
                    d,
                    &[fixed[0].clone(), fixed[1].clone(), xs[0].clone()],
                )?)
            },
            &free[2..],
            &VerifyGradOptions::default(),
        );
        assert!(result.is_ok(), "{d:?}: {result:?}");
    }
}
