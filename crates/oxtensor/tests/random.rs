//! Random variables: draws equal NumPy's `Generator` (values written by NumPy 2.4.6, and the
//! `oxtensor-random` generator, itself checked bitwise against NumPy fixtures) in both
//! backends, including broadcast parameters; the next generator is the advanced state; shared
//! generators advance through updates; errors name the argument.

use oxtensor::random::{self, Distribution, Generator, default_rng, get_generator, shared_rng};
use oxtensor::{DType, Mode, Tensor, Var, function, grad_vars, ops, vector};
use random_common::{c, check_all_modes, ci, modes, rng_const, size};

use crate::random_common;

#[test]
fn normal_with_broadcast_parameters_matches_numpy() {
    // np.random.default_rng(7).normal([0., 10., 100.], 2.0, size=(2, 3))
    let want = [
        0.0024603067149651485,
        10.59749107501694,
        99.45172428927556,
        -1.7811836775145484,
        9.090658429656555,
        98.01670689000707,
    ];
    let loc = Var::constant(Tensor::from_slice(&[0.0, 10.0, 100.0], &[3]).expect("loc"));
    let (next, x) =
        random::normal(&rng_const(7), &loc, &c(2.0), Some(&size(&[2, 3]))).expect("normal");
    assert_eq!(x.ty().shape.as_slice(), &[Some(2), Some(3)]);
    let mut g = default_rng(7);
    for _ in 0..6 {
        g.standard_normal();
    }
    check_all_modes(&next, &x, &want, &g);
}

#[test]
fn uniform_and_integers_match_numpy() {
    // np.random.default_rng(7).uniform(-1, 1, 4)
    let want = [
        0.25019093320933394,
        0.794427601939151,
        0.551371380490387,
        -0.5495856200188163,
    ];
    let (next, u) =
        random::uniform(&rng_const(7), &c(-1.0), &c(1.0), Some(&size(&[4]))).expect("uniform");
    let mut g = default_rng(7);
    for _ in 0..4 {
        g.random();
    }
    check_all_modes(&next, &u, &want, &g);

    // np.random.default_rng(7).integers([0, -5], [[3], [1000]]): no size, broadcast bounds.
    let low = Var::constant(Tensor::from_slice(&[0i64, -5], &[2]).expect("low"));
    let high = Var::constant(Tensor::from_slice(&[3i64, 1000], &[2, 1]).expect("high"));
    let (next, k) = random::integers(&rng_const(7), &low, &high, None).expect("integers");
    assert_eq!(k.dtype(), DType::I64);
    let mut g = default_rng(7);
    let expect: Vec<i64> = [(0, 3), (-5, 3), (0, 1000), (-5, 1000)]
        .iter()
        .map(|&(l, h)| g.integers(l, h, false).expect("draw"))
        .collect();
    assert_eq!(expect, vec![2, 0, 684, 896]);
    let want: Vec<f64> = expect.iter().map(|&v| v as f64).collect();
    check_all_modes(&next, &k, &want, &g);
}

/// Every scalar distribution draws what the generator's own method draws, in order.
#[test]
fn every_scalar_distribution_matches_the_generator() {
    type Reference = fn(&mut Generator) -> f64;
    let cases: Vec<(Distribution, Vec<Var>, Reference)> = vec![
        (Distribution::Exponential, vec![c(2.0)], |g| {
            g.exponential(2.0).expect("draw")
        }),
        (Distribution::Gamma, vec![c(0.7), c(3.0)], |g| {
            g.gamma(0.7, 3.0).expect("draw")
        }),
        (Distribution::Beta, vec![c(0.5), c(2.0)], |g| {
            g.beta(0.5, 2.0).expect("draw")
        }),
        (Distribution::LogNormal, vec![c(1.0), c(0.5)], |g| {
            g.lognormal(1.0, 0.5).expect("draw")
        }),
        (Distribution::HalfNormal, vec![c(1.0), c(2.0)], |g| {
            g.halfnormal(1.0, 2.0).expect("draw")
        }),
        (Distribution::ChiSquare, vec![c(3.0)], |g| {
            g.chisquare(3.0).expect("draw")
        }),
        (Distribution::Laplace, vec![c(1.0), c(2.0)], |g| {
            g.laplace(1.0, 2.0).expect("draw")
        }),
        (Distribution::Logistic, vec![c(1.0), c(2.0)], |g| {
            g.logistic(1.0, 2.0).expect("draw")
        }),
        (Distribution::Gumbel, vec![c(1.0), c(2.0)], |g| {
            g.gumbel(1.0, 2.0).expect("draw")
        }),
        (Distribution::Weibull, vec![c(1.5)], |g| {
            g.weibull(1.5).expect("draw")
        }),
        (Distribution::Wald, vec![c(1.0), c(2.0)], |g| {
            g.wald(1.0, 2.0).expect("draw")
        }),
        (
            Distribution::Triangular,
            vec![c(0.0), c(1.0), c(3.0)],
            |g| g.triangular(0.0, 1.0, 3.0).expect("draw"),
        ),
        (Distribution::VonMises, vec![c(0.5), c(2.0)], |g| {
            g.vonmises(0.5, 2.0).expect("draw")
        }),
        (Distribution::Poisson, vec![c(4.5)], |g| {
            g.poisson(4.5).expect("draw") as f64
        }),
        (Distribution::Binomial, vec![ci(20), c(0.3)], |g| {
            g.binomial(20, 0.3).expect("draw") as f64
        }),
        (Distribution::Bernoulli, vec![c(0.3)], |g| {
            g.binomial(1, 0.3).expect("draw") as f64
        }),
        (Distribution::Geometric, vec![c(0.3)], |g| {
            g.geometric(0.3).expect("draw") as f64
        }),
        (Distribution::NegativeBinomial, vec![c(3.0), c(0.4)], |g| {
            g.negative_binomial(3.0, 0.4).expect("draw") as f64
        }),
        (
            Distribution::Hypergeometric,
            vec![ci(10), ci(7), ci(5)],
            |g| g.hypergeometric(10, 7, 5).expect("draw") as f64,
        ),
    ];
    for (dist, params, reference) in cases {
        let (next, x) =
            random::random_variable(dist, &rng_const(3), Some(&size(&[50])), &params, None)
                .expect("build");
        let mut g = default_rng(3);
        let want: Vec<f64> = (0..50).map(|_| reference(&mut g)).collect();
        check_all_modes(&next, &x, &want, &g);
    }
}

#[test]
fn vector_valued_distributions_draw_one_vector_per_batch_element() {
    let alpha = Var::constant(Tensor::from_slice(&[0.5, 1.0, 2.0], &[3]).expect("alpha"));
    let (next, d) = random::random_variable(
        Distribution::Dirichlet,
        &rng_const(5),
        Some(&size(&[4])),
        &[alpha],
        None,
    )
    .expect("dirichlet");
    assert_eq!(d.ty().shape.as_slice(), &[Some(4), Some(3)]);
    let mut g = default_rng(5);
    let want: Vec<f64> = (0..4)
        .flat_map(|_| g.dirichlet(&[0.5, 1.0, 2.0]).expect("draw"))
        .collect();
    check_all_modes(&next, &d, &want, &g);

    let p = Var::constant(Tensor::from_slice(&[0.2, 0.5, 0.3], &[3]).expect("p"));
    let (next, k) = random::random_variable(
        Distribution::Categorical,
        &rng_const(5),
        Some(&size(&[6])),
        &[p],
        None,
    )
    .expect("categorical");
    let mut g = default_rng(5);
    let want: Vec<f64> = (0..6)
        .map(|_| {
            let u = g.random();
            if u <= 0.2 {
                0.0
            } else if u <= 0.2 + 0.5 {
                1.0
            } else {
                2.0
            }
        })
        .collect();
    check_all_modes(&next, &k, &want, &g);
}

#[test]
fn a_shared_generator_advances_through_its_update() {
    let rng = shared_rng(42, Some("rng"));
    let (next, x) = random::standard_normal(&rng, Some(&size(&[3]))).expect("normal");
    for mode in modes() {
        oxtensor::random::set_generator(&rng, &default_rng(42)).expect("reset");
        let f = function(&[], std::slice::from_ref(&x))
            .updates(&[(rng.clone(), next.clone())])
            .mode(mode)
            .build()
            .expect("compile");
        let mut g = default_rng(42);
        for _ in 0..2 {
            let got = f.call(&[]).expect("call")[0].to_vec_as::<f64>();
            let want: Vec<f64> = (0..3).map(|_| g.standard_normal()).collect();
            assert_eq!(got, want);
        }
        assert_eq!(get_generator(&rng).expect("state").state(), g.state());
    }
}

#[test]
fn without_an_update_the_shared_generator_repeats_its_draws() {
    let rng = shared_rng(1, None);
    let (_, x) = random::standard_normal(&rng, None).expect("normal");
    let f = function(&[], &[x]).build().expect("compile");
    let a = f.call(&[]).expect("call")[0].to_vec_as::<f64>();
    let b = f.call(&[]).expect("call")[0].to_vec_as::<f64>();
    assert_eq!(a, b);
    assert_eq!(
        get_generator(&rng).expect("state").state(),
        default_rng(1).state()
    );
}

#[test]
fn symbolic_parameters_and_size() {
    let loc = vector("loc", DType::F64);
    let n = oxtensor::scalar("n", DType::I64);
    let sz = ops::random::size_vector(Some(&[Var::int_constant(2), n.clone()])).expect("size");
    let (_, x) = random::normal(&rng_const(11), &loc, &c(1.0), Some(&sz)).expect("normal");
    for mode in modes() {
        let f = function(&[loc.clone(), n.clone()], std::slice::from_ref(&x))
            .mode(mode)
            .build()
            .expect("compile");
        let args = [
            Tensor::from_slice(&[1.0, 2.0], &[2]).expect("loc"),
            Tensor::scalar(2i64),
        ];
        let got = f.call(&args).expect("call")[0].to_vec_as::<f64>();
        let mut g = default_rng(11);
        let want: Vec<f64> = [1.0, 2.0, 1.0, 2.0]
            .iter()
            .map(|l| l + g.standard_normal())
            .collect();
        assert_eq!(got, want);
        // A loc that does not broadcast to size is a runtime error naming the distribution.
        let bad = [
            Tensor::from_slice(&[1.0, 2.0, 3.0], &[3]).expect("loc"),
            Tensor::scalar(2i64),
        ];
        let err = f.call(&bad).expect_err("shape").to_string();
        assert!(err.contains("normal") && err.contains("size"), "{err}");
    }
}

#[test]
fn float32_draws_are_float64_draws_cast() {
    let (_, x) = random::random_variable(
        Distribution::Normal,
        &rng_const(9),
        Some(&size(&[5])),
        &[c(0.0), c(1.0)],
        Some(DType::F32),
    )
    .expect("normal");
    assert_eq!(x.dtype(), DType::F32);
    let got = function(&[], &[x])
        .build()
        .expect("compile")
        .call(&[])
        .expect("call");
    let mut g = default_rng(9);
    let want: Vec<f32> = (0..5).map(|_| g.standard_normal() as f32).collect();
    assert_eq!(got[0].to_vec_as::<f32>(), want);
}

#[test]
fn bad_inputs_are_errors_naming_them() {
    let not_rng = vector("r", DType::F64);
    let err = random::standard_normal(&not_rng, None)
        .expect_err("dtype")
        .to_string();
    assert!(
        err.contains("'r'") && err.contains("random generator"),
        "{err}"
    );

    let loc = Var::constant(Tensor::from_slice(&[0.0, 1.0, 2.0], &[3]).expect("loc"));
    let err = random::normal(&rng_const(0), &loc, &c(1.0), Some(&size(&[2])))
        .expect_err("broadcast")
        .to_string();
    assert!(err.contains("broadcast"), "{err}");

    let err = random::random_variable(
        Distribution::Poisson,
        &rng_const(0),
        None,
        &[c(1.0)],
        Some(DType::F64),
    )
    .expect_err("dtype")
    .to_string();
    assert!(err.contains("integer dtype"), "{err}");

    let (_, x) = random::normal(&rng_const(0), &c(0.0), &c(-1.0), None).expect("build");
    for mode in modes() {
        let f = function(&[], std::slice::from_ref(&x))
            .mode(mode)
            .build()
            .expect("compile");
        let err = f.call(&[]).expect_err("scale").to_string();
        assert!(err.contains("scale") && err.contains(">= 0"), "{err}");
    }
}

#[test]
fn draws_are_not_differentiable() {
    let mu = oxtensor::scalar("mu", DType::F64);
    let (_, x) = random::normal(&rng_const(0), &mu, &c(1.0), None).expect("normal");
    let err = grad_vars(&x, &[mu]).expect_err("undefined").to_string();
    assert!(
        err.contains("No gradient defined for random variables"),
        "{err}"
    );
}

#[test]
fn equal_draws_from_equal_generators_are_one_node_and_are_not_folded() {
    let rng = rng_const(4);
    let (n1, a) = random::standard_normal(&rng, Some(&size(&[2]))).expect("a");
    let (n2, b) = random::standard_normal(&rng, Some(&size(&[2]))).expect("b");
    assert_eq!(a, b, "the same generator value gives the same numbers");
    assert_eq!(n1, n2);
    // Threading the generator gives new numbers.
    let (_, c2) = random::standard_normal(&n1, Some(&size(&[2]))).expect("c");
    let f = function(&[], &[a, c2])
        .mode(Mode::FAST_RUN)
        .build()
        .expect("compile");
    let text = f.dprint(oxtensor::PrintOptions::default());
    assert!(
        text.contains("NormalRV"),
        "the draws stay in the compiled graph: {text}"
    );
    let out = f.call(&[]).expect("call");
    let mut g = default_rng(4);
    let want: Vec<f64> = (0..4).map(|_| g.standard_normal()).collect();
    assert_eq!(out[0].to_vec_as::<f64>(), want[..2]);
    assert_eq!(out[1].to_vec_as::<f64>(), want[2..]);
}

#[test]
fn multivariate_normal_is_cholesky_times_normals_plus_mean() {
    let mean = Var::constant(Tensor::from_slice(&[1.0, -2.0], &[2]).expect("mean"));
    let cov = Var::constant(Tensor::from_slice(&[4.0, 1.0, 1.0, 2.0], &[2, 2]).expect("cov"));
    let (next, x) = random::random_variable(
        Distribution::MvNormal,
        &rng_const(8),
        Some(&size(&[3])),
        &[mean, cov],
        None,
    )
    .expect("mvn");
    assert_eq!(x.ty().shape.as_slice(), &[Some(3), Some(2)]);
    let mut g = default_rng(8);
    let z: Vec<f64> = (0..6).map(|_| g.standard_normal()).collect();
    // cholesky([[4, 1], [1, 2]]) = [[2, 0], [0.5, sqrt(1.75)]]
    let l11 = 1.75f64.sqrt();
    let want: Vec<f64> = (0..3)
        .flat_map(|b| {
            let (z0, z1) = (z[2 * b], z[2 * b + 1]);
            [2.0 * z0 + 1.0, (0.5 * z0 + l11 * z1) + -2.0]
        })
        .collect();
    check_all_modes(&next, &x, &want, &g);

    let bad = Var::constant(Tensor::from_slice(&[1.0, 2.0, 2.0, 1.0], &[2, 2]).expect("cov"));
    let zero = Var::constant(Tensor::from_slice(&[0.0, 0.0], &[2]).expect("mean"));
    let (_, y) = random::random_variable(
        Distribution::MvNormal,
        &rng_const(8),
        None,
        &[zero, bad],
        None,
    )
    .expect("build");
    let err = function(&[], &[y])
        .build()
        .expect("compile")
        .call(&[])
        .expect_err("not PD");
    assert!(err.to_string().contains("positive definite"), "{err}");
}

#[test]
fn permutation_shuffles_like_numpy() {
    // np.random.default_rng(12).permutation(6)
    let (next, p) = random::random_variable(
        Distribution::Permutation,
        &rng_const(12),
        None,
        &[Var::constant(Tensor::scalar(6i8))],
        Some(DType::I8),
    )
    .expect("permutation");
    assert_eq!(p.ty().shape.as_slice(), &[Some(6)]);
    let mut g = default_rng(12);
    let want: Vec<f64> = g.permutation(6).iter().map(|&v| v as f64).collect();
    assert_eq!(want, [1.0, 3.0, 2.0, 5.0, 4.0, 0.0]);
    check_all_modes(&next, &p, &want, &g);

    let x = Var::constant(Tensor::from_slice(&[10.0, 20.0, 30.0, 40.0], &[4]).expect("x"));
    let (next, q) = random::random_variable(
        Distribution::Permutation,
        &rng_const(12),
        None,
        &[x],
        Some(DType::F64),
    )
    .expect("permutation");
    let mut g = default_rng(12);
    let want: Vec<f64> = g
        .permutation(4)
        .iter()
        .map(|&i| [10.0, 20.0, 30.0, 40.0][i as usize])
        .collect();
    check_all_modes(&next, &q, &want, &g);
}
