//! The eigenvalue-only (`eigvalsh`) and singular-value-only (`svd(compute_uv=False)`)
//! kernels, which run their own tridiagonal/bidiagonal iterations, checked against SciPy
//! (`fixtures/spectra.json`, written by `fixtures/make_spectra.py`: clustered, repeated,
//! graded, rank-deficient, scaled and tiny matrices) and against faer's full
//! decompositions on random matrices from fixed seeds.
//!
//! Tolerances: a symmetric eigenvalue or a singular value of a general matrix is determined
//! to about `n ε ‖A‖` (Weyl), so those compare to `32 n ε ‖A‖₂`; the singular values of a
//! bidiagonal matrix are determined to a few ulps *each* (Demmel–Kahan), so the cases
//! marked `relative` compare every value to `64 n ε` of itself.

use crate::common;

use common::*;
use oxtensor_data::Tensor;
use oxtensor_linalg as la;
use serde_json::Value;

fn cases() -> Vec<Value> {
    let text = include_str!("fixtures/spectra.json");
    let v: Value = serde_json::from_str(text).expect("fixture JSON");
    v["cases"].as_array().expect("cases").clone()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn eigvalsh(a: &Tensor, lower: bool) -> Vec<f64> {
    la::eigvalsh(&[a], lower)
        .expect("eigvalsh")
        .remove(0)
        .to_vec_as::<f64>()
}

fn singular_values(a: &Tensor) -> Vec<f64> {
    la::svd(
        &[a],
        &la::SvdParams {
            full_matrices: false,
            compute_uv: false,
        },
    )
    .expect("svd")
    .remove(0)
    .to_vec_as::<f64>()
}

/// Every `got[i]` within `tol_abs + tol_rel |want[i]|` of `want[i]`.
fn assert_close(what: &str, got: &[f64], want: &[f64], tol_abs: f64, tol_rel: f64) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (g - w).abs();
        assert!(
            err <= tol_abs + tol_rel * w.abs(),
            "{what}: value {i} is {g:e}, expected {w:e} (error {err:e})"
        );
    }
}

/// A fixture case's input matrix, and its shape.
fn input(c: &serde_json::Value) -> (Tensor, Vec<usize>) {
    let shape: Vec<usize> = c["input"]["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|x| x.as_u64().expect("extent") as usize)
        .collect();
    let a = Tensor::from_slice(&floats(&c["input"]["data"]), &shape).expect("tensor");
    (a, shape)
}

#[test]
fn spectra_match_scipy() {
    let eps = f64::EPSILON;
    for c in cases() {
        let name = format!("{} {}", c["op"].as_str().expect("op"), c["name"]);
        let (a, shape) = input(&c);
        let want = floats(&c["ref"]);
        let norm = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let n = shape.iter().copied().max().unwrap_or(1) as f64;
        let p = &c["params"];
        match c["op"].as_str() {
            Some("eigvalsh") => {
                let lower = p["lower"].as_bool().expect("lower");
                let got = eigvalsh(&a, lower);
                assert_close(&name, &got, &want, 32.0 * n * eps * norm, 0.0);
            }
            Some("svdvals") => {
                let got = singular_values(&a);
                if p.get("relative").is_some() {
                    assert_close(&name, &got, &want, 0.0, 64.0 * n * eps);
                } else {
                    assert_close(&name, &got, &want, 32.0 * n * eps * norm, 0.0);
                }
            }
            other => panic!("unknown op {other:?}"),
        }
    }
}

/// Largest entry of `|x - y|` for two equally long slices.
fn max_diff(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
}

/// The full decomposition on the fixture's matrices (reduced and complete `U`, `Vh`):
/// `U` and `V` orthogonal to `16 n ε`, `U diag(s) Vh` equal to `A` within `16 n ε ‖A‖₂`, and
/// `s` equal to SciPy's values within `32 n ε ‖A‖₂` (the vectors path promises normwise,
/// not per-value, accuracy).
#[test]
fn singular_vectors_of_the_fixture_matrices() {
    let eps = f64::EPSILON;
    for c in cases().iter().filter(|c| c["op"] == "svdvals") {
        let name = c["name"].to_string();
        let (a, shape) = input(c);
        let (m, n) = (shape[0], shape[1]);
        let k = m.min(n);
        let data = floats(&c["input"]["data"]);
        let want = floats(&c["ref"]);
        let norm = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let size = m.max(n) as f64;
        for full in [false, true] {
            let f = la::svd(
                &[&a],
                &la::SvdParams {
                    full_matrices: full,
                    compute_uv: true,
                },
            )
            .expect("svd");
            let (u, s, vh) = (mat_at(&f[0], 0), f[1].to_vec_as::<f64>(), mat_at(&f[2], 0));
            let what = format!("{name} full={full}");
            assert_close(&what, &s, &want, 32.0 * size * eps * norm, 0.0);
            let utu = u.t().mul(&u);
            let vvt = vh.mul(&vh.t());
            assert!(
                max_diff(&utu.d, &M::eye(u.c).d) <= 16.0 * size * eps,
                "{what}: UᵀU"
            );
            assert!(
                max_diff(&vvt.d, &M::eye(vh.r).d) <= 16.0 * size * eps,
                "{what}: V Vᵀ"
            );
            let rebuilt = u.cols(k).scale_cols(&s).mul(&vh.rows(k));
            assert!(
                max_diff(&rebuilt.d, &data) <= 16.0 * size * eps * norm,
                "{what}: U diag(s) Vh = A (off by {:e})",
                max_diff(&rebuilt.d, &data)
            );
        }
    }
}

/// A symmetric matrix `Q diag(w) Qᵀ` with the given eigenvalues and a random orthogonal `Q`
/// (a product of Householder reflections).
fn with_spectrum(rng: &mut Rng, w: &[f64]) -> M {
    let n = w.len();
    let mut a = M::diag(w);
    for _ in 0..3 {
        let v = rng.vec(n);
        let vv: f64 = v.iter().map(|x| x * x).sum();
        let h = M::new(
            n,
            n,
            (0..n * n)
                .map(|x| f64::from(u8::from(x / n == x % n)) - 2.0 * v[x / n] * v[x % n] / vv)
                .collect(),
        );
        a = h.mul(&a).mul(&h);
    }
    a
}

/// faer's eigenvalues from its full symmetric eigendecomposition (another algorithm: divide
/// and conquer or QR with rotations, on the same reduction).
fn faer_eigenvalues(a: &M) -> Vec<f64> {
    let m = faer::Mat::from_fn(a.r, a.c, |i, j| a.at(i, j));
    let f = m.self_adjoint_eigen(faer::Side::Lower).expect("eigh");
    let s = f.S().column_vector();
    (0..a.r).map(|i| s[i]).collect()
}

#[test]
fn eigenvalues_agree_with_faer_full_decomposition() {
    let mut rng = Rng(11);
    let eps = f64::EPSILON;
    for n in [1, 2, 3, 5, 8, 17, 33, 64, 100] {
        let g = M::new(n, n, rng.vec(n * n));
        let mut kinds = vec![("random", g.mul(&g.t()))];
        // Eigenvalues in three tight clusters, one exactly repeated.
        let w: Vec<f64> = (0..n)
            .map(|i| match i % 3 {
                0 => 1.0,
                1 => -1.0 + 1e-12 * i as f64,
                _ => 5.0 + 1e-8 * i as f64,
            })
            .collect();
        kinds.push(("clustered", with_spectrum(&mut rng, &w)));
        // Graded: eigenvalues from 1 down to 1e-(n/2).
        let w: Vec<f64> = (0..n).map(|i| 10f64.powf(-(i as f64) / 2.0)).collect();
        kinds.push(("graded", with_spectrum(&mut rng, &w)));
        for (kind, a) in kinds {
            let t = Tensor::from_slice(&a.d, &[n, n]).expect("tensor");
            let got = eigvalsh(&t, true);
            let want = faer_eigenvalues(&a);
            let norm = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            assert_close(
                &format!("{kind} n={n}"),
                &got,
                &want,
                32.0 * n as f64 * eps * norm,
                0.0,
            );
            // Read from the upper triangle, the same matrix.
            let upper = eigvalsh(&t, false);
            assert_close(
                &format!("{kind} n={n} upper"),
                &upper,
                &got,
                32.0 * n as f64 * eps * norm,
                0.0,
            );
        }
    }
}

#[test]
fn singular_values_agree_with_faer_thin_svd() {
    let mut rng = Rng(12);
    let eps = f64::EPSILON;
    for (m, n) in [
        (1, 1),
        (2, 3),
        (3, 2),
        (7, 7),
        (20, 9),
        (9, 20),
        (64, 64),
        (120, 80),
    ] {
        let a = M::new(m, n, rng.vec(m * n));
        let t = Tensor::from_slice(&a.d, &[m, n]).expect("tensor");
        let got = singular_values(&t);
        let fm = faer::Mat::from_fn(m, n, |i, j| a.at(i, j));
        let f = fm.thin_svd().expect("svd");
        let s = f.S().column_vector();
        let want: Vec<f64> = (0..m.min(n)).map(|i| s[i]).collect();
        assert_close(
            &format!("{m}x{n}"),
            &got,
            &want,
            32.0 * m.max(n) as f64 * eps * want[0],
            0.0,
        );
    }
}

#[test]
fn non_finite_inputs_give_nans_or_errors_not_hangs() {
    let a = Tensor::from_slice(&[1.0, f64::NAN, f64::NAN, 2.0], &[2, 2]).expect("tensor");
    if let Ok(w) = la::eigvalsh(&[&a], true) {
        assert!(w[0].to_vec_as::<f64>().iter().all(|x| x.is_nan()));
    }
    let b = Tensor::from_slice(&[1.0, f64::INFINITY, 0.0, 2.0], &[2, 2]).expect("tensor");
    let r = la::svd(
        &[&b],
        &la::SvdParams {
            full_matrices: false,
            compute_uv: false,
        },
    );
    if let Ok(s) = r {
        assert!(s[0].to_vec_as::<f64>().iter().any(|x| x.is_nan()));
    }
}

#[test]
fn float32_spectra_match_float64_to_float32_accuracy() {
    let mut rng = Rng(13);
    for n in [3, 16, 40] {
        let g = M::new(n, n, rng.vec(n * n));
        let a = g.mul(&g.t());
        let t64 = Tensor::from_slice(&a.d, &[n, n]).expect("tensor");
        let t32 = t64.cast(oxtensor_data::DType::F32);
        let w64 = eigvalsh(&t64, true);
        let w32 = eigvalsh(&t32, true);
        let norm = w64.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        assert_close(
            "eigvalsh f32",
            &w32,
            &w64,
            32.0 * n as f64 * 1.2e-7 * norm,
            0.0,
        );
        let s64 = singular_values(&Tensor::from_slice(&g.d, &[n, n]).expect("tensor"));
        let s32 = singular_values(
            &Tensor::from_slice(&g.d, &[n, n])
                .expect("tensor")
                .cast(oxtensor_data::DType::F32),
        );
        assert_close(
            "svd f32",
            &s32,
            &s64,
            32.0 * n as f64 * 1.2e-7 * s64[0],
            0.0,
        );
    }
}

/// `H A H` for the reflection `H = I - 2 v vᵀ / vᵀv` of a symmetric `A` (row-major `n × n`),
/// in `O(n²)`: `A - c (v uᵀ + u vᵀ) + c² (vᵀu) v vᵀ` with `u = A v`, `c = 2 / vᵀv`.
fn reflect(a: &mut [f64], n: usize, v: &[f64]) {
    let c = 2.0 / v.iter().map(|x| x * x).sum::<f64>();
    let u: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| a[i * n + j] * v[j]).sum())
        .collect();
    let vu: f64 = v.iter().zip(&u).map(|(x, y)| x * y).sum();
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] += -c * (v[i] * u[j] + u[i] * v[j]) + c * c * vu * v[i] * v[j];
        }
    }
}

/// `Q diag(w) Qᵀ` with `Q` a product of four random reflections: a symmetric matrix with a
/// known spectrum, cheap enough to build at a few hundred rows in an unoptimised test.
fn known_spectrum(rng: &mut Rng, w: &[f64]) -> Vec<f64> {
    let n = w.len();
    let mut a = vec![0.0; n * n];
    for (i, x) in w.iter().enumerate() {
        a[i * n + i] = *x;
    }
    for _ in 0..4 {
        let v = rng.vec(n);
        reflect(&mut a, n, &v);
    }
    a
}

/// The blocked reduction (panels of 32 columns while more than 512 rows remain, faer's
/// unblocked kernel after that) on sizes below and across those thresholds (two panels at
/// 545; the crate's unit tests cross many more panels with smaller blocks, and rebuild
/// `Q T Qᵀ`): random,
/// clustered (one value repeated, two tight clusters) and graded (1 down to 1e-12) spectra,
/// read from either triangle, in `f64` and `f32`. Each eigenvalue is within `32 n ε ‖A‖₂` of
/// the spectrum the matrix was built with.
#[test]
fn blocked_tridiagonalisation_keeps_known_spectra() {
    let mut rng = Rng(21);
    for n in [1, 2, 33, 65, 130, 545] {
        let mut random: Vec<f64> = rng.vec(n).iter().map(|x| 4.0 * x).collect();
        random.sort_by(f64::total_cmp);
        let clustered: Vec<f64> = (0..n)
            .map(|i| match i % 3 {
                0 => -2.0,
                1 => 0.5 + 1e-10 * i as f64,
                _ => 3.0 + 1e-7 * i as f64,
            })
            .collect();
        let graded: Vec<f64> = (0..n)
            .map(|i| 10f64.powf(-12.0 * i as f64 / n as f64))
            .collect();
        for (kind, w) in [
            ("random", random),
            ("clustered", clustered),
            ("graded", graded),
        ] {
            let mut want = w.clone();
            want.sort_by(f64::total_cmp);
            let a = known_spectrum(&mut rng, &w);
            let norm = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let t = Tensor::from_slice(&a, &[n, n]).expect("tensor");
            for lower in [true, false] {
                let what = format!("{kind} n={n} lower={lower}");
                let tol = 32.0 * n as f64 * f64::EPSILON * norm;
                assert_close(&what, &eigvalsh(&t, lower), &want, tol, 0.0);
                if kind != "random" && n > 512 {
                    // The blocked reduction is slow in unoptimised test builds: the other
                    // spectra are read from one triangle in one dtype there.
                    break;
                }
                let t32 = t.cast(oxtensor_data::DType::F32);
                let tol32 = 32.0 * n as f64 * f64::from(f32::EPSILON) * norm;
                assert_close(
                    &format!("{what} f32"),
                    &eigvalsh(&t32, lower),
                    &want,
                    tol32,
                    0.0,
                );
            }
        }
    }
}

/// A batch of matrices large enough for the blocked reduction gives each matrix's
/// eigenvalues as faer's full decomposition does (another tridiagonal eigensolver on faer's
/// own reduction).
#[test]
fn blocked_tridiagonalisation_batched_and_against_faer() {
    let mut rng = Rng(22);
    let (batch, n) = (2, 530);
    let mut data = Vec::with_capacity(batch * n * n);
    let mut singles = Vec::new();
    for _ in 0..batch {
        let g = rng.vec(n * n);
        let a: Vec<f64> = (0..n * n).map(|x| g[x] + g[(x % n) * n + x / n]).collect();
        singles.push(a.clone());
        data.extend(a);
    }
    let t = Tensor::from_slice(&data, &[batch, n, n]).expect("tensor");
    let all = eigvalsh(&t, true);
    for (b, a) in singles.iter().enumerate() {
        let m = M::new(n, n, a.clone());
        let want = faer_eigenvalues(&m);
        let norm = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let got = &all[b * n..(b + 1) * n];
        assert_close(
            &format!("batch {b} vs faer"),
            got,
            &want,
            32.0 * n as f64 * f64::EPSILON * norm,
            0.0,
        );
    }
}

/// `eigh` above the blocked threshold (faer's tridiagonal eigensolver and Householder
/// products on the blocked reduction's reflectors), from either triangle: `A V = V diag(w)`
/// within `32 n ε ‖A‖₂`, `VᵀV = I` within `32 n ε`, `w` equal to faer's values.
#[test]
fn eigh_with_the_blocked_reduction() {
    let mut rng = Rng(23);
    let n = 530;
    let g = rng.vec(n * n);
    let a: Vec<f64> = (0..n * n).map(|x| g[x] + g[(x % n) * n + x / n]).collect();
    let am = faer::Mat::from_fn(n, n, |i, j| a[i * n + j]);
    let want = faer_eigenvalues(&M::new(n, n, a.clone()));
    let norm = want.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let eps = f64::EPSILON;
    let t = Tensor::from_slice(&a, &[n, n]).expect("tensor");
    for lower in [true, false] {
        let out = la::eigh(&[&t], lower).expect("eigh");
        let w = out[0].to_vec_as::<f64>();
        let v = out[1].to_vec_as::<f64>();
        assert_close(
            &format!("w lower={lower}"),
            &w,
            &want,
            32.0 * n as f64 * eps * norm,
            0.0,
        );
        let vm = faer::Mat::from_fn(n, n, |i, j| v[i * n + j]);
        let av = &am * &vm;
        let vtv = vm.transpose() * &vm;
        let mut resid = 0.0f64;
        let mut orth = 0.0f64;
        for j in 0..n {
            for i in 0..n {
                resid = resid.max((av[(i, j)] - vm[(i, j)] * w[j]).abs());
                orth = orth.max((vtv[(i, j)] - f64::from(u8::from(i == j))).abs());
            }
        }
        assert!(
            resid <= 32.0 * n as f64 * eps * norm,
            "A V - V diag(w): {resid:e}"
        );
        assert!(orth <= 32.0 * n as f64 * eps, "VᵀV - I: {orth:e}");
    }
}
