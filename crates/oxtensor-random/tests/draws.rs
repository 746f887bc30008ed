//! Every distribution against NumPy 2.4's `default_rng(seed)` draws
//! (`tests/fixtures/draws.txt`, written by `tests/fixtures/make_fixtures.py`).
//!
//! Tolerances (also in the crate docs): integer results and draws built only from uniform or
//! ziggurat arithmetic must be bitwise equal; draws that pass through `exp`/`log`/`pow`/`cos`
//! may differ by up to 2 ulp on a C library other than the one NumPy used. The bit generator's
//! state after the draws must always match, so no draw consumed a different number of words.

use oxtensor_random::{Generator, default_rng};

/// Draws of one fixture case, in the fixture's own kinds.
enum Draws {
    F64(Vec<f64>),
    F32(Vec<f32>),
    I64(Vec<i64>),
    I64Vec(Vec<Vec<i64>>),
    F64Vec(Vec<Vec<f64>>),
}

fn n_of(body: &str) -> usize {
    body.split(' ').count()
}

fn many_f64(g: &mut Generator, n: usize, mut f: impl FnMut(&mut Generator) -> f64) -> Draws {
    Draws::F64((0..n).map(|_| f(g)).collect())
}

fn many_i64(g: &mut Generator, n: usize, mut f: impl FnMut(&mut Generator) -> i64) -> Draws {
    Draws::I64((0..n).map(|_| f(g)).collect())
}

/// Runs the Rust counterpart of one fixture case.
fn run(name: &str, g: &mut Generator, a: &[f64], n: usize) -> Draws {
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
fn run_integers(name: &str, g: &mut Generator, args: &[&str], n: usize) -> Draws {
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

/// Allowed distance in ulps for a float distribution (0 = bitwise).
fn tolerance(name: &str) -> u64 {
    match name {
        "random"
        | "random_f32"
        | "standard_normal"
        | "standard_normal_f32"
        | "standard_exponential"
        | "standard_exponential_f32"
        | "normal"
        | "uniform"
        | "exponential"
        | "halfnormal"
        | "standard_cauchy" => 0,
        _ => 2,
    }
}

fn ulps64(a: f64, b: f64) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    if a.is_sign_negative() != b.is_sign_negative() {
        return u64::MAX;
    }
    a.to_bits().abs_diff(b.to_bits())
}

fn ulps32(a: f32, b: f32) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    if a.is_sign_negative() != b.is_sign_negative() {
        return u64::MAX;
    }
    u64::from(a.to_bits().abs_diff(b.to_bits()))
}

fn hex64(s: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(s, 16).expect("f64 bits"))
}

#[test]
fn every_distribution_matches_numpy_draws() {
    let mut cases = 0;
    let mut worst: Vec<(String, u64)> = Vec::new();
    for line in include_str!("fixtures/draws.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
    {
        let f: Vec<&str> = line.split('|').collect();
        let (name, seed, args, kind, body, after) = (f[0], f[1], f[2], f[3], f[4], f[5]);
        let seed: u128 = seed.parse().expect("seed");
        let arg_strs: Vec<&str> = if args.is_empty() {
            Vec::new()
        } else {
            args.split(',').collect()
        };
        let n = n_of(body);
        let mut g = default_rng(seed);
        let got = if name.starts_with("integers") {
            run_integers(name, &mut g, &arg_strs, n)
        } else {
            let a: Vec<f64> = arg_strs
                .iter()
                .map(|s| s.parse().expect("float argument"))
                .collect();
            run(name, &mut g, &a, n)
        };
        let case = format!("{name}({args}) seed {seed}");
        let tol = tolerance(name);
        let mut max_ulps = 0;
        match (got, kind) {
            (Draws::F64(v), "f64") => {
                for (i, (x, s)) in v.iter().zip(body.split(' ')).enumerate() {
                    let d = ulps64(*x, hex64(s));
                    assert!(
                        d <= tol,
                        "{case}: draw {i} is {x:e}, NumPy {:e} ({d} ulp)",
                        hex64(s)
                    );
                    max_ulps = max_ulps.max(d);
                }
            }
            (Draws::F32(v), "f32") => {
                for (i, (x, s)) in v.iter().zip(body.split(' ')).enumerate() {
                    let want = f32::from_bits(u32::from_str_radix(s, 16).expect("f32 bits"));
                    let d = ulps32(*x, want);
                    assert!(
                        d <= tol,
                        "{case}: draw {i} is {x:e}, NumPy {want:e} ({d} ulp)"
                    );
                    max_ulps = max_ulps.max(d);
                }
            }
            (Draws::I64(v), "i64") => {
                let want: Vec<i64> = body.split(' ').map(|s| s.parse().expect("int")).collect();
                assert_eq!(v, want, "{case}");
            }
            (Draws::I64Vec(v), "i64vec") => {
                let want: Vec<Vec<i64>> = body
                    .split(' ')
                    .map(|r| r.split(',').map(|s| s.parse().expect("int")).collect())
                    .collect();
                assert_eq!(v, want, "{case}");
            }
            (Draws::F64Vec(v), "f64vec") => {
                for (row, want) in v.iter().zip(body.split(' ')) {
                    for (x, s) in row.iter().zip(want.split(',')) {
                        let d = ulps64(*x, hex64(s));
                        assert!(d <= tol, "{case}: {row:?} vs NumPy {want} ({d} ulp)");
                        max_ulps = max_ulps.max(d);
                    }
                }
            }
            (_, kind) => panic!("{case}: kind {kind} does not match the Rust result"),
        }
        let state_after = u128::from_str_radix(after, 16).expect("state");
        assert_eq!(
            g.state().state,
            state_after,
            "{case}: a different number of words was drawn"
        );
        worst.push((case, max_ulps));
        cases += 1;
    }
    let inexact: Vec<_> = worst.iter().filter(|(_, u)| *u > 0).collect();
    eprintln!("{cases} cases; not bitwise: {inexact:?}");
    assert!(cases > 150);
}
