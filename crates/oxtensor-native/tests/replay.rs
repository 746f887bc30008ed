//! Replayed calls (`replay.rs`): a function called again with inputs of one layout replays the
//! kernel calls its second call recorded. Each replay must give exactly what the normal path
//! gives (the same kernels on the same walks: bit for bit), follow new values, stay off when
//! the layout changes, refuse graphs it cannot record, and report errors as the normal path.

use crate::common;

use common::backend;
use common::data::Rng;
use oxtensor::{DType, Mode, Tensor, Var, grad_vars, scalar, vector};
use oxtensor_graph::FunctionGraph;
use oxtensor_native::NativeExecutable;
use oxtensor_runtime::{Backend, Executable, Interpreter};
use oxtensor_testkit::{Tol, assert_close};
use std::sync::Arc;

/// The FAST_RUN-rewritten graph of `outputs(inputs)`, compiled natively and by the interpreter.
fn compile(inputs: &[Var], outputs: &[Var]) -> (NativeExecutable, Arc<dyn Executable>) {
    let g = FunctionGraph::new(inputs.to_vec(), outputs.to_vec()).expect("graph");
    let (g, _) = Mode::FAST_RUN.rewrite(&g).expect("rewrite");
    let (native, _) = backend().compile_graph(&g).expect("native compile");
    let interp = Interpreter.compile(&g).expect("interp compile");
    (native, interp)
}

fn floats(rng: &mut Rng, n: usize) -> Tensor {
    let v: Vec<f64> = (0..n).map(|_| rng.uniform(-2.0, 2.0)).collect();
    Tensor::from_slice(&v, &[n]).expect("tensor")
}

/// Bit-for-bit equality of two lists of outputs.
fn assert_identical(what: &str, got: &[Tensor], want: &[Tensor]) {
    assert_eq!(got.len(), want.len(), "{what}: number of outputs");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.dtype(), w.dtype(), "{what}: output {i} dtype");
        assert_eq!(g.shape(), w.shape(), "{what}: output {i} shape");
        assert_eq!(g.to_bytes(), w.to_bytes(), "{what}: output {i} bits");
    }
}

/// A normal-path result for `values`: the same graph compiled afresh, called once (a first
/// call never replays).
fn normal(inputs: &[Var], outputs: &[Var], values: &[Tensor]) -> Vec<Tensor> {
    let (native, _) = compile(inputs, outputs);
    native.run(values.to_vec()).expect("normal call")
}

/// A log-density and its gradient: fused elementwise programs with several outputs, scalar
/// broadcasts (views), `Shape_i` and `Alloc` of a constant (fixed by the layout), sums.
fn logp_model() -> (Vec<Var>, Vec<Var>) {
    let x = vector("x", DType::F64);
    let mu = scalar("mu", DType::F64);
    let s = scalar("s", DType::F64);
    let z = (&(&x - &mu) / &s).sqr();
    let logp = (&(&z * &Var::scalar_constant(-0.5, DType::F64)) - &s.log()).sum(None);
    let grads = grad_vars(&logp, &[mu.clone(), s.clone()]).expect("grad");
    let mut outs = vec![logp];
    outs.extend(grads);
    (vec![x, mu, s], outs)
}

#[test]
fn repeated_calls_replay_and_equal_the_normal_path_bit_for_bit() {
    let mut rng = Rng::new(11);
    let (inputs, outputs) = logp_model();
    let (native, interp) = compile(&inputs, &outputs);
    for call in 0..12 {
        // New values every call (same layout): a replay must compute, not remember.
        let values = vec![
            floats(&mut rng, 10),
            Tensor::scalar(rng.uniform(-1.0, 1.0)),
            Tensor::scalar(rng.uniform(0.5, 2.0)),
        ];
        let got = native.run(values.clone()).expect("call");
        assert_identical(
            &format!("call {call}"),
            &got,
            &normal(&inputs, &outputs, &values),
        );
        let want = interp.run(values).expect("interp");
        for (g, w) in got.iter().zip(&want) {
            assert_close(&format!("call {call}"), g, w, Tol::REORDERED);
        }
    }
    // Calls 1 and 2 run the plan (the second records); the other ten replay.
    assert_eq!(native.replayed_calls(), 10);
}

#[test]
fn a_new_layout_takes_the_normal_path_until_it_is_recorded() {
    let x = vector("x", DType::F64);
    let outputs = [(&x * &x).sum(None), (&x.exp() + &x).max(None)];
    let inputs = [x];
    let (native, _) = compile(&inputs, &outputs);
    let mut rng = Rng::new(3);
    let long = floats(&mut rng, 40);
    let layouts = [
        floats(&mut rng, 10),
        floats(&mut rng, 11),
        // Every other element of a longer vector: same shape as the first, other strides.
        long.view(&[20], &[2], 0).expect("strided view"),
        floats(&mut rng, 10),
    ];
    let mut expected_replays = 0;
    for (i, v) in layouts.iter().enumerate() {
        for call in 0..4 {
            let got = native.run(vec![v.clone()]).expect("call");
            assert_identical(
                &format!("layout {i}, call {call}"),
                &got,
                &normal(&inputs, &outputs, std::slice::from_ref(v)),
            );
        }
        // The first call with a new layout misses, the second records, the rest replay.
        expected_replays += 2;
        assert_eq!(native.replayed_calls(), expected_replays, "layout {i}");
    }
}

#[test]
fn outputs_that_are_views_or_inputs_keep_their_own_shapes() {
    let x = vector("x", DType::F64);
    let y = (&x * &x).exp();
    let outputs = [
        oxtensor::ops::expand_dims(&y, 0).expect("expand"),
        y.sum(None),
        oxtensor::ops::expand_dims(&x, 1).expect("expand"),
        x.clone(),
    ];
    let inputs = [x];
    let (native, _) = compile(&inputs, &outputs);
    let mut rng = Rng::new(9);
    for call in 0..5 {
        let v = vec![floats(&mut rng, 6)];
        let got = native.run(v.clone()).expect("call");
        assert_identical(
            &format!("call {call}"),
            &got,
            &normal(&inputs, &outputs, &v),
        );
    }
}

#[test]
fn a_graph_with_a_matrix_product_never_replays() {
    let x = vector("x", DType::F64);
    let m = oxtensor::matrix("m", DType::F64);
    let outputs = [m.matmul(&x).sum(None)];
    let inputs = [x, m];
    let (native, interp) = compile(&inputs, &outputs);
    let mut rng = Rng::new(5);
    let m_values: Vec<f64> = (0..12).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let values = vec![
        floats(&mut rng, 4),
        Tensor::from_slice(&m_values, &[3, 4]).expect("m"),
    ];
    for _ in 0..5 {
        let got = native.run(values.clone()).expect("call");
        let want = interp.run(values.clone()).expect("interp");
        assert_close("matmul", &got[0], &want[0], Tol::REORDERED);
    }
    assert_eq!(native.replayed_calls(), 0);
}

#[test]
fn an_error_element_on_replay_is_reported_as_by_the_normal_path() {
    // An integer power with a negative exponent is an error the C kernel hands to the
    // interpreter; on replay it must come out exactly as on the normal path.
    let x = vector("x", DType::I64);
    let y = vector("y", DType::I64);
    let outputs = [x.pow(&y).sum(None)];
    let inputs = [x, y];
    let (native, _) = compile(&inputs, &outputs);
    let ok = [
        Tensor::from_slice(&[2i64, 3, 4], &[3]).expect("x"),
        Tensor::from_slice(&[1i64, 2, 3], &[3]).expect("y"),
    ];
    for _ in 0..4 {
        let got = native.run(ok.to_vec()).expect("call");
        assert_eq!(got[0].to_bytes(), Tensor::scalar(2i64 + 9 + 64).to_bytes());
    }
    assert_eq!(native.replayed_calls(), 2);
    let bad = [
        ok[0].clone(),
        Tensor::from_slice(&[1i64, -2, 3], &[3]).expect("y"),
    ];
    let replayed = native
        .run(bad.to_vec())
        .map(|_| ())
        .map_err(|e| e.to_string());
    let fresh = normal_result(&inputs, &outputs, &bad);
    assert!(replayed.is_err(), "a negative integer exponent must fail");
    assert_eq!(replayed, fresh);
    // Good values replay again afterwards (after a new recording).
    for _ in 0..4 {
        native.run(ok.to_vec()).expect("call");
    }
    assert!(native.replayed_calls() > 2);
}

/// What a first (never replayed) call on `values` gives: success, or the error's message.
fn normal_result(inputs: &[Var], outputs: &[Var], values: &[Tensor]) -> Result<(), String> {
    let (native, _) = compile(inputs, outputs);
    native
        .run(values.to_vec())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn concurrent_calls_each_get_their_own_results() {
    let (inputs, outputs) = logp_model();
    let (native, _) = compile(&inputs, &outputs);
    let native = Arc::new(native);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let native = native.clone();
            let (inputs, outputs) = (inputs.clone(), outputs.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::new(100 + t);
                for call in 0..50 {
                    let values = vec![
                        floats(&mut rng, 10),
                        Tensor::scalar(rng.uniform(-1.0, 1.0)),
                        Tensor::scalar(rng.uniform(0.5, 2.0)),
                    ];
                    let got = native.run(values.clone()).expect("call");
                    if call % 10 == 0 {
                        assert_identical(
                            &format!("thread {t} call {call}"),
                            &got,
                            &normal(&inputs, &outputs, &values),
                        );
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    assert!(native.replayed_calls() > 0);
}
