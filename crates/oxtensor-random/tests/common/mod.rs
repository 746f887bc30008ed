//! The Rust counterpart of each NumPy fixture case, shared by the fixture tests.
// Each test binary uses a subset of these helpers.
#![allow(dead_code)]

use oxtensor_random::Generator;

/// Draws of one fixture case, in the fixture's own kinds.
pub enum Draws {
    /// Double draws.
    F64(Vec<f64>),
    /// Single-precision draws.
    F32(Vec<f32>),
    /// Integer draws.
    I64(Vec<i64>),
    /// Integer vectors (multinomial, permutation).
    I64Vec(Vec<Vec<i64>>),
    /// Double vectors (Dirichlet).
    F64Vec(Vec<Vec<f64>>),
}

fn many_f64(g: &mut Generator, n: usize, mut f: impl FnMut(&mut Generator) -> f64) -> Draws {
    Draws::F64((0..n).map(|_| f(g)).collect())
}

fn many_i64(g: &mut Generator, n: usize, mut f: impl FnMut(&mut Generator) -> i64) -> Draws {
    Draws::I64((0..n).map(|_| f(g)).collect())
}

/// Runs the Rust counterpart of one fixture case.
pub fn run(name: &str, g: &mut Generator, a: &[f64], n: usize) -> Draws {
    let ok = |r: oxtensor_random::Result<f64>| r.expect("valid parameters");
    let oki = |r: oxtensor_random::Result<i64>| r.expect("valid parameters");
    match name {
        "random" => many_f64(g, n, |g| g.random()),
        "random_f32" => Draws::F32((0..n).map(|_| g.random_f32()).collect()),
        "standard_normal" => many_f64(g, n, |g| g.standard_normal()),
        "standard_normal_f32" => Draws::F32((0..n).map(|_| g.standard_normal_f32()).collect()),
        "standard_exponential" => many_f64(g, n, |g| g.standard_exponential()),
        "standard_exponential_f32" => {
            Draws::F32((0..n).map(|_| g.standard_exponential_f32()).collect())
        }
        "normal" => many_f64(g, n, |g| ok(g.normal(a[0], a[1]))),
        "uniform" => many_f64(g, n, |g| ok(g.uniform(a[0], a[1]))),
        "exponential" => many_f64(g, n, |g| ok(g.exponential(a[0]))),
        "lognormal" => many_f64(g, n, |g| ok(g.lognormal(a[0], a[1]))),
        "halfnormal" => many_f64(g, n, |g| ok(g.halfnormal(a[0], a[1]))),
        "gamma" => many_f64(g, n, |g| ok(g.gamma(a[0], a[1]))),
        "standard_gamma" => many_f64(g, n, |g| ok(g.standard_gamma(a[0]))),
        "standard_gamma_f32" => Draws::F32(
            (0..n)
                .map(|_| g.standard_gamma_f32(a[0] as f32).expect("shape"))
                .collect(),
        ),
        "beta" => many_f64(g, n, |g| ok(g.beta(a[0], a[1]))),
        "chisquare" => many_f64(g, n, |g| ok(g.chisquare(a[0]))),
        "standard_t" => many_f64(g, n, |g| ok(g.standard_t(a[0]))),
        "standard_cauchy" => many_f64(g, n, |g| g.standard_cauchy()),
        "laplace" => many_f64(g, n, |g| ok(g.laplace(a[0], a[1]))),
        "logistic" => many_f64(g, n, |g| ok(g.logistic(a[0], a[1]))),
        "gumbel" => many_f64(g, n, |g| ok(g.gumbel(a[0], a[1]))),
        "pareto" => many_f64(g, n, |g| ok(g.pareto(a[0]))),
        "weibull" => many_f64(g, n, |g| ok(g.weibull(a[0]))),
        "wald" => many_f64(g, n, |g| ok(g.wald(a[0], a[1]))),
        "triangular" => many_f64(g, n, |g| ok(g.triangular(a[0], a[1], a[2]))),
        "vonmises" => many_f64(g, n, |g| ok(g.vonmises(a[0], a[1]))),
        "bernoulli" => many_i64(g, n, |g| oki(g.bernoulli(a[0]))),
        "geometric" => many_i64(g, n, |g| oki(g.geometric(a[0]))),
        "poisson" => many_i64(g, n, |g| oki(g.poisson(a[0]))),
        "binomial" => many_i64(g, n, |g| oki(g.binomial(a[0] as i64, a[1]))),
        "negative_binomial" => many_i64(g, n, |g| oki(g.negative_binomial(a[0], a[1]))),
        "hypergeometric" => many_i64(g, n, |g| {
            oki(g.hypergeometric(a[0] as i64, a[1] as i64, a[2] as i64))
        }),
        "multinomial" => Draws::I64Vec(
            (0..n)
                .map(|_| g.multinomial(a[0] as i64, &a[1..]).expect("pvals"))
                .collect(),
        ),
        "dirichlet" => Draws::F64Vec((0..n).map(|_| g.dirichlet(a).expect("alpha")).collect()),
        "permutation" => Draws::I64Vec((0..n).map(|_| g.permutation(a[0] as usize)).collect()),
        other => panic!("fixture case {other} has no Rust counterpart"),
    }
}

/// Integer cases need the exact (possibly > 2^53) bounds, so they are run from the raw text.
pub fn run_integers(name: &str, g: &mut Generator, args: &[&str], n: usize) -> Draws {
    let a: Vec<i64> = args
        .iter()
        .map(|s| s.parse().expect("integer argument"))
        .collect();
    let endpoint = a[2] == 1;
    match name {
        "integers" => many_i64(g, n, |g| g.integers(a[0], a[1], endpoint).expect("bounds")),
        _ => many_i64(g, n, |g| {
            let lo = i32::try_from(a[0]).expect("int32 bound");
            let hi = i32::try_from(a[1]).expect("int32 bound");
            i64::from(g.integers_i32(lo, hi, endpoint).expect("bounds"))
        }),
    }
}

/// The records of a fixture file: each non-comment line split at `|`.
pub fn records(text: &str) -> impl Iterator<Item = Vec<&str>> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('|').collect())
}

/// A fixture's comma-separated argument list (empty for none).
pub fn arguments(args: &str) -> Vec<&str> {
    if args.is_empty() {
        Vec::new()
    } else {
        args.split(',').collect()
    }
}
