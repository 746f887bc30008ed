//! `verify_grad` itself: it accepts correct gradients and reports wrong ones by input,
//! position and size of the error.

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
    // f = x·x + c·x·stop(x) with c = 0.0202: the finite difference sees 2x + 2cx = 2.0404x, the
    // symbolic gradient 2x + cx = 2.0202x, 1% less: a relative error |s - n| / (|s| + |n|) of
    // 0.5% and an absolute one of at least 0.02·|x·projection|.
    let x = Tensor::from_slice(&[1.0, 2.0], &[2]).unwrap();
    let f = |xs: &[oxtensor::Var]| {
        let c = oxtensor::Var::scalar_constant(0.0202, DType::F64);
        let hidden = b::mul(&b::mul(&xs[0], &zero_grad(&xs[0])?)?, &c)?;
        Ok(b::add(&b::mul(&xs[0], &xs[0])?, &hidden)?)
    };
    let with_rel = |rel_tol: f64| VerifyGradOptions {
        rel_tol: Some(rel_tol),
        ..VerifyGradOptions::default()
    };
    let err = verify_grad(f, std::slice::from_ref(&x), &VerifyGradOptions::default())
        .expect_err("the default tolerance (1e-4) catches a 1% error");
    let VerifyGradError::Mismatch(m) = err else {
        panic!("expected a mismatch, got {err}");
    };
    assert!(
        (0.004..0.006).contains(&m.rel_err),
        "relative error {}",
        m.rel_err
    );
    // Loosened to 5% it passes; loosened only to 0.4% it still fails (the absolute tolerance
    // stays 1e-4, so only the relative one can let it through).
    verify_grad(f, std::slice::from_ref(&x), &with_rel(0.05)).expect("within 5%");
    assert!(verify_grad(f, &[x], &with_rel(0.004)).is_err());
}
