//! The useless-operation rules: each input graph rewrites to the expected graph (the same
//! interned variable), and both give equal values.

use crate::common::*;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::build as b;
use oxtensor_graph::{Axes, GradMarker, Op, ReduceOp, ScalarOp, Var};
use oxtensor_rewrite::Optimizer;
use oxtensor_rewrite::rules::{FOLD, USELESS};

fn useless(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS]).0
}

#[test]
fn arithmetic_identities_vanish() {
    let x = vector("x");
    for (before, name) in [
        (&x + 0.0, "x + 0"),
        (0.0 + &x, "0 + x"),
        (&x * 1.0, "x * 1"),
        (&x / 1.0, "x / 1"),
        (x.powf(1.0), "x ** 1"),
        (&x - 0.0, "x - 0"),
        (-(-&x), "-(-x)"),
        (&(&x + 0.0) * 1.0, "(x + 0) * 1"),
    ] {
        let after = useless(&before);
        assert!(after == x, "{name}:\n{}", show(&after));
        assert_same_values(
            std::slice::from_ref(&x),
            &before,
            &after,
            &[&[7]],
            (-3.0, 3.0),
            0.0,
        );
    }
}

#[test]
fn zero_minus_x_is_a_negation() {
    let x = vector("x");
    let before = 0.0 - &x;
    let after = useless(&before);
    assert_same(&after, &-&x);
    assert_same_values(
        std::slice::from_ref(&x),
        &before,
        &after,
        &[&[5]],
        (-3.0, 3.0),
        0.0,
    );
}

#[test]
fn identity_keeps_the_promoted_dtype() {
    // int32 + 0.0 (a float64 constant) is float64: the rewrite is a cast, not x itself.
    let x = Var::input(
        Some("i"),
        oxtensor_graph::TensorType::new(DType::I32, &[None]),
    );
    let before = b::add(&x, &Var::scalar_constant(0.0, DType::F64)).unwrap();
    let after = useless(&before);
    assert_same(&after, &b::cast(&x, DType::F64).unwrap());
}

#[test]
fn double_transpose_and_composed_dimshuffles() {
    let m = matrix("m");
    assert_same(&useless(&m.t().t()), &m);
    // expand_dims then transpose: one dimshuffle.
    let e = b::expand_dims(&m, 0).unwrap();
    let before = b::transpose(&e, Some(&[2, 0, 1])).unwrap();
    let after = useless(&before);
    assert_same(
        &after,
        &b::dimshuffle(&m, &[Some(1), None, Some(0)]).unwrap(),
    );
    assert_same_values(
        std::slice::from_ref(&m),
        &before,
        &after,
        &[&[2, 3]],
        (-1.0, 1.0),
        0.0,
    );
}

#[test]
fn reshape_to_own_shape() {
    let m = matrix("m");
    let own = b::reshape_sym(
        &m,
        &[b::shape_i(&m, 0).unwrap(), b::shape_i(&m, 1).unwrap()],
    );
    assert_same(&useless(&own.unwrap()), &m);
    let x = vector("x");
    assert_same(&useless(&b::flatten(&x, 1).unwrap()), &x);
    let s = input("s", &[Some(2), Some(3)]);
    assert_same(&useless(&s.reshape(&[2, 3])), &s);
    assert_same(&useless(&s.reshape(&[2, -1])), &s);
    // A real reshape stays.
    let r = s.reshape(&[3, 2]);
    assert_same(&useless(&r), &r);
}

#[test]
fn cast_to_own_dtype_and_reduce_over_no_axes() {
    let x = vector("x");
    let c = Var::apply1(
        Op::Elemwise(ScalarOp::Cast(DType::F64)),
        std::slice::from_ref(&x),
    )
    .unwrap();
    assert_same(&useless(&c), &x);
    let sum = |axes: Axes, v: &Var| {
        Var::apply1(
            Op::Reduce {
                op: ReduceOp::Sum,
                axes,
            },
            std::slice::from_ref(v),
        )
    };
    assert_same(&useless(&sum(Axes::new(), &x).unwrap()), &x);
    let i = Var::input(
        Some("i"),
        oxtensor_graph::TensorType::new(DType::I16, &[None]),
    );
    assert_same(
        &useless(&sum(Axes::new(), &i).unwrap()),
        &b::cast(&i, DType::I64).unwrap(),
    );
}

#[test]
fn switch_on_a_constant_condition() {
    let x = vector("x");
    let y = vector("y");
    let t = Var::constant(Tensor::scalar(true));
    let f = Var::constant(Tensor::scalar(false));
    assert_same(&useless(&b::switch(&t, &x, &y).unwrap()), &x);
    assert_same(&useless(&b::switch(&f, &x, &y).unwrap()), &y);
    let c = Var::input(
        Some("c"),
        oxtensor_graph::TensorType::new(DType::Bool, &[None]),
    );
    assert_same(&useless(&b::switch(&c, &x, &x).unwrap()), &x);
    // A branch of another static shape than the result is not a replacement.
    let one = input("one", &[Some(1)]);
    let (_, stats) = with_rules(&b::switch(&t, &one, &y).unwrap(), &[FOLD, USELESS]);
    assert!(!stats.hits.contains_key("switch_const"), "{stats:?}");
}

#[test]
fn specify_shape_already_known() {
    let s = input("s", &[Some(3)]);
    assert_same(&useless(&b::specify_shape(&s, &[Some(3)]).unwrap()), &s);
    let x = vector("x");
    let spec = b::specify_shape(&x, &[Some(3)]).unwrap();
    assert_same(&useless(&spec), &spec);
}

#[test]
fn times_zero_and_minus_self_are_zeros_of_the_right_shape() {
    let x = vector("x");
    let zeros = b::alloc(
        &Var::scalar_constant(0.0, DType::F64),
        &[b::shape_i(&x, 0).unwrap()],
    )
    .unwrap();
    for before in [&x * 0.0, &x - &x] {
        let after = useless(&before);
        assert_same(&after, &zeros);
        assert_same_values(
            std::slice::from_ref(&x),
            &before,
            &after,
            &[&[4]],
            (-2.0, 2.0),
            0.0,
        );
    }
    // Static shapes give a constant (after folding).
    let s = input("s", &[Some(3)]);
    let after = useless(&(&s * 0.0));
    assert_eq!(
        after.constant_value().map(|t| t.to_vec_as::<f64>()),
        Some(vec![0.0; 3])
    );
}

#[test]
fn nan_unsafe_rules_follow_the_mode() {
    let x = vector("x");
    let before = &x * 0.0;
    // FAST_RUN applies them (as PyTensor does)…
    let (out, report) = optimize(std::slice::from_ref(&before), &Optimizer::FAST_RUN);
    assert!(report.hits("mul_zero") == 1 && out[0] != before);
    // …excluding the tag keeps IEEE semantics: inf * 0 is NaN.
    let strict = Optimizer::FAST_RUN.excluding(&["nan_unsafe"]);
    let (out, report) = optimize(std::slice::from_ref(&before), &strict);
    assert_eq!(report.hits("mul_zero"), 0);
    let inf = Tensor::from_slice(&[f64::INFINITY, 1.0], &[2]).unwrap();
    let vals = eval1(std::slice::from_ref(&x), &out[0], &[inf]);
    assert!(vals[0].is_nan() && vals[1] == 0.0, "{vals:?}");
    // FAST_COMPILE leaves them out too.
    let (_, report) = optimize(std::slice::from_ref(&before), &Optimizer::FAST_COMPILE);
    assert_eq!(report.hits("mul_zero"), 0);
}

#[test]
fn gradient_markers_are_dropped() {
    let x = vector("x");
    let z = Var::apply1(
        Op::GradMarker(GradMarker::Disconnected),
        std::slice::from_ref(&x),
    );
    let before = z.unwrap().exp();
    assert_same(&useless(&before), &x.exp());
}

#[test]
fn elementwise_ops_of_a_filled_tensor_fold_into_the_fill() {
    let x = vector("x");
    // exp(x - x) → exp(alloc(0, n)) → alloc(1, n)
    let before = (&x - &x).exp() * 2.0;
    let after = useless(&before);
    let n = b::shape_i(&x, 0).unwrap();
    assert_same(
        &after,
        &b::alloc(&Var::scalar_constant(2.0, DType::F64), &[n]).unwrap(),
    );
    assert_same_values(
        std::slice::from_ref(&x),
        &before,
        &after,
        &[&[3]],
        (-1.0, 1.0),
        0.0,
    );
}
