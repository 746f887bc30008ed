//! Helpers shared by the native backend's tests: backends with private caches, running a
//! graph through the native backend and the interpreter, and comparing the results.
#![allow(dead_code)]

pub mod data;
pub mod models;
pub mod slices;
pub mod staged;

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
