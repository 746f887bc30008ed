//! Nested loops in staged C loops (`emit::staged_host`, `staged_host::nest`): an outer loop
//! whose step runs an inner `Scan` calls the inner loop's C function from inside its own C
//! loop. Each case is checked to run every loop as a staged C loop with no loop handed to the
//! interpreter, and compared with the interpreter's step-by-step loops and a double loop by
//! hand: an AR(1) recurrence along each row carried from row to row (the inner loop reads the
//! outer non-sequence and the outer state; an elementwise inner loop), its gradients (a
//! backward loop holding a nested backward loop), an inner loop whose step count the outer
//! step computes, an inner while-loop, and an RNN over each document carried from document
//! to document (a staged inner loop), with its gradients; an inner loop whose step slices a
//! window at its own tap (bounds unknown before the outer loop), with its gradient; and a
//! triangular double loop whose inner trajectory the outer step sums and averages. A shape
//! error inside the inner loop is reported by the interpreter, naming the step.

use crate::common;

use common::both;
use common::data::Rng;
use common::staged::{
    assert_all_staged, assert_reported_by_the_interpreter, assert_staged_like, inputs_for,
    square_sum, typed, values,
};
use oxtensor::gradient::{GradOptions, VerifyGradOptions, verify_grad};
use oxtensor::{Idx, Mode, ScanSpec, function, grad, scan};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, TensorType, Var};
use oxtensor_runtime::Executable;
use oxtensor_testkit::{Tol, assert_close};

/// The last entry of `v`'s first axis.
fn last(v: &Var) -> Var {
    v.at(&[Idx::At(Var::int_constant(-1))])
}

/// One scan of `tap_inputs` (sequences' taps, states' taps, others) with tap 0 sequences and
/// tap −1 states.
#[allow(clippy::too_many_arguments)]
fn loop_of(
    tap_inputs: &[Var],
    other_inputs: &[Var],
    outputs: &[Var],
    n_mapped: usize,
    until: bool,
    n_steps: Var,
    sequences: &[Var],
    initial: &[Var],
    others: &[Var],
) -> Vec<Var> {
    scan(ScanSpec {
        tap_inputs,
        sequence_taps: vec![vec![0]; sequences.len()],
        state_taps: vec![vec![-1]; initial.len()],
        other_inputs,
        outputs,
        n_mapped,
        until,
        n_steps,
        sequences,
        initial,
        others,
        go_backwards: false,
        truncate_gradient: None,
        name: None,
    })
    .expect("scan")
}

/// An outer loop over the leading axis of `x` whose step runs an inner loop over that row,
/// from the outer state (initially `c0`), each inner step `next(x_t, h, p)` with `p` the
/// loop-invariant parameter `p0`; the inner loop's last value is the next outer state.
/// `row`, `state` and `param` are the static extents (all unknown) of the outer row, the state
/// and the parameter. Outputs: the carry and every row's trajectory.
fn carried_rows(
    x: &Var,
    p0: &Var,
    c0: &Var,
    (row, state, param): (usize, usize, usize),
    next: impl Fn(&Var, &Var, &Var) -> Var,
) -> Vec<Var> {
    let unknown = |n: usize| typed(&vec![None; n]);
    let (xr, carry, po) = (unknown(row), unknown(state), unknown(param));
    let (xt, h, pi) = (unknown(row - 1), unknown(state), unknown(param));
    let step = next(&xt, &h, &pi);
    let init = oxtensor::ops::expand_dims(&carry, 0).expect("init");
    let traj = loop_of(
        &[xt, h],
        std::slice::from_ref(&pi),
        &[step],
        0,
        false,
        Var::int_constant(-1),
        std::slice::from_ref(&xr),
        &[init],
        std::slice::from_ref(&po),
    )
    .remove(0);
    let init = oxtensor::ops::expand_dims(c0, 0).expect("init");
    loop_of(
        &[xr, carry],
        std::slice::from_ref(&po),
        &[last(&traj), traj],
        1,
        false,
        Var::int_constant(-1),
        std::slice::from_ref(x),
        &[init],
        std::slice::from_ref(p0),
    )
}

/// `y[i, j] = a · y[i, j−1] + x[i, j]`, where `y[i, −1]` is the last value of row `i − 1`
/// (`c0` for row 0): an outer loop over the rows of `x` whose step runs the AR(1) recurrence
/// along its row. Outputs: the carry (a state of the outer loop) and every row's trajectory.
fn ar_rows(x: &Var, a: &Var, c0: &Var) -> Vec<Var> {
    carried_rows(x, a, c0, (1, 0, 0), |e, y, ai| &(ai * y) + e)
}

/// [`ar_rows`] by hand: the carries and the trajectories.
fn ar_rows_by_hand(x: &Tensor, a: f64, c0: f64) -> (Vec<f64>, Vec<f64>) {
    let (m, n) = (x.shape()[0], x.shape()[1]);
    let x = x.to_vec_as::<f64>();
    let (mut carries, mut traj) = (Vec::new(), Vec::new());
    let mut y = c0;
    for i in 0..m {
        for j in 0..n {
            y = a * y + x[i * n + j];
            traj.push(y);
        }
        carries.push(y);
    }
    (carries, traj)
}

fn ar_values(seed: u64, m: usize, n: usize) -> Vec<Tensor> {
    let mut rng = Rng::new(seed);
    vec![
        values(&mut rng, &[m, n], 1.0),
        Tensor::scalar(rng.uniform(0.5, 0.95)),
        Tensor::scalar(rng.uniform(-1.0, 1.0)),
    ]
}

/// A multiply and an add per element: C may contract them into one fused multiply–add, the
/// interpreter does not; the recurrence contracts (|a| < 1), so the difference stays a few
/// rounding errors of the values' scale.
const AR_TOL: Tol = Tol::ulps(4).or_scaled(1e-13);

#[test]
fn an_inner_loop_over_each_row_runs_inside_the_outer_c_loop() {
    for (seed, (m, n)) in [(1, (6, 9)), (2, (1, 1)), (3, (17, 3))] {
        let vals = ar_values(seed, m, n);
        let inputs = inputs_for(&vals);
        let outputs = ar_rows(&inputs[0], &inputs[1], &inputs[2]);
        let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
        let what = format!("case {seed}");
        // The inner loop is the elementwise C loop, beside the outer one.
        let source = common::backend().generate(&g);
        let inner = "static int32_t ox_s0_n0(int64_t total, int64_t n,";
        assert!(source.contains(inner), "{source}");
        let in_c = assert_all_staged(&what, &g, &vals);
        let (native, interp) = both(&inputs, &outputs, &vals);
        let a = vals[1].to_vec_as::<f64>()[0];
        let c0 = vals[2].to_vec_as::<f64>()[0];
        let (carries, traj) = ar_rows_by_hand(&vals[0], a, c0);
        let hand = [
            Tensor::from_slice(&carries, &[m]).expect("hand"),
            Tensor::from_slice(&traj, &[m, n]).expect("hand"),
        ];
        for k in 0..2 {
            assert_close(&format!("{what}, output {k}"), &in_c[k], &interp[k], AR_TOL);
            assert_close(
                &format!("{what}, output {k}, native"),
                &native[k],
                &in_c[k],
                Tol::EXACT,
            );
            assert_close(
                &format!("{what}, output {k} by hand"),
                &in_c[k],
                &hand[k],
                AR_TOL,
            );
        }
        // Optimized (loop rewrites, `[-1]` kept as a ring), with the gradients: the backward
        // outer loop holds the inner loop's backward loop.
        let g = grad(&square_sum(&outputs), &inputs, &GradOptions::default()).expect("grad");
        let mut all = outputs.clone();
        all.extend(g.iter().filter_map(|g| g.var().cloned()));
        let build = |mode: Mode| function(&inputs, &all).mode(mode).build().expect("f");
        let interp = build(Mode::new("interp", "fast_run").expect("mode"));
        assert_staged_like(
            &format!("{what} with gradients"),
            build(Mode::FAST_RUN).graph(),
            &interp,
            &vals,
            AR_TOL.or_scaled(1e-12),
        );
    }
}

#[test]
fn nested_loop_gradients_pass_verify_grad() {
    let points = ar_values(5, 4, 3);
    verify_grad(
        |v| {
            let outs = ar_rows(&v[0], &v[1], &v[2]);
            Ok(square_sum(&outs))
        },
        &points,
        &VerifyGradOptions::default(),
    )
    .expect("verify_grad");
}

/// `z_i = s` after `k_i` steps of `s ← b·s + x_i` from `s = z_{i−1}`: the inner loop's step
/// count is a value of the outer step (a sequence of integers), and the outer step reads only
/// its last value.
fn counted(k: &Var, x: &Var, b: &Var, z0: &Var) -> Var {
    let (ko, xo, zo, bo) = (
        Var::input(None, TensorType::new(DType::I64, &[])),
        typed(&[]),
        typed(&[]),
        typed(&[]),
    );
    let (s, xi, bi) = (typed(&[]), typed(&[]), typed(&[]));
    let next = &(&bi * &s) + &xi;
    let init = oxtensor::ops::expand_dims(&zo, 0).expect("init");
    let inner = loop_of(
        &[s],
        &[xi, bi],
        &[next],
        0,
        false,
        ko.clone(),
        &[],
        &[init],
        &[xo.clone(), bo.clone()],
    )
    .remove(0);
    let init = oxtensor::ops::expand_dims(z0, 0).expect("init");
    loop_of(
        &[ko, xo, zo],
        std::slice::from_ref(&bo),
        &[last(&inner)],
        0,
        false,
        Var::int_constant(-1),
        &[k.clone(), x.clone()],
        &[init],
        std::slice::from_ref(b),
    )
    .remove(0)
}

#[test]
fn an_inner_step_count_computed_in_the_outer_step_runs_in_c() {
    let mut rng = Rng::new(21);
    let steps: Vec<i64> = (0..12).map(|i| 1 + (i * 7 % 5)).collect();
    let vals = vec![
        Tensor::from_slice(&steps, &[12]).expect("k"),
        values(&mut rng, &[12], 1.0),
        Tensor::scalar(0.8),
        Tensor::scalar(0.3),
    ];
    let k = Var::input(None, TensorType::new(DType::I64, &[None]));
    let (x, b, z0) = (typed(&[None]), typed(&[]), typed(&[]));
    let inputs = [k, x, b, z0];
    let z = counted(&inputs[0], &inputs[1], &inputs[2], &inputs[3]);
    let build = |mode: Mode| {
        function(&inputs, std::slice::from_ref(&z))
            .mode(mode)
            .build()
            .expect("f")
    };
    let fast = build(Mode::FAST_RUN);
    let in_c = assert_all_staged("counted", fast.graph(), &vals);
    let interp = build(Mode::new("interp", "fast_run").expect("mode"))
        .call(&vals)
        .expect("interp");
    assert_close("counted", &in_c[0], &interp[0], AR_TOL);
    let xs = vals[1].to_vec_as::<f64>();
    let mut zi = 0.3;
    let mut hand = Vec::new();
    for (i, &n) in steps.iter().enumerate() {
        for _ in 0..n {
            zi = 0.8 * zi + xs[i];
        }
        hand.push(zi);
    }
    let hand = Tensor::from_slice(&hand, &[12]).expect("hand");
    assert_close("counted by hand", &in_c[0], &hand, AR_TOL);
}

/// Per entry `x_i` of the outer sequence: halve `h` from `x_i` until `|h| < eps`, counting the
/// steps (an inner while-loop); the outer loop sums the counts.
fn halvings(x: &Var, eps: &Var) -> Var {
    let (xo, total, eo) = (typed(&[]), typed(&[]), typed(&[]));
    let (h, n, ei) = (typed(&[]), typed(&[]), typed(&[]));
    let next = &h * 0.5;
    let count = &n + 1.0;
    let stop = oxtensor::ops::lt(&next.abs(), &ei).expect("lt");
    let zero = oxtensor::ops::expand_dims(&Var::constant(Tensor::scalar(0.0)), 0).expect("zero");
    let outs = scan(ScanSpec {
        tap_inputs: &[h, n],
        sequence_taps: vec![],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: std::slice::from_ref(&ei),
        outputs: &[next, count, stop],
        n_mapped: 0,
        until: true,
        n_steps: Var::int_constant(1000),
        sequences: &[],
        initial: &[oxtensor::ops::expand_dims(&xo, 0).expect("x"), zero],
        others: std::slice::from_ref(&eo),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("halve"),
    })
    .expect("inner");
    let init = oxtensor::ops::expand_dims(&Var::constant(Tensor::scalar(0.0)), 0).expect("init");
    let summed = &total + &last(&outs[1]);
    loop_of(
        &[xo, total],
        std::slice::from_ref(&eo),
        &[summed],
        0,
        false,
        Var::int_constant(-1),
        std::slice::from_ref(x),
        &[init],
        std::slice::from_ref(eps),
    )
    .remove(0)
}

#[test]
fn an_inner_while_loop_runs_in_c() {
    let mut rng = Rng::new(4);
    let vals = vec![values(&mut rng, &[10], 100.0), Tensor::scalar(1e-3)];
    let inputs = inputs_for(&vals);
    let total = halvings(&inputs[0], &inputs[1]);
    let build = |mode: Mode| {
        function(&inputs, std::slice::from_ref(&total))
            .mode(mode)
            .build()
            .expect("f")
    };
    let in_c = assert_all_staged("halvings", build(Mode::FAST_RUN).graph(), &vals);
    let interp = build(Mode::new("interp", "fast_run").expect("mode"))
        .call(&vals)
        .expect("interp");
    // Halving and counting are exact.
    assert_close("halvings", &in_c[0], &interp[0], Tol::EXACT);
    let mut hand = Vec::new();
    let mut sum = 0.0;
    for &x in &vals[0].to_vec_as::<f64>() {
        let mut h: f64 = x;
        loop {
            h *= 0.5;
            sum += 1.0;
            if h.abs() < 1e-3 {
                break;
            }
        }
        hand.push(sum);
    }
    let hand = Tensor::from_slice(&hand, &[10]).expect("hand");
    assert_close("halvings by hand", &in_c[0], &hand, Tol::EXACT);
}

#[test]
fn a_shape_error_inside_the_inner_loop_names_the_step() {
    // The inner step adds a row of `w` to each entry's vector: rows of another length than
    // the outer sequence's fail in the inner loop's first step.
    let (row, wo) = (typed(&[None, None]), typed(&[None]));
    let (e, acc, wi) = (typed(&[None]), typed(&[None]), typed(&[None]));
    let next = &(&acc + &e) * &wi;
    let init = oxtensor::ops::expand_dims(&wo, 0).expect("init");
    let inner = loop_of(
        &[e, acc],
        std::slice::from_ref(&wi),
        &[next],
        0,
        false,
        Var::int_constant(-1),
        std::slice::from_ref(&row),
        &[init],
        std::slice::from_ref(&wo),
    )
    .remove(0);
    let x = Var::input(None, TensorType::of_rank(DType::F64, 3));
    let w = typed(&[None]);
    let out = loop_of(
        &[row],
        std::slice::from_ref(&wo),
        &[last(&inner)],
        1,
        false,
        Var::int_constant(-1),
        std::slice::from_ref(&x),
        &[],
        std::slice::from_ref(&w),
    )
    .remove(0);
    let g = FunctionGraph::new(vec![x, w], vec![out]).expect("graph");
    let mut rng = Rng::new(9);
    let good = vec![
        values(&mut rng, &[3, 4, 5], 1.0),
        values(&mut rng, &[5], 1.0),
    ];
    assert_all_staged("good shapes", &g, &good);
    let bad = vec![
        values(&mut rng, &[3, 4, 5], 1.0),
        values(&mut rng, &[6], 1.0),
    ];
    assert_reported_by_the_interpreter(&g, bad, "step 0");
}

/// An RNN over each document of `x` (documents × tokens × hidden), `h ← tanh(W h + x_t)`,
/// carried from document to document: the inner step holds a matrix product, so the inner
/// loop is a staged loop nested in the outer one. Outputs: the carry and every document's
/// trajectory.
fn rnn_documents(x: &Var, w: &Var, h0: &Var) -> Vec<Var> {
    carried_rows(x, w, h0, (2, 1, 2), |xt, hp, wi| {
        (&wi.matmul(hp) + xt).tanh()
    })
}

#[test]
fn a_staged_inner_loop_runs_inside_the_outer_c_loop() {
    let mut rng = Rng::new(31);
    let (docs, tokens, hidden) = (4, 6, 5);
    let vals = vec![
        values(&mut rng, &[docs, tokens, hidden], 1.0),
        values(&mut rng, &[hidden, hidden], 0.4),
        values(&mut rng, &[hidden], 0.5),
    ];
    let inputs = inputs_for(&vals);
    let outputs = rnn_documents(&inputs[0], &inputs[1], &inputs[2]);
    let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
    // The inner loop is a staged C function beside the outer one (it takes scratch).
    let source = common::backend().generate(&g);
    assert!(
        source.contains("static int32_t ox_s0_n0(int64_t total, const int64_t *d"),
        "{source}"
    );
    let in_c = assert_all_staged("documents", &g, &vals);
    let (_, interp) = both(&inputs, &outputs, &vals);
    // Reordered dot products and `tanh` from two math libraries.
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    for k in 0..2 {
        assert_close(&format!("output {k}"), &in_c[k], &interp[k], tol);
    }
    // By hand.
    let (x, w) = (vals[0].to_vec_as::<f64>(), vals[1].to_vec_as::<f64>());
    let mut h = vals[2].to_vec_as::<f64>();
    let mut traj: Vec<f64> = Vec::new();
    for t in 0..docs * tokens {
        h = (0..hidden)
            .map(|i| {
                let wh: f64 = (0..hidden).map(|j| w[i * hidden + j] * h[j]).sum();
                (wh + x[t * hidden + i]).tanh()
            })
            .collect();
        traj.extend(&h);
    }
    let hand = Tensor::from_slice(&traj, &[docs, tokens, hidden]).expect("hand");
    assert_close("trajectories by hand", &in_c[1], &hand, tol);
    // With the gradients: the backward loop holds the inner RNN's backward loop.
    let g = grad(&square_sum(&outputs), &inputs, &GradOptions::default()).expect("grad");
    let mut all = outputs.clone();
    all.extend(g.iter().filter_map(|g| g.var().cloned()));
    let build = |mode: Mode| function(&inputs, &all).mode(mode).build().expect("f");
    let interp = build(Mode::new("interp", "fast_run").expect("mode"));
    assert_staged_like(
        "documents with gradients",
        build(Mode::FAST_RUN).graph(),
        &interp,
        &vals,
        tol,
    );
}

/// Per row `x_t` of `x` (steps × m), an inner loop over the positions `idx + k_t` (`k` an
/// outer integer sequence, so the positions are values of the outer step) whose step sums the
/// window `x_t[i : i + 3]` of its position `i` (a tap of the inner loop): the slice's bounds
/// are not known before the outer loop. Outputs: every row's window sums, and their total.
fn window_sums(x: &Var, k: &Var, idx: &Var) -> Vec<Var> {
    let int = |shape: &[Option<usize>]| Var::input(None, TensorType::new(DType::I64, shape));
    let (xt, kt, io) = (typed(&[None]), int(&[]), int(&[None]));
    let (i, row) = (int(&[]), typed(&[None]));
    let stop = &i + &Var::int_constant(3);
    let window = row.at(&[Idx::Slice(Some(i.clone()), Some(stop), None)]);
    let sums = loop_of(
        std::slice::from_ref(&i),
        std::slice::from_ref(&row),
        &[window.sum(None)],
        1,
        false,
        Var::int_constant(-1),
        &[&io + &kt],
        &[],
        std::slice::from_ref(&xt),
    )
    .remove(0);
    let total = sums.sum(None);
    loop_of(
        &[xt, kt],
        std::slice::from_ref(&io),
        &[sums, total],
        2,
        false,
        Var::int_constant(-1),
        &[x.clone(), k.clone()],
        &[],
        std::slice::from_ref(idx),
    )
}

#[test]
fn inner_windows_whose_bounds_are_inner_taps_run_in_c() {
    let mut rng = Rng::new(23);
    let x = values(&mut rng, &[6, 9], 1.0);
    let ks: Vec<i64> = (0..6).map(|t| t % 3).collect();
    let idx = Tensor::from_slice(&[0i64, 2, 4], &[3]).expect("idx");
    let vals = vec![x, Tensor::from_slice(&ks, &[6]).expect("k"), idx];
    let k = Var::input(None, TensorType::new(DType::I64, &[None]));
    let idx = Var::input(None, TensorType::new(DType::I64, &[None]));
    let inputs = [typed(&[None, None]), k, idx];
    let outs = window_sums(&inputs[0], &inputs[1], &inputs[2]);
    let g = grad(&square_sum(&outs), &inputs[..1], &GradOptions::default()).expect("grad");
    let mut all = outs.clone();
    all.extend(g.iter().filter_map(|g| g.var().cloned()));
    let build =
        |outputs: &[Var], mode: Mode| function(&inputs, outputs).mode(mode).build().expect("f");
    let interp_mode = || Mode::new("interp", "fast_run").expect("mode");
    for (what, outputs) in [("windows", &outs), ("windows with the gradient", &all)] {
        let fast = build(outputs, Mode::FAST_RUN);
        let interp = build(outputs, interp_mode());
        assert_staged_like(what, fast.graph(), &interp, &vals, AR_TOL);
    }
    // By hand: each window sum.
    let fast = build(&outs, Mode::FAST_RUN);
    let got = fast.call(&vals).expect("call")[0].to_vec_as::<f64>();
    let xs = vals[0].to_vec_as::<f64>();
    for (t, &kt) in ks.iter().enumerate() {
        for (j, i) in [0usize, 2, 4].iter().enumerate() {
            let start = t * 9 + i + kt as usize;
            let want: f64 = xs[start..start + 3].iter().sum();
            assert!((got[t * 3 + j] - want).abs() < 1e-12, "row {t}, window {j}");
        }
    }
    // A window running past the row's end is shorter: the C loop flags the step and the
    // interpreter's loop computes it.
    let mut past = vals.clone();
    past[1] = Tensor::from_slice(&[0i64, 1, 2, 3, 4, 5], &[6]).expect("k");
    let (native, _) = common::backend()
        .compile_graph(fast.graph())
        .expect("native");
    let got = native.run(past.clone()).expect("native run");
    assert_eq!(native.interpreted_loops(), 1);
    let want = build(&outs, interp_mode()).call(&past).expect("interp");
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_close(&format!("past the end, output {k}"), g, w, AR_TOL);
    }
}

/// A triangular double loop: per entry `i` of the outer sequence, an inner loop of `i + 1`
/// steps `h ← a·h + c` from `h_0` (a state of `rank` 0 or 1), whose whole trajectory the
/// outer step sums and averages (`Σ_j h_j + mean_j h_j`, over all elements), plus `0.5·i`.
/// Outputs: those, and the sums themselves (a step output).
fn triangle(ii: &Var, h0: &Var, a: &Var, c: &Var, rank: usize) -> Vec<Var> {
    let int = |shape: &[Option<usize>]| Var::input(None, TensorType::new(DType::I64, shape));
    let (io, ho, ao, co) = (
        int(&[]),
        typed(&vec![None; rank]),
        typed(&[]),
        typed(&vec![None; rank]),
    );
    let (h, ai, ci) = (
        typed(&vec![None; rank]),
        typed(&[]),
        typed(&vec![None; rank]),
    );
    let next = &(&ai * &h) + &ci;
    let n = &io + &Var::int_constant(1);
    let init = oxtensor::ops::expand_dims(&ho, 0).expect("init");
    let traj = loop_of(
        std::slice::from_ref(&h),
        &[ai, ci],
        &[next],
        0,
        false,
        n,
        &[],
        &[init],
        &[ao.clone(), co.clone()],
    )
    .remove(0);
    let half = oxtensor::ops::cast(&io, DType::F64).expect("cast");
    let summed = &(&traj.sum(None) + &traj.mean(None)) + &(&half * 0.5);
    loop_of(
        std::slice::from_ref(&io),
        &[ho, ao, co],
        &[summed, traj.sum(None)],
        2,
        false,
        Var::int_constant(-1),
        std::slice::from_ref(ii),
        &[],
        &[h0.clone(), a.clone(), c.clone()],
    )
}

#[test]
fn a_triangular_double_loop_summing_and_averaging_the_inner_trajectory_runs_in_c() {
    let mut rng = Rng::new(24);
    for rank in [0, 1] {
        let extents = vec![3; rank];
        let ii: Vec<i64> = vec![0, 3, 1, 7, 2, 5];
        let vals = vec![
            Tensor::from_slice(&ii, &[6]).expect("ii"),
            values(&mut rng, &extents, 1.0),
            Tensor::scalar(0.9),
            values(&mut rng, &extents, 1.0),
        ];
        let ty = |r: usize| typed(&vec![None; r]);
        let inputs = [
            Var::input(None, TensorType::new(DType::I64, &[None])),
            ty(rank),
            ty(0),
            ty(rank),
        ];
        let out = triangle(&inputs[0], &inputs[1], &inputs[2], &inputs[3], rank);
        let build = |mode: Mode| function(&inputs, &out).mode(mode).build().expect("f");
        let what = format!("triangle of rank {rank}");
        let fast = build(Mode::FAST_RUN);
        let interp = build(Mode::new("interp", "fast_run").expect("mode"));
        assert_staged_like(&what, fast.graph(), &interp, &vals, AR_TOL);
        let g = FunctionGraph::new(inputs.to_vec(), out.clone()).expect("graph");
        let (native, reference) = both(&inputs, &out, &vals);
        for k in 0..2 {
            let what = format!("{what}, unoptimized, output {k}");
            assert_close(&what, &native[k], &reference[k], AR_TOL);
        }
        assert_all_staged(&format!("{what}, unoptimized"), &g, &vals);
        // By hand.
        let (h0, c) = (vals[1].to_vec_as::<f64>(), vals[3].to_vec_as::<f64>());
        let (hand, sums): (Vec<f64>, Vec<f64>) = ii
            .iter()
            .map(|&i| {
                let mut h = h0.clone();
                let mut total = 0.0;
                for _ in 0..=i {
                    for (e, ce) in h.iter_mut().zip(&c) {
                        *e = 0.9 * *e + ce;
                    }
                    total += h.iter().sum::<f64>();
                }
                let count = (i + 1) as f64 * h.len() as f64;
                (total + total / count + 0.5 * i as f64, total)
            })
            .unzip();
        let got = fast.call(&vals).expect("call");
        for (k, hand) in [hand, sums].iter().enumerate() {
            let hand = Tensor::from_slice(hand, &[6]).expect("hand");
            assert_close(
                &format!("{what} by hand, output {k}"),
                &got[k],
                &hand,
                AR_TOL,
            );
        }
        // An inner loop of no steps (an empty sum) ends the C loop; the interpreter's loop
        // computes it.
        let mut empty = vals.clone();
        empty[0] = Tensor::from_slice(&[2i64, -1, 4], &[3]).expect("ii");
        let (native, _) = common::backend()
            .compile_graph(fast.graph())
            .expect("native");
        let got = native.run(empty.clone()).expect("native run");
        assert_eq!(native.interpreted_loops(), 1);
        let want = interp.call(&empty).expect("interp");
        assert_close(
            &format!("{what}, an empty inner loop"),
            &got[0],
            &want[0],
            AR_TOL,
        );
    }
}
