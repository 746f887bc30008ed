//! Branches (`ifelse`) and subroutines (`OpFromGraph`) inside a loop step lowered into the
//! staged C loop: random branching steps agree with the interpreter, with their gradients,
//! and call nothing back; the branch not taken is not computed (an index it would read out of
//! range is no error); branches whose extents differ at run time still give the
//! interpreter's values; a branch holding a node C cannot lower is called back.

use crate::common;
use common::backend;
use common::data::Rng;
use common::models::{Loop, Model, Step, check, inputs_of};
use common::staged::{square_sum, values};
use oxtensor::ops::{self, Idx};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, Op, OpFromGraph, TensorType, Var, ifelse};
use oxtensor_runtime::{Backend, Executable, Interpreter};
use oxtensor_testkit::{Tol, assert_close};
use std::sync::Arc;

/// Asserts that no loop of `g` (as the native backend generates it) calls back into the
/// executor, and that some loop branches in C.
fn assert_branches_in_c(what: &str, g: &FunctionGraph) {
    let source = backend().generate(g);
    assert!(!source.contains("host(hctx"), "{what}: a step calls back");
    assert!(source.contains("    if (v"), "{what}: no branch in C");
}

/// `zero` of the dtype of `x`, as a 0-d constant.
fn zero(x: &Var) -> Var {
    Var::scalar_constant(0.0, x.dtype())
}

/// One side of a random branch on state `x`, sequence row `y` and other value `w` (a
/// matrix): a pick among an affine update, the state itself, a matrix–vector product, a
/// reduction broadcast back, and a nested branch.
fn side(rng: &mut Rng, depth: usize, x: &Var, y: &Var, w: &Var) -> Var {
    match rng.below(if depth > 0 { 4 } else { 5 }) {
        0 => x * rng.uniform(0.3, 0.9) + y,
        1 => x.clone(),
        2 => ops::matmul(w, x).expect("matmul").tanh() + y,
        3 => x * &x.sum(None).tanh() - y,
        _ => {
            let c = ops::lt(&y.sum(None), &zero(y)).expect("lt");
            let (a, b) = (side(rng, 1, x, y, w), side(rng, 1, x, y, w));
            ifelse(&c, &[a], &[b]).expect("ifelse").remove(0)
        }
    }
}

/// A loop of two states whose step picks both next values with one `ifelse` on a condition
/// that changes from step to step (the sign of a sequence element or of the state's sum),
/// the sides drawn by `seed`. Inputs `y` (steps × n), `x_0`, `z_0`, `w` (n × n).
fn random_branching(seed: u64) -> impl Fn(&[Var]) -> (Vec<Var>, Var) {
    move |v: &[Var]| {
        let mut rng = Rng::new(seed);
        let lp = Loop::new("branching", &[&v[0]], &[&v[1], &v[2]], &[&v[3]]);
        let out = lp.build(|taps, o| {
            let (y, x, z, w) = (&taps[0], &taps[1], &taps[2], &o[0]);
            let c = match rng.below(2) {
                0 => ops::gt(&y.sum(None), &zero(y)).expect("gt"),
                _ => ops::gt(&x.sum(None), &z.sum(None)).expect("gt"),
            };
            let then = [side(&mut rng, 0, x, y, w), side(&mut rng, 0, z, y, w)];
            let other = [side(&mut rng, 0, x, y, w), z * 0.5];
            let next = ifelse(&c, &then, &other).expect("ifelse");
            let mapped = &next[0] * &next[1];
            Step {
                next,
                mapped: vec![mapped],
                until: None,
            }
        });
        let cost = square_sum(&out);
        (out, cost)
    }
}

#[test]
fn random_branching_steps_run_in_c_and_agree_with_the_interpreter() {
    for seed in 0..10 {
        let mut rng = Rng::new(100 + seed);
        let (steps, n) = (5 + rng.below(20), 1 + rng.below(5));
        let vals = vec![
            values(&mut rng, &[steps, n], 1.0),
            values(&mut rng, &[n], 0.5),
            values(&mut rng, &[n], 0.5),
            values(&mut rng, &[n, n], 0.4),
        ];
        let build = random_branching(seed);
        let inputs = inputs_of(&vals);
        let (outputs, _) = build(&inputs);
        let g = FunctionGraph::new(inputs, outputs).expect("graph");
        assert_branches_in_c(&format!("seed {seed}"), &g);
        check(&Model {
            name: "random branching",
            values: vals,
            build: &build,
            wrt: &[0, 1, 2, 3],
            tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
        });
    }
}

/// `x ← ifelse(Σx > 0, 0.5·x + y_t, x − y_t)` and, mapped, `f(x)` for the subroutine
/// `f(u) = sin(u)·u + a`. Inputs `y` (steps × n), `x_0`, `a`.
fn branch_and_subroutine(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("branch", &[&v[0]], &[&v[1]], &[&v[2]]);
    let out = lp.build(|taps, o| {
        let (y, x, a) = (&taps[0], &taps[1], &o[0]);
        let up = ops::gt(&x.sum(None), &zero(x)).expect("gt");
        let next = ifelse(&up, &[x * 0.5 + y], &[x - y])
            .expect("ifelse")
            .remove(0);
        let (u, b) = (
            Var::input(None, x.ty().clone()),
            Var::input(None, a.ty().clone()),
        );
        let sub = OpFromGraph::new(&[u.clone(), b.clone()], &[&(u.sin() * &u) + &b], Some("f"))
            .expect("subroutine");
        let mapped =
            Var::apply1(Op::OpFromGraph(Arc::new(sub)), &[next.clone(), a.clone()]).expect("call");
        Step {
            next: vec![next],
            mapped: vec![mapped],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

#[test]
fn a_branch_and_a_subroutine_are_lowered_into_the_step() {
    let mut rng = Rng::new(7);
    let vals = vec![
        values(&mut rng, &[30, 8], 1.0),
        values(&mut rng, &[8], 0.5),
        values(&mut rng, &[8], 0.3),
    ];
    let inputs = inputs_of(&vals);
    let (outputs, _) = branch_and_subroutine(&inputs);
    let g = FunctionGraph::new(inputs, outputs).expect("graph");
    assert_branches_in_c("branch and subroutine", &g);
    check(&Model {
        name: "branch and subroutine",
        values: vals,
        build: &branch_and_subroutine,
        wrt: &[0, 1, 2],
        tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
    });
}

/// Runs `g` natively and in the interpreter on `vals`; gives the native outputs, the
/// interpreter's and how many loops the native run handed to the interpreter's loop.
fn both(g: &FunctionGraph, vals: &[Tensor]) -> (Vec<Tensor>, Vec<Tensor>, usize) {
    let (exec, _) = backend().compile_graph(g).expect("native compile");
    let got = exec.run(vals.to_vec()).expect("native run");
    let want = Interpreter
        .compile(g)
        .expect("interp")
        .run(vals.to_vec())
        .expect("interp run");
    (got, want, exec.interpreted_loops())
}

#[test]
fn the_branch_not_taken_is_not_computed() {
    // `s ← s + (k_t < n ? x[k_t] : -1)`: `k_t` runs past the end of `x`, where only the
    // other branch is taken.
    let x = Var::input(None, TensorType::of_rank(DType::F64, 1));
    let k = Var::input(None, TensorType::of_rank(DType::I64, 1));
    let s0 = Var::input(None, TensorType::of_rank(DType::F64, 0));
    let lp = Loop::new("guarded", &[&k], &[&s0], &[&x]);
    let out = lp.build(|taps, o| {
        let (k, s, x) = (&taps[0], &taps[1], &o[0]);
        let n = ops::shape_i(x, 0).expect("shape");
        let inside = ops::lt(k, &n).expect("lt");
        let read = x.at(&[Idx::At(k.clone())]);
        let picked = ifelse(&inside, &[read], &[Var::scalar_constant(-1.0, s.dtype())])
            .expect("ifelse")
            .remove(0);
        Step {
            next: vec![s + &picked],
            mapped: Vec::new(),
            until: None,
        }
    });
    let g = FunctionGraph::new(vec![x, k, s0], out).expect("graph");
    assert_branches_in_c("guarded index", &g);
    let vals = vec![
        Tensor::from_slice(&[1.5, 2.0, 4.0], &[3]).expect("x"),
        Tensor::from_slice(&[0i64, 2, 3, 7, 1, 100], &[6]).expect("k"),
        Tensor::from_slice(&[0.0], &[]).expect("s0"),
    ];
    let (got, want, fell_back) = both(&g, &vals);
    assert_eq!(fell_back, 0, "the guarded loop fell back");
    let expect = Tensor::from_slice(&[1.5, 5.5, 4.5, 3.5, 5.5, 4.5], &[6]).expect("sums");
    assert_close("guarded index", &got[0], &expect, Tol::EXACT);
    assert_close("guarded index, interpreter", &want[0], &expect, Tol::EXACT);
}

#[test]
fn branches_of_different_extents_give_the_interpreters_values() {
    // `s ← s + Σ(c_t ? x[:2] : x)`: the sides' extents differ, so the loop cannot be laid
    // out before it runs.
    let x = Var::input(None, TensorType::of_rank(DType::F64, 1));
    let c = Var::input(None, TensorType::of_rank(DType::F64, 1));
    let s0 = Var::input(None, TensorType::of_rank(DType::F64, 0));
    let lp = Loop::new("ragged", &[&c], &[&s0], &[&x]);
    let out = lp.build(|taps, o| {
        let (c, s, x) = (&taps[0], &taps[1], &o[0]);
        let head = x.at(&[Idx::range(None, Some(2), None)]);
        let up = ops::gt(c, &zero(c)).expect("gt");
        let picked = ifelse(&up, &[head], std::slice::from_ref(x))
            .expect("ifelse")
            .remove(0);
        Step {
            next: vec![s + &picked.sum(None)],
            mapped: Vec::new(),
            until: None,
        }
    });
    let g = FunctionGraph::new(vec![x, c, s0], out).expect("graph");
    let vals = vec![
        Tensor::from_slice(&[1.0, 2.0, 4.0], &[3]).expect("x"),
        Tensor::from_slice(&[1.0, -1.0, 1.0], &[3]).expect("c"),
        Tensor::from_slice(&[0.0], &[]).expect("s0"),
    ];
    let (got, want, _) = both(&g, &vals);
    let expect = Tensor::from_slice(&[3.0, 10.0, 13.0], &[3]).expect("sums");
    assert_close("ragged branches", &got[0], &expect, Tol::EXACT);
    assert_close(
        "ragged branches, interpreter",
        &want[0],
        &expect,
        Tol::EXACT,
    );
}

#[test]
fn a_branch_c_cannot_lower_is_called_back() {
    // `s ← s + (k_t > 2 ? Σ arange(k_t) : 0)`: a range of a step's length has no stage, so the
    // branch runs the interpreter's compiled bodies from the C loop.
    let k = Var::input(None, TensorType::of_rank(DType::I64, 1));
    let s0 = Var::input(None, TensorType::of_rank(DType::I64, 0));
    let lp = Loop::new("ranged", &[&k], &[&s0], &[]);
    let out = lp.build(|taps, _| {
        let (k, s) = (&taps[0], &taps[1]);
        let big = ops::gt(k, &Var::scalar_constant(2.0, k.dtype())).expect("gt");
        let total = ops::arange(&Var::int_constant(0), k, &Var::int_constant(1), DType::I64)
            .expect("arange")
            .sum(None);
        let picked = ifelse(&big, &[total], &[Var::scalar_constant(0.0, k.dtype())])
            .expect("ifelse")
            .remove(0);
        Step {
            next: vec![s + &picked],
            mapped: Vec::new(),
            until: None,
        }
    });
    let g = FunctionGraph::new(vec![k, s0], out).expect("graph");
    let source = backend().generate(&g);
    assert!(
        source.contains("host(hctx"),
        "the branch is not called back"
    );
    let vals = vec![
        Tensor::from_slice(&[1i64, 4, 2, 5], &[4]).expect("k"),
        Tensor::from_slice(&[0i64], &[]).expect("s0"),
    ];
    let (got, want, fell_back) = both(&g, &vals);
    assert_eq!(fell_back, 0, "the loop fell back");
    let expect = Tensor::from_slice(&[0i64, 6, 6, 16], &[4]).expect("sums");
    assert_close("called back", &got[0], &expect, Tol::EXACT);
    assert_close("called back, interpreter", &want[0], &expect, Tol::EXACT);
}
