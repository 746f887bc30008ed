//! Test support shared by every oxtensor crate: how far apart two floating-point results may
//! be, and assertions that say where they differ.
//!
//! This crate *is* the tolerance policy of `docs/testing.md`, in code: a test that compares
//! floats picks one of the named [`Tol`]erances below (or states a looser one next to the
//! reason), so that a result is never compared bit for bit unless the operation is exactly
//! specified, and never with a tolerance so loose that a wrong result passes.
//!
//! Distances are measured in units in the last place ([`ulps`]): the number of representable
//! floats between two values, which is scale-free and dtype-aware (an f32 result is measured
//! in f32 ulps).

use oxtensor_data::{DType, Tensor};

/// Distance in units in the last place between `a` and `b` as floats of one type (`f32`
/// picks single precision; the values are then rounded to f32 first): 0 for equal values,
/// for two NaNs and for ±0; `u64::MAX` when exactly one is NaN.
pub fn ulps(a: f64, b: f64, f32: bool) -> u64 {
    if (a.is_nan() && b.is_nan()) || a == b {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
    // Maps each float to a position on one integer line that increases with the value
    // (negative floats have their bit patterns reversed), so ulps are differences.
    if f32 {
        let key = |x: f32| {
            let i = x.to_bits() as i32;
            if i < 0 {
                i64::from(i32::MIN) - i64::from(i)
            } else {
                i64::from(i)
            }
        };
        key(a as f32).abs_diff(key(b as f32))
    } else {
        let key = |x: f64| {
            let i = x.to_bits() as i64;
            if i < 0 {
                i128::from(i64::MIN) - i128::from(i)
            } else {
                i128::from(i)
            }
        };
        u64::try_from(key(a).abs_diff(key(b))).unwrap_or(u64::MAX)
    }
}

/// How close two float results must be: within `ulps` units in the last place, or within an
/// absolute difference of `abs`, or of `scale` times the largest finite magnitude of the
/// expected result (whichever admits more). NaN matches only NaN and an infinity only itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tol {
    /// Units in the last place.
    pub ulps: u64,
    /// Or an absolute difference relative to the largest finite magnitude in the expected
    /// result: absorbs cancellation, where terms that each differ by a few ulp add up to a
    /// small value with a large relative error.
    pub scale: f64,
    /// Or an absolute difference: absorbs subnormal results and values near a root.
    pub abs: f64,
}

impl Tol {
    /// Bitwise equality (up to ±0 and NaN payloads): integers, bools, and float operations
    /// IEEE 754 specifies exactly (`+ − × ÷ sqrt`, comparisons, min/max, casts, selects,
    /// indexing and data movement) evaluated in the same order.
    pub const EXACT: Tol = Tol::ulps(0);

    /// Correctly rounded on one side, faithfully on the other: one function of the C library
    /// against a correctly rounded reference (NumPy's float64 `exp` on glibc against Rust's).
    pub const ONE_ULP: Tol = Tol::ulps(1);

    /// A transcendental function computed by two math libraries: glibc's scalar `libm`, its
    /// vector `libmvec` (AVX2 and AVX-512 variants differ), and the `libm` crate are each
    /// within 4 ulp of the true value (glibc's documented bound for libmvec), so two of them
    /// are within 8 ulp of each other. This is the tolerance between backends, and between a
    /// backend and NumPy, for `exp`, `log`, `sin`, `tanh`, `erf`, `pow`, … .
    pub const MATH_LIBRARIES: Tol = Tol::ulps(8);

    /// Sums and products accumulated in another order (vector lanes, threads, pairwise
    /// against sequential): each order has an error bound proportional to the sum of the
    /// magnitudes, so the comparison is relative to the largest term, not to the result.
    pub const REORDERED: Tol = Tol {
        ulps: 8,
        scale: 1e-12,
        abs: 0.0,
    };

    /// Within `n` ulp and nothing else.
    pub const fn ulps(n: u64) -> Tol {
        Tol {
            ulps: n,
            scale: 0.0,
            abs: 0.0,
        }
    }

    /// This tolerance, also passing values within `scale` of the largest expected magnitude.
    pub const fn or_scaled(self, scale: f64) -> Tol {
        Tol { scale, ..self }
    }

    /// This tolerance, also passing values within `abs` of each other.
    pub const fn or_abs(self, abs: f64) -> Tol {
        Tol { abs, ..self }
    }

    /// Whether `got` is close enough to `want`, given the largest finite magnitude `big` of
    /// the expected values and the precision (`f32`) they are measured in.
    pub fn accepts(&self, got: f64, want: f64, big: f64, f32: bool) -> bool {
        if got.is_infinite() || want.is_infinite() {
            return got == want;
        }
        ulps(got, want, f32) <= self.ulps
            || (got.is_finite()
                && want.is_finite()
                && (got - want).abs() <= (self.scale * big.max(1.0)).max(self.abs))
    }
}

/// The largest finite magnitude among `values` (0 when there is none).
fn largest(values: &[f64]) -> f64 {
    values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()))
}

/// Asserts that `got` and `want` have one length and agree element by element within `tol`
/// (measured in f32 ulps when `f32`), naming `what` and the first element that does not.
#[track_caller]
pub fn assert_close_slices(what: &str, got: &[f64], want: &[f64], tol: Tol, f32: bool) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let big = largest(want);
    for (i, (&a, &b)) in got.iter().zip(want).enumerate() {
        assert!(
            tol.accepts(a, b, big, f32),
            "{what}: element {i}: got {a:e}, expected {b:e} ({} ulp; allowed {tol:?})",
            ulps(a, b, f32)
        );
    }
}

/// Asserts that `got` equals `want`: same dtype and shape; bitwise for integers and bools,
/// within `tol` for floats (in the dtype's own ulps); names `what` and the first element that
/// differs.
#[track_caller]
pub fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: Tol) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    if !want.dtype().is_float() {
        assert!(
            got.to_bytes() == want.to_bytes(),
            "{what}: {got:?} != {want:?}"
        );
        return;
    }
    let f32 = want.dtype() == DType::F32;
    assert_close_slices(
        what,
        &got.to_vec_as::<f64>(),
        &want.to_vec_as::<f64>(),
        tol,
        f32,
    );
}

/// Panics unless every `*.rs` file of the test directory `tests_dir` (other than `main.rs`) is
/// declared as a module (`mod name;`) in `main_rs`, the source of that directory's `main.rs`.
///
/// The crates whose tests are modules of one test binary turn cargo's discovery of test files
/// off (one binary per file cost minutes of compiling and linking in CI); this check makes sure
/// a new file is not silently left out of the build.
pub fn assert_test_files_declared(tests_dir: &str, main_rs: &str) {
    let entries = std::fs::read_dir(tests_dir).unwrap_or_else(|e| panic!("{tests_dir}: {e}"));
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("{tests_dir}: {e}")).path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs") && stem != "main" {
            assert!(
                main_rs.lines().any(|l| l.trim() == format!("mod {stem};")),
                "{} is not a module of {tests_dir}/main.rs, so it would never be compiled or run",
                path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulps_counts_representable_values() {
        assert_eq!(ulps(1.0, 1.0 + f64::EPSILON, false), 1);
        assert_eq!(ulps(-0.0, 0.0, false), 0);
        assert_eq!(ulps(f64::NAN, f64::NAN, false), 0);
        assert_eq!(ulps(f64::NAN, 1.0, false), u64::MAX);
        // Across zero: the smallest subnormals on either side are two apart.
        assert_eq!(ulps(-f64::from_bits(1), f64::from_bits(1), false), 2);
        assert_eq!(ulps(1.0, f64::from(1.0f32 + f32::EPSILON), true), 1);
        assert_eq!(ulps(f64::INFINITY, f64::MAX, false), 1);
    }

    #[test]
    fn tolerances_reject_what_they_should() {
        let e = 1.0f64.exp();
        let next = f64::from_bits(e.to_bits() + 1);
        assert!(Tol::ONE_ULP.accepts(next, e, e, false));
        assert!(!Tol::EXACT.accepts(next, e, e, false));
        let far = f64::from_bits(e.to_bits() + 9);
        assert!(!Tol::MATH_LIBRARIES.accepts(far, e, e, false));
        assert!(!Tol::MATH_LIBRARIES.accepts(f64::NAN, e, e, false));
        assert!(!Tol::REORDERED.accepts(f64::INFINITY, f64::MAX, f64::MAX, false));
        // A cancellation error small against the largest term passes only the scaled test.
        assert!(Tol::REORDERED.accepts(1e-17, 0.0, 1e4, false));
        assert!(!Tol::MATH_LIBRARIES.accepts(1e-17, 0.0, 1e4, false));
    }

    #[test]
    #[should_panic(expected = "element 1")]
    fn assert_close_names_the_element() {
        assert_close_slices("x", &[1.0, 2.0], &[1.0, 2.5], Tol::MATH_LIBRARIES, false);
    }
}
