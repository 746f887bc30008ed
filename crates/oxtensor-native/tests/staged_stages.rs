//! Whole loops in C for steps that are not products alone (`emit::staged`): steps that
//! broadcast a vector against a matrix state and reduce over axes, that read extents (a mean,
//! a reshape to another value's extents), that stop on an `until` condition, and that index
//! non-sequences by tokens or a counter (with their backward loops). Each is checked to run
//! as one staged C loop and compared with the interpreter's step-by-step loop and a loop
//! written by hand; shapes or indices the C loop does not take reach the interpreter, which
//! reports them naming the step.

use crate::common;

use common::data::Rng;
use common::slices;
use common::staged::{
    assert_all_staged, assert_reported_by_the_interpreter, assert_staged_like, inputs_for,
    square_sum, typed, values,
};
use common::{backend, both};
use oxtensor::gradient::{GradOptions, VerifyGradOptions, verify_grad};
use oxtensor::{Mode, ScanSpec, function, grad, scan};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, TensorType, Var};
use oxtensor_runtime::{Backend, Executable};
use oxtensor_testkit::{Tol, assert_close};

/// The inputs of [`reducing_step`]: `x` (steps × m), `h0` (1 × n), `S0` (1 × n × m), `a`.
fn reducing_values(seed: u64) -> Vec<Tensor> {
    let mut rng = Rng::new(seed);
    let (n, m, steps) = (1 + rng.below(7), 1 + rng.below(7), 1 + rng.below(9));
    vec![
        values(&mut rng, &[steps, m], 1.0),
        values(&mut rng, &[1, n], 0.8),
        values(&mut rng, &[1, n, m], 0.8),
        Tensor::scalar(rng.uniform(0.3, 0.9)),
    ]
}

/// A loop whose step broadcasts a vector against a matrix state and sums over its axes:
/// `S ← 0.9·S + h ⊗ x_t` (by broadcasting, not a product), then
/// `h ← tanh(0.3·a·Σ_j S + 0.2·max_j S + mean_j S)` (the mean divides by an extent the
/// step reads), with `min_i S` and `Σ S` as mapped outputs.
fn reducing_step(inputs: &[Var]) -> Vec<Var> {
    let (xt, hp, sp, ai) = (
        typed(&[None]),
        typed(&[None]),
        typed(&[None, None]),
        typed(&[]),
    );
    let col = oxtensor::ops::expand_dims(&hp, 1).expect("col");
    let row = oxtensor::ops::expand_dims(&xt, 0).expect("row");
    let s_next = &(&sp * 0.9) + &(&col * &row);
    let r = s_next.sum(Some(&[1]));
    let q = s_next.max(Some(&[1]));
    let u = s_next.mean(Some(&[1]));
    let h_next = (&(&(&(&r * &ai) * 0.3) + &(&q * 0.2)) + &u).tanh();
    let low = s_next.min(Some(&[0]));
    let total = s_next.sum(None);
    scan(ScanSpec {
        tap_inputs: &[xt, hp, sp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: &[ai],
        outputs: &[h_next, s_next, low, total],
        n_mapped: 2,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&inputs[0]),
        initial: &[inputs[1].clone(), inputs[2].clone()],
        others: std::slice::from_ref(&inputs[3]),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("reducing"),
    })
    .expect("scan")
}

/// [`reducing_step`]'s loop by hand: the trajectories of `h`, `S`, `min_i S` and `Σ S`.
fn reducing_by_hand(vals: &[Tensor]) -> Vec<Vec<f64>> {
    let x = vals[0].to_vec_as::<f64>();
    let mut h = vals[1].to_vec_as::<f64>();
    let mut s = vals[2].to_vec_as::<f64>();
    let a = vals[3].to_vec_as::<f64>()[0];
    let (steps, m, n) = (vals[0].shape()[0], vals[0].shape()[1], h.len());
    let mut out = vec![Vec::new(); 4];
    for t in 0..steps {
        for i in 0..n {
            for j in 0..m {
                s[i * m + j] = 0.9 * s[i * m + j] + h[i] * x[t * m + j];
            }
        }
        for i in 0..n {
            let row = &s[i * m..(i + 1) * m];
            let r: f64 = row.iter().sum();
            let q = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            h[i] = (0.3 * a * r + 0.2 * q + r / m as f64).tanh();
        }
        let low = (0..m).map(|j| (0..n).map(|i| s[i * m + j]).fold(f64::INFINITY, f64::min));
        out[0].extend(&h);
        out[1].extend(&s);
        out[2].extend(low);
        out[3].push(s.iter().sum());
    }
    out
}

#[test]
fn steps_that_reduce_and_broadcast_run_as_staged_c_loops() {
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    for seed in 0..16 {
        let vals = reducing_values(seed);
        let inputs = inputs_for(&vals);
        let outputs = reducing_step(&inputs);
        let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
        let in_c = assert_all_staged(&format!("case {seed}"), &g, &vals);
        let (native, interp) = both(&inputs, &outputs, &vals);
        let hand = reducing_by_hand(&vals);
        for (k, ((c, i), want)) in in_c.iter().zip(&interp).zip(&hand).enumerate() {
            assert_close(&format!("case {seed}, output {k}"), c, i, tol);
            assert_close(
                &format!("case {seed}, output {k}, native"),
                &native[k],
                i,
                tol,
            );
            let want = Tensor::from_slice(want, c.shape()).expect("hand");
            assert_close(&format!("case {seed}, output {k} by hand"), c, &want, tol);
        }
        // Optimized, with the gradients: the backward step sums broadcast cotangents back
        // (reductions over the broadcast axes) and reads the extents it allocates.
        let g = grad(&square_sum(&outputs), &inputs, &GradOptions::default()).expect("grad");
        let mut all = outputs.clone();
        all.extend(g.iter().filter_map(|g| g.var().cloned()));
        let build = |mode: Mode| function(&inputs, &all).mode(mode).build().expect("f");
        let fast = build(Mode::FAST_RUN);
        let interp = build(Mode::new("interp", "fast_run").expect("mode"));
        assert_staged_like(
            &format!("case {seed} with gradients"),
            fast.graph(),
            &interp,
            &vals,
            tol,
        );
    }
}

#[test]
fn gradients_through_reducing_steps_pass_verify_grad() {
    for seed in 0..4 {
        let vals = reducing_values(200 + seed);
        verify_grad(
            |v| Ok(square_sum(&reducing_step(v))),
            &vals,
            &VerifyGradOptions::default(),
        )
        .unwrap_or_else(|e| panic!("case {seed}: {e}"));
    }
}

/// `h ← tanh(W h + b)` until `Σ|h_new − h| < tol`, at most `limit` steps: a while-loop whose
/// step is not elementwise (a product and a reduction), with `max h` as a mapped output.
fn fixed_point(inputs: &[Var], limit: i64) -> Vec<Var> {
    let (hp, wi, bi, ti) = (
        typed(&[None]),
        typed(&[None, None]),
        typed(&[None]),
        typed(&[]),
    );
    let next = (&wi.matmul(&hp) + &bi).tanh();
    let change = (&next - &hp).abs().sum(None);
    let stop = oxtensor::ops::lt(&change, &ti).expect("lt");
    let top = next.max(None);
    let init = oxtensor::ops::expand_dims(&inputs[1], 0).expect("init");
    scan(ScanSpec {
        tap_inputs: &[hp],
        sequence_taps: vec![],
        state_taps: vec![vec![-1]],
        other_inputs: &[wi, bi, ti],
        outputs: &[next, top, stop],
        n_mapped: 1,
        until: true,
        n_steps: Var::int_constant(limit),
        sequences: &[],
        initial: &[init],
        others: &[inputs[0].clone(), inputs[2].clone(), inputs[3].clone()],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("fixed_point"),
    })
    .expect("scan")
}

/// [`fixed_point`]'s loop by hand: the trajectory of `h` and of `max h`.
fn fixed_point_by_hand(vals: &[Tensor], limit: usize) -> (Vec<f64>, Vec<f64>) {
    let w = vals[0].to_vec_as::<f64>();
    let mut h = vals[1].to_vec_as::<f64>();
    let b = vals[2].to_vec_as::<f64>();
    let tol = vals[3].to_vec_as::<f64>()[0];
    let n = h.len();
    let (mut traj, mut tops) = (Vec::new(), Vec::new());
    for _ in 0..limit {
        let next: Vec<f64> = (0..n)
            .map(|i| ((0..n).map(|k| w[i * n + k] * h[k]).sum::<f64>() + b[i]).tanh())
            .collect();
        let change: f64 = next.iter().zip(&h).map(|(a, b)| (a - b).abs()).sum();
        traj.extend(&next);
        tops.push(next.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        h = next;
        if change < tol {
            break;
        }
    }
    (traj, tops)
}

#[test]
fn until_loops_with_staged_steps_stop_where_the_interpreter_stops() {
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    for seed in 0..12 {
        let mut rng = Rng::new(300 + seed);
        let n = 1 + rng.below(8);
        let limit = 1 + rng.below(60);
        let vals = vec![
            values(&mut rng, &[n, n], 0.5 / n as f64),
            values(&mut rng, &[n], 1.0),
            values(&mut rng, &[n], 1.0),
            Tensor::scalar(10f64.powf(-rng.uniform(2.0, 9.0))),
        ];
        let inputs = inputs_for(&vals);
        let outputs = fixed_point(&inputs, limit as i64);
        let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
        let in_c = assert_all_staged(&format!("case {seed}"), &g, &vals);
        let (_, interp) = both(&inputs, &outputs, &vals);
        let (traj, tops) = fixed_point_by_hand(&vals, limit);
        let steps = tops.len();
        assert_eq!(
            in_c[0].shape(),
            &[steps, n],
            "case {seed}: the trajectory's length"
        );
        let hand = [
            Tensor::from_slice(&traj, &[steps, n]).expect("h"),
            Tensor::from_slice(&tops, &[steps]).expect("tops"),
        ];
        for (k, ((c, i), want)) in in_c.iter().zip(&interp).zip(&hand).enumerate() {
            assert_close(&format!("case {seed}, output {k}"), c, i, tol);
            assert_close(&format!("case {seed}, output {k} by hand"), c, want, tol);
        }
        // Only the last value kept (a ring buffer): the same last row.
        let last: Vec<Var> = outputs
            .iter()
            .map(|o| o.at(&[oxtensor::Idx::At(Var::int_constant(-1))]))
            .collect();
        let fast = function(&inputs, &last)
            .mode(Mode::FAST_RUN)
            .build()
            .expect("fast");
        let in_c = assert_all_staged(&format!("case {seed}, last"), fast.graph(), &vals);
        let want = Tensor::from_slice(&traj[(steps - 1) * n..], &[n]).expect("last");
        assert_close(&format!("case {seed}, last h"), &in_c[0], &want, tol);
    }
}

/// `v ← tanh(0.5 · V ∘ W + 0.1) + mean_i V`, flattened, where `V` is `v` seen as a matrix of
/// `W`'s extents (a reshape to extents the step reads) and the mean divides by one of them.
fn reshaping_step(inputs: &[Var]) -> Vec<Var> {
    let (vp, wi) = (typed(&[None]), typed(&[None, None]));
    let dims = [
        oxtensor::ops::shape_i(&wi, 0).expect("rows"),
        oxtensor::ops::shape_i(&wi, 1).expect("columns"),
    ];
    let vm = oxtensor::ops::reshape_sym(&vp, &dims).expect("reshape");
    let next = &(&(&(&vm * &wi) * 0.5) + 0.1).tanh() + &vm.mean(Some(&[0]));
    let next = next.reshape(&[-1]);
    scan(ScanSpec {
        tap_inputs: &[vp],
        sequence_taps: vec![],
        state_taps: vec![vec![-1]],
        other_inputs: &[wi],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(5),
        sequences: &[],
        initial: &[oxtensor::ops::expand_dims(&inputs[1], 0).expect("init")],
        others: std::slice::from_ref(&inputs[0]),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("reshaping"),
    })
    .expect("scan")
}

#[test]
fn steps_that_read_extents_run_as_staged_c_loops() {
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    for seed in 0..8 {
        let mut rng = Rng::new(400 + seed);
        let (n, m) = (1 + rng.below(6), 1 + rng.below(6));
        let vals = vec![
            values(&mut rng, &[n, m], 1.0),
            values(&mut rng, &[n * m], 1.0),
        ];
        let inputs = inputs_for(&vals);
        let outputs = reshaping_step(&inputs);
        let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
        let in_c = assert_all_staged(&format!("case {seed}"), &g, &vals);
        let (_, interp) = both(&inputs, &outputs, &vals);
        assert_close(&format!("case {seed}"), &in_c[0], &interp[0], tol);
        // By hand.
        let w = vals[0].to_vec_as::<f64>();
        let mut v = vals[1].to_vec_as::<f64>();
        let mut traj: Vec<f64> = Vec::new();
        for _ in 0..5 {
            let mean: Vec<f64> = (0..m)
                .map(|j| (0..n).map(|i| v[i * m + j]).sum::<f64>() / n as f64)
                .collect();
            v = (0..n * m)
                .map(|e| (0.5 * v[e] * w[e] + 0.1).tanh() + mean[e % m])
                .collect();
            traj.extend(&v);
        }
        let want = Tensor::from_slice(&traj, &[5, n * m]).expect("hand");
        assert_close(&format!("case {seed} by hand"), &in_c[0], &want, tol);
        // Optimized, with the gradient w.r.t. both inputs.
        let g = grad(&square_sum(&outputs), &inputs, &GradOptions::default()).expect("grad");
        let mut all = outputs.clone();
        all.extend(g.iter().filter_map(|g| g.var().cloned()));
        let build = |mode: Mode| function(&inputs, &all).mode(mode).build().expect("f");
        let interp = build(Mode::new("interp", "fast_run").expect("mode"));
        assert_staged_like(
            &format!("case {seed} with gradients"),
            build(Mode::FAST_RUN).graph(),
            &interp,
            &vals,
            tol,
        );
    }
    verify_grad(
        |v| Ok(square_sum(&reshaping_step(v))),
        &[
            values(&mut Rng::new(5), &[2, 3], 1.0),
            values(&mut Rng::new(6), &[6], 1.0),
        ],
        &VerifyGradOptions::default(),
    )
    .expect("reshaping gradient");
}

/// A state whose length is not the product of `W`'s extents: the reshape fails inside the
/// loop, and the native backend reports the interpreter's words.
#[test]
fn a_reshape_that_does_not_fit_is_reported_by_the_interpreter() {
    let vals = vec![
        Tensor::zeros(DType::F64, &[2, 3]).expect("W"),
        Tensor::zeros(DType::F64, &[5]).expect("v"),
    ];
    let inputs = inputs_for(&vals);
    let g = FunctionGraph::new(inputs.clone(), reshaping_step(&inputs)).expect("graph");
    assert_reported_by_the_interpreter(&g, vals, "step 0 of Scan{reshaping}");
}

/// `h ← tanh(0.5·h + E[tok_t] + F[k])`, `k ← k + 1`: a non-sequence indexed by a sequence of
/// tokens (negative ones count from the end) and another by a counter state, with `Σ E[tok_t]`
/// as a mapped output.
fn indexing_step(inputs: &[Var]) -> Vec<Var> {
    let tok = Var::input(None, TensorType::scalar(DType::I64));
    let k = Var::input(None, TensorType::scalar(DType::I64));
    let (hp, ei, fi) = (typed(&[None]), typed(&[None, None]), typed(&[None, None]));
    let row = ei.at(&[oxtensor::Idx::At(tok.clone())]);
    let next = (&(&(&hp * 0.5) + &row) + &fi.at(&[oxtensor::Idx::At(k.clone())])).tanh();
    let counted = &k + &Var::int_constant(1);
    let k0 = Tensor::from_slice(&[0i64], &[1]).expect("k0");
    scan(ScanSpec {
        tap_inputs: &[tok, hp, k],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: &[ei, fi],
        outputs: &[next, counted, row.sum(None)],
        n_mapped: 1,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&inputs[0]),
        initial: &[
            oxtensor::ops::expand_dims(&inputs[1], 0).expect("h0"),
            Var::constant(k0),
        ],
        others: &[inputs[2].clone(), inputs[3].clone()],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("indexing"),
    })
    .expect("scan")
}

/// Values for [`indexing_step`]: tokens in `[-V, V)` (or one out of range), `h0`, `E`
/// (V × n) and `F` (steps × n).
fn indexing_values(seed: u64, out_of_range: bool) -> Vec<Tensor> {
    let mut rng = Rng::new(seed);
    let (vocab, n, steps) = (1 + rng.below(6), 1 + rng.below(6), 1 + rng.below(9));
    let mut tokens: Vec<i64> = (0..steps)
        .map(|_| rng.below(2 * vocab) as i64 - vocab as i64)
        .collect();
    if out_of_range {
        tokens[steps - 1] = vocab as i64;
    }
    vec![
        Tensor::from_slice(&tokens, &[steps]).expect("tokens"),
        values(&mut rng, &[n], 1.0),
        values(&mut rng, &[vocab, n], 1.0),
        values(&mut rng, &[steps, n], 1.0),
    ]
}

#[test]
fn steps_that_index_non_sequences_run_as_staged_c_loops() {
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    for seed in 0..12 {
        let vals = indexing_values(500 + seed, false);
        let inputs = vec![
            Var::input(None, TensorType::of_rank(DType::I64, 1)),
            Var::input(None, TensorType::of_rank(DType::F64, 1)),
            Var::input(None, TensorType::of_rank(DType::F64, 2)),
            Var::input(None, TensorType::of_rank(DType::F64, 2)),
        ];
        let outputs = indexing_step(&inputs);
        let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
        let in_c = assert_all_staged(&format!("case {seed}"), &g, &vals);
        let (_, interp) = both(&inputs, &outputs, &vals);
        for (k, (c, i)) in in_c.iter().zip(&interp).enumerate() {
            assert_close(&format!("case {seed}, output {k}"), c, i, tol);
        }
        // By hand.
        let tokens = vals[0].to_vec_as::<i64>();
        let mut h = vals[1].to_vec_as::<f64>();
        let (e, f) = (vals[2].to_vec_as::<f64>(), vals[3].to_vec_as::<f64>());
        let (vocab, n) = (vals[2].shape()[0] as i64, h.len());
        let (mut traj, mut sums): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
        for (t, &tok) in tokens.iter().enumerate() {
            let r = tok.rem_euclid(vocab) as usize;
            let row = &e[r * n..(r + 1) * n];
            h = (0..n)
                .map(|i| (0.5 * h[i] + row[i] + f[t * n + i]).tanh())
                .collect();
            traj.extend(&h);
            sums.push(row.iter().sum::<f64>());
        }
        let steps = tokens.len();
        let want = Tensor::from_slice(&traj, &[steps, n]).expect("h");
        assert_close(&format!("case {seed}, h by hand"), &in_c[0], &want, tol);
        let want = Tensor::from_slice(&sums, &[steps]).expect("sums");
        assert_close(&format!("case {seed}, sums by hand"), &in_c[2], &want, tol);
        // Optimized, with the gradients w.r.t. the float inputs: the backward step adds each
        // step's cotangent into the rows read (`IncSubtensor`), also in C.
        let cost = square_sum(&[outputs[0].clone(), outputs[2].clone()]);
        let g = grad(&cost, &inputs[1..], &GradOptions::default()).expect("grad");
        let mut all = outputs.clone();
        all.extend(g.iter().filter_map(|g| g.var().cloned()));
        let build = |mode: Mode| function(&inputs, &all).mode(mode).build().expect("f");
        let fast = build(Mode::FAST_RUN);
        let source = backend().generate(fast.graph());
        assert!(
            source.contains("[off + ") && source.contains("] += v"),
            "no row increment in C: {source}"
        );
        let interp = build(Mode::new("interp", "fast_run").expect("mode"));
        assert_staged_like(
            &format!("case {seed} with gradients"),
            fast.graph(),
            &interp,
            &vals,
            tol,
        );
    }
    let vals = indexing_values(7, false);
    verify_grad(
        |v| {
            let tokens = Var::constant(vals[0].clone());
            let mut all = vec![tokens];
            all.extend(v.iter().cloned());
            Ok(square_sum(&indexing_step(&all)[..1]))
        },
        &vals[1..],
        &VerifyGradOptions::default(),
    )
    .expect("indexing gradient");
}

/// A token out of range: the C loop hands the loop to the interpreter, which reports the
/// index error naming the step.
#[test]
fn an_index_out_of_range_is_reported_by_the_interpreter() {
    let vals = indexing_values(9, true);
    let inputs = vec![
        Var::input(None, TensorType::of_rank(DType::I64, 1)),
        Var::input(None, TensorType::of_rank(DType::F64, 1)),
        Var::input(None, TensorType::of_rank(DType::F64, 2)),
        Var::input(None, TensorType::of_rank(DType::F64, 2)),
    ];
    let g = FunctionGraph::new(inputs.clone(), indexing_step(&inputs)).expect("graph");
    assert_reported_by_the_interpreter(&g, vals, "of Scan{indexing}");
}

/// A float32 loop that broadcasts and reduces (sums accumulate in `double` per element,
/// as the native reduction kernels do): staged, within float32 tolerance of the interpreter.
#[test]
fn a_float32_reducing_step_runs_as_a_staged_c_loop() {
    let f32_typed = |shape: &[Option<usize>]| Var::input(None, TensorType::new(DType::F32, shape));
    let (xt, hp, sp) = (
        f32_typed(&[None]),
        f32_typed(&[None]),
        f32_typed(&[None, None]),
    );
    let col = oxtensor::ops::expand_dims(&hp, 1).expect("col");
    let row = oxtensor::ops::expand_dims(&xt, 0).expect("row");
    let s_next = &(&sp * 0.5) + &(&col * &row);
    let h_next = (&s_next.sum(Some(&[1])) + &s_next.max(Some(&[1]))).tanh();
    let mut rng = Rng::new(32);
    let vals: Vec<Tensor> = [
        values(&mut rng, &[12, 9], 1.0),
        values(&mut rng, &[1, 7], 0.8),
        values(&mut rng, &[1, 7, 9], 0.8),
    ]
    .iter()
    .map(|t| t.cast(DType::F32))
    .collect();
    let inputs: Vec<Var> = vals
        .iter()
        .map(|v| Var::input(None, TensorType::of_rank(DType::F32, v.shape().len())))
        .collect();
    let outputs = scan(ScanSpec {
        tap_inputs: &[xt, hp, sp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: &[],
        outputs: &[h_next, s_next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&inputs[0]),
        initial: &[inputs[1].clone(), inputs[2].clone()],
        others: &[],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("reducing32"),
    })
    .expect("scan");
    let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
    let in_c = assert_all_staged("float32", &g, &vals);
    let (_, interp) = both(&inputs, &outputs, &vals);
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-5);
    for (k, (c, i)) in in_c.iter().zip(&interp).enumerate() {
        assert_eq!(c.dtype(), DType::F32);
        assert_close(&format!("output {k}"), c, i, tol);
    }
}

/// A matrix state with more rows than the vector state: the broadcast sum does not fit, and
/// the native backend reports the interpreter's words, naming the step.
#[test]
fn a_broadcast_that_does_not_fit_is_reported_by_the_interpreter() {
    let mut vals = reducing_values(3);
    let (n, m) = (vals[1].shape()[1], vals[0].shape()[1]);
    vals[2] = Tensor::zeros(DType::F64, &[1, n + 1, m]).expect("S0");
    let inputs = inputs_for(&vals);
    let g = FunctionGraph::new(inputs.clone(), reducing_step(&inputs)).expect("graph");
    assert_reported_by_the_interpreter(&g, vals, "step 0 of Scan{reducing}");
}

/// Sliding windows over a non-sequence with bounds from sequences and shape arithmetic
/// (negative ones too), slices of a loop-invariant bound clamped from anywhere in
/// `[-r-3, r+3]`, a reversed matrix and a negative constant step: every loop staged where
/// its slices keep their lengths (and no slice is empty), equal to the interpreter and to a
/// loop by hand; then with the gradients (the backward step increments the slices).
#[test]
fn steps_that_slice_run_as_staged_c_loops() {
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    let inputs = slices::windowing_inputs();
    let outputs = slices::windowing_step(&inputs);
    let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
    let cost = square_sum(&outputs);
    let wrt = &inputs[2..6];
    let grads = grad(&cost, wrt, &GradOptions::default()).expect("grad");
    let mut all = outputs.clone();
    all.extend(grads.iter().filter_map(|g| g.var().cloned()));
    let build = |mode: Mode| function(&inputs, &all).mode(mode).build().expect("f");
    let fast = build(Mode::FAST_RUN);
    let interp = build(Mode::new("interp", "fast_run").expect("mode"));
    let mut staged = 0;
    for seed in 0..12 {
        let vals = slices::windowing_values(700 + seed, slices::Bounds::Inside);
        let r = vals[2].shape()[1] as i64;
        let lo = vals[6].to_vec_as::<i64>()[0];
        // `M[lo:]` or `M[lo::-2]` empty: the C loop does not take it (no empty values).
        let empty = slices::positions(r as usize, Some(lo), None, 1).is_empty()
            || slices::positions(r as usize, Some(lo), None, -2).is_empty();
        let (native, want) = both(&inputs, &outputs, &vals);
        let hand = slices::windowing_by_hand(&vals);
        slices::assert_like_interpreter_and_hand(seed, &native, &want, &hand, tol);
        if empty {
            let (exec, _) = backend().compile_graph(&g).expect("native");
            exec.run(vals.clone()).expect("native");
            assert_eq!(exec.interpreted_loops(), 1, "case {seed}");
            continue;
        }
        staged += 1;
        assert_all_staged(&format!("case {seed}"), &g, &vals);
        assert_staged_like(
            &format!("case {seed} with gradients"),
            fast.graph(),
            &interp,
            &vals,
            tol,
        );
    }
    assert!(staged >= 8, "only {staged} staged cases");
    let vals = slices::windowing_values(703, slices::Bounds::Inside);
    verify_grad(
        |v| {
            let mut all = vec![
                Var::constant(vals[0].clone()),
                Var::constant(vals[1].clone()),
            ];
            all.extend(v.iter().cloned());
            all.push(Var::constant(vals[6].clone()));
            all.push(Var::constant(vals[7].clone()));
            Ok(square_sum(&slices::windowing_step(&all)))
        },
        &vals[2..6],
        &VerifyGradOptions::default(),
    )
    .expect("windowing gradient");
}

/// A window that runs past the end of `x` or starts before it at a later step: its length
/// differs from step 0's, which the C loop cannot decide before the loop, so it hands the
/// loop to the interpreter's, which gives its result (a window of one element broadcasts) or
/// reports the mismatched shapes naming the step.
#[test]
fn a_window_of_another_length_goes_to_the_interpreter() {
    let inputs = slices::windowing_inputs();
    let g = FunctionGraph::new(inputs.clone(), slices::windowing_step(&inputs)).expect("graph");
    let (native, _) = backend().compile_graph(&g).expect("native");
    let interp = oxtensor_runtime::Interpreter.compile(&g).expect("interp");
    for seed in 0..6 {
        let vals = slices::windowing_values(800 + seed, slices::Bounds::Outside);
        let before = native.interpreted_loops();
        match (native.run(vals.clone()), interp.run(vals)) {
            (Ok(got), Ok(want)) => {
                for (k, (c, i)) in got.iter().zip(&want).enumerate() {
                    assert_close(&format!("case {seed}, output {k}"), c, i, Tol::EXACT);
                }
            }
            (Err(got), Err(want)) => {
                assert_eq!(got.to_string(), want.to_string());
                assert!(got.to_string().contains("of Scan{windowing}"), "{got}");
            }
            (got, want) => panic!("case {seed}: native {got:?}, interpreter {want:?}"),
        }
        assert_eq!(native.interpreted_loops(), before + 1, "case {seed}");
    }
}

/// An embedding lookup `E[idx_t]` by a vector of token ids per step and a scatter-add of
/// rows into a state (repeated tokens accumulate): staged, equal to the interpreter and to a
/// loop by hand, and with the gradients (a scatter-add into the running `dE`).
#[test]
fn steps_that_gather_and_scatter_rows_run_as_staged_c_loops() {
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    let inputs = slices::embedding_inputs();
    let outputs = slices::embedding_step(&inputs);
    let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
    let cost = square_sum(&outputs);
    let grads = grad(&cost, &inputs[1..], &GradOptions::default()).expect("grad");
    let mut all = outputs.clone();
    all.extend(grads.iter().filter_map(|g| g.var().cloned()));
    let build = |mode: Mode| function(&inputs, &all).mode(mode).build().expect("f");
    let fast = build(Mode::FAST_RUN);
    let interp = build(Mode::new("interp", "fast_run").expect("mode"));
    // The backward loop's running `dE` keeps one row, which the scatter-add updates in place.
    let source = backend().generate(fast.graph());
    assert!(
        source.contains("+ ((t + 0) % 1) * d[") && source.contains("+ ((t + 1) % 1) * d["),
        "no in-place running sum: {source}"
    );
    for seed in 0..12 {
        let vals = slices::embedding_values(900 + seed, false);
        let in_c = assert_all_staged(&format!("case {seed}"), &g, &vals);
        let (_, want) = both(&inputs, &outputs, &vals);
        let hand = slices::embedding_by_hand(&vals);
        slices::assert_like_interpreter_and_hand(seed, &in_c, &want, &hand, tol);
        assert_staged_like(
            &format!("case {seed} with gradients"),
            fast.graph(),
            &interp,
            &vals,
            tol,
        );
    }
    let vals = slices::embedding_values(905, false);
    verify_grad(
        |v| {
            let mut all = vec![Var::constant(vals[0].clone())];
            all.extend(v.iter().cloned());
            Ok(square_sum(&slices::embedding_step(&all)))
        },
        &vals[1..],
        &VerifyGradOptions::default(),
    )
    .expect("embedding gradient");
}

/// A token out of range (past the end, or before the start counting from the end) at a
/// later step: the interpreter reports the index error naming the step.
#[test]
fn a_token_out_of_range_is_reported_by_the_interpreter() {
    let inputs = slices::embedding_inputs();
    let g = FunctionGraph::new(inputs.clone(), slices::embedding_step(&inputs)).expect("graph");
    for seed in 0..4 {
        let vals = slices::embedding_values(950 + seed, true);
        assert_reported_by_the_interpreter(&g, vals, "of Scan{embedding}");
    }
}

/// `G ← G` with `G[idx_t]` set to `2·E[idx_t]` (`AdvancedSetSubtensor1`; with repeated tokens
/// the last write wins, as in the interpreter): staged, equal to the interpreter and to a
/// loop by hand.
#[test]
fn steps_that_set_rows_run_as_staged_c_loops() {
    let inputs = vec![
        Var::input(None, TensorType::of_rank(DType::I64, 2)),
        Var::input(None, TensorType::of_rank(DType::F64, 2)),
        Var::input(None, TensorType::of_rank(DType::F64, 2)),
    ];
    let it = Var::input(None, TensorType::of_rank(DType::I64, 1));
    let (gp, ei) = (typed(&[None, None]), typed(&[None, None]));
    let rows = &ei.at(&[oxtensor::Idx::At(it.clone())]) * 2.0;
    let next =
        oxtensor::ops::set_subtensor(&gp.at(&[oxtensor::Idx::At(it.clone())]), &rows).expect("set");
    let outputs = scan(ScanSpec {
        tap_inputs: &[it, gp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[ei],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: &inputs[..1],
        initial: &[oxtensor::ops::expand_dims(&inputs[1], 0).expect("G0")],
        others: &inputs[2..3],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("setting"),
    })
    .expect("scan");
    let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
    for seed in 0..6 {
        let vals = slices::embedding_values(1000 + seed, false);
        let vals = vec![vals[0].clone(), vals[2].clone(), vals[3].clone()];
        let in_c = assert_all_staged(&format!("case {seed}"), &g, &vals);
        let (_, want) = both(&inputs, &outputs, &vals);
        assert_close(&format!("case {seed}"), &in_c[0], &want[0], Tol::EXACT);
        let (tokens, m) = (vals[0].to_vec_as::<i64>(), vals[0].shape()[1]);
        let mut gv = vals[1].to_vec_as::<f64>();
        let e = vals[2].to_vec_as::<f64>();
        let (vocab, n) = (vals[2].shape()[0] as i64, vals[2].shape()[1]);
        let mut traj: Vec<f64> = Vec::new();
        for step in tokens.chunks(m) {
            for &t in step {
                let i = t.rem_euclid(vocab) as usize;
                for j in 0..n {
                    gv[i * n + j] = 2.0 * e[i * n + j];
                }
            }
            traj.extend(&gv);
        }
        let hand = Tensor::from_slice(&traj, want[0].shape()).expect("by hand");
        assert_close(&format!("case {seed} by hand"), &in_c[0], &hand, Tol::EXACT);
    }
}
