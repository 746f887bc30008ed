//! The native backend behind the facade: `function(..).mode(..)` with every rewrite, on models
//! mixing native and interpreted ops (gradients, indexing, matmul, shared variables), against
//! the interpreter mode.

use crate::common;

use oxtensor::{DType, Mode, Tensor, Var, function, grad_vars, matrix, ops, shared, vector};
use oxtensor_native::NativeBackend;
use oxtensor_rewrite::Optimizer;
use oxtensor_testkit::{Tol, assert_close};
use std::sync::Arc;

fn native_mode() -> Mode {
    let backend = NativeBackend::with_config(oxtensor_native::NativeConfig {
        cache_dir: Some(common::shared_cache_dir()),
        ..Default::default()
    })
    .expect("backend");
    Mode::with_backend(Arc::new(backend), Optimizer::FAST_RUN)
}

fn run(mode: Mode, inputs: &[Var], outputs: &[Var], values: &[Tensor]) -> Vec<Tensor> {
    let f = function(inputs, outputs)
        .mode(mode)
        .build()
        .expect("compile");
    f.call(values).expect("call")
}

#[test]
fn models_match_the_interpreter() {
    let x = matrix("x", DType::F64);
    let w = vector("w", DType::F64);
    let b = shared(
        Tensor::from_slice(&[0.5f64, -0.25, 1.0], &[3]).expect("b"),
        Some("b"),
    );
    // A small softmax regression: matmul (interpreted), logsumexp and sums (native), and the
    // gradient (a mix of everything).
    let wm = ops::reshape(&w, &[4, 3]).expect("reshape");
    let logits = ops::add(&ops::matmul(&x, &wm).expect("matmul"), &b).expect("bias");
    let m = ops::max(&logits, Some(&[1]), true).expect("max");
    let lse = ops::add(
        &ops::log(
            &ops::sum(
                &ops::exp(&ops::sub(&logits, &m).expect("sub")).expect("exp"),
                Some(&[1]),
                true,
            )
            .expect("sum"),
        )
        .expect("log"),
        &m,
    )
    .expect("lse");
    let loss = ops::mean(&ops::sub(&lse, &logits).expect("nll"), None, false).expect("mean");
    let g = grad_vars(&loss, std::slice::from_ref(&w))
        .expect("grad")
        .remove(0);
    let first = ops::subtensor(&x, &[ops::Idx::int(0)]).expect("index");
    let w2 = ops::add(
        &ops::mul(
            &ops::exp(&ops::neg(&ops::sqr(&first).expect("sqr")).expect("neg")).expect("exp"),
            &ops::sin(&first).expect("sin"),
        )
        .expect("mul"),
        &ops::log1p(&ops::abs(&first).expect("abs")).expect("log1p"),
    )
    .expect("w2");
    let outputs = [loss, g, w2];
    let xs: Vec<f64> = (0..40).map(|i| ((i * 7) % 11) as f64 * 0.3 - 1.5).collect();
    let ws: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin()).collect();
    let values = [
        Tensor::from_slice(&xs, &[10, 4]).expect("x"),
        Tensor::from_slice(&ws, &[12]).expect("w"),
    ];
    let inputs = [x, w];
    let native = run(native_mode(), &inputs, &outputs, &values);
    let interp = run(
        Mode::new("interp", "fast_run").expect("mode"),
        &inputs,
        &outputs,
        &values,
    );
    let tol = Tol {
        ulps: 64,
        scale: 1e-14,
        abs: 0.0,
    };
    for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
        assert_close(&format!("output {k}"), n, i, tol);
    }
}
