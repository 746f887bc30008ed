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
use std::time::Instant;

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
fn long_chains_fuse_in_linear_time() {
    let x = vector("x");
    let mut acc = x.clone();
    for i in 0..3000 {
        acc = if i % 2 == 0 { acc.sin() } else { &acc * &x };
    }
    let t = Instant::now();
    let outs = fused(std::slice::from_ref(&acc));
    assert!(t.elapsed().as_secs_f64() < 5.0);
    assert_eq!(outer_ops(&outs).len(), 1);
}
