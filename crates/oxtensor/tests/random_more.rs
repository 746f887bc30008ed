//! Random variables drawn by loops of NumPy calls in PyTensor: `choice` without replacement
//! (with and without `p`, of an integer population or of an array's rows) and `permutation`
//! of arrays, batched by `size`. Values were written by NumPy 2.4.6; both backends are checked,
//! and the next generator is the advanced state.

use oxtensor::random::{self, Distribution, Generator, default_rng};
use oxtensor::{DType, Tensor, Var, function, ops};
use random_common::{draws_in_all_modes, ints, rng_const};

use crate::random_common;

/// Runs `(next_rng, draw)` in every mode: the draw has shape `shape` and values `want`, and
/// the next generator is `after`.
fn check_shapes(next: &Var, draw: &Var, shape: &[usize], want: &[f64], after: &Generator) {
    for (mode, t) in draws_in_all_modes(next, draw, after) {
        assert_eq!(t.shape(), shape, "{mode:?}");
        assert_eq!(t.to_vec_as::<f64>(), want, "{mode:?}");
    }
}

#[test]
fn choice_without_replacement_of_a_population_size() {
    // np.random.default_rng(21).choice(10, size=(2, 3), replace=False)
    let (next, x) = random::random_variable(
        Distribution::ChoiceWithoutReplacement,
        &rng_const(21),
        None,
        &[Var::int_constant(10), ints(&[2, 3])],
        Some(DType::I64),
    )
    .expect("choice");
    assert_eq!(x.ty().shape.as_slice(), &[Some(2), Some(3)]);
    let mut g = default_rng(21);
    g.choice_without_replacement(10, 6).expect("valid");
    check_shapes(&next, &x, &[2, 3], &[8.0, 9.0, 7.0, 4.0, 1.0, 2.0], &g);
}

#[test]
fn weighted_choice_without_replacement_of_an_array() {
    // np.random.default_rng(23).choice([1.5, 2.5, 3.5, 4.5, 5.5], 3, replace=False,
    //                                  p=[.1, .2, .3, .25, .15])
    let a = Var::constant(Tensor::from_slice(&[1.5, 2.5, 3.5, 4.5, 5.5], &[5]).expect("a"));
    let p = Var::constant(Tensor::from_slice(&[0.1, 0.2, 0.3, 0.25, 0.15], &[5]).expect("p"));
    let (next, x) = random::random_variable(
        Distribution::ChoiceWithoutReplacementP,
        &rng_const(23),
        None,
        &[a, p, ints(&[3])],
        Some(DType::F64),
    )
    .expect("choice");
    let mut g = default_rng(23);
    g.choice_without_replacement_p(&[0.1, 0.2, 0.3, 0.25, 0.15], 3)
        .expect("valid");
    check_shapes(&next, &x, &[3], &[4.5, 2.5, 1.5], &g);
}

#[test]
fn choice_errors_name_the_problem() {
    let (_, x) = random::random_variable(
        Distribution::ChoiceWithoutReplacement,
        &rng_const(1),
        None,
        &[Var::int_constant(3), ints(&[4])],
        Some(DType::I64),
    )
    .expect("build");
    let err = function(&[], &[x])
        .build()
        .expect("compile")
        .call(&[])
        .expect_err("sample larger than population");
    assert!(err.to_string().contains("larger sample"), "{err}");
    let a = Var::constant(Tensor::from_slice(&[1.0, 2.0], &[2]).expect("a"));
    let p = Var::constant(Tensor::from_slice(&[0.5, 0.7], &[2]).expect("p"));
    let (_, y) = random::random_variable(
        Distribution::ChoiceWithoutReplacementP,
        &rng_const(1),
        None,
        &[a, p, ints(&[1])],
        Some(DType::F64),
    )
    .expect("build");
    let err = function(&[], &[y])
        .build()
        .expect("compile")
        .call(&[])
        .expect_err("p does not sum to 1");
    assert!(err.to_string().contains("sum to 1"), "{err}");
}

#[test]
fn permutation_batched_by_size_and_of_matrix_rows() {
    // g = np.random.default_rng(24); [g.permutation([10., 20., 30., 40.]) for _ in range(3)]
    let x = Var::constant(Tensor::from_slice(&[10.0, 20.0, 30.0, 40.0], &[4]).expect("x"));
    let size = ops::random::size_vector(Some(&[Var::int_constant(3)])).expect("size");
    let (next, p) = random::random_variable(
        Distribution::Permutation,
        &rng_const(24),
        Some(&size),
        &[x],
        Some(DType::F64),
    )
    .expect("permutation");
    assert_eq!(p.ty().shape.as_slice(), &[Some(3), Some(4)]);
    let mut g = default_rng(24);
    (0..3).for_each(|_| drop(g.permutation(4)));
    let want = [
        30.0, 20.0, 40.0, 10.0, 10.0, 30.0, 20.0, 40.0, 10.0, 20.0, 30.0, 40.0,
    ];
    check_shapes(&next, &p, &[3, 4], &want, &g);

    // np.random.default_rng(25).permutation(np.arange(6.).reshape(3, 2)): rows shuffled.
    let m = Var::constant(Tensor::from_slice(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[3, 2]).expect("m"));
    let (next, q) = random::random_variable(
        Distribution::Permutation,
        &rng_const(25),
        None,
        &[m],
        Some(DType::F64),
    )
    .expect("permutation");
    let mut g = default_rng(25);
    drop(g.permutation(3));
    check_shapes(&next, &q, &[3, 2], &[2.0, 3.0, 4.0, 5.0, 0.0, 1.0], &g);
}
