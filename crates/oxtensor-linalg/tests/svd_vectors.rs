//! The SVD with vectors (`compute_uv=True`, thin and full) on matrices chosen to exercise the
//! divide and conquer of the bidiagonal SVD: sizes at, just past and several times the leaf
//! size, tall, wide and far from square, rank-deficient, graded (singular values down to
//! 1e-12) and with repeated singular values, in f64 and f32. Each result must reconstruct
//! its input, have orthonormal `U` columns and `Vh` rows, and singular values descending
//! and equal (normwise) to the values-only path's (dqds on the same bidiagonal form).

use crate::common;

use common::*;
use oxtensor_data::{DType, Tensor};
use oxtensor_linalg as la;

/// `I − 2 v vᵀ / vᵀv` applied to the columns of `q` from the left, for three random `v`:
/// a dense random orthogonal matrix.
fn orthogonal(rng: &mut Rng, n: usize) -> M {
    let mut q = M::eye(n);
    for _ in 0..3 {
        let v = rng.vec(n);
        let vv: f64 = v.iter().map(|x| x * x).sum();
        for j in 0..n {
            let dot: f64 = (0..n).map(|i| v[i] * q.at(i, j)).sum();
            for (i, vi) in v.iter().enumerate() {
                q.d[i * n + j] -= 2.0 * vi * dot / vv;
            }
        }
    }
    q
}

/// `Q₁ diag(s) Q₂ᵀ` (`m × n`) with random orthogonal `Q₁`, `Q₂`.
fn with_singular_values(rng: &mut Rng, m: usize, n: usize, s: &[f64]) -> Tensor {
    let mut d = M::new(m, n, vec![0.0; m * n]);
    for (i, x) in s.iter().enumerate() {
        d.d[i * n + i] = *x;
    }
    let a = orthogonal(rng, m).mul(&d).mul(&orthogonal(rng, n).t());
    Tensor::from_slice(&a.d, &[m, n]).expect("tensor")
}

/// The kinds of matrix, by name, for sizes `m × n`.
fn matrices(rng: &mut Rng, m: usize, n: usize) -> Vec<(&'static str, Tensor)> {
    let k = m.min(n);
    let graded: Vec<f64> = (0..k)
        .map(|i| 10f64.powf(-12.0 * i as f64 / (k.max(2) - 1) as f64))
        .collect();
    let repeated: Vec<f64> = (0..k).map(|i| [3.0, 1.0, 1e-3][i * 3 / k]).collect();
    let r = k.div_ceil(3);
    let low = M::new(m, r, rng.vec(m * r)).mul(&M::new(r, n, rng.vec(r * n)));
    vec![
        ("random", rng.tensor(&[m, n])),
        (
            "rank-deficient",
            Tensor::from_slice(&low.d, &[m, n]).expect("t"),
        ),
        ("graded", with_singular_values(rng, m, n, &graded)),
        ("repeated", with_singular_values(rng, m, n, &repeated)),
    ]
}

/// Checks `svd(a)` (thin or full) in the dtype of `a` against the tolerances of `eps`.
fn check(what: &str, a: &Tensor, full: bool, eps: f64) {
    let (m, n) = (a.shape()[0], a.shape()[1]);
    let k = m.min(n);
    let params = la::SvdParams {
        full_matrices: full,
        compute_uv: true,
    };
    let f = la::svd(&[a], &params).unwrap_or_else(|e| panic!("{what}: {e:?}"));
    assert!(f.iter().all(|t| t.dtype() == a.dtype()), "{what}: dtype");
    let (u, s, vh) = (mat_at(&f[0], 0), vec_at(&f[1], 0), mat_at(&f[2], 0));
    let (ur, vr) = if full { (m, n) } else { (k, k) };
    assert_eq!(
        (u.r, u.c, s.len(), vh.r, vh.c),
        (m, ur, k, vr, n),
        "{what}: shapes"
    );
    let am = mat_at(a, 0);
    let norm = s.first().copied().unwrap_or(0.0);
    let tol = 30.0 * m.max(n) as f64 * eps;
    let back = u.cols(k).mul(&M::diag(&s)).mul(&vh.rows(k));
    let err = back
        .d
        .iter()
        .zip(&am.d)
        .fold(0.0f64, |e, (x, y)| e.max((x - y).abs()));
    assert!(
        err <= tol * norm,
        "{what}: |U S Vh - A| = {err:e}, |A| = {norm:e}"
    );
    let dev = |p: M| {
        let r = p.r;
        p.d.iter().enumerate().fold(0.0f64, |e, (x, v)| {
            e.max((v - f64::from(u8::from(x / r == x % r))).abs())
        })
    };
    let eu = dev(u.t().mul(&u));
    assert!(eu <= tol, "{what}: |UᵀU - I| = {eu:e}");
    let ev = dev(vh.mul(&vh.t()));
    assert!(ev <= tol, "{what}: |Vh Vhᵀ - I| = {ev:e}");
    assert!(
        s.windows(2).all(|w| w[0] >= w[1]) && s.iter().all(|x| *x >= 0.0),
        "{what}: order"
    );
    let values = la::svd(
        &[a],
        &la::SvdParams {
            full_matrices: false,
            compute_uv: false,
        },
    )
    .expect("values");
    let w = vec_at(&values[0], 0);
    for (x, y) in s.iter().zip(&w) {
        assert!(
            (x - y).abs() <= tol * norm,
            "{what}: s {x:e} vs values-only {y:e}"
        );
    }
}

#[test]
fn svd_vectors_reconstruct_and_are_orthonormal_across_sizes_and_shapes() {
    let mut rng = Rng(2024);
    let shapes = [
        (1, 1),
        (2, 2),
        (3, 3),
        (25, 25),
        (26, 26),
        (51, 51),
        (100, 100),
        (30, 20),
        (20, 30),
        (51, 40),
        (40, 51),
        // Past the aspect ratio where the matrix is factored QR first.
        (60, 12),
        (12, 60),
    ];
    for (m, n) in shapes {
        for (kind, a) in matrices(&mut rng, m, n) {
            for full in [false, true] {
                check(
                    &format!("{kind} {m}x{n} full={full}"),
                    &a,
                    full,
                    f64::EPSILON,
                );
            }
            let a32 = a.cast(DType::F32);
            check(
                &format!("{kind} {m}x{n} f32"),
                &a32,
                false,
                f32::EPSILON as f64,
            );
        }
    }
}

/// Several levels of recursion (257 rows split into 128 + 1 + 128, down to leaves of at
/// most 25), and clustered values that deflate at every merge.
#[test]
fn svd_vectors_of_large_matrices_with_clustered_values() {
    let mut rng = Rng(7);
    check("random 257", &rng.tensor(&[257, 257]), false, f64::EPSILON);
    let n = 130;
    let s: Vec<f64> = (0..n).map(|i| 1.0 + 1e-13 * (i % 7) as f64).collect();
    check(
        "clustered",
        &with_singular_values(&mut rng, n, n, &s),
        true,
        f64::EPSILON,
    );
}

/// An exactly bidiagonal matrix with zeros on its diagonal and superdiagonal (splits and
/// zero singular values inside the leaves and at the merges), and the zero matrix.
#[test]
fn svd_vectors_of_matrices_with_exact_zeros() {
    let n = 60;
    let mut d = vec![0.0; n * n];
    for i in 0..n {
        d[i * n + i] = if i % 9 == 4 {
            0.0
        } else {
            1.0 + (i % 5) as f64
        };
        if i + 1 < n && i % 13 != 7 {
            d[i * n + i + 1] = 0.5;
        }
    }
    let a = Tensor::from_slice(&d, &[n, n]).expect("t");
    check("bidiagonal with zeros", &a, false, f64::EPSILON);
    let z = Tensor::from_slice(&vec![0.0; 40 * 30], &[40, 30]).expect("t");
    check("zero", &z, true, f64::EPSILON);
}

/// An exactly repeated singular value keeps LAPACK's order of its vectors (NumPy gives `U`'s
/// first column `±e₂` for this matrix): PyTensor's `multivariate_normal(method="svd")`
/// builds its factor from `U √s`, so the tests against it depend on the order.
#[test]
fn a_repeated_singular_value_keeps_lapacks_order() {
    let a = Tensor::from_slice(&[1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 3.0], &[3, 3]).expect("t");
    let f = la::svd(&[&a], &la::SvdParams::default()).expect("svd");
    let u = mat_at(&f[0], 0);
    assert!((u.at(2, 0).abs() - 1.0).abs() < 1e-15, "U = {u:?}");
    check("repeated 3x3", &a, true, f64::EPSILON);
}
