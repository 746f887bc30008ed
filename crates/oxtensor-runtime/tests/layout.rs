//! Tests of the layout and creation kernels (`DimShuffle`, `Reshape`, `Shape`, `ShapeI`,
//! `SpecifyShape`, `Alloc`, `Arange`, `Eye`, `MakeVector`, `Join`, `Split`) against naive
//! references on random strided inputs, plus NumPy edge cases, view-ness and every error path.

use crate::layout_index_support;

use layout_index_support::*;
use oxtensor_data::{DType, Tensor, dispatch_dtype, result_type};
use oxtensor_graph::{Op, TensorType};
use oxtensor_runtime::KernelError;
use proptest::prelude::*;
use smallvec::SmallVec;
use std::sync::Arc;

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_vec_as::<f64>()
}

fn dimshuffle(x: &Tensor, order: &[Option<usize>]) -> Result<Tensor, KernelError> {
    run1(
        &Op::DimShuffle {
            order: order.into(),
        },
        &[x],
    )
}

fn reshape(x: &Tensor, dims: &[i64], dtype: DType) -> Result<Tensor, KernelError> {
    let shape = ints(dims, &[dims.len()]).cast(dtype);
    run1(&Op::Reshape { ndim: dims.len() }, &[x, &shape])
}

fn alloc(value: &Tensor, dims: &[i64]) -> Result<Tensor, KernelError> {
    let dims: Vec<Tensor> = dims.iter().map(|&d| Tensor::scalar(d)).collect();
    let mut inputs = vec![value];
    inputs.extend(dims.iter());
    run1(&Op::Alloc { ndim: dims.len() }, &inputs)
}

fn arange(dtype: DType, a: Tensor, b: Tensor, s: Tensor) -> Result<Tensor, KernelError> {
    run1(&Op::Arange(dtype), &[&a, &b, &s])
}

fn eye(dtype: DType, n: i64, m: i64, k: i64) -> Result<Tensor, KernelError> {
    let (n, m, k) = (Tensor::scalar(n), Tensor::scalar(m), Tensor::scalar(k));
    run1(&Op::Eye(dtype), &[&n, &m, &k])
}

fn join(axis: usize, xs: &[&Tensor]) -> Result<Tensor, KernelError> {
    run1(&Op::Join { axis }, xs)
}

fn split(axis: usize, x: &Tensor, sizes: &[i64]) -> Result<Vec<Tensor>, KernelError> {
    let s = ints(sizes, &[sizes.len()]);
    run(
        &Op::Split {
            axis,
            n: sizes.len(),
        },
        &[x, &s],
    )
}

/// A random order for `shape`: a permutation of the kept dimensions (every dimension of extent
/// other than 1, and some of extent 1) with new axes inserted.
fn arb_order(shape: Vec<usize>) -> impl Strategy<Value = Vec<Option<usize>>> {
    let nd = shape.len();
    (
        prop::collection::vec(any::<bool>(), nd),
        Just((0..nd).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(0usize..=nd, 0..3),
    )
        .prop_map(move |(keep, perm, inserts)| {
            let mut order: Vec<Option<usize>> = perm
                .into_iter()
                .filter(|&d| shape[d] != 1 || keep[d])
                .map(Some)
                .collect();
            for at in inserts {
                order.insert(at.min(order.len()), None);
            }
            order
        })
}

/// Random extents whose product is that of `shape` (the extents shuffled, merged into groups,
/// with 1s inserted), optionally with one of them written as −1.
fn arb_reshape(shape: Vec<usize>) -> impl Strategy<Value = Vec<i64>> {
    let nd = shape.len();
    (
        Just(shape).prop_shuffle(),
        prop::collection::vec(any::<bool>(), nd),
        prop::collection::vec(0usize..=nd, 0..2),
        prop::option::of(0usize..8),
    )
        .prop_map(|(extents, cuts, ones, minus)| {
            let mut dims: Vec<i64> = Vec::new();
            let mut group = 1i64;
            for (i, &e) in extents.iter().enumerate() {
                group *= e as i64;
                if cuts[i] || i + 1 == extents.len() {
                    dims.push(group);
                    group = 1;
                }
            }
            for at in ones {
                dims.insert(at.min(dims.len()), 1);
            }
            if let Some(m) = minus.filter(|&m| m < dims.len()) {
                dims[m] = -1;
            }
            dims
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn dimshuffle_is_a_strided_view(
        (x, order) in arb_tensor(0..=4, 3, true).prop_flat_map(|x| {
            let o = arb_order(x.shape().to_vec());
            (Just(x), o)
        })
    ) {
        let got = dimshuffle(&x, &order).unwrap();
        let shape: Vec<usize> = order.iter().map(|o| o.map_or(1, |a| x.shape()[a])).collect();
        let want = gather(&x, &shape, |i| {
            let mut src = vec![0; x.ndim()];
            for (k, o) in order.iter().enumerate() {
                if let Some(a) = o {
                    src[*a] = i[k];
                }
            }
            src
        });
        assert_same(&got, &want);
        prop_assert!(Arc::ptr_eq(got.storage(), x.storage()));
    }

    #[test]
    fn reshape_keeps_c_order(
        (x, dims) in arb_tensor(0..=4, 4, true).prop_flat_map(|x| {
            let d = arb_reshape(x.shape().to_vec());
            (Just(x), d)
        }),
        dtype in arb_int_dtype(),
    ) {
        // A shape dtype that cannot hold the extents (or -1) falls back to int64.
        let fits = dims.iter().all(|&d| (d >= 0 || !dtype.is_unsigned_int())
            && ints(&[d], &[1]).cast(dtype).to_vec_as::<i64>() == vec![d]);
        let dtype = if fits { dtype } else { DType::I64 };
        let known: i64 = dims.iter().filter(|&&d| d != -1).product();
        let got = reshape(&x, &dims, dtype);
        if dims.contains(&-1) && known == 0 {
            assert_err_contains(got, KernelError::Shape, "cannot reshape array of size 0 into shape (");
            return Ok(());
        }
        let got = got.unwrap();
        let want: Vec<usize> = dims.iter().map(|&d| if d == -1 { x.numel() / known as usize } else { d as usize }).collect();
        prop_assert_eq!(got.shape(), want.as_slice());
        prop_assert_eq!(got.to_bytes(), x.to_bytes());
        prop_assert!(got.is_contiguous());
        prop_assert_eq!(Arc::ptr_eq(got.storage(), x.storage()), x.is_contiguous());
    }

    #[test]
    fn alloc_broadcasts_into_a_fresh_buffer(
        (target, value) in arb_shape(0..=4, 3).prop_flat_map(|target| {
            let value = (arb_dtype(), arb_fitting_shape(target.clone()))
                .prop_flat_map(|(dt, s)| arb_strided(s, dt, true));
            (Just(target), value)
        })
    ) {
        let dims: Vec<i64> = target.iter().map(|&d| d as i64).collect();
        let got = alloc(&value, &dims).unwrap();
        let want = gather(&value, &target, |i| broadcast_index(i, value.shape()));
        assert_same(&got, &want);
        prop_assert!(got.is_contiguous());
        prop_assert!(got.numel() <= 1 || !got.strides().contains(&0));
        prop_assert!(!Arc::ptr_eq(got.storage(), value.storage()));
    }

    #[test]
    fn integer_arange_is_python_range(
        a in -20i64..20, b in -20i64..20, s in prop::sample::select(vec![-5i64, -3, -2, -1, 1, 2, 3, 7]),
        dtype in arb_dtype(), in_dtype in prop::sample::select(vec![DType::I8, DType::I32, DType::I64]),
    ) {
        let got = arange(dtype, int(a, in_dtype), int(b, in_dtype), int(s, in_dtype)).unwrap();
        let mut want = Vec::new();
        let mut v = a;
        while (s > 0 && v < b) || (s < 0 && v > b) {
            want.push(v);
            v += s;
        }
        assert_same(&got, &ints(&want, &[want.len()]).cast(dtype));
    }

    #[test]
    fn float_arange_is_start_plus_i_step(
        a in -10.0f64..10.0, b in -10.0f64..10.0, s in prop_oneof![-3.0f64..-0.1, 0.1f64..3.0],
        dtype in prop::sample::select(vec![DType::F32, DType::F64, DType::I32]),
    ) {
        let got = arange(dtype, Tensor::scalar(a), Tensor::scalar(b), Tensor::scalar(s)).unwrap();
        let n = ((b - a) / s).ceil().max(0.0) as usize;
        let want: Vec<f64> = (0..n).map(|i| a + i as f64 * s).collect();
        assert_same(&got, &floats(&want, &[n]).cast(dtype));
    }

    #[test]
    fn eye_matches_numpy(n in 0i64..6, m in 0i64..6, k in -7i64..7, dtype in arb_dtype()) {
        let got = eye(dtype, n, m, k).unwrap();
        let want: Vec<f64> = (0..n).flat_map(|i| (0..m).map(move |j| (j - i == k) as u8 as f64)).collect();
        assert_same(&got, &floats(&want, &[n as usize, m as usize]).cast(dtype));
    }

    #[test]
    fn join_concatenates_with_conversion(
        (axis, xs) in (1usize..=3).prop_flat_map(|nd| (0..nd, arb_shape(nd..=nd, 3))).prop_flat_map(|(axis, shape)| {
            let pieces = prop::collection::vec((0usize..=3, arb_dtype()), 1..=3).prop_flat_map(move |ps| {
                let shape = shape.clone();
                ps.into_iter().map(|(e, dt)| {
                    let mut s = shape.clone();
                    s[axis] = e;
                    arb_strided(s, dt, true)
                }).collect::<Vec<_>>()
            });
            (Just(axis), pieces)
        })
    ) {
        let refs: Vec<&Tensor> = xs.iter().collect();
        let got = join(axis, &refs).unwrap();
        let dtype = xs.iter().map(|x| x.dtype()).reduce(result_type).unwrap();
        prop_assert_eq!(got.dtype(), dtype);
        let mut shape = xs[0].shape().to_vec();
        shape[axis] = xs.iter().map(|x| x.shape()[axis]).sum();
        let converted: Vec<Tensor> = xs.iter().map(|x| x.cast(dtype)).collect();
        let want = dispatch_dtype!(dtype, T => {
            let v: Vec<T> = all_indices(&shape).iter().map(|i| {
                let mut i = i.clone();
                let mut j = 0;
                while i[axis] >= converted[j].shape()[axis] {
                    i[axis] -= converted[j].shape()[axis];
                    j += 1;
                }
                converted[j].get::<T>(&i)
            }).collect();
            Tensor::from_slice(&v, &shape).unwrap()
        });
        assert_same(&got, &want);
    }

    #[test]
    fn split_returns_views(
        (x, axis, sizes) in arb_tensor(1..=3, 5, true).prop_flat_map(|x| {
            let nd = x.ndim();
            (Just(x), 0..nd)
        }).prop_flat_map(|(x, axis)| {
            let n = x.shape()[axis];
            let cuts = prop::collection::vec(0..=n, 0..3);
            (Just(x), Just(axis), cuts)
        }).prop_map(|(x, axis, mut cuts)| {
            cuts.push(0);
            cuts.push(x.shape()[axis]);
            cuts.sort_unstable();
            let sizes: Vec<i64> = cuts.windows(2).map(|w| (w[1] - w[0]) as i64).collect();
            (x, axis, sizes)
        })
    ) {
        let pieces = split(axis, &x, &sizes).unwrap();
        prop_assert_eq!(pieces.len(), sizes.len());
        let mut start = 0;
        for (p, &n) in pieces.iter().zip(&sizes) {
            let mut shape = x.shape().to_vec();
            shape[axis] = n as usize;
            let want = gather(&x, &shape, |i| {
                let mut i = i.to_vec();
                i[axis] += start;
                i
            });
            assert_same(p, &want);
            prop_assert!(Arc::ptr_eq(p.storage(), x.storage()));
            start += n as usize;
        }
    }
}

#[test]
fn dimshuffle_cases_and_errors() {
    let x = floats(&[1., 2., 3., 4., 5., 6.], &[2, 1, 3]);
    let t = dimshuffle(&x, &[Some(2), None, Some(0)]).unwrap();
    assert_eq!(t.shape(), &[3, 1, 2]);
    assert_eq!(f64s(&t), vec![1., 4., 2., 5., 3., 6.]);
    let s = run1(
        &Op::DimShuffle {
            order: SmallVec::new(),
        },
        &[&floats(&[7.], &[1, 1])],
    )
    .unwrap();
    assert_eq!(s.ndim(), 0);
    assert_eq!(f64s(&s), vec![7.]);
    assert_err(
        dimshuffle(&floats(&[0.; 2], &[2, 1]), &[Some(0), Some(2)]),
        KernelError::Value,
        "dimshuffle: axis 2 is out of bounds for array of dimension 2",
    );
    assert_err(
        dimshuffle(&x, &[Some(0), Some(0), Some(1), Some(2)]),
        KernelError::Value,
        "dimshuffle: axis 0 appears twice in the new order",
    );
    // The graph thought dimension 0 had extent 1; at run time it has 2.
    assert_err(
        dimshuffle(&x, &[Some(1), Some(2)]),
        KernelError::Shape,
        "dimshuffle: cannot drop dimension 0 of an array of shape (2, 1, 3): only dimensions of \
         extent 1 can be dropped",
    );
}

#[test]
fn reshape_cases_and_errors() {
    let x = floats(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
    assert_eq!(reshape(&x, &[3, -1], DType::I8).unwrap().shape(), &[3, 2]);
    assert_eq!(reshape(&x, &[-1], DType::I16).unwrap().shape(), &[6]);
    let e = floats(&[], &[0, 3]);
    assert_eq!(
        reshape(&e, &[3, 0, 5], DType::I64).unwrap().shape(),
        &[3, 0, 5]
    );
    assert_eq!(
        reshape(&floats(&[2.], &[]), &[1, 1], DType::I64)
            .unwrap()
            .shape(),
        &[1, 1]
    );
    // A transposed input is copied, then viewed.
    let t = x.permute(&[1, 0]);
    let r = reshape(&t, &[6], DType::I32).unwrap();
    assert_eq!(f64s(&r), vec![1., 4., 2., 5., 3., 6.]);
    assert!(!Arc::ptr_eq(r.storage(), x.storage()));
    assert_err(
        reshape(&x, &[4, -1], DType::I64),
        KernelError::Shape,
        "cannot reshape array of size 6 into shape (4, -1)",
    );
    assert_err(
        reshape(&x, &[5], DType::I64),
        KernelError::Shape,
        "cannot reshape array of size 6 into shape (5,)",
    );
    assert_err(
        reshape(&e, &[0, -1], DType::I64),
        KernelError::Shape,
        "cannot reshape array of size 0 into shape (0, -1)",
    );
    assert_err(
        reshape(&x, &[-1, -1], DType::I64),
        KernelError::Value,
        "can only specify one unknown dimension (new shape (-1, -1))",
    );
    assert_err(
        reshape(&x, &[-2, -3], DType::I64),
        KernelError::Value,
        "negative dimensions not allowed (new shape (-2, -3))",
    );
    assert_err(
        reshape(&x, &[i64::MAX, 4], DType::I64),
        KernelError::Shape,
        "cannot reshape array of size 6 into shape (9223372036854775807, 4)",
    );
    let op = Op::Reshape { ndim: 1 };
    assert_err(
        run1(&op, &[&x, &floats(&[6.], &[1])]),
        KernelError::Value,
        "reshape: the new shape must have an integer dtype, got float64",
    );
    assert_err(
        run1(&op, &[&x, &Tensor::scalar(6i64)]),
        KernelError::Shape,
        "reshape: the new shape must be a vector, got an array of shape ()",
    );
}

#[test]
fn shape_and_specify_shape() {
    let x = floats(&[0.; 6], &[2, 3, 1]).permute(&[2, 0, 1]);
    assert_eq!(
        run1(&Op::Shape, &[&x]).unwrap().to_vec::<i64>().unwrap(),
        vec![1, 2, 3]
    );
    let s = run1(&Op::ShapeI(2), &[&x]).unwrap();
    assert_eq!((s.ndim(), s.to_vec::<i64>().unwrap()), (0, vec![3]));
    let spec: SmallVec<[Option<usize>; 4]> = [Some(1), None, Some(3)].into_iter().collect();
    let op = Op::SpecifyShape(spec);
    let v = run1(&op, &[&x]).unwrap();
    assert!(Arc::ptr_eq(v.storage(), x.storage()));
    assert_eq!(v.strides(), x.strides());
    let y = floats(&[0.; 8], &[1, 2, 4]);
    let ty = [TensorType::of_rank(DType::F64, 3)];
    assert_err(
        run_typed(&op, &[&y], &ty),
        KernelError::Shape,
        "specify_shape: dimension 2 has extent 4, expected 3 (expected shape (1, None, 3), got shape (1, 2, 4))",
    );
    assert_err(
        run1(&op, &[&floats(&[0.; 2], &[2])]),
        KernelError::Shape,
        "specify_shape: expected an array of rank 3 (shape (1, None, 3)), got shape (2,)",
    );
}

#[test]
fn alloc_cases_and_errors() {
    let r = alloc(&floats(&[1., 2.], &[2, 1]), &[2, 3]).unwrap();
    assert_eq!(f64s(&r), vec![1., 1., 1., 2., 2., 2.]);
    let r = alloc(&Tensor::scalar(true), &[0, 4]).unwrap();
    assert_eq!((r.shape(), r.dtype()), (&[0usize, 4][..], DType::Bool));
    let z = alloc(&Tensor::scalar(5u16), &[]).unwrap();
    assert_eq!(z.to_vec::<u16>().unwrap(), vec![5]);
    // Extents of any integer dtype.
    let (a, b) = (Tensor::scalar(2u8), Tensor::scalar(1i16));
    let r = run1(&Op::Alloc { ndim: 2 }, &[&Tensor::scalar(3.5f32), &a, &b]).unwrap();
    assert_eq!(r.to_vec::<f32>().unwrap(), vec![3.5, 3.5]);
    assert_err(
        alloc(&Tensor::scalar(1.0), &[2, -1]),
        KernelError::Value,
        "alloc: negative dimensions are not allowed (extent 1 is -1)",
    );
    assert_err(
        alloc(&floats(&[1., 2., 3.], &[3]), &[2, 4]),
        KernelError::Shape,
        "alloc: could not broadcast input array from shape (3,) into shape (2, 4)",
    );
    assert_err(
        alloc(&floats(&[1., 2.], &[1, 2]), &[2]),
        KernelError::Shape,
        "alloc: could not broadcast input array from shape (1, 2) into shape (2,)",
    );
    let op = Op::Alloc { ndim: 1 };
    assert_err(
        run1(&op, &[&Tensor::scalar(1.0), &Tensor::scalar(2.0)]),
        KernelError::Value,
        "alloc: extent 0 must have an integer dtype, got float64",
    );
    assert_err(
        run1(&op, &[&Tensor::scalar(1.0), &ints(&[2], &[1])]),
        KernelError::Shape,
        "alloc: extent 0 must be a scalar, got an array of shape (1,)",
    );
    assert_err_contains(
        alloc(&Tensor::scalar(1.0), &[i64::MAX, 4]),
        KernelError::Shape,
        "too large",
    );
}

#[test]
fn arange_numpy_cases_and_errors() {
    let f = |a: f64, b: f64, s: f64| {
        f64s(
            &arange(
                DType::F64,
                Tensor::scalar(a),
                Tensor::scalar(b),
                Tensor::scalar(s),
            )
            .unwrap(),
        )
    };
    assert_eq!(f(0., 1., 0.1).len(), 10);
    assert_eq!(f(1., 0., 0.1), Vec::<f64>::new());
    assert_eq!(f(0.5, 3., 1.), vec![0.5, 1.5, 2.5]);
    assert_eq!(f(10., 0., -3.), vec![10., 7., 4., 1.]);
    let i = |a: i64, b: i64, s: i64| {
        arange(
            DType::I64,
            Tensor::scalar(a),
            Tensor::scalar(b),
            Tensor::scalar(s),
        )
        .unwrap()
        .to_vec::<i64>()
        .unwrap()
    };
    assert_eq!(i(10, 0, -3), vec![10, 7, 4, 1]);
    assert_eq!(i(0, 0, 1), Vec::<i64>::new());
    assert_eq!(i(i64::MAX - 1, i64::MAX, 2), vec![i64::MAX - 1]);
    // Unsigned bounds beyond i64 are exact.
    let u = arange(
        DType::U64,
        Tensor::scalar(u64::MAX - 2),
        Tensor::scalar(u64::MAX),
        Tensor::scalar(1u64),
    )
    .unwrap();
    assert_eq!(u.to_vec::<u64>().unwrap(), vec![u64::MAX - 2, u64::MAX - 1]);
    // Mixed: float step, int bounds; int dtype output truncates start + i*step.
    let m = arange(
        DType::I32,
        Tensor::scalar(0i64),
        Tensor::scalar(3i64),
        Tensor::scalar(0.75f64),
    )
    .unwrap();
    assert_eq!(m.to_vec::<i32>().unwrap(), vec![0, 0, 1, 2]);
    let z = || Tensor::scalar(0i64);
    assert_err(
        arange(DType::I64, z(), Tensor::scalar(5i64), z()),
        KernelError::Value,
        "arange: step cannot be zero",
    );
    assert_err(
        arange(DType::F64, z(), Tensor::scalar(5.0), Tensor::scalar(0.0)),
        KernelError::Value,
        "arange: step cannot be zero",
    );
    assert_err(
        arange(
            DType::F64,
            z(),
            Tensor::scalar(f64::NAN),
            Tensor::scalar(1.0),
        ),
        KernelError::Value,
        "arange: cannot compute length (start 0.0, stop NaN, step 1.0)",
    );
    assert_err(
        arange(
            DType::F64,
            z(),
            Tensor::scalar(1e300),
            Tensor::scalar(1e-300),
        ),
        KernelError::Value,
        "arange: cannot compute length (start 0.0, stop 1e300, step 1e-300)",
    );
    assert_err(
        arange(DType::F64, z(), Tensor::scalar(1e30), Tensor::scalar(1.0)),
        KernelError::Value,
        "arange: maximum allowed size exceeded",
    );
    assert_err_contains(
        arange(
            DType::I8,
            z(),
            Tensor::scalar(i64::MAX),
            Tensor::scalar(1i64),
        ),
        KernelError::Shape,
        "too large",
    );
    assert_err(
        arange(DType::I8, z(), ints(&[1], &[1]), z()),
        KernelError::Shape,
        "arange: stop must be a scalar, got an array of shape (1,)",
    );
}

#[test]
fn eye_cases_and_errors() {
    let e = eye(DType::I32, 2, 4, 1).unwrap();
    assert_eq!(e.to_vec::<i32>().unwrap(), vec![0, 1, 0, 0, 0, 0, 1, 0]);
    let e = eye(DType::Bool, 3, 2, -1).unwrap();
    assert_eq!(
        e.to_vec::<bool>().unwrap(),
        vec![false, false, true, false, false, true]
    );
    assert_eq!(f64s(&eye(DType::F64, 2, 2, i64::MIN).unwrap()), vec![0.; 4]);
    assert_eq!(f64s(&eye(DType::F64, 2, 2, i64::MAX).unwrap()), vec![0.; 4]);
    assert_eq!(eye(DType::F32, 0, 3, 0).unwrap().shape(), &[0, 3]);
    assert_err(
        eye(DType::F64, -1, 2, 0),
        KernelError::Value,
        "eye: negative dimensions are not allowed (n = -1, m = 2)",
    );
    let f = Tensor::scalar(1.0f64);
    assert_err(
        run1(&Op::Eye(DType::F64), &[&f, &f, &f]),
        KernelError::Value,
        "eye: n must have an integer dtype, got float64",
    );
}

#[test]
fn make_vector_casts_items() {
    let items = [
        Tensor::scalar(-1.7f64),
        Tensor::scalar(300i64),
        Tensor::scalar(true),
    ];
    let refs: Vec<&Tensor> = items.iter().collect();
    let v = run1(&Op::MakeVector(DType::U8), &refs).unwrap();
    assert_eq!(v.to_vec::<u8>().unwrap(), vec![0, 44, 1]);
    let v = run1(&Op::MakeVector(DType::F32), &refs).unwrap();
    assert_eq!(v.to_vec::<f32>().unwrap(), vec![-1.7, 300., 1.]);
    let empty = run1(&Op::MakeVector(DType::I64), &[]).unwrap();
    assert_eq!(empty.shape(), &[0]);
    assert_err(
        run1(
            &Op::MakeVector(DType::I64),
            &[&items[0], &ints(&[1, 2], &[2])],
        ),
        KernelError::Shape,
        "make_vector: item 1 must be a scalar, got an array of shape (2,)",
    );
}

#[test]
fn join_cases_and_errors() {
    let a = floats(&[1., 2., 3., 4.], &[2, 2]);
    let b = Tensor::from_slice(&[5i32, 6], &[2, 1]).unwrap();
    let r = join(1, &[&a, &b]).unwrap();
    assert_eq!(r.dtype(), DType::F64);
    assert_eq!(f64s(&r), vec![1., 2., 5., 3., 4., 6.]);
    // The output dtype comes from the node's type, whatever the input dtypes.
    let types = [
        TensorType::of_rank(DType::F64, 2),
        TensorType::of_rank(DType::I32, 2),
    ];
    assert_eq!(
        run_typed(&Op::Join { axis: 1 }, &[&a, &b], &types).unwrap()[0].dtype(),
        DType::F64
    );
    assert_eq!(join(0, &[&a]).unwrap().to_bytes(), a.to_bytes());
    let c = floats(&[0.; 6], &[2, 3]);
    assert_err(
        join(0, &[&a, &c]),
        KernelError::Shape,
        "join: all the input array dimensions except for the concatenation axis must match \
         exactly, but along dimension 1, the array at index 0 has shape (2, 2) and the array at \
         index 1 has shape (2, 3)",
    );
    let v = floats(&[0.; 2], &[2]);
    assert_err(
        join(0, &[&a, &a, &v]),
        KernelError::Shape,
        "join: all the input arrays must have the same number of dimensions, but the array at \
         index 0 has shape (2, 2) and the array at index 2 has shape (2,)",
    );
    assert_err(
        join(2, &[&a, &a]),
        KernelError::Value,
        "join: axis 2 is out of bounds for array of dimension 2",
    );
    assert_err(
        join(0, &[&Tensor::scalar(1.0)]),
        KernelError::Value,
        "join: axis 0 is out of bounds for array of dimension 0",
    );
    let ctx_types: [TensorType; 1] = [TensorType::scalar(DType::F64)];
    let r = oxtensor_runtime::kernels::eval(
        &Op::Join { axis: 0 },
        &[],
        &oxtensor_runtime::kernels::KernelCtx {
            input_types: &[],
            output_types: &ctx_types,
        },
    );
    assert_err(
        r,
        KernelError::Value,
        "join: need at least one array to concatenate",
    );
}

#[test]
fn split_cases_and_errors() {
    let x = floats(&[1., 2., 3., 4., 5., 6.], &[3, 2]);
    let parts = split(0, &x, &[1, 0, 2]).unwrap();
    assert_eq!(
        parts.iter().map(|p| p.shape().to_vec()).collect::<Vec<_>>(),
        vec![vec![1, 2], vec![0, 2], vec![2, 2]]
    );
    assert_eq!(f64s(&parts[2]), vec![3., 4., 5., 6.]);
    let rev = x.view(&[3, 2], &[-2, 1], 4).unwrap();
    let parts = split(0, &rev, &[2, 1]).unwrap();
    assert_eq!(f64s(&parts[0]), vec![5., 6., 3., 4.]);
    assert_eq!(f64s(&parts[1]), vec![1., 2.]);
    let u = Tensor::from_slice(&[1u8, 1], &[2]).unwrap();
    let parts = run(&Op::Split { axis: 1, n: 2 }, &[&x, &u]).unwrap();
    assert_eq!(f64s(&parts[1]), vec![2., 4., 6.]);
    assert_err(
        split(0, &x, &[4, -1]),
        KernelError::Value,
        "split: sizes must be non-negative, but size 1 is -1 (sizes (4, -1))",
    );
    assert_err(
        split(0, &x, &[1, 1]),
        KernelError::Shape,
        "split: sizes (1, 1) add up to 2, but axis 0 of the array of shape (3, 2) has extent 3",
    );
    assert_err(
        split(2, &x, &[1]),
        KernelError::Value,
        "split: axis 2 is out of bounds for array of dimension 2",
    );
    let op = Op::Split { axis: 0, n: 1 };
    assert_err(
        run(&op, &[&x, &Tensor::scalar(3i64)]),
        KernelError::Shape,
        "split: the sizes must be a vector, got an array of shape ()",
    );
    assert_err(
        run(&op, &[&x, &floats(&[3.], &[1])]),
        KernelError::Value,
        "split: the sizes must have an integer dtype, got float64",
    );
}
