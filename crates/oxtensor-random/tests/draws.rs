//! Every distribution against NumPy 2.4's `default_rng(seed)` draws
//! (`tests/fixtures/draws.txt`, written by `tests/fixtures/make_fixtures.py`).
//!
//! Tolerances (also in the crate docs): integer results and draws built only from uniform or
//! ziggurat arithmetic must be bitwise equal; draws that pass through `exp`/`log`/`pow`/`cos`
//! may differ by up to 2 ulp on a C library other than the one NumPy used. The bit generator's
//! state after the draws must always match, so no draw consumed a different number of words.

use crate::common;

use common::{Draws, arguments, records, run, run_integers};
use oxtensor_random::default_rng;

fn n_of(body: &str) -> usize {
    body.split(' ').count()
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
    for f in records(include_str!("fixtures/draws.txt")) {
        let (name, seed, args, kind, body, after) = (f[0], f[1], f[2], f[3], f[4], f[5]);
        let seed: u128 = seed.parse().expect("seed");
        let arg_strs = arguments(args);
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
                    .map(|r| {
                        r.split(',')
                            .filter(|s| !s.is_empty())
                            .map(|s| s.parse().expect("int"))
                            .collect()
                    })
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
