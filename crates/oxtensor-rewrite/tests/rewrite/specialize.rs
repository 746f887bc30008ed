//! The specialization rules and constant folding: expected graphs and equal values.

use crate::common::*;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::build as b;
use oxtensor_graph::{Op, ScalarOp, TensorType, Var};
use oxtensor_rewrite::rules::{FOLD, LOWER_RANK, SPECIALIZE, USELESS};

fn specialize(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS, SPECIALIZE]).0
}

#[test]
fn small_powers_become_multiplications_roots_and_reciprocals() {
    let x = vector("x");
    let cases: Vec<(f64, Var)> = vec![
        (2.0, x.sqr()),
        (3.0, &x.sqr() * &x),
        (4.0, x.sqr().sqr()),
        (0.5, x.sqrt()),
        (-1.0, x.reciprocal()),
        (-2.0, x.sqr().reciprocal()),
        (-0.5, x.sqrt().reciprocal()),
    ];
    for (e, want) in cases {
        let before = x.powf(e);
        let after = specialize(&before);
        assert!(after == want, "x ** {e}:\n{}", show(&after));
        assert_same_values(
            std::slice::from_ref(&x),
            &before,
            &after,
            &[&[6]],
            (0.1, 3.0),
            1e-14,
        );
    }
    // Other exponents stay.
    let (after, stats) = with_rules(&x.powf(5.0), &[FOLD, USELESS, SPECIALIZE]);
    assert_eq!(
        stats.hits.keys().copied().collect::<Vec<_>>(),
        ["constant_folding"]
    );
    assert_eq!(
        after.owner().map(|(op, _)| op.clone()),
        Some(Op::Elemwise(ScalarOp::Pow))
    );
}

#[test]
fn integer_powers_keep_integer_types() {
    let i = Var::input(Some("i"), TensorType::new(DType::I32, &[None]));
    assert_same(&specialize(&i.powf(2)), &i.sqr());
    // sqrt of an int32 would be a float: x ** 0.5 on ints is float64 already, so it applies
    // to the cast.
    let r = specialize(&i.powf(0.5));
    assert_same(&r, &i.astype(DType::F64).sqrt());
}

#[test]
fn times_minus_one_is_a_negation_and_times_self_a_square() {
    let x = vector("x");
    assert_same(&specialize(&(&x * -1.0)), &-&x);
    assert_same(&specialize(&(&x * &x)), &x.sqr());
}

#[test]
fn inverse_pairs_cancel_where_the_domain_allows() {
    let x = vector("x");
    assert_same(&specialize(&x.exp().log()), &x);
    assert_same(&specialize(&x.expm1().log1p()), &x);
    let before = x.log().exp();
    let after = specialize(&before);
    let nan = Var::constant(Tensor::scalar(f64::NAN).reshape(&[1]).unwrap());
    let zero = Var::constant(Tensor::scalar(0.0).reshape(&[1]).unwrap());
    assert_same(
        &after,
        &b::switch(&b::ge(&x, &zero).unwrap(), &x, &nan).unwrap(),
    );
    let args = [Tensor::from_slice(&[2.0, 0.0, -1.0, f64::INFINITY], &[4]).unwrap()];
    let got = eval1(std::slice::from_ref(&x), &after, &args);
    assert_close(&got, &[2.0, 0.0, f64::NAN, f64::INFINITY], 0.0);
    // log(exp(x)) is exact even where exp overflows.
    let got = eval1(std::slice::from_ref(&x), &fast_run(&x.exp().log()), &args);
    assert_close(&got, &[2.0, 0.0, -1.0, f64::INFINITY], 0.0);
    let big = [Tensor::from_slice(&[1000.0], &[1]).unwrap()];
    assert_eq!(
        eval1(std::slice::from_ref(&x), &fast_run(&x.exp().log()), &big),
        vec![1000.0]
    );
}

#[test]
fn sum_of_products_of_vectors_is_a_dot() {
    let (x, y) = (vector("x"), vector("y"));
    let before = (&x * &y).sum(None);
    let after = specialize(&before);
    assert_same(&after, &x.matmul(&y));
    assert_same_values(
        &[x.clone(), y.clone()],
        &before,
        &after,
        &[&[9], &[9]],
        (-1.0, 1.0),
        1e-12,
    );
    // A broadcast operand is not a dot product.
    let one = input("one", &[Some(1)]);
    let keep = (&x * &one).sum(None);
    assert_same(&specialize(&keep), &keep);
}

#[test]
fn constant_subgraphs_fold() {
    let two = Var::scalar_constant(2.0, DType::F64);
    let before = (&two.exp() + 1.0).log();
    let after = with_rules(&before, &[FOLD]).0;
    let want = (2.0f64.exp() + 1.0).ln();
    let got = after.constant_value().map(|t| t.to_vec_as::<f64>());
    assert_eq!(got, Some(vec![want]));
    // Shapes of constants fold too; large results do not.
    let big = b::zeros(&[200, 200], DType::F64).unwrap();
    let kept = with_rules(&big, &[FOLD]).0;
    assert!(matches!(kept.owner(), Some((Op::Alloc { .. }, _))));
    let small = b::ones(&[2, 3], DType::F32).unwrap();
    let folded = with_rules(&small, &[FOLD]).0;
    assert_eq!(
        folded.constant_value().map(|t| t.shape().to_vec()),
        Some(vec![2, 3])
    );
}

fn lower(v: &Var) -> Var {
    with_rules(v, &[FOLD, USELESS, SPECIALIZE, LOWER_RANK]).0
}

#[test]
fn broadcast_dimshuffles_move_out_of_elementwise_ops() {
    let (a, bv) = (vector("a"), vector("b"));
    let c = Var::input(Some("c"), TensorType::scalar(DType::F64));
    let col = |v: &Var| b::dimshuffle(v, &[Some(0), None]).unwrap();
    let cc = b::dimshuffle(&c, &[None, None]).unwrap();
    // a[:, None] · b[:, None] + c[None, None] → (a · b + c[None])[:, None]
    let before = &(&col(&a) * &col(&bv)) + &cc;
    let after = lower(&before);
    let want = col(&(&(&a * &bv) + &b::dimshuffle(&c, &[None]).unwrap()));
    assert_same(&after, &want);
    assert_same_values(
        &[a.clone(), bv.clone(), c],
        &before,
        &after,
        &[&[5], &[5], &[]],
        (-2.0, 2.0),
        0.0,
    );
    // A constant goes down to the new rank too: sigmoid(a[:, None] + 1) → sigmoid(a + 1)[:, None].
    let before = (&col(&a) + 1.0).sigmoid();
    assert_same(&lower(&before), &col(&lower(&(&a + 1.0).sigmoid())));
    // A transposition is not a broadcast: left alone.
    let m = matrix("m");
    let before = m.t().exp() * m.t();
    assert_same(&lower(&before), &before);
    // Dimshuffles of different orders: left alone.
    let row = b::dimshuffle(&bv, &[None, Some(0)]).unwrap();
    let before = &col(&a) * &row;
    assert_same(&lower(&before), &before);
}

#[test]
fn a_padded_matrix_product_is_a_matrix_vector_product() {
    let (m, v) = (matrix("m"), vector("v"));
    let col = b::dimshuffle(&v, &[Some(0), None]).unwrap();
    let before = b::dimshuffle(&b::matmul(&m, &col).unwrap(), &[Some(0)]).unwrap();
    let after = lower(&before);
    assert_same(&after, &b::matmul(&m, &v).unwrap());
    assert_same_values(
        &[m.clone(), v.clone()],
        &before,
        &after,
        &[&[3, 4], &[4]],
        (-2.0, 2.0),
        1e-12,
    );
    let row = b::dimshuffle(&v, &[None, Some(0)]).unwrap();
    let before = b::dimshuffle(&b::matmul(&row, &m.t()).unwrap(), &[Some(1)]).unwrap();
    assert_same(&lower(&before), &b::matmul(&v, &m.t()).unwrap());
}
