//! [`InPlaceDraws`], the allocation-free draws a staged loop's host call makes, against the
//! interpreter's random kernel: for the distributions it takes (scalar ones, categoricals,
//! beta-binomials, Dirichlet, multinomial, the three methods of the multivariate normal,
//! permutations and choices without replacement, with and without a `size`, parameters
//! broadcast or shared), the same draws and the same
//! next generator, bit for bit, the same errors; for those it does not take, `None`, so the caller runs the kernel.

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::random::{Distribution, RandomOp};
use oxtensor_random::default_rng;
use oxtensor_runtime::kernels::random::{InPlaceDraws, generator_to_tensor, random};

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
    let shapes: Vec<(DType, &[usize])> = params.iter().map(|p| (p.dtype(), p.shape())).collect();
    let mut draws = InPlaceDraws::new(r, &shapes, batch)
        .unwrap_or_else(|| panic!("{what}: InPlaceDraws takes it"));
    agree_again(what, &mut draws, 7, r, size, params, batch)
}

/// [`agree`] with the draws laid out already (drawn before, with other parameters, maybe)
/// and a generator seeded `seed`.
fn agree_again(
    what: &str,
    draws: &mut InPlaceDraws,
    seed: u128,
    r: RandomOp,
    size: &[i64],
    params: &[Tensor],
    batch: &[usize],
) -> Tensor {
    let rng = generator_to_tensor(&default_rng(seed));
    let size_t = Tensor::from_slice(size, &[size.len()]).expect("size");
    let mut inputs = vec![&rng, &size_t];
    inputs.extend(params);
    let want = random(&r, &inputs).expect("the kernel draws");
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
        .expect("InPlaceDraws draws");
    assert_eq!(
        next.to_vec(),
        want[0].to_vec_as::<u64>(),
        "{what}: the next generator"
    );
    assert_eq!(
        draws.count(),
        want[1].numel(),
        "{what}: the number of draws"
    );
    if r.dist.is_discrete() {
        let mut got = vec![0i64; draws.count()];
        draws.write(&mut got);
        assert_eq!(got, want[1].to_vec_as::<i64>(), "{what}: the draws");
    } else {
        // Bit for bit (NaN included).
        let mut got = vec![0.0f64; draws.count()];
        draws.write(&mut got);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(
            bits(&got),
            bits(&want[1].to_vec_as::<f64>()),
            "{what}: the draws {got:?}"
        );
    }
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
    let mut draws = InPlaceDraws::new(r, &[(DType::F64, &[2])], &[]).expect("taken");
    draws.load_param(0, [0.5, 0.6].into_iter());
    let rng = generator_to_tensor(&default_rng(1));
    let size = Tensor::from_slice::<i64>(&[], &[0]).expect("size");
    let kernel = random(&r, &[&rng, &size, &p]).expect_err("the kernel refuses");
    let ours = draws
        .draw(&rng.to_vec_as::<u64>(), &[])
        .expect_err("InPlaceDraws refuses");
    assert_eq!(ours.to_string(), kernel.to_string());
}

/// The draws of `r` from `params` fail as the kernel's do, with the same message.
fn same_error(what: &str, r: RandomOp, params: &[Tensor]) {
    let shapes: Vec<(DType, &[usize])> = params.iter().map(|p| (p.dtype(), p.shape())).collect();
    let mut draws = InPlaceDraws::new(r, &shapes, &[]).expect("taken");
    for (k, p) in params.iter().enumerate() {
        draws.load_param(k, p.to_vec_as::<f64>().into_iter());
    }
    let rng = generator_to_tensor(&default_rng(1));
    let size = Tensor::from_slice::<i64>(&[], &[0]).expect("size");
    let mut inputs = vec![&rng, &size];
    inputs.extend(params);
    let kernel = random(&r, &inputs).expect_err("the kernel refuses");
    let ours = draws
        .draw(&rng.to_vec_as::<u64>(), &[])
        .expect_err("InPlaceDraws refuses");
    assert_eq!(ours.to_string(), kernel.to_string(), "{what}");
}

#[test]
fn dirichlet_and_multinomial_draw_what_the_kernel_draws() {
    let dir = |size_ndim| op(Distribution::Dirichlet, DType::F64, size_ndim);
    let alpha = f64s(&[0.5, 1.0, 2.0], &[3]);
    let out = agree(
        "one alpha",
        dir(None),
        &[],
        std::slice::from_ref(&alpha),
        &[],
    );
    assert_eq!(out.shape(), [3]);
    let alphas = f64s(&[0.5, 1.0, 2.0, 3.0, 0.2, 1.5], &[2, 3]);
    agree(
        "two alphas",
        dir(None),
        &[],
        std::slice::from_ref(&alphas),
        &[2],
    );
    agree(
        "one alpha shared by a size (4,)",
        dir(Some(1)),
        &[4],
        std::slice::from_ref(&alpha),
        &[4],
    );
    // Every alpha < 0.1: NumPy's stick-breaking by betas, with a zero tail.
    let small = f64s(&[0.05, 0.02, 0.0, 0.0], &[4]);
    agree("small alphas", dir(None), &[], &[small], &[]);
    agree("zero alphas", dir(None), &[], &[f64s(&[0.0; 3], &[3])], &[]);

    let mult = |size_ndim| op(Distribution::Multinomial, DType::I64, size_ndim);
    let n = Tensor::from_slice(&[10i64], &[]).expect("n");
    let ns = Tensor::from_slice(&[10i64, 50], &[2]).expect("n");
    let p = f64s(&[0.2, 0.5, 0.3], &[3]);
    let ps = f64s(&[0.2, 0.5, 0.3, 0.1, 0.1, 0.8], &[2, 3]);
    let counts = agree("one p", mult(None), &[], &[n.clone(), p.clone()], &[]);
    assert_eq!(counts.to_vec_as::<i64>().iter().sum::<i64>(), 10);
    agree("two n and p", mult(None), &[], &[ns.clone(), ps], &[2]);
    agree("two n, one p", mult(None), &[], &[ns, p.clone()], &[2]);
    agree(
        "size (3, 2)",
        mult(Some(2)),
        &[3, 2],
        &[n.clone(), p],
        &[3, 2],
    );

    same_error("a negative alpha", dir(None), &[f64s(&[1.0, -1.0], &[2])]);
    same_error(
        "probabilities over 1",
        mult(None),
        &[n, f64s(&[0.7, 0.7, 0.0], &[3])],
    );
}

#[test]
fn beta_binomials_draw_what_the_kernel_draws() {
    let bb = |size_ndim| op(Distribution::BetaBinom, DType::I64, size_ndim);
    let n = Tensor::from_slice(&[12i64], &[]).expect("n");
    let ns = Tensor::from_slice(&[5i64, 40, 0], &[3]).expect("n");
    let (a, b) = (f64s(&[2.0], &[]), f64s(&[0.5], &[]));
    let abig = f64s(&[0.3, 4.0, 1.0], &[3]);
    agree(
        "scalars",
        bb(None),
        &[],
        &[n.clone(), a.clone(), b.clone()],
        &[],
    );
    agree("three n and a", bb(None), &[], &[ns, abig, b.clone()], &[3]);
    agree(
        "scalars drawn over a size (2, 2)",
        bb(Some(2)),
        &[2, 2],
        &[n.clone(), a.clone(), b.clone()],
        &[2, 2],
    );
    let negative = Tensor::from_slice(&[-1i64], &[]).expect("n");
    same_error("a negative n", bb(None), &[negative, a.clone(), b.clone()]);
    same_error("a zero a", bb(None), &[n, f64s(&[0.0], &[]), b]);
}

#[test]
fn multivariate_normals_draw_what_the_kernel_draws() {
    let mean = f64s(&[1.0, -2.0, 0.5], &[3]);
    let means = f64s(&[1.0, -2.0, 0.5, 0.0, 3.0, -1.0], &[2, 3]);
    let cov = f64s(&[2.0, 0.3, 0.1, 0.3, 1.0, -0.2, 0.1, -0.2, 0.5], &[3, 3]);
    let other = f64s(&[1.0, 0.5, 0.0, 0.5, 2.0, 0.1, 0.0, 0.1, 3.0], &[3, 3]);
    let mut both = cov.to_vec_as::<f64>();
    both.extend(other.to_vec_as::<f64>());
    let covs = f64s(&both, &[2, 3, 3]);
    // Indefinite: `eigh` gives NaN columns, `svd` draws with |cov|, `cholesky` refuses.
    let indefinite = f64s(&[1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0], &[3, 3]);
    for dist in [
        Distribution::MvNormal,
        Distribution::MvNormalSvd,
        Distribution::MvNormalEigh,
    ] {
        let r = |size_ndim| op(dist, DType::F64, size_ndim);
        let name = dist.name();
        let one = agree(name, r(None), &[], &[mean.clone(), cov.clone()], &[]);
        assert_eq!(one.shape(), [3]);
        agree(name, r(None), &[], &[means.clone(), cov.clone()], &[2]);
        agree(name, r(None), &[], &[mean.clone(), covs.clone()], &[2]);
        agree(
            name,
            r(Some(2)),
            &[2, 2],
            &[means.clone(), covs.clone()],
            &[2, 2],
        );
        // The same draws again with another covariance (the kept factor is not reused), and
        // again with the first one.
        let shapes = [(DType::F64, &[3][..]), (DType::F64, &[3, 3][..])];
        let mut draws = InPlaceDraws::new(r(None), &shapes, &[]).expect("taken");
        for (seed, c) in [(3, &cov), (4, &cov), (5, &other), (6, &cov)] {
            let params = [mean.clone(), c.clone()];
            agree_again(name, &mut draws, seed, r(None), &[], &params, &[]);
        }
        if dist == Distribution::MvNormal {
            same_error(
                "not positive definite",
                r(None),
                &[mean.clone(), indefinite.clone()],
            );
        } else {
            agree(name, r(None), &[], &[mean.clone(), indefinite.clone()], &[]);
            // `eigh` warns of the square root of a negative eigenvalue each time it factors:
            // once for a covariance shared by a `size` (3,), once per batch element with
            // covariances of their own, and again at the next draw. (No other test of this
            // binary warns or takes the warnings.)
            let mut indefinites = indefinite.to_vec_as::<f64>();
            indefinites.extend(indefinite.to_vec_as::<f64>());
            let indefinites = f64s(&indefinites, &[2, 3, 3]);
            let warned = |f: &mut dyn FnMut()| {
                oxtensor_runtime::warnings::take();
                f();
                oxtensor_runtime::warnings::take().len()
            };
            // Per case: the `size`, the covariance(s) and how many factorings a draw makes.
            for (size, cov, factorings) in [(3, &indefinite, 1), (2, &indefinites, 2)] {
                let params = [mean.clone(), cov.clone()];
                let shapes = [(DType::F64, &[3][..]), (DType::F64, cov.shape())];
                let batch = [size as usize];
                let mut draws = InPlaceDraws::new(r(Some(1)), &shapes, &batch).expect("taken");
                let mut counts = [0; 2];
                for (i, seed) in [8, 9].into_iter().enumerate() {
                    // The kernel's draws, then the same in place.
                    counts[i] = warned(&mut || {
                        agree_again(name, &mut draws, seed, r(Some(1)), &[size], &params, &batch);
                    });
                }
                let want = if dist == Distribution::MvNormalEigh {
                    2 * factorings
                } else {
                    0
                };
                assert_eq!(counts, [want; 2], "{name}: warnings for size {size}");
            }
        }
    }
}

#[test]
fn other_draws_are_left_to_the_kernel() {
    // A covariance that does not match the mean: the kernel reports it.
    let r = op(Distribution::MvNormal, DType::F64, None);
    assert!(InPlaceDraws::new(r, &[(DType::F64, &[3]), (DType::F64, &[2, 2])], &[]).is_none());
    // A permutation of an integer n laid out with no extent, or with a size.
    let r = op(Distribution::Permutation, DType::I64, None);
    assert!(InPlaceDraws::new(r, &[(DType::I64, &[])], &[]).is_none());
    let r = op(Distribution::Permutation, DType::I64, Some(1));
    assert!(InPlaceDraws::new(r, &[(DType::I64, &[])], &[2, 3]).is_none());
    // A choice whose draw's trailing extents are not those of `a`'s rows.
    let r = op(Distribution::ChoiceWithoutReplacement, DType::F64, None);
    let params: [(DType, &[usize]); 2] = [(DType::F64, &[6, 2]), (DType::I64, &[1])];
    assert!(InPlaceDraws::new(r, &params, &[3, 3]).is_none());
}

/// Draws the permutation or choice `r` from `params` into a draw of extents `shape` both
/// ways, with the same `InPlaceDraws` for generators seeded each of `seeds` in turn (its
/// scratch kept), and checks the draws and next generators agree bit for bit.
fn agree_shuffle(what: &str, r: RandomOp, size: &[i64], params: &[Tensor], shape: &[usize]) {
    let shapes: Vec<(DType, &[usize])> = params.iter().map(|p| (p.dtype(), p.shape())).collect();
    let mut draws = InPlaceDraws::new(r, &shapes, shape)
        .unwrap_or_else(|| panic!("{what}: InPlaceDraws takes it"));
    assert!(draws.reads_whole_params(), "{what}");
    for seed in [3, 4, 5] {
        let rng = generator_to_tensor(&default_rng(seed));
        let size_t = Tensor::from_slice(size, &[size.len()]).expect("size");
        let mut inputs = vec![&rng, &size_t];
        inputs.extend(params);
        let want = random(&r, &inputs).expect("the kernel draws");
        for (k, p) in params.iter().enumerate() {
            if p.dtype().is_int() {
                draws.load_param(k, p.to_vec_as::<i64>().into_iter());
            } else {
                draws.load_param(k, p.to_vec_as::<f64>().into_iter());
            }
        }
        let next = draws
            .draw(&rng.to_vec_as::<u64>(), size)
            .expect("InPlaceDraws draws");
        assert_eq!(
            next.to_vec(),
            want[0].to_vec_as::<u64>(),
            "{what}, seed {seed}: the next generator"
        );
        assert_eq!(want[1].shape(), shape, "{what}: the draw's extents");
        assert_eq!(
            draws.count(),
            want[1].numel(),
            "{what}: the number of draws"
        );
        if r.dtype.is_int() {
            let mut got = vec![0i64; draws.count()];
            draws.write(&mut got);
            assert_eq!(got, want[1].to_vec_as::<i64>(), "{what}, seed {seed}");
        } else {
            let mut got = vec![0.0f64; draws.count()];
            draws.write(&mut got);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got),
                bits(&want[1].to_vec_as::<f64>()),
                "{what}, seed {seed}"
            );
        }
    }
}

fn i64s(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape).expect("tensor")
}

#[test]
fn permutations_draw_what_the_kernel_draws() {
    let perm = |dtype, size_ndim| op(Distribution::Permutation, dtype, size_ndim);
    let n = i64s(&[7], &[]);
    agree_shuffle("n = 7", perm(DType::I64, None), &[], &[n], &[7]);
    let none = i64s(&[0], &[]);
    agree_shuffle("n = 0", perm(DType::I64, None), &[], &[none], &[0]);
    let x: Vec<f64> = (0..10).map(|i| f64::from(i) * 0.5 - 1.25).collect();
    let x = f64s(&x, &[5, 2]);
    agree_shuffle("rows of x", perm(DType::F64, None), &[], &[x], &[5, 2]);
    // Integers beyond float64's 53 bits are copied exactly; each batch element shuffled.
    let big = i64s(&[(1 << 60) + 1, (1 << 60) + 2, -3, (1 << 62) + 7], &[4]);
    agree_shuffle(
        "size (3,)",
        perm(DType::I64, Some(1)),
        &[3],
        &[big],
        &[3, 4],
    );
    // An n other than the one laid out is an error, not another draw.
    let r = perm(DType::I64, None);
    let mut draws = InPlaceDraws::new(r, &[(DType::I64, &[])], &[7]).expect("taken");
    draws.load_param(0, [6i64].into_iter());
    let rng = generator_to_tensor(&default_rng(1)).to_vec_as::<u64>();
    assert!(draws.draw(&rng, &[]).is_err());
}

#[test]
fn choices_without_replacement_draw_what_the_kernel_draws() {
    let choice = |dtype| op(Distribution::ChoiceWithoutReplacement, dtype, None);
    let weighted = |dtype| op(Distribution::ChoiceWithoutReplacementP, dtype, None);
    let ten = i64s(&[10], &[]);
    let sample = i64s(&[2, 3], &[2]);
    let params = [ten.clone(), sample.clone()];
    agree_shuffle(
        "Floyd from arange(10)",
        choice(DType::I64),
        &[],
        &params,
        &[2, 3],
    );
    let whole = [ten, i64s(&[10], &[1])];
    agree_shuffle("all of arange(10)", choice(DType::I64), &[], &whole, &[10]);
    let large = [i64s(&[20_000], &[]), i64s(&[6000], &[1])];
    agree_shuffle("tail shuffle", choice(DType::I64), &[], &large, &[6000]);
    let rows: Vec<f32> = (0..12).map(|i| i as f32 * 0.25).collect();
    let rows = Tensor::from_slice(&rows, &[6, 2]).expect("a");
    let four = i64s(&[4], &[1]);
    let params = [rows.clone(), four.clone()];
    agree_shuffle(
        "rows of a float32 a",
        choice(DType::F32),
        &[],
        &params,
        &[4, 2],
    );
    let p = f64s(&[0.1, 0.2, 0.3, 0.25, 0.15], &[5]);
    let params = [i64s(&[5], &[]), p.clone(), i64s(&[3], &[1])];
    agree_shuffle("with p", weighted(DType::I64), &[], &params, &[3]);
    let sparse = f64s(&[0.0, 0.5, 0.0, 0.25, 0.25, 0.0], &[6]);
    let params = [rows, sparse, i64s(&[3], &[1])];
    agree_shuffle(
        "rows with p, zeros",
        weighted(DType::F32),
        &[],
        &params,
        &[3, 2],
    );
    // The kernel's errors: a sample larger than the population, probabilities that do not
    // sum to one, fewer non-zero probabilities than the sample.
    for (what, r, params, shape) in [
        (
            "too large",
            choice(DType::I64),
            vec![i64s(&[3], &[]), four.clone()],
            vec![4],
        ),
        (
            "p sums to 1.1",
            weighted(DType::I64),
            vec![i64s(&[2], &[]), f64s(&[0.5, 0.6], &[2]), i64s(&[1], &[1])],
            vec![1],
        ),
        (
            "too few non-zero p",
            weighted(DType::I64),
            vec![
                i64s(&[5], &[]),
                f64s(&[0.0, 0.5, 0.0, 0.5, 0.0], &[5]),
                i64s(&[3], &[1]),
            ],
            vec![3],
        ),
    ] {
        let shapes: Vec<(DType, &[usize])> =
            params.iter().map(|p| (p.dtype(), p.shape())).collect();
        let mut draws = InPlaceDraws::new(r, &shapes, &shape).expect("taken");
        for (k, p) in params.iter().enumerate() {
            draws.load_param(k, p.to_vec_as::<f64>().into_iter());
        }
        let rng = generator_to_tensor(&default_rng(1));
        let size = Tensor::from_slice::<i64>(&[], &[0]).expect("size");
        let mut inputs = vec![&rng, &size];
        inputs.extend(&params);
        let kernel = random(&r, &inputs).expect_err("the kernel refuses");
        let ours = draws
            .draw(&rng.to_vec_as::<u64>(), &[])
            .expect_err("InPlaceDraws refuses");
        assert_eq!(ours.to_string(), kernel.to_string(), "{what}");
    }
}
