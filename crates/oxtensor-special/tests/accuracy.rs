//! Accuracy against mpmath (50 digits) on the grids of `tests/fixtures/make_fixtures.py`, with
//! SciPy's error on the same points reported alongside; exact agreement with SciPy on the
//! edge-case conventions (poles, domain ends, infinities, NaN).

/// Distance in units in the last place between two doubles (0 when both are NaN or equal
/// infinities; u64::MAX when only one is NaN).
fn ulps(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if a == b {
        return 0.0;
    }
    if a.is_infinite() || b.is_infinite() {
        return f64::INFINITY;
    }
    let key = |x: f64| -> i128 {
        let bits = x.to_bits() as i64;
        if bits < 0 {
            i64::MIN as i128 - bits as i128
        } else {
            bits as i128
        }
    };
    (key(a) - key(b)).unsigned_abs() as f64
}

use crate::tsv;
use tsv::read;

/// Measures `f` against the fixture `name` and prints ours and SciPy's max ulp error. Asserts,
/// point by point, that ours is within `bound` ulps or at least no worse than SciPy's there
/// (the only points where the bound is exceeded are ones where SciPy is further off, e.g.
/// next to a zero of J), and that the edge cases match SciPy (exactly for NaN, infinities and
/// zeros).
fn check(name: &str, bound: f64, f: impl Fn(&[f64]) -> f64) {
    let rows =
        read(name).unwrap_or_else(|| panic!("fixture {name}.tsv missing: run make_fixtures.py"));
    let (mut ours_max, mut scipy_max, mut ours_max_where_scipy_good) = (0.0f64, 0.0f64, 0.0f64);
    let mut worst = Vec::new();
    let mut violations = Vec::new();
    let mut ours_sum = 0.0;
    for r in &rows {
        let got = f(&r.args);
        let e = ulps(got, r.reference);
        let s = ulps(r.other, r.reference);
        ours_sum += e.min(1e6);
        if e > ours_max {
            ours_max = e;
            worst = r.args.clone();
            worst.push(got);
            worst.push(r.reference);
        }
        if s <= 4.0 {
            ours_max_where_scipy_good = ours_max_where_scipy_good.max(e);
        }
        if e > bound && e > s {
            violations.push((r.args.clone(), got, r.reference, e, s));
        }
        scipy_max = scipy_max.max(s);
    }
    println!(
        "{name}: {} points, max ulp ours {ours_max:.0} (mean {:.2}; {ours_max_where_scipy_good:.0} where SciPy is within 4), scipy {scipy_max:.0}; worst at args+got+ref {worst:?}",
        rows.len(),
        ours_sum / rows.len() as f64
    );
    if let Some(edges) = read(&format!("{name}_edge")) {
        for r in &edges {
            let got = f(&r.args);
            // Conventions (NaN, infinities, zeros) must match exactly; finite values such as
            // T(h, inf) = Q(h)/2 to 2 ulps.
            let exact = !r.reference.is_finite() || r.reference == 0.0;
            assert!(
                if exact {
                    ulps(got, r.reference) == 0.0
                } else {
                    ulps(got, r.reference) <= 2.0
                },
                "{name} edge case {:?}: got {got}, SciPy gives {}",
                r.args,
                r.reference
            );
        }
    }
    assert!(
        violations.is_empty(),
        "{name}: {} points beyond the stated bound of {bound} ulp and worse than SciPy (args, got, reference, ours, scipy): {:?}",
        violations.len(),
        &violations[..violations.len().min(5)]
    );
}

use oxtensor_special as sp;

#[test]
fn gamma() {
    check("gamma", 2.0, |a| sp::gamma(a[0]));
}
#[test]
fn gammaln() {
    check("gammaln", 2.0, |a| sp::gammaln(a[0]));
}
#[test]
fn digamma() {
    check("digamma", 2.0, |a| sp::digamma(a[0]));
}
#[test]
fn trigamma() {
    check("trigamma", 2.0, |a| sp::trigamma(a[0]));
}
#[test]
fn polygamma() {
    check("polygamma", 2.0, |a| sp::polygamma(a[0], a[1]));
}
#[test]
fn factorial() {
    check("factorial", 2.0, |a| sp::factorial(a[0]));
}
#[test]
fn poch() {
    check("poch", 2.0, |a| sp::poch(a[0], a[1]));
}
#[test]
fn beta() {
    check("beta", 2.0, |a| sp::beta(a[0], a[1]));
}
#[test]
fn betaln() {
    check("betaln", 2.0, |a| sp::betaln(a[0], a[1]));
}
#[test]
fn gammainc() {
    check("gammainc", 2.0, |a| sp::gammainc(a[0], a[1]));
}
#[test]
fn gammaincc() {
    check("gammaincc", 2.0, |a| sp::gammaincc(a[0], a[1]));
}
#[test]
fn chi2sf() {
    check("chi2sf", 2.0, |a| sp::chi2sf(a[0], a[1]));
}
#[test]
fn gammaincinv() {
    check("gammaincinv", 2.0, |a| sp::gammaincinv(a[0], a[1]));
}
#[test]
fn gammainccinv() {
    check("gammainccinv", 2.0, |a| sp::gammainccinv(a[0], a[1]));
}
#[test]
fn erfinv() {
    check("erfinv", 2.0, |a| sp::erfinv(a[0]));
}
#[test]
fn erfcinv() {
    check("erfcinv", 2.0, |a| sp::erfcinv(a[0]));
}
#[test]
fn erfcx() {
    check("erfcx", 2.0, |a| sp::erfcx(a[0]));
}
#[test]
fn i0() {
    check("i0", 2.0, |a| sp::i0(a[0]));
}
#[test]
fn i1() {
    check("i1", 2.0, |a| sp::i1(a[0]));
}
#[test]
fn i0e() {
    check("i0e", 2.0, |a| sp::i0e(a[0]));
}
#[test]
fn i1e() {
    check("i1e", 2.0, |a| sp::i1e(a[0]));
}
#[test]
fn iv() {
    check("iv", 2.0, |a| sp::iv(a[0], a[1]));
}
#[test]
fn ive() {
    check("ive", 2.0, |a| sp::ive(a[0], a[1]));
}
#[test]
fn kv() {
    check("kv", 2.0, |a| sp::kv(a[0], a[1]));
}
#[test]
fn kve() {
    check("kve", 2.0, |a| sp::kve(a[0], a[1]));
}
#[test]
fn kn() {
    check("kn", 2.0, |a| sp::kn(a[0], a[1]));
}
#[test]
fn log1mexp() {
    check("log1mexp", 2.0, |a| sp::log1mexp(a[0]));
}
#[test]
fn xlogy() {
    check("xlogy", 2.0, |a| sp::xlogy(a[0], a[1]));
}
#[test]
fn xlog1py() {
    check("xlog1py", 2.0, |a| sp::xlog1py(a[0], a[1]));
}
#[test]
fn logit() {
    check("logit", 2.0, |a| sp::logit(a[0]));
}
#[test]
fn expit() {
    check("expit", 2.0, |a| sp::expit(a[0]));
}
#[test]
fn betainc() {
    check("betainc", 2.0, |a| sp::betainc(a[0], a[1], a[2]));
}
#[test]
fn betaincinv() {
    check("betaincinv", 2.0, |a| sp::betaincinv(a[0], a[1], a[2]));
}
#[test]
fn j0() {
    check("j0", 2.0, |a| sp::j0(a[0]));
}
#[test]
fn j1() {
    check("j1", 2.0, |a| sp::j1(a[0]));
}
#[test]
fn jv() {
    check("jv", 2.0, |a| sp::jv(a[0], a[1]));
}
#[test]
fn owens_t() {
    check("owens_t", 3.0, |a| sp::owens_t(a[0], a[1]));
}
#[test]
fn hyp2f1() {
    check("hyp2f1", 2.0, |a| sp::hyp2f1(a[0], a[1], a[2], a[3]));
}
