//! Behaviour beyond the NumPy fixtures: argument errors, the masked bounded method (tied to
//! NumPy-checked `interval`), state save/restore, and sample moments against the exact ones
//! (fixed seeds; 6 standard errors).

use oxtensor_random::{BoundedMethod, Generator, default_rng};

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Checks the sample mean of `n` draws against `mean` (with known `var`) to 6 standard errors.
fn check_mean(
    name: &str,
    n: usize,
    mean: f64,
    var: f64,
    mut draw: impl FnMut(&mut Generator) -> f64,
) {
    let mut g = default_rng(20_240_601);
    let xs: Vec<f64> = (0..n).map(|_| draw(&mut g)).collect();
    let (m, v) = mean_var(&xs);
    let se = (var / n as f64).sqrt();
    assert!(
        (m - mean).abs() < 6.0 * se,
        "{name}: sample mean {m}, expected {mean} (se {se})"
    );
    assert!(
        (v / var - 1.0).abs() < 0.1,
        "{name}: sample variance {v}, expected {var}"
    );
}

#[test]
fn sample_moments_match_the_distributions() {
    let n = 40_000;
    check_mean("bernoulli(0.3)", n, 0.3, 0.21, |g| {
        g.bernoulli(0.3).expect("p") as f64
    });
    let hn_var = 4.0 * (1.0 - 2.0 / std::f64::consts::PI);
    let hn_mean = 1.0 + 2.0 * (2.0 / std::f64::consts::PI).sqrt();
    check_mean("halfnormal(1, 2)", n, hn_mean, hn_var, |g| {
        g.halfnormal(1.0, 2.0).expect("scale")
    });
    check_mean("gamma(0.3, 2)", n, 0.6, 1.2, |g| {
        g.gamma(0.3, 2.0).expect("shape")
    });
    check_mean("gamma(7.5, 1)", n, 7.5, 7.5, |g| {
        g.gamma(7.5, 1.0).expect("shape")
    });
    check_mean("beta(2, 5)", n, 2.0 / 7.0, 10.0 / (49.0 * 8.0), |g| {
        g.beta(2.0, 5.0).expect("ab")
    });
    check_mean("beta(0.4, 0.6)", n, 0.4, 0.24 / 2.0, |g| {
        g.beta(0.4, 0.6).expect("ab")
    });
    check_mean("laplace(1, 2)", n, 1.0, 8.0, |g| {
        g.laplace(1.0, 2.0).expect("scale")
    });
    check_mean(
        "triangular(0, 1, 4)",
        n,
        5.0 / 3.0,
        (16.0 + 1.0 - 4.0) / 18.0,
        |g| g.triangular(0.0, 1.0, 4.0).expect("bounds"),
    );
    check_mean("poisson(3)", n, 3.0, 3.0, |g| {
        g.poisson(3.0).expect("lam") as f64
    });
    check_mean("poisson(40)", n, 40.0, 40.0, |g| {
        g.poisson(40.0).expect("lam") as f64
    });
    check_mean("binomial(100, 0.6)", n, 60.0, 24.0, |g| {
        g.binomial(100, 0.6).expect("np") as f64
    });
    check_mean("geometric(0.1)", n, 10.0, 90.0, |g| {
        g.geometric(0.1).expect("p") as f64
    });
    check_mean("negative_binomial(4, 0.4)", n, 6.0, 15.0, |g| {
        g.negative_binomial(4.0, 0.4).expect("np") as f64
    });
    // hypergeometric(30, 70, 40): mean 12, variance 40 * 0.3 * 0.7 * 60 / 99.
    check_mean(
        "hypergeometric(30, 70, 40)",
        n,
        12.0,
        40.0 * 0.21 * 60.0 / 99.0,
        |g| g.hypergeometric(30, 70, 40).expect("counts") as f64,
    );
    check_mean("integers(-3, 7)", n, 1.5, 99.0 / 12.0, |g| {
        g.integers(-3, 7, false).expect("bounds") as f64
    });
}

#[test]
fn masked_bounded_draws_equal_numpys_random_interval() {
    for &rng in &[1u64, 5, 1000, (1 << 32) - 2, 1 << 33, (1 << 62) + 12345] {
        let mut a = default_rng(3);
        let mut b = default_rng(3);
        for _ in 0..200 {
            assert_eq!(
                a.bounded_u64(rng, BoundedMethod::Masked),
                b.interval(rng),
                "range {rng}"
            );
        }
    }
    let mut g = default_rng(4);
    for _ in 0..1000 {
        let x = g
            .integers_i32_with(-7, 7, true, BoundedMethod::Masked)
            .expect("bounds");
        assert!((-7..=7).contains(&x));
    }
}

#[test]
fn saved_state_restores_the_stream() {
    let mut g = default_rng(11);
    g.bit_generator_mut().next_u32();
    let saved = g.state();
    let first: Vec<f64> = (0..5).map(|_| g.standard_normal()).collect();
    g.set_state(saved);
    let again: Vec<f64> = (0..5).map(|_| g.standard_normal()).collect();
    assert_eq!(first, again);
}

#[test]
fn invalid_parameters_are_errors_naming_the_argument() {
    let mut g = default_rng(0);
    let cases: Vec<(&str, oxtensor_random::Result<f64>)> = vec![
        ("scale", g.normal(0.0, -1.0)),
        ("scale", g.exponential(-0.0)),
        ("high - low", g.uniform(0.0, f64::INFINITY)),
        ("shape", g.gamma(-1.0, 1.0)),
        ("a", g.beta(0.0, 1.0)),
        ("df", g.chisquare(0.0)),
        ("a", g.pareto(0.0)),
        ("mean", g.wald(-1.0, 1.0)),
        ("left", g.triangular(2.0, 1.0, 3.0)),
        ("kappa", g.vonmises(0.0, -1.0)),
    ];
    for (arg, r) in cases {
        let e = r.expect_err(arg);
        assert_eq!(e.argument, arg, "{e}");
    }
    let int_cases: Vec<(&str, oxtensor_random::Result<i64>)> = vec![
        ("p", g.geometric(0.0)),
        ("p", g.bernoulli(1.5)),
        ("lam", g.poisson(-1.0)),
        ("n", g.binomial(-1, 0.5)),
        ("p", g.binomial(3, f64::NAN)),
        ("n", g.negative_binomial(0.0, 0.5)),
        ("nsample", g.hypergeometric(3, 4, 8)),
        ("ngood", g.hypergeometric(-1, 4, 2)),
        ("high", g.integers(5, 5, false)),
        ("high", g.integers(i64::MIN, i64::MIN, false)),
    ];
    for (arg, r) in int_cases {
        let e = r.expect_err(arg);
        assert_eq!(e.argument, arg, "{e}");
    }
    assert_eq!(
        g.multinomial(10, &[0.7, 0.7, 0.0])
            .expect_err("sum")
            .argument,
        "pvals"
    );
    assert_eq!(
        g.dirichlet(&[1.0, -1.0]).expect_err("negative").argument,
        "alpha"
    );
    assert_eq!(
        g.standard_gamma_f32(-1.0).expect_err("shape").argument,
        "shape"
    );
}
