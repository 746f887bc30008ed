//! Inner-graph ops: an `OpFromGraph` call equals its inlined graph (values and gradients, in
//! both backends), equal bodies are one op, and `ifelse` computes only the branch it takes.

use oxtensor::gradient::{VerifyGradOptions, verify_grad};
use oxtensor::{
    DType, Mode, OpFromGraph, Tensor, Var, function, grad_vars, ifelse, ops, scalar, shared, vector,
};
use oxtensor_testkit::{Tol, assert_close};
use random_graphs::{expr, pseudo_random};
use std::sync::Arc;

use crate::random_graphs;

fn f64s(v: &[f64]) -> Tensor {
    Tensor::from_slice(v, &[v.len()]).expect("tensor")
}

/// The modes both backends are checked in: the interpreter and the default (native).
fn modes() -> Vec<Mode> {
    vec![
        Mode::FAST_COMPILE,
        Mode::FAST_RUN,
        Mode::new("interp", "fast_run").expect("mode"),
    ]
}

/// `exp(-x·y)·sin(x) + y²` as an op of two vectors.
fn body_op() -> Arc<OpFromGraph> {
    let (x, y) = (vector("x", DType::F64), vector("y", DType::F64));
    let out = (-(&x * &y)).exp() * x.sin() + &y * &y;
    Arc::new(OpFromGraph::new(&[x, y], &[out], Some("bump")).expect("op"))
}

#[test]
fn equal_bodies_are_one_op_and_one_node() {
    let (a, b) = (body_op(), body_op());
    assert_eq!(a, b);
    let (u, v) = (vector("u", DType::F64), vector("v", DType::F64));
    let first = a.call(&[u.clone(), v.clone()]).expect("call");
    let second = b.call(&[u, v]).expect("call");
    assert_eq!(first, second, "hash-consing makes the two calls one node");
}

#[test]
fn a_call_equals_its_inlined_graph_in_values_and_gradients() {
    let op = body_op();
    let (u, v) = (vector("u", DType::F64), vector("v", DType::F64));
    // Called twice (the second on its own output), and inlined the same way.
    let once = op.call(&[u.clone(), v.clone()]).expect("call").remove(0);
    let called = op.call(&[once.clone(), v.clone()]).expect("call").remove(0);
    let inl = op
        .inline(&[u.clone(), v.clone()])
        .expect("inline")
        .remove(0);
    let inlined = op.inline(&[inl, v.clone()]).expect("inline").remove(0);
    let cost = |z: &Var| z.sum(None);
    let gc = grad_vars(&cost(&called), &[u.clone(), v.clone()]).expect("grad");
    let gi = grad_vars(&cost(&inlined), &[u.clone(), v.clone()]).expect("grad");
    let args = [f64s(&[0.5, -1.0, 2.0, 0.0]), f64s(&[1.5, 0.25, -0.5, 3.0])];
    for mode in modes() {
        let outs = [called.clone(), gc[0].clone(), gc[1].clone()];
        let want = [inlined.clone(), gi[0].clone(), gi[1].clone()];
        let f = function(&[u.clone(), v.clone()], &outs)
            .mode(mode.clone())
            .build()
            .expect("f");
        let g = function(&[u.clone(), v.clone()], &want)
            .mode(mode)
            .build()
            .expect("g");
        let (got, exp) = (f.call(&args).expect("call"), g.call(&args).expect("call"));
        for (k, (a, b)) in got.iter().zip(&exp).enumerate() {
            assert_close(
                &format!("output {k}"),
                a,
                b,
                Tol::MATH_LIBRARIES.or_scaled(1e-14),
            );
        }
    }
}

#[test]
fn verify_grad_passes_through_both_ops() {
    let op = body_op();
    verify_grad(
        |xs| Ok(op.call(xs)?.remove(0)),
        &[f64s(&[0.3, -0.7, 1.1]), f64s(&[0.9, 0.2, -1.3])],
        &VerifyGradOptions::default(),
    )
    .expect("OpFromGraph");
    verify_grad(
        |xs| {
            let c = ops::gt(&xs[0].sum(None), &Var::scalar_constant(0.0, DType::F64))?;
            Ok(ifelse(&c, &[xs[0].exp() * &xs[1]], &[xs[1].sin()])?.remove(0))
        },
        &[f64s(&[0.3, -0.1, 1.1]), f64s(&[0.9, 0.2, -1.3])],
        &VerifyGradOptions::default(),
    )
    .expect("IfElse");
}

#[test]
fn shared_variables_inside_become_implicit_inputs() {
    let w = shared(f64s(&[2.0, 3.0]), Some("w"));
    let x = vector("x", DType::F64);
    let op = Arc::new(OpFromGraph::new(std::slice::from_ref(&x), &[&x * &w], None).expect("op"));
    assert_eq!(op.n_explicit(), 1);
    let u = vector("u", DType::F64);
    let out = op.call(std::slice::from_ref(&u)).expect("call").remove(0);
    let f = function(&[u], &[out]).build().expect("f");
    let got = f.call(&[f64s(&[1.0, -1.0])]).expect("call");
    assert_eq!(got[0].to_vec::<f64>().expect("f64"), vec![2.0, -3.0]);
}

#[test]
fn ifelse_equals_switch_where_both_branches_are_safe() {
    let (c, x, y) = (
        scalar("c", DType::F64),
        vector("x", DType::F64),
        vector("y", DType::F64),
    );
    let cond = ops::gt(&c, &Var::scalar_constant(0.0, DType::F64)).expect("cond");
    let (a, b) = (x.exp() + &y, &x * &y);
    let lazy = ifelse(&cond, &[a.clone(), b.clone()], &[b.clone(), a.clone()]).expect("ifelse");
    let eager = [
        ops::switch(&cond, &a, &b).expect("switch"),
        ops::switch(&cond, &b, &a).expect("switch"),
    ];
    for mode in modes() {
        let f = function(&[c.clone(), x.clone(), y.clone()], &lazy)
            .mode(mode.clone())
            .build()
            .expect("f");
        let g = function(&[c.clone(), x.clone(), y.clone()], &eager)
            .mode(mode)
            .build()
            .expect("g");
        for cv in [1.0, -1.0] {
            let args = [Tensor::scalar(cv), f64s(&[0.5, 1.5]), f64s(&[-2.0, 4.0])];
            let (got, want) = (f.call(&args).expect("lazy"), g.call(&args).expect("eager"));
            for (a, b) in got.iter().zip(&want) {
                assert_close("ifelse vs switch", a, b, Tol::EXACT);
            }
        }
    }
}

#[test]
fn the_branch_not_taken_is_never_computed() {
    let (c, x) = (scalar("c", DType::I64), vector("x", DType::F64));
    // Index 10 of a 3-vector fails; 10^12 zeros cannot be allocated: neither may run.
    let bad_index = ops::subtensor(&x, &[ops::Idx::int(10)]).expect("index");
    let huge = ops::zeros(&[1_000_000, 1_000_000], DType::F64)
        .expect("zeros")
        .sum(None);
    let safe = x.sum(None);
    let out = ifelse(&c, std::slice::from_ref(&safe), &[bad_index])
        .expect("ifelse")
        .remove(0);
    let out2 = ifelse(&c, &[safe], &[huge]).expect("ifelse").remove(0);
    for mode in modes() {
        let f = function(&[c.clone(), x.clone()], &[out.clone(), out2.clone()])
            .mode(mode)
            .build()
            .expect("f");
        let got = f
            .call(&[Tensor::scalar(1i64), f64s(&[1.0, 2.0, 3.0])])
            .expect("then branch");
        assert_eq!(got[0].item::<f64>().expect("f64"), 6.0);
        assert_eq!(got[1].item::<f64>().expect("f64"), 6.0);
        let err = f
            .call(&[Tensor::scalar(0i64), f64s(&[1.0, 2.0, 3.0])])
            .expect_err("else branch");
        assert!(err.to_string().contains("index"), "{err}");
    }
}

#[test]
fn a_constant_condition_picks_its_branch_at_compile_time() {
    let x = vector("x", DType::F64);
    let t = Var::scalar_constant(1.0, DType::F64);
    let out = ifelse(&t, &[x.exp()], &[x.sin()])
        .expect("ifelse")
        .remove(0);
    let f = function(&[x], &[out]).build().expect("f");
    let text = f.dprint(oxtensor::PrintOptions::default());
    assert!(!text.contains("IfElse"), "{text}");
}

#[test]
fn branches_of_other_static_shapes_or_dtypes() {
    let x = oxtensor::tensor("x", DType::F64, &[Some(3)]);
    let y = oxtensor::tensor("y", DType::F64, &[Some(4)]);
    let c = scalar("c", DType::Bool);
    let out = ifelse(&c, std::slice::from_ref(&x), std::slice::from_ref(&y))
        .expect("ifelse")
        .remove(0);
    assert_eq!(out.ty().shape.as_slice(), &[None]);
    let ints = vector("i", DType::I64);
    let err = ifelse(&c, &[x], &[ints]).expect_err("dtypes differ");
    assert!(
        err.to_string()
            .contains("both branches must have the same dtype"),
        "{err}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]
    /// An `OpFromGraph` of a random expression, called twice in a row, equals the same
    /// expression inlined: values and gradients, in both backends.
    #[test]
    fn random_ops_from_graph_equal_their_inlined_graphs(
        codes in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..10),
        n in 1usize..20,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let (x, y) = (vector("x", DType::F64), vector("y", DType::F64));
        // `+ x·y` keeps both inputs connected whatever the random expression reads.
        let body = expr(&x, &y, &codes) + &x * &y;
        let op = Arc::new(OpFromGraph::new(&[x.clone(), y.clone()], &[body], None).expect("op"));
        let (u, v) = (vector("u", DType::F64), vector("v", DType::F64));
        let once = op.call(&[u.clone(), v.clone()]).expect("call").remove(0);
        let called = op.call(&[once, v.clone()]).expect("call").remove(0);
        let inl = op.inline(&[u.clone(), v.clone()]).expect("inline").remove(0);
        let inlined = op.inline(&[inl, v.clone()]).expect("inline").remove(0);
        let gc = grad_vars(&called.sum(None), &[u.clone(), v.clone()]).expect("grad");
        let gi = grad_vars(&inlined.sum(None), &[u.clone(), v.clone()]).expect("grad");
        let args = [
            f64s(&pseudo_random(n, seed)),
            f64s(&pseudo_random(n, seed ^ 1)),
        ];
        for mode in [Mode::FAST_RUN, Mode::new("interp", "fast_run").expect("mode")] {
            let build = |outs: &[Var]| {
                function(&[u.clone(), v.clone()], outs).mode(mode.clone()).build().expect("f")
            };
            let got = build(&[called.clone(), gc[0].clone(), gc[1].clone()])
                .call(&args)
                .expect("call");
            let want = build(&[inlined.clone(), gi[0].clone(), gi[1].clone()])
                .call(&args)
                .expect("call");
            for (k, (a, b)) in got.iter().zip(&want).enumerate() {
                assert_close(&format!("output {k}"), a, b, Tol::MATH_LIBRARIES.or_scaled(1e-12));
            }
        }
    }
}

#[test]
fn debugprint_shows_the_inner_graphs() {
    let op = body_op();
    let (u, v) = (vector("u", DType::F64), vector("v", DType::F64));
    let call = op.call(&[u.clone(), v.clone()]).expect("call").remove(0);
    let c = scalar("c", DType::Bool);
    let branch = ifelse(&c, &[u.exp()], &[v.sin()])
        .expect("ifelse")
        .remove(0);
    let f = function(&[u, v, c], &[call, branch])
        .mode(Mode::FAST_COMPILE)
        .build()
        .expect("f");
    let text = f.dprint(oxtensor::PrintOptions::default());
    // The outer graph, then each node's inner graph under `Inner graphs:`, the IfElse with
    // its two sides labelled; the body's own ops are printed over its placeholders.
    let (outer, inner) = text
        .split_once("Inner graphs:")
        .expect("an inner-graph section");
    assert!(outer.contains("bump [id A]"), "{text}");
    assert!(outer.contains("IfElse [id"), "{text}");
    assert!(inner.contains("\nbump [id A]"), "{text}");
    assert!(
        inner.contains(" then:\n") && inner.contains(" else:\n"),
        "{text}"
    );
    for op in ["Exp", "Sin", "Mul", "Add", "Neg"] {
        assert!(
            inner.contains(op),
            "{op} missing from the inner graphs:\n{text}"
        );
        assert!(
            !outer.contains(&format!("─ {op} ")),
            "{op} printed outside:\n{text}"
        );
    }
    assert!(inner.contains("*0-<Vector(float64, shape=(?,))>"), "{text}");
}

#[test]
fn a_pushforward_override_is_what_forward_mode_uses() {
    // x ↦ x², with a forward rule that is deliberately 3·x·t (not 2·x·t), so the test sees
    // which rule forward mode took; reverse mode still differentiates the body.
    let (x, t) = (vector("x", DType::F64), vector("t", DType::F64));
    let square = OpFromGraph::new(std::slice::from_ref(&x), &[&x * &x], Some("square"))
        .expect("op")
        .with_pushforward(
            std::slice::from_ref(&x),
            std::slice::from_ref(&t),
            &[&x * &t * 3.0],
        )
        .expect("pushforward");
    let square = Arc::new(square);
    let (u, v) = (vector("u", DType::F64), vector("v", DType::F64));
    let y = square
        .call(std::slice::from_ref(&u))
        .expect("call")
        .remove(0)
        .sin();
    let jvp = oxtensor::gradient::pushforward(
        std::slice::from_ref(&y),
        std::slice::from_ref(&u),
        std::slice::from_ref(&v),
    )
    .expect("pushforward")
    .remove(0);
    let gy = grad_vars(&y.sum(None), std::slice::from_ref(&u))
        .expect("grad")
        .remove(0);
    let (uv, vv) = ([0.5, -1.5, 2.0], [1.0, 0.25, -2.0]);
    for mode in modes() {
        let f = function(&[u.clone(), v.clone()], &[jvp.clone(), gy.clone()])
            .mode(mode)
            .build()
            .expect("f");
        let got = f.call(&[f64s(&uv), f64s(&vv)]).expect("call");
        let jvp_want: Vec<f64> = uv
            .iter()
            .zip(&vv)
            .map(|(a, b)| (a * a).cos() * 3.0 * a * b)
            .collect();
        let grad_want: Vec<f64> = uv.iter().map(|a| (a * a).cos() * 2.0 * a).collect();
        assert_close(
            "pushforward",
            &got[0],
            &f64s(&jvp_want),
            Tol::MATH_LIBRARIES.or_scaled(1e-15),
        );
        assert_close(
            "pullback",
            &got[1],
            &f64s(&grad_want),
            Tol::MATH_LIBRARIES.or_scaled(1e-15),
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]
    /// `ifelse` of two random expressions equals `switch` of them (where both are safe to
    /// compute), for either condition, in both backends, with the branch rewrites at work
    /// (the expressions share subterms, which move out of the branches).
    #[test]
    fn random_ifelses_equal_switch(
        then_codes in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..8),
        else_codes in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..8),
        n in 1usize..20,
        seed in proptest::prelude::any::<u64>(),
    ) {
        let (c, x, y) = (scalar("c", DType::F64), vector("x", DType::F64), vector("y", DType::F64));
        let cond = ops::gt(&c, &Var::scalar_constant(0.0, DType::F64)).expect("cond");
        let shared = x.sin() * &y;
        let a = expr(&shared, &y, &then_codes);
        let b = expr(&shared, &x, &else_codes);
        let lazy = ifelse(&cond, std::slice::from_ref(&a), std::slice::from_ref(&b))
            .expect("ifelse")
            .remove(0);
        let eager = ops::switch(&cond, &a, &b).expect("switch");
        for mode in [Mode::FAST_RUN, Mode::new("interp", "fast_run").expect("mode")] {
            let f = function(&[c.clone(), x.clone(), y.clone()], &[lazy.clone(), eager.clone()])
                .mode(mode)
                .build()
                .expect("f");
            for cv in [1.0, -1.0] {
                let args = [
                    Tensor::scalar(cv),
                    f64s(&pseudo_random(n, seed)),
                    f64s(&pseudo_random(n, seed ^ 1)),
                ];
                let got = f.call(&args).expect("call");
                assert_close(
                    "ifelse vs switch",
                    &got[0],
                    &got[1],
                    Tol::MATH_LIBRARIES.or_scaled(1e-12),
                );
            }
        }
    }
}
