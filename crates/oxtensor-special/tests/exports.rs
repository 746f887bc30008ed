//! The export table agrees with the functions it names: symbols follow `oxt_<name>_f64/_f32`,
//! arities match the entry points, each entry computes what the Rust function computes, and the
//! f32 entry points are the f64 results rounded once.

use oxtensor_special as sp;
use oxtensor_special::{EXPORTS, EntryF64};

/// Arguments inside every function's domain (an integer first argument for polygamma/kn, a
/// last argument in (0, 1) for the inverses).
const ARGS: [f64; 4] = [2.0, 1.5, 3.25, 0.375];

#[test]
fn symbols_names_and_arities_are_consistent() {
    let mut names: Vec<&str> = EXPORTS.iter().map(|e| e.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), EXPORTS.len(), "duplicate export names");
    assert_eq!(EXPORTS.len(), 44);
    for e in EXPORTS {
        assert_eq!(e.symbol_f64, format!("oxt_{}_f64", e.name));
        assert_eq!(e.symbol_f32, format!("oxt_{}_f32", e.name));
        let arity = match e.entry {
            EntryF64::Unary(_) => 1,
            EntryF64::Binary(_) => 2,
            EntryF64::Ternary(_) => 3,
            EntryF64::Quaternary(_) => 4,
        };
        assert_eq!(e.arity(), arity, "{}", e.name);
        assert!(sp::find(e.name).is_some());
    }
}

#[test]
fn entries_compute_the_named_functions() {
    let call = |name: &str| -> f64 {
        let e = sp::find(name).unwrap_or_else(|| panic!("{name} not exported"));
        match e.entry {
            EntryF64::Unary(f) => f(ARGS[3]),
            EntryF64::Binary(f) => f(ARGS[0], ARGS[3]),
            EntryF64::Ternary(f) => f(ARGS[0], ARGS[1], ARGS[3]),
            EntryF64::Quaternary(f) => f(ARGS[0], ARGS[1], ARGS[2], ARGS[3]),
        }
    };
    assert_eq!(call("gamma"), sp::gamma(0.375));
    assert_eq!(call("gammainc"), sp::gammainc(2.0, 0.375));
    assert_eq!(call("betainc"), sp::betainc(2.0, 1.5, 0.375));
    assert_eq!(call("hyp2f1"), sp::hyp2f1(2.0, 1.5, 3.25, 0.375));
    assert_eq!(call("chi2sf"), sp::chi2sf(2.0, 0.375));
    for e in EXPORTS {
        let v = call(e.name);
        // log1mexp is only defined for x <= 0.
        assert!(
            v.is_finite() || e.name == "log1mexp",
            "{} at the sample point gave {v}",
            e.name
        );
    }
    assert!(call("log1mexp").is_nan());
}

#[test]
fn f32_entry_points_round_the_f64_result_once() {
    for &x in &[0.375f32, 1.5, 7.25, 30.0] {
        assert_eq!(sp::f32::gamma(x), sp::gamma(f64::from(x)) as f32);
        assert_eq!(sp::f32::erfcx(x), sp::erfcx(f64::from(x)) as f32);
        assert_eq!(sp::f32::kv(1.5, x), sp::kv(1.5, f64::from(x)) as f32);
        assert_eq!(
            sp::f32::hyp2f1(0.5, 1.5, 2.0, -x),
            sp::hyp2f1(0.5, 1.5, 2.0, f64::from(-x)) as f32
        );
    }
    assert!(sp::f32::gammaln(-1.0).is_infinite());
}

#[test]
fn c_declarations_declare_every_symbol_with_its_parameters() {
    let decls = sp::c_declarations();
    assert!(decls.contains("double oxt_gamma_f64(double x);\n"));
    assert!(decls.contains("float oxt_betainc_f32(float a, float b, float x);\n"));
    assert_eq!(decls.lines().count(), 2 * EXPORTS.len());
}
