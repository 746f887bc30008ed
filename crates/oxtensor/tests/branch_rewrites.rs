//! The `branches` rules on compiled functions: what they move out of or merge into `IfElse`
//! nodes, that values stay those of the graph as written (both conditions, both backends), and
//! that the branch not taken still never runs.

use oxtensor::oxtensor_graph::{Node, Op, ScalarOp, toposort};
use oxtensor::{DType, Function, Mode, Tensor, Var, function, ifelse, ops, scalar, vector};
use oxtensor_testkit::{Tol, assert_close};
use std::sync::Arc;

fn f64s(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).expect("tensor")
}

/// The interpreter and the native backend, with every rewrite.
fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
    ]
}

/// The `IfElse` nodes of a compiled function.
fn ifelses(f: &Function) -> Vec<Arc<Node>> {
    f.graph()
        .toposort()
        .iter()
        .filter(|n| matches!(n.op(), Some(Op::IfElse(_))))
        .cloned()
        .collect()
}

/// How many `IfElse` nodes a compiled function holds, inside branches too.
fn count_ifelses(f: &Function) -> usize {
    fn within(outputs: &[Var]) -> usize {
        toposort(outputs)
            .iter()
            .map(|n| match n.op() {
                Some(Op::IfElse(b)) => {
                    1 + within(b.then_branch.outputs()) + within(b.else_branch.outputs())
                }
                _ => 0,
            })
            .sum()
    }
    within(f.graph().outputs())
}

/// How many nodes computing `s` each branch of `node` holds, fused or not.
fn in_branches(node: &Node, s: ScalarOp) -> [usize; 2] {
    let Some(Op::IfElse(b)) = node.op() else {
        panic!("not an IfElse");
    };
    let count = |g: &oxtensor::oxtensor_graph::FrozenGraph| {
        toposort(g.outputs())
            .iter()
            .map(|n| match n.op() {
                Some(Op::Elemwise(e)) => usize::from(*e == s),
                Some(Op::Composite(c)) => toposort(c.outputs())
                    .iter()
                    .filter(|m| m.op() == Some(&Op::Elemwise(s)))
                    .count(),
                _ => 0,
            })
            .sum()
    };
    [count(&b.then_branch), count(&b.else_branch)]
}

/// Compiles `outs` in `mode` and in the mode without rewrites, and checks they agree for
/// both values of the condition (the first argument).
fn check(inputs: &[Var], outs: &[Var], mode: Mode, rest: &[Tensor]) -> Function {
    let f = function(inputs, outs)
        .mode(mode)
        .build()
        .expect("rewritten");
    let plain = function(inputs, outs)
        .mode(
            Mode::new("interp", "fast_run")
                .expect("mode")
                .excluding(&["fast_run"]),
        )
        .build()
        .expect("as written");
    for c in [1i64, 0] {
        let args: Vec<Tensor> = std::iter::once(Tensor::scalar(c))
            .chain(rest.iter().cloned())
            .collect();
        let (got, want) = (f.call(&args).expect("run"), plain.call(&args).expect("run"));
        for (k, (a, b)) in got.iter().zip(&want).enumerate() {
            assert_close(&format!("output {k}, c={c}"), a, b, Tol::MATH_LIBRARIES);
        }
    }
    f
}

#[test]
fn work_both_branches_do_moves_out_once() {
    let (c, x) = (scalar("c", DType::I64), vector("x", DType::F64));
    let e = x.exp();
    let out = ifelse(&c, &[&e + 1.0], &[&e * 2.0])
        .expect("ifelse")
        .remove(0);
    for mode in modes() {
        let f = check(
            &[c.clone(), x.clone()],
            std::slice::from_ref(&out),
            mode,
            &[f64s(&[0.5, -1.0])],
        );
        let nodes = ifelses(&f);
        assert_eq!(nodes.len(), 1);
        assert_eq!(
            in_branches(&nodes[0], ScalarOp::Exp),
            [0, 0],
            "{}",
            f.dprint(Default::default())
        );
        assert_eq!(in_branches(&nodes[0], ScalarOp::Add), [1, 0]);
    }
}

#[test]
fn work_one_branch_does_stays_inside_and_lazy() {
    let (c, x) = (scalar("c", DType::I64), vector("x", DType::F64));
    let bad_index = ops::subtensor(&x, &[ops::Idx::int(10)]).expect("index");
    let e = x.exp().sum(None);
    // `exp` is common and moves out; the failing index stays in the else branch.
    let out = ifelse(&c, &[&e + 1.0], &[&e + bad_index])
        .expect("ifelse")
        .remove(0);
    for mode in modes() {
        let f = function(&[c.clone(), x.clone()], std::slice::from_ref(&out))
            .mode(mode)
            .build()
            .expect("f");
        let got = f
            .call(&[Tensor::scalar(1i64), f64s(&[0.0, 0.0])])
            .expect("then branch");
        assert_eq!(got[0].item::<f64>().expect("f64"), 3.0);
        let err = f
            .call(&[Tensor::scalar(0i64), f64s(&[0.0, 0.0])])
            .expect_err("else branch");
        assert!(err.to_string().contains("index"), "{err}");
    }
}

#[test]
fn an_output_both_branches_compute_alike_needs_no_branch() {
    let (c, x, y) = (
        scalar("c", DType::I64),
        vector("x", DType::F64),
        vector("y", DType::F64),
    );
    let shared = x.sin() * &y;
    let outs = ifelse(&c, &[shared.clone(), x.exp()], &[shared, y.exp()]).expect("ifelse");
    let args = [f64s(&[0.5, 2.0]), f64s(&[-1.0, 3.0])];
    for mode in modes() {
        let f = check(&[c.clone(), x.clone(), y.clone()], &outs, mode, &args);
        // Output 0 no longer comes from the IfElse.
        let first = f.graph().outputs()[0].clone();
        assert!(
            !matches!(first.owner(), Some((Op::IfElse(_), _))),
            "{}",
            f.dprint(Default::default())
        );
        assert_eq!(ifelses(&f).len(), 1);
    }
}

#[test]
fn an_ifelse_inside_a_branch_on_the_same_condition_is_resolved() {
    let (c, x, y) = (
        scalar("c", DType::I64),
        vector("x", DType::F64),
        vector("y", DType::F64),
    );
    let bad_index = ops::subtensor(&y, &[ops::Idx::int(10)]).expect("index");
    // Inside the outer then branch, c is true: the inner else side (which fails) is dropped.
    let inner = ifelse(&c, &[x.exp()], &[&y + &bad_index])
        .expect("ifelse")
        .remove(0);
    let outer = ifelse(&c, &[inner.sin()], &[y.cos()])
        .expect("ifelse")
        .remove(0);
    let args = [f64s(&[0.5, 1.0]), f64s(&[2.0, 3.0])];
    for mode in modes() {
        let f = check(
            &[c.clone(), x.clone(), y.clone()],
            std::slice::from_ref(&outer),
            mode,
            &args,
        );
        assert_eq!(count_ifelses(&f), 1, "{}", f.dprint(Default::default()));
    }
}

#[test]
fn an_ifelse_reading_another_on_the_same_condition_reads_its_branches() {
    let (c, x, y) = (
        scalar("c", DType::I64),
        vector("x", DType::F64),
        vector("y", DType::F64),
    );
    // Both branches read `inner`, so it moves out; the outer IfElse then reads an IfElse on
    // its own condition, and reads its branches instead: one IfElse is left.
    let inner = ifelse(&c, &[x.exp()], &[y.sin()])
        .expect("ifelse")
        .remove(0);
    let outer = ifelse(&c, &[&inner + 1.0], &[&inner * 2.0])
        .expect("ifelse")
        .remove(0);
    let args = [f64s(&[0.5, 1.0]), f64s(&[2.0, 3.0])];
    for mode in modes() {
        let f = check(
            &[c.clone(), x.clone(), y.clone()],
            std::slice::from_ref(&outer),
            mode,
            &args,
        );
        assert_eq!(count_ifelses(&f), 1, "{}", f.dprint(Default::default()));
    }
}

#[test]
fn a_constant_condition_inlines_every_output_of_a_multi_output_ifelse() {
    let (x, y) = (vector("x", DType::F64), vector("y", DType::F64));
    let yes = Var::scalar_constant(1.0, DType::F64);
    let outs = ifelse(&yes, &[x.exp(), y.sin()], &[y.exp(), x.sin()]).expect("ifelse");
    let f = function(&[x, y], &outs).build().expect("f");
    assert!(ifelses(&f).is_empty(), "{}", f.dprint(Default::default()));
    let got = f.call(&[f64s(&[0.5]), f64s(&[2.0])]).expect("run");
    assert_close("exp", &got[0], &f64s(&[0.5f64.exp()]), Tol::MATH_LIBRARIES);
    assert_close("sin", &got[1], &f64s(&[2.0f64.sin()]), Tol::MATH_LIBRARIES);
}

#[test]
fn independent_ifelses_on_one_condition_merge() {
    let (c, x, y) = (
        scalar("c", DType::I64),
        vector("x", DType::F64),
        vector("y", DType::F64),
    );
    let bad_index = ops::subtensor(&y, &[ops::Idx::int(10)]).expect("index");
    let first = ifelse(&c, &[x.exp()], &[y.sin()])
        .expect("ifelse")
        .remove(0);
    let second = ifelse(&c, &[x.cos() + &bad_index], &[y.tanh()])
        .expect("ifelse")
        .remove(0);
    // A third reads the first inside its then branch, where the condition is known: that
    // inner IfElse resolves to its then side, and all three become one node.
    let third = ifelse(&c, &[&first * 2.0], &[y.sqrt()])
        .expect("ifelse")
        .remove(0);
    let outs = [first, second, third];
    for mode in modes() {
        let f = function(&[c.clone(), x.clone(), y.clone()], &outs)
            .mode(mode)
            .build()
            .expect("f");
        assert_eq!(count_ifelses(&f), 1, "{}", f.dprint(Default::default()));
        // The merged node is still lazy: its then side fails, its else side does not.
        let args = |cv: i64| [Tensor::scalar(cv), f64s(&[0.5, 1.0]), f64s(&[2.0, 3.0])];
        let err = f
            .call(&args(1))
            .expect_err("then side indexes out of range");
        assert!(err.to_string().contains("index"), "{err}");
        let got = f.call(&args(0)).expect("else side");
        let want = [
            f64s(&[2.0f64.sin(), 3.0f64.sin()]),
            f64s(&[2.0f64.tanh(), 3.0f64.tanh()]),
            f64s(&[2.0f64.sqrt(), 3.0f64.sqrt()]),
        ];
        for (k, (a, b)) in got.iter().zip(&want).enumerate() {
            assert_close(&format!("output {k}"), a, b, Tol::MATH_LIBRARIES);
        }
    }
}
