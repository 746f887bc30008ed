//! Property tests on random matrices from fixed seeds: factorisations reconstruct their input,
//! solves leave small residuals, identities between ops hold, batching (sequential and
//! parallel) equals op-by-op calls, and bad inputs give errors naming the argument.

use crate::common;

use common::*;
use oxtensor_data::{DType, Tensor};
use oxtensor_linalg as la;

/// The matrices these tests draw.
impl Rng {
    /// A batch of well-conditioned general matrices (random plus a diagonal shift).
    fn general(&mut self, batch: usize, n: usize) -> Tensor {
        let mut d = self.vec(batch * n * n);
        for b in 0..batch {
            for i in 0..n {
                d[b * n * n + i * n + i] += 2.0 * n as f64;
            }
        }
        Tensor::from_slice(&d, &[batch, n, n]).expect("tensor")
    }
}

const TOL: f64 = 1e-11;

fn close(what: &str, a: &[f64], b: &[f64], tol: f64) {
    let e = rel_err(a, b);
    assert!(e <= tol, "{what}: relative error {e:e} > {tol:e}");
}

fn one(r: Result<Vec<Tensor>, la::LinalgError>) -> Tensor {
    r.expect("op succeeds").remove(0)
}

#[test]
fn cholesky_reconstructs_random_spd_matrices() {
    let mut rng = Rng(1);
    for n in 1..9 {
        let a = rng.spd(4, n);
        let l = one(la::cholesky(&[&a], &la::CholeskyParams::default()));
        let u = one(la::cholesky(
            &[&a],
            &la::CholeskyParams {
                lower: false,
                ..Default::default()
            },
        ));
        for b in 0..4 {
            let (lm, um, am) = (mat_at(&l, b), mat_at(&u, b), mat_at(&a, b));
            close("L Lᵀ = A", &lm.mul(&lm.t()).d, &am.d, TOL);
            close("U = Lᵀ", &um.d, &lm.t().d, TOL);
            assert!(
                (0..n).all(|i| (i + 1..n).all(|j| lm.at(i, j) == 0.0)),
                "L is lower triangular"
            );
        }
    }
}

#[test]
fn solves_leave_small_residuals_and_agree_with_each_other() {
    let mut rng = Rng(2);
    for n in [1, 2, 5, 8] {
        let a = rng.spd(3, n);
        let b = rng.tensor(&[3, n, 2]);
        let x = one(la::solve(&[&a, &b], &la::SolveParams::default()));
        for k in 0..3 {
            close(
                "A x = b",
                &mat_at(&a, k).mul(&mat_at(&x, k)).d,
                &mat_at(&b, k).d,
                TOL,
            );
        }
        let pos = one(la::solve(
            &[&a, &b],
            &la::SolveParams {
                assume_a: la::AssumeA::PositiveDefinite,
                ..Default::default()
            },
        ));
        close(
            "pos = gen",
            &pos.to_vec_as::<f64>(),
            &x.to_vec_as::<f64>(),
            TOL,
        );
        let l = one(la::cholesky(&[&a], &la::CholeskyParams::default()));
        let cho = one(la::cho_solve(
            &[&l, &b],
            &la::ChoSolveParams {
                lower: true,
                b_ndim: None,
            },
        ));
        close(
            "cho_solve = solve",
            &cho.to_vec_as::<f64>(),
            &x.to_vec_as::<f64>(),
            TOL,
        );
        let mut f = la::lu_factor(&[&a]).expect("lu_factor");
        let piv = f.pop().expect("piv");
        assert_eq!(piv.dtype(), DType::I32);
        let lus = one(la::lu_solve(
            &[&f[0], &piv, &b],
            &la::LuSolveParams::default(),
        ));
        close(
            "lu_solve = solve",
            &lus.to_vec_as::<f64>(),
            &x.to_vec_as::<f64>(),
            TOL,
        );
        let inv = one(la::inv(&[&a]));
        for k in 0..3 {
            close(
                "inv(A) A = I",
                &mat_at(&inv, k).mul(&mat_at(&a, k)).d,
                &M::eye(n).d,
                TOL,
            );
        }
    }
}

#[test]
fn lu_and_qr_reconstruct() {
    let mut rng = Rng(3);
    for (m, n) in [(4, 4), (6, 3), (3, 6), (1, 5)] {
        let a = rng.tensor(&[2, m, n]);
        let plu = la::lu(&[&a], false).expect("lu");
        let q = la::qr(&[&a], la::QrMode::Reduced).expect("qr");
        for b in 0..2 {
            let am = mat_at(&a, b);
            let rec = mat_at(&plu[0], b)
                .mul(&mat_at(&plu[1], b))
                .mul(&mat_at(&plu[2], b));
            close("P L U = A", &rec.d, &am.d, TOL);
            close(
                "Q R = A",
                &mat_at(&q[0], b).mul(&mat_at(&q[1], b)).d,
                &am.d,
                TOL,
            );
        }
    }
}

#[test]
fn det_is_the_product_of_eigenvalues_and_matches_slogdet() {
    let mut rng = Rng(4);
    for n in 1..7 {
        let a = rng.spd(3, n);
        let d = one(la::det(&[&a])).to_vec_as::<f64>();
        let w = one(la::eigvalsh(&[&a], true));
        let sl = la::slogdet(&[&a]).expect("slogdet");
        let (sign, logabs) = (sl[0].to_vec_as::<f64>(), sl[1].to_vec_as::<f64>());
        for b in 0..3 {
            let prod: f64 = vec_at(&w, b).iter().product();
            close("det = Π eigenvalues", &[d[b]], &[prod], 1e-10);
            close(
                "det = sign · exp(logabsdet)",
                &[d[b]],
                &[sign[b] * logabs[b].exp()],
                1e-10,
            );
        }
        let g = rng.tensor(&[3, n, n]);
        let gd = one(la::det(&[&g])).to_vec_as::<f64>();
        let gs = la::slogdet(&[&g]).expect("slogdet");
        let (gsign, glog) = (gs[0].to_vec_as::<f64>(), gs[1].to_vec_as::<f64>());
        for ((d, s), l) in gd.iter().zip(&gsign).zip(&glog) {
            close("general det = slogdet", &[*d], &[s * l.exp()], 1e-10);
        }
    }
}

#[test]
fn singular_values_are_roots_of_gram_eigenvalues_and_pinv_is_a_pseudo_inverse() {
    let mut rng = Rng(5);
    for (m, n) in [(5, 3), (3, 5), (4, 4)] {
        let a = rng.tensor(&[m, n]);
        let s = one(la::svd(
            &[&a],
            &la::SvdParams {
                compute_uv: false,
                ..Default::default()
            },
        ))
        .to_vec_as::<f64>();
        let am = mat_at(&a, 0);
        let gram = am.t().mul(&am);
        let g = Tensor::from_slice(&gram.d, &[n, n]).expect("gram");
        let mut w: Vec<f64> = one(la::eigvalsh(&[&g], true))
            .to_vec_as::<f64>()
            .iter()
            .rev()
            .map(|x| x.max(0.0).sqrt())
            .collect();
        w.truncate(m.min(n));
        close("s = sqrt(eig(AᵀA))", &s, &w, 1e-10);
        let p = mat_at(&one(la::pinv(&[&a], None)), 0);
        close("A A⁺ A = A", &am.mul(&p).mul(&am).d, &am.d, 1e-10);
        close("A⁺ A A⁺ = A⁺", &p.mul(&am).mul(&p).d, &p.d, 1e-10);
    }
}

#[test]
fn expm_identities() {
    let mut rng = Rng(6);
    for scale in [1e-3, 0.5, 3.0, 8.0] {
        let a = rng.tensor(&[4, 4]);
        let v: Vec<f64> = a.to_vec_as::<f64>().iter().map(|x| x * scale).collect();
        let neg: Vec<f64> = v.iter().map(|x| -x).collect();
        let e = mat_at(
            &one(la::expm(&[&Tensor::from_slice(&v, &[4, 4]).expect("a")])),
            0,
        );
        let en = mat_at(
            &one(la::expm(&[&Tensor::from_slice(&neg, &[4, 4]).expect("a")])),
            0,
        );
        // exp(A) exp(-A) loses accuracy with the norm of A (cancellation in the product).
        let tol = if scale > 1.0 { 1e-9 } else { 1e-12 };
        close("expm(A) expm(-A) = I", &e.mul(&en).d, &M::eye(4).d, tol);
    }
    let d = [0.5, -2.0, 7.0];
    let e = one(la::expm(&[
        &Tensor::from_slice(&M::diag(&d).d, &[3, 3]).expect("a")
    ]));
    close(
        "expm(diag) = diag(exp)",
        &e.to_vec_as::<f64>(),
        &M::diag(&d.map(f64::exp)).d,
        1e-13,
    );
    let nan = Tensor::from_slice(&[f64::NAN, 0.0, 0.0, 1.0], &[2, 2]).expect("a");
    assert!(
        one(la::expm(&[&nan]))
            .to_vec_as::<f64>()
            .iter()
            .all(|x| x.is_nan())
    );
}

#[test]
fn sylvester_and_lyapunov_residuals() {
    let mut rng = Rng(7);
    let a = mat_at(&rng.general(1, 4), 0);
    let b = mat_at(&rng.general(1, 3), 0);
    let q = M::new(4, 3, rng.vec(12));
    let t = |m: &M| Tensor::from_slice(&m.d, &[m.r, m.c]).expect("t");
    let x = mat_at(&one(la::solve_sylvester(&[&t(&a), &t(&b), &t(&q)])), 0);
    let lhs = a
        .mul(&x)
        .d
        .iter()
        .zip(x.mul(&b).d)
        .map(|(p, r)| p + r)
        .collect::<Vec<_>>();
    close("A X + X B = Q", &lhs, &q.d, TOL);
    let q4 = M::new(4, 4, rng.vec(16));
    let neg_a = M::new(4, 4, a.d.iter().map(|v| -v).collect());
    let x = mat_at(
        &one(la::solve_continuous_lyapunov(&[&t(&neg_a), &t(&q4)])),
        0,
    );
    let lhs = neg_a
        .mul(&x)
        .d
        .iter()
        .zip(x.mul(&neg_a.t()).d)
        .map(|(p, r)| p + r)
        .collect::<Vec<_>>();
    close("A X + X Aᵀ = Q", &lhs, &q4.d, TOL);
    let small = M::new(4, 4, a.d.iter().map(|v| v * 0.05).collect());
    let x = mat_at(&one(la::solve_discrete_lyapunov(&[&t(&small), &t(&q4)])), 0);
    let axa = small.mul(&x).mul(&small.t());
    let lhs: Vec<f64> = axa.d.iter().zip(&x.d).map(|(p, r)| r - p).collect();
    close("X - A X Aᵀ = Q", &lhs, &q4.d, TOL);
}

#[test]
fn large_sylvester_and_lyapunov_equations_have_small_residuals() {
    let mut rng = Rng(12);
    let t = |m: &M| Tensor::from_slice(&m.d, &[m.r, m.c]).expect("t");
    let (m, n) = (60, 45);
    let a = M::new(m, m, rng.vec(m * m));
    let b = M::new(n, n, rng.vec(n * n));
    let q = M::new(m, n, rng.vec(m * n));
    let x = mat_at(&one(la::solve_sylvester(&[&t(&a), &t(&b), &t(&q)])), 0);
    let lhs: Vec<f64> = a
        .mul(&x)
        .d
        .iter()
        .zip(x.mul(&b).d)
        .map(|(p, r)| p + r)
        .collect();
    close("A X + X B = Q (60×45)", &lhs, &q.d, 1e-9);
    let k = 30;
    let a = M::new(k, k, rng.vec(k * k).iter().map(|v| v * 0.1).collect());
    let q = M::new(k, k, rng.vec(k * k));
    let x = mat_at(&one(la::solve_discrete_lyapunov(&[&t(&a), &t(&q)])), 0);
    let axa = a.mul(&x).mul(&a.t());
    let lhs: Vec<f64> = axa.d.iter().zip(&x.d).map(|(p, r)| r - p).collect();
    close("X - A X Aᵀ = Q (30×30, bilinear)", &lhs, &q.d, 1e-10);
}

#[test]
fn batching_broadcasts_and_parallel_batches_match_single_calls() {
    let mut rng = Rng(8);
    // 400 batch elements of 8×8 take the parallel path.
    let a = rng.general(400, 8);
    let b = rng.tensor(&[8, 3]);
    let x = one(la::solve(&[&a, &b], &la::SolveParams::default()));
    assert_eq!(x.shape(), &[400, 8, 3]);
    for k in [0, 199, 399] {
        let ak = Tensor::from_slice(&mat_at(&a, k).d, &[8, 8]).expect("a");
        let xk = one(la::solve(&[&ak, &b], &la::SolveParams::default()));
        assert_eq!(mat_at(&x, k).d, xk.to_vec_as::<f64>(), "batch element {k}");
    }
    // (2,1) batch against (3,) batch broadcasts to (2,3); a transposed view is read correctly.
    let a = rng.general(2, 3).reshape(&[2, 1, 3, 3]).expect("reshape");
    let bt = rng.tensor(&[3, 2, 3]).permute(&[0, 2, 1]);
    let x = one(la::solve(&[&a, &bt], &la::SolveParams::default()));
    assert_eq!(x.shape(), &[2, 3, 3, 2]);
    let bc = bt.to_contiguous();
    for i in 0..2 {
        for j in 0..3 {
            close(
                "broadcast solve",
                &mat_at(&a, i).mul(&mat_at(&x, i * 3 + j)).d,
                &mat_at(&bc, j).d,
                TOL,
            );
        }
    }
}

#[test]
fn float32_inputs_compute_in_float32_close_to_float64() {
    let mut rng = Rng(9);
    let a = rng.spd(2, 5);
    let a32 = a.cast(DType::F32);
    for (name, f) in [
        (
            "inv",
            la::inv as fn(&[&Tensor]) -> Result<Vec<Tensor>, la::LinalgError>,
        ),
        ("det", la::det),
        ("expm", la::expm),
    ] {
        let r32 = one(f(&[&a32]));
        assert_eq!(r32.dtype(), DType::F32, "{name}");
        close(
            name,
            &r32.to_vec_as::<f64>(),
            &one(f(&[&a])).to_vec_as::<f64>(),
            1e-4,
        );
    }
    let ints = Tensor::from_slice(&[2i64, 1, 1, 3], &[2, 2]).expect("ints");
    let d = one(la::det(&[&ints]));
    assert_eq!(d.dtype(), DType::F64);
    close("integer det", &d.to_vec_as::<f64>(), &[5.0], 1e-15);
}

#[test]
fn empty_and_non_finite_inputs_do_not_panic() {
    let e = Tensor::zeros(DType::F64, &[0, 0]).expect("e");
    close(
        "det of 0×0",
        &one(la::det(&[&e])).to_vec_as::<f64>(),
        &[1.0],
        0.0,
    );
    assert_eq!(one(la::inv(&[&e])).shape(), &[0, 0]);
    assert_eq!(
        one(la::cholesky(&[&e], &la::CholeskyParams::default())).shape(),
        &[0, 0]
    );
    let empty_batch = Tensor::zeros(DType::F64, &[0, 3, 3]).expect("e");
    assert_eq!(one(la::inv(&[&empty_batch])).shape(), &[0, 3, 3]);
    let nan = Tensor::full(f64::NAN, &[3, 3]).expect("nan");
    for r in [
        la::svd(&[&nan], &la::SvdParams::default()),
        la::eigh(&[&nan], true),
        la::det(&[&nan]),
        la::lstsq(&[&nan, &nan], &la::LstsqParams::default()),
    ] {
        let _ = r;
    }
}

fn err(r: Result<Vec<Tensor>, la::LinalgError>) -> String {
    r.expect_err("an error").to_string()
}

#[test]
fn bad_inputs_give_errors_naming_the_argument() {
    let mut rng = Rng(10);
    let sq = rng.tensor(&[3, 3]);
    let rect = rng.tensor(&[3, 4]);
    let v = rng.tensor(&[3]);
    let m = err(la::cholesky(&[&rect], &la::CholeskyParams::default()));
    assert!(m.contains("`a`") && m.contains("(..., m, m)"), "{m}");
    let m = err(la::solve(
        &[&sq, &rng.tensor(&[4, 2])],
        &la::SolveParams::default(),
    ));
    assert!(m.contains("`b`") && m.contains("(..., 3, n)"), "{m}");
    let m = err(la::solve(
        &[&rng.tensor(&[2, 3, 3]), &rng.tensor(&[3, 3, 1])],
        &la::SolveParams::default(),
    ));
    assert!(m.contains("do not broadcast"), "{m}");
    let m = err(la::det(&[&v]));
    assert!(m.contains("at least 2 dimension"), "{m}");
    let m = err(la::inv(&[]));
    assert!(m.contains("expected 1 input"), "{m}");
    let m = err(la::solve(
        &[&sq, &v],
        &la::SolveParams {
            b_ndim: Some(3),
            ..Default::default()
        },
    ));
    assert!(m.contains("b_ndim"), "{m}");
    let bad_piv = Tensor::from_slice(&[0i32, 7, 2], &[3]).expect("piv");
    let m = err(la::lu_solve(
        &[&sq, &bad_piv, &v],
        &la::LuSolveParams::default(),
    ));
    assert!(m.contains("`piv`") && m.contains("[0, 3)"), "{m}");
    let m = err(la::lu_solve(&[&sq, &v, &v], &la::LuSolveParams::default()));
    assert!(m.contains("`piv`") && m.contains("integer"), "{m}");
    let m = err(la::eig(&[&Tensor::from_slice(
        &[0.0, -1.0, 1.0, 0.0],
        &[2, 2],
    )
    .expect("rot")]));
    assert!(m.contains("complex"), "{m}");
    let z = Tensor::zeros(DType::F64, &[3, 3]).expect("zeros");
    let m = err(la::solve_continuous_lyapunov(&[&z, &sq]));
    assert!(m.contains("no unique solution"), "{m}");
    let m = err(la::norm(&[&v], la::NormOrd::Fro, false));
    assert!(m.contains("ord"), "{m}");
    let m = err(la::norm(&[&sq], la::NormOrd::P(3.0), true));
    assert!(m.contains("matrices"), "{m}");
    let m = err(la::solve_sylvester(&[&sq, &sq, &rect]));
    assert!(m.contains("`q`"), "{m}");
    let m = err(la::block_diag(&[]));
    assert!(m.contains("at least 1"), "{m}");
}

#[test]
fn kron_and_block_diag_batch() {
    let mut rng = Rng(11);
    let a = rng.tensor(&[2, 2, 3]);
    let b = rng.tensor(&[1, 2]);
    let k = one(la::kron(&[&a, &b]));
    assert_eq!(k.shape(), &[2, 2, 6]);
    let (am, bm, km) = (mat_at(&a, 1), mat_at(&b, 0), mat_at(&k, 1));
    assert_eq!(km.at(1, 5), am.at(1, 2) * bm.at(0, 1));
    assert_eq!(km.at(0, 2), am.at(0, 1) * bm.at(0, 0));
    let d = one(la::block_diag(&[&a, &b]));
    assert_eq!(d.shape(), &[2, 3, 5]);
    assert_eq!(mat_at(&d, 1).at(2, 4), bm.at(0, 1));
    assert_eq!(mat_at(&d, 1).at(0, 4), 0.0);
}

/// Sizes where faer's QR uses several reflector blocks with a partial last one, so the
/// block-by-block formation of `Q` (restricted to the columns each block changes) is
/// exercised in every mode, for tall, wide and square matrices.
#[test]
fn blocked_qr_is_orthogonal_triangular_and_reconstructs() {
    let mut rng = Rng(21);
    for (m, n) in [(70, 45), (45, 70), (130, 130), (200, 37)] {
        let a = rng.tensor(&[m, n]);
        let am = mat_at(&a, 0);
        let k = m.min(n);
        for mode in [la::QrMode::Reduced, la::QrMode::Complete] {
            let f = la::qr(&[&a], mode).expect("qr");
            let (q, r) = (mat_at(&f[0], 0), mat_at(&f[1], 0));
            let qc = if mode == la::QrMode::Complete { m } else { k };
            assert_eq!(
                (q.r, q.c, r.r, r.c),
                (m, qc, qc, n),
                "{mode:?} {m}x{n} shapes"
            );
            close("QᵀQ = I", &q.t().mul(&q).d, &M::eye(qc).d, TOL);
            close("Q R = A", &q.mul(&r).d, &am.d, TOL);
            for i in 0..r.r {
                for j in 0..i.min(n) {
                    assert_eq!(r.at(i, j), 0.0, "{mode:?} {m}x{n}: R[{i}, {j}]");
                }
            }
            let r_only = mat_at(&one(la::qr(&[&a], la::QrMode::R)), 0);
            close("R alone", &r_only.d, &r.rows(k).d, 0.0);
        }
    }
}

/// The multi-output ops write each batch element straight into its slices of the outputs
/// (`run_into_many`); a batch large enough to run in parallel chunks gives exactly the
/// single-matrix results, including an output with no elements.
#[test]
fn multi_output_ops_in_parallel_batches_match_single_calls() {
    let mut rng = Rng(22);
    let (nb, n) = (300, 16);
    let g = rng.tensor(&[nb, n, n]);
    let s = rng.spd(nb, n);
    let thin = la::SvdParams {
        full_matrices: false,
        compute_uv: true,
    };
    let values = la::SvdParams {
        full_matrices: false,
        compute_uv: false,
    };
    type Op<'a> = Box<dyn Fn(&Tensor) -> Vec<Tensor> + 'a>;
    let ops: Vec<(&str, &Tensor, Op)> = vec![
        (
            "qr",
            &g,
            Box::new(|t| la::qr(&[t], la::QrMode::Reduced).expect("qr")),
        ),
        (
            "qr complete",
            &g,
            Box::new(|t| la::qr(&[t], la::QrMode::Complete).expect("qr")),
        ),
        (
            "qr r",
            &g,
            Box::new(|t| la::qr(&[t], la::QrMode::R).expect("qr")),
        ),
        ("svd", &g, Box::new(|t| la::svd(&[t], &thin).expect("svd"))),
        (
            "svd values",
            &g,
            Box::new(|t| la::svd(&[t], &values).expect("svd")),
        ),
        (
            "eigh",
            &s,
            Box::new(|t| la::eigh(&[t], true).expect("eigh")),
        ),
        (
            "eigvalsh",
            &s,
            Box::new(|t| la::eigvalsh(&[t], true).expect("eigvalsh")),
        ),
        ("lu", &g, Box::new(|t| la::lu(&[t], false).expect("lu"))),
        (
            "lu p_indices",
            &g,
            Box::new(|t| la::lu(&[t], true).expect("lu")),
        ),
        (
            "lu_factor",
            &g,
            Box::new(|t| la::lu_factor(&[t]).expect("lu_factor")),
        ),
        (
            "slogdet",
            &g,
            Box::new(|t| la::slogdet(&[t]).expect("slogdet")),
        ),
        (
            "svd full",
            &g,
            Box::new(|t| la::svd(&[t], &la::SvdParams::default()).expect("svd")),
        ),
    ];
    for (name, input, f) in &ops {
        let all = f(input);
        for k in [0, 151, nb - 1] {
            let ak = Tensor::from_slice(&mat_at(input, k).d, &[n, n]).expect("a");
            for (i, (whole, single)) in all.iter().zip(f(&ak)).enumerate() {
                let per = single.to_vec_as::<f64>();
                let got = &whole.to_vec_as::<f64>()[k * per.len()..(k + 1) * per.len()];
                assert_eq!(got, &per[..], "{name} output {i}, batch element {k}");
            }
        }
    }
    // 300 matrices 16×0: U (16×16) is large enough for parallel chunks, s and Vh are empty.
    let empty = Tensor::zeros(DType::F64, &[nb, n, 0]).expect("empty");
    let f = la::svd(&[&empty], &la::SvdParams::default()).expect("svd of 16×0");
    assert_eq!(f[0].shape(), &[nb, n, n]);
    assert_eq!(f[1].shape(), &[nb, 0]);
    assert_eq!(f[2].shape(), &[nb, 0, 0]);
    let u = mat_at(&f[0], nb - 1);
    close("U orthogonal", &u.t().mul(&u).d, &M::eye(n).d, TOL);
}

/// `x` with `a x = b` as faer's `PartialPivLu` solves it (a fresh factorisation and right-hand
/// side per call), row-major: what `solve` and `inv` computed above order 16 before they
/// factored in the caller's workspace.
fn faer_lu_solve<T: la::Real>(a: faer::MatRef<'_, T>, b: faer::MatRef<'_, T>) -> Vec<T> {
    use faer::prelude::Solve;
    let x = a.partial_piv_lu().solve(b);
    let mut out = Vec::with_capacity(x.nrows() * x.ncols());
    for i in 0..x.nrows() {
        for j in 0..x.ncols() {
            out.push(x[(i, j)]);
        }
    }
    out
}

/// The row-major `r × c` matrix `v`.
fn rows<T: la::Real>(v: &[T], r: usize, c: usize) -> faer::MatRef<'_, T> {
    faer::MatRef::from_row_major_slice(v, r, c)
}

/// The symmetric matrix of `a`'s lower triangle, row-major.
fn lower_symmetric<T: Copy>(a: &[T], m: usize) -> Vec<T> {
    (0..m * m)
        .map(|e| {
            let (i, j) = (e / m, e % m);
            a[i.max(j) * m + i.min(j)]
        })
        .collect()
}

/// `solve` (general, transposed, symmetric) and `inv` above order 16, as ops and through a
/// [`la::Workspace`] kept across calls, bit for bit the results of faer's `PartialPivLu`.
fn large_solves_are_faers<T: la::Real>(rng: &mut Rng) {
    // The workspace first serves a small solve and a large determinant (other sizes and
    // alignments), then the large solves, growing and shrinking.
    let mut ws = la::Workspace::new();
    let small: Vec<T> = [2.0, 1.0, 1.0, 3.0].into_iter().map(T::lit).collect();
    let mut x = [T::lit(0.0); 2];
    ws.solve(
        &small,
        &small[..2],
        &mut x,
        (2, 1),
        &la::SolveParams::default(),
    )
    .expect("solves");
    let big: Vec<T> = rng.vec(60 * 60).into_iter().map(T::lit).collect();
    ws.det(&big, 60).expect("a determinant");
    for (m, k) in [(17, 1), (24, 3), (40, 2), (70, 5), (17, 2)] {
        let mut a: Vec<f64> = rng.vec(m * m);
        for i in 0..m {
            a[i * m + i] += 2.0;
        }
        let a: Vec<T> = a.into_iter().map(T::lit).collect();
        let b: Vec<T> = rng.vec(m * k).into_iter().map(T::lit).collect();
        let at = Tensor::from_slice(&a, &[m, m]).expect("a");
        let bt = Tensor::from_slice(&b, &[m, k]).expect("b");
        let eye: Vec<T> = (0..m * m)
            .map(|e| T::lit(if e / m == e % m { 1.0 } else { 0.0 }))
            .collect();
        let sym = lower_symmetric(&a, m);
        let cases = [
            (
                la::AssumeA::General,
                false,
                faer_lu_solve(rows(&a, m, m), rows(&b, m, k)),
            ),
            (
                la::AssumeA::General,
                true,
                faer_lu_solve(rows(&a, m, m).transpose(), rows(&b, m, k)),
            ),
            (
                la::AssumeA::Symmetric,
                false,
                faer_lu_solve(rows(&sym, m, m), rows(&b, m, k)),
            ),
        ];
        for (assume_a, transposed, want) in cases {
            let what = format!("{assume_a:?}, transposed {transposed}, order {m}");
            let p = la::SolveParams {
                assume_a,
                lower: true,
                transposed,
                b_ndim: None,
            };
            let got = one(la::solve(&[&at, &bt], &p)).to_vec_as::<T>();
            assert!(got == want, "{what}: the op");
            let mut x = vec![T::lit(0.0); m * k];
            ws.solve(&a, &b, &mut x, (m, k), &p).expect("solves");
            assert!(x == want, "{what}: the workspace");
        }
        let want = faer_lu_solve(rows(&a, m, m), rows(&eye, m, m));
        let got = one(la::inv(&[&at])).to_vec_as::<T>();
        assert!(got == want, "inv of order {m}: the op");
        let mut x = vec![T::lit(0.0); m * m];
        ws.inv(&a, &mut x, m).expect("inverts");
        assert!(x == want, "inv of order {m}: the workspace");
        // A zero column: an exact zero pivot, the same error either way.
        let mut singular = a.clone();
        (0..m).for_each(|i| singular[i * m + 3] = T::lit(0.0));
        let op = la::inv(&[&Tensor::from_slice(&singular, &[m, m]).expect("a")]);
        let ours = ws.inv(&singular, &mut x, m);
        assert_eq!(
            op.expect_err("singular").to_string(),
            ours.expect_err("singular").to_string()
        );
    }
}

#[test]
fn solve_and_inv_above_order_16_are_faers_partial_pivoting_lu_bit_for_bit() {
    let mut rng = Rng(17);
    large_solves_are_faers::<f64>(&mut rng);
    large_solves_are_faers::<f32>(&mut rng);
}
