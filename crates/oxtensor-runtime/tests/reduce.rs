//! The interpreter's `Reduce` and `ArgReduce` kernels against naive reference loops: random
//! shapes (including empty ones), axis subsets, every dtype and strided, reversed, broadcast
//! and permuted views; the fast paths at sizes above the parallel threshold; float accuracy;
//! NaN propagation; and NumPy's errors for empty reductions.

use oxtensor_data::{DType, Element, Tensor, dispatch_dtype};
use oxtensor_graph::{ArgReduceOp, Axes, Op, ReduceOp, TensorType};
use oxtensor_runtime::KernelError;
use oxtensor_runtime::kernels::{KernelCtx, eval};
use proptest::prelude::*;

use crate::strided_support;
use strided_support::{Layout, Rng, layout};

const OPS: [ReduceOp; 6] = ReduceOp::ALL;

// ---------------------------------------------------------------------------------------------
// Calling the kernels.

fn run(op: &Op, x: &Tensor, out_dtype: DType, out_ndim: usize) -> Result<Tensor, KernelError> {
    let ctx = KernelCtx {
        input_types: &[TensorType::of_rank(x.dtype(), x.ndim())],
        output_types: &[TensorType::of_rank(out_dtype, out_ndim)],
    };
    let mut outs = eval(op, &[x], &ctx)?;
    assert_eq!(outs.len(), 1);
    Ok(outs.remove(0))
}

fn reduce(op: ReduceOp, axes: &[usize], x: &Tensor) -> Result<Tensor, KernelError> {
    let out = run(
        &Op::Reduce {
            op,
            axes: Axes::from_slice(axes),
        },
        x,
        op.output_dtype(x.dtype()),
        x.ndim() - axes.len(),
    )?;
    assert_eq!(
        out.dtype(),
        op.output_dtype(x.dtype()),
        "{op:?} of {}",
        x.dtype()
    );
    Ok(out)
}

fn arg(op: ArgReduceOp, axis: Option<usize>, x: &Tensor) -> Result<Tensor, KernelError> {
    let ndim = axis.map_or(0, |_| x.ndim() - 1);
    let out = run(&Op::ArgReduce { op, axis }, x, DType::I64, ndim)?;
    assert_eq!(out.dtype(), DType::I64);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Building strided inputs.

/// Values whose sums and products are exact in every dtype (small integers; for floats,
/// powers of two and zero), with NaNs among floats when `nan_rate > 0`.
fn small_value<T: Element>(rng: &mut Rng, nan_rate: f64) -> T {
    const FLOATS: [f64; 7] = [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0];
    let v = (rng.next() % 7) as usize;
    if T::DTYPE.is_float() {
        if rng.unit() < nan_rate {
            T::from_f64(f64::NAN)
        } else {
            T::from_f64(FLOATS[v])
        }
    } else {
        T::from_i64(v as i64 - 3)
    }
}

fn build_small(l: &Layout, dtype: DType, seed: u64, nan_rate: f64) -> Tensor {
    let mut rng = Rng(seed);
    dispatch_dtype!(dtype, T => l.build::<T>(|_| small_value::<T>(&mut rng, nan_rate)))
}

// ---------------------------------------------------------------------------------------------
// Reference implementations.

/// The C-order offset of every multi-index of `shape` in a C-contiguous array of `full`'s
/// shape, where `dims` says which axis of `full` each axis of `shape` is.
fn offsets(full: &[usize], dims: &[usize]) -> Vec<usize> {
    let mut stride = vec![1; full.len()];
    for d in (0..full.len().saturating_sub(1)).rev() {
        stride[d] = stride[d + 1] * full[d + 1];
    }
    let mut out = vec![0];
    for &d in dims {
        let (n, step) = (full[d], stride[d]);
        out = out
            .iter()
            .flat_map(|&o| (0..n).map(move |i| o + i * step))
            .collect();
    }
    out
}

/// For each output position (C order), the reduced elements of `x`. Every element is read
/// once, with `Tensor::get` (which knows nothing of the kernels), into C order.
fn groups<T: Element>(x: &Tensor, axes: &[usize]) -> (Vec<usize>, Vec<Vec<T>>) {
    let shape = x.shape().to_vec();
    let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let out_shape: Vec<usize> = kept.iter().map(|&d| shape[d]).collect();
    let mut flat = Vec::with_capacity(x.numel());
    let mut idx = vec![0; shape.len()];
    for _ in 0..x.numel() {
        flat.push(x.get::<T>(&idx));
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    let reds = offsets(&shape, axes);
    let groups = offsets(&shape, &kept)
        .into_iter()
        .map(|o| reds.iter().map(|r| flat[o + r]).collect())
        .collect();
    (out_shape, groups)
}

fn extreme<T: Element>(g: &[T], max: bool) -> T {
    if let Some(&nan) = g.iter().find(|v| v.to_f64().is_nan()) {
        return nan;
    }
    let mut best = g[0];
    for &v in &g[1..] {
        if (max && v > best) || (!max && v < best) {
            best = v;
        }
    }
    best
}

/// NumPy's reduction, naively; `None` for a max/min over nothing.
fn reference(op: ReduceOp, axes: &[usize], x: &Tensor) -> Option<Tensor> {
    dispatch_dtype!(x.dtype(), T => {
        let (shape, gs) = groups::<T>(x, axes);
        let float = T::DTYPE.is_float();
        let unsigned = T::DTYPE.is_unsigned_int();
        let out = match op {
            ReduceOp::Sum | ReduceOp::Prod if float => {
                let v: Vec<T> = gs
                    .iter()
                    .map(|g| {
                        T::from_f64(if op == ReduceOp::Sum {
                            accurate_sum(g.iter().map(|v| v.to_f64()))
                        } else {
                            g.iter().map(|v| v.to_f64()).product::<f64>()
                        })
                    })
                    .collect();
                Tensor::from_slice(&v, &shape)
            }
            ReduceOp::Sum | ReduceOp::Prod if unsigned => {
                let v: Vec<u64> = gs
                    .iter()
                    .map(|g| {
                        g.iter().fold(u64::from(op == ReduceOp::Prod), |a, v| {
                            if op == ReduceOp::Sum {
                                a.wrapping_add(v.to_u64())
                            } else {
                                a.wrapping_mul(v.to_u64())
                            }
                        })
                    })
                    .collect();
                Tensor::from_slice(&v, &shape)
            }
            ReduceOp::Sum | ReduceOp::Prod => {
                let v: Vec<i64> = gs
                    .iter()
                    .map(|g| {
                        g.iter().fold(i64::from(op == ReduceOp::Prod), |a, v| {
                            if op == ReduceOp::Sum {
                                a.wrapping_add(v.to_i64())
                            } else {
                                a.wrapping_mul(v.to_i64())
                            }
                        })
                    })
                    .collect();
                Tensor::from_slice(&v, &shape)
            }
            ReduceOp::Max | ReduceOp::Min => {
                if gs.iter().any(|g| g.is_empty())
                    || (gs.is_empty() && axes.iter().any(|&a| x.shape()[a] == 0))
                {
                    return None;
                }
                let v: Vec<T> = gs.iter().map(|g| extreme(g, op == ReduceOp::Max)).collect();
                Tensor::from_slice(&v, &shape)
            }
            ReduceOp::All => {
                let v: Vec<bool> = gs.iter().map(|g| g.iter().all(|v| v.to_bool())).collect();
                Tensor::from_slice(&v, &shape)
            }
            ReduceOp::Any => {
                let v: Vec<bool> = gs.iter().map(|g| g.iter().any(|v| v.to_bool())).collect();
                Tensor::from_slice(&v, &shape)
            }
        };
        Some(out.unwrap())
    })
}

/// Index of the first extreme (NaN first) of a sequence.
fn ref_arg<T: Element>(g: &[T], max: bool) -> i64 {
    if let Some(i) = g.iter().position(|v| v.to_f64().is_nan()) {
        return i as i64;
    }
    let mut best = 0;
    for (i, &v) in g.iter().enumerate() {
        if (max && v > g[best]) || (!max && v < g[best]) {
            best = i;
        }
    }
    best as i64
}

fn reference_arg(max: bool, axis: Option<usize>, x: &Tensor) -> Option<Tensor> {
    dispatch_dtype!(x.dtype(), T => {
        match axis {
            None => {
                let flat = x.to_vec::<T>().unwrap();
                (!flat.is_empty()).then(|| Tensor::scalar(ref_arg(&flat, max)))
            }
            Some(a) => {
                if x.shape()[a] == 0 {
                    return None;
                }
                let (shape, gs) = groups::<T>(x, &[a]);
                let v: Vec<i64> = gs.iter().map(|g| ref_arg(g, max)).collect();
                Some(Tensor::from_slice(&v, &shape).unwrap())
            }
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Comparisons.

/// Same dtype and shape, and equal elements: exactly for integers and bools; for floats
/// within `rtol` relative to the larger magnitude (or to 1, for values of order 1 that cancel),
/// NaN matching NaN.
fn assert_close(actual: &Tensor, expected: &Tensor, rtol: f64, what: &str) {
    assert_eq!(actual.dtype(), expected.dtype(), "{what}: dtype");
    assert_eq!(actual.shape(), expected.shape(), "{what}: shape");
    if actual.dtype().is_float() {
        let (a, e) = (actual.to_vec_as::<f64>(), expected.to_vec_as::<f64>());
        for (i, (x, y)) in a.iter().zip(&e).enumerate() {
            let ok = (x.is_nan() && y.is_nan())
                || x == y
                || (x - y).abs() <= rtol * x.abs().max(y.abs()).max(1.0);
            assert!(ok, "{what}: element {i}: got {x}, expected {y}");
        }
    } else {
        assert_eq!(
            actual.to_bytes(),
            expected.to_bytes(),
            "{what}: {actual:?} vs {expected:?}"
        );
    }
}

fn axes_of(mask: u8, ndim: usize) -> Vec<usize> {
    (0..ndim).filter(|d| mask & (1 << d) != 0).collect()
}

fn check_reduce(op: ReduceOp, axes: &[usize], x: &Tensor, rtol: f64) {
    let what = format!(
        "{op:?} over {axes:?} of {:?} {:?} (strides {:?})",
        x.dtype(),
        x.shape(),
        x.strides()
    );
    match (reference(op, axes, x), reduce(op, axes, x)) {
        (Some(e), Ok(a)) => assert_close(&a, &e, rtol, &what),
        (None, Err(KernelError::Value(msg))) => {
            let name = if op == ReduceOp::Max {
                "maximum"
            } else {
                "minimum"
            };
            assert_eq!(
                msg,
                format!("zero-size array to reduction operation {name} which has no identity")
            );
        }
        (e, a) => panic!("{what}: expected {e:?}, got {a:?}"),
    }
}

fn check_arg(max: bool, axis: Option<usize>, x: &Tensor) {
    let op = if max {
        ArgReduceOp::ArgMax
    } else {
        ArgReduceOp::ArgMin
    };
    let what = format!(
        "{op:?} axis {axis:?} of {:?} {:?} (strides {:?})",
        x.dtype(),
        x.shape(),
        x.strides()
    );
    match (reference_arg(max, axis, x), arg(op, axis, x)) {
        (Some(e), Ok(a)) => assert_close(&a, &e, 0.0, &what),
        (None, Err(KernelError::Value(msg))) => {
            let name = if max { "argmax" } else { "argmin" };
            assert_eq!(msg, format!("attempt to get {name} of an empty sequence"));
        }
        (e, a) => panic!("{what}: expected {e:?}, got {a:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Property tests.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Every op, dtype and axis subset on small strided views, exactly.
    #[test]
    fn reduce_matches_reference(
        l in layout(4, 4),
        dtype in prop::sample::select(DType::REAL.to_vec()),
        op in prop::sample::select(OPS.to_vec()),
        mask in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let x = build_small(&l, dtype, seed, 0.0);
        check_reduce(op, &axes_of(mask, x.ndim()), &x, 0.0);
    }

    /// Floats with NaNs: max/min propagate them, sums and products too.
    #[test]
    fn reduce_propagates_nan(
        l in layout(3, 5),
        dtype in prop::sample::select(vec![DType::F32, DType::F64]),
        op in prop::sample::select(OPS.to_vec()),
        mask in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let x = build_small(&l, dtype, seed, 0.2);
        check_reduce(op, &axes_of(mask, x.ndim()), &x, 0.0);
    }

    /// Larger views (several thousand elements), so pairwise splits and the row/column/general
    /// paths all run with non-trivial extents; floats hold arbitrary values (near 1 for
    /// products, which would otherwise overflow or underflow).
    #[test]
    fn reduce_larger_views(
        l in layout(3, 24),
        dtype in prop::sample::select(DType::REAL.to_vec()),
        op in prop::sample::select(OPS.to_vec()),
        mask in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let mut rng = Rng(seed);
        let x = dispatch_dtype!(dtype, T => l.build::<T>(|_| {
            if T::DTYPE.is_float() && op == ReduceOp::Prod {
                T::from_f64(0.95 + 0.1 * rng.unit())
            } else if T::DTYPE.is_float() {
                T::from_f64(rng.unit() * 2.0 - 0.5)
            } else {
                small_value::<T>(&mut rng, 0.0)
            }
        }));
        let rtol = if dtype == DType::F32 { 1e-5 } else { 1e-12 };
        check_reduce(op, &axes_of(mask, x.ndim()), &x, rtol);
    }

    /// Argmax/argmin on every axis and flattened: ties (small value range), NaNs, any layout.
    #[test]
    fn arg_reduce_matches_reference(
        l in layout(4, 4),
        dtype in prop::sample::select(DType::REAL.to_vec()),
        max in any::<bool>(),
        axis in any::<u8>(),
        flat in any::<bool>(),
        nan in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let x = build_small(&l, dtype, seed, if nan { 0.15 } else { 0.0 });
        let axis = if flat || x.ndim() == 0 { None } else { Some(axis as usize % x.ndim()) };
        check_arg(max, axis, &x);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Long runs (several search blocks) with many ties and rare NaNs, flattened, along
    /// contiguous rows and down columns.
    #[test]
    fn arg_reduce_long_runs(
        rows in 1usize..4,
        len in 1usize..9000,
        dtype in prop::sample::select(vec![DType::F64, DType::F32, DType::I16, DType::U8, DType::Bool]),
        nan in prop::sample::select(vec![0.0, 0.0002, 0.01]),
        max in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let x = build_small(&Layout::contiguous(&[rows, len]), dtype, seed, nan);
        check_arg(max, None, &x);
        check_arg(max, Some(1), &x);
        check_arg(max, Some(0), &x);
        let t = x.permute(&[1, 0]);
        check_arg(max, None, &t);
        check_arg(max, Some(0), &t);
    }
}

// ---------------------------------------------------------------------------------------------
// Fast paths at parallel sizes.

/// Reduces big arrays through each path (rows, columns, general; sequential and threaded)
/// and compares with the reference.
#[test]
fn fast_paths_above_parallel_threshold() {
    let shapes: &[(&[usize], &[&[usize]])] = &[
        (&[70_001], &[&[0], &[]]),
        (&[300, 517], &[&[0], &[1], &[0, 1]]),
        (&[3, 40_000], &[&[0], &[1]]),
        (&[40_000, 3], &[&[0], &[1]]),
        (&[20, 33, 130], &[&[0, 2], &[1], &[0, 1], &[1, 2], &[0]]),
    ];
    let mut rng = Rng(7);
    for &(shape, axes_list) in shapes {
        let base = Layout::contiguous(shape);
        let mut views = vec![base.clone()];
        // Transposed and reversed variants of the same shape.
        let mut t = base.clone();
        t.perm.reverse();
        views.push(t);
        let mut r = base.clone();
        r.neg = vec![true; shape.len()];
        r.step[0] = 2;
        views.push(r);
        // The layouts choose the path; the dtypes only the loop's element type. So every
        // dtype runs on the contiguous layout, and float64 plus one other on the other two
        // (the unoptimised test build runs these kernels slowly).
        for (v, l) in views.iter().enumerate() {
            let f = l.build::<f64>(|_| rng.unit() - 0.25);
            let mut others = Vec::new();
            if v != 2 {
                others.push((l.build::<i32>(|_| (rng.next() % 2001) as i32 - 1000), 0.0));
            }
            if v != 1 {
                others.push((l.build::<bool>(|_| !rng.next().is_multiple_of(50)), 0.0));
            }
            if v == 0 {
                others.push((l.build::<f32>(|_| rng.unit() as f32), 1e-6));
                others.push((l.build::<u8>(|_| (rng.next() % 256) as u8), 0.0));
            }
            for &axes in axes_list {
                for op in OPS {
                    check_reduce(op, axes, &f, 1e-12);
                    for (x, rtol) in &others {
                        check_reduce(op, axes, x, *rtol);
                    }
                }
            }
            for axis in [None, Some(0), Some(shape.len() - 1)] {
                for max in [true, false] {
                    check_arg(max, axis, &f);
                    for (x, _) in &others {
                        if x.dtype() != DType::F32 && x.dtype() != DType::U8 {
                            check_arg(max, axis, x);
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Accuracy.

/// Compensated (Neumaier) sum, as an accurate reference.
fn accurate_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for v in values {
        let t = s + v;
        c += if s.abs() >= v.abs() {
            (s - t) + v
        } else {
            (v - t) + s
        };
        s = t;
    }
    s + c
}

#[test]
fn float32_sum_of_ten_million_does_not_drift() {
    let n = 10_000_000;
    let x = Tensor::full(0.1f32, &[n]).unwrap();
    let got = reduce(ReduceOp::Sum, &[0], &x)
        .unwrap()
        .item::<f64>()
        .unwrap();
    let want = 0.1f32 as f64 * n as f64;
    let rel = (got - want).abs() / want;
    assert!(rel < 1e-6, "sum {got} vs {want}: relative error {rel}");
    // A naive float32 loop is off by about 10%: the pairwise f64 sum is not.
    let naive = (0..n).fold(0.0f32, |a, _| a + 0.1f32) as f64;
    assert!((naive - want).abs() / want > 1e-3);

    let mut rng = Rng(11);
    let x = Layout::contiguous(&[n]).build::<f32>(|_| rng.unit() as f32);
    let want = accurate_sum(x.to_vec::<f32>().unwrap().into_iter().map(f64::from));
    let got = reduce(ReduceOp::Sum, &[0], &x)
        .unwrap()
        .item::<f64>()
        .unwrap();
    assert!((got - want).abs() / want < 1e-6, "{got} vs {want}");
}

#[test]
fn float_sums_are_accurate_in_every_layout() {
    let mut rng = Rng(3);
    // f64 full sum: pairwise error stays near machine precision.
    let n = 4_000_000;
    let x = Layout::contiguous(&[n]).build::<f64>(|_| rng.unit());
    let want = accurate_sum(x.to_vec::<f64>().unwrap().into_iter());
    let got = reduce(ReduceOp::Sum, &[0], &x)
        .unwrap()
        .item::<f64>()
        .unwrap();
    assert!((got - want).abs() / want < 1e-14, "{got} vs {want}");

    // float32 columns (leading axis) and strided (general path) sums of 0.1.
    let rows = 1_000_000;
    let x = Tensor::full(0.1f32, &[rows, 4]).unwrap();
    let want = 0.1f32 as f64 * rows as f64;
    for (view, axes) in [
        (x.clone(), vec![0]),
        (x.permute(&[1, 0]), vec![1]),
        (x.clone(), vec![0, 1]),
    ] {
        let out = reduce(ReduceOp::Sum, &axes, &view).unwrap();
        let per = want * (view.numel() / out.numel().max(1)) as f64 / rows as f64;
        for got in out.to_vec_as::<f64>() {
            assert!((got - per).abs() / per < 1e-6, "{axes:?}: {got} vs {per}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Specific semantics.

#[test]
fn max_min_propagate_nan_and_handle_infinities() {
    let x = Tensor::from_slice(&[1.0f64, f64::NAN, f64::INFINITY, 3.0], &[4]).unwrap();
    assert!(
        reduce(ReduceOp::Max, &[0], &x)
            .unwrap()
            .item::<f64>()
            .unwrap()
            .is_nan()
    );
    assert!(
        reduce(ReduceOp::Min, &[0], &x)
            .unwrap()
            .item::<f64>()
            .unwrap()
            .is_nan()
    );
    let x = Tensor::from_slice(&[f64::NEG_INFINITY, f64::NEG_INFINITY], &[2]).unwrap();
    assert_eq!(
        reduce(ReduceOp::Max, &[0], &x).unwrap().item::<f64>(),
        Some(f64::NEG_INFINITY)
    );
    // NaN in one row only: the other rows are unaffected (rows and columns paths).
    let x = Tensor::from_slice(&[1.0f32, 5.0, f32::NAN, 2.0, 0.5, 4.0], &[2, 3]).unwrap();
    let rows = reduce(ReduceOp::Max, &[1], &x)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert!(rows[0].is_nan() && rows[1] == 4.0);
    let cols = reduce(ReduceOp::Min, &[0], &x)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert!(cols[0] == 1.0 && cols[1] == 0.5 && cols[2].is_nan());
    // NaN is true for all/any, as in NumPy.
    let x = Tensor::from_slice(&[f64::NAN, 1.0], &[2]).unwrap();
    assert_eq!(
        reduce(ReduceOp::All, &[0], &x).unwrap().item::<bool>(),
        Some(true)
    );
}

#[test]
fn empty_reductions_give_identities_or_numpy_errors() {
    let x = Tensor::zeros(DType::I32, &[0, 3]).unwrap();
    let sum = reduce(ReduceOp::Sum, &[0], &x).unwrap();
    assert_eq!(
        (sum.dtype(), sum.to_vec::<i64>().unwrap()),
        (DType::I64, vec![0; 3])
    );
    let prod = reduce(ReduceOp::Prod, &[0], &x).unwrap();
    assert_eq!(prod.to_vec::<i64>().unwrap(), vec![1; 3]);
    let all = reduce(ReduceOp::All, &[0], &x).unwrap();
    assert_eq!(all.to_vec::<bool>().unwrap(), vec![true; 3]);
    let any = reduce(ReduceOp::Any, &[0, 1], &x).unwrap();
    assert_eq!(any.item::<bool>(), Some(false));
    // Max over a non-empty axis of an empty array is an empty result …
    let m = reduce(ReduceOp::Max, &[1], &x).unwrap();
    assert_eq!(m.shape(), &[0]);
    // … over an empty axis an error, as in NumPy, whatever the output size.
    for (op, name) in [(ReduceOp::Max, "maximum"), (ReduceOp::Min, "minimum")] {
        for (shape, axes) in [(&[0, 3][..], &[0][..]), (&[0, 0], &[1]), (&[0], &[0])] {
            let x = Tensor::zeros(DType::F64, shape).unwrap();
            assert_eq!(
                reduce(op, axes, &x).err(),
                Some(KernelError::Value(format!(
                    "zero-size array to reduction operation {name} which has no identity"
                )))
            );
        }
    }
    let f = Tensor::zeros(DType::F32, &[2, 0]).unwrap();
    let p = reduce(ReduceOp::Prod, &[1], &f).unwrap();
    assert_eq!(
        (p.dtype(), p.to_vec::<f32>().unwrap()),
        (DType::F32, vec![1.0; 2])
    );
}

#[test]
fn integer_sums_widen_and_wrap() {
    let x = Tensor::from_slice(&[200u8, 100, 50], &[3]).unwrap();
    let s = reduce(ReduceOp::Sum, &[0], &x).unwrap();
    assert_eq!((s.dtype(), s.item::<u64>()), (DType::U64, Some(350)));
    let x = Tensor::from_slice(&[i64::MAX, 1], &[2]).unwrap();
    assert_eq!(
        reduce(ReduceOp::Sum, &[0], &x).unwrap().item::<i64>(),
        Some(i64::MIN)
    );
    let x = Tensor::from_slice(&[-128i8, -128, -128], &[3]).unwrap();
    let p = reduce(ReduceOp::Prod, &[0], &x).unwrap();
    assert_eq!(
        (p.dtype(), p.to_vec::<i64>().unwrap()),
        (DType::I64, vec![-2_097_152])
    );
    let b = Tensor::from_slice(&[true, true, false, true], &[4]).unwrap();
    assert_eq!(
        reduce(ReduceOp::Sum, &[0], &b).unwrap().item::<i64>(),
        Some(3)
    );
    let mx = reduce(ReduceOp::Max, &[0], &b).unwrap();
    assert_eq!((mx.dtype(), mx.item::<bool>()), (DType::Bool, Some(true)));
    assert_eq!(
        reduce(ReduceOp::Min, &[0], &b).unwrap().item::<bool>(),
        Some(false)
    );
}

#[test]
fn reducing_no_axes_copies_and_converts() {
    let x = Tensor::from_slice(&[1i8, -2, 3, 4], &[2, 2])
        .unwrap()
        .permute(&[1, 0]);
    let s = reduce(ReduceOp::Sum, &[], &x).unwrap();
    assert_eq!(s.to_vec::<i64>().unwrap(), vec![1, 3, -2, 4]);
    let a = reduce(ReduceOp::Any, &[], &x).unwrap();
    assert_eq!(a.to_vec::<bool>().unwrap(), vec![true; 4]);
    let z = Tensor::zeros(DType::F64, &[0, 2]).unwrap();
    assert_eq!(reduce(ReduceOp::Max, &[], &z).unwrap().shape(), &[0, 2]);
}

#[test]
fn argmax_ties_nan_and_errors() {
    let x = Tensor::from_slice(&[1.0f64, 3.0, 3.0, f64::NAN, 7.0, f64::NAN], &[6]).unwrap();
    assert_eq!(
        arg(ArgReduceOp::ArgMax, None, &x).unwrap().item::<i64>(),
        Some(3)
    );
    assert_eq!(
        arg(ArgReduceOp::ArgMin, None, &x).unwrap().item::<i64>(),
        Some(3)
    );
    let x = Tensor::from_slice(&[2i32, 5, 5, -1, -1, 0], &[6]).unwrap();
    assert_eq!(
        arg(ArgReduceOp::ArgMax, None, &x).unwrap().item::<i64>(),
        Some(1)
    );
    assert_eq!(
        arg(ArgReduceOp::ArgMin, None, &x).unwrap().item::<i64>(),
        Some(3)
    );
    let x = Tensor::from_slice(&[false, true, true], &[3]).unwrap();
    assert_eq!(
        arg(ArgReduceOp::ArgMax, None, &x).unwrap().item::<i64>(),
        Some(1)
    );
    // Per axis, on both the row-wise and the column-wise path.
    let x = Tensor::from_slice(&[1.0f32, 9.0, 9.0, f32::NAN, 2.0, 1.0], &[2, 3]).unwrap();
    let rows = arg(ArgReduceOp::ArgMax, Some(1), &x).unwrap();
    assert_eq!(rows.to_vec::<i64>().unwrap(), vec![1, 0]);
    let cols = arg(ArgReduceOp::ArgMin, Some(0), &x).unwrap();
    assert_eq!(cols.to_vec::<i64>().unwrap(), vec![1, 1, 1]);
    let cols = arg(ArgReduceOp::ArgMax, Some(0), &x).unwrap();
    assert_eq!(cols.to_vec::<i64>().unwrap(), vec![1, 0, 0]);
    // Long flat search (parallel chunks) with a NaN late and a tie across chunks.
    let mut v = vec![0.0f64; 300_000];
    v[100_000] = 5.0;
    v[250_000] = 5.0;
    let x = Tensor::from_slice(&v, &[v.len()]).unwrap();
    assert_eq!(
        arg(ArgReduceOp::ArgMax, None, &x).unwrap().item::<i64>(),
        Some(100_000)
    );
    v[290_000] = f64::NAN;
    v[299_999] = f64::NAN;
    let x = Tensor::from_slice(&v, &[v.len()]).unwrap();
    assert_eq!(
        arg(ArgReduceOp::ArgMin, None, &x).unwrap().item::<i64>(),
        Some(290_000)
    );
    // Empty sequences.
    for (shape, axis) in [
        (&[0][..], None),
        (&[3, 0], Some(1)),
        (&[0, 0], Some(1)),
        (&[0, 3], Some(0)),
    ] {
        let x = Tensor::zeros(DType::F64, shape).unwrap();
        assert_eq!(
            arg(ArgReduceOp::ArgMax, axis, &x).err(),
            Some(KernelError::Value(
                "attempt to get argmax of an empty sequence".into()
            ))
        );
        assert_eq!(
            arg(ArgReduceOp::ArgMin, axis, &x).err(),
            Some(KernelError::Value(
                "attempt to get argmin of an empty sequence".into()
            ))
        );
    }
    let x = Tensor::zeros(DType::F64, &[0, 3]).unwrap();
    assert_eq!(arg(ArgReduceOp::ArgMax, Some(1), &x).unwrap().shape(), &[0]);
    // A 0-d array has one element, at index 0.
    assert_eq!(
        arg(ArgReduceOp::ArgMax, None, &Tensor::scalar(4u8))
            .unwrap()
            .item::<i64>(),
        Some(0)
    );
}
