//! Complex dtypes through the whole pipeline: NumPy's promotion and typing rules, the
//! arithmetic and functions in both backends against formulas on real and imaginary parts,
//! reductions and matrix products, and gradients in PyTensor's convention (∂C/∂x + i·∂C/∂y)
//! against finite differences. The values are also checked against NumPy itself in
//! `python/tests/test_complex.py`.

use oxtensor::ops as b;
use oxtensor::oxtensor_data::{C64, C128};
use oxtensor::{DType, Tensor, Var, function, grad_vars, tensor};
use proptest::prelude::*;

use crate::both_backends;
use both_backends::{modes, run};

fn ctensor(name: &str, dtype: DType, ndim: usize) -> Var {
    tensor(name, dtype, &vec![None; ndim])
}

fn close(a: C128, b: C128, tol: f64) -> bool {
    let scale = 1.0 + b.re.abs().max(b.im.abs());
    (a.re - b.re).abs() <= tol * scale && (a.im - b.im).abs() <= tol * scale
}

fn values(n: usize, seed: u64) -> Vec<C128> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
    };
    (0..n).map(|_| C128::new(next(), next())).collect()
}

#[test]
fn promotion_and_result_types_follow_numpy_and_pytensor() {
    let z64 = ctensor("z", DType::C64, 1);
    let z128 = ctensor("w", DType::C128, 1);
    let f32v = ctensor("f", DType::F32, 1);
    let f64v = ctensor("d", DType::F64, 1);
    let i32v = ctensor("i", DType::I32, 1);
    let i8v = ctensor("b", DType::I8, 1);
    assert_eq!(b::add(&z64, &f32v).unwrap().dtype(), DType::C64);
    assert_eq!(b::add(&z64, &f64v).unwrap().dtype(), DType::C128);
    assert_eq!(b::add(&z64, &i32v).unwrap().dtype(), DType::C128);
    assert_eq!(b::add(&z64, &i8v).unwrap().dtype(), DType::C64);
    assert_eq!(b::abs(&z64).unwrap().dtype(), DType::F32);
    assert_eq!(b::real(&z128).unwrap().dtype(), DType::F64);
    assert_eq!(b::imag(&z64).unwrap().dtype(), DType::F32);
    assert_eq!(b::exp(&z64).unwrap().dtype(), DType::C64);
    assert_eq!(b::true_div(&z64, &i8v).unwrap().dtype(), DType::C64);
    assert_eq!(b::complex(&f32v, &f32v).unwrap().dtype(), DType::C64);
    assert_eq!(b::complex(&i8v, &i8v).unwrap().dtype(), DType::C64);
    assert_eq!(b::complex(&f32v, &i32v).unwrap().dtype(), DType::C128);
    assert_eq!(
        b::complex_from_polar(&f64v, &f64v).unwrap().dtype(),
        DType::C128
    );
    assert_eq!(b::lt(&z64, &z128).unwrap().dtype(), DType::Bool);
}

#[test]
fn ops_without_a_complex_meaning_are_refused_at_build_time() {
    let z = ctensor("z", DType::C128, 1);
    for (what, built) in [
        ("Int_div", b::int_div(&z, &z)),
        ("Mod", b::modulo(&z, &z)),
        ("Floor", b::floor(&z)),
        ("Erf", b::erf(&z)),
        ("ArcTan2", b::arctan2(&z, &z)),
        ("Complex", b::complex(&z, &z)),
    ] {
        let err = built.expect_err(what).to_string();
        assert!(
            err.contains(what) && err.contains("complex"),
            "{what}: {err}"
        );
    }
}

/// One unary function: the op and its reference on `complex128`.
type Unary = (
    fn(&Var) -> oxtensor::oxtensor_graph::build::Built,
    fn(C128) -> C128,
);

fn nc(z: C128) -> num_complex::Complex64 {
    num_complex::Complex64::new(z.re, z.im)
}

fn ox(z: num_complex::Complex64) -> C128 {
    C128::new(z.re, z.im)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn arithmetic_matches_the_formulas(n in 1usize..40, seed in 0u64..1000) {
        let (z, w) = (ctensor("z", DType::C128, 1), ctensor("w", DType::C128, 1));
        let outs = vec![
            b::add(&z, &w).unwrap(),
            b::sub(&z, &w).unwrap(),
            b::mul(&z, &w).unwrap(),
            b::true_div(&z, &w).unwrap(),
            b::abs(&z).unwrap(),
            b::conj(&z).unwrap(),
            b::angle(&z).unwrap(),
        ];
        let (zs, ws) = (values(n, seed), values(n, seed + 7));
        let args = [
            Tensor::from_slice(&zs, &[n]).unwrap(),
            Tensor::from_slice(&ws, &[n]).unwrap(),
        ];
        let got = run(&[z, w], &outs, &args);
        let c = |k: usize| got[k].to_vec::<C128>().unwrap();
        let r = |k: usize| got[k].to_vec::<f64>().unwrap();
        for i in 0..n {
            let (a, bb) = (nc(zs[i]), nc(ws[i]));
            prop_assert!(close(c(0)[i], ox(a + bb), 0.0));
            prop_assert!(close(c(1)[i], ox(a - bb), 0.0));
            prop_assert!(close(c(2)[i], ox(a * bb), 1e-15));
            prop_assert!(close(c(3)[i], ox(a / bb), 1e-14));
            prop_assert!((r(4)[i] - a.norm()).abs() <= 1e-15 * a.norm());
            prop_assert_eq!(c(5)[i], C128::new(zs[i].re, -zs[i].im));
            prop_assert!((r(6)[i] - a.arg()).abs() <= 1e-15);
        }
    }

    #[test]
    fn functions_match_num_complex_in_both_precisions(n in 1usize..30, seed in 0u64..1000) {
        let fns: [Unary; 6] = [
            (b::exp, |z| ox(nc(z).exp())),
            (b::log, |z| ox(nc(z).ln())),
            (b::sqrt, |z| ox(nc(z).sqrt())),
            (b::sin, |z| ox(nc(z).sin())),
            (b::tanh, |z| ox(nc(z).tanh())),
            (b::sqr, |z| ox(nc(z) * nc(z))),
        ];
        let zs = values(n, seed);
        for dtype in [DType::C64, DType::C128] {
            let z = ctensor("z", dtype, 1);
            let outs: Vec<Var> = fns.iter().map(|(f, _)| f(&z).unwrap()).collect();
            let arg = Tensor::from_slice(&zs, &[n]).unwrap().cast(dtype);
            let input: Vec<C128> = arg.cast(DType::C128).to_vec().unwrap();
            let got = run(&[z], &outs, &[arg]);
            let tol = if dtype == DType::C64 { 2e-7 } else { 1e-15 };
            for (k, (_, reference)) in fns.iter().enumerate() {
                prop_assert_eq!(got[k].dtype(), dtype);
                let vals: Vec<C128> = got[k].cast(DType::C128).to_vec().unwrap();
                for i in 0..n {
                    let want = reference(input[i]);
                    prop_assert!(close(vals[i], want, tol), "fn {k} at {:?}: {:?} vs {:?}", input[i], vals[i], want);
                }
            }
        }
    }
}

#[test]
fn reductions_and_products_of_complex_matrices() {
    let (m, k, n) = (3, 4, 2);
    let a = ctensor("a", DType::C128, 2);
    let bm = ctensor("b", DType::C128, 2);
    let outs = vec![
        b::matmul(&a, &bm).unwrap(),
        b::sum(&a, None, false).unwrap(),
        b::prod(&a, Some(&[1]), false).unwrap(),
        b::max(&a, None, false).unwrap(),
    ];
    let (av, bv) = (values(m * k, 3), values(k * n, 4));
    let args = [
        Tensor::from_slice(&av, &[m, k]).unwrap(),
        Tensor::from_slice(&bv, &[k, n]).unwrap(),
    ];
    let got = run(&[a, bm], &outs, &args);
    let mm: Vec<C128> = got[0].to_vec().unwrap();
    for i in 0..m {
        for j in 0..n {
            let want: num_complex::Complex64 =
                (0..k).map(|p| nc(av[i * k + p]) * nc(bv[p * n + j])).sum();
            assert!(close(mm[i * n + j], ox(want), 1e-14));
        }
    }
    let total: num_complex::Complex64 = av.iter().map(|&z| nc(z)).sum();
    assert!(close(got[1].to_vec::<C128>().unwrap()[0], ox(total), 1e-14));
    let rows: Vec<C128> = got[2].to_vec().unwrap();
    for i in 0..m {
        let want: num_complex::Complex64 = (0..k).map(|p| nc(av[i * k + p])).product();
        assert!(close(rows[i], ox(want), 1e-14));
    }
    let lexmax =
        av.iter()
            .copied()
            .fold(C128::new(f64::NEG_INFINITY, f64::NEG_INFINITY), |acc, z| {
                if z > acc { z } else { acc }
            });
    assert_eq!(got[3].to_vec::<C128>().unwrap()[0], lexmax);
}

/// `C(x, y) = Σ |f(x + iy)|²` and its gradient by central differences on each part.
fn numeric_grad(cost: &dyn Fn(&[C128]) -> f64, z: &[C128]) -> Vec<C128> {
    let h = 1e-6;
    (0..z.len())
        .map(|i| {
            let part = |dre: f64, dim: f64| {
                let mut zz = z.to_vec();
                zz[i] = C128::new(zz[i].re + dre, zz[i].im + dim);
                cost(&zz)
            };
            let gx = (part(h, 0.0) - part(-h, 0.0)) / (2.0 * h);
            let gy = (part(0.0, h) - part(0.0, -h)) / (2.0 * h);
            C128::new(gx, gy)
        })
        .collect()
}

#[test]
fn gradients_follow_pytensors_convention_and_match_finite_differences() {
    let n = 5;
    let z = ctensor("z", DType::C128, 1);
    let w = b::add(
        &b::mul(&b::exp(&z).unwrap(), &z).unwrap(),
        &b::sqr(&z).unwrap(),
    )
    .unwrap();
    // |w|² through real, imag, conj and abs, so every rule of the family is on the path.
    let power = b::real(&b::mul(&w, &b::conj(&w).unwrap()).unwrap()).unwrap();
    let cost = b::add(
        &b::sum(&power, None, false).unwrap(),
        &b::sum(
            &b::mul(&b::imag(&z).unwrap(), &b::abs(&z).unwrap()).unwrap(),
            None,
            false,
        )
        .unwrap(),
    )
    .unwrap();
    let g = grad_vars(&cost, std::slice::from_ref(&z))
        .expect("grad")
        .remove(0);
    assert_eq!(g.dtype(), DType::C128);
    let zs = values(n, 11);
    for mode in modes() {
        let f = function(std::slice::from_ref(&z), std::slice::from_ref(&g))
            .mode(mode)
            .build()
            .expect("compile");
        let got: Vec<C128> = f.call(&[Tensor::from_slice(&zs, &[n]).unwrap()]).unwrap()[0]
            .to_vec()
            .unwrap();
        let reference = |zz: &[C128]| -> f64 {
            zz.iter()
                .map(|&q| {
                    let q = nc(q);
                    let w = q.exp() * q + q * q;
                    w.norm_sqr() + q.im * q.norm()
                })
                .sum()
        };
        let want = numeric_grad(&reference, &zs);
        for i in 0..n {
            assert!(
                close(got[i], want[i], 1e-6),
                "{i}: {:?} vs {:?}",
                got[i],
                want[i]
            );
        }
    }
}

#[test]
fn polar_and_rectangular_constructors_have_gradients() {
    let (r, t) = (ctensor("r", DType::F64, 1), ctensor("t", DType::F64, 1));
    let z = b::complex_from_polar(&r, &t).unwrap();
    let u = b::complex(&b::sin(&r).unwrap(), &b::mul(&r, &t).unwrap()).unwrap();
    let s = b::add(&b::mul(&z, &z).unwrap(), &u).unwrap();
    let cost = b::add(
        &b::sum(&b::real(&s).unwrap(), None, false).unwrap(),
        &b::sum(&b::sqr(&b::imag(&s).unwrap()).unwrap(), None, false).unwrap(),
    )
    .unwrap();
    let gs = grad_vars(&cost, &[r.clone(), t.clone()]).expect("grad");
    let (rv, tv) = ([0.7, 1.3, 2.0], [0.3, -1.1, 2.5]);
    let f = function(&[r, t], &gs).build().expect("compile");
    let got = f
        .call(&[
            Tensor::from_slice(&rv, &[3]).unwrap(),
            Tensor::from_slice(&tv, &[3]).unwrap(),
        ])
        .unwrap();
    let c = |r: f64, t: f64| {
        let z = num_complex::Complex64::from_polar(r, t);
        let s = z * z + num_complex::Complex64::new(r.sin(), r * t);
        s.re + s.im * s.im
    };
    let h = 1e-6;
    for i in 0..3 {
        let dr = (c(rv[i] + h, tv[i]) - c(rv[i] - h, tv[i])) / (2.0 * h);
        let dt = (c(rv[i], tv[i] + h) - c(rv[i], tv[i] - h)) / (2.0 * h);
        assert!((got[0].to_vec::<f64>().unwrap()[i] - dr).abs() < 1e-6 * (1.0 + dr.abs()));
        assert!((got[1].to_vec::<f64>().unwrap()[i] - dt).abs() < 1e-6 * (1.0 + dt.abs()));
    }
}

#[test]
fn complex64_values_round_trip_through_casts() {
    let z = ctensor("z", DType::C64, 1);
    let outs = vec![
        b::cast(&z, DType::C128).unwrap(),
        b::cast(&z, DType::F32).unwrap(),
        b::cast(&b::real(&z).unwrap(), DType::C64).unwrap(),
    ];
    let zs = [C64::new(1.5, -2.25), C64::new(-0.0, 3.0)];
    let got = run(&[z], &outs, &[Tensor::from_slice(&zs, &[2]).unwrap()]);
    assert_eq!(
        got[0].to_vec::<C128>().unwrap(),
        vec![C128::new(1.5, -2.25), C128::new(-0.0, 3.0)]
    );
    assert_eq!(got[1].to_vec::<f32>().unwrap(), vec![1.5, -0.0]);
    assert_eq!(
        got[2].to_vec::<C64>().unwrap(),
        vec![C64::new(1.5, 0.0), C64::new(-0.0, 0.0)]
    );
    assert_eq!(format!("{}", got[0]), "[ 1.5-2.25j -0. +3.j  ]");
}
