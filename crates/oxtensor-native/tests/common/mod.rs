//! Helpers shared by the native backend's tests: backends with private caches, running a
//! graph through the native backend and the interpreter, and comparing the results.
#![allow(dead_code)]

pub mod data;

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, TensorType, Var};
use oxtensor_native::{NativeBackend, NativeConfig};
use oxtensor_runtime::{Backend, Interpreter};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A cache directory shared by the differential tests of this build (under cargo's target
/// directory, so repeated runs hit it).
pub fn shared_cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("oxtensor-native-test-cache")
}

/// A backend on the shared test cache (one per test binary).
pub fn backend() -> &'static NativeBackend {
    static B: OnceLock<NativeBackend> = OnceLock::new();
    B.get_or_init(|| {
        NativeBackend::with_config(NativeConfig {
            cache_dir: Some(shared_cache_dir()),
            // Small arrays too run in C, so the differential tests compare C with the interpreter.
            interpret_below: 0,
            ..NativeConfig::default()
        })
        .expect("a C compiler is needed for these tests")
    })
}

/// A graph input of `dtype` with unknown extents.
pub fn input(name: &str, dtype: DType, ndim: usize) -> Var {
    Var::input(Some(name), TensorType::of_rank(dtype, ndim))
}

/// Runs `outputs(inputs)` on `values` through the native backend and the interpreter.
pub fn both(inputs: &[Var], outputs: &[Var], values: &[Tensor]) -> (Vec<Tensor>, Vec<Tensor>) {
    let g = FunctionGraph::new(inputs.to_vec(), outputs.to_vec()).expect("graph");
    let native = backend()
        .compile(&g)
        .expect("native compile")
        .run(values.to_vec())
        .expect("native run");
    let interp = Interpreter
        .compile(&g)
        .expect("interp compile")
        .run(values.to_vec())
        .expect("interp run");
    (native, interp)
}

/// Distance in units in the last place between two floats of one type, through their
/// ordered bit patterns (0 for equal values, including two NaNs and ±0).
pub fn ulps(a: f64, b: f64, f32: bool) -> u64 {
    if (a.is_nan() && b.is_nan()) || a == b {
        return 0;
    }
    if a.is_nan() || b.is_nan() {
        return u64::MAX;
    }
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

/// How close two float results must be.
#[derive(Clone, Copy, Debug)]
pub struct Tol {
    /// Units in the last place.
    pub ulps: u64,
    /// Or an absolute difference, relative to the largest finite magnitude in the expected
    /// result (absorbs cancellation of values that each differ by a few ulp).
    pub scale: f64,
    /// Or an absolute difference (absorbs subnormal results, which have few significant bits).
    pub abs: f64,
}

/// Exact equality.
pub const EXACT: Tol = Tol {
    ulps: 0,
    scale: 0.0,
    abs: 0.0,
};

/// Asserts that `got` equals `want` (same dtype and shape; bitwise for integers and bools,
/// within `tol` for floats), naming `what`.
pub fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: Tol) {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    if !want.dtype().is_float() {
        assert!(
            got.to_bytes() == want.to_bytes(),
            "{what}: {:?} != {:?}",
            got,
            want
        );
        return;
    }
    let f32 = want.dtype() == DType::F32;
    let g = got.to_vec_as::<f64>();
    let w = want.to_vec_as::<f64>();
    let big = w
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let d = ulps(*a, *b, f32);
        let abs_ok = a.is_finite()
            && b.is_finite()
            && (a - b).abs() <= (tol.scale * big.max(1.0)).max(tol.abs);
        assert!(
            d <= tol.ulps || abs_ok,
            "{what}: element {i}: native {a:e} vs interpreter {b:e} ({d} ulp)"
        );
    }
}
