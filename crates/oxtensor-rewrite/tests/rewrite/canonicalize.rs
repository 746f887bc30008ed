//! The canonicalization rules (arithmetic, layout, shapes): expected graphs and equal values.

use crate::common::*;
use oxtensor_data::DType;
use oxtensor_graph::build as b;
use oxtensor_graph::{Op, ScalarOp, TensorType, Var};
use oxtensor_rewrite::Optimizer;
use oxtensor_rewrite::rules::{ALGEBRA, FOLD, LAYOUT, SHAPE, USELESS};

fn canon(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS, ALGEBRA, LAYOUT, SHAPE]).0
}

fn c(value: f64) -> Var {
    Var::constant(oxtensor_data::Tensor::scalar(value).reshape(&[1]).unwrap())
}

fn add(xs: &[Var]) -> Var {
    Var::apply1(Op::Elemwise(ScalarOp::Add), xs).unwrap()
}

fn mul(xs: &[Var]) -> Var {
    Var::apply1(Op::Elemwise(ScalarOp::Mul), xs).unwrap()
}

#[test]
fn nested_sums_flatten_with_constants_last_and_folded() {
    let (x, y, z) = (vector("x"), vector("y"), vector("z"));
    // (x + 1) + (y + (2 + z))  →  add(x, y, z, 3)
    let before = (&x + 1.0) + (&y + (2.0 + &z));
    let after = canon(&before);
    assert_same(&after, &add(&[x.clone(), y.clone(), z.clone(), c(3.0)]));
    assert_same_values(
        &[x, y, z],
        &before,
        &after,
        &[&[5], &[5], &[5]],
        (-2.0, 2.0),
        1e-12,
    );
}

#[test]
fn nested_products_flatten_with_constants_last() {
    let (x, y) = (vector("x"), vector("y"));
    // 2 * (x * (y * 3))  →  mul(x, y, 6)
    let before = 2.0 * (&x * (&y * 3.0));
    let after = canon(&before);
    assert_same(&after, &mul(&[x.clone(), y.clone(), c(6.0)]));
    assert_same_values(&[x, y], &before, &after, &[&[5], &[5]], (-2.0, 2.0), 1e-12);
}

#[test]
fn a_shared_inner_sum_is_not_duplicated() {
    let (x, y, z) = (vector("x"), vector("y"), vector("z"));
    let inner = &x + &y;
    let outer = &inner + &z;
    // (Without fusion, which would make both sums outputs of one Composite.)
    let (outs, _) = optimize(
        &[outer.clone(), inner.clone()],
        &oxtensor_rewrite::Optimizer::FAST_RUN.excluding(&["fusion"]),
    );
    assert_same(&outs[0], &outer);
}

#[test]
fn subtraction_and_negation_forms() {
    let (x, y) = (vector("x"), vector("y"));
    let cases: Vec<(Var, Var, &str)> = vec![
        (&x - 2.0, add(&[x.clone(), c(-2.0)]), "x - c → x + (-c)"),
        (&x - &(-&y), &x + &y, "x - (-y) → x + y"),
        (&x + &(-&y), &x - &y, "x + (-y) → x - y"),
        (&(-&x) + &y, &y - &x, "(-x) + y → y - x"),
        (-(&x - &y), &y - &x, "-(a - b) → b - a"),
        (&(-&x) * &y, -(&x * &y), "(-x) * y → -(x * y)"),
        (&(-&x) * &(-&y), &x * &y, "(-x) * (-y) → x * y"),
        (
            &(-&x) * 3.0,
            mul(&[x.clone(), c(-3.0)]),
            "(-x) * c → x * (-c)",
        ),
        (
            -(&x * 3.0),
            mul(&[x.clone(), c(-3.0)]),
            "-(x * c) → x * (-c)",
        ),
        (&(-&x) / &y, -(&x / &y), "(-x) / y → -(x / y)"),
        (&x / &(-&y), -(&x / &y), "x / (-y) → -(x / y)"),
        (&(-&x) / &(-&y), &x / &y, "(-x) / (-y) → x / y"),
        (
            &(-&x) / 4.0,
            b::true_div(&x, &c(-4.0)).unwrap(),
            "(-x) / c → x / (-c)",
        ),
        (
            -(&x / 4.0),
            b::true_div(&x, &c(-4.0)).unwrap(),
            "-(x / c) → x / (-c)",
        ),
    ];
    for (before, want, name) in cases {
        let after = canon(&before);
        assert!(
            after == want,
            "{name}:\n{}expected:\n{}",
            show(&after),
            show(&want)
        );
        let ins = [x.clone(), y.clone()];
        assert_same_values(&ins, &before, &after, &[&[6], &[6]], (0.5, 3.0), 1e-12);
    }
}

#[test]
fn power_of_power() {
    let x = vector("x");
    // (x ** 2) ** 3 → x ** 6
    let before = x.powf(2.0).powf(3.0);
    let after = canon(&before);
    assert_same(&after, &b::pow(&x, &c(6.0)).unwrap());
    assert_same_values(
        std::slice::from_ref(&x),
        &before,
        &after,
        &[&[5]],
        (-2.0, 2.0),
        1e-12,
    );
    // (x ** 2) ** 0.5 is |x|, not x, and (x ** 0.5) ** 2 is NaN for x < 0: both left alone.
    for keep in [x.powf(2.0).powf(0.5), x.powf(0.5).powf(2.0)] {
        let (_, stats) = with_rules(&keep, &[FOLD, USELESS, ALGEBRA, LAYOUT, SHAPE]);
        assert!(!stats.hits.contains_key("pow_pow"), "{stats:?}");
    }
}

#[test]
fn scalar_constants_leave_sums() {
    let m = matrix("m");
    let before = (&m * 3.0).sum(Some(&[1]));
    let after = canon(&before);
    assert_same(&after, &mul(&[m.sum(Some(&[1])), c(3.0)]));
    assert_same_values(
        std::slice::from_ref(&m),
        &before,
        &after,
        &[&[3, 4]],
        (-2.0, 2.0),
        1e-12,
    );
    let before = (-&m).sum(None);
    let after = canon(&before);
    assert_same(&after, &-&m.sum(None));
}

#[test]
fn dimshuffles_are_lifted_through_elementwise_ops() {
    let (m, n) = (matrix("m"), matrix("n"));
    let before = (m.exp() + &n).t();
    let after = canon(&before);
    assert_same(&after, &(m.t().exp() + n.t()));
    assert_same_values(
        &[m, n],
        &before,
        &after,
        &[&[2, 3], &[2, 3]],
        (-1.0, 1.0),
        0.0,
    );
    // Lifting meets a transpose and cancels it.
    let (p, q) = (matrix("p"), matrix("q"));
    let before = (p.t() * &q).t();
    assert_same(&canon(&before), &(&p * &q.t()));
}

#[test]
fn nested_reductions_merge() {
    let t = input("t", &[None, None, None]);
    let before = t.sum(Some(&[2])).sum(Some(&[0]));
    let after = canon(&before);
    assert_same(&after, &t.sum(Some(&[0, 2])));
    assert_same_values(
        std::slice::from_ref(&t),
        &before,
        &after,
        &[&[2, 3, 4]],
        (-1.0, 1.0),
        1e-12,
    );
    let before = b::max(&b::max(&t, Some(&[1]), false).unwrap(), None, false).unwrap();
    assert_same(&canon(&before), &b::max(&t, None, false).unwrap());
    // Different combining ops stay.
    let keep = b::max(&t, Some(&[1]), false).unwrap().sum(None);
    assert_same(&canon(&keep), &keep);
}

#[test]
fn lossless_cast_chains_merge() {
    let i = Var::input(Some("i"), TensorType::new(DType::I16, &[None]));
    let before = i.astype(DType::I64).astype(DType::F32);
    assert_same(&canon(&before), &i.astype(DType::F32));
    let f = vector("f");
    // float64 → float32 → float64 rounds: it stays.
    let keep = f.astype(DType::F32).astype(DType::F64);
    assert_same(&canon(&keep), &keep);
}

#[test]
fn reshape_of_reshape() {
    let x = vector("x");
    let before = x.reshape(&[2, -1]).reshape(&[-1, 2]);
    assert_same(&canon(&before), &x.reshape(&[-1, 2]));
}

#[test]
fn shapes_come_from_input_shapes() {
    let (x, y) = (vector("x"), vector("y"));
    let e = (&x + &y).exp();
    let s = b::shape_i(&e, 0).unwrap();
    // shape_i(exp(x + y), 0) → shape_i(x, 0): the elementwise ops are no longer needed.
    assert_same(&canon(&s), &b::shape_i(&x, 0).unwrap());
    let full = b::shape(&e).unwrap();
    assert_same(
        &canon(&full),
        &b::make_vector(&[b::shape_i(&x, 0).unwrap()], DType::I64).unwrap(),
    );
    // Static extents become constants; shape(x)[i] becomes shape_i.
    let st = input("st", &[Some(4), None]);
    let s0 = Var::apply1(Op::ShapeI(0), &[st.exp()]).unwrap();
    assert_eq!(canon(&s0).const_int(), Some(4));
    let static_shape = b::shape(&input("st2", &[Some(2), Some(5)])).unwrap();
    let folded = canon(&static_shape)
        .constant_value()
        .map(|t| t.to_vec_as::<i64>());
    assert_eq!(folded, Some(vec![2, 5]));
    let idx = b::shape(&st).unwrap().at(&[b::Idx::int(1)]);
    assert_same(&canon(&idx), &b::shape_i(&st, 1).unwrap());
    // Through a reshape to symbolic extents.
    let r = b::reshape_sym(&x, &[b::shape_i(&y, 0).unwrap()]).unwrap();
    assert_same(
        &canon(&b::shape_i(&r, 0).unwrap()),
        &b::shape_i(&y, 0).unwrap(),
    );
}

#[test]
fn an_alloc_an_elementwise_op_broadcasts_anyway_is_dropped() {
    let (y, z) = (vector("y"), vector("z"));
    let c = Var::input(Some("c"), TensorType::scalar(DType::F64));
    let n = b::shape_i(&y, 0).unwrap();
    let filled = b::alloc(&c, std::slice::from_ref(&n)).unwrap();
    let padded = b::dimshuffle(&c, &[None]).unwrap();
    // alloc(c, shape(y)) · y → c · y   (y has the allocated extent)
    let before = &filled * &y;
    let after = canon(&before);
    assert_same(&after, &(&padded * &y));
    let inputs = [c.clone(), y.clone()];
    assert_same_values(&inputs, &before, &after, &[&[], &[5]], (-2.0, 2.0), 0.0);
    // The extent also comes through another elementwise op of y: alloc · (1 - y), without
    // assuming anything (shape_unsafe rules excluded).
    let safe = Optimizer::FAST_RUN.excluding(&["shape_unsafe", "fusion"]);
    let one_minus = 1.0 - &y;
    let before = &filled * &one_minus;
    let (_, report) = optimize(std::slice::from_ref(&before), &safe);
    assert_eq!(report.hits("alloc_elemwise"), 1, "{report}");
    assert_same(&canon(&before), &canon(&(&padded * &one_minus)));
    // z's extent is not known to be y's: only the shape_unsafe variant drops the alloc.
    let before = &filled * &z;
    let (kept, report) = optimize(std::slice::from_ref(&before), &safe);
    assert_eq!(report.hits("alloc_elemwise"), 0);
    assert!(
        oxtensor_graph::toposort(&kept)
            .iter()
            .any(|n| matches!(n.op(), Some(Op::Alloc { .. }))),
        "{}",
        show(&kept[0])
    );
    assert_same(&canon(&before), &(&padded * &z));
}

#[test]
fn a_sum_of_an_alloc_is_the_value_times_the_count() {
    let (x, c) = (
        matrix("x"),
        Var::input(Some("c"), TensorType::scalar(DType::F64)),
    );
    let (n, m) = (b::shape_i(&x, 0).unwrap(), b::shape_i(&x, 1).unwrap());
    let filled = b::alloc(&c, &[n.clone(), m.clone()]).unwrap();
    let as_f64 = |d: &Var| b::cast(d, DType::F64).unwrap();
    // Over one axis: alloc(c·m, n). Over both: c·n·m, with no allocation left.
    let rows = b::reduce(oxtensor_graph::ReduceOp::Sum, &filled, Some(&[1]), false).unwrap();
    let want = b::alloc(&(&c * &as_f64(&m)), std::slice::from_ref(&n)).unwrap();
    assert_same(&canon(&rows), &canon(&want));
    let all = b::reduce(oxtensor_graph::ReduceOp::Sum, &filled, None, false).unwrap();
    assert_same(&canon(&all), &canon(&(&(&c * &as_f64(&n)) * &as_f64(&m))));
    // The same numbers (x gives only the extents).
    let inputs = [c.clone(), x.clone()];
    for before in [&rows, &all] {
        assert_same_values(
            &inputs,
            before,
            &canon(before),
            &[&[], &[3, 4]],
            (-2.0, 2.0),
            1e-12,
        );
    }
    // An integer sum widens its dtype, so it keeps its allocation.
    let k = Var::input(Some("k"), TensorType::scalar(DType::I32));
    let ints = b::alloc(&k, std::slice::from_ref(&n)).unwrap();
    let summed = b::reduce(oxtensor_graph::ReduceOp::Sum, &ints, None, false).unwrap();
    assert!(
        oxtensor_graph::toposort(&[canon(&summed)])
            .iter()
            .any(|n| matches!(n.op(), Some(Op::Alloc { .. })))
    );
}
