//! Loops whose steps slice and gather, through `Function` (FAST_RUN, the native backend),
//! against the same loops written by hand in Rust:
//!
//! - a sliding window `h ← tanh(0.5·h + x[s_t : s_t + 16])` over 10,000 steps, the whole
//!   trajectory returned;
//! - an embedding lookup `h ← tanh(0.5·h + Σ_k E[idx_t][k])` (E 1000 × 64, 4 tokens a step,
//!   1,000 steps), forward and forward + gradient w.r.t. `E`.
//!
//! Prints the best of `SLICES_REPS` (default 7) runs each, after a check against the loop by
//! hand; run two builds one after the other (or interleaved rounds) to compare them.
//!
//! `cargo run --release -p oxtensor-bench --bin slices`

use oxtensor::gradient::GradOptions;
use oxtensor::oxtensor_graph::TensorType;
use oxtensor::{DType, Idx, ScanSpec, Tensor, Var, function, grad, scan};
use oxtensor_bench::{best, f64_input, noise, ok, reps};
use std::hint::black_box;

const WINDOW: usize = 16;
const WINDOW_STEPS: usize = 10_000;
const VOCAB: usize = 1000;
const HIDDEN: usize = 64;
const TOKENS: usize = 4;
const EMBED_STEPS: usize = 1000;

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn window() {
    let (s, x, h0) = (
        Var::input(None, TensorType::of_rank(DType::I64, 1)),
        f64_input(1),
        f64_input(1),
    );
    let (st, hp, xi) = (
        Var::input(None, TensorType::scalar(DType::I64)),
        f64_input(1),
        f64_input(1),
    );
    let w = xi.at(&[Idx::Slice(
        Some(st.clone()),
        Some(&st + &Var::int_constant(WINDOW as i64)),
        None,
    )]);
    let next = (&(&hp * 0.5) + &w).tanh();
    let h = ok(scan(ScanSpec {
        tap_inputs: &[st, hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[xi],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&s),
        initial: &[ok(oxtensor::ops::expand_dims(&h0, 0))],
        others: std::slice::from_ref(&x),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("window"),
    }));
    let f = ok(function(&[s, x, h0], &h).build());
    let starts: Vec<i64> = (0..WINDOW_STEPS as i64).collect();
    let xv = noise(WINDOW_STEPS + WINDOW, 1);
    let args = [
        ok(Tensor::from_slice(&starts, &[WINDOW_STEPS])),
        ok(Tensor::from_slice(&xv, &[xv.len()])),
        ok(Tensor::from_slice(&[0.0; WINDOW], &[WINDOW])),
    ];
    let by_hand = || {
        let mut h = [0.0f64; WINDOW];
        let mut out = Vec::with_capacity(WINDOW_STEPS * WINDOW);
        for t in 0..WINDOW_STEPS {
            for (j, v) in h.iter_mut().enumerate() {
                *v = (0.5 * *v + xv[t + j]).tanh();
            }
            out.extend_from_slice(&h);
        }
        out
    };
    let got = ok(f.call(&args))[0].to_vec_as::<f64>();
    assert!(max_diff(&got, &by_hand()) < 1e-12, "sliding window differs");
    let ours = best(reps("SLICES_REPS", 7), || {
        black_box(ok(f.call(&args)));
    });
    let hand = best(reps("SLICES_REPS", 7), || {
        black_box(by_hand());
    });
    println!(
        "sliding window (16 of x, {WINDOW_STEPS} steps)    oxtensor {:8.3} ms   by hand {:8.3} ms",
        ours * 1e3,
        hand * 1e3
    );
}

fn embedding() {
    let (idx, e, h0) = (
        Var::input(None, TensorType::of_rank(DType::I64, 2)),
        f64_input(2),
        f64_input(1),
    );
    let (it, hp, ei) = (
        Var::input(None, TensorType::of_rank(DType::I64, 1)),
        f64_input(1),
        f64_input(2),
    );
    let next = (&(&hp * 0.5) + &ei.at(&[Idx::At(it.clone())]).sum(Some(&[0]))).tanh();
    let h = ok(scan(ScanSpec {
        tap_inputs: &[it, hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[ei],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&idx),
        initial: &[ok(oxtensor::ops::expand_dims(&h0, 0))],
        others: std::slice::from_ref(&e),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("embedding"),
    }));
    let cost = h[0].sum(None);
    let de = ok(grad(
        &cost,
        std::slice::from_ref(&e),
        &GradOptions::default(),
    ));
    let de = de[0].var().cloned().expect("dE");
    let inputs = [idx, e, h0];
    let forward = ok(function(&inputs, &h).build());
    let backward = ok(function(&inputs, &[h[0].clone(), de]).build());
    let tokens: Vec<i64> = noise(EMBED_STEPS * TOKENS, 2)
        .iter()
        .map(|v| ((v + 1.0) * 0.5 * VOCAB as f64) as i64 % VOCAB as i64)
        .collect();
    let ev = noise(VOCAB * HIDDEN, 3)
        .iter()
        .map(|v| v * 0.2)
        .collect::<Vec<f64>>();
    let args = [
        ok(Tensor::from_slice(&tokens, &[EMBED_STEPS, TOKENS])),
        ok(Tensor::from_slice(&ev, &[VOCAB, HIDDEN])),
        ok(Tensor::from_slice(&[0.0; HIDDEN], &[HIDDEN])),
    ];
    let by_hand = |with_grad: bool| {
        let mut hs = vec![0.0f64; (EMBED_STEPS + 1) * HIDDEN];
        for t in 0..EMBED_STEPS {
            for j in 0..HIDDEN {
                let sum: f64 = tokens[t * TOKENS..(t + 1) * TOKENS]
                    .iter()
                    .map(|&k| ev[k as usize * HIDDEN + j])
                    .sum();
                hs[(t + 1) * HIDDEN + j] = (0.5 * hs[t * HIDDEN + j] + sum).tanh();
            }
        }
        let mut de = Vec::new();
        if with_grad {
            de = vec![0.0f64; VOCAB * HIDDEN];
            let mut gh = vec![0.0f64; HIDDEN];
            for t in (0..EMBED_STEPS).rev() {
                for j in 0..HIDDEN {
                    let y = hs[(t + 1) * HIDDEN + j];
                    let gz = (gh[j] + 1.0) * (1.0 - y * y);
                    for &k in &tokens[t * TOKENS..(t + 1) * TOKENS] {
                        de[k as usize * HIDDEN + j] += gz;
                    }
                    gh[j] = 0.5 * gz;
                }
            }
        }
        (hs, de)
    };
    let got = ok(backward.call(&args));
    let (hs, de) = by_hand(true);
    assert!(max_diff(&got[0].to_vec_as::<f64>(), &hs[HIDDEN..]) < 1e-12);
    assert!(
        max_diff(&got[1].to_vec_as::<f64>(), &de) < 1e-9,
        "dE differs"
    );
    let ours = best(reps("SLICES_REPS", 7), || {
        black_box(ok(forward.call(&args)));
    });
    let hand = best(reps("SLICES_REPS", 7), || {
        black_box(by_hand(false));
    });
    println!(
        "embedding gather ({TOKENS} of {VOCAB}×{HIDDEN}, {EMBED_STEPS} steps)  oxtensor {:8.3} ms   by hand {:8.3} ms",
        ours * 1e3,
        hand * 1e3
    );
    let ours = best(reps("SLICES_REPS", 7), || {
        black_box(ok(backward.call(&args)));
    });
    let hand = best(reps("SLICES_REPS", 7), || {
        black_box(by_hand(true));
    });
    println!(
        "  with the gradient w.r.t. E               oxtensor {:8.3} ms   by hand {:8.3} ms",
        ours * 1e3,
        hand * 1e3
    );
}

fn main() {
    window();
    embedding();
}
