//! Whole loops in C: a `Scan` whose step is elementwise runs as one C function. Random
//! recurrences (taps on sequences and states, mapped outputs, scalar and array non-sequences,
//! going backwards, scalar and vector steps) against the interpreter's step-by-step loop, and
//! the cases the C loop hands back to the interpreter (errors, mismatched shapes).

use crate::common;

use common::data::Rng;
use common::{backend, both};
use oxtensor::{ScanSpec, scan};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, TensorType, Var};
use oxtensor_runtime::{Backend, Interpreter};
use oxtensor_testkit::{Tol, assert_close};

fn step_value(ndim: usize, dtype: DType) -> Var {
    Var::input(None, TensorType::of_rank(dtype, ndim))
}

fn values(rng: &mut Rng, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|_| rng.uniform(-1.5, 1.5)).collect();
    Tensor::from_slice(&v, shape).expect("tensor")
}

/// Sorted distinct taps drawn from `pool` (at least one).
fn taps(rng: &mut Rng, pool: &[i64]) -> Vec<i64> {
    let mut t: Vec<i64> = pool.iter().copied().filter(|_| rng.chance(0.5)).collect();
    if t.is_empty() {
        t.push(pool[rng.below(pool.len())]);
    }
    t
}

/// A random bounded elementwise combination of `terms`.
fn combine(rng: &mut Rng, terms: &[Var]) -> Var {
    let mut acc = terms[0].clone();
    for t in &terms[1..] {
        acc = match rng.below(4) {
            0 => &acc + t,
            1 => &acc * t,
            2 => &acc - &t.sin(),
            _ => oxtensor::ops::maximum(&acc, t).expect("maximum"),
        };
    }
    acc.tanh()
}

/// The scan of one random case, its graph inputs and their values.
fn random_case(seed: u64) -> (Vec<Var>, Vec<Var>, Vec<Tensor>) {
    let mut rng = Rng::new(seed);
    let rank = rng.below(2);
    let element: Vec<usize> = (0..rank).map(|_| 1 + rng.below(6)).collect();
    let with_shape = |lead: usize| -> Vec<usize> {
        std::iter::once(lead)
            .chain(element.iter().copied())
            .collect()
    };
    let seq_taps = taps(&mut rng, &[-2, -1, 0, 1, 2]);
    let state_taps = taps(&mut rng, &[-3, -2, -1]);
    let len = 4 + rng.below(20);
    let x = Var::input(Some("x"), TensorType::of_rank(DType::F64, rank + 1));
    let h0 = Var::input(Some("h0"), TensorType::of_rank(DType::F64, rank + 1));
    let a = Var::input(Some("a"), TensorType::scalar(DType::F64));
    let w = Var::input(Some("w"), TensorType::of_rank(DType::F64, rank));
    let seq_in: Vec<Var> = seq_taps
        .iter()
        .map(|_| step_value(rank, DType::F64))
        .collect();
    let state_in: Vec<Var> = state_taps
        .iter()
        .map(|_| step_value(rank, DType::F64))
        .collect();
    let (a_in, w_in) = (step_value(0, DType::F64), step_value(rank, DType::F64));
    let mut terms: Vec<Var> = seq_in.iter().chain(&state_in).cloned().collect();
    terms.push(&w_in * 0.5);
    let mixed = combine(&mut rng, &terms);
    let next = &mixed * &a_in;
    let mapped = &(&seq_in[0] * &mixed) + &a_in;
    let n_mapped = usize::from(rng.chance(0.5));
    let outputs = [next, mapped];
    let tap_inputs: Vec<Var> = seq_in.iter().chain(&state_in).cloned().collect();
    let n_steps = if rng.chance(0.3) { 2 } else { -1 };
    let outs = scan(ScanSpec {
        tap_inputs: &tap_inputs,
        sequence_taps: vec![seq_taps],
        state_taps: vec![state_taps.clone()],
        other_inputs: &[a_in, w_in],
        outputs: &outputs[..1 + n_mapped],
        n_mapped,
        until: false,
        n_steps: Var::int_constant(n_steps),
        sequences: std::slice::from_ref(&x),
        initial: std::slice::from_ref(&h0),
        others: &[a.clone(), w.clone()],
        go_backwards: rng.chance(0.5),
        truncate_gradient: None,
        name: Some("random"),
    })
    .expect("scan");
    let init_len = state_taps[0].unsigned_abs() as usize + rng.below(2);
    let vals = vec![
        values(&mut rng, &with_shape(len)),
        values(&mut rng, &with_shape(init_len)),
        Tensor::scalar(rng.uniform(0.5, 0.99)),
        values(&mut rng, &element),
    ];
    (vec![x, h0, a, w], outs, vals)
}

#[test]
fn random_recurrences_run_as_one_c_loop_and_match_the_interpreter() {
    for seed in 0..32 {
        let (inputs, outputs, vals) = random_case(seed);
        let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
        assert!(
            backend().generate(&g).contains("ox_s"),
            "case {seed}: the loop is not compiled to C"
        );
        let (native, interp) = both(&inputs, &outputs, &vals);
        // Two math libraries' `sin`/`tanh` (scalar and vector variants) differ by a few ulp,
        // and a step feeds the difference on: values are bounded by 1 + |x|, and each step
        // contracts (|a| < 1), so it stays a few ulp of that bound.
        let tol = Tol::MATH_LIBRARIES.or_scaled(1e-13);
        for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
            assert_close(&format!("case {seed}, output {k}"), n, i, tol);
        }
        // Keeping only the last values (a ring of the rows the loop reads): the last rows.
        let marked = last_only(&outputs);
        let (native, _) = both(&inputs, &marked, &vals);
        for (k, (n, i)) in native.iter().zip(&interp).enumerate() {
            let steps = i.shape()[0];
            let last = i.view(
                &i.shape()[1..],
                &i.strides()[1..],
                (steps - 1) * i.strides()[0] as usize,
            );
            let n0 = n.view(&n.shape()[1..], &n.strides()[1..], n.offset());
            assert_eq!(n.shape()[0], 1, "case {seed}: one row kept");
            assert_close(
                &format!("case {seed}, last of {k}"),
                &n0.expect("row"),
                &last.expect("row"),
                tol,
            );
        }
    }
}

/// The outputs of the same loop, marked to keep only their last values.
fn last_only(outputs: &[Var]) -> Vec<Var> {
    let Some((oxtensor_graph::Op::Scan(s), inputs)) = outputs[0].owner() else {
        panic!("not a scan");
    };
    let marked = oxtensor_graph::Scan {
        last_only: vec![true; s.n_outputs()],
        ..oxtensor_graph::Scan::clone(s)
    };
    Var::apply(
        oxtensor_graph::Op::Scan(std::sync::Arc::new(marked)),
        inputs,
    )
    .expect("apply")
    .to_vec()
}

/// `x ← x·2` until `x > limit`, counting steps in an integer state.
#[test]
fn until_loops_and_integer_states_stop_where_the_interpreter_stops() {
    let limit = Var::input(Some("limit"), TensorType::scalar(DType::F64));
    let (x_in, k_in, lim_in) = (
        step_value(0, DType::F64),
        step_value(0, DType::I64),
        step_value(0, DType::F64),
    );
    let doubled = &x_in * 2.0;
    let stop = oxtensor::ops::gt(&doubled, &lim_in).expect("gt");
    let counted = &k_in + &Var::int_constant(1);
    let x0 = Tensor::from_slice(&[1.0f64], &[1]).expect("x0");
    let k0 = Tensor::from_slice(&[0i64], &[1]).expect("k0");
    let xi = Var::input(Some("x0"), TensorType::of_rank(DType::F64, 1));
    let ki = Var::input(Some("k0"), TensorType::of_rank(DType::I64, 1));
    let outs = scan(ScanSpec {
        tap_inputs: &[x_in, k_in],
        sequence_taps: vec![],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: &[lim_in],
        outputs: &[doubled, counted, stop],
        n_mapped: 0,
        until: true,
        n_steps: Var::int_constant(100),
        sequences: &[],
        initial: &[xi.clone(), ki.clone()],
        others: std::slice::from_ref(&limit),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("double"),
    })
    .expect("scan");
    let inputs = [limit, xi, ki];
    let g = FunctionGraph::new(inputs.to_vec(), outs.clone()).expect("graph");
    assert!(backend().generate(&g).contains("ox_s"));
    let (native, interp) = both(&inputs, &outs, &[Tensor::scalar(1000.0), x0, k0]);
    assert_eq!(native[0].shape(), &[10]);
    assert_close("x", &native[0], &interp[0], Tol::EXACT);
    assert_eq!(native[1].to_vec_as::<i64>(), (1..=10).collect::<Vec<i64>>());
}

/// What the C loop does not take reaches the interpreter, which reports it in its words.
#[test]
fn errors_in_the_loop_are_the_interpreters() {
    // An integer power with a negative exponent fails at step 2 (exponent 1 - 2 = -1).
    let (k_in, e_in) = (step_value(0, DType::I64), step_value(0, DType::I64));
    let p = oxtensor::ops::pow(&k_in, &e_in).expect("pow");
    let next = &p + &k_in;
    let e = Var::input(Some("e"), TensorType::of_rank(DType::I64, 1));
    let k0 = Var::input(Some("k0"), TensorType::of_rank(DType::I64, 1));
    let outs = scan(ScanSpec {
        tap_inputs: &[e_in, k_in],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: &[],
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(&e),
        initial: std::slice::from_ref(&k0),
        others: &[],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("pow"),
    })
    .expect("scan");
    let g = FunctionGraph::new(vec![e, k0], outs).expect("graph");
    let vals = vec![
        Tensor::from_slice(&[1i64, 0, -1, 2], &[4]).expect("e"),
        Tensor::from_slice(&[2i64], &[1]).expect("k0"),
    ];
    let native = backend().compile(&g).expect("native");
    let interp = Interpreter.compile(&g).expect("interp");
    let want = interp
        .run(vals.clone())
        .expect_err("interp fails")
        .to_string();
    let got = native.run(vals).expect_err("native fails").to_string();
    assert_eq!(got, want);
    assert!(got.contains("step 2 of Scan{pow}"), "{got}");
}
