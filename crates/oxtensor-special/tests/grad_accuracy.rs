//! The parameter derivatives of `betainc` and `hyp2f1` against mpmath (60 digits, its numerical
//! derivative `mp.diff`) on the grids of `tests/fixtures/make_grad_fixtures.py`, with
//! PyTensor's gradient on the same points reported alongside.
//!
//! Stated bound: relative error at most [`REL`] wherever the reference is finite (measured:
//! at most 1.6e-15 on every fixture, PyTensor's own gradient up to 1.5e-8 off for `betainc`
//! and up to 1.5 (relative) off for `hyp2f1` near |x| = 1, NaN at x < −1). Where the
//! reference is not finite ours must be NaN.

use oxtensor_special as sp;

/// The relative error every point meets.
const REL: f64 = 1e-14;

use crate::tsv;
use tsv::Row;

/// The rows of fixture `name` (`other` is PyTensor's value).
fn read(name: &str) -> Vec<Row> {
    tsv::read(name).unwrap_or_else(|| panic!("{name}.tsv is missing: run make_grad_fixtures.py"))
}

/// Relative error of `got` against `want` (0 when equal, including both zero).
fn rel(got: f64, want: f64) -> f64 {
    if got == want {
        0.0
    } else {
        ((got - want) / want).abs()
    }
}

/// Measures `f` on the fixture `name`: every point within [`REL`]; prints our worst error and
/// PyTensor's on the same points.
fn check(name: &str, f: impl Fn(&[f64]) -> f64) {
    let rows = read(name);
    let (mut ours_max, mut theirs_max, mut theirs_nan) = (0.0f64, 0.0f64, 0);
    let mut worst = Vec::new();
    let mut bad = Vec::new();
    for r in &rows {
        let got = f(&r.args);
        if !r.reference.is_finite() {
            assert!(
                got.is_nan(),
                "{name}{:?}: {got}, reference {}",
                r.args,
                r.reference
            );
            continue;
        }
        let e = rel(got, r.reference);
        let e = if e.is_nan() { f64::INFINITY } else { e };
        if e > ours_max {
            ours_max = e;
            worst = r.args.clone();
        }
        if e > REL {
            bad.push((r.args.clone(), got, r.reference, e));
        }
        if r.other.is_nan() {
            theirs_nan += 1;
        } else {
            theirs_max = theirs_max.max(rel(r.other, r.reference));
        }
    }
    println!(
        "{name}: {} points, max rel ours {ours_max:.1e} (at {worst:?}); PyTensor max rel \
         {theirs_max:.1e}, NaN at {theirs_nan}",
        rows.len()
    );
    assert!(
        bad.is_empty(),
        "{name}: {} points beyond the bound (args, got, reference, rel): {:?}",
        bad.len(),
        &bad[..bad.len().min(6)]
    );
}

#[test]
fn betainc_da() {
    check("betainc_da", |a| sp::betainc_da(a[0], a[1], a[2]));
}

#[test]
fn betainc_db() {
    check("betainc_db", |a| sp::betainc_db(a[0], a[1], a[2]));
}

#[test]
fn hyp2f1_da() {
    check("hyp2f1_da", |a| sp::hyp2f1_da(a[0], a[1], a[2], a[3]));
}

#[test]
fn hyp2f1_db() {
    check("hyp2f1_db", |a| sp::hyp2f1_db(a[0], a[1], a[2], a[3]));
}

#[test]
fn hyp2f1_dc() {
    check("hyp2f1_dc", |a| sp::hyp2f1_dc(a[0], a[1], a[2], a[3]));
}
