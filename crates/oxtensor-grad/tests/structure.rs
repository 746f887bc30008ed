//! Structural properties of gradient graphs that need no kernels: types, sizes, sharing,
//! connectivity, options and error paths.

use oxtensor_data::{DType, Tensor};
use oxtensor_grad::*;
use oxtensor_graph::build::{self as b, Idx};
use oxtensor_graph::{Op, ScalarOp, TensorType, Var, toposort};

fn input(name: &str, dtype: DType, shape: &[Option<usize>]) -> Var {
    Var::input(Some(name), TensorType::new(dtype, shape))
}

fn vector(name: &str) -> Var {
    input(name, DType::F64, &[None])
}

fn opts() -> GradOptions {
    GradOptions::default()
}

fn one<'a>(
    cost: impl Into<Option<&'a Var>>,
    wrt: &Var,
    options: &GradOptions,
) -> Result<Gradient, GradError> {
    Ok(grad(cost, std::slice::from_ref(wrt), options)?.remove(0))
}

fn var(g: Gradient) -> Var {
    g.into_var().expect("a gradient variable")
}

fn count(v: &Var) -> usize {
    toposort(std::slice::from_ref(v)).len()
}

/// True when some node of `v`'s graph applies `op`.
fn uses(v: &Var, pred: impl Fn(&Op) -> bool) -> bool {
    toposort(std::slice::from_ref(v))
        .iter()
        .any(|n| n.op().is_some_and(&pred))
}

#[test]
fn gradient_has_the_type_of_its_variable() {
    let x = input("x", DType::F32, &[Some(3), None]);
    let y = input("y", DType::F64, &[Some(1), Some(4)]);
    let cost = b::sum(
        &b::mul(&b::cast(&x, DType::F64).unwrap(), &y).unwrap(),
        None,
        false,
    )
    .unwrap();
    let g = grad(&cost, &[x.clone(), y.clone()], &opts()).unwrap();
    let (gx, gy) = (var(g[0].clone()), var(g[1].clone()));
    assert_eq!(gx.dtype(), DType::F32);
    assert_eq!(gx.ty().shape.as_slice(), &[Some(3), Some(4)]);
    assert_eq!(gy.ty(), y.ty());
    // The broadcast dimension of y is summed back.
    assert!(uses(
        &gy,
        |op| matches!(op, Op::Reduce { axes, .. } if axes.as_slice() == [0])
    ));
}

#[test]
fn non_scalar_cost_is_an_error() {
    let x = vector("x");
    let err = grad(&x.exp(), std::slice::from_ref(&x), &opts()).unwrap_err();
    assert!(matches!(err, GradError::NonScalarCost { .. }));
    assert!(
        err.to_string().contains("'x'") || err.to_string().contains("Exp"),
        "{err}"
    );
    assert!(err.to_string().contains("must be a scalar"), "{err}");
}

#[test]
fn cost_and_known_grads_cannot_both_be_missing() {
    let x = vector("x");
    let err = grad(None, &[x], &opts()).unwrap_err();
    assert!(matches!(err, GradError::Invalid(_)), "{err}");
}

#[test]
fn chain_of_100_ops_has_a_linear_gradient() {
    let x = input("x", DType::F64, &[]);
    let mut y = x.clone();
    let ops = [ScalarOp::Sin, ScalarOp::Exp, ScalarOp::Tanh, ScalarOp::Sqrt];
    for i in 0..100 {
        y = b::elemwise(ops[i % ops.len()], std::slice::from_ref(&y)).unwrap();
    }
    let forward = count(&y);
    let g = var(one(&y, &x, &opts()).unwrap());
    let total = count(&g);
    assert!(forward == 100);
    // Each rule adds a couple of nodes (300 in all, forward included): the graph stays O(n).
    assert!(
        total <= 4 * forward,
        "{total} nodes for a chain of {forward}"
    );
    // Doubling the chain doubles (not squares) the gradient.
    let mut z = y.clone();
    for i in 0..100 {
        z = b::elemwise(ops[i % ops.len()], std::slice::from_ref(&z)).unwrap();
    }
    let g2 = var(one(&z, &x, &opts()).unwrap());
    let total2 = count(&g2);
    assert!(total2 <= 2 * total + 10, "{total} then {total2}");
}

#[test]
fn op_pullback_checks_its_arguments() {
    let x = vector("x");
    let g = vector("g");
    let err = op_pullback(
        &Op::MatMul,
        std::slice::from_ref(&x),
        &[x.exp()],
        &[Some(g.clone())],
        &[true],
    );
    assert!(err.is_err(), "matmul needs two inputs");
    let err = op_pullback(
        &Op::Elemwise(ScalarOp::Exp),
        std::slice::from_ref(&x),
        &[x.exp()],
        &[],
        &[true],
    );
    assert!(matches!(err, Err(GradError::Invalid(_))));
    let ok = op_pullback(
        &Op::Elemwise(ScalarOp::Exp),
        std::slice::from_ref(&x),
        &[x.exp()],
        &[Some(g)],
        &[true],
    )
    .unwrap();
    assert!(matches!(ok.as_slice(), [Term::Grad(_)]));
}

#[test]
fn diamonds_do_not_blow_up() {
    // Each step uses the previous value twice: a tree walk would visit 2^40 paths; the
    // gradient must stay linear.
    let x = input("x", DType::F64, &[]);
    let mut y = x.clone();
    for _ in 0..40 {
        y = b::add(&b::mul(&y, &y).unwrap(), &y.sin()).unwrap();
    }
    let g = var(one(&y, &x, &opts()).unwrap());
    assert!(count(&g) < 40 * 12, "{} nodes", count(&g));
}

#[test]
fn errors_classify_as_python_exceptions() {
    let x = vector("x");
    let err = grad(&x.exp(), std::slice::from_ref(&x), &opts()).unwrap_err();
    assert!(err.is_type_error());
    let err = one(&b::sum(&x, None, false).unwrap(), &vector("y"), &opts()).unwrap_err();
    assert!(!err.is_type_error());
}

#[test]
fn wide_fan_in_accumulates_in_one_add() {
    // x is used by 50 consumers: its gradient is one n-ary Add of 50 terms, not a chain.
    let x = vector("x");
    let terms: Vec<Var> = (0..50)
        .map(|i| {
            b::sum(
                &b::mul(&x, &Var::scalar_constant(i as f64 + 1.0, DType::F64))
                    .unwrap()
                    .sin(),
                None,
                false,
            )
            .unwrap()
        })
        .collect();
    let cost = b::elemwise(ScalarOp::Add, &terms).unwrap();
    let g = var(one(&cost, &x, &opts()).unwrap());
    let (op, inputs) = g.owner().expect("an apply node");
    assert_eq!(op, &Op::Elemwise(ScalarOp::Add));
    assert_eq!(inputs.len(), 50);
    assert!(count(&g) < 50 * 12);
}

#[test]
fn shared_subexpression_is_differentiated_once() {
    let x = vector("x");
    let s = b::sum(&x.exp(), None, false).unwrap();
    // s is used three times; exp(x)'s pullback must appear once.
    let cost = b::elemwise(ScalarOp::Add, &[s.sin(), s.cos(), b::sqr(&s).unwrap()]).unwrap();
    let g = var(one(&cost, &x, &opts()).unwrap());
    let exps = toposort(std::slice::from_ref(&g))
        .iter()
        .filter(|n| n.op() == Some(&Op::Elemwise(ScalarOp::Exp)))
        .count();
    assert_eq!(exps, 1, "exp(x) is computed once and reused");
    let allocs = toposort(std::slice::from_ref(&g))
        .iter()
        .filter(|n| matches!(n.op(), Some(Op::Alloc { .. })))
        .count();
    assert_eq!(allocs, 1, "the sum's gradient is broadcast once");
}

#[test]
fn disconnected_inputs_policies() {
    let x = vector("x");
    let unused = vector("unused_var");
    let cost = b::sum(&x, None, false).unwrap();
    let err = one(&cost, &unused, &opts()).unwrap_err();
    assert!(matches!(err, GradError::Disconnected { .. }));
    assert!(err.to_string().contains("'unused_var'"), "{err}");
    assert!(
        err.to_string().contains("structure.rs"),
        "names the creation site: {err}"
    );

    for policy in [DisconnectedInputs::Warn, DisconnectedInputs::Ignore] {
        let o = GradOptions {
            disconnected_inputs: policy,
            ..opts()
        };
        let g = var(one(&cost, &unused, &o).unwrap());
        assert_eq!(g.ty(), unused.ty());
        assert!(uses(&g, |op| matches!(op, Op::Alloc { .. })), "zeros");
    }
    let ignore = |r| GradOptions {
        disconnected_inputs: DisconnectedInputs::Ignore,
        return_disconnected: r,
        ..opts()
    };
    assert!(matches!(
        one(&cost, &unused, &ignore(ReturnDisconnected::None)).unwrap(),
        Gradient::None
    ));
    assert!(matches!(
        one(&cost, &unused, &ignore(ReturnDisconnected::Disconnected)).unwrap(),
        Gradient::Disconnected
    ));
}

#[test]
fn shape_and_indices_are_disconnected() {
    let x = vector("x");
    let n = b::cast(&b::shape_i(&x, 0).unwrap(), DType::F64).unwrap();
    let err = one(&n, &x, &opts()).unwrap_err();
    assert!(matches!(err, GradError::Disconnected { .. }), "{err}");

    // An integer index computed from a float is disconnected too.
    let v = vector("v");
    let i = input("i", DType::I64, &[]);
    let picked = v.at(&[Idx::At(i.clone())]);
    let err = one(&picked, &i, &opts()).unwrap_err();
    assert!(matches!(err, GradError::Disconnected { .. }), "{err}");
}

#[test]
fn integer_paths_give_float_zeros_but_count_as_connected() {
    let k = input("k", DType::I32, &[None]);
    // Integer arithmetic, then a cast: the gradient stops at the integer values.
    let doubled = b::mul(&k, &Var::constant(Tensor::scalar(2i32))).unwrap();
    let cost = b::sum(&b::cast(&doubled, DType::F64).unwrap(), None, false).unwrap();
    let g = var(one(&cost, &k, &opts()).unwrap());
    assert_eq!(g.dtype(), DType::F64);
    assert_eq!(g.ndim(), 1);
    assert!(
        g.owner()
            .is_some_and(|(op, _)| matches!(op, Op::Alloc { .. })),
        "zeros: {g:?}"
    );

    // Comparisons, argmax, int_div: zero (connected, no error).
    let x = vector("x");
    let lt = b::sum(
        &b::cast(
            &b::lt(&x, &Var::scalar_constant(0.0, DType::F64)).unwrap(),
            DType::F64,
        )
        .unwrap(),
        None,
        false,
    )
    .unwrap();
    assert!(matches!(one(&lt, &x, &opts()).unwrap(), Gradient::Var(_)));
    let am = b::cast(&b::argmax(&x, None, false).unwrap(), DType::F64).unwrap();
    assert!(matches!(one(&am, &x, &opts()).unwrap(), Gradient::Var(_)));

    // A cast to float of an integer input passes the gradient (PyTensor's real extension).
    let cost = b::sum(&b::cast(&k, DType::F64).unwrap(), None, false).unwrap();
    let g = var(one(&cost, &k, &opts()).unwrap());
    assert_eq!(g.dtype(), DType::F64);
    assert!(
        !g.owner()
            .is_some_and(|(op, _)| matches!(op, Op::Alloc { .. }))
            || uses(&g, |op| matches!(op, Op::DimShuffle { .. }))
    );
}

#[test]
fn consider_constant_blocks_propagation() {
    let x = vector("x");
    let e = x.exp();
    let cost = b::sum(&b::mul(&e, &x).unwrap(), None, false).unwrap();
    let free = var(one(&cost, &x, &opts()).unwrap());
    let o = GradOptions {
        consider_constant: vec![e.clone()],
        ..opts()
    };
    let blocked = var(one(&cost, &x, &o).unwrap());
    assert!(count(&blocked) < count(&free));
    // Only through `e`: disconnected.
    let only = b::sum(&e, None, false).unwrap();
    assert!(matches!(
        one(&only, &x, &o).unwrap_err(),
        GradError::Disconnected { .. }
    ));
    // A constant that is itself in wrt still gets its gradient.
    assert!(matches!(one(&only, &e, &o).unwrap(), Gradient::Var(_)));
}

#[test]
fn undefined_gradients_raise_or_return() {
    // The size of an eye computed from a float: undefined gradient.
    let s = input("s", DType::F64, &[]);
    let n = b::cast(&s, DType::I64).unwrap();
    let e = b::eye(&n, &n, &Var::int_constant(0), DType::F64).unwrap();
    let cost = b::sum(&e, None, false).unwrap();
    let n_int = input("n", DType::I64, &[]);
    let e2 = b::eye(&n_int, &n_int, &Var::int_constant(0), DType::F64).unwrap();
    let cost2 = b::sum(&e2, None, false).unwrap();
    let err = one(&cost2, &n_int, &opts()).unwrap_err();
    assert!(matches!(err, GradError::Undefined { .. }), "{err}");
    assert!(err.to_string().contains("Eye"), "names the op: {err}");
    assert!(err.to_string().contains("'n'"), "names the variable: {err}");
    let ret = GradOptions {
        null_gradients: NullGradients::Return,
        ..opts()
    };
    assert!(
        matches!(one(&cost2, &n_int, &ret).unwrap(), Gradient::Undefined(r) if r.contains("Eye"))
    );
    // An undefined gradient propagates to everything upstream (PyTensor's NullType), even
    // through a cast to an integer.
    let err = one(&cost, &s, &opts()).unwrap_err();
    assert!(
        matches!(err, GradError::Undefined { .. }) && err.to_string().contains("'s'"),
        "{err}"
    );
}

#[test]
fn known_grads_replace_and_start_backprop() {
    let x = vector("x");
    let h = x.exp();
    let cost = b::sum(&h.sin(), None, false).unwrap();
    let gh = vector("gh");
    // Without a cost: gradient from h's known gradient.
    let o = GradOptions {
        known_grads: vec![(h.clone(), gh.clone())],
        ..opts()
    };
    let g = var(one(None, &x, &o).unwrap());
    // g = gh * exp(x): no sin/cos involved.
    assert!(!uses(&g, |op| *op == Op::Elemwise(ScalarOp::Cos)));
    assert!(
        toposort(std::slice::from_ref(&g))
            .iter()
            .any(|n| n.inputs().contains(&gh))
    );
    // With the cost: h's gradient is the known one, not the one from the cost.
    let g2 = var(one(&cost, &x, &o).unwrap());
    assert!(!uses(&g2, |op| *op == Op::Elemwise(ScalarOp::Cos)));
    // Bad known gradients are errors naming both.
    let bad = GradOptions {
        known_grads: vec![(h.clone(), input("gi", DType::I64, &[None]))],
        ..opts()
    };
    let err = one(None, &x, &bad).unwrap_err();
    assert!(
        matches!(err, GradError::BadSeed { .. }) && err.to_string().contains("'gi'"),
        "{err}"
    );
    let bad_rank = GradOptions {
        known_grads: vec![(h, input("g2", DType::F64, &[None, None]))],
        ..opts()
    };
    assert!(matches!(
        one(None, &x, &bad_rank).unwrap_err(),
        GradError::BadSeed { .. }
    ));
}

#[test]
fn markers_are_the_identity_with_special_gradients() {
    let x = vector("x");
    let z = zero_grad(&x).unwrap();
    let d = disconnected_grad(&x).unwrap();
    let c = grad_clip(
        &x,
        &Var::scalar_constant(-1.0, DType::F64),
        &Var::scalar_constant(1.0, DType::F64),
    )
    .unwrap();
    for m in [&z, &d, &c] {
        assert_eq!(m.ty(), x.ty());
    }
    assert_ne!(z, d);
    // zero_grad: connected, zero.
    let gz = var(one(
        &b::sum(&b::sqr(&z).unwrap(), None, false).unwrap(),
        &x,
        &opts(),
    )
    .unwrap());
    assert!(
        gz.owner()
            .is_some_and(|(op, _)| matches!(op, Op::Alloc { .. }))
    );
    // disconnected_grad: disconnected.
    let err = one(
        &b::sum(&b::sqr(&d).unwrap(), None, false).unwrap(),
        &x,
        &opts(),
    )
    .unwrap_err();
    assert!(matches!(err, GradError::Disconnected { .. }));
    // grad_clip: the gradient goes through a clip.
    let gc = var(one(
        &b::sum(&b::sqr(&c).unwrap(), None, false).unwrap(),
        &x,
        &opts(),
    )
    .unwrap());
    assert_eq!(
        gc.owner().map(|(op, _)| op.clone()),
        Some(Op::Elemwise(ScalarOp::Clip))
    );
    // Constant bounds in the wrong order, or non-scalar bounds, are errors.
    let err = grad_clip(
        &x,
        &Var::scalar_constant(1.0, DType::F64),
        &Var::scalar_constant(-1.0, DType::F64),
    )
    .unwrap_err();
    assert!(err.to_string().contains("upper bound"), "{err}");
    assert!(grad_clip(&x, &x, &x).is_err());
    // An ordinary switch is not a marker.
    let cond = b::gt(&x, &Var::scalar_constant(0.0, DType::F64)).unwrap();
    let s = b::switch(&cond, &x, &x).unwrap();
    assert!(matches!(
        one(&b::sum(&s, None, false).unwrap(), &x, &opts()).unwrap(),
        Gradient::Var(_)
    ));
}

#[test]
fn pullback_and_pushforward_check_their_arguments() {
    let x = vector("x");
    let y = x.exp();
    assert!(matches!(
        pullback(std::slice::from_ref(&y), std::slice::from_ref(&x), &[]).unwrap_err(),
        GradError::Invalid(_)
    ));
    assert!(matches!(
        pushforward(std::slice::from_ref(&y), std::slice::from_ref(&x), &[]).unwrap_err(),
        GradError::Invalid(_)
    ));
    let m = input("m", DType::F64, &[None, None]);
    let err = pullback(
        std::slice::from_ref(&y),
        std::slice::from_ref(&x),
        std::slice::from_ref(&m),
    )
    .unwrap_err();
    assert!(
        matches!(err, GradError::BadSeed { .. }) && err.to_string().contains("'m'"),
        "{err}"
    );
    let err = pushforward(std::slice::from_ref(&y), std::slice::from_ref(&x), &[m]).unwrap_err();
    assert!(matches!(err, GradError::BadSeed { .. }), "{err}");
    let static3 = input("s3", DType::F64, &[Some(3)]);
    let static4 = input("s4", DType::F64, &[Some(4)]);
    let err = pullback(&[static3.exp()], std::slice::from_ref(&static3), &[static4]).unwrap_err();
    assert!(err.to_string().contains("extent 4"), "{err}");
    // Pushforward results do not depend on the internal placeholder.
    let v = vector("v");
    let j = pushforward(
        &[b::sum(&b::sqr(&y).unwrap(), None, false).unwrap()],
        std::slice::from_ref(&x),
        &[v],
    )
    .unwrap();
    assert_eq!(j[0].ndim(), 0);
    let placeholder_left = toposort(&j)
        .iter()
        .flat_map(|n| n.inputs().to_vec())
        .any(|i| i.name().as_deref() == Some("pushforward_cotangent"));
    assert!(!placeholder_left);
}

/// Without static sizes the rows are the steps of a `Scan`; with them they are unrolled.
#[test]
fn jacobians_of_run_time_sizes_loop_and_static_ones_unroll() {
    let x = vector("x");
    let j = jacobian(&x.exp(), std::slice::from_ref(&x), &opts()).unwrap();
    assert_eq!(j[0].ndim(), 2);
    assert!(
        toposort(&j)
            .iter()
            .any(|n| matches!(n.op(), Some(oxtensor_graph::Op::Scan(_))))
    );
    let h = hessian(
        &b::sum(&x, None, false).unwrap(),
        std::slice::from_ref(&x),
        &opts(),
    )
    .unwrap();
    assert_eq!(h[0].ndim(), 2);
    let s = input("s", DType::F64, &[Some(3)]);
    let j = jacobian(&b::sqr(&s).unwrap(), std::slice::from_ref(&s), &opts()).unwrap();
    assert_eq!(j[0].ty().shape.as_slice(), &[Some(3), Some(3)]);
    let m = input("m", DType::F64, &[Some(2), Some(2)]);
    let h = hessian(
        &b::sum(&b::sqr(&m).unwrap(), None, false).unwrap(),
        std::slice::from_ref(&m),
        &opts(),
    )
    .unwrap();
    assert_eq!(
        h[0].ty().shape.as_slice(),
        &[Some(2), Some(2), Some(2), Some(2)]
    );
    let err = hessian(&b::sqr(&m).unwrap(), std::slice::from_ref(&m), &opts()).unwrap_err();
    assert!(matches!(err, GradError::NonScalarCost { .. }));
    let known = GradOptions {
        known_grads: vec![(m.clone(), m.clone())],
        ..opts()
    };
    assert!(matches!(
        jacobian(&m, std::slice::from_ref(&m), &known).unwrap_err(),
        GradError::Invalid(_)
    ));
    // Disconnected wrt in a jacobian: policy, then zeros.
    let other = input("other", DType::F64, &[Some(2)]);
    let err = jacobian(&b::sqr(&s).unwrap(), std::slice::from_ref(&other), &opts()).unwrap_err();
    assert!(matches!(err, GradError::Disconnected { .. }));
    // A linear cost has a zero Hessian without error.
    let h = hessian(
        &b::sum(&s, None, false).unwrap(),
        std::slice::from_ref(&s),
        &opts(),
    )
    .unwrap();
    assert_eq!(h[0].ty().shape.as_slice(), &[Some(3), Some(3)]);
}

#[test]
fn every_differentiable_scalar_op_builds_a_gradient_of_the_right_type() {
    let x = input("x", DType::F64, &[Some(1), None]);
    let y = input("y", DType::F64, &[None, None]);
    let z = input("z", DType::F64, &[None, Some(1)]);
    let c = input("c", DType::Bool, &[None, None]);
    let xs = [x.clone(), y.clone(), z.clone()];
    for op in ScalarOp::ALL_BUT_CAST {
        let args: Vec<Var> = match op {
            ScalarOp::And | ScalarOp::Or | ScalarOp::Xor => vec![c.clone(), c.clone()],
            ScalarOp::Invert => vec![c.clone()],
            ScalarOp::Switch => vec![c.clone(), x.clone(), y.clone()],
            _ => match op.arity() {
                oxtensor_graph::Arity::Fixed(n) => xs[..n].to_vec(),
                oxtensor_graph::Arity::Variadic => xs.to_vec(),
            },
        };
        let out = b::elemwise(op, &args).unwrap();
        let cost = b::sum(&b::cast(&out, DType::F64).unwrap(), None, false).unwrap();
        let wrt: Vec<Var> = xs.iter().filter(|v| args.contains(v)).cloned().collect();
        let o = GradOptions {
            disconnected_inputs: DisconnectedInputs::Ignore,
            ..opts()
        };
        let g = grad(&cost, &wrt, &o).unwrap_or_else(|e| panic!("{op}: {e}"));
        for (w, g) in wrt.iter().zip(g) {
            assert_eq!(var(g).ty(), w.ty(), "{op}");
        }
    }
}
