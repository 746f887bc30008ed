//! `verify_grad` itself: it accepts correct gradients and reports wrong ones by input,
//! position and size of the error.

mod gradient_common;

use oxtensor::gradient::{VerifyGradError, VerifyGradOptions, verify_grad, zero_grad};
use oxtensor::ops as b;
use oxtensor::{DType, Tensor};

#[test]
fn detects_a_wrong_gradient_and_names_the_input() {
    // zero_grad hides one factor's gradient: the symbolic gradient of x·x is then x, not 2x.
    let x = Tensor::from_slice(&[0.5, -1.0, 2.0], &[3]).unwrap();
    let y = Tensor::from_slice(&[1.5], &[1]).unwrap();
    let err = verify_grad(
        |xs| Ok(b::mul(&b::mul(&zero_grad(&xs[1])?, &xs[1])?, &xs[0])?),
        &[x, y],
        &VerifyGradOptions::default(),
    )
    .unwrap_err();
    match &err {
        VerifyGradError::Mismatch(m) => {
            assert_eq!(m.input, 1);
            assert_eq!(m.position, vec![0]);
            assert!(
                (m.numeric - 2.0 * m.symbolic).abs() < 1e-4 * m.numeric.abs(),
                "{err}"
            );
        }
        other => panic!("expected a mismatch, got {other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("input 1") && msg.contains("'input 1'"),
        "{msg}"
    );
}

#[test]
fn accepts_correct_gradients_and_rejects_bad_arguments() {
    let x = Tensor::from_slice(&[0.5, -1.0, 2.0], &[3]).unwrap();
    verify_grad(
        |xs| Ok(b::sin(&xs[0])?),
        std::slice::from_ref(&x),
        &VerifyGradOptions::default(),
    )
    .unwrap();
    let ints = Tensor::from_slice(&[1i64, 2], &[2]).unwrap();
    let err = verify_grad(
        |xs| Ok(xs[0].clone()),
        &[ints],
        &VerifyGradOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, VerifyGradError::Invalid(_)), "{err}");
    let err = verify_grad(|xs| Ok(xs[0].clone()), &[], &VerifyGradOptions::default()).unwrap_err();
    assert!(matches!(err, VerifyGradError::Invalid(_)), "{err}");
    let err = verify_grad(
        |xs| Ok(b::cast(&xs[0], DType::I64)?),
        &[x],
        &VerifyGradOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("must be a float"), "{err}");
}

#[test]
fn tolerances_can_be_loosened() {
    // A gradient off by 1% passes with a 5% relative tolerance.
    let x = Tensor::from_slice(&[1.0, 2.0], &[2]).unwrap();
    let f = |xs: &[oxtensor::Var]| {
        // x·(1.01 x) with the second factor's gradient hidden: symbolic 1.01x vs numeric 2.02x.
        Ok(b::mul(
            &xs[0],
            &zero_grad(&b::mul(
                &xs[0],
                &oxtensor::Var::scalar_constant(1.01, DType::F64),
            )?)?,
        )?)
    };
    assert!(verify_grad(f, std::slice::from_ref(&x), &VerifyGradOptions::default()).is_err());
    let loose = VerifyGradOptions {
        abs_tol: Some(10.0),
        rel_tol: Some(0.5),
        ..VerifyGradOptions::default()
    };
    verify_grad(f, &[x], &loose).unwrap();
}
