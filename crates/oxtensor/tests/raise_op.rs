//! Run-time checks (`Op::CheckAndRaise`, PyTensor's `CheckAndRaise`/`Assert`) in both
//! backends: values pass through unchanged, a false condition fails the call with the check's
//! exception kind and message (also behind fused elementwise consumers), gradients pass to the
//! value only (`verify_grad`), constant-true conditions are rewritten away, and bad inputs are
//! named build errors.

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::ops::check::{assert_that, check_and_raise};
use oxtensor::oxtensor_graph::{Check, Op, ReduceOp};
use oxtensor::oxtensor_runtime::KernelError;
use oxtensor::{
    DType, Error, Function, Mode, RuntimeError, Tensor, Var, function, grad_vars, ops, scalar,
    tensor, vector,
};
use oxtensor_testkit::{Tol, assert_close};

/// The interpreter and the native backend, with and without the full rewrite pipeline.
fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_COMPILE,
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
    ]
}

fn f64s(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).expect("tensor")
}

fn f64c(v: f64) -> Var {
    Var::constant(Tensor::scalar(v))
}

fn bool_c(v: bool) -> Var {
    Var::constant(Tensor::scalar(v))
}

/// `all(x > 0)`.
fn all_positive(x: &Var) -> Var {
    let gt = ops::gt(x, &f64c(0.0)).expect("gt");
    ops::reduce(ReduceOp::All, &gt, None, false).expect("all")
}

/// The exception kind and message of a call that failed on a check.
fn raised(err: &Error) -> Option<(String, String)> {
    let Error::Runtime(r) = err else {
        return None;
    };
    match r.root() {
        RuntimeError::Kernel {
            source: KernelError::Raised { exc, msg },
            ..
        } => Some((exc.clone(), msg.clone())),
        _ => None,
    }
}

fn build(xs: &[Var], outs: &[Var], mode: Mode) -> Function {
    function(xs, outs).mode(mode).build().expect("compile")
}

/// The `CheckAndRaise` nodes of a compiled graph, each with its number of conditions.
fn checks(f: &Function) -> Vec<usize> {
    f.graph()
        .toposort()
        .iter()
        .filter(|n| matches!(n.op(), Some(Op::CheckAndRaise(_))))
        .map(|n| n.inputs().len() - 1)
        .collect()
}

#[test]
fn values_pass_through_and_consumers_see_them() {
    let x = vector("x", DType::F64);
    let n = ops::shape_i(&x, 0).expect("shape_i");
    let long = ops::gt(&n, &Var::int_constant(1)).expect("gt");
    let checked = assert_that(&x, &[all_positive(&x), long], "x must be positive").expect("check");
    // An elementwise chain on the checked value, which fusion turns into one loop.
    let y = (checked.exp() + f64c(1.0)) * &checked;
    let args = [f64s(&[0.5, 1.0, 2.5, 4.0])];
    let xs = args[0].to_vec_as::<f64>();
    let want: Vec<f64> = xs.iter().map(|v| (v.exp() + 1.0) * v).collect();
    for mode in modes() {
        let f = build(
            std::slice::from_ref(&x),
            &[checked.clone(), y.clone()],
            mode,
        );
        let got = f.call(&args).expect("call");
        assert_eq!(
            got[0].to_vec_as::<f64>(),
            xs,
            "the value is returned unchanged"
        );
        assert_close(
            "consumer",
            &got[1],
            &f64s(&want),
            Tol::MATH_LIBRARIES.or_scaled(1e-15),
        );
        assert_eq!(checks(&f), vec![2], "the check stays, with both conditions");
    }
}

#[test]
fn a_false_condition_raises_the_kind_and_message_in_every_mode() {
    let x = vector("x", DType::F64);
    let assert = assert_that(&x, &[all_positive(&x)], "x must be positive").expect("check");
    let value = Check::new("ValueError", "sigma > 0");
    let raise = check_and_raise(&x, &[all_positive(&x)], value).expect("check");
    let bad = [f64s(&[0.5, -1.0, 2.0])];
    for mode in modes() {
        for (out, kind, msg) in [
            (&assert, "AssertionError", "x must be positive"),
            (&raise, "ValueError", "sigma > 0"),
        ] {
            // Behind fused elementwise consumers, and as an output itself.
            let consumer = (out.exp() * f64c(2.0)).sin();
            for o in [out.clone(), consumer] {
                let f = build(std::slice::from_ref(&x), &[o], mode.clone());
                let err = f.call(&bad).expect_err("the check fails");
                assert_eq!(
                    raised(&err),
                    Some((kind.to_string(), msg.to_string())),
                    "{err}"
                );
                assert!(err.to_string().contains(msg), "{err}");
                assert!(
                    f.call(&[f64s(&[1.0, 2.0])]).is_ok(),
                    "a later call that holds runs"
                );
            }
        }
    }
}

#[test]
fn conditions_of_any_dtype_are_true_when_nonzero_and_nan_is_true() {
    let x = vector("x", DType::F64);
    let (c_f, c_i, c_b) = (
        scalar("cf", DType::F64),
        scalar("ci", DType::I32),
        scalar("cb", DType::Bool),
    );
    let y = assert_that(&x, &[c_f.clone(), c_i.clone(), c_b.clone()], "m").expect("check");
    let xv = f64s(&[1.0, 2.0]);
    for mode in modes() {
        let f = build(
            &[x.clone(), c_f.clone(), c_i.clone(), c_b.clone()],
            std::slice::from_ref(&y),
            mode,
        );
        let run = |cf: f64, ci: i32, cb: bool| {
            f.call(&[
                xv.clone(),
                Tensor::scalar(cf),
                Tensor::scalar(ci),
                Tensor::scalar(cb),
            ])
        };
        assert!(run(0.5, -3, true).is_ok());
        assert!(run(f64::NAN, 1, true).is_ok(), "NaN is true, as bool(nan)");
        for (cf, ci, cb) in [(0.0, 1, true), (1.0, 0, true), (1.0, 1, false)] {
            let err = run(cf, ci, cb).expect_err("a zero condition fails");
            assert_eq!(raised(&err).map(|r| r.1), Some("m".to_string()));
        }
    }
}

#[test]
fn gradients_pass_to_the_value_and_not_to_the_conditions() {
    let opts = VerifyGradOptions::default();
    let p = f64s(&[0.3, -1.2, 2.0, 0.7]);
    verify_grad(
        |x| {
            let sq = &x[0] * &x[0];
            let ok = ops::gt(&sq.sum(None), &f64c(-1.0))?;
            let y = assert_that(&sq, &[ok], "never fails")?;
            Ok(y.sin())
        },
        std::slice::from_ref(&p),
        &opts,
    )
    .expect("verify_grad");
    // The gradient of the checked value is the upstream gradient itself.
    let (x, s) = (vector("x", DType::F64), scalar("s", DType::F64));
    let ok = ops::gt(&s, &f64c(0.0)).expect("gt");
    let y = assert_that(&x, &[ok], "s > 0").expect("check");
    let g = grad_vars(&(&y * &y).sum(None), std::slice::from_ref(&x)).expect("grad");
    for mode in modes() {
        let f = build(&[x.clone(), s.clone()], &g, mode);
        let got = f
            .call(&[f64s(&[1.0, -2.0]), Tensor::scalar(1.0)])
            .expect("call");
        assert_eq!(got[0].to_vec_as::<f64>(), vec![2.0, -4.0]);
    }
    // A variable reached only through a condition is disconnected, as in PyTensor.
    let err = grad_vars(&y.sum(None), std::slice::from_ref(&s)).expect_err("disconnected");
    assert!(
        err.to_string()
            .contains("not part of the computational graph"),
        "{err}"
    );
}

#[test]
fn constant_true_conditions_are_removed_and_others_kept() {
    let (x, c) = (vector("x", DType::F64), scalar("c", DType::Bool));
    let all_true = assert_that(&x, &[bool_c(true), f64c(2.0)], "m").expect("check");
    let one_left = assert_that(&x, &[bool_c(true), c.clone()], "m").expect("check");
    let false_kept = assert_that(&x, &[bool_c(false)], "always fails").expect("check");
    let xv = f64s(&[1.0, 2.0]);
    for mode in modes() {
        let f = build(std::slice::from_ref(&x), &[all_true.exp()], mode.clone());
        assert!(checks(&f).is_empty(), "every condition holds: no check");
        assert!(f.call(std::slice::from_ref(&xv)).is_ok());
        let f = build(&[x.clone(), c.clone()], &[one_left.exp()], mode.clone());
        assert_eq!(checks(&f), vec![1], "only the unknown condition is left");
        let err = f
            .call(&[xv.clone(), Tensor::scalar(false)])
            .expect_err("c is false");
        assert!(raised(&err).is_some(), "{err}");
        // A condition known to fail is not folded away nor raised while compiling.
        let f = build(std::slice::from_ref(&x), &[false_kept.exp()], mode);
        let err = f
            .call(std::slice::from_ref(&xv))
            .expect_err("fails when run");
        assert_eq!(raised(&err).map(|r| r.1), Some("always fails".to_string()));
    }
}

#[test]
fn unused_checks_are_dropped_and_equal_checks_are_one_node() {
    let x = vector("x", DType::F64);
    let a = assert_that(&x, &[all_positive(&x)], "m").expect("check");
    let b = assert_that(&x, &[all_positive(&x)], "m").expect("check");
    assert_eq!(a, b, "hash-consing merges identical checks");
    let other = assert_that(&x, &[all_positive(&x)], "another message").expect("check");
    assert_ne!(a, other, "the message is part of the op");
    // A check no output reads is not part of the function, as in PyTensor.
    let _unused = a.exp();
    let f = build(std::slice::from_ref(&x), &[x.exp()], Mode::FAST_RUN);
    assert!(checks(&f).is_empty());
    assert!(f.call(&[f64s(&[-1.0])]).is_ok());
}

#[test]
fn printing_follows_pytensor() {
    let x = vector("x", DType::F64);
    let a = assert_that(&x, &[all_positive(&x)], "x must be positive").expect("check");
    assert_eq!(
        a.owner().expect("owner").0.to_string(),
        "Assert{msg='x must be positive'}"
    );
    let long = Check::new(
        "pymc.logprob.utils.ParameterValueError#2",
        "sigma > 0, alpha > 0, beta > 0, and more",
    );
    assert_eq!(
        Op::CheckAndRaise(long).to_string(),
        "CheckAndRaise{raises=ParameterValueError, msg='sigma > 0, alpha > 0, beta ...'}"
    );
}

#[test]
fn bad_inputs_are_named_build_errors() {
    let x = vector("x", DType::F64);
    let gt = ops::gt(&x, &f64c(0.0)).expect("gt");
    let err = assert_that(&x, &[gt], "m").expect_err("array condition");
    let msg = err.to_string();
    assert!(
        msg.contains("a scalar condition") && msg.contains("all()"),
        "{msg}"
    );
    let m = tensor("m", DType::F64, &[Some(2), Some(3)]);
    let err = assert_that(&x, &[m], "m").expect_err("matrix condition");
    assert!(err.to_string().contains("'m'"), "names the input: {err}");
    let err = Var::apply1(Op::CheckAndRaise(Check::assertion("m")), &[]).expect_err("no value");
    assert!(err.to_string().contains("at least 1"), "{err}");
}
