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

/// W5's model at a smaller size: the logistic-regression NLL and its gradient with a constant
/// design matrix large enough that a call runs on the thread pool and its two matrix-vector
/// products split across threads. Calls from the test's own thread (the global pool) and
/// inside pools of one and two threads agree with the interpreter, and two calls with one
/// thread count give the same bits.
#[test]
fn large_calls_agree_on_every_thread_count_and_repeat_exactly() {
    // 4099·67 multiply-adds per product, above the split threshold (2^18).
    let (n, d) = (4099usize, 67usize);
    let xs: Vec<f64> = (0..n * d)
        .map(|i| ((i * 7919) % 1000) as f64 / 500.0 - 1.0)
        .collect();
    let ys: Vec<f64> = (0..n).map(|i| f64::from(u8::from(i % 3 == 0))).collect();
    let xc = Var::constant(Tensor::from_slice(&xs, &[n, d]).expect("X"));
    let yc = Var::constant(Tensor::from_slice(&ys, &[n]).expect("y"));
    let w = vector("w", DType::F64);
    let p = ops::sigmoid(&ops::dot(&xc, &w).expect("dot")).expect("sigmoid");
    let ll = &yc * &p.log() + &(1.0 - &yc) * &(1.0 - &p).log();
    let nll = -ll.mean(None);
    let g = grad_vars(&nll, std::slice::from_ref(&w))
        .expect("grad")
        .remove(0);
    let (inputs, outputs) = ([w], [nll, g]);
    let ws: Vec<f64> = (0..d).map(|i| (i as f64 * 0.37).sin() * 0.1).collect();
    let values = [Tensor::from_slice(&ws, &[d]).expect("w")];
    let interp = run(
        Mode::new("interp", "fast_run").expect("mode"),
        &inputs,
        &outputs,
        &values,
    );
    let f = function(&inputs, &outputs)
        .mode(native_mode())
        .build()
        .expect("compile");
    let on_threads = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool")
            .install(|| f.call(&values).expect("call"))
    };
    let runs = [
        ("global pool", f.call(&values).expect("call")),
        ("one thread", on_threads(1)),
        ("two threads", on_threads(2)),
    ];
    for (name, got) in &runs {
        for (k, (a, b)) in got.iter().zip(&interp).enumerate() {
            assert_close(&format!("{name}, output {k}"), a, b, Tol::REORDERED);
        }
    }
    for (a, b) in on_threads(2).iter().zip(&runs[2].1) {
        assert!(
            a.to_bytes() == b.to_bytes(),
            "two calls on two threads differ"
        );
    }
}
