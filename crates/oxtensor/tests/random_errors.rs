//! Random variables, second part: bad parameters are run-time errors carrying NumPy's message
//! and naming the variable (or the distribution and argument), in both backends; the
//! distributions PyTensor draws through SciPy (`pareto`, `truncexpon`, `gengamma`,
//! `betabinom`) and `multivariate_normal` with `svd`/`eigh` factors are single random nodes
//! drawing the same stream as the generator's own methods.

use oxtensor::random::{self, Distribution, default_rng};
use oxtensor::{DType, Tensor, Var, function, ops};
use random_common::{c, check_all_modes, ci, modes, rng_const, size, vec_c};

use crate::random_common;

fn mat_c(v: &[f64], n: usize) -> Var {
    Var::constant(Tensor::from_slice(v, &[n, n]).expect("matrix"))
}

/// Runs `draw` in every mode and returns each mode's error message.
fn errors(draw: &Var) -> Vec<String> {
    modes()
        .into_iter()
        .map(|mode| {
            let f = function(&[], std::slice::from_ref(draw))
                .mode(mode.clone())
                .build()
                .expect("compile");
            f.call(&[])
                .map(|_| panic!("{mode:?}: bad parameters drew values"))
                .unwrap_or_else(|e| e.to_string())
        })
        .collect()
}

#[test]
fn bad_parameters_give_numpys_message_naming_the_variable() {
    let p3 = |a: f64, b: f64, c_: f64| vec_c(&[a, b, c_]);
    let cases: Vec<(Distribution, Vec<Var>, &str)> = vec![
        (Distribution::Normal, vec![c(0.0), c(-1.0)], "scale < 0"),
        (Distribution::Exponential, vec![c(-2.0)], "scale < 0"),
        (Distribution::Gamma, vec![c(-1.0), c(1.0)], "shape < 0"),
        (Distribution::Beta, vec![c(0.0), c(1.0)], "a <= 0"),
        (Distribution::LogNormal, vec![c(0.0), c(-1.0)], "sigma < 0"),
        (Distribution::HalfNormal, vec![c(0.0), c(-1.0)], "scale < 0"),
        (
            Distribution::StudentT,
            vec![c(3.0), c(0.0), c(-1.0)],
            "scale < 0",
        ),
        (
            Distribution::StudentT,
            vec![c(0.0), c(0.0), c(1.0)],
            "df <= 0",
        ),
        (Distribution::Cauchy, vec![c(0.0), c(-1.0)], "scale < 0"),
        (Distribution::ChiSquare, vec![c(0.0)], "df <= 0"),
        (Distribution::Wald, vec![c(0.0), c(1.0)], "mean <= 0"),
        (
            Distribution::Triangular,
            vec![c(2.0), c(1.0), c(3.0)],
            "left > mode",
        ),
        (Distribution::VonMises, vec![c(0.0), c(-1.0)], "kappa < 0"),
        (Distribution::Weibull, vec![c(-1.0)], "a < 0"),
        // PyTensor's 1 / gamma(shape, 1 / scale): NumPy checks the reciprocal of `scale`.
        (Distribution::InvGamma, vec![c(2.0), c(-1.0)], "scale < 0"),
        (
            Distribution::Bernoulli,
            vec![c(1.5)],
            "p < 0, p > 1 or p is NaN",
        ),
        (Distribution::Binomial, vec![ci(-1), c(0.5)], "n < 0"),
        (
            Distribution::Binomial,
            vec![ci(3), c(-0.5)],
            "p < 0, p > 1 or p is NaN",
        ),
        (Distribution::Poisson, vec![c(-1.0)], "lam < 0"),
        (Distribution::Geometric, vec![c(0.0)], "p <= 0, p > 1"),
        (
            Distribution::NegativeBinomial,
            vec![c(0.0), c(0.5)],
            "n <= 0",
        ),
        (
            Distribution::Hypergeometric,
            vec![ci(1), ci(1), ci(5)],
            "ngood + nbad < nsample",
        ),
        (Distribution::Integers, vec![ci(5), ci(5)], "low >= high"),
        (
            Distribution::Dirichlet,
            vec![vec_c(&[1.0, -1.0])],
            "alpha < 0",
        ),
        (
            Distribution::Multinomial,
            vec![ci(3), vec_c(&[1.5, -0.5])],
            "pvals < 0, pvals > 1",
        ),
        (
            Distribution::Multinomial,
            vec![ci(3), p3(0.7, 0.7, 0.1)],
            "sum(pvals[:-1]) > 1.0",
        ),
        (
            Distribution::Categorical,
            vec![p3(0.5, 0.2, 0.2)],
            "Probabilities do not sum to 1",
        ),
        (
            Distribution::Categorical,
            vec![p3(1.5, -0.7, 0.2)],
            "Probabilities are not non-negative",
        ),
        (Distribution::Pareto, vec![c(0.0), c(1.0)], "b <= 0"),
        (
            Distribution::TruncExpon,
            vec![c(1.0), c(0.0), c(-1.0)],
            "scale < 0",
        ),
        (
            Distribution::GenGamma,
            vec![c(1.0), c(0.0), c(1.0)],
            "p == 0",
        ),
        (
            Distribution::BetaBinom,
            vec![ci(-2), c(1.0), c(1.0)],
            "n < 0",
        ),
        (
            Distribution::BetaBinom,
            vec![ci(2), c(1.0), c(0.0)],
            "b <= 0",
        ),
        (
            Distribution::MvNormal,
            vec![vec_c(&[0.0, 0.0]), mat_c(&[1.0, 2.0, 2.0, 1.0], 2)],
            "Matrix is not positive definite",
        ),
    ];
    for (k, (dist, params, numpy)) in cases.into_iter().enumerate() {
        let (_, x) =
            random::random_variable(dist, &rng_const(1), None, &params, None).expect("build");
        // Unnamed: the message names the distribution and NumPy's argument.
        for err in errors(&x) {
            assert!(err.contains(numpy), "{dist:?}: {err}");
            assert!(
                err.contains(&format!("{}: invalid `", dist.name())),
                "{err}"
            );
        }
        // Named: the message also names the variable.
        let name = format!("draw_{k}");
        x.set_name(&name);
        for err in errors(&x) {
            assert!(
                err.contains(&format!("'{name}'")) && err.contains(numpy),
                "{dist:?}: {err}"
            );
        }
    }
}

#[test]
fn scipy_distributions_are_single_nodes_broadcasting_their_parameters() {
    // pareto(b=[1, 2, 3], scale=2) without size: three draws, one uniform each.
    let (next, x) = random::random_variable(
        Distribution::Pareto,
        &rng_const(5),
        None,
        &[vec_c(&[1.0, 2.0, 3.0]), c(2.0)],
        None,
    )
    .expect("pareto");
    assert_eq!(x.ty().shape.as_slice(), &[Some(3)]);
    let mut g = default_rng(5);
    let want: Vec<f64> = [1.0f64, 2.0, 3.0]
        .iter()
        .map(|b| (1.0 - g.random()).powf(-1.0 / b) * 2.0)
        .collect();
    check_all_modes(&next, &x, &want, &g);

    let (next, x) = random::random_variable(
        Distribution::TruncExpon,
        &rng_const(5),
        Some(&size(&[4])),
        &[c(1.5), c(1.0), c(2.0)],
        None,
    )
    .expect("truncexpon");
    let mut g = default_rng(5);
    let want: Vec<f64> = (0..4)
        .map(|_| -(g.random() * (-1.5f64).exp_m1()).ln_1p() * 2.0 + 1.0)
        .collect();
    check_all_modes(&next, &x, &want, &g);

    let (next, x) = random::random_variable(
        Distribution::GenGamma,
        &rng_const(5),
        None,
        &[vec_c(&[1.0, 3.0]), c(2.0), c(0.5)],
        None,
    )
    .expect("gengamma");
    let mut g = default_rng(5);
    let want: Vec<f64> = [1.0f64, 3.0]
        .iter()
        .map(|a| g.gamma(a / 2.0, 1.0).expect("gamma").powf(0.5) * 0.5)
        .collect();
    check_all_modes(&next, &x, &want, &g);

    // betabinom: every beta first, then every binomial.
    let (next, x) = random::random_variable(
        Distribution::BetaBinom,
        &rng_const(5),
        Some(&size(&[5])),
        &[ci(10), c(2.0), c(3.0)],
        None,
    )
    .expect("betabinom");
    assert_eq!(x.dtype(), DType::I64);
    let mut g = default_rng(5);
    let p: Vec<f64> = (0..5).map(|_| g.beta(2.0, 3.0).expect("beta")).collect();
    let want: Vec<f64> = p
        .iter()
        .map(|&p| g.binomial(10, p).expect("binomial") as f64)
        .collect();
    check_all_modes(&next, &x, &want, &g);
}

#[test]
fn multivariate_normal_svd_and_eigh_factor_the_covariance() {
    // cov = diag(4, 1): svd gives s = [4, 1] with u = ±I; eigh gives w = [1, 4] with the
    // columns of v = ±[e2, e1]. The draws are the normals scaled (up to those signs).
    for (dist, scale) in [
        (Distribution::MvNormalSvd, [(0, 0, 2.0), (1, 1, 1.0)]),
        (Distribution::MvNormalEigh, [(0, 1, 2.0), (1, 0, 1.0)]),
    ] {
        let (next, x) = random::random_variable(
            dist,
            &rng_const(9),
            Some(&size(&[3])),
            &[vec_c(&[1.0, -1.0]), mat_c(&[4.0, 0.0, 0.0, 1.0], 2)],
            None,
        )
        .expect("mvn");
        assert_eq!(x.ty().shape.as_slice(), &[Some(3), Some(2)]);
        let mut g = default_rng(9);
        let z: Vec<f64> = (0..6).map(|_| g.standard_normal()).collect();
        for mode in modes() {
            let f = function(&[], &[next.clone(), x.clone()])
                .mode(mode)
                .build()
                .expect("compile");
            let out = f.call(&[]).expect("call");
            let got = out[1].to_vec_as::<f64>();
            for b in 0..3 {
                for (i, j, s) in scale {
                    let mean = if i == 0 { 1.0 } else { -1.0 };
                    let want = s * z[2 * b + j].abs();
                    let have = (got[2 * b + i] - mean).abs();
                    assert!((have - want).abs() < 1e-12, "{dist:?}: {got:?} vs {z:?}");
                }
            }
            let state = random::generator_from_tensor(&out[0]).expect("rng").state();
            assert_eq!(state, g.state());
        }
    }
}

#[test]
fn the_name_survives_rewrites_of_the_parameters() {
    // `-2 * 0.5` folds to a constant, so the compiled graph holds a new random node.
    let scale = ops::mul(&c(-2.0), &c(0.5)).expect("mul");
    let (_, x) = random::normal(&rng_const(1), &c(0.0), &scale, None).expect("normal");
    x.set_name("theta");
    for err in errors(&x) {
        assert!(
            err.contains("'theta'") && err.contains("scale < 0"),
            "{err}"
        );
    }
}

#[test]
fn float32_parameters_round_like_scipy() {
    // SciPy computes `-1 / b` in float32 for a float32 `b` (NumPy 2's promotion).
    let b = Var::constant(Tensor::scalar(2.5f32));
    let (next, x) = random::random_variable(
        Distribution::Pareto,
        &rng_const(6),
        Some(&size(&[3])),
        &[b, c(1.0)],
        None,
    )
    .expect("pareto");
    let mut g = default_rng(6);
    let exponent = f64::from(-1.0f32 / 2.5f32);
    let want: Vec<f64> = (0..3).map(|_| (1.0 - g.random()).powf(exponent)).collect();
    check_all_modes(&next, &x, &want, &g);
}

/// NaN parameters, in every mode: where NumPy's (or, for PyTensor's SciPy-drawn
/// distributions, SciPy's) check lets a NaN through, the node draws what the generator's
/// method draws (NaN, with the same words consumed: the next generator is the method's);
/// where the check rejects it, the call fails with the reference's message.
#[test]
fn nan_parameters_draw_or_fail_as_the_reference() {
    let nan = f64::NAN;
    let mut g = default_rng(9);
    let want: Vec<f64> = (0..4)
        .map(|_| g.gamma(nan, 2.0).expect("NaN shape passes"))
        .collect();
    let (next, x) = random::random_variable(
        Distribution::Gamma,
        &rng_const(9),
        Some(&size(&[4])),
        &[c(nan), c(2.0)],
        None,
    )
    .expect("build");
    check_all_modes(&next, &x, &want, &g);
    let passing: Vec<(Distribution, Vec<Var>)> = vec![
        (Distribution::Normal, vec![c(0.0), c(nan)]),
        (Distribution::Exponential, vec![c(nan)]),
        (Distribution::Beta, vec![c(nan), c(0.5)]),
        (Distribution::VonMises, vec![c(0.0), c(nan)]),
        (Distribution::InvGamma, vec![c(nan), c(1.0)]),
        (Distribution::HalfNormal, vec![c(nan), c(1.0)]),
        (Distribution::StudentT, vec![c(3.0), c(nan), c(1.0)]),
        (Distribution::Dirichlet, vec![vec_c(&[0.05, nan])]),
    ];
    for (dist, params) in passing {
        let (_, x) = random::random_variable(dist, &rng_const(2), Some(&size(&[3])), &params, None)
            .expect("build");
        for mode in modes() {
            let f = function(&[], std::slice::from_ref(&x))
                .mode(mode.clone())
                .build()
                .expect("compile");
            let out = f.call(&[]).expect("NaN passes NumPy's check");
            assert!(
                out[0].to_vec_as::<f64>().iter().all(|v| v.is_nan()),
                "{dist:?} {mode:?}"
            );
        }
    }
    let failing: Vec<(Distribution, Vec<Var>, &str)> = vec![
        (Distribution::Poisson, vec![c(nan)], "lam < 0 or lam is NaN"),
        (Distribution::Binomial, vec![ci(3), c(nan)], "p is NaN"),
        (Distribution::Uniform, vec![c(nan), c(1.0)], "range exceeds"),
        (
            Distribution::NegativeBinomial,
            vec![c(nan), c(0.5)],
            "n must not be NaN",
        ),
        // SciPy's checks reject NaN where NumPy's would not.
        (Distribution::HalfNormal, vec![c(0.0), c(nan)], "scale < 0"),
        (
            Distribution::StudentT,
            vec![c(nan), c(0.0), c(1.0)],
            "df <= 0",
        ),
        (Distribution::Gumbel, vec![c(0.0), c(nan)], "scale < 0"),
        (Distribution::Pareto, vec![c(nan), c(1.0)], "b <= 0"),
        (Distribution::Normal, vec![c(0.0), c(-0.0)], "scale < 0"),
    ];
    for (dist, params, text) in failing {
        let (_, x) =
            random::random_variable(dist, &rng_const(1), None, &params, None).expect("build");
        for err in errors(&x) {
            assert!(err.contains(text), "{dist:?}: {err}");
        }
    }
}

/// A covariance that is not positive semi-definite, per method as PyTensor 3's `MvNormalRV`:
/// `svd` draws finite values, `eigh` NaNs with NumPy's `RuntimeWarning` (recorded in
/// `oxtensor_runtime::warnings`), `cholesky` fails; a NaN fails `svd` ("SVD did not
/// converge") and gives `eigh` NaNs without a warning.
#[test]
fn multivariate_normal_with_an_indefinite_covariance_follows_each_method() {
    use oxtensor::oxtensor_runtime::warnings;
    let indefinite = mat_c(&[1.0, 2.0, 2.0, 1.0], 2);
    let with_nan = mat_c(&[1.0, 0.0, f64::NAN, 1.0], 2);
    let draw = |dist: Distribution, cov: &Var| {
        random::random_variable(
            dist,
            &rng_const(4),
            None,
            &[vec_c(&[0.0, 0.0]), cov.clone()],
            None,
        )
        .expect("build")
        .1
    };
    for mode in modes() {
        let run = |x: &Var| {
            function(&[], std::slice::from_ref(x))
                .mode(mode.clone())
                .build()
                .expect("compile")
                .call(&[])
                .map(|out| out[0].to_vec_as::<f64>())
        };
        warnings::take();
        let svd = run(&draw(Distribution::MvNormalSvd, &indefinite)).expect("svd draws");
        assert!(svd.iter().all(|v| v.is_finite()), "{mode:?}: {svd:?}");
        assert!(warnings::take().is_empty());
        let eigh = run(&draw(Distribution::MvNormalEigh, &indefinite)).expect("eigh draws");
        assert!(eigh.iter().all(|v| v.is_nan()), "{mode:?}: {eigh:?}");
        assert_eq!(warnings::take(), ["invalid value encountered in sqrt"]);
        let eigh = run(&draw(Distribution::MvNormalEigh, &with_nan)).expect("eigh draws");
        assert!(eigh.iter().all(|v| v.is_nan()), "{mode:?}: {eigh:?}");
        assert!(warnings::take().is_empty());
        let err = run(&draw(Distribution::MvNormalSvd, &with_nan)).expect_err("svd fails");
        assert!(err.to_string().contains("SVD did not converge"), "{err}");
        let err = run(&draw(Distribution::MvNormal, &indefinite)).expect_err("cholesky fails");
        assert!(err.to_string().contains("not positive definite"), "{err}");
    }
}
