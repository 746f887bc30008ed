//! [`ScalarDraws`], the allocation-free draws a staged loop's host call makes, against the
//! interpreter's random kernel: for the distributions it takes (scalar ones and categoricals,
//! with and without a `size`, parameters broadcast or shared), the same draws and the same
//! next generator, bit for bit; for those it does not take, `None`, so the caller runs the
//! kernel.

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::random::{Distribution, RandomOp};
use oxtensor_random::default_rng;
use oxtensor_runtime::kernels::random::{ScalarDraws, generator_to_tensor, random};

/// A draw of `dist` as `dtype`, with a `size` of `size_ndim` entries when given.
fn op(dist: Distribution, dtype: DType, size_ndim: Option<usize>) -> RandomOp {
    RandomOp {
        dist,
        dtype,
        size_ndim,
    }
}

/// Draws `r` from `params` over `batch` (with `size` as its `size` input) both ways and
/// checks they agree; returns the draws.
fn agree(what: &str, r: RandomOp, size: &[i64], params: &[Tensor], batch: &[usize]) -> Tensor {
    let rng = generator_to_tensor(&default_rng(7));
    let size_t = Tensor::from_slice(size, &[size.len()]).expect("size");
    let mut inputs = vec![&rng, &size_t];
    inputs.extend(params);
    let want = random(&r, &inputs).expect("the kernel draws");
    let shapes: Vec<(DType, &[usize])> = params.iter().map(|p| (p.dtype(), p.shape())).collect();
    let mut draws = ScalarDraws::new(r, &shapes, batch)
        .unwrap_or_else(|| panic!("{what}: ScalarDraws takes it"));
    for (k, p) in params.iter().enumerate() {
        // The parameter broadcast to the batch shape and then its core, in C order.
        let mut shape = batch.to_vec();
        shape.extend_from_slice(&p.shape()[p.ndim() - r.dist.param_core_ndims(k)..]);
        let values = p
            .broadcast_to(&shape)
            .expect("broadcast")
            .to_vec_as::<f64>();
        draws.load_param(k, values.into_iter());
    }
    let next = draws
        .draw(&rng.to_vec_as::<u64>(), size)
        .expect("ScalarDraws draws");
    assert_eq!(
        next.to_vec(),
        want[0].to_vec_as::<u64>(),
        "{what}: the next generator"
    );
    let mut got = vec![0i64; draws.count()];
    draws.write(&mut got);
    assert_eq!(got, want[1].to_vec_as::<i64>(), "{what}: the draws");
    want[1].clone()
}

fn f64s(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape).expect("tensor")
}

#[test]
fn categoricals_draw_what_the_kernel_draws() {
    let cat = |size_ndim| op(Distribution::Categorical, DType::I64, size_ndim);
    let row = f64s(&[0.2, 0.5, 0.3], &[3]);
    let rows = f64s(&[0.2, 0.5, 0.3, 0.6, 0.1, 0.3], &[2, 3]);
    let one = agree("one row", cat(None), &[], std::slice::from_ref(&row), &[]);
    assert_eq!(one.shape(), [0usize; 0]);
    let batch = agree(
        "two rows",
        cat(None),
        &[],
        std::slice::from_ref(&rows),
        &[2],
    );
    assert_eq!(batch.shape(), [2]);
    let sized = agree(
        "two rows, size (4, 2)",
        cat(Some(2)),
        &[4, 2],
        std::slice::from_ref(&rows),
        &[4, 2],
    );
    // Every index is one of the three categories.
    let idx = sized.to_vec_as::<i64>();
    assert!(idx.iter().all(|i| (0..3).contains(i)), "{idx:?}");
    agree(
        "one row shared by a size (5,)",
        cat(Some(1)),
        &[5],
        std::slice::from_ref(&row),
        &[5],
    );
    let narrow = Tensor::from_slice(&[0.25f32, 0.75], &[2]).expect("p");
    agree("float32 probabilities", cat(None), &[], &[narrow], &[]);
}

#[test]
fn scalar_distributions_draw_what_the_kernel_draws() {
    let lam = f64s(&[0.5, 4.0, 30.0], &[3]);
    agree(
        "poisson",
        op(Distribution::Poisson, DType::I64, None),
        &[],
        &[lam],
        &[3],
    );
}

#[test]
fn invalid_probabilities_are_the_kernels_error() {
    let r = op(Distribution::Categorical, DType::I64, None);
    let p = f64s(&[0.5, 0.6], &[2]);
    let mut draws = ScalarDraws::new(r, &[(DType::F64, &[2])], &[]).expect("taken");
    draws.load_param(0, [0.5, 0.6].into_iter());
    let rng = generator_to_tensor(&default_rng(1));
    let size = Tensor::from_slice::<i64>(&[], &[0]).expect("size");
    let kernel = random(&r, &[&rng, &size, &p]).expect_err("the kernel refuses");
    let ours = draws
        .draw(&rng.to_vec_as::<u64>(), &[])
        .expect_err("ScalarDraws refuses");
    assert_eq!(ours.to_string(), kernel.to_string());
}

#[test]
fn vector_valued_draws_are_left_to_the_kernel() {
    let r = op(Distribution::Dirichlet, DType::F64, None);
    assert!(ScalarDraws::new(r, &[(DType::F64, &[3])], &[]).is_none());
}
