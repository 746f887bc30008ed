//! `verify_grad` for every differentiable `Op`: reductions over several axes, layout ops,
//! joins and splits, indexing and updates, matrix products in all their shapes, and the ops
//! whose inputs are disconnected (shapes, argmax, eye).

use crate::gradient_common;

use gradient_common::{Rng, check};
use oxtensor::ops::{self as b, Idx};
use oxtensor::{DType, Tensor, Var};

fn ints(values: &[i64], shape: &[usize]) -> Var {
    Var::constant(Tensor::from_slice(values, shape).unwrap())
}

#[test]
fn sum_over_axes() {
    let mut rng = Rng(1);
    for axes in [
        None,
        Some(vec![0]),
        Some(vec![1]),
        Some(vec![0, 2]),
        Some(vec![-1, 0]),
        Some(vec![0, 1, 2]),
    ] {
        for keepdims in [false, true] {
            let shape = rng.shape(3);
            let p = rng.tensor(&shape, -2.0, 2.0, 0.0);
            let axes = axes.clone();
            check(
                &format!("sum {axes:?} keepdims={keepdims}"),
                |xs| Ok(b::sum(&b::sqr(&xs[0])?, axes.as_deref(), keepdims)?),
                &[p],
            );
        }
    }
    // A reduced dimension of static extent 1.
    let p = rng.tensor(&[2, 1, 3], -1.0, 1.0, 0.0);
    check(
        "sum over a static-1 axis",
        |xs| Ok(b::sum(&xs[0], Some(&[1]), false)?),
        &[p],
    );
}

#[test]
fn prod_including_zeros() {
    let mut rng = Rng(2);
    for axes in [None, Some(vec![0]), Some(vec![1]), Some(vec![0, 1])] {
        let p = rng.tensor(&[3, 2], 0.5, 1.5, 0.0);
        let axes2 = axes.clone();
        check(
            &format!("prod {axes:?}"),
            |xs| Ok(b::prod(&xs[0], axes2.as_deref(), false)?),
            &[p],
        );
        // One zero, then two zeros in the same group: the product is a polynomial, smooth
        // everywhere, and the rule is exact there.
        let one_zero = Tensor::from_slice(&[0.0, 1.5, -0.7, 2.0, 1.1, 0.9], &[3, 2]).unwrap();
        let two_zeros = Tensor::from_slice(&[0.0, 1.5, 0.0, 2.0, 1.1, 0.0], &[3, 2]).unwrap();
        for p in [one_zero, two_zeros] {
            let axes2 = axes.clone();
            check(
                &format!("prod {axes:?} with zeros"),
                |xs| Ok(b::prod(&xs[0], axes2.as_deref(), false)?),
                &[p],
            );
        }
    }
}

#[test]
fn max_min_over_axes() {
    let mut rng = Rng(3);
    for axes in [None, Some(vec![0]), Some(vec![1, 2])] {
        let shape = rng.shape(3);
        let p = rng.tensor(&shape, -2.0, 2.0, 0.0);
        let a2 = axes.clone();
        check(
            &format!("max {axes:?}"),
            |xs| Ok(b::max(&xs[0], a2.as_deref(), false)?),
            std::slice::from_ref(&p),
        );
        let a2 = axes.clone();
        check(
            &format!("min {axes:?}"),
            |xs| Ok(b::min(&xs[0], a2.as_deref(), true)?),
            &[p],
        );
    }
    // mean, var, std are compositions.
    let p = rng.tensor(&[3, 4], -2.0, 2.0, 0.0);
    check(
        "mean",
        |xs| Ok(b::mean(&xs[0], Some(&[1]), false)?),
        std::slice::from_ref(&p),
    );
    check(
        "var",
        |xs| Ok(b::var(&xs[0], Some(&[0]), 1, false)?),
        std::slice::from_ref(&p),
    );
    check("std", |xs| Ok(b::std(&xs[0], None, 0, false)?), &[p]);
}

#[test]
fn layout_ops() {
    let mut rng = Rng(4);
    let p = rng.tensor(&[2, 3, 4], -2.0, 2.0, 0.0);
    check(
        "transpose",
        |xs| Ok(b::transpose(&b::sqr(&xs[0])?, Some(&[2, 0, 1]))?),
        std::slice::from_ref(&p),
    );
    check(
        "expand_dims",
        |xs| Ok(b::expand_dims(&xs[0], 1)?),
        std::slice::from_ref(&p),
    );
    check(
        "reshape",
        |xs| Ok(b::reshape(&b::exp(&xs[0])?, &[4, -1])?),
        std::slice::from_ref(&p),
    );
    check(
        "flatten",
        |xs| Ok(b::flatten(&xs[0], 2)?),
        std::slice::from_ref(&p),
    );
    check(
        "specify_shape",
        |xs| Ok(b::specify_shape(&xs[0], &[Some(2), None, Some(4)])?),
        std::slice::from_ref(&p),
    );
    // Dropping dimensions of extent 1 (static, from the point's shape).
    let q = rng.tensor(&[3, 1, 2, 1], -2.0, 2.0, 0.0);
    check(
        "squeeze",
        |xs| Ok(b::squeeze(&b::sin(&xs[0])?, None)?),
        std::slice::from_ref(&q),
    );
    check(
        "dimshuffle drop and insert",
        |xs| Ok(b::dimshuffle(&xs[0], &[Some(2), None, Some(0)])?),
        &[q],
    );
    // alloc broadcasts a value of static extent 1 and pads leading dimensions.
    let v = rng.tensor(&[1, 3], -2.0, 2.0, 0.0);
    check(
        "alloc",
        |xs| {
            Ok(b::mul(
                &b::alloc(
                    &xs[0],
                    &[
                        Var::int_constant(4),
                        Var::int_constant(2),
                        Var::int_constant(3),
                    ],
                )?,
                &b::cast(
                    &b::arange(
                        &Var::int_constant(0),
                        &Var::int_constant(3),
                        &Var::int_constant(1),
                        DType::F64,
                    )?,
                    DType::F64,
                )?,
            )?)
        },
        &[v],
    );
    // Shapes and extents used as values: disconnected, the value path still differentiates.
    check(
        "shape_i times x",
        |xs| {
            Ok(b::mul(
                &xs[0],
                &b::cast(&b::shape_i(&xs[0], 0)?, DType::F64)?,
            )?)
        },
        std::slice::from_ref(&p),
    );
    check(
        "sum of the shape",
        |xs| {
            Ok(b::add(
                &b::sum(&b::cast(&b::shape(&xs[0])?, DType::F64)?, None, false)?,
                &b::sum(&xs[0], None, false)?,
            )?)
        },
        &[p],
    );
}

#[test]
fn arange_make_vector_eye_argmax() {
    let start = Tensor::scalar(0.3f64);
    let step = Tensor::scalar(1.1f64);
    check(
        "arange(start, 5, step)",
        |xs| {
            Ok(b::sqr(&b::arange(
                &xs[0],
                &Var::scalar_constant(5.0, DType::F64),
                &xs[1],
                DType::F64,
            )?)?)
        },
        &[start, step],
    );
    let (a, c) = (Tensor::scalar(0.7f64), Tensor::scalar(-1.2f64));
    check(
        "make_vector",
        |xs| {
            Ok(b::exp(&b::make_vector(
                &[xs[0].clone(), xs[1].clone(), xs[0].clone()],
                DType::F64,
            )?)?)
        },
        &[a, c],
    );
    let m = Rng(5).tensor(&[3, 2], -2.0, 2.0, 0.0);
    check(
        "eye @ x",
        |xs| {
            Ok(b::matmul(
                &b::eye(
                    &Var::int_constant(3),
                    &Var::int_constant(3),
                    &Var::int_constant(1),
                    DType::F64,
                )?,
                &xs[0],
            )?)
        },
        std::slice::from_ref(&m),
    );
    check(
        "x * argmax(x)",
        |xs| {
            Ok(b::mul(
                &xs[0],
                &b::cast(&b::argmax(&xs[0], Some(0), true)?, DType::F64)?,
            )?)
        },
        &[m],
    );
}

#[test]
fn join_stack_split() {
    let mut rng = Rng(6);
    let a = rng.tensor(&[2, 3], -2.0, 2.0, 0.0);
    let c = rng.tensor(&[1, 3], -2.0, 2.0, 0.0);
    let d = rng.tensor(&[4, 3], -2.0, 2.0, 0.0);
    check(
        "concatenate axis 0",
        |xs| Ok(b::sqr(&b::concatenate(xs, 0)?)?),
        &[a.clone(), c, d],
    );
    let e = rng.tensor(&[2, 2], -2.0, 2.0, 0.0);
    check(
        "concatenate axis 1",
        |xs| Ok(b::concatenate(&[xs[0].clone(), b::exp(&xs[1])?], 1)?),
        &[a.clone(), e],
    );
    let f = rng.tensor(&[2, 3], -2.0, 2.0, 0.0);
    check("stack", |xs| Ok(b::stack(xs, 1)?), &[a, f]);
    let x = rng.tensor(&[5, 2], -2.0, 2.0, 0.0);
    check(
        "split, all pieces used",
        |xs| {
            let p = b::split(&xs[0], &[Var::int_constant(2), Var::int_constant(3)], 0)?;
            Ok(b::concatenate(&[b::sqr(&p[1])?, b::sin(&p[0])?], 0)?)
        },
        std::slice::from_ref(&x),
    );
    check(
        "split, one piece unused",
        |xs| {
            let p = b::split(
                &xs[0],
                &[
                    Var::int_constant(1),
                    Var::int_constant(3),
                    Var::int_constant(1),
                ],
                0,
            )?;
            Ok(b::mul(&p[1], &p[1])?)
        },
        &[x],
    );
}

#[test]
fn basic_indexing() {
    let mut rng = Rng(7);
    let x = rng.tensor(&[4, 5], -2.0, 2.0, 0.0);
    let cases: Vec<(&str, Vec<Idx>)> = vec![
        ("x[1]", vec![Idx::int(1)]),
        ("x[-1, 2]", vec![Idx::int(-1), Idx::int(2)]),
        ("x[1:3]", vec![Idx::range(Some(1), Some(3), None)]),
        (
            "x[::2, 1:]",
            vec![
                Idx::range(None, None, Some(2)),
                Idx::range(Some(1), None, None),
            ],
        ),
        (
            "x[::-1, ::-2]",
            vec![
                Idx::range(None, None, Some(-1)),
                Idx::range(None, None, Some(-2)),
            ],
        ),
        (
            "x[:, None, 3]",
            vec![Idx::full(), Idx::NewAxis, Idx::int(3)],
        ),
    ];
    for (what, idx) in cases {
        check(
            what,
            |xs| Ok(b::sqr(&b::subtensor(&xs[0], &idx)?)?),
            std::slice::from_ref(&x),
        );
    }
}

#[test]
fn updates_of_regions() {
    let mut rng = Rng(8);
    let x = rng.tensor(&[4, 3], -2.0, 2.0, 0.0);
    let y = rng.tensor(&[2, 3], -2.0, 2.0, 0.0);
    let row = rng.tensor(&[3], -2.0, 2.0, 0.0);
    let region = [Idx::range(Some(1), Some(3), None)];
    for set in [false, true] {
        let name = if set {
            "set_subtensor"
        } else {
            "inc_subtensor"
        };
        let update = |t: &Var, v: &Var| {
            if set {
                b::set_subtensor(t, v)
            } else {
                b::inc_subtensor(t, v)
            }
        };
        check(
            name,
            |xs| {
                Ok(b::sqr(&update(
                    &b::subtensor(&xs[0], &region)?,
                    &b::exp(&xs[1])?,
                )?)?)
            },
            &[x.clone(), y.clone()],
        );
        // The value broadcasts into the region (a row into two rows): summed back.
        check(
            &format!("{name} broadcast"),
            |xs| Ok(b::sin(&update(&b::subtensor(&xs[0], &region)?, &xs[1])?)?),
            &[x.clone(), row.clone()],
        );
        // An integer index: the value has the region's rank.
        check(
            &format!("{name} at an index"),
            |xs| {
                Ok(b::sqr(&update(
                    &b::subtensor(&xs[0], &[Idx::int(2)])?,
                    &xs[1],
                )?)?)
            },
            &[x.clone(), row.clone()],
        );
    }
}

#[test]
fn integer_array_indexing() {
    let mut rng = Rng(9);
    let x = rng.tensor(&[4, 3], -2.0, 2.0, 0.0);
    // Repeated indices accumulate.
    let idx = ints(&[0, 2, 0, 3], &[4]);
    check(
        "take axis 0 repeated",
        |xs| Ok(b::sqr(&b::take(&xs[0], &idx, 0)?)?),
        std::slice::from_ref(&x),
    );
    let idx2 = ints(&[2, -1, 0, 2], &[2, 2]);
    check(
        "take axis 1, 2-d indices",
        |xs| Ok(b::exp(&b::take(&xs[0], &idx2, 1)?)?),
        std::slice::from_ref(&x),
    );
    let y = rng.tensor(&[4, 3], -2.0, 2.0, 0.0);
    let row = rng.tensor(&[3], -2.0, 2.0, 0.0);
    for set in [false, true] {
        let name = if set {
            "set at indices"
        } else {
            "inc at indices"
        };
        let update = |t: &Var, v: &Var| {
            if set {
                b::set_subtensor(t, v)
            } else {
                b::inc_subtensor(t, v)
            }
        };
        let distinct = ints(&[3, 0, 1], &[3]);
        check(
            name,
            |xs| {
                Ok(b::sqr(&update(
                    &b::take(&xs[0], &distinct, 0)?,
                    &b::subtensor(&xs[1], &[Idx::range(None, Some(3), None)])?,
                )?)?)
            },
            &[x.clone(), y.clone()],
        );
        check(
            &format!("{name}, broadcast value"),
            |xs| Ok(b::sin(&update(&b::take(&xs[0], &distinct, 0)?, &xs[1])?)?),
            &[x.clone(), row.clone()],
        );
    }
    // inc with repeated indices: every duplicate adds.
    let repeated = ints(&[1, 1, 2], &[3]);
    check(
        "inc at repeated indices",
        |xs| {
            Ok(b::sqr(&b::inc_subtensor(
                &b::take(&xs[0], &repeated, 0)?,
                &xs[1],
            )?)?)
        },
        &[x, row],
    );
}

#[test]
fn matmul_in_every_shape() {
    let mut rng = Rng(10);
    let cases: Vec<(&str, Vec<usize>, Vec<usize>)> = vec![
        ("vector·vector", vec![3], vec![3]),
        ("matrix·vector", vec![2, 3], vec![3]),
        ("vector·matrix", vec![3], vec![3, 4]),
        ("matrix·matrix", vec![2, 3], vec![3, 4]),
        ("batch·matrix", vec![2, 2, 3], vec![3, 2]),
        ("matrix·batch", vec![2, 3], vec![3, 3, 2]),
        ("batch·vector", vec![2, 2, 3], vec![3]),
        ("vector·batch", vec![3], vec![2, 3, 2]),
        ("broadcast batch", vec![1, 2, 3], vec![3, 3, 2]),
        ("batch·batch", vec![2, 2, 3], vec![2, 3, 2]),
        ("4-d broadcast", vec![2, 1, 2, 3], vec![3, 3, 2]),
    ];
    for (what, sa, sb) in cases {
        let a = rng.tensor(&sa, -2.0, 2.0, 0.0);
        let c = rng.tensor(&sb, -2.0, 2.0, 0.0);
        check(
            what,
            |xs| Ok(b::tanh(&b::matmul(&xs[0], &xs[1])?)?),
            &[a, c],
        );
    }
    // The same operand on both sides (gradients from two uses add up).
    let m = rng.tensor(&[3, 3], -1.0, 1.0, 0.0);
    check("x @ x", |xs| Ok(b::matmul(&xs[0], &xs[0])?), &[m]);
}
