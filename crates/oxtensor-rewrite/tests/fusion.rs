//! The `fusion` pass (groups, shared intermediates, constants, idempotence, linear cost) and
//! the stabilizations added with it (`log1mexp`, `logaddexp`): expected graphs, equal values,
//! and correct values at extreme inputs against references computed here.

#[allow(dead_code)]
#[path = "rewrite/common.rs"]
mod common;

use common::*;
use oxtensor_data::Tensor;
use oxtensor_graph::build as b;
use oxtensor_graph::{Op, ScalarOp, Var, toposort};
use oxtensor_rewrite::Optimizer;
use oxtensor_rewrite::rules::{FOLD, STABILIZE, USELESS, fuse};
use std::f64::consts::LN_2;

fn stabilize(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS, STABILIZE]).0
}

fn vec_of(values: &[f64]) -> Tensor {
    Tensor::from_slice(values, &[values.len()]).unwrap()
}

/// The ops of the graph of `outs`, outer nodes only.
fn outer_ops(outs: &[Var]) -> Vec<Op> {
    toposort(outs)
        .iter()
        .filter_map(|n| n.op().cloned())
        .collect()
}

fn fused(outs: &[Var]) -> Vec<Var> {
    fuse(outs).unwrap_or_else(|e| panic!("{e}")).0
}

/// A float64 constant of `ndim` extent-1 dimensions (what the rules build).
fn cst(value: f64, ndim: usize) -> Var {
    Var::constant(Tensor::scalar(value).reshape(&vec![1; ndim]).unwrap())
}

#[test]
fn log1mexp_graphs() {
    let x = vector("x");
    let c = cst(-LN_2, 1);
    let low = b::minimum(&x, &c).unwrap();
    let near = b::log1p(&b::neg(&b::exp(&low).unwrap()).unwrap()).unwrap();
    let far = b::log(&b::neg(&b::expm1(&x).unwrap()).unwrap()).unwrap();
    let want = b::switch(&b::lt(&x, &c).unwrap(), &near, &far).unwrap();
    assert_same(&stabilize(&(1.0 - x.exp()).log()), &want);
    assert_same(&stabilize(&(-x.exp()).log1p()), &want);
    // The stabilized form is a fixpoint: its own log1p(-exp(min(x, -ln 2))) is left alone.
    assert_same(&stabilize(&want), &want);
}

#[test]
fn log1mexp_values_at_extremes() {
    let x = vector("x");
    let xs = [-1e-300, -1000.0, -50.0, -1.0, -LN_2, -0.1, 0.0];
    // References: log(1 - e^x) = log(-x) + O(x) for tiny x, -e^x + O(e^2x) for very negative x,
    // and the f64 formula where it is accurate (1 - e^x neither cancels nor rounds to 1).
    let want = [
        (1e-300f64).ln(),
        -(-1000f64).exp(),
        -(-50f64).exp(),
        (1.0 - (-1f64).exp()).ln(),
        (0.5f64).ln(),
        (-(-0.1f64).exp_m1()).ln(),
        f64::NEG_INFINITY,
    ];
    for out in [(1.0 - x.exp()).log(), (-x.exp()).log1p()] {
        let got = eval1(std::slice::from_ref(&x), &fast_run(&out), &[vec_of(&xs)]);
        assert_close(&got, &want, 1e-15);
        let naive = eval1(std::slice::from_ref(&x), &out, &[vec_of(&xs)]);
        // Both naive forms round 1 - e^x to 0 at x = -1e-300.
        assert!(naive[0].is_infinite(), "{naive:?}");
    }
}

#[test]
fn logaddexp_graph() {
    let (a, bv) = (vector("a"), vector("b"));
    let gap = b::neg(&b::abs(&b::sub(&a, &bv).unwrap()).unwrap()).unwrap();
    let general = b::add(&b::maximum(&a, &bv).unwrap(), &b::softplus(&gap).unwrap()).unwrap();
    let equal = b::add(&a, &cst(LN_2, 1)).unwrap();
    let want = b::switch(&b::eq(&a, &bv).unwrap(), &equal, &general).unwrap();
    assert_same(&stabilize(&(a.exp() + bv.exp()).log()), &want);
}

#[test]
fn logaddexp_values_at_extremes() {
    let (a, bv) = (vector("a"), vector("b"));
    let out = (a.exp() + bv.exp()).log();
    let inf = f64::INFINITY;
    let av = [1000.0, -1000.0, 1000.0, -1000.0, inf, -inf, inf, 0.0, 1.5];
    let bvv = [1000.0, -1000.0, -1000.0, 1000.0, inf, -inf, -inf, 0.0, -0.5];
    // References: max(a, b) + log1p(exp(-|a - b|)) where a != b, a + ln 2 where a == b.
    let want: Vec<f64> = av
        .iter()
        .zip(&bvv)
        .map(|(&p, &q)| {
            if p == q {
                p + LN_2
            } else {
                p.max(q) + (-(p - q).abs()).exp().ln_1p()
            }
        })
        .collect();
    assert_eq!(want[5], -inf);
    let inputs = [a.clone(), bv.clone()];
    let got = eval1(&inputs, &fast_run(&out), &[vec_of(&av), vec_of(&bvv)]);
    assert_close(&got, &want, 1e-15);
    let naive = eval1(&inputs, &out, &[vec_of(&av), vec_of(&bvv)]);
    assert!(
        naive[0].is_infinite() && naive[1].is_infinite(),
        "{naive:?}"
    );
}

#[test]
fn fusion_builds_one_composite_with_inner_constants_and_deduplicated_inputs() {
    let (x, y) = (matrix("x"), matrix("y"));
    let out = (-(&x * &x)).exp() * y.sin() + (&x * &y).abs().log1p() + 2.0;
    let outs = fused(std::slice::from_ref(&out));
    let ops = outer_ops(&outs);
    assert_eq!(ops.len(), 1, "{}", show(&outs[0]));
    let Op::Composite(g) = &ops[0] else {
        panic!("{}", show(&outs[0]))
    };
    // Two placeholders (x and y, each once), the constant 2 inside.
    assert_eq!(g.input_types().len(), 2);
    assert!(show(&outs[0]).contains("2.0"), "{}", show(&outs[0]));
    let args = [
        random_tensor(&[3, 5], -2.0, 2.0, 1),
        random_tensor(&[3, 5], -2.0, 2.0, 2),
    ];
    let inputs = [x, y];
    assert_close(
        &eval1(&inputs, &outs[0], &args),
        &eval1(&inputs, &out, &args),
        0.0,
    );
}

#[test]
fn single_nodes_and_shared_intermediates() {
    let x = vector("x");
    // A lone elementwise node stays an Elemwise.
    let e = x.exp();
    assert_eq!(fused(std::slice::from_ref(&e)), vec![e.clone()]);
    // exp(x) has two users in different groups (and is an output): it is computed once.
    let outs = fused(&[(&e + 1.0).sin(), e.clone(), &e * 3.0]);
    let exps: usize = toposort(&outs)
        .iter()
        .map(|n| match n.op() {
            Some(Op::Elemwise(ScalarOp::Exp)) => 1,
            Some(Op::Composite(g)) => toposort(g.outputs())
                .iter()
                .filter(|m| m.op() == Some(&Op::Elemwise(ScalarOp::Exp)))
                .count(),
            _ => 0,
        })
        .sum();
    assert_eq!(exps, 1);
}

#[test]
fn fusion_is_idempotent_and_inlines_nested_composites() {
    let (x, y) = (vector("x"), vector("y"));
    let inner = (&x * &y).tanh().exp();
    let once = fused(std::slice::from_ref(&inner));
    assert_eq!(fused(&once), once);
    // A Composite used by elementwise nodes is inlined into one larger Composite.
    let outer = (&once[0] + &x).sqrt().log1p();
    let twice = fused(std::slice::from_ref(&outer));
    assert_eq!(outer_ops(&twice).len(), 1);
    let args = [
        random_tensor(&[7], 0.0, 2.0, 3),
        random_tensor(&[7], 0.0, 2.0, 4),
    ];
    let inputs = [x, y];
    assert_close(
        &eval1(&inputs, &twice[0], &args),
        &eval1(&inputs, &outer, &args),
        0.0,
    );
    // The whole pipeline is a fixpoint on its own result.
    let (r1, _) = optimize(std::slice::from_ref(&outer), &Optimizer::FAST_RUN);
    let (r2, _) = optimize(&r1, &Optimizer::FAST_RUN);
    assert_eq!(r1, r2);
}

#[test]
fn fusion_is_selected_by_tags() {
    let x = vector("x");
    let out = x.exp().sin();
    let (on, report) = optimize(std::slice::from_ref(&out), &Optimizer::FAST_RUN);
    assert!(matches!(outer_ops(&on)[..], [Op::Composite(_)]));
    assert_eq!(report.hits("elemwise_fusion"), 1);
    for opt in [
        Optimizer::FAST_RUN.excluding(&["fusion"]),
        Optimizer::FAST_COMPILE,
    ] {
        let (off, _) = optimize(std::slice::from_ref(&out), &opt);
        assert_eq!(outer_ops(&off).len(), 2);
    }
}

#[test]
fn long_chains_fuse_into_one_node() {
    let x = vector("x");
    let mut acc = x.clone();
    for i in 0..3000 {
        acc = if i % 2 == 0 { acc.sin() } else { &acc * &x };
    }
    let outs = fused(std::slice::from_ref(&acc));
    assert_eq!(outer_ops(&outs).len(), 1);
}

/// A user-built Composite over `x` (and `y`) whose inner graph is `body(i0, i1)`.
fn user_composite(body: impl Fn(&Var, &Var) -> Var, x: &Var, y: &Var) -> Var {
    let (i0, i1) = (
        Var::input(None, oxtensor_graph::TensorType::scalar(x.dtype())),
        Var::input(None, oxtensor_graph::TensorType::scalar(y.dtype())),
    );
    let out = body(&i0, &i1);
    b::composite(&[i0, i1], &[out], &[x.clone(), y.clone()]).unwrap()[0].clone()
}

/// The scalar ops inside the Composites of the graph of `outs`.
fn inner_ops(outs: &[Var]) -> Vec<ScalarOp> {
    let mut ops = Vec::new();
    for n in toposort(outs) {
        if let Some(Op::Composite(g)) = n.op() {
            for m in toposort(g.outputs()) {
                if let Some(Op::Elemwise(s)) = m.op() {
                    ops.push(*s);
                }
            }
        }
    }
    ops
}

#[test]
fn inner_graphs_of_composites_are_rewritten() {
    let (x, y) = (vector("x"), vector("y"));
    let c = user_composite(|a, b| (1.0 + a).log() * b, &x, &y);
    assert!(!inner_ops(std::slice::from_ref(&c)).contains(&ScalarOp::Log1p));
    let (got, report) = optimize(std::slice::from_ref(&c), &Optimizer::FAST_RUN);
    assert!(report.hits("log1p_from_log") >= 1, "{report}");
    assert!(
        matches!(outer_ops(&got)[..], [Op::Composite(_)]),
        "{}",
        show(&got[0])
    );
    let ops = inner_ops(&got);
    assert!(ops.contains(&ScalarOp::Log1p), "{ops:?}");
    assert!(!ops.contains(&ScalarOp::Log), "{ops:?}");
    // Same inputs, same values.
    assert_eq!(got[0].node().inputs(), c.node().inputs());
    let args = [
        random_tensor(&[9], 0.0, 3.0, 11),
        random_tensor(&[9], -2.0, 2.0, 12),
    ];
    let inputs = [x.clone(), y.clone()];
    assert_close(
        &eval1(&inputs, &got[0], &args),
        &eval1(&inputs, &c, &args),
        1e-15,
    );
    // The result is a fixpoint.
    let (again, _) = optimize(&got, &Optimizer::FAST_RUN);
    assert_eq!(again, got);
    // FAST_COMPILE's rules (useless + folding) leave the stabilization alone.
    let (fc, _) = optimize(std::slice::from_ref(&c), &Optimizer::FAST_COMPILE);
    assert!(inner_ops(&fc).contains(&ScalarOp::Log));
}

#[test]
fn canonical_inner_graphs_keep_their_composite() {
    let (x, y) = (vector("x"), vector("y"));
    let c = user_composite(|a, b| (a * b).sin(), &x, &y);
    let (got, report) = optimize(std::slice::from_ref(&c), &Optimizer::FAST_RUN);
    assert_eq!(report.total_hits(), 0, "{report}");
    assert_eq!(got[0], c, "{}", show(&got[0]));
    assert!(std::sync::Arc::ptr_eq(got[0].node(), c.node()));
}

/// Counts of (apply nodes, Composites, outer Exp nodes, Exp nodes inside Composites).
fn census(outs: &[Var]) -> (usize, usize, usize, usize) {
    let order = toposort(outs);
    let comps = order
        .iter()
        .filter(|n| matches!(n.op(), Some(Op::Composite(_))))
        .count();
    let outer_exp = order
        .iter()
        .filter(|n| n.op() == Some(&Op::Elemwise(ScalarOp::Exp)))
        .count();
    let inner_exp = inner_ops(outs)
        .iter()
        .filter(|s| **s == ScalarOp::Exp)
        .count();
    (order.len(), comps, outer_exp, inner_exp)
}

#[test]
fn shared_elementwise_values_are_extra_outputs_of_one_composite() {
    let (x, y) = (vector("x"), vector("y"));
    let a = x.exp();
    let bb = &a * &y;
    let outs = [bb.sin(), &a + 1.0];
    let (got, report) = optimize(&outs, &Optimizer::FAST_RUN);
    let (nodes, comps, outer_exp, inner_exp) = census(&got);
    assert_eq!(
        (comps, outer_exp, inner_exp),
        (1, 0, 1),
        "{report}\n{}",
        show(&got[0])
    );
    // One Composite computing [sin(exp(x) * y), exp(x) + 1]: the add, which reads the
    // exported exp(x), is merged into the group.
    assert_eq!(nodes, 1, "{}\n{}", show(&got[0]), show(&got[1]));
    let comp = toposort(&got)
        .into_iter()
        .find(|n| matches!(n.op(), Some(Op::Composite(_))))
        .unwrap();
    assert_eq!(comp.types().len(), 2);
    let args = [
        random_tensor(&[13], -2.0, 2.0, 21),
        random_tensor(&[13], -2.0, 2.0, 22),
    ];
    let inputs = [x.clone(), y.clone()];
    let (plain, _) = optimize(&outs, &Optimizer::FAST_COMPILE);
    let want = eval(&inputs, &plain, &args);
    let have = eval(&inputs, &got, &args);
    for (h, w) in have.iter().zip(&want) {
        assert_close(&h.to_vec_as::<f64>(), &w.to_vec_as::<f64>(), 1e-12);
    }
    // Fusion is idempotent on the multi-output result.
    assert_eq!(fused(&got), got);
}

#[test]
fn extra_outputs_never_make_cycles() {
    let (x, y) = (vector("x"), vector("y"));
    // exp(x)'s outside user (a reduction) feeds back into the group: exp(x) stays on its own.
    let a = x.exp();
    let s = b::sum(&a, None, false).unwrap();
    let out = (&a * &y + &s).sin();
    let got = fused(std::slice::from_ref(&out));
    let (_, _, outer_exp, inner_exp) = census(&got);
    assert_eq!((outer_exp, inner_exp), (1, 0), "{}", show(&got[0]));
    let args = [
        random_tensor(&[5], -1.0, 1.0, 31),
        random_tensor(&[5], -1.0, 1.0, 32),
    ];
    let inputs = [x.clone(), y.clone()];
    assert_close(
        &eval1(&inputs, &got[0], &args),
        &eval1(&inputs, &out, &args),
        1e-12,
    );
}

#[test]
fn sibling_groups_merge_into_one_multi_output_composite() {
    let (x, y) = (vector("x"), vector("y"));
    // Two groups with no path between them, both reading x and y.
    let outs = [(x.exp() * &y).log1p(), x.sin() + &y];
    let got = fused(&outs);
    let nodes = toposort(&got);
    assert_eq!(nodes.len(), 1, "{}", show(&got[0]));
    assert!(matches!(nodes[0].op(), Some(Op::Composite(_))));
    assert_eq!(nodes[0].types().len(), 2);
    assert!(std::sync::Arc::ptr_eq(got[0].node(), got[1].node()));
    let inputs = [x.clone(), y.clone()];
    let args = [
        random_tensor(&[17], -2.0, 2.0, 41),
        random_tensor(&[17], -2.0, 2.0, 42),
    ];
    let want = eval(&inputs, &outs, &args);
    let have = eval(&inputs, &got, &args);
    for (h, w) in have.iter().zip(&want) {
        assert_close(&h.to_vec_as::<f64>(), &w.to_vec_as::<f64>(), 0.0);
    }
    assert_eq!(fused(&got), got);
}

#[test]
fn siblings_stay_apart_without_equal_extents_or_when_a_path_joins_them() {
    let (x, y) = (vector("x"), vector("y"));
    // exp(x) and sin(y): nothing says x and y have one length.
    let got = fused(&[x.exp(), y.sin()]);
    assert_eq!(
        outer_ops(&got),
        [Op::Elemwise(ScalarOp::Exp), Op::Elemwise(ScalarOp::Sin)]
    );
    // sum(exp(x)) and sin(x): exp(x) is read only by the reduction, which backends fuse with
    // it; a second output would make them store it.
    let got = fused(&[b::sum(&x.exp(), None, false).unwrap(), x.sin()]);
    assert_eq!(census(&got).1, 0, "{}", show(&got[0]));
    // exp(x) and sin(x) + sum(exp(x)) share x, but the sum leads from one to the other.
    let a = x.exp();
    let s = b::sum(&a, None, false).unwrap();
    let other = x.sin() + &s;
    let outs = [a.clone(), other];
    let got = fused(&outs);
    let (_, comps, outer_exp, inner_exp) = census(&got);
    assert_eq!(
        (comps, outer_exp, inner_exp),
        (1, 1, 0),
        "{}",
        show(&got[1])
    );
    let args = [random_tensor(&[6], -1.0, 1.0, 43)];
    let inputs = [x.clone()];
    let want = eval(&inputs, &outs, &args);
    let have = eval(&inputs, &got, &args);
    for (h, w) in have.iter().zip(&want) {
        assert_close(&h.to_vec_as::<f64>(), &w.to_vec_as::<f64>(), 1e-15);
    }
}

/// Per inner graph of the graph of `outs` (loop steps, branches, subroutine bodies, nested
/// ones too, not Composites' programs): its ops.
fn body_ops(outs: &[Var]) -> Vec<Vec<Op>> {
    let mut found = Vec::new();
    for node in toposort(outs) {
        let bodies: Vec<_> = node.op().map(Op::tensor_bodies).unwrap_or_default();
        for body in bodies {
            found.push(outer_ops(body.outputs()));
            found.extend(body_ops(body.outputs()));
        }
    }
    found
}

/// `h[t] = exp(-h[t-1]) * a + x[t]` over the rows of `x` from `h0`, the step's values a
/// vector; with `nested`, the step adds the last value of an inner loop of the same form
/// over `x[t]`'s entries.
fn decay_loop(x: &Var, h0: &Var, a: &Var, nested: bool) -> Var {
    use oxtensor_graph::{ScanSpec, scan};
    let (xt, hp, ai) = (vector("xt"), vector("hp"), vector("ai"));
    let mut next = (-&hp).exp() * &ai + &xt;
    if nested {
        let (e, c) = (input("e", &[]), input("c", &[]));
        let inner = scan(ScanSpec {
            tap_inputs: &[e.clone(), c.clone()],
            sequence_taps: vec![vec![0]],
            state_taps: vec![vec![-1]],
            other_inputs: &[],
            outputs: &[(-(&c * &c)).exp() * 0.5 + &e],
            n_mapped: 0,
            until: false,
            n_steps: Var::int_constant(-1),
            sequences: std::slice::from_ref(&xt),
            initial: &[b::expand_dims(&Var::constant(Tensor::scalar(0.0)), 0).unwrap()],
            others: &[],
            go_backwards: false,
            truncate_gradient: None,
            name: Some("inner"),
        })
        .unwrap()
        .remove(0);
        next = next + b::subtensor(&inner, &[b::Idx::int(-1)]).unwrap();
    }
    scan(ScanSpec {
        tap_inputs: &[xt.clone(), hp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1]],
        other_inputs: std::slice::from_ref(&ai),
        outputs: &[next],
        n_mapped: 0,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: std::slice::from_ref(x),
        initial: &[b::expand_dims(h0, 0).unwrap()],
        others: std::slice::from_ref(a),
        go_backwards: false,
        truncate_gradient: None,
        name: Some("decay"),
    })
    .unwrap()
    .remove(0)
}

#[test]
fn fusion_runs_inside_loops_branches_and_subroutines() {
    use oxtensor_graph::{OpFromGraph, ifelse};
    let (x, h0, a, c) = (matrix("x"), vector("h0"), vector("a"), input("c", &[]));
    // Over another matrix: two loops over one sequence would be merged into one.
    let x2 = matrix("x2");
    let looped = decay_loop(&x, &h0, &a, false);
    let nested = decay_loop(&x2, &h0, &a, true);
    let branch = ifelse(
        &c,
        &[(h0.exp() * 2.0 + 1.0).sin()],
        &[(&a * &a).log1p() - 1.0],
    )
    .unwrap()
    .remove(0);
    let u = vector("u");
    let sub = OpFromGraph::new(
        std::slice::from_ref(&u),
        &[u.sin() * u.cos() + &u],
        Some("sub"),
    )
    .unwrap();
    let called = Var::apply1(
        Op::OpFromGraph(std::sync::Arc::new(sub)),
        std::slice::from_ref(&a),
    )
    .unwrap();
    let outs = [looped, nested, branch, called];
    let (fast, report) = optimize(&outs, &Optimizer::FAST_RUN);
    // Each body is one Composite where it was a chain of elementwise nodes: the outer loop,
    // the loop holding a loop and the loop nested in it, both branches, the subroutine.
    let bodies = body_ops(&fast);
    assert_eq!(bodies.len(), 6, "{}", show(&fast[0]));
    for ops in &bodies {
        let chains = ops
            .iter()
            .filter(|op| matches!(op, Op::Elemwise(_)))
            .count();
        let composites = ops
            .iter()
            .filter(|op| matches!(op, Op::Composite(_)))
            .count();
        assert!(
            chains == 0 && composites >= 1,
            "a body kept {chains} elementwise nodes: {ops:?}"
        );
    }
    assert!(report.hits("elemwise_fusion") >= 6, "{report:?}");
    let inputs = [x, x2, h0, a, c];
    let args = [
        random_tensor(&[6, 4], -1.0, 1.0, 3),
        random_tensor(&[5, 4], -1.0, 1.0, 6),
        random_tensor(&[4], -1.0, 1.0, 4),
        random_tensor(&[4], 0.1, 1.0, 5),
        Tensor::scalar(1.0),
    ];
    for (got, want) in eval(&inputs, &fast, &args)
        .iter()
        .zip(eval(&inputs, &outs, &args))
    {
        assert_close(&got.to_vec_as::<f64>(), &want.to_vec_as::<f64>(), 1e-12);
    }
}

#[test]
fn shape_arithmetic_stays_out_of_composites_that_read_elements() {
    use oxtensor_data::DType;
    let y = vector("y");
    // `n - 1` sizes an allocation and scales a mean: its group may not merge with the mean's,
    // which reads y's elements, or the allocation's extent would be a Composite's value.
    let n = b::shape_i(&y, 0).unwrap() * 2 - 1;
    let zeros = b::alloc(
        &Var::constant(Tensor::scalar(0.0)),
        std::slice::from_ref(&n),
    )
    .unwrap();
    let mean = (y.sum(None) / b::cast(&n, DType::F64).unwrap()).exp() + 1.0;
    let outs = fused(&[zeros, mean]);
    let Some((Op::Alloc { .. }, [_, extent])) = outs[0].owner() else {
        panic!("{}", show(&outs[0]))
    };
    let leaves: Vec<Op> = toposort(std::slice::from_ref(extent))
        .iter()
        .filter_map(|n| n.op().cloned())
        .collect();
    assert!(
        leaves
            .iter()
            .all(|op| matches!(op, Op::ShapeI(_) | Op::Elemwise(_) | Op::Composite(_))),
        "{}",
        show(&outs[0])
    );
    let args = [random_tensor(&[5], -1.0, 1.0, 7)];
    let got = eval(std::slice::from_ref(&y), &outs, &args);
    assert_eq!(got[0].shape(), &[9]);
    let want = (args[0].to_vec_as::<f64>().iter().sum::<f64>() / 9.0).exp() + 1.0;
    assert_close(&got[1].to_vec_as::<f64>(), &[want], 1e-14);
}
