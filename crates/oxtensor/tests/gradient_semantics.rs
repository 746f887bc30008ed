//! The conventions of the gradient at kinks and ties, through integers, and of the markers,
//! checked on values (PyTensor's conventions; see the `oxtensor-grad` crate docs).

use crate::gradient_common;

use gradient_common::{assert_close, eval, values};
use oxtensor::gradient::{
    DisconnectedInputs, GradError, GradOptions, NullGradients, disconnected_grad, grad, grad_clip,
    grad_vars, undefined_grad, zero_grad,
};
use oxtensor::ops::{self as b, Idx};
use oxtensor::{DType, Tensor, Var, scalar, vector};

fn vec64(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).unwrap()
}

/// The gradient of `cost(x)` at `x = point`.
fn grad_at(point: &[f64], cost: impl Fn(&Var) -> Var) -> Vec<f64> {
    let x = vector("x", DType::F64);
    let g = grad_vars(&cost(&x), std::slice::from_ref(&x)).unwrap();
    values(&eval(&[x], &g, &[vec64(point)])[0])
}

fn c(v: f64) -> Var {
    Var::scalar_constant(v, DType::F64)
}

#[test]
fn abs_sign_and_sqrt_at_zero() {
    let g = grad_at(&[-2.0, 0.0, 3.0], |x| {
        b::sum(&b::abs(x).unwrap(), None, false).unwrap()
    });
    assert_eq!(g, vec![-1.0, 0.0, 1.0]);
    let g = grad_at(&[0.0, 4.0], |x| {
        b::sum(&b::sqrt(x).unwrap(), None, false).unwrap()
    });
    assert_eq!(g, vec![f64::INFINITY, 0.25]);
    let g = grad_at(&[0.0, 1.7], |x| {
        b::sum(&b::sign(x).unwrap(), None, false).unwrap()
    });
    assert_eq!(g, vec![0.0, 0.0]);
}

#[test]
fn maximum_and_minimum_ties_go_to_the_first_argument() {
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);
    for op in [b::maximum, b::minimum] {
        let cost = b::sum(&op(&x, &y).unwrap(), None, false).unwrap();
        let g = grad_vars(&cost, &[x.clone(), y.clone()]).unwrap();
        let out = eval(
            &[x.clone(), y.clone()],
            &g,
            &[vec64(&[1.0, 2.0, 3.0]), vec64(&[1.0, 5.0, 0.0])],
        );
        let (gx, gy) = (values(&out[0]), values(&out[1]));
        assert_eq!(gx[0] + gy[0], 1.0, "the tie is counted once");
        assert_eq!((gx[0], gy[0]), (1.0, 0.0));
    }
}

#[test]
fn clip_passes_at_its_bounds() {
    let g = grad_at(&[-2.0, -1.0, 0.0, 1.0, 2.0], |x| {
        b::sum(&b::clip(x, &c(-1.0), &c(1.0)).unwrap(), None, false).unwrap()
    });
    assert_eq!(g, vec![0.0, 1.0, 1.0, 1.0, 0.0]);
    // The bounds get the gradient where they are active (strictly).
    let x = vector("x", DType::F64);
    let lo = scalar("lo", DType::F64);
    let hi = scalar("hi", DType::F64);
    let cost = b::sum(&b::clip(&x, &lo, &hi).unwrap(), None, false).unwrap();
    let g = grad_vars(&cost, &[lo.clone(), hi.clone()]).unwrap();
    let out = eval(
        &[x, lo, hi],
        &g,
        &[
            vec64(&[-2.0, -1.0, 0.0, 1.0, 2.0, 3.0]),
            Tensor::scalar(-1.0),
            Tensor::scalar(1.0),
        ],
    );
    assert_eq!((values(&out[0]), values(&out[1])), (vec![1.0], vec![2.0]));
}

#[test]
fn max_reduction_ties_all_get_the_gradient() {
    let g = grad_at(&[3.0, 1.0, 3.0, 2.0], |x| b::max(x, None, false).unwrap());
    assert_eq!(g, vec![1.0, 0.0, 1.0, 0.0]);
    let g = grad_at(&[3.0, 1.0, 1.0], |x| b::min(x, None, false).unwrap());
    assert_eq!(g, vec![0.0, 1.0, 1.0]);
}

#[test]
fn prod_with_zeros_is_exact() {
    let g = grad_at(&[2.0, 0.0, 3.0], |x| b::prod(x, None, false).unwrap());
    assert_eq!(g, vec![0.0, 6.0, 0.0]);
    let g = grad_at(&[2.0, 0.0, 0.0], |x| b::prod(x, None, false).unwrap());
    assert_eq!(g, vec![0.0, 0.0, 0.0]);
    let g = grad_at(&[2.0, 5.0, 3.0], |x| b::prod(x, None, false).unwrap());
    assert_close("prod", &g, &[15.0, 6.0, 10.0], 1e-15);
}

#[test]
fn switch_condition_gets_zero_and_branches_their_share() {
    let x = vector("x", DType::F64);
    let cond = b::gt(&x, &c(0.0)).unwrap();
    let cost = b::sum(
        &b::switch(&cond, &b::sqr(&x).unwrap(), &b::neg(&x).unwrap()).unwrap(),
        None,
        false,
    )
    .unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        values(&eval(&[x], &g, &[vec64(&[-2.0, 3.0])])[0]),
        vec![-1.0, 6.0]
    );
}

#[test]
fn pow_exponent_gradient_at_zero_base() {
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);
    let cost = b::sum(&b::pow(&x, &y).unwrap(), None, false).unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&y)).unwrap();
    let out = eval(&[x, y], &g, &[vec64(&[0.0, 2.0]), vec64(&[2.0, 3.0])]);
    assert_close(
        "d pow / dy",
        &values(&out[0]),
        &[0.0, 8.0 * 2f64.ln()],
        1e-15,
    );
}

#[test]
fn repeated_indices_accumulate() {
    let x = vector("x", DType::F64);
    let idx = Var::constant(Tensor::from_slice(&[0i64, 2, 0, 0], &[4]).unwrap());
    let cost = b::sum(&b::take(&x, &idx, 0).unwrap(), None, false).unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        values(&eval(std::slice::from_ref(&x), &g, &[vec64(&[1.0, 1.0, 1.0])])[0]),
        vec![3.0, 0.0, 1.0]
    );
    // The same element read twice through basic indexing: contributions add.
    let cost = b::add(
        &x.at(&[Idx::int(1)]),
        &b::sqr(&x.at(&[Idx::int(1)])).unwrap(),
    )
    .unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        values(&eval(&[x], &g, &[vec64(&[5.0, 3.0])])[0]),
        vec![0.0, 7.0]
    );
}

#[test]
fn integer_inputs() {
    let k = vector("k", DType::I64);
    // Through a cast to float the gradient is the real extension's (PyTensor).
    let cost = b::sum(
        &b::mul(&b::cast(&k, DType::F64).unwrap(), &c(3.0)).unwrap(),
        None,
        false,
    )
    .unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&k)).unwrap();
    let ints = Tensor::from_slice(&[1i64, 2], &[2]).unwrap();
    let out = eval(std::slice::from_ref(&k), &g, std::slice::from_ref(&ints));
    assert_eq!(out[0].dtype(), DType::F64);
    assert_eq!(values(&out[0]), vec![3.0, 3.0]);
    // Integer arithmetic before the cast: the gradient is zero (float64).
    let two = Var::constant(Tensor::scalar(2i64));
    let cost = b::sum(
        &b::cast(&b::mul(&k, &two).unwrap(), DType::F64).unwrap(),
        None,
        false,
    )
    .unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&k)).unwrap();
    let out = eval(std::slice::from_ref(&k), &g, std::slice::from_ref(&ints));
    assert_eq!(
        (out[0].dtype(), values(&out[0])),
        (DType::F64, vec![0.0, 0.0])
    );
    // An integer cost: zero gradients.
    let x = vector("x", DType::F64);
    let cost = b::sum(
        &b::cast(&b::floor(&x).unwrap(), DType::I64).unwrap(),
        None,
        false,
    )
    .unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        values(&eval(&[x], &g, &[vec64(&[1.5, 2.5])])[0]),
        vec![0.0, 0.0]
    );
}

#[test]
fn float32_gradients_stay_float32() {
    let x = vector("x", DType::F32);
    let cost = b::sum(&b::mul(&b::exp(&x).unwrap(), &c(2.0)).unwrap(), None, false).unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(g[0].dtype(), DType::F32);
    let out = eval(
        &[x],
        &g,
        &[Tensor::from_slice(&[0.0f32, 1.0], &[2]).unwrap()],
    );
    assert_eq!(out[0].dtype(), DType::F32);
    assert_close("2 exp(x)", &values(&out[0]), &[2.0, 2.0 * 1f64.exp()], 1e-6);
}

#[test]
fn gammaln_gradient_is_digamma() {
    // SciPy's psi at these points.
    let points = [1.0, 0.5, 10.0, -0.5, 0.1, 3.7];
    let want = [
        -0.5772156649015329,
        -1.9635100260214235,
        2.251752589066721,
        0.03648997397857652,
        -10.423754940411076,
        1.1671535393615113,
    ];
    let g = grad_at(&points, |x| {
        b::sum(&b::gammaln(x).unwrap(), None, false).unwrap()
    });
    assert_close("digamma", &g, &want, 1e-10);
}

#[test]
fn markers() {
    let x = vector("x", DType::F64);
    let p = vec64(&[-3.0, 0.5, 4.0]);
    // Values are unchanged.
    let marked = [
        zero_grad(&x).unwrap(),
        disconnected_grad(&x).unwrap(),
        grad_clip(&x, &c(-1.0), &c(1.0)).unwrap(),
    ];
    for m in &marked {
        assert_eq!(
            values(
                &eval(
                    std::slice::from_ref(&x),
                    std::slice::from_ref(m),
                    std::slice::from_ref(&p)
                )[0]
            ),
            values(&p)
        );
    }
    // zero_grad: x·zero_grad(x) has gradient zero_grad(x) = x (not 2x).
    let cost = b::sum(&b::mul(&x, &marked[0]).unwrap(), None, false).unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        values(&eval(std::slice::from_ref(&x), &g, std::slice::from_ref(&p))[0]),
        values(&p)
    );
    // disconnected_grad: same, and alone it is disconnected (zeros under Ignore).
    let cost = b::sum(&b::mul(&x, &marked[1]).unwrap(), None, false).unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        values(&eval(std::slice::from_ref(&x), &g, std::slice::from_ref(&p))[0]),
        values(&p)
    );
    let alone = b::sum(&b::sqr(&marked[1]).unwrap(), None, false).unwrap();
    let ignore = GradOptions {
        disconnected_inputs: DisconnectedInputs::Ignore,
        ..GradOptions::default()
    };
    let g = grad(&alone, std::slice::from_ref(&x), &ignore)
        .unwrap()
        .remove(0)
        .into_var()
        .unwrap();
    assert_eq!(
        values(&eval(std::slice::from_ref(&x), &[g], std::slice::from_ref(&p))[0]),
        vec![0.0; 3]
    );
    // grad_clip: the gradient 2x·… is clipped to [-1, 1] where it enters x.
    let cost = b::sum(&b::sqr(&marked[2]).unwrap(), None, false).unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        values(&eval(std::slice::from_ref(&x), &g, std::slice::from_ref(&p))[0]),
        vec![-1.0, 1.0, 1.0]
    );
    // Symbolic bounds work too.
    let lo = scalar("lo", DType::F64);
    let clipped = grad_clip(&x, &lo, &c(0.5)).unwrap();
    let cost = b::sum(&b::mul(&clipped, &c(3.0)).unwrap(), None, false).unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    assert_eq!(
        values(&eval(&[x, lo], &g, &[p, Tensor::scalar(-5.0)])[0]),
        vec![0.5; 3]
    );
}

#[test]
fn undefined_grad_is_an_error_only_where_the_gradient_is_asked_for() {
    let x = vector("x", DType::F64);
    let y = vector("y", DType::F64);
    let u = undefined_grad(&x).unwrap();
    let p = vec64(&[-3.0, 0.5, 4.0]);
    assert_eq!(
        values(
            &eval(
                std::slice::from_ref(&x),
                std::slice::from_ref(&u),
                std::slice::from_ref(&p)
            )[0]
        ),
        values(&p)
    );
    let cost = b::sum(&b::mul(&u, &y).unwrap(), None, false).unwrap();
    // Through the marker: PyTensor's NullType error, naming the marked variable.
    match grad(&cost, std::slice::from_ref(&x), &GradOptions::default()) {
        Err(e @ GradError::Undefined { .. }) => {
            assert!(e.to_string().contains("undefined_grad of 'x'"), "{e}")
        }
        other => panic!("expected an undefined gradient, got {other:?}"),
    }
    let ret = GradOptions {
        null_gradients: NullGradients::Return,
        ..GradOptions::default()
    };
    let g = grad(&cost, std::slice::from_ref(&x), &ret)
        .unwrap()
        .remove(0);
    assert!(g.into_var().is_none());
    // Not through it: the gradient with respect to y is u = x.
    let g = grad_vars(&cost, std::slice::from_ref(&y)).unwrap();
    assert_eq!(
        values(&eval(&[x, y], &g, &[p.clone(), vec64(&[1.0, 1.0, 1.0])])[0]),
        values(&p)
    );
}

#[test]
fn an_undefined_gradient_does_not_reach_inputs_only_shapes_depend_on() {
    // `eye(x.shape[0])` has no gradient with respect to its integer size, but the size
    // depends only on x's shape: x's gradient stays defined (PyTensor's behaviour).
    let x = vector("x", DType::F64);
    let n = b::shape_i(&x, 0).unwrap();
    let zero = Var::int_constant(0);
    let eye = b::eye(&n, &n, &zero, DType::F64).unwrap();
    let cost = b::sum(
        &b::mul(&b::dot(&eye, &x).unwrap(), &x).unwrap(),
        None,
        false,
    )
    .unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&x)).unwrap();
    let p = vec64(&[-3.0, 0.5, 4.0]);
    assert_eq!(values(&eval(&[x], &g, &[p])[0]), vec![-6.0, 1.0, 8.0]);
}
