//! Whole loops in C for steps holding matrix products (`emit::staged`): a tanh RNN, its
//! gradient's backward loop, and random recurrences with matrix–vector, vector–matrix,
//! transposed and outer products. Each is checked to run as one staged C loop and compared
//! with the interpreter's step-by-step loop; shapes the C loop does not take reach the
//! interpreter, which reports them naming the step. Steps that reduce, read extents, stop on
//! `until` or index are in `staged_stages.rs`.

use crate::common;

use common::staged::{
    assert_all_staged, assert_reported_by_the_interpreter, inputs_for, run_in_c, square_sum,
    staged_loops, typed, values,
};

use common::data::Rng;
use common::{backend, both};
use oxtensor::gradient::{GradOptions, VerifyGradOptions, verify_grad};
use oxtensor::{Mode, ScanSpec, function, grad, scan};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, TensorType, Var};
use oxtensor_testkit::{Tol, assert_close};

/// `h[t] = tanh(W h[t-1] + x[t])` over the rows of `x` from `h0` (a vector).
fn rnn(w: &Var, x: &Var, h0: &Var) -> Var {
    let (xt, hp, wi) = (typed(&[None]), typed(&[None]), typed(&[None, None]));
    let next = (&wi.matmul(&hp) + &xt).tanh();
    let init = oxtensor::ops::expand_dims(h0, 0).expect("init");
    scan(ScanSpec {
        tap_inputs: &[xt, hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: std::slice::from_ref(&wi),
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(x),
        initial: &[init],
        others: std::slice::from_ref(w),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("rnn"),
    })
    .expect("scan")
    .remove(0)
}

#[test]
fn an_rnn_and_its_gradient_run_as_staged_c_loops() {
    let w = Var::input(Some("W"), TensorType::of_rank(DType::F64, 2));
    let x = Var::input(Some("X"), TensorType::of_rank(DType::F64, 2));
    let h0 = Var::input(Some("h0"), TensorType::of_rank(DType::F64, 1));
    let h = rnn(&w, &x, &h0);
    let cost = h.sum(None);
    let g = grad(
        &cost,
        &[w.clone(), x.clone(), h0.clone()],
        &GradOptions::default(),
    )
    .expect("grad");
    let mut outputs = vec![h];
    outputs.extend(g.iter().map(|g| g.var().expect("connected").clone()));
    let inputs = [w, x, h0];
    let mut rng = Rng::new(7);
    let (hidden, steps) = (70, 40);
    let vals = vec![
        values(&mut rng, &[hidden, hidden], 1.0 / (hidden as f64).sqrt()),
        values(&mut rng, &[steps, hidden], 1.0),
        values(&mut rng, &[hidden], 0.5),
    ];
    // The optimized graph (as `function` compiles it): both loops, forward and backward,
    // are staged C loops.
    let fast = function(&inputs, &outputs)
        .mode(Mode::FAST_RUN)
        .build()
        .expect("fast");
    let source = backend().generate(fast.graph());
    assert_eq!(staged_loops(&source), 2, "{source}");
    // The backward step adds `g hᵀ` into `dW` in place: a ring of one row.
    assert!(
        source.contains("% 1) *"),
        "dW is copied every step: {source}"
    );
    let native = fast.call(&vals).expect("native");
    assert_close(
        "in C",
        &run_in_c(fast.graph(), &vals)[0],
        &native[0],
        Tol::EXACT,
    );
    let interp = function(&inputs, &outputs)
        .mode(Mode::new("interp", "fast_run").expect("mode"))
        .build()
        .expect("interp")
        .call(&vals)
        .expect("interp run");
    // Reordered dot products, then `tanh` from two math libraries, through contracting steps.
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
        assert_close(&format!("output {k}"), n, i, tol);
    }
    // The unoptimized graph's loops too.
    let (native, interp) = both(&inputs, &outputs, &vals);
    for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
        assert_close(&format!("unoptimized output {k}"), n, i, tol);
    }
}

#[test]
fn rnn_gradients_pass_verify_grad() {
    let mut rng = Rng::new(11);
    let hidden = 5;
    let points = vec![
        values(&mut rng, &[hidden, hidden], 0.6),
        values(&mut rng, &[9, hidden], 1.0),
        values(&mut rng, &[hidden], 0.5),
    ];
    verify_grad(
        |v| {
            let h = rnn(&v[0], &v[1], &v[2]);
            Ok((&h * &h).sum(None))
        },
        &points,
        &VerifyGradOptions::default(),
    )
    .expect("rnn gradient");
}

/// The random choices of one recurrence whose step holds a product: the state `h` (a vector
/// of `n`) and, in some cases, a matrix state `S` (`n × m`) accumulating outer products.
struct Spec {
    form: usize,
    matrix_state: bool,
    backwards: bool,
}

/// A random spec and values for its inputs `w` (n × m), `x` (steps × m), `h0`, `a` and, with
/// a matrix state, `s0`.
fn random_spec(seed: u64) -> (Spec, Vec<Tensor>) {
    let mut rng = Rng::new(seed);
    let n = 1 + rng.below(9);
    let m = 1 + rng.below(9);
    let steps = 2 + rng.below(12);
    let spec = Spec {
        form: rng.below(4),
        matrix_state: rng.chance(0.5),
        backwards: rng.chance(0.5),
    };
    let init_rows = 1 + rng.below(2);
    let mut vals = vec![
        values(&mut rng, &[n, m], 1.0 / (m as f64).sqrt()),
        values(&mut rng, &[steps, m], 1.0),
        values(&mut rng, &[init_rows, n], 0.8),
        Tensor::scalar(rng.uniform(0.3, 0.9)),
    ];
    if spec.matrix_state {
        vals.push(values(&mut rng, &[1, n, m], 1.0));
    }
    (spec, vals)
}

/// The loop of `spec` on `inputs` (as [`random_spec`] lists them): its outputs.
fn case_outputs(spec: &Spec, inputs: &[Var]) -> Vec<Var> {
    let (w, x, h0, a) = (&inputs[0], &inputs[1], &inputs[2], &inputs[3]);
    let (xt, hp, sp) = (typed(&[None]), typed(&[None]), typed(&[None, None]));
    let (wi, ai) = (typed(&[None, None]), typed(&[]));
    let wt = oxtensor::ops::transpose(&wi, None).expect("transpose");
    // x's rows have m elements; the product maps them (or h) to n elements, as W·u, Wᵀ·h
    // then ·Wᵀ, u·Wᵀ, or h·W then ·Wᵀ.
    let product = match spec.form {
        0 => wi.matmul(&xt),
        1 => wt.matmul(&hp).matmul(&wt).sin(),
        2 => xt.matmul(&wt),
        _ => hp.matmul(&wi).matmul(&wt),
    };
    let next = (&(&product * &ai) + &(&hp * 0.5)).tanh();
    let mut tap_inputs = vec![xt.clone(), hp.clone()];
    let mut outputs = vec![next];
    let mut state_taps = vec![vec![-1]];
    let mut initial = vec![h0.clone()];
    if spec.matrix_state {
        // S[t] = 0.9·S[t-1] + h[t-1] ⊗ x[t] (an outer product, as a gradient's sums are).
        let col = oxtensor::ops::expand_dims(&hp, 1).expect("col");
        let row = oxtensor::ops::expand_dims(&xt, 0).expect("row");
        let next_s = &(&sp * 0.9) + &col.matmul(&row);
        tap_inputs.push(sp);
        outputs.push(next_s);
        state_taps.push(vec![-1]);
        initial.push(inputs[4].clone());
    }
    let n_states = outputs.len();
    // A mapped output reading the product.
    outputs.push(&product * 2.0);
    scan(ScanSpec {
        tap_inputs: &tap_inputs,
        sequence_taps: vec![vec![0]],
        state_taps,
        other_inputs: &[wi, ai],
        outputs: &outputs,
        n_mapped: outputs.len() - n_states,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(x),
        initial: &initial,
        others: &[w.clone(), a.clone()],
        go_backwards: spec.backwards,
        truncate_gradient: None,
        name: Some("random"),
    })
    .expect("scan")
}

#[test]
fn random_recurrences_with_products_run_as_staged_c_loops_and_match_the_interpreter() {
    for seed in 0..24 {
        let (spec, vals) = random_spec(seed);
        let inputs = inputs_for(&vals);
        let outputs = case_outputs(&spec, &inputs);
        let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
        assert_eq!(
            staged_loops(&backend().generate(&g)),
            1,
            "case {seed}: the loop is not a staged C loop"
        );
        let (native, interp) = both(&inputs, &outputs, &vals);
        assert_close("in C", &run_in_c(&g, &vals)[0], &native[0], Tol::EXACT);
        let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
        for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
            assert_close(&format!("case {seed}, output {k}"), n, i, tol);
        }
        // Optimized, with the gradient of the outputs' squares w.r.t. every input.
        let g = grad(&square_sum(&outputs), &inputs, &GradOptions::default()).expect("grad");
        let mut all = outputs.clone();
        all.extend(g.iter().filter_map(|g| g.var().cloned()));
        let run = |mode: Mode| {
            function(&inputs, &all)
                .mode(mode)
                .build()
                .expect("f")
                .call(&vals)
                .expect("run")
        };
        let native = run(Mode::FAST_RUN);
        let interp = run(Mode::new("interp", "fast_run").expect("mode"));
        for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
            assert_close(
                &format!("case {seed}, with gradients, output {k}"),
                n,
                i,
                tol,
            );
        }
        let fast = function(&inputs, &all)
            .mode(Mode::FAST_RUN)
            .build()
            .expect("fast");
        // Both loops, forward and backward (whose sums of broadcast cotangents read shapes),
        // run in C.
        let in_c = assert_all_staged(&format!("case {seed}, with gradients"), fast.graph(), &vals);
        for (k, (c, i)) in in_c.iter().zip(&interp).enumerate() {
            assert_close(
                &format!("case {seed}, with gradients in C, output {k}"),
                c,
                i,
                tol,
            );
        }
    }
}

#[test]
fn random_recurrence_gradients_pass_verify_grad() {
    for seed in 0..6 {
        let (spec, vals) = random_spec(100 + seed);
        verify_grad(
            |v| Ok(square_sum(&case_outputs(&spec, v))),
            &vals,
            &VerifyGradOptions::default(),
        )
        .unwrap_or_else(|e| panic!("case {seed}: {e}"));
    }
}

/// A matrix whose columns do not match the state's length: the C loop hands the loop to the
/// interpreter, which names the step and the inner variable as both backends do.
#[test]
fn mismatched_products_are_reported_by_the_interpreter() {
    let w = Var::input(Some("W"), TensorType::of_rank(DType::F64, 2));
    let x = Var::input(Some("X"), TensorType::of_rank(DType::F64, 2));
    let h0 = Var::input(Some("h0"), TensorType::of_rank(DType::F64, 1));
    let h = rnn(&w, &x, &h0);
    let inputs = [w, x, h0];
    let g = FunctionGraph::new(inputs.to_vec(), vec![h]).expect("graph");
    let vals = vec![
        Tensor::zeros(DType::F64, &[3, 4]).expect("W"),
        Tensor::zeros(DType::F64, &[5, 3]).expect("X"),
        Tensor::zeros(DType::F64, &[3]).expect("h0"),
    ];
    assert_reported_by_the_interpreter(&g, vals, "step 0 of Scan{rnn}");
}

/// A float32 RNN (the product helper and vectors of 16 lanes) with its gradient: staged C
/// loops, within float32 reordering tolerance of the interpreter.
#[test]
fn a_float32_rnn_runs_as_staged_c_loops() {
    let f32_input =
        |name: &str, ndim: usize| Var::input(Some(name), TensorType::of_rank(DType::F32, ndim));
    let (w, x, h0) = (f32_input("W", 2), f32_input("X", 2), f32_input("h0", 1));
    let (xt, hp, wi) = (
        Var::input(None, TensorType::new(DType::F32, &[None])),
        Var::input(None, TensorType::new(DType::F32, &[None])),
        Var::input(None, TensorType::new(DType::F32, &[None, None])),
    );
    let next = (&wi.matmul(&hp) + &xt).tanh();
    let init = oxtensor::ops::expand_dims(&h0, 0).expect("init");
    let h = scan(ScanSpec {
        tap_inputs: &[xt, hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: std::slice::from_ref(&wi),
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&x),
        initial: &[init],
        others: std::slice::from_ref(&w),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("rnn32"),
    })
    .expect("scan")
    .remove(0);
    let g = grad(
        &h.sum(None),
        std::slice::from_ref(&w),
        &GradOptions::default(),
    )
    .expect("grad");
    let outputs = vec![h, g[0].var().expect("connected").clone()];
    let inputs = [w, x, h0];
    let mut rng = Rng::new(32);
    let hidden = 70;
    let vals: Vec<Tensor> = [
        values(&mut rng, &[hidden, hidden], 1.0 / (hidden as f64).sqrt()),
        values(&mut rng, &[25, hidden], 1.0),
        values(&mut rng, &[hidden], 0.5),
    ]
    .iter()
    .map(|t| t.cast(DType::F32))
    .collect();
    assert_staged_pair_like_interpreter(
        &inputs,
        &outputs,
        &vals,
        Tol::MATH_LIBRARIES.or_scaled(1e-5),
    );
}

/// `H[t] = tanh(H[t-1] W + b)` for a batch of states (a matrix): the step's matrix·matrix
/// product with a bias and an activation is what epilogue fusion (`FusedMatMul`) takes outside
/// loops; inside a step it must stay a product the C loop runs, forward and backward.
#[test]
fn a_batched_rnn_with_a_bias_runs_as_staged_c_loops() {
    let w = Var::input(Some("W"), TensorType::of_rank(DType::F64, 2));
    let b = Var::input(Some("b"), TensorType::of_rank(DType::F64, 1));
    let h0 = Var::input(Some("H0"), TensorType::of_rank(DType::F64, 2));
    let (hp, wi, bi) = (typed(&[None, None]), typed(&[None, None]), typed(&[None]));
    let next = (&hp.matmul(&wi) + &bi).tanh();
    let init = oxtensor::ops::expand_dims(&h0, 0).expect("init");
    let h = scan(ScanSpec {
        tap_inputs: std::slice::from_ref(&hp),
        sequence_taps: vec![],
        state_taps: vec![vec![-1]],
        other_inputs: &[wi, bi],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(12),
        sequences: &[],
        initial: &[init],
        others: &[w.clone(), b.clone()],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("batched_rnn"),
    })
    .expect("scan")
    .remove(0);
    let g = grad(
        &h.sum(None),
        &[w.clone(), b.clone()],
        &GradOptions::default(),
    )
    .expect("grad");
    let mut outputs = vec![h];
    outputs.extend(g.iter().map(|g| g.var().expect("connected").clone()));
    let inputs = [w, b, h0];
    let mut rng = Rng::new(23);
    let vals = vec![
        values(&mut rng, &[6, 6], 0.4),
        values(&mut rng, &[6], 0.5),
        values(&mut rng, &[3, 6], 0.5),
    ];
    assert_staged_pair_like_interpreter(
        &inputs,
        &outputs,
        &vals,
        Tol::MATH_LIBRARIES.or_scaled(1e-12),
    );
}

/// Compiles `outputs` of `inputs` in FAST_RUN; asserts that its graph holds two staged C loops
/// (a forward loop and its gradient's backward loop) that run on `vals` with no fallback, and
/// that they agree with the interpreter's loops within `tol`.
fn assert_staged_pair_like_interpreter(inputs: &[Var], outputs: &[Var], vals: &[Tensor], tol: Tol) {
    let fast = function(inputs, outputs)
        .mode(Mode::FAST_RUN)
        .build()
        .expect("fast");
    let source = backend().generate(fast.graph());
    assert_eq!(staged_loops(&source), 2, "{source}");
    let native = run_in_c(fast.graph(), vals);
    let interp = function(inputs, outputs)
        .mode(Mode::new("interp", "fast_run").expect("mode"))
        .build()
        .expect("interp")
        .call(vals)
        .expect("interp run");
    for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
        assert_close(&format!("output {k}"), n, i, tol);
    }
}

#[test]
fn running_sums_of_products_update_in_place() {
    // `s ← s + A x_t`, read only at its last value: each step adds the product into `s`'s
    // one row in place, whatever the path the product takes (rows of `A` or its columns: `Aᵀ`
    // is read in place), and the sum is the interpreter's.
    let mut rng = Rng::new(17);
    for (transposed, n) in [(false, 6), (true, 6), (false, 70), (true, 70)] {
        let (a, x, s0) = (typed(&[None, None]), typed(&[None, None]), typed(&[None]));
        let (xt, sp, ai) = (typed(&[None]), typed(&[None]), typed(&[None, None]));
        let m = if transposed { ai.t() } else { ai.clone() };
        let next = &sp + &m.matmul(&xt);
        let out = scan(ScanSpec {
            tap_inputs: &[xt, sp],
            sequence_taps: vec![vec![0]],
            state_taps: vec![vec![-1]],
            other_inputs: std::slice::from_ref(&ai),
            outputs: &[next],
            n_mapped: 0,
            until: false,
            n_steps: Var::int_constant(-1),
            sequences: std::slice::from_ref(&x),
            initial: &[oxtensor::ops::expand_dims(&s0, 0).expect("init")],
            others: std::slice::from_ref(&a),
            go_backwards: false,
            truncate_gradient: None,
            name: Some("sums"),
        })
        .expect("scan")
        .remove(0);
        let last = out.at(&[oxtensor::Idx::int(-1)]);
        let inputs = [a, x, s0];
        let vals = vec![
            values(&mut rng, &[n, n], 1.0),
            values(&mut rng, &[9, n], 1.0),
            values(&mut rng, &[n], 1.0),
        ];
        let what = format!("transposed {transposed}, n {n}");
        let fast = function(&inputs, std::slice::from_ref(&last))
            .mode(Mode::FAST_RUN)
            .build()
            .expect("fast");
        let source = backend().generate(fast.graph());
        assert!(
            source.contains("% 1) *"),
            "{what}: the sum is copied every step: {source}"
        );
        let native = run_in_c(fast.graph(), &vals);
        let interp = function(&inputs, &[last])
            .mode(Mode::new("interp", "fast_run").expect("mode"))
            .build()
            .expect("interp")
            .call(&vals)
            .expect("interp run");
        assert_close(
            &what,
            &native[0],
            &interp[0],
            Tol::MATH_LIBRARIES.or_scaled(1e-13),
        );
    }
}
