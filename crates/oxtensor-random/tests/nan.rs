//! NaN and `-0.0` parameters against NumPy 2.4 (`tests/fixtures/nan.txt`, written by
//! `tests/fixtures/make_fixtures.py`): where NumPy's check lets a NaN through, the draws are
//! NumPy's (NaN, or for `vonmises` with a tiny `kappa` the uniform angle NumPy returns without
//! reading `mu`) and the generator ends in NumPy's state, so later draws agree too; where NumPy
//! rejects the value, the error starts with NumPy's message.

use crate::common;

use common::{Draws, arguments, records, run};
use oxtensor_random::{Generator, RandomError, default_rng};

fn hex64(s: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(s, 16).expect("f64 bits"))
}

/// `a` and `b` are the same value (NaN equals NaN), or within 2 ulp (the `libm` tolerance).
fn close(a: f64, b: f64) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    a == b || (a.signum() == b.signum() && a.to_bits().abs_diff(b.to_bits()) <= 2)
}

/// One draw of `name` that NumPy rejects for these arguments: the error it gives.
fn first_error(name: &str, g: &mut Generator, a: &[f64]) -> Option<RandomError> {
    match name {
        "normal" => g.normal(a[0], a[1]).err(),
        "uniform" => g.uniform(a[0], a[1]).err(),
        "exponential" => g.exponential(a[0]).err(),
        "lognormal" => g.lognormal(a[0], a[1]).err(),
        "gamma" => g.gamma(a[0], a[1]).err(),
        "standard_gamma" => g.standard_gamma(a[0]).err(),
        "weibull" => g.weibull(a[0]).err(),
        "vonmises" => g.vonmises(a[0], a[1]).err(),
        "laplace" => g.laplace(a[0], a[1]).err(),
        "logistic" => g.logistic(a[0], a[1]).err(),
        "gumbel" => g.gumbel(a[0], a[1]).err(),
        "geometric" => g.geometric(a[0]).err(),
        "poisson" => g.poisson(a[0]).err(),
        "binomial" => g.binomial(a[0] as i64, a[1]).err(),
        "negative_binomial" => g.negative_binomial(a[0], a[1]).err(),
        "multinomial" => g.multinomial(a[0] as i64, &a[1..]).err(),
        other => panic!("no error case for {other}"),
    }
}

#[test]
fn nan_and_negative_zero_parameters_draw_or_raise_as_numpy() {
    let mut cases = 0;
    for f in records(include_str!("fixtures/nan.txt")) {
        let (name, seed, args, body, after) = (f[0], f[1], f[2], f[4], f[5]);
        let a: Vec<f64> = arguments(args)
            .iter()
            .map(|s| s.parse().expect("float argument"))
            .collect();
        let mut g = default_rng(seed.parse().expect("seed"));
        let case = format!("{name}({args})");
        if let Some(message) = body.strip_prefix("error: ") {
            let e = first_error(name, &mut g, &a).unwrap_or_else(|| panic!("{case}: no error"));
            assert!(
                e.message.starts_with(message),
                "{case}: {e} does not start with NumPy's {message:?}"
            );
        } else {
            let n = body.split(' ').count();
            match run(name, &mut g, &a, n) {
                Draws::F64(v) => {
                    for (x, s) in v.iter().zip(body.split(' ')) {
                        assert!(close(*x, hex64(s)), "{case}: {x} vs NumPy {}", hex64(s));
                    }
                }
                Draws::F32(v) => {
                    for (x, s) in v.iter().zip(body.split(' ')) {
                        let want = f32::from_bits(u32::from_str_radix(s, 16).expect("f32"));
                        assert!(
                            close(f64::from(*x), f64::from(want)),
                            "{case}: {x} vs {want}"
                        );
                    }
                }
                Draws::F64Vec(v) => {
                    for (row, want) in v.iter().zip(body.split(' ')) {
                        for (x, s) in row.iter().zip(want.split(',')) {
                            assert!(close(*x, hex64(s)), "{case}: {row:?} vs NumPy {want}");
                        }
                    }
                }
                Draws::I64(_) | Draws::I64Vec(_) => panic!("{case}: NumPy drew integers"),
            }
        }
        let state_after = u128::from_str_radix(after, 16).expect("state");
        assert_eq!(
            g.state().state,
            state_after,
            "{case}: a different number of words was drawn"
        );
        cases += 1;
    }
    assert!(cases > 60, "{cases} cases");
}

/// A NaN shape never hangs the gamma rejection loops (NumPy's `do { .. } while (V <= 0)`
/// leaves on NaN), also over many draws and in single precision.
#[test]
fn nan_shapes_terminate() {
    let mut g = default_rng(3);
    for _ in 0..10_000 {
        assert!(g.standard_gamma(f64::NAN).expect("NaN passes").is_nan());
        assert!(g.standard_gamma_f32(f32::NAN).expect("NaN passes").is_nan());
        assert!(g.beta(f64::NAN, 0.5).expect("NaN passes").is_nan());
        assert!(g.standard_t(f64::NAN).expect("NaN passes").is_nan());
        assert!(g.vonmises(0.0, f64::NAN).expect("NaN passes").is_nan());
    }
}
