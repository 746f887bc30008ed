//! The extra ops (`Op::Extra`: cumsum/cumprod, sort/argsort, searchsorted, repeat, unique,
//! bincount, nonzero) and the compositions `take_along_axis`/`diff`, against plain-loop
//! references over random shapes with fixed seeds, in both backends; gradients by
//! `verify_grad`; build-time errors by text.

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::ops::extra as ex;
use oxtensor::{DType, Tensor, Var, function, tensor, vector};
use oxtensor_testkit::{Tol, assert_close};
use proptest::prelude::*;

// Only the value stream of the shared helpers is used here, not its random expressions.
#[allow(dead_code)]
use crate::random_graphs;
use random_graphs::pseudo_random;

// Only `run` is used here, not the list of modes.
#[allow(dead_code)]
use crate::both_backends;
use both_backends::run;

fn shape_strategy() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..5, 1..4)
}

/// Index of `(o, i, j)` in a C-order tensor split as (outer, n, inner) around an axis.
fn split(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    )
}

fn ref_cumulate(data: &[f64], shape: &[usize], axis: usize, mul: bool) -> Vec<f64> {
    let (outer, n, inner) = split(shape, axis);
    let mut out = data.to_vec();
    for o in 0..outer {
        for j in 0..inner {
            let mut acc = if mul { 1.0 } else { 0.0 };
            for i in 0..n {
                let k = (o * n + i) * inner + j;
                acc = if mul { acc * data[k] } else { acc + data[k] };
                out[k] = acc;
            }
        }
    }
    out
}

/// Insertion sort of each lane (stable; NaN last) returning `(values, source indices)`.
fn ref_sort(data: &[f64], shape: &[usize], axis: usize) -> (Vec<f64>, Vec<i64>) {
    let (outer, n, inner) = split(shape, axis);
    let mut vals = data.to_vec();
    let mut idx = vec![0i64; data.len()];
    let less = |a: f64, b: f64| (!a.is_nan() && b.is_nan()) || a < b;
    for o in 0..outer {
        for j in 0..inner {
            let mut lane: Vec<(f64, i64)> = (0..n)
                .map(|i| (data[(o * n + i) * inner + j], i as i64))
                .collect();
            for a in 1..n {
                let mut b = a;
                while b > 0 && less(lane[b].0, lane[b - 1].0) {
                    lane.swap(b, b - 1);
                    b -= 1;
                }
            }
            for (i, (v, s)) in lane.into_iter().enumerate() {
                vals[(o * n + i) * inner + j] = v;
                idx[(o * n + i) * inner + j] = s;
            }
        }
    }
    (vals, idx)
}

/// Values with ties and NaNs: rounded pseudo-random numbers.
fn values(n: usize, seed: u64, nans: bool) -> Vec<f64> {
    pseudo_random(n, seed)
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            if nans && i % 7 == 3 {
                f64::NAN
            } else {
                (v * 2.0).round() / 2.0
            }
        })
        .collect()
}

fn input(shape: &[usize]) -> Var {
    let s: Vec<Option<usize>> = shape.iter().map(|_| None).collect();
    tensor("x", DType::F64, &s)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, rng_seed: proptest::test_runner::RngSeed::Fixed(15), ..ProptestConfig::default() })]

    #[test]
    fn cumsum_and_cumprod_match_loops(shape in shape_strategy(), axis_pick in 0usize..3, seed in 0u64..1000) {
        let axis = axis_pick % shape.len();
        let n: usize = shape.iter().product();
        let data = pseudo_random(n, seed);
        let x = input(&shape);
        let outs = [ex::cumsum(&x, Some(axis as i64)).unwrap(), ex::cumprod(&x, Some(axis as i64)).unwrap()];
        let got = run(std::slice::from_ref(&x), &outs, &[Tensor::from_slice(&data, &shape).unwrap()]);
        for (k, mul) in [(0, false), (1, true)] {
            let want = Tensor::from_slice(&ref_cumulate(&data, &shape, axis, mul), &shape).unwrap();
            assert_close("cumulate", &got[k], &want, Tol::MATH_LIBRARIES.or_scaled(1e-13));
        }
    }

    #[test]
    fn sort_and_argsort_match_a_stable_insertion_sort(shape in shape_strategy(), axis_pick in 0usize..3, seed in 0u64..1000) {
        let axis = axis_pick % shape.len();
        let n: usize = shape.iter().product();
        let data = values(n, seed, true);
        let x = input(&shape);
        let outs = [ex::sort(&x, Some(axis as i64)).unwrap(), ex::argsort(&x, Some(axis as i64)).unwrap()];
        let got = run(std::slice::from_ref(&x), &outs, &[Tensor::from_slice(&data, &shape).unwrap()]);
        let (vals, idx) = ref_sort(&data, &shape, axis);
        let gv = got[0].to_vec::<f64>().unwrap();
        for (a, b) in gv.iter().zip(&vals) {
            prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        }
        prop_assert_eq!(got[1].to_vec::<i64>().unwrap(), idx);
    }

    #[test]
    fn searchsorted_counts_smaller_entries(len in 0usize..9, m in 1usize..9, seed in 0u64..1000, right in any::<bool>()) {
        let mut a = values(len, seed, false);
        a.sort_by(f64::total_cmp);
        let v = values(m, seed + 1, false);
        let (av, vv) = (vector("a", DType::F64), vector("v", DType::F64));
        let out = ex::searchsorted(&av, &vv, right, None).unwrap();
        let got = run(&[av, vv], &[out], &[Tensor::from_slice(&a, &[len]).unwrap(), Tensor::from_slice(&v, &[m]).unwrap()]);
        let want: Vec<i64> = v.iter().map(|x| a.iter().filter(|y| if right { *y <= x } else { *y < x }).count() as i64).collect();
        prop_assert_eq!(got[0].to_vec::<i64>().unwrap(), want);
    }

    #[test]
    fn repeat_copies_each_row_its_count(shape in shape_strategy(), axis_pick in 0usize..3, seed in 0u64..1000) {
        let axis = axis_pick % shape.len();
        let n: usize = shape.iter().product();
        let data = pseudo_random(n, seed);
        let counts: Vec<i64> = (0..shape[axis]).map(|i| ((seed as usize + i) % 3) as i64).collect();
        let x = input(&shape);
        let r = vector("r", DType::I64);
        let out = ex::repeat(&x, &r, Some(axis as i64)).unwrap();
        let got = run(&[x, r], &[out], &[Tensor::from_slice(&data, &shape).unwrap(), Tensor::from_slice(&counts, &[counts.len()]).unwrap()]);
        let (outer, len, inner) = split(&shape, axis);
        let mut want = Vec::new();
        for o in 0..outer {
            for (i, &c) in counts.iter().enumerate() {
                for _ in 0..c {
                    want.extend_from_slice(&data[(o * len + i) * inner..(o * len + i + 1) * inner]);
                }
            }
        }
        let mut wshape = shape.clone();
        wshape[axis] = counts.iter().sum::<i64>() as usize;
        prop_assert_eq!(got[0].shape(), &wshape[..]);
        prop_assert_eq!(got[0].to_vec::<f64>().unwrap(), want);
    }

    #[test]
    fn unique_bincount_and_nonzero_match_loops(shape in shape_strategy(), seed in 0u64..1000) {
        let n: usize = shape.iter().product();
        let ints: Vec<i64> = pseudo_random(n, seed).iter().map(|v| ((v + 2.0) * 2.0) as i64).collect();
        let s: Vec<Option<usize>> = shape.iter().map(|_| None).collect();
        let x = tensor("x", DType::I64, &s);
        let u = ex::unique(&x, true, true, true).unwrap();
        let flat = oxtensor::ops::flatten(&x, 1).unwrap();
        let bc = ex::bincount(&flat, None, 3).unwrap();
        let nz = ex::nonzero(&x).unwrap();
        let mut outs: Vec<Var> = u.to_vec();
        outs.push(bc);
        outs.push(nz);
        let got = run(std::slice::from_ref(&x), &outs, &[Tensor::from_slice(&ints, &shape).unwrap()]);
        let mut distinct = ints.clone();
        distinct.sort_unstable();
        distinct.dedup();
        prop_assert_eq!(got[0].to_vec::<i64>().unwrap(), distinct.clone());
        let first: Vec<i64> = distinct.iter().map(|d| ints.iter().position(|v| v == d).unwrap() as i64).collect();
        prop_assert_eq!(got[1].to_vec::<i64>().unwrap(), first);
        let inverse: Vec<i64> = ints.iter().map(|v| distinct.iter().position(|d| d == v).unwrap() as i64).collect();
        prop_assert_eq!(got[2].to_vec::<i64>().unwrap(), inverse);
        let counts: Vec<i64> = distinct.iter().map(|d| ints.iter().filter(|v| *v == d).count() as i64).collect();
        prop_assert_eq!(got[3].to_vec::<i64>().unwrap(), counts);
        let len = (*ints.iter().max().unwrap() as usize + 1).max(3);
        let bins: Vec<i64> = (0..len).map(|b| ints.iter().filter(|v| **v as usize == b).count() as i64).collect();
        prop_assert_eq!(got[4].to_vec::<i64>().unwrap(), bins);
        let hits: Vec<usize> = (0..n).filter(|&i| ints[i] != 0).collect();
        prop_assert_eq!(got[5].shape(), &[shape.len(), hits.len()][..]);
        let coords = got[5].to_vec::<i64>().unwrap();
        for (k, &h) in hits.iter().enumerate() {
            let mut rem = h;
            for d in (0..shape.len()).rev() {
                prop_assert_eq!(coords[d * hits.len() + k], (rem % shape[d]) as i64);
                rem /= shape[d];
            }
        }
    }

    #[test]
    fn take_along_axis_inverts_argsort(shape in shape_strategy(), axis_pick in 0usize..3, seed in 0u64..1000) {
        let axis = axis_pick % shape.len();
        let n: usize = shape.iter().product();
        let data = values(n, seed, false);
        let x = input(&shape);
        let a = Some(axis as i64);
        let sorted = ex::take_along_axis(&x, &ex::argsort(&x, a).unwrap(), a).unwrap();
        let got = run(std::slice::from_ref(&x), &[sorted, ex::sort(&x, a).unwrap()], &[Tensor::from_slice(&data, &shape).unwrap()]);
        prop_assert!(got[0].bits_eq(&got[1]));
    }
}

fn point(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let data: Vec<f64> = pseudo_random(n, seed)
        .iter()
        .map(|v| v + 0.1 * (seed as f64 % 3.0))
        .collect();
    Tensor::from_slice(&data, shape).unwrap()
}

#[test]
fn gradients_match_finite_differences() {
    let opts = VerifyGradOptions::default();
    for (k, shape) in [vec![5], vec![3, 4], vec![2, 3, 2]].into_iter().enumerate() {
        for axis in 0..shape.len() as i64 {
            let p = point(&shape, 7 + k as u64);
            verify_grad(
                |x| Ok(ex::cumsum(&x[0], Some(axis))?),
                std::slice::from_ref(&p),
                &opts,
            )
            .unwrap();
            verify_grad(
                |x| Ok(ex::cumprod(&x[0], Some(axis))?),
                std::slice::from_ref(&p),
                &opts,
            )
            .unwrap();
            verify_grad(
                |x| Ok(ex::sort(&x[0], Some(axis))?),
                std::slice::from_ref(&p),
                &opts,
            )
            .unwrap();
            verify_grad(
                |x| {
                    let r = Var::constant(
                        Tensor::from_slice(
                            &vec![2i64; shape[axis as usize]],
                            &[shape[axis as usize]],
                        )
                        .unwrap(),
                    );
                    Ok(ex::repeat(&x[0], &r, Some(axis))?)
                },
                std::slice::from_ref(&p),
                &opts,
            )
            .unwrap();
            verify_grad(
                |x| Ok(ex::diff(&x[0], 1, axis)?),
                std::slice::from_ref(&p),
                &opts,
            )
            .unwrap();
        }
    }
    let w = point(&[6], 3);
    verify_grad(
        |x| {
            let idx = Var::constant(Tensor::from_slice(&[0i64, 2, 2, 4, 0, 1], &[6]).unwrap());
            Ok(ex::bincount(&idx, Some(&x[0]), 0)?)
        },
        std::slice::from_ref(&w),
        &opts,
    )
    .unwrap();
}

#[test]
fn bad_arguments_are_named_errors() {
    let m = tensor("m", DType::F64, &[None, None]);
    let err = ex::cumsum(&m, Some(2)).unwrap_err().to_string();
    assert!(err.contains("axis 2 is out of bounds"), "{err}");
    let err = ex::searchsorted(&m, &m, false, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected 1 (a vector)"), "{err}");
    let err = ex::repeat(&m, &m, Some(0)).unwrap_err().to_string();
    assert!(err.contains("expected an integer type"), "{err}");
    let err = ex::bincount(&vector("v", DType::F64), None, 0)
        .unwrap_err()
        .to_string();
    assert!(err.contains("expected an integer type"), "{err}");
    let s = tensor("s", DType::F64, &[]);
    let err = ex::nonzero(&s).unwrap_err().to_string();
    assert!(err.contains("nonzero of a 0-d tensor"), "{err}");
}

#[test]
fn runtime_errors_name_the_problem() {
    let x = vector("x", DType::I64);
    let f = function(
        std::slice::from_ref(&x),
        &[ex::bincount(&x, None, 0).unwrap()],
    )
    .build()
    .unwrap();
    let err = f
        .call(&[Tensor::from_slice(&[1i64, -2], &[2]).unwrap()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("must be non-negative"), "{err}");
    let r = vector("r", DType::I64);
    let f = function(
        &[x.clone(), r.clone()],
        &[ex::repeat(&x, &r, Some(0)).unwrap()],
    )
    .build()
    .unwrap();
    let err = f
        .call(&[
            Tensor::from_slice(&[1i64, 2], &[2]).unwrap(),
            Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap(),
        ])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("3 repeat counts for an axis of extent 2"),
        "{err}"
    );
}

#[test]
fn data_dependent_outputs_have_dynamic_static_shapes() {
    let x = vector("x", DType::F64);
    let u = ex::unique(&x, false, true, false).unwrap();
    assert_eq!(u[0].ty().shape[0], None);
    let nz = ex::nonzero(&tensor("t", DType::F64, &[Some(2), Some(3)])).unwrap();
    assert_eq!(&nz.ty().shape[..], &[Some(2), None]);
    let f = function(std::slice::from_ref(&x), &[u[0].clone(), u[1].clone()])
        .build()
        .unwrap();
    let got = f
        .call(&[Tensor::from_slice(&[3.0, 1.0, 3.0, 2.0], &[4]).unwrap()])
        .unwrap();
    assert_eq!(got[0].to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0]);
    assert_eq!(got[1].to_vec::<i64>().unwrap(), vec![2, 0, 2, 1]);
}
