//! Gathers and scatters along an axis after the first in staged C loops (`x[:, idx]`,
//! `AdvancedSubtensor1` with `axis = 1`, and its pullback, an increment of the same columns):
//! the embedding loop of `staged_stages.rs` with its table transposed, checked to run as one
//! staged C loop, forward and backward, against the interpreter's loops, the row version by
//! hand, and `verify_grad`; a token out of range is reported by the interpreter, naming the
//! loop. Gathers by index matrices (`x[I]`, `I` of rank 2, a sequence or loop-invariant) and
//! their pullbacks.

use crate::common;

use common::data::Rng;
use common::models::{Loop, Model, Step, check};
use common::staged::{
    assert_all_staged, assert_reported_by_the_interpreter, assert_staged_like, square_sum, typed,
    values,
};
use common::{both, slices};
use oxtensor::gradient::{GradOptions, VerifyGradOptions, verify_grad};
use oxtensor::{Idx, Mode, ScanSpec, function, grad, scan};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, TensorType, Var};
use oxtensor_testkit::{Tol, assert_close};

/// [`slices::embedding_step`] with the table and `G` transposed (`n × V`): `cols = E[:, idx_t]`,
/// `h ← tanh(0.5·h + Σ_k cols[:, k])`, `G[:, idx_t] += cols · h[:, None]`; `cols` is mapped.
fn column_step(inputs: &[Var]) -> Vec<Var> {
    let it = Var::input(None, TensorType::of_rank(DType::I64, 1));
    let (hp, gp, ei) = (typed(&[None]), typed(&[None, None]), typed(&[None, None]));
    let all = Idx::Slice(None, None, None);
    let cols = ei.at(&[all.clone(), Idx::At(it.clone())]);
    let next = (&(&hp * 0.5) + &cols.sum(Some(&[1]))).tanh();
    let scaled = &cols * &oxtensor::ops::expand_dims(&hp, 1).expect("h");
    let g_next =
        oxtensor::ops::inc_subtensor(&gp.at(&[all, Idx::At(it.clone())]), &scaled).expect("inc");
    scan(ScanSpec {
        tap_inputs: &[it, hp, gp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: &[ei],
        outputs: &[next, g_next, cols],
        n_mapped: 1,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: &inputs[..1],
        initial: &[
            oxtensor::ops::expand_dims(&inputs[1], 0).expect("h0"),
            oxtensor::ops::expand_dims(&inputs[2], 0).expect("G0"),
        ],
        others: &inputs[3..4],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("columns"),
    })
    .expect("scan")
}

/// [`slices::embedding_values`] with the tables transposed.
fn column_values(seed: u64, out_of_range: bool) -> Vec<Tensor> {
    let mut vals = slices::embedding_values(seed, out_of_range);
    for t in &mut vals[2..] {
        *t = t.permute(&[1, 0]).to_contiguous();
    }
    vals
}

#[test]
fn steps_that_gather_and_scatter_columns_run_as_staged_c_loops() {
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    let inputs = slices::embedding_inputs();
    let outputs = column_step(&inputs);
    let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
    let grads = grad(&square_sum(&outputs), &inputs[1..], &GradOptions::default()).expect("grad");
    let mut all = outputs.clone();
    all.extend(grads.iter().filter_map(|g| g.var().cloned()));
    let build = |mode: Mode| function(&inputs, &all).mode(mode).build().expect("f");
    let fast = build(Mode::FAST_RUN);
    let interp = build(Mode::new("interp", "fast_run").expect("mode"));
    // The loops index along axis 1, forward and backward.
    let ops: Vec<String> = fast
        .graph()
        .toposort()
        .iter()
        .filter_map(|n| match n.op() {
            Some(oxtensor_graph::Op::Scan(s)) => Some(oxtensor_graph::toposort(s.body.outputs())),
            _ => None,
        })
        .flatten()
        .filter_map(|n| n.op().map(|op| op.to_string()))
        .collect();
    for op in ["AdvancedSubtensor1{axis=1}", "AdvancedIncSubtensor1{axis=1"] {
        assert!(ops.iter().any(|o| o.starts_with(op)), "no {op} in {ops:?}");
    }
    for seed in 0..8 {
        let vals = column_values(900 + seed, false);
        let in_c = assert_all_staged(&format!("case {seed}"), &g, &vals);
        let (_, want) = both(&inputs, &outputs, &vals);
        for (k, (c, w)) in in_c.iter().zip(&want).enumerate() {
            assert_close(&format!("case {seed}, output {k}"), c, w, tol);
        }
        // `h` by hand (the row version's, whose `h` is the same).
        let hand = slices::embedding_by_hand(&slices::embedding_values(900 + seed, false));
        let h = Tensor::from_slice(&hand[0], in_c[0].shape()).expect("hand");
        assert_close(&format!("case {seed}, h by hand"), &in_c[0], &h, tol);
        assert_staged_like(
            &format!("case {seed} with gradients"),
            fast.graph(),
            &interp,
            &vals,
            tol,
        );
    }
    let vals = column_values(905, false);
    verify_grad(
        |v| {
            let mut all = vec![Var::constant(vals[0].clone())];
            all.extend(v.iter().cloned());
            Ok(square_sum(&column_step(&all)))
        },
        &vals[1..],
        &VerifyGradOptions::default(),
    )
    .expect("column gradient");
}

#[test]
fn a_column_out_of_range_is_reported_by_the_interpreter() {
    let inputs = slices::embedding_inputs();
    let g = FunctionGraph::new(inputs.clone(), column_step(&inputs)).expect("graph");
    for seed in 0..4 {
        assert_reported_by_the_interpreter(&g, column_values(950 + seed, true), "of Scan{columns}");
    }
}

/// Per step, the rows of the table `x` (V, or V × 4) at a matrix of indices (3 × 2): from the
/// sequence `I` (steps × 3 × 2) when `per_step`, else the loop-invariant `I` (3 × 2);
/// `h ← 0.5·h + tanh(Σ x[I_t] over all but the first axis)`, with `x[I_t]` mapped. Inputs
/// `I, x, h_0`.
fn matrix_gather(v: &[Var], per_step: bool) -> (Vec<Var>, Var) {
    let (sequences, others) = match per_step {
        true => (vec![&v[0]], vec![&v[1]]),
        false => (vec![], vec![&v[0], &v[1]]),
    };
    let mut lp = Loop::new("matrix-gather", &sequences, &[&v[2]], &others);
    if !per_step {
        lp.n_steps = Var::int_constant(6);
    }
    let out = lp.build(|taps, o| {
        let (idx, h, x) = match per_step {
            true => (&taps[0], &taps[1], &o[0]),
            false => (&o[0], &taps[0], &o[1]),
        };
        let rows = x.at(&[Idx::At(idx.clone())]);
        let axes: Vec<i64> = (1..rows.ndim() as i64).collect();
        Step {
            next: vec![&(h * 0.5) + &rows.sum(Some(&axes)).tanh()],
            mapped: vec![rows],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

#[test]
fn gathers_by_index_matrices_run_as_staged_c_loops() {
    let mut rng = Rng::new(40);
    for (per_step, table) in [(true, vec![10]), (false, vec![10, 4]), (true, vec![7, 4])] {
        let shape: Vec<usize> = if per_step { vec![6, 3, 2] } else { vec![3, 2] };
        let n: usize = shape.iter().product();
        let v = table[0] as i64;
        // Negative indices count from the end.
        let idx: Vec<i64> = (0..n)
            .map(|_| rng.below(2 * v as usize) as i64 - v)
            .collect();
        check(&Model {
            name: "matrix gather",
            values: vec![
                Tensor::from_slice(&idx, &shape).expect("idx"),
                values(&mut rng, &table, 1.0),
                values(&mut rng, &[3], 0.5),
            ],
            build: &|v| matrix_gather(v, per_step),
            wrt: &[1, 2],
            tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
        });
    }
}
