//! Second derivatives and forward mode, checked numerically: Hessians against finite
//! differences of the gradient, Hessian-vector products, Jacobians, and pushforwards against
//! finite differences of the function (and against pullbacks, by duality).

use crate::gradient_common;

use gradient_common::{Rng, assert_close, check, eval, values};
use oxtensor::gradient::{
    GradOptions, disconnected_grad, grad_clip, grad_vars, hessian, hessian_vector_product,
    jacobian, pullback, pushforward, zero_grad,
};
use oxtensor::ops::{self as b, Idx};
use oxtensor::oxtensor_graph::ScalarOp;
use oxtensor::{DType, Tensor, Var, tensor};

/// `args` with `args[i]`'s flat element `j` moved by `delta`.
fn moved(args: &[Tensor], i: usize, j: usize, delta: f64) -> Vec<Tensor> {
    let mut out = args.to_vec();
    let mut v = values(&args[i]);
    v[j] += delta;
    out[i] = Tensor::from_slice(&v, args[i].shape()).unwrap();
    out
}

/// Central differences of `f` (inputs → one output) with respect to `inputs[i]`: one column of
/// `numel(output)` per element of `args[i]`, flattened output-major (`J[o * n + j]`).
fn numeric_jacobian(inputs: &[Var], f: &Var, args: &[Tensor], i: usize) -> Vec<f64> {
    let eps = 1e-6;
    let n = args[i].numel();
    let cols: Vec<Vec<f64>> = (0..n)
        .map(|j| {
            let plus = values(&eval(inputs, std::slice::from_ref(f), &moved(args, i, j, eps))[0]);
            let minus = values(&eval(inputs, std::slice::from_ref(f), &moved(args, i, j, -eps))[0]);
            plus.iter()
                .zip(&minus)
                .map(|(p, m)| (p - m) / (2.0 * eps))
                .collect()
        })
        .collect();
    let m = cols.first().map_or(0, Vec::len);
    (0..m)
        .flat_map(|o| cols.iter().map(move |c| c[o]))
        .collect()
}

const SMOOTH: [(ScalarOp, f64, f64); 22] = [
    (ScalarOp::Exp, -1.0, 1.0),
    (ScalarOp::Exp2, -1.0, 1.0),
    (ScalarOp::Expm1, -1.0, 1.0),
    (ScalarOp::Log, 0.5, 2.0),
    (ScalarOp::Log2, 0.5, 2.0),
    (ScalarOp::Log10, 0.5, 2.0),
    (ScalarOp::Log1p, -0.5, 1.0),
    (ScalarOp::Sqrt, 0.5, 2.0),
    (ScalarOp::Sqr, -1.0, 1.0),
    (ScalarOp::Reciprocal, 0.5, 2.0),
    (ScalarOp::Sin, -2.0, 2.0),
    (ScalarOp::Cos, -2.0, 2.0),
    (ScalarOp::Tan, -1.0, 1.0),
    (ScalarOp::Arcsin, -0.8, 0.8),
    (ScalarOp::Arctan, -2.0, 2.0),
    (ScalarOp::Tanh, -2.0, 2.0),
    (ScalarOp::Arcsinh, -2.0, 2.0),
    (ScalarOp::Arccosh, 1.5, 3.0),
    (ScalarOp::Sigmoid, -2.0, 2.0),
    (ScalarOp::Softplus, -2.0, 2.0),
    (ScalarOp::Erf, -1.5, 1.5),
    (ScalarOp::Gammaln, 0.5, 4.0),
];

#[test]
fn second_derivatives_of_smooth_scalar_ops() {
    // verify_grad of the gradient checks the symbolic second derivative against finite
    // differences of the symbolic first derivative.
    let mut rng = Rng(21);
    for (op, lo, hi) in SMOOTH {
        let p = rng.tensor(&[2, 3], lo, hi, 0.0);
        check(
            &format!("d²/dx² {op}"),
            |xs| {
                let cost = b::sum(&b::elemwise(op, xs)?, None, false)?;
                Ok(grad_vars(&cost, xs)?.remove(0))
            },
            &[p],
        );
    }
    for op in [
        ScalarOp::Pow,
        ScalarOp::TrueDiv,
        ScalarOp::Arctan2,
        ScalarOp::Mul,
    ] {
        let a = rng.tensor(&[3], 0.5, 2.0, 0.0);
        let c = rng.tensor(&[1], 0.5, 2.0, 0.0);
        for k in 0..2 {
            check(
                &format!("d²/dx{k} {op}"),
                |xs| {
                    let cost = b::sum(&b::sqr(&b::elemwise(op, xs)?)?, None, false)?;
                    Ok(grad_vars(&cost, xs)?.remove(k))
                },
                &[a.clone(), c.clone()],
            );
        }
    }
}

/// Compiles `hessian(cost(x), x)` and compares it with finite differences of `grad`.
fn hessian_matches(what: &str, shape: &[usize], point: Tensor, cost: impl Fn(&Var) -> Var) {
    let static_shape: Vec<Option<usize>> = shape.iter().map(|&d| Some(d)).collect();
    let x = tensor("x", DType::F64, &static_shape);
    let c = cost(&x);
    let h = hessian(&c, std::slice::from_ref(&x), &GradOptions::default())
        .unwrap()
        .remove(0);
    let mut want_shape = shape.to_vec();
    want_shape.extend_from_slice(shape);
    let got = eval(std::slice::from_ref(&x), &[h], std::slice::from_ref(&point));
    assert_eq!(got[0].shape(), want_shape.as_slice(), "{what}");
    let g = grad_vars(&c, std::slice::from_ref(&x)).unwrap().remove(0);
    let want = numeric_jacobian(std::slice::from_ref(&x), &g, &[point], 0);
    assert_close(what, &values(&got[0]), &want, 1e-5);
}

#[test]
fn hessians_of_scalar_ops_matmul_reductions_and_indexing() {
    let mut rng = Rng(22);
    for (op, lo, hi) in SMOOTH {
        let p = rng.tensor(&[3], lo, hi, 0.0);
        hessian_matches(&format!("hessian {op}"), &[3], p, |x| {
            b::sum(
                &b::mul(
                    &b::elemwise(op, std::slice::from_ref(x)).unwrap(),
                    &b::sum(x, None, false).unwrap(),
                )
                .unwrap(),
                None,
                false,
            )
            .unwrap()
        });
    }
    let w = Var::constant(rng.tensor(&[3, 2], -1.0, 1.0, 0.0));
    hessian_matches(
        "hessian of matmul",
        &[2, 3],
        rng.tensor(&[2, 3], -1.0, 1.0, 0.0),
        |a| b::sum(&b::tanh(&b::matmul(a, &w).unwrap()).unwrap(), None, false).unwrap(),
    );
    hessian_matches(
        "hessian of x @ x",
        &[2, 2],
        rng.tensor(&[2, 2], -1.0, 1.0, 0.0),
        |a| b::sum(&b::sqr(&b::matmul(a, a).unwrap()).unwrap(), None, false).unwrap(),
    );
    hessian_matches(
        "hessian of logsumexp",
        &[2, 3],
        rng.tensor(&[2, 3], -1.0, 1.0, 0.0),
        |x| {
            let lse = b::log(&b::sum(&b::exp(x).unwrap(), Some(&[1]), false).unwrap()).unwrap();
            b::sum(&lse, None, false).unwrap()
        },
    );
    hessian_matches(
        "hessian of prod",
        &[4],
        rng.tensor(&[4], 0.5, 1.5, 0.0),
        |x| b::prod(x, None, false).unwrap(),
    );
    hessian_matches(
        "hessian of prod with a zero",
        &[3],
        Tensor::from_slice(&[0.0, 1.5, -0.5], &[3]).unwrap(),
        |x| b::prod(x, None, false).unwrap(),
    );
    hessian_matches(
        "hessian of prod with two zeros",
        &[4],
        Tensor::from_slice(&[0.0, 2.0, 0.0, 3.0], &[4]).unwrap(),
        |x| b::prod(x, None, false).unwrap(),
    );
    hessian_matches(
        "hessian of max",
        &[2, 3],
        rng.tensor(&[2, 3], -1.0, 1.0, 0.0),
        |x| {
            b::sum(
                &b::sqr(&b::max(x, Some(&[0]), false).unwrap()).unwrap(),
                None,
                false,
            )
            .unwrap()
        },
    );
    hessian_matches(
        "hessian of variance",
        &[4],
        rng.tensor(&[4], -1.0, 1.0, 0.0),
        |x| b::var(x, None, 0, false).unwrap(),
    );
    let idx = Var::constant(Tensor::from_slice(&[0i64, 0, 2], &[3]).unwrap());
    hessian_matches(
        "hessian through indexing",
        &[4],
        rng.tensor(&[4], -1.0, 1.0, 0.0),
        |x| {
            let cube = b::sum(
                &b::elemwise(
                    ScalarOp::Pow,
                    &[
                        x.at(&[Idx::range(Some(1), Some(3), None)]),
                        Var::scalar_constant(3.0, DType::F64),
                    ],
                )
                .unwrap(),
                None,
                false,
            )
            .unwrap();
            let taken =
                b::sum(&b::sqr(&b::take(x, &idx, 0).unwrap()).unwrap(), None, false).unwrap();
            let updated = b::inc_subtensor(
                &x.at(&[Idx::int(3)]),
                &b::sqr(&x.at(&[Idx::int(0)])).unwrap(),
            )
            .unwrap();
            let tail = b::sum(&b::sin(&updated).unwrap(), None, false).unwrap();
            b::elemwise(ScalarOp::Add, &[cube, taken, tail]).unwrap()
        },
    );
}

#[test]
fn hessian_vector_products_include_cross_terms() {
    let mut rng = Rng(23);
    let x = tensor("x", DType::F64, &[None]);
    let y = tensor("y", DType::F64, &[None, None]);
    let v = tensor("v", DType::F64, &[None]);
    let w = tensor("w", DType::F64, &[None, None]);
    let cost = b::sum(
        &b::tanh(&b::matmul(&y, &b::sin(&x).unwrap()).unwrap()).unwrap(),
        None,
        false,
    )
    .unwrap();
    let hv = hessian_vector_product(
        &cost,
        &[x.clone(), y.clone()],
        &[v.clone(), w.clone()],
        &GradOptions::default(),
    )
    .unwrap();
    let g = grad_vars(&cost, &[x.clone(), y.clone()]).unwrap();
    let (xv, yv) = (
        rng.tensor(&[3], -1.0, 1.0, 0.0),
        rng.tensor(&[2, 3], -1.0, 1.0, 0.0),
    );
    let (vv, wv) = (
        rng.tensor(&[3], -1.0, 1.0, 0.0),
        rng.tensor(&[2, 3], -1.0, 1.0, 0.0),
    );
    let inputs = [x.clone(), y.clone(), v, w];
    let got = eval(
        &inputs,
        &hv,
        &[xv.clone(), yv.clone(), vv.clone(), wv.clone()],
    );
    // Finite differences of the gradient along (v, w).
    let eps = 1e-6;
    let shift = |s: f64| {
        let a: Vec<f64> = values(&xv)
            .iter()
            .zip(values(&vv))
            .map(|(a, d)| a + s * d)
            .collect();
        let c: Vec<f64> = values(&yv)
            .iter()
            .zip(values(&wv))
            .map(|(a, d)| a + s * d)
            .collect();
        eval(
            &[x.clone(), y.clone()],
            &g,
            &[
                Tensor::from_slice(&a, &[3]).unwrap(),
                Tensor::from_slice(&c, &[2, 3]).unwrap(),
            ],
        )
    };
    let (plus, minus) = (shift(eps), shift(-eps));
    for k in 0..2 {
        let want: Vec<f64> = values(&plus[k])
            .iter()
            .zip(values(&minus[k]))
            .map(|(p, m)| (p - m) / (2.0 * eps))
            .collect();
        assert_close(&format!("hvp {k}"), &values(&got[k]), &want, 1e-5);
    }
}

#[test]
fn jacobians_match_finite_differences() {
    let mut rng = Rng(24);
    let x = tensor("x", DType::F64, &[Some(3)]);
    let m = tensor("m", DType::F64, &[Some(2), Some(2)]);
    let f = b::concatenate(
        &[
            b::mul(&x, &b::sum(&m, None, false).unwrap()).unwrap(),
            b::reshape(&b::exp(&m).unwrap(), &[-1]).unwrap(),
        ],
        0,
    )
    .unwrap();
    let f2 = b::reshape(&f, &[7, 1]).unwrap();
    let js = jacobian(&f2, &[x.clone(), m.clone()], &GradOptions::default()).unwrap();
    assert_eq!(js[0].ty().shape.as_slice(), &[Some(7), Some(1), Some(3)]);
    assert_eq!(
        js[1].ty().shape.as_slice(),
        &[Some(7), Some(1), Some(2), Some(2)]
    );
    let args = [
        rng.tensor(&[3], -1.0, 1.0, 0.0),
        rng.tensor(&[2, 2], -1.0, 1.0, 0.0),
    ];
    let inputs = [x.clone(), m.clone()];
    let got = eval(&inputs, &js, &args);
    for (k, j) in got.iter().enumerate() {
        let want = numeric_jacobian(&inputs, &f2, &args, k);
        assert_close(&format!("jacobian {k}"), &values(j), &want, 1e-6);
    }
    // A scalar expression: the jacobian is the gradient.
    let s = b::sum(&b::sqr(&x).unwrap(), None, false).unwrap();
    let j = jacobian(&s, std::slice::from_ref(&x), &GradOptions::default()).unwrap();
    let got = eval(std::slice::from_ref(&x), &j, &args[..1]);
    let want: Vec<f64> = values(&args[0]).iter().map(|v| 2.0 * v).collect();
    assert_close("jacobian of a scalar", &values(&got[0]), &want, 1e-12);
    // An empty expression: an empty jacobian.
    let empty = x.at(&[Idx::range(Some(0), Some(0), None)]);
    let j = jacobian(&empty, std::slice::from_ref(&x), &GradOptions::default()).unwrap();
    let got = eval(std::slice::from_ref(&x), &j, &args[..1]);
    assert_eq!(got[0].shape(), &[0, 3]);
}

#[test]
fn pushforward_matches_finite_differences_and_duality() {
    let mut rng = Rng(25);
    let x = tensor("x", DType::F64, &[None]);
    let a = tensor("a", DType::F64, &[None, None]);
    let v = tensor("v", DType::F64, &[None]);
    let va = tensor("va", DType::F64, &[None, None]);
    let idx = Var::constant(Tensor::from_slice(&[2i64, 0, 2], &[3]).unwrap());
    let outputs = vec![
        b::tanh(&b::matmul(&a, &x).unwrap()).unwrap(),
        b::max(&b::exp(&a).unwrap(), Some(&[1]), false).unwrap(),
        b::mul(
            &b::take(&x, &idx, 0).unwrap(),
            &b::sum(&a, None, false).unwrap(),
        )
        .unwrap(),
        b::prod(&x, None, false).unwrap(),
        b::transpose(
            &b::concatenate(&[a.clone(), b::sqr(&a).unwrap()], 0).unwrap(),
            None,
        )
        .unwrap(),
        b::argmax(&x, None, false).unwrap(),
        b::clip(
            &x,
            &Var::scalar_constant(-0.5, DType::F64),
            &Var::scalar_constant(0.5, DType::F64),
        )
        .unwrap(),
    ];
    let jvp = pushforward(&outputs, &[x.clone(), a.clone()], &[v.clone(), va.clone()]).unwrap();
    let (xv, av) = (
        rng.tensor(&[3], -1.0, 1.0, 0.0),
        rng.tensor(&[2, 3], -1.0, 1.0, 0.0),
    );
    let (vv, vav) = (
        rng.tensor(&[3], -1.0, 1.0, 0.0),
        rng.tensor(&[2, 3], -1.0, 1.0, 0.0),
    );
    let inputs = [x.clone(), a.clone(), v.clone(), va.clone()];
    let got = eval(
        &inputs,
        &jvp,
        &[xv.clone(), av.clone(), vv.clone(), vav.clone()],
    );
    let eps = 1e-6;
    let at = |s: f64| {
        let p: Vec<f64> = values(&xv)
            .iter()
            .zip(values(&vv))
            .map(|(a, d)| a + s * d)
            .collect();
        let q: Vec<f64> = values(&av)
            .iter()
            .zip(values(&vav))
            .map(|(a, d)| a + s * d)
            .collect();
        eval(
            &[x.clone(), a.clone()],
            &outputs,
            &[
                Tensor::from_slice(&p, &[3]).unwrap(),
                Tensor::from_slice(&q, &[2, 3]).unwrap(),
            ],
        )
    };
    let (plus, minus) = (at(eps), at(-eps));
    for k in 0..outputs.len() {
        let want: Vec<f64> = values(&plus[k])
            .iter()
            .zip(values(&minus[k]))
            .map(|(p, m)| (p - m) / (2.0 * eps))
            .collect();
        assert_eq!(got[k].shape(), plus[k].shape(), "output {k}");
        assert_close(&format!("jvp of output {k}"), &values(&got[k]), &want, 1e-5);
    }
    // Duality: ⟨u, J v⟩ = ⟨Jᵀ u, v⟩ for the first output.
    let u = tensor("u", DType::F64, &[None]);
    let vjp = pullback(
        &outputs[..1],
        &[x.clone(), a.clone()],
        std::slice::from_ref(&u),
    )
    .unwrap();
    let uv = rng.tensor(&[2], -1.0, 1.0, 0.0);
    let mut all = inputs.to_vec();
    all.push(u);
    let mut outs = vec![jvp[0].clone()];
    outs.extend(vjp);
    let r = eval(&all, &outs, &[xv, av, vv.clone(), vav.clone(), uv.clone()]);
    let dot = |p: &Tensor, q: &Tensor| {
        values(p)
            .iter()
            .zip(values(q))
            .map(|(a, c)| a * c)
            .sum::<f64>()
    };
    let lhs = dot(&uv, &r[0]);
    let rhs = dot(&r[1], &vv) + dot(&r[2], &vav);
    assert!(
        (lhs - rhs).abs() < 1e-12 * (1.0 + lhs.abs()),
        "{lhs} vs {rhs}"
    );
}

#[test]
fn pushforward_of_outputs_independent_of_wrt_is_zero() {
    let x = tensor("x", DType::F64, &[None]);
    let y = tensor("y", DType::F64, &[None]);
    let v = tensor("v", DType::F64, &[None]);
    let jvp = pushforward(
        &[b::exp(&y).unwrap()],
        std::slice::from_ref(&x),
        std::slice::from_ref(&v),
    )
    .unwrap();
    let t = Tensor::from_slice(&[1.0, 2.0], &[2]).unwrap();
    let got = eval(&[x, y, v], &jvp, &[t.clone(), t.clone(), t]);
    assert_eq!(values(&got[0]), vec![0.0, 0.0]);
}

#[test]
fn pushforward_through_markers() {
    // grad_clip passes tangents (its bounds contain 0); zero_grad and disconnected_grad stop
    // them. grad_clip's pullback is a clip of the cotangent, so this also covers pullback
    // graphs that still mention the cotangent placeholder.
    let x = tensor("x", DType::F64, &[None]);
    let v = tensor("v", DType::F64, &[None]);
    let two = Var::scalar_constant(2.0, DType::F64);
    let clipped = grad_clip(
        &x,
        &Var::scalar_constant(-1.0, DType::F64),
        &Var::scalar_constant(1.0, DType::F64),
    )
    .unwrap();
    let outputs = [
        b::mul(&clipped, &two).unwrap(),
        b::mul(&zero_grad(&x).unwrap(), &two).unwrap(),
        b::add(&disconnected_grad(&x).unwrap(), &x).unwrap(),
    ];
    let jvp = pushforward(&outputs, std::slice::from_ref(&x), std::slice::from_ref(&v)).unwrap();
    let got = eval(
        &[x, v],
        &jvp,
        &[
            Tensor::from_slice(&[0.5, 3.0], &[2]).unwrap(),
            Tensor::from_slice(&[5.0, -1.0], &[2]).unwrap(),
        ],
    );
    assert_eq!(values(&got[0]), vec![10.0, -2.0]);
    assert_eq!(values(&got[1]), vec![0.0, 0.0]);
    assert_eq!(values(&got[2]), vec![5.0, -1.0]);
}
