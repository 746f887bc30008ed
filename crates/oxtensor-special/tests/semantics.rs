//! SciPy's conventions on special arguments: for every function, on a grid of infinities, NaN,
//! signed zeros, tiny and huge values, poles and domain ends (`tests/fixtures/semantics.tsv`,
//! written by `make_fixtures.py`), our value must be of the same class as SciPy's (NaN, +inf,
//! -inf, zero, positive, negative) and, when both are finite and nonzero, agree to 1e-6
//! relative. The few points where SciPy's own value is wrong are listed in `KNOWN` with the
//! reason, and checked to stay as documented.

use oxtensor_special::{EntryF64, find};
use std::path::PathBuf;

/// Points where we deliberately differ from SciPy: (function, args, our value, why).
const KNOWN: &[(&str, &[f64], f64, &str)] = &[];

/// The class of a value: 0 NaN, 1 +inf, 2 -inf, 3 zero, 4 positive, 5 negative.
fn class(v: f64) -> u8 {
    if v.is_nan() {
        0
    } else if v == f64::INFINITY {
        1
    } else if v == f64::NEG_INFINITY {
        2
    } else if v == 0.0 {
        3
    } else if v > 0.0 {
        4
    } else {
        5
    }
}

fn call(entry: EntryF64, a: &[f64]) -> f64 {
    match entry {
        EntryF64::Unary(f) => f(a[0]),
        EntryF64::Binary(f) => f(a[0], a[1]),
        EntryF64::Ternary(f) => f(a[0], a[1], a[2]),
        EntryF64::Quaternary(f) => f(a[0], a[1], a[2], a[3]),
    }
}

#[test]
fn special_arguments_follow_scipy() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/semantics.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut mismatches = Vec::new();
    let mut count = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = line.split('\t');
        let name = fields.next().unwrap_or_default();
        let nums: Vec<f64> = fields
            .map(|t| {
                t.parse()
                    .unwrap_or_else(|e| panic!("bad number {t:?}: {e}"))
            })
            .collect();
        let (args, want) = nums.split_at(nums.len() - 1);
        let want = want[0];
        let export = find(name).unwrap_or_else(|| panic!("{name} is not exported"));
        let got = call(export.entry, args);
        count += 1;
        let same_class = class(got) == class(want);
        let close = !got.is_finite() || got == 0.0 || ((got - want) / want).abs() <= 1e-6;
        if same_class && close {
            continue;
        }
        let known = KNOWN.iter().find(|k| k.0 == name && k.1 == args);
        match known {
            Some(k) => assert!(
                class(got) == class(k.2),
                "{name}{args:?}: documented {} but got {got}",
                k.2
            ),
            None => mismatches.push(format!("{name}{args:?}: ours {got:e}, SciPy {want:e}")),
        }
    }
    assert!(count > 10000);
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
