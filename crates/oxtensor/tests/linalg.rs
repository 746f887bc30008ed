//! Linear algebra as graph ops: values (hand-computed, and the `oxtensor-linalg` kernels,
//! themselves checked against SciPy fixtures) in both backends, gufunc batch broadcasting,
//! build-time errors, and gradients against finite differences (`verify_grad`), batched and
//! unbatched.

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::{
    AssumeA, DType, Mode, QrMode, Tensor, TensorType, Var, function, linalg as la, ops,
};
use oxtensor_testkit::{Tol, assert_close};

/// The modes both backends are checked in: the interpreter and native code.
pub(crate) fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_COMPILE,
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
    ]
}

/// Linear algebra on well-conditioned inputs: a scaled tolerance (pivot order and blocking
/// differ between the kernels and their references).
pub(crate) const TOL: Tol = Tol::REORDERED.or_scaled(1e-11);

/// Deterministic uniform values in [-1, 1).
pub(crate) fn uniform(seed: u64, n: usize) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

pub(crate) fn t(data: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(data, shape).expect("tensor")
}

/// A batch of `n×n` matrices `m + shift·I` (diagonally dominant for a large shift).
fn shifted(seed: u64, batch: &[usize], n: usize, shift: f64) -> Tensor {
    let count: usize = batch.iter().product::<usize>() * n * n;
    let mut v = uniform(seed, count);
    for (k, x) in v.iter_mut().enumerate() {
        if (k % (n * n)) / n == k % n {
            *x += shift;
        }
    }
    let mut shape = batch.to_vec();
    shape.extend([n, n]);
    t(&v, &shape)
}

/// A batch of symmetric positive-definite matrices `m mᵀ + n·I`.
fn spd(seed: u64, batch: &[usize], n: usize) -> Tensor {
    let m = shifted(seed, batch, n, 0.0).to_vec_as::<f64>();
    let mut out = vec![0.0; m.len()];
    for (b, (src, dst)) in m.chunks(n * n).zip(out.chunks_mut(n * n)).enumerate() {
        let _ = b;
        for i in 0..n {
            for j in 0..n {
                let dot: f64 = (0..n).map(|k| src[i * n + k] * src[j * n + k]).sum();
                dst[i * n + j] = dot + if i == j { n as f64 } else { 0.0 };
            }
        }
    }
    let mut shape = batch.to_vec();
    shape.extend([n, n]);
    t(&out, &shape)
}

fn input_like(name: &str, x: &Tensor) -> Var {
    let shape: Vec<Option<usize>> = x.shape().iter().map(|_| None).collect();
    Var::input(Some(name), TensorType::new(x.dtype(), &shape))
}

/// Evaluates `outs` of `ins` at `args` in every mode, checking the modes agree with `want`.
pub(crate) fn check(ins: &[Var], outs: &[Var], args: &[Tensor], want: &[Tensor]) {
    for mode in modes() {
        let f = function(ins, outs).mode(mode).build().expect("compile");
        let got = f.call(args).expect("call");
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert_close(&format!("output {k}"), g, w, TOL);
        }
    }
}

#[test]
fn cholesky_det_and_inv_of_a_small_matrix_match_hand_values() {
    let a = t(&[4.0, 2.0, 2.0, 3.0], &[2, 2]);
    let x = input_like("a", &a);
    let outs = [
        la::cholesky(&x, true, true).expect("chol"),
        la::det(&x).expect("det"),
        la::inv(&x).expect("inv"),
    ];
    let s2 = 2f64.sqrt();
    let want = [
        t(&[2.0, 0.0, 1.0, s2], &[2, 2]),
        Tensor::scalar(8.0f64),
        t(&[3.0 / 8.0, -0.25, -0.25, 0.5], &[2, 2]),
    ];
    check(&[x], &outs, &[a], &want);
}

#[test]
fn every_wired_op_matches_its_kernel_batched_in_both_backends() {
    let a = spd(1, &[2, 3], 4);
    let g = shifted(2, &[2, 3], 4, 4.0);
    let b = t(&uniform(3, 4 * 2), &[4, 2]);
    let (xa, xg, xb) = (
        input_like("a", &a),
        input_like("g", &g),
        input_like("b", &b),
    );
    let ops_and_refs: Vec<(Var, Tensor)> = vec![
        (
            la::cholesky(&xa, false, false).expect("chol"),
            oxtensor_linalg::cholesky(
                &[&a],
                &oxtensor_linalg::CholeskyParams {
                    lower: false,
                    on_error: oxtensor_linalg::OnError::Raise,
                },
            )
            .expect("ref")
            .remove(0),
        ),
        (
            la::solve(&xg, &xb, AssumeA::General, true, false, None).expect("solve"),
            oxtensor_linalg::solve(&[&g, &b], &Default::default())
                .expect("ref")
                .remove(0),
        ),
        (
            la::solve(&xa, &xb, AssumeA::PositiveDefinite, true, true, None).expect("solve"),
            oxtensor_linalg::solve(
                &[&a, &b],
                &oxtensor_linalg::SolveParams {
                    assume_a: oxtensor_linalg::AssumeA::PositiveDefinite,
                    lower: true,
                    transposed: true,
                    b_ndim: None,
                },
            )
            .expect("ref")
            .remove(0),
        ),
        (
            la::slogdet(&xg).expect("slogdet").1,
            oxtensor_linalg::slogdet(&[&g]).expect("ref").remove(1),
        ),
        (
            la::eigvalsh(&xa, true).expect("eigvalsh"),
            oxtensor_linalg::eigvalsh(&[&a], true)
                .expect("ref")
                .remove(0),
        ),
        (
            la::pinv(&xg).expect("pinv"),
            oxtensor_linalg::pinv(&[&g], None).expect("ref").remove(0),
        ),
        (
            la::expm(&xg).expect("expm"),
            oxtensor_linalg::expm(&[&g]).expect("ref").remove(0),
        ),
    ];
    let (outs, want): (Vec<Var>, Vec<Tensor>) = ops_and_refs.into_iter().unzip();
    check(&[xa, xg, xb], &outs, &[a, g, b], &want);
}

#[test]
fn batch_dimensions_broadcast_as_numpy_gufuncs() {
    // a: (2, 1, 3, 3) against b: (4, 3) vectors (b_ndim = 1): x is (2, 4, 3).
    let x = oxtensor::tensor("a", DType::F64, &[Some(2), Some(1), Some(3), Some(3)]);
    let y = oxtensor::tensor("b", DType::F64, &[Some(4), Some(3)]);
    let s = la::solve(&x, &y, AssumeA::General, true, false, Some(1)).expect("solve");
    assert_eq!(s.ty().shape.as_slice(), &[Some(2), Some(4), Some(3)]);
    let a = shifted(5, &[2, 1], 3, 3.0);
    let b = t(&uniform(6, 12), &[4, 3]);
    let want = oxtensor_linalg::solve(
        &[&a, &b],
        &oxtensor_linalg::SolveParams {
            b_ndim: Some(1),
            ..Default::default()
        },
    )
    .expect("ref")
    .remove(0);
    assert_eq!(want.shape(), &[2, 4, 3]);
    check(&[x, y], &[s], &[a, b], &[want]);
}

#[test]
fn integer_inputs_compute_in_float64_and_float32_stays_float32() {
    let i = oxtensor::matrix("i", DType::I64);
    assert_eq!(la::det(&i).expect("det").dtype(), DType::F64);
    let f = oxtensor::matrix("f", DType::F32);
    assert_eq!(la::inv(&f).expect("inv").dtype(), DType::F32);
    let y = oxtensor::vector("y", DType::F64);
    let s = la::solve(&f, &y, AssumeA::General, true, false, None).expect("solve");
    assert_eq!(s.dtype(), DType::F64);
}

#[test]
fn build_errors_name_the_input_and_what_was_expected() {
    let v = oxtensor::vector("v", DType::F64);
    let e = la::cholesky(&v, true, true).expect_err("rank").to_string();
    assert!(e.contains("'v'") && e.contains("at least 2"), "{e}");
    let r = oxtensor::tensor("r", DType::F64, &[Some(3), Some(4)]);
    let e = la::inv(&r).expect_err("square").to_string();
    assert!(e.contains("square") && e.contains("3 and 4"), "{e}");
    let a = oxtensor::tensor("a", DType::F64, &[Some(3), Some(3)]);
    let b = oxtensor::tensor("b", DType::F64, &[Some(5), Some(2)]);
    let e = la::solve(&a, &b, AssumeA::General, true, false, None)
        .expect_err("rows")
        .to_string();
    assert!(
        e.contains("'a'") && e.contains("'b'") && e.contains("5"),
        "{e}"
    );
    let a2 = oxtensor::tensor("a2", DType::F64, &[Some(2), Some(3), Some(3)]);
    let b2 = oxtensor::tensor("b2", DType::F64, &[Some(4), Some(3), Some(1)]);
    let e = la::solve(&a2, &b2, AssumeA::General, true, false, None)
        .expect_err("batch")
        .to_string();
    assert!(e.contains("broadcast") && e.contains("'b2'"), "{e}");
}

#[test]
fn singular_and_indefinite_matrices_raise_at_run_time_or_give_nans() {
    let x = oxtensor::matrix("x", DType::F64);
    let bad = t(&[1.0, 2.0, 2.0, 1.0], &[2, 2]);
    for mode in modes() {
        let nan = function(
            std::slice::from_ref(&x),
            &[la::cholesky(&x, true, true).expect("c")],
        )
        .mode(mode.clone())
        .build()
        .expect("f");
        let out = nan.call(std::slice::from_ref(&bad)).expect("nan mode");
        assert!(out[0].to_vec_as::<f64>().iter().all(|v| v.is_nan()));
        let raise = function(
            std::slice::from_ref(&x),
            &[la::cholesky(&x, true, false).expect("c")],
        )
        .mode(mode.clone())
        .build()
        .expect("f");
        let e = raise
            .call(std::slice::from_ref(&bad))
            .expect_err("raise")
            .to_string();
        assert!(e.contains("not positive definite"), "{e}");
        let inv = function(std::slice::from_ref(&x), &[la::inv(&x).expect("inv")])
            .mode(mode)
            .build()
            .expect("f");
        let e = inv
            .call(&[t(&[1.0, 2.0, 2.0, 4.0], &[2, 2])])
            .expect_err("singular")
            .to_string();
        assert!(e.contains("singular"), "{e}");
    }
}

#[test]
fn tril_triu_diagonal_and_trace_match_numpy() {
    let v: Vec<f64> = (1..=12).map(f64::from).collect();
    let a = t(&v, &[3, 4]);
    let x = input_like("a", &a);
    let outs = [
        la::tril(&x, 0).expect("tril"),
        la::triu(&x, 1).expect("triu"),
        la::diagonal(&x).expect("diagonal"),
    ];
    let want = [
        t(&[1., 0., 0., 0., 5., 6., 0., 0., 9., 10., 11., 0.], &[3, 4]),
        t(&[0., 2., 3., 4., 0., 0., 7., 8., 0., 0., 0., 12.], &[3, 4]),
        t(&[1., 6., 11.], &[3]),
    ];
    check(std::slice::from_ref(&x), &outs, &[a], &want);
    let sq = t(&v[..9], &[3, 3]);
    let y = input_like("s", &sq);
    check(
        std::slice::from_ref(&y),
        &[la::trace(&y).expect("trace")],
        &[sq],
        &[Tensor::scalar(15.0f64)],
    );
}

pub(crate) fn vg(
    what: &str,
    f: impl FnOnce(&[Var]) -> Result<Var, oxtensor::GraphError>,
    points: &[Tensor],
) {
    verify_grad(
        |xs| Ok(f(xs)?),
        points,
        &VerifyGradOptions {
            n_tests: 2,
            ..VerifyGradOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
}

#[test]
fn gradients_of_cholesky_match_finite_differences() {
    for batch in [&[][..], &[2][..]] {
        vg(
            "cholesky lower",
            |x| la::cholesky(&x[0], true, true),
            &[spd(7, batch, 4)],
        );
        vg(
            "cholesky upper",
            |x| la::cholesky(&x[0], false, true),
            &[spd(8, batch, 3)],
        );
    }
}

#[test]
fn gradients_of_solvers_match_finite_differences() {
    for batch in [&[][..], &[2][..]] {
        let g = shifted(9, batch, 3, 3.0);
        let a = spd(10, batch, 3);
        let bm = t(&uniform(11, 6), &[3, 2]);
        let bv = t(&uniform(12, 3), &[3]);
        for transposed in [false, true] {
            vg(
                "solve gen",
                |x| la::solve(&x[0], &x[1], AssumeA::General, true, transposed, None),
                &[g.clone(), bm.clone()],
            );
        }
        vg(
            "solve gen vector",
            |x| la::solve(&x[0], &x[1], AssumeA::General, true, false, Some(1)),
            &[g.clone(), bv.clone()],
        );
        for lower in [true, false] {
            vg(
                "solve pos",
                |x| la::solve(&x[0], &x[1], AssumeA::PositiveDefinite, lower, false, None),
                &[a.clone(), bm.clone()],
            );
            vg(
                "solve sym",
                |x| la::solve(&x[0], &x[1], AssumeA::Symmetric, lower, false, None),
                &[a.clone(), bm.clone()],
            );
            for trans in [false, true] {
                for unit in [false, true] {
                    vg(
                        "solve_triangular",
                        |x| la::solve_triangular(&x[0], &x[1], trans, lower, unit, None),
                        &[g.clone(), bm.clone()],
                    );
                }
            }
            let c = oxtensor_linalg::cholesky(
                &[&a],
                &oxtensor_linalg::CholeskyParams {
                    lower,
                    on_error: oxtensor_linalg::OnError::Raise,
                },
            )
            .expect("chol")
            .remove(0);
            vg(
                "cho_solve",
                |x| la::cho_solve(&x[0], &x[1], lower, Some(1)),
                &[c, bv.clone()],
            );
        }
    }
}

#[test]
fn gradients_of_inverses_and_determinants_match_finite_differences() {
    for batch in [&[][..], &[2][..]] {
        let g = shifted(13, batch, 3, 3.0);
        vg("inv", |x| la::inv(&x[0]), std::slice::from_ref(&g));
        vg("det", |x| la::det(&x[0]), std::slice::from_ref(&g));
        vg(
            "slogdet",
            |x| Ok(la::slogdet(&x[0])?.1),
            std::slice::from_ref(&g),
        );
        let r = t(&uniform(14, 12), &[3, 4]);
        vg("pinv", |x| la::pinv(&x[0]), &[r]);
    }
}

#[test]
fn gradients_of_eigh_match_finite_differences() {
    for batch in [&[][..], &[2][..]] {
        let a = spd(15, batch, 4);
        for lower in [true, false] {
            vg(
                "eigh w",
                |x| Ok(la::eigh(&x[0], lower)?.0),
                std::slice::from_ref(&a),
            );
            // Eigenvectors are defined up to sign: check a sign-free function of them.
            vg(
                "eigh v",
                |x| {
                    let v = la::eigh(&x[0], lower)?.1;
                    ops::mul(&v, &v)
                },
                std::slice::from_ref(&a),
            );
            vg(
                "eigvalsh",
                |x| la::eigvalsh(&x[0], lower),
                std::slice::from_ref(&a),
            );
        }
    }
}

#[test]
fn gradients_of_matrix_equations_and_expm_match_finite_differences() {
    for batch in [&[][..], &[2][..]] {
        let a = shifted(20, batch, 3, 3.0);
        let bm = shifted(21, batch, 2, 2.0);
        let q = t(&uniform(22, 6), &[3, 2]);
        let q3 = t(&uniform(23, 9), &[3, 3]);
        vg(
            "solve_sylvester",
            |x| la::solve_sylvester(&x[0], &x[1], &x[2]),
            &[a.clone(), bm, q],
        );
        vg(
            "solve_continuous_lyapunov",
            |x| la::solve_continuous_lyapunov(&x[0], &x[1]),
            &[a.clone(), q3.clone()],
        );
        // Spectral radius below one, so the discrete equation is well conditioned.
        let small = shifted(24, batch, 3, 0.0).cast(DType::F64);
        let small = t(
            &small
                .to_vec_as::<f64>()
                .iter()
                .map(|v| 0.3 * v)
                .collect::<Vec<_>>(),
            small.shape(),
        );
        vg(
            "solve_discrete_lyapunov",
            |x| la::solve_discrete_lyapunov(&x[0], &x[1]),
            &[small.clone(), q3],
        );
        vg("expm", |x| la::expm(&x[0]), &[small]);
        let k = t(&uniform(25, 6), &[2, 3]);
        vg("kron", |x| la::kron(&x[0], &x[1]), &[a.clone(), k]);
    }
}

#[test]
fn gradients_of_svd_match_finite_differences() {
    for batch in [&[][..], &[2][..]] {
        for (m, n) in [(3, 3), (4, 3), (3, 4)] {
            let count = batch.iter().product::<usize>() * m * n;
            let mut shape = batch.to_vec();
            shape.extend([m, n]);
            let a = t(&uniform(30 + m as u64 * 7 + n as u64, count), &shape);
            vg(
                "svd s",
                |x| Ok(la::svd(&x[0], false, false)?.remove(0)),
                std::slice::from_ref(&a),
            );
            vg(
                "svd s (full)",
                |x| Ok(la::svd(&x[0], true, true)?.remove(1)),
                std::slice::from_ref(&a),
            );
            // Singular vectors are defined up to sign: check sign-free functions of them.
            vg(
                "svd u",
                |x| {
                    let u = la::svd(&x[0], false, true)?.remove(0);
                    ops::mul(&u, &u)
                },
                std::slice::from_ref(&a),
            );
            vg(
                "svd vh",
                |x| {
                    let vh = la::svd(&x[0], false, true)?.remove(2);
                    ops::mul(&vh, &vh)
                },
                std::slice::from_ref(&a),
            );
        }
    }
}

#[test]
fn gradient_of_a_broadcast_right_hand_side_is_summed_over_the_batch() {
    let g = shifted(16, &[2], 3, 3.0);
    let bv = t(&uniform(17, 3), &[3]);
    vg(
        "solve broadcast b",
        |x| la::solve(&x[0], &x[1], AssumeA::General, true, false, Some(1)),
        &[g, bv],
    );
}

#[test]
fn a_gaussian_log_likelihood_differentiates_through_cholesky_and_triangular_solves() {
    // -½ yᵀ K⁻¹ y − Σ log diag(L), with K = L Lᵀ.
    let k = spd(18, &[], 4);
    let y = t(&uniform(19, 4), &[4]);
    vg(
        "gp",
        |x| {
            let l = la::cholesky(&x[0], true, true)?;
            let alpha = la::solve_triangular(&l, &x[1], false, true, false, None)?;
            let quad = ops::sum(&ops::mul(&alpha, &alpha)?, None, false)?;
            let logdet = ops::sum(&ops::log(&la::diagonal(&l)?)?, None, false)?;
            ops::neg(&ops::add(
                &ops::with_scalar(oxtensor::oxtensor_graph::ScalarOp::Mul, &quad, 0.5, false)?,
                &logdet,
            )?)
        },
        &[k, y],
    );
}

/// A batch of `m×n` matrices of uniform values (generic: full rank, distinct pivots).
fn rect(seed: u64, batch: &[usize], m: usize, n: usize) -> Tensor {
    let mut shape = batch.to_vec();
    shape.extend([m, n]);
    t(&uniform(seed, shape.iter().product()), &shape)
}

#[test]
fn gradients_of_qr_match_finite_differences() {
    for batch in [&[][..], &[2][..]] {
        for (m, n) in [(3, 3), (4, 3), (3, 4)] {
            let a = rect(40 + 3 * m as u64 + n as u64, batch, m, n);
            vg(
                "qr q",
                |x| Ok(la::qr(&x[0], QrMode::Reduced)?.remove(0)),
                std::slice::from_ref(&a),
            );
            vg(
                "qr r",
                |x| Ok(la::qr(&x[0], QrMode::Reduced)?.remove(1)),
                std::slice::from_ref(&a),
            );
            vg(
                "qr q and r",
                |x| {
                    let f = la::qr(&x[0], QrMode::Reduced)?;
                    ops::add(
                        &ops::sum(&f[0], None, false)?,
                        &ops::sum(&f[1], None, false)?,
                    )
                },
                std::slice::from_ref(&a),
            );
            vg(
                "qr mode r",
                |x| Ok(la::qr(&x[0], QrMode::R)?.remove(0)),
                std::slice::from_ref(&a),
            );
            if m <= n {
                vg(
                    "qr complete",
                    |x| {
                        let f = la::qr(&x[0], QrMode::Complete)?;
                        ops::add(
                            &ops::sum(&f[0], None, false)?,
                            &ops::sum(&f[1], None, false)?,
                        )
                    },
                    std::slice::from_ref(&a),
                );
            }
        }
    }
}

#[test]
fn gradient_of_complete_qr_of_a_tall_matrix_is_undefined() {
    let x = Var::input(Some("a"), TensorType::new(DType::F64, &[Some(4), Some(3)]));
    let r = la::qr(&x, QrMode::Complete).expect("qr").remove(1);
    let cost = ops::sum(&r, None, false).expect("sum");
    let err = oxtensor::grad(&cost, &[x], &Default::default()).expect_err("undefined");
    assert!(err.to_string().contains("m <= n"), "{err}");
}

#[test]
fn gradients_of_lu_match_finite_differences() {
    for batch in [&[][..], &[2][..]] {
        let a = shifted(50, batch, 4, 0.5);
        for p_indices in [false, true] {
            vg(
                "lu l",
                |x| Ok(la::lu(&x[0], p_indices)?.remove(1)),
                std::slice::from_ref(&a),
            );
            vg(
                "lu u",
                |x| Ok(la::lu(&x[0], p_indices)?.remove(2)),
                std::slice::from_ref(&a),
            );
        }
        vg(
            "lu_factor",
            |x| Ok(la::lu_factor(&x[0])?.0),
            std::slice::from_ref(&a),
        );
        let bm = t(&uniform(51, 8), &[4, 2]);
        let bv = t(&uniform(52, 4), &[4]);
        for trans in [false, true] {
            vg(
                "lu_solve matrix",
                |x| {
                    let (lu, piv) = la::lu_factor(&x[0])?;
                    la::lu_solve(&lu, &piv, &x[1], trans, Some(2))
                },
                &[a.clone(), bm.clone()],
            );
            vg(
                "lu_solve vector",
                |x| {
                    let (lu, piv) = la::lu_factor(&x[0])?;
                    la::lu_solve(&lu, &piv, &x[1], trans, Some(1))
                },
                &[a.clone(), bv.clone()],
            );
        }
    }
}

#[test]
fn lu_solve_gradient_reaches_the_packed_factors_directly() {
    let a = shifted(53, &[], 3, 0.5);
    let f = oxtensor_linalg::lu_factor(&[&a]).expect("lu_factor");
    let (packed, piv) = (f[0].clone(), f[1].clone());
    let b = t(&uniform(54, 3), &[3]);
    for trans in [false, true] {
        let piv = piv.clone();
        vg(
            "lu_solve packed",
            move |x| la::lu_solve(&x[0], &Var::constant(piv), &x[1], trans, Some(1)),
            &[packed.clone(), b.clone()],
        );
    }
}

/// `a` with the entries more than `kl` below or `ku` above the diagonal zeroed.
fn band_of(a: &Tensor, kl: usize, ku: usize) -> Tensor {
    let n = a.shape()[a.ndim() - 1];
    let mut v = a.to_vec_as::<f64>();
    for (k, x) in v.iter_mut().enumerate() {
        let (i, j) = ((k % (n * n)) / n, k % n);
        if i > j + kl || j > i + ku {
            *x = 0.0;
        }
    }
    t(&v, a.shape())
}

#[test]
fn tridiagonal_and_banded_solves_match_dense_solves_in_both_backends() {
    let a = shifted(21, &[2], 9, 0.5);
    let band = band_of(&a, 2, 1);
    let b = t(&uniform(22, 9 * 3), &[9, 3]);
    let (xa, xband, xb) = (
        input_like("a", &a),
        input_like("band", &band),
        input_like("b", &b),
    );
    for transposed in [false, true] {
        let dense = |m: &Tensor| {
            oxtensor_linalg::solve(
                &[m, &b],
                &oxtensor_linalg::SolveParams {
                    transposed,
                    ..Default::default()
                },
            )
            .expect("solve")
            .remove(0)
        };
        let tri = la::solve(&xa, &xb, AssumeA::Tridiagonal, true, transposed, None).expect("tri");
        let banded = la::solve(&xband, &xb, AssumeA::Banded, true, transposed, None).expect("band");
        check(
            &[xa.clone(), xband.clone(), xb.clone()],
            &[tri, banded],
            &[a.clone(), band.clone(), b.clone()],
            &[dense(&band_of(&a, 1, 1)), dense(&band)],
        );
    }
}

#[test]
fn gradients_of_structured_solves_match_finite_differences() {
    let a = shifted(23, &[], 5, 0.5);
    let b = t(&uniform(24, 10), &[5, 2]);
    for transposed in [false, true] {
        vg(
            "solve tridiagonal",
            |x| la::solve(&x[0], &x[1], AssumeA::Tridiagonal, true, transposed, None),
            &[a.clone(), b.clone()],
        );
        vg(
            "solve banded",
            |x| la::solve(&x[0], &x[1], AssumeA::Banded, true, transposed, None),
            &[band_of(&a, 1, 2), b.clone()],
        );
    }
    // Entries outside the three diagonals are not read: their gradient is exactly zero.
    let (xa, xb) = (input_like("a", &a), input_like("b", &b));
    let x = la::solve(&xa, &xb, AssumeA::Tridiagonal, true, false, None).expect("solve");
    let g = oxtensor::grad_vars(&x.sum(None), std::slice::from_ref(&xa)).expect("grad");
    let f = function(&[xa, xb], &g).build().expect("compile");
    let ga = f.call(&[a, b]).expect("call").remove(0).to_vec_as::<f64>();
    for (k, v) in ga.iter().enumerate() {
        let (i, j) = (k / 5, k % 5);
        if i.abs_diff(j) > 1 {
            assert_eq!(*v, 0.0, "gradient at ({i}, {j})");
        }
    }
}
