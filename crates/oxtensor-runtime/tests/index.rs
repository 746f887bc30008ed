//! Tests of the indexing kernels (`Subtensor`, `IncSubtensor`, `Take`, `IncTake`) against naive
//! element-by-element references with independent Python index arithmetic, plus NumPy edge
//! cases, view-ness and every error path.

use crate::layout_index_support;

use layout_index_support::*;
use oxtensor_data::{DType, Tensor, dispatch_dtype};
use oxtensor_graph::{IndexEntry, IndexSpec, Op};
use oxtensor_runtime::KernelError;
use proptest::prelude::*;
use std::sync::Arc;

/// One test index entry with its values.
#[derive(Clone, Debug)]
enum Entry {
    Index(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
}

/// The op pattern and scalar inputs (each of the given integer dtypes, in turn) of `entries`.
fn pattern(entries: &[Entry], dtypes: &[DType]) -> (IndexSpec, Vec<Tensor>) {
    let mut spec = IndexSpec::new();
    let mut scalars = Vec::new();
    let mut push = |v: i64| {
        let dt = dtypes[scalars.len() % dtypes.len()];
        scalars.push(int(v, dt));
    };
    for e in entries {
        match *e {
            Entry::Index(i) => {
                spec.push(IndexEntry::Index);
                push(i);
            }
            Entry::Slice(a, b, c) => {
                spec.push(IndexEntry::Slice {
                    start: a.is_some(),
                    stop: b.is_some(),
                    step: c.is_some(),
                });
                for v in [a, b, c].into_iter().flatten() {
                    push(v);
                }
            }
        }
    }
    (spec, scalars)
}

/// Python's `list(range(n))[start:stop:step]`, written from the language reference.
fn py_slice(n: usize, start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Vec<usize> {
    let n = n as i64;
    let step = step.unwrap_or(1);
    let norm = |v: i64| if v < 0 { v + n } else { v };
    let mut out = Vec::new();
    if step > 0 {
        let mut i = start.map_or(0, |s| norm(s).max(0));
        let end = stop.map_or(n, |s| norm(s).min(n));
        while i < end {
            out.push(i as usize);
            i += step;
        }
    } else {
        let mut i = start.map_or(n - 1, |s| norm(s).min(n - 1));
        let end = stop.map_or(-1, |s| norm(s).max(-1));
        while i > end {
            out.push(i as usize);
            i += step;
        }
    }
    out
}

/// What a reference selection takes from one dimension.
#[derive(Clone, Debug)]
enum Sel {
    /// One position (an index: the dimension is removed).
    Fixed(usize),
    /// These positions, in order (a slice, or a dimension taken whole).
    Range(Vec<usize>),
}

/// The reference selection of `entries` on `shape`, or the first out-of-range index
/// `(axis, value)`.
fn select(shape: &[usize], entries: &[Entry]) -> Result<Vec<Sel>, (usize, i64)> {
    let mut sel = Vec::new();
    for (d, e) in entries.iter().enumerate() {
        let n = shape[d] as i64;
        sel.push(match *e {
            Entry::Index(i) => {
                let r = if i < 0 { i + n } else { i };
                if r < 0 || r >= n {
                    return Err((d, i));
                }
                Sel::Fixed(r as usize)
            }
            Entry::Slice(a, b, c) => Sel::Range(py_slice(shape[d], a, b, c)),
        });
    }
    for &n in &shape[entries.len()..] {
        sel.push(Sel::Range((0..n).collect()));
    }
    Ok(sel)
}

/// The shape of the region a selection takes.
fn region_shape(sel: &[Sel]) -> Vec<usize> {
    sel.iter()
        .filter_map(|s| match s {
            Sel::Fixed(_) => None,
            Sel::Range(r) => Some(r.len()),
        })
        .collect()
}

/// The source index of a position of the selected region.
fn source_index(sel: &[Sel], region_index: &[usize]) -> Vec<usize> {
    let mut k = 0;
    sel.iter()
        .map(|s| match s {
            Sel::Fixed(i) => *i,
            Sel::Range(r) => {
                k += 1;
                r[region_index[k - 1]]
            }
        })
        .collect()
}

/// Random entries for the leading dimensions of `shape`: indices mostly in range (some out),
/// slices with random optional bounds (often beyond the extent) and non-zero steps.
fn arb_entries(shape: Vec<usize>) -> BoxedStrategy<Vec<Entry>> {
    let nd = shape.len();
    (0..=nd)
        .prop_flat_map(move |k| {
            let per_dim: Vec<BoxedStrategy<Entry>> = shape[..k]
                .iter()
                .map(|&n| {
                    let n = n as i64;
                    let bound = prop::option::of(-(n + 3)..=(n + 3));
                    let step = prop::option::of(prop::sample::select(vec![-3i64, -2, -1, 1, 2, 3]));
                    let index = prop_oneof![
                        9 => (-n.max(1))..n.max(1),
                        1 => prop::sample::select(vec![n, n + 2, -n - 1, -n - 4]),
                    ];
                    prop_oneof![
                        1 => index.prop_map(Entry::Index),
                        2 => (bound.clone(), bound, step).prop_map(|(a, b, c)| Entry::Slice(a, b, c)),
                    ]
                    .boxed()
                })
                .collect();
            per_dim
        })
        .boxed()
}

fn arb_x_entries(broadcast: bool) -> impl Strategy<Value = (Tensor, Vec<Entry>, Vec<DType>)> {
    arb_tensor(0..=4, 5, broadcast).prop_flat_map(|x| {
        let e = arb_entries(x.shape().to_vec());
        (Just(x), e, prop::collection::vec(arb_signed_dtype(), 1..4))
    })
}

fn arb_signed_dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(vec![
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U64,
    ])
}

fn subtensor(x: &Tensor, entries: &[Entry], dtypes: &[DType]) -> Result<Tensor, KernelError> {
    let (spec, scalars) = pattern(entries, dtypes);
    let mut inputs = vec![x];
    inputs.extend(scalars.iter());
    run1(&Op::Subtensor(spec), &inputs)
}

fn inc_subtensor(
    x: &Tensor,
    y: &Tensor,
    entries: &[Entry],
    set: bool,
) -> Result<Tensor, KernelError> {
    let (spec, scalars) = pattern(entries, &[DType::I64]);
    let mut inputs = vec![x, y];
    inputs.extend(scalars.iter());
    run1(&Op::IncSubtensor { index: spec, set }, &inputs)
}

/// A valid basic index of a random `x`, with its reference selection, a random value `y` that
/// broadcasts to the region (random dtype and strides), and `set`.
fn arb_subtensor_update() -> impl Strategy<Value = (Tensor, Vec<Entry>, Vec<Sel>, Tensor, bool)> {
    arb_x_entries(true)
        .prop_filter_map("index out of range", |(x, e, _)| {
            let sel = select(x.shape(), &e).ok()?;
            Some((x, e, sel))
        })
        .prop_flat_map(|(x, e, sel)| {
            let y = (arb_dtype(), arb_fitting_shape(region_shape(&sel)))
                .prop_flat_map(|(dt, shape)| arb_strided(shape, dt, true));
            (Just(x), Just(e), Just(sel), y, any::<bool>())
        })
}

/// `x.shape[:axis] + idx.shape + x.shape[axis+1:]`.
fn take_region(x: &Tensor, idx: &Tensor, axis: usize) -> Vec<usize> {
    let mut region = x.shape()[..axis].to_vec();
    region.extend(idx.shape());
    region.extend(&x.shape()[axis + 1..]);
    region
}

/// A random `x` with a non-empty `axis`, an `int32` index array of valid (often repeated,
/// sometimes negative) indices, a value `y` broadcasting to the take shape, and `set`.
fn arb_take_update() -> impl Strategy<Value = (Tensor, usize, Tensor, Tensor, bool)> {
    arb_tensor(1..=3, 4, true)
        .prop_flat_map(|x| {
            let nd = x.ndim();
            (Just(x), 0..nd)
        })
        .prop_filter("empty axis", |(x, axis)| x.shape()[*axis] > 0)
        .prop_flat_map(|(x, axis)| {
            let n = x.shape()[axis] as i64;
            let idx = arb_shape(0..=2, 4).prop_flat_map(move |shape| {
                let count: usize = shape.iter().product();
                prop::collection::vec(-n..n, count)
                    .prop_map(move |v| ints(&v, &shape).cast(DType::I32))
            });
            (Just(x), Just(axis), idx)
        })
        .prop_flat_map(|(x, axis, idx)| {
            let y = (arb_dtype(), arb_fitting_shape(take_region(&x, &idx, axis)))
                .prop_flat_map(|(dt, shape)| arb_strided(shape, dt, true));
            (Just(x), Just(axis), Just(idx), y, any::<bool>())
        })
}

/// The reference functional update: `x` with `y` (cast to x's dtype, broadcast) set or added
/// at the `targets(region position)` of every position of `region`, in C order.
fn reference_update(
    x: &Tensor,
    y: &Tensor,
    region: &[usize],
    set: bool,
    target: impl Fn(&[usize]) -> Vec<usize>,
) -> Tensor {
    dispatch_dtype!(x.dtype(), T => {
        let mut xv: Vec<T> = x.to_vec::<T>().unwrap();
        let yv: Vec<T> = y.to_vec_as::<T>();
        for r in all_indices(region) {
            let yi = ravel(&broadcast_index(&r, y.shape()), y.shape());
            let xi = ravel(&target(&r), x.shape());
            xv[xi] = if set { yv[yi] } else { xv[xi].np_add(yv[yi]) };
        }
        Tensor::from_slice(&xv, x.shape()).unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn subtensor_matches_python_indexing((x, entries, dtypes) in arb_x_entries(true)) {
        let got = subtensor(&x, &entries, &dtypes);
        match select(x.shape(), &entries) {
            Err((axis, i)) => assert_err(
                got,
                KernelError::Index,
                &format!("index {i} is out of bounds for axis {axis} with size {}", x.shape()[axis]),
            ),
            Ok(sel) => {
                let got = got.unwrap();
                let shape = region_shape(&sel);
                let want = gather(&x, &shape, |r| source_index(&sel, r));
                assert_same(&got, &want);
                prop_assert!(Arc::ptr_eq(got.storage(), x.storage()), "not a view");
            }
        }
    }

    #[test]
    fn inc_subtensor_matches_reference((x, entries, sel, y, set) in arb_subtensor_update()) {
        let got = inc_subtensor(&x, &y, &entries, set).unwrap();
        let want = reference_update(&x, &y, &region_shape(&sel), set, |r| source_index(&sel, r));
        assert_same(&got, &want);
        prop_assert!(got.is_contiguous());
        prop_assert!(!Arc::ptr_eq(got.storage(), x.storage()));
    }

    #[test]
    fn take_matches_reference(
        (x, axis) in arb_tensor(1..=3, 4, true).prop_flat_map(|x| { let nd = x.ndim(); (Just(x), 0..nd) }),
        idx_shape in arb_shape(0..=2, 3),
        idx_dtype in arb_int_dtype(),
        raw in prop::collection::vec(-6i64..6, 9),
        transpose in any::<bool>(),
    ) {
        let n = x.shape()[axis] as i64;
        let count: usize = idx_shape.iter().product();
        let values: Vec<i64> = raw[..count].iter()
            .map(|&v| if idx_dtype.is_unsigned_int() { v.rem_euclid(n.max(1) + 1) } else { v })
            .collect();
        let mut idx = ints(&values, &idx_shape).cast(idx_dtype);
        if transpose && idx.ndim() == 2 {
            let t = idx.permute(&[1, 0]).to_contiguous();
            idx = t.permute(&[1, 0]);
        }
        let got = run1(&Op::Take { axis }, &[&x, &idx]);
        let resolved: Vec<i64> = values.iter().map(|&v| if v < 0 { v + n } else { v }).collect();
        if let Some(k) = resolved.iter().position(|&r| r < 0 || r >= n) {
            assert_err(got, KernelError::Index,
                &format!("index {} is out of bounds for axis {axis} with size {n}", values[k]));
            return Ok(());
        }
        let got = got.unwrap();
        let k_nd = idx_shape.len();
        let mut shape = x.shape()[..axis].to_vec();
        shape.extend(&idx_shape);
        shape.extend(&x.shape()[axis + 1..]);
        let want = gather(&x, &shape, |o| {
            let mut i = o[..axis].to_vec();
            i.push(resolved[ravel(&o[axis..axis + k_nd], &idx_shape)] as usize);
            i.extend(&o[axis + k_nd..]);
            i
        });
        assert_same(&got, &want);
        prop_assert!(got.is_contiguous());
    }

    #[test]
    fn inc_take_matches_np_add_at((x, axis, idx, y, set) in arb_take_update()) {
        let got = run1(&Op::IncTake { axis, set }, &[&x, &y, &idx]).unwrap();
        let n = x.shape()[axis] as i64;
        let values = idx.to_vec_as::<i64>();
        let k_nd = idx.ndim();
        let want = reference_update(&x, &y, &take_region(&x, &idx, axis), set, |o| {
            let mut i = o[..axis].to_vec();
            let v = values[ravel(&o[axis..axis + k_nd], idx.shape())];
            i.push((if v < 0 { v + n } else { v }) as usize);
            i.extend(&o[axis + k_nd..]);
            i
        });
        assert_same(&got, &want);
        prop_assert!(got.is_contiguous());
    }
}

/// The slice `::step`.
const STEP_ONLY: IndexEntry = IndexEntry::Slice {
    start: false,
    stop: false,
    step: true,
};

fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_vec_as::<f64>()
}

fn arange_f64(n: usize, shape: &[usize]) -> Tensor {
    floats(&(0..n).map(|v| v as f64).collect::<Vec<_>>(), shape)
}

#[test]
fn numpy_slicing_edge_cases() {
    let x = arange_f64(5, &[5]);
    let s = |a, b, c| f64s(&subtensor(&x, &[Entry::Slice(a, b, c)], &[DType::I64]).unwrap());
    assert_eq!(s(None, None, Some(-1)), vec![4., 3., 2., 1., 0.]);
    assert_eq!(s(Some(1), Some(-1), None), vec![1., 2., 3.]);
    assert_eq!(s(Some(-10), Some(10), Some(2)), vec![0., 2., 4.]);
    assert_eq!(s(Some(3), Some(1), None), Vec::<f64>::new());
    assert_eq!(s(Some(4), Some(0), Some(-1)), vec![4., 3., 2., 1.]);
    assert_eq!(s(Some(-1), Some(-6), Some(-2)), vec![4., 2., 0.]);
    assert_eq!(s(Some(7), None, Some(-3)), vec![4., 1.]);
    assert_eq!(s(Some(100), Some(200), None), Vec::<f64>::new());
    // An empty slice of an empty array, and a negative index.
    let e = arange_f64(0, &[0, 3]);
    let r = subtensor(&e, &[Entry::Slice(None, None, Some(-1))], &[DType::I8]).unwrap();
    assert_eq!(r.shape(), &[0, 3]);
    let m = arange_f64(6, &[2, 3]);
    let r = subtensor(
        &m,
        &[Entry::Index(-1), Entry::Slice(None, None, Some(-1))],
        &[DType::U8, DType::I8],
    );
    assert_eq!(f64s(&r.unwrap()), vec![5., 4., 3.]);
}

#[test]
fn subtensor_of_a_reversed_offset_view_is_a_view() {
    let base = arange_f64(12, &[3, 4]);
    let rev = run1(
        &Op::Subtensor(IndexSpec::from_slice(&[STEP_ONLY])),
        &[&base, &Tensor::scalar(-1i64)],
    )
    .unwrap();
    assert_eq!(rev.strides(), &[-4, 1]);
    assert_eq!(rev.offset(), 8);
    let r = subtensor(
        &rev,
        &[Entry::Slice(Some(1), None, None), Entry::Index(2)],
        &[DType::I16],
    )
    .unwrap();
    assert_eq!(f64s(&r), vec![6., 2.]);
    assert!(Arc::ptr_eq(r.storage(), base.storage()));
    // Index of a 0-d result: a scalar view.
    let s = subtensor(&base, &[Entry::Index(2), Entry::Index(-4)], &[DType::I32]).unwrap();
    assert_eq!(s.ndim(), 0);
    assert_eq!(s.offset(), 8);
}

#[test]
fn subtensor_errors() {
    let x = arange_f64(3, &[3]);
    let i = Tensor::scalar(5i64);
    let op = Op::Subtensor(IndexSpec::from_slice(&[IndexEntry::Index]));
    assert_err(
        run1(&op, &[&x, &i]),
        KernelError::Index,
        "index 5 is out of bounds for axis 0 with size 3",
    );
    assert_err(
        run1(&op, &[&x, &Tensor::scalar(-4i32)]),
        KernelError::Index,
        "index -4 is out of bounds for axis 0 with size 3",
    );
    assert_err(
        run1(&op, &[&x, &Tensor::scalar(u64::MAX)]),
        KernelError::Index,
        "index 9223372036854775807 is out of bounds for axis 0 with size 3",
    );
    let two = Op::Subtensor(IndexSpec::from_slice(&[
        IndexEntry::Index,
        IndexEntry::Index,
    ]));
    assert_err(
        run1(&two, &[&x, &i, &i]),
        KernelError::Index,
        "too many indices for array: array is 1-dimensional, but 2 were indexed",
    );
    assert_err(
        run1(&op, &[&x]),
        KernelError::Value,
        "the index pattern takes 1 scalar inputs, got 0",
    );
    assert_err(
        run1(&op, &[&x, &Tensor::scalar(1.0f64)]),
        KernelError::Value,
        "index input 0 must have an integer dtype, got float64",
    );
    assert_err(
        run1(&op, &[&x, &ints(&[1], &[1])]),
        KernelError::Shape,
        "index input 0 must be a scalar, got an array of shape (1,)",
    );
    let step = Op::Subtensor(IndexSpec::from_slice(&[STEP_ONLY]));
    assert_err(
        run1(&step, &[&x, &Tensor::scalar(0u8)]),
        KernelError::Value,
        "slice step cannot be zero",
    );
}

#[test]
fn inc_subtensor_cases() {
    let x = floats(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
    // x[:, ::-2] += [10, 20]  (broadcast over rows, reversed columns)
    let y = floats(&[10., 20.], &[2]);
    let r = inc_subtensor(
        &x,
        &y,
        &[
            Entry::Slice(None, None, None),
            Entry::Slice(None, None, Some(-2)),
        ],
        false,
    )
    .unwrap();
    assert_eq!(f64s(&r), vec![21., 2., 13., 24., 5., 16.]);
    // x[1] = 7 (an int32 scalar cast to float64)
    let r = inc_subtensor(&x, &Tensor::scalar(7i32), &[Entry::Index(1)], true).unwrap();
    assert_eq!(f64s(&r), vec![1., 2., 3., 7., 7., 7.]);
    assert_eq!(r.dtype(), DType::F64);
    // An int8 target wraps; a float value is truncated.
    let xi = Tensor::from_slice(&[120i8, 0], &[2]).unwrap();
    let r = inc_subtensor(&xi, &Tensor::scalar(10.9f64), &[Entry::Index(0)], false).unwrap();
    assert_eq!(r.to_vec::<i8>().unwrap(), vec![-126, 0]);
    // An empty region accepts an empty or broadcastable y and leaves x unchanged.
    let r = inc_subtensor(
        &x,
        &Tensor::scalar(1.0),
        &[Entry::Slice(Some(2), Some(1), None)],
        false,
    )
    .unwrap();
    assert_same(&r, &x);
    // Shape mismatch.
    assert_err(
        inc_subtensor(&x, &floats(&[1., 2.], &[2]), &[Entry::Index(0)], false),
        KernelError::Shape,
        "could not broadcast input array from shape (2,) into shape (3,)",
    );
    assert_err(
        inc_subtensor(&x, &floats(&[1.; 6], &[1, 2, 3]), &[Entry::Index(0)], true),
        KernelError::Shape,
        "could not broadcast input array from shape (1, 2, 3) into shape (3,)",
    );
    assert_err(
        inc_subtensor(&x, &Tensor::scalar(1.0), &[Entry::Index(2)], false),
        KernelError::Index,
        "index 2 is out of bounds for axis 0 with size 2",
    );
}

#[test]
fn take_cases() {
    let x = arange_f64(6, &[2, 3]);
    let idx = Tensor::from_slice(&[2u8, 0, 2], &[3]).unwrap();
    let r = run1(&Op::Take { axis: 1 }, &[&x, &idx]).unwrap();
    assert_eq!(r.shape(), &[2, 3]);
    assert_eq!(f64s(&r), vec![2., 0., 2., 5., 3., 5.]);
    // A 0-d index drops the axis; a negative one wraps once.
    let r = run1(&Op::Take { axis: 0 }, &[&x, &Tensor::scalar(-1i16)]).unwrap();
    assert_eq!(r.shape(), &[3]);
    assert_eq!(f64s(&r), vec![3., 4., 5.]);
    // A 2-d index array, and an empty one.
    let r = run1(&Op::Take { axis: 0 }, &[&x, &ints(&[1, 0, 0, 1], &[2, 2])]).unwrap();
    assert_eq!(r.shape(), &[2, 2, 3]);
    let r = run1(&Op::Take { axis: 1 }, &[&x, &ints(&[], &[0])]).unwrap();
    assert_eq!(r.shape(), &[2, 0]);
    // Errors.
    assert_err(
        run1(&Op::Take { axis: 0 }, &[&x, &ints(&[0, 2], &[2])]),
        KernelError::Index,
        "index 2 is out of bounds for axis 0 with size 2",
    );
    assert_err(
        run1(&Op::Take { axis: 1 }, &[&x, &ints(&[-4], &[1])]),
        KernelError::Index,
        "index -4 is out of bounds for axis 1 with size 3",
    );
    assert_err(
        run1(&Op::Take { axis: 0 }, &[&x, &floats(&[0.], &[1])]),
        KernelError::Value,
        "the index array must have an integer dtype, got float64",
    );
    assert_err(
        run1(&Op::Take { axis: 2 }, &[&x, &ints(&[0], &[1])]),
        KernelError::Value,
        "axis 2 is out of bounds for array of dimension 2",
    );
}

#[test]
fn inc_take_accumulates_and_last_set_wins() {
    let x = floats(&[0., 0., 0.], &[3]);
    let idx = ints(&[0, 2, 0, 0], &[4]);
    let y = floats(&[1., 2., 3., 4.], &[4]);
    let add = run1(
        &Op::IncTake {
            axis: 0,
            set: false,
        },
        &[&x, &y, &idx],
    )
    .unwrap();
    assert_eq!(f64s(&add), vec![8., 0., 2.]);
    let set = run1(&Op::IncTake { axis: 0, set: true }, &[&x, &y, &idx]).unwrap();
    assert_eq!(f64s(&set), vec![4., 0., 2.]);
    // Along axis 1 with a broadcast scalar and an unsigned index array.
    let m = arange_f64(6, &[2, 3]);
    let u = Tensor::from_slice(&[1u32, 1], &[2]).unwrap();
    let r = run1(
        &Op::IncTake {
            axis: 1,
            set: false,
        },
        &[&m, &Tensor::scalar(10.0), &u],
    )
    .unwrap();
    assert_eq!(f64s(&r), vec![0., 21., 2., 3., 24., 5.]);
    // Errors.
    assert_err(
        run1(
            &Op::IncTake {
                axis: 0,
                set: false,
            },
            &[&x, &floats(&[1., 2.], &[2]), &idx],
        ),
        KernelError::Shape,
        "shape mismatch: value array of shape (2,) could not be broadcast to indexing result of shape (4,)",
    );
    assert_err(
        run1(
            &Op::IncTake { axis: 0, set: true },
            &[&x, &y, &ints(&[0, 3, 0, 0], &[4])],
        ),
        KernelError::Index,
        "index 3 is out of bounds for axis 0 with size 3",
    );
    assert_err(
        run1(&Op::IncTake { axis: 1, set: true }, &[&x, &y, &idx]),
        KernelError::Value,
        "axis 1 is out of bounds for array of dimension 1",
    );
}

#[test]
fn bool_updates_are_logical_or() {
    let x = Tensor::from_slice(&[false, true, false], &[3]).unwrap();
    let y = Tensor::from_slice(&[true, true], &[2]).unwrap();
    let r = run1(
        &Op::IncTake {
            axis: 0,
            set: false,
        },
        &[&x, &y, &ints(&[1, 1], &[2])],
    )
    .unwrap();
    assert_eq!(r.to_vec::<bool>().unwrap(), vec![false, true, false]);
    let r = run1(
        &Op::IncTake {
            axis: 0,
            set: false,
        },
        &[&x, &y, &ints(&[0, 2], &[2])],
    )
    .unwrap();
    assert_eq!(r.to_vec::<bool>().unwrap(), vec![true, true, true]);
}
