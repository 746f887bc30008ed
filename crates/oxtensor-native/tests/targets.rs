//! Vector math on every x86-64 level: code compiled for a lower `-march` than this machine's
//! (`NativeConfig::target`) calls the libmvec variants of that level's vector width, and
//! agrees with the interpreter.

#![cfg(target_arch = "x86_64")]

use crate::common;

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, ScalarOp, build};
use oxtensor_native::{NativeBackend, NativeConfig};
use oxtensor_runtime::{Backend, Interpreter};
use oxtensor_testkit::{Tol, assert_close_slices};

/// The transcendental functions of the workloads.
const FUNCTIONS: [(ScalarOp, &str); 5] = [
    (ScalarOp::Exp, "exp"),
    (ScalarOp::Sin, "sin"),
    (ScalarOp::Log1p, "log1p"),
    (ScalarOp::Log, "log"),
    (ScalarOp::Tanh, "tanh"),
];

/// The `-march` levels and the libmvec name prefix of their float64 vector width.
fn levels() -> Vec<(&'static str, &'static str)> {
    let mut levels = vec![("x86-64-v2", "_ZGVbN2v_"), ("x86-64-v3", "_ZGVdN4v_")];
    if std::arch::is_x86_feature_detected!("avx512f") {
        levels.push(("x86-64-v4", "_ZGVeN8v_"));
    }
    levels
}

#[test]
fn each_level_calls_its_own_vector_math_and_agrees_with_the_interpreter() {
    let x = common::input("x", DType::F64, 1);
    let outputs: Vec<_> = FUNCTIONS
        .iter()
        .map(|(op, _)| build::elemwise(*op, std::slice::from_ref(&x)).expect("op"))
        .collect();
    let graph = FunctionGraph::new(vec![x], outputs).expect("graph");
    let values: Vec<f64> = (0..4096).map(|i| 0.003 * i as f64 + 0.001).collect();
    let args = vec![Tensor::from_slice(&values, &[values.len()]).expect("x")];
    let want = Interpreter
        .compile(&graph)
        .expect("interpreter")
        .run(args.clone())
        .expect("run");
    let dir = tempfile::tempdir().expect("tempdir");
    for (target, prefix) in levels() {
        let backend = NativeBackend::with_config(NativeConfig {
            cache_dir: Some(dir.path().to_path_buf()),
            target: Some(target.to_string()),
            interpret_below: 0,
            ..NativeConfig::default()
        })
        .expect("a C compiler is needed for these tests");
        let (exec, info) = backend.compile_graph(&graph).expect("compile");
        let library = info.library.expect("a library");
        let bytes = std::fs::read(&library).expect("read the library");
        let has = |name: &str| bytes.windows(name.len()).any(|w| w == name.as_bytes());
        for (_, name) in FUNCTIONS {
            let symbol = format!("{prefix}{name}");
            assert!(has(&symbol), "{target}: {name} does not call {symbol}");
        }
        let got = oxtensor_runtime::Executable::run(&exec, args.clone()).expect("run");
        for ((g, w), (_, name)) in got.iter().zip(&want).zip(FUNCTIONS) {
            assert_close_slices(
                &format!("{target} {name}"),
                &g.to_vec_as::<f64>(),
                &w.to_vec_as::<f64>(),
                Tol::MATH_LIBRARIES,
                false,
            );
        }
    }
}
