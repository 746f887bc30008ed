//! The boundary between safe Rust and generated code: an executable refuses any value its
//! kernels were not compiled for (dtype, rank, static extent, count), whoever calls it and
//! whether or not the caller trusts its inputs, so no safe call makes C read out of bounds.

use crate::common;

use oxtensor::{DType, Error, Tensor, function};
use oxtensor_graph::{FunctionGraph, TensorType, Var, build};
use oxtensor_runtime::{Backend, Executable, RuntimeError};

/// `exp(x) * y` over f64 vectors, `y` of static length 3, compiled natively.
fn compiled() -> (std::sync::Arc<dyn Executable>, Var, Var) {
    let x = common::input("x", DType::F64, 1);
    let y = Var::input(Some("y"), TensorType::new(DType::F64, &[Some(3)]));
    let out = build::mul(&build::exp(&x).expect("exp"), &y).expect("mul");
    let g = FunctionGraph::new(vec![x.clone(), y.clone()], vec![out]).expect("graph");
    let exec = common::backend().compile(&g).expect("compile");
    (exec, x, y)
}

fn f64s(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).expect("tensor")
}

fn refused(result: Result<Vec<Tensor>, RuntimeError>, input: &str, got: &str) {
    match result {
        Err(e @ RuntimeError::InputType { .. }) => {
            let m = e.to_string();
            assert!(m.contains(input) && m.contains(got), "{m}");
        }
        other => panic!("expected InputType naming {input}, got {other:?}"),
    }
}

#[test]
fn values_of_another_type_are_refused_before_any_kernel_runs() {
    let (exec, _, _) = compiled();
    let good = exec
        .run(vec![f64s(&[0.0, 1.0, 2.0]), f64s(&[1.0, 2.0, 3.0])])
        .expect("run");
    oxtensor_testkit::assert_close(
        "exp(x) * y",
        &good[0],
        &f64s(&[1.0, 2.0 * 1f64.exp(), 3.0 * 2f64.exp()]),
        oxtensor_testkit::Tol::MATH_LIBRARIES,
    );
    // float32 data is half the bytes the float64 kernel would read.
    let small = Tensor::from_slice(&[0.0f32; 3], &[3]).expect("f32");
    refused(
        exec.run(vec![small, f64s(&[1.0; 3])]),
        "x",
        "float32 of shape [3]",
    );
    let matrix = Tensor::from_slice(&[0.0f64; 3], &[1, 3]).expect("matrix");
    refused(exec.run(vec![matrix, f64s(&[1.0; 3])]), "x", "shape [1, 3]");
    refused(
        exec.run(vec![f64s(&[0.0; 4]), f64s(&[1.0; 4])]),
        "y",
        "shape [4]",
    );
    assert!(matches!(
        exec.run(vec![f64s(&[0.0; 3])]),
        Err(RuntimeError::Arity {
            expected: 2,
            got: 1
        })
    ));
}

#[test]
fn trusted_calls_are_checked_too() {
    let x = oxtensor::vector("x", DType::F64);
    let f = function(
        std::slice::from_ref(&x),
        &[oxtensor::ops::exp(&x).expect("exp")],
    )
    .trust_input(true)
    .build()
    .expect("compile");
    let ints = Tensor::from_slice(&[1i32, 2], &[2]).expect("ints");
    let err = f
        .call(&[ints])
        .expect_err("an int32 vector for a float64 kernel");
    assert!(err.is_type_error(), "{err}");
    assert!(matches!(
        err,
        Error::Runtime(RuntimeError::InputType { .. })
    ));
    assert!(err.to_string().contains("x"), "{err}");
    let out = f.call(&[f64s(&[0.0])]).expect("a float64 vector");
    assert_eq!(out[0].to_vec::<f64>().expect("f64"), vec![1.0]);
}
