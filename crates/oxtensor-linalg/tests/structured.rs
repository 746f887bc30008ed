//! Property tests (fixed seeds) for the fast paths: tridiagonal and banded solves equal the
//! dense solve of the same system (to a tolerance scaled by its condition number), pivoting
//! included; batches of tiny matrices (the unblocked kernels) equal single calls, in the
//! parallel driver too, and satisfy their defining identities on both sides of the size
//! where the kernels switch to faer.

use crate::common;

use common::*;
use oxtensor_data::{DType, Tensor};
use oxtensor_linalg as la;

/// The matrices these tests draw.
impl Rng {
    /// A well-conditioned tridiagonal `n × n` matrix that needs row interchanges: 2 × 2
    /// blocks with a small diagonal and larger off-diagonal entries, weakly coupled; entries
    /// outside the three diagonals hold junk when `junk` (a tridiagonal solve must not read
    /// them). Returns the matrix and its tridiagonal part.
    fn tridiagonal(&mut self, n: usize, junk: bool) -> (Vec<f64>, Vec<f64>) {
        let mut band = vec![0.0; n * n];
        for i in 0..n {
            band[i * n + i] = if n % 2 == 1 && i == n - 1 {
                1.0 + self.next().abs()
            } else {
                0.1 * self.next()
            };
            if i + 1 < n {
                let (lo, up) = (self.next(), self.next());
                let inner = i % 2 == 0;
                band[(i + 1) * n + i] = if inner {
                    1.0 + 0.5 * lo.abs()
                } else {
                    0.2 * lo
                };
                band[i * n + i + 1] = if inner {
                    1.0 + 0.5 * up.abs()
                } else {
                    0.2 * up
                };
            }
        }
        let mut full = band.clone();
        if junk {
            for i in 0..n {
                for j in 0..n {
                    if i.abs_diff(j) > 1 {
                        full[i * n + j] = self.next();
                    }
                }
            }
        }
        (full, band)
    }

    /// A random `n × n` matrix with `kl` sub- and `ku` superdiagonals, not diagonally
    /// dominant (so rows get interchanged).
    fn banded(&mut self, n: usize, kl: usize, ku: usize) -> Vec<f64> {
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in i.saturating_sub(kl)..(i + ku + 1).min(n) {
                a[i * n + j] = self.next() + if i == j { 0.5 } else { 0.0 };
            }
        }
        a
    }
}

fn one(r: Result<Vec<Tensor>, la::LinalgError>) -> Tensor {
    r.expect("op succeeds").remove(0)
}

fn solve(a: &Tensor, b: &Tensor, assume_a: la::AssumeA, transposed: bool) -> Tensor {
    one(la::solve(
        &[a, b],
        &la::SolveParams {
            assume_a,
            transposed,
            ..Default::default()
        },
    ))
}

/// The 2-norm condition number of the row-major `n × n` matrix `a`.
fn cond(a: &[f64], n: usize) -> f64 {
    let t = Tensor::from_slice(a, &[n, n]).expect("tensor");
    let s = one(la::svd(
        &[&t],
        &la::SvdParams {
            full_matrices: false,
            compute_uv: false,
        },
    ))
    .to_vec::<f64>()
    .expect("f64");
    s[0] / s[n - 1]
}

/// Asserts `got` equals the dense solve `want` of a system with condition number `kappa`.
fn agrees(what: &str, got: &Tensor, want: &Tensor, kappa: f64) {
    let (g, w) = (got.to_vec_as::<f64>(), want.to_vec_as::<f64>());
    let tol = 64.0 * f64::EPSILON * kappa;
    let e = rel_err(&g, &w);
    assert!(
        e <= tol,
        "{what}: relative error {e:e} > {tol:e} (cond {kappa:e})"
    );
}

#[test]
fn tridiagonal_solves_equal_dense_solves_of_the_band() {
    let mut rng = Rng(11);
    for n in [1, 2, 3, 8, 17, 64, 1000] {
        let (full, band) = rng.tridiagonal(n, true);
        let kappa = if n <= 64 { cond(&band, n) } else { 1e3 };
        let a = Tensor::from_slice(&full, &[n, n]).expect("tensor");
        let dense = Tensor::from_slice(&band, &[n, n]).expect("tensor");
        for (shape, transposed) in [(vec![n, 3], false), (vec![n], true), (vec![n, 1], true)] {
            let b = rng.tensor(&shape);
            let got = solve(&a, &b, la::AssumeA::Tridiagonal, transposed);
            let want = solve(&dense, &b, la::AssumeA::General, transposed);
            agrees(
                &format!("n={n} transposed={transposed}"),
                &got,
                &want,
                kappa,
            );
        }
    }
}

#[test]
fn banded_solves_equal_dense_solves() {
    let mut rng = Rng(12);
    // Wide bands relative to n take the dense path; narrow ones the band LU.
    for (n, kl, ku) in [
        (1, 0, 0),
        (2, 1, 0),
        (2, 0, 1),
        (5, 1, 1),
        (40, 1, 1),
        (60, 2, 3),
        (60, 0, 2),
        (80, 3, 0),
        (120, 4, 4),
        (300, 2, 1),
    ] {
        let a = rng.banded(n, kl, ku);
        let kappa = cond(&a, n);
        let at = Tensor::from_slice(&a, &[n, n]).expect("tensor");
        for transposed in [false, true] {
            let b = rng.tensor(&[n, 2]);
            let got = solve(&at, &b, la::AssumeA::Banded, transposed);
            let want = solve(&at, &b, la::AssumeA::General, transposed);
            agrees(
                &format!("n={n} kl={kl} ku={ku} transposed={transposed}"),
                &got,
                &want,
                kappa,
            );
        }
    }
}

#[test]
fn structured_solves_batch_broadcast_and_run_in_float32() {
    let mut rng = Rng(13);
    let n = 24;
    let mut mats = Vec::new();
    let mut bands = Vec::new();
    for _ in 0..3 {
        let (full, band) = rng.tridiagonal(n, true);
        mats.extend(full);
        bands.extend(band);
    }
    let a = Tensor::from_slice(&mats, &[3, 1, n, n]).expect("tensor");
    let dense = Tensor::from_slice(&bands, &[3, 1, n, n]).expect("tensor");
    let b = rng.tensor(&[2, n, 2]);
    let got = solve(&a, &b, la::AssumeA::Tridiagonal, false);
    assert_eq!(got.shape(), &[3, 2, n, 2]);
    agrees(
        "batched tridiagonal",
        &got,
        &solve(&dense, &b, la::AssumeA::General, false),
        1e3,
    );
    let banded = solve(&dense, &b, la::AssumeA::Banded, false);
    agrees(
        "batched banded",
        &banded,
        &solve(&dense, &b, la::AssumeA::General, false),
        1e3,
    );
    let b32 = b.cast(DType::F32);
    // `a` has junk outside the band, which a banded solve (bandwidths found from the values)
    // would read: it gets the band alone.
    for (assume_a, m) in [
        (la::AssumeA::Tridiagonal, &a),
        (la::AssumeA::Banded, &dense),
    ] {
        let x = solve(&m.cast(DType::F32), &b32, assume_a, false);
        assert_eq!(x.dtype(), DType::F32);
        let e = rel_err(&x.to_vec_as::<f64>(), &got.to_vec_as::<f64>());
        assert!(e < 1e-3, "{assume_a:?} float32: relative error {e:e}");
    }
}

#[test]
fn singular_structured_systems_are_errors_naming_a() {
    let n = 6;
    let b = Tensor::from_slice(&[1.0; 6], &[n]).expect("tensor");
    // A zero column in the band: elimination meets an exactly zero pivot column.
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in i.saturating_sub(1)..(i + 2).min(n) {
            a[i * n + j] = if j == 3 {
                0.0
            } else {
                1.0 + (i + 2 * j) as f64
            };
        }
    }
    let at = Tensor::from_slice(&a, &[n, n]).expect("tensor");
    for assume_a in [la::AssumeA::Tridiagonal, la::AssumeA::Banded] {
        let err = la::solve(
            &[&at, &b],
            &la::SolveParams {
                assume_a,
                ..Default::default()
            },
        )
        .expect_err("singular");
        let msg = err.to_string();
        assert!(msg.contains("`a` is singular"), "{assume_a:?}: {msg}");
    }
}

#[test]
fn batches_of_tiny_matrices_equal_single_calls_in_the_parallel_driver() {
    let mut rng = Rng(14);
    let (batch, n) = (1000, 8);
    let a = rng.spd(batch, n);
    let b = rng.tensor(&[batch, n]);
    let nd = Some(1);
    let l = one(la::cholesky(&[&a], &la::CholeskyParams::default()));
    let x = one(la::cho_solve(
        &[&l, &b],
        &la::ChoSolveParams {
            lower: true,
            b_ndim: nd,
        },
    ));
    let y = one(la::solve(
        &[&a, &b],
        &la::SolveParams {
            b_ndim: nd,
            ..Default::default()
        },
    ));
    for k in [0, 1, 499, 999] {
        let ak = Tensor::from_slice(&mat_at(&a, k).d, &[n, n]).expect("tensor");
        let bk = Tensor::from_slice(&vec_at(&b, k), &[n]).expect("tensor");
        let lk = one(la::cholesky(&[&ak], &la::CholeskyParams::default()));
        assert_eq!(mat_at(&l, k).d, lk.to_vec_as::<f64>(), "cholesky {k}");
        let xk = one(la::cho_solve(
            &[&lk, &bk],
            &la::ChoSolveParams {
                lower: true,
                b_ndim: nd,
            },
        ));
        assert_eq!(vec_at(&x, k), xk.to_vec_as::<f64>(), "cho_solve {k}");
        let yk = one(la::solve(&[&ak, &bk], &la::SolveParams::default()));
        assert_eq!(vec_at(&y, k), yk.to_vec_as::<f64>(), "solve {k}");
        let am = mat_at(&a, k);
        let r = am.mul(&M::new(n, 1, vec_at(&y, k)));
        let e = rel_err(&r.d, &vec_at(&b, k));
        assert!(e < 1e-13, "residual {k}: {e:e}");
    }
}

#[test]
fn tiny_and_larger_matrices_satisfy_the_same_identities() {
    let mut rng = Rng(15);
    // 16 is the largest order of the unblocked kernels; 17 and 20 take faer.
    for n in [1, 2, 5, 15, 16, 17, 20] {
        let batch = 3;
        let g = rng.tensor(&[batch, n, n]);
        let mut gd = g.to_vec_as::<f64>();
        for k in 0..batch {
            for i in 0..n {
                gd[k * n * n + i * n + i] += 2.0 * n as f64;
            }
        }
        let a = Tensor::from_slice(&gd, &[batch, n, n]).expect("tensor");
        let b = rng.tensor(&[batch, n, 2]);
        for trans in [la::Trans::N, la::Trans::T] {
            for lower in [true, false] {
                for unit in [false, true] {
                    let x = one(la::solve_triangular(
                        &[&a, &b],
                        &la::SolveTriangularParams {
                            lower,
                            trans,
                            unit_diagonal: unit,
                            b_ndim: None,
                        },
                    ));
                    for k in 0..batch {
                        let mut t = mat_at(&a, k);
                        for i in 0..n {
                            for j in 0..n {
                                if (lower && j > i) || (!lower && j < i) {
                                    t.d[i * n + j] = 0.0;
                                } else if unit && i == j {
                                    t.d[i * n + j] = 1.0;
                                }
                            }
                        }
                        if trans == la::Trans::T {
                            t = t.t();
                        }
                        let r = t.mul(&mat_at(&x, k));
                        let e = rel_err(&r.d, &mat_at(&b, k).d);
                        assert!(
                            e < 1e-12,
                            "n={n} {trans:?} lower={lower} unit={unit}: {e:e}"
                        );
                    }
                }
            }
        }
        for (assume_a, transposed) in [
            (la::AssumeA::General, false),
            (la::AssumeA::General, true),
            (la::AssumeA::Symmetric, false),
        ] {
            for lower in [true, false] {
                let x = one(la::solve(
                    &[&a, &b],
                    &la::SolveParams {
                        assume_a,
                        lower,
                        transposed,
                        b_ndim: None,
                    },
                ));
                for k in 0..batch {
                    let mut m = mat_at(&a, k);
                    if assume_a == la::AssumeA::Symmetric {
                        for i in 0..n {
                            for j in 0..n {
                                let (hi, lo) = (i.max(j), i.min(j));
                                m.d[i * n + j] = if lower {
                                    mat_at(&a, k).at(hi, lo)
                                } else {
                                    mat_at(&a, k).at(lo, hi)
                                };
                            }
                        }
                    } else if transposed {
                        m = m.t();
                    }
                    let r = m.mul(&mat_at(&x, k));
                    let e = rel_err(&r.d, &mat_at(&b, k).d);
                    assert!(e < 1e-12, "n={n} {assume_a:?} lower={lower}: {e:e}");
                }
            }
        }
    }
}
