//! Kernels of [`Op::Extra`](oxtensor_graph::Op::Extra): scans along an axis, stable sorting
//! with NumPy's NaN-last order, binary search, repetition, `unique`, `bincount` and
//! `nonzero`. Each reads its input in C order (any strides) and writes a fresh contiguous
//! output; the ops whose output extent depends on the values size it here, at run time.

use super::scalar::Arith;
use crate::KernelError;
use oxtensor_data::{DType, Element, Tensor, dispatch_dtype};
use oxtensor_graph::ExtraOp;
use std::cmp::Ordering;

/// Computes `op` on `inputs`, one tensor per output.
pub(crate) fn extra(op: &ExtraOp, inputs: &[&Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let x = inputs[0];
    match op {
        ExtraOp::Cumulate { axis, mul } => Ok(vec![cumulate(x, *axis, *mul)?]),
        ExtraOp::Sort { axis } => Ok(vec![sort(x, *axis)?]),
        ExtraOp::ArgSort { axis } => Ok(vec![argsort(x, *axis)?]),
        ExtraOp::SearchSorted { right } => Ok(vec![searchsorted(x, inputs[1], *right)?]),
        ExtraOp::Repeat { axis } => Ok(vec![repeat(x, inputs[1], *axis)?]),
        ExtraOp::Unique {
            index,
            inverse,
            counts,
        } => unique(x, *index, *inverse, *counts),
        ExtraOp::Bincount { minlength, .. } => {
            Ok(vec![bincount(x, inputs.get(1).copied(), *minlength)?])
        }
        ExtraOp::Nonzero => Ok(vec![nonzero(x)?]),
    }
}

/// NumPy's sort order: NaNs after every number, equal among themselves.
pub fn nan_last<T: Element>(a: &T, b: &T) -> Ordering {
    #[allow(clippy::eq_op)]
    let (a_nan, b_nan) = (a != a, b != b);
    match (a_nan, b_nan) {
        (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
    }
}

/// `(outer, n, inner)`: the extents before, at and after `axis`.
fn split_at_axis(t: &Tensor, axis: usize) -> Result<(usize, usize, usize), KernelError> {
    lanes_at_axis(t.shape(), axis)
}

/// `(outer, n, inner)`: the extents of `shape` before, at and after `axis`.
pub(super) fn lanes_at_axis(
    shape: &[usize],
    axis: usize,
) -> Result<(usize, usize, usize), KernelError> {
    if axis >= shape.len() {
        return Err(KernelError::Value(format!(
            "axis {axis} is out of bounds for a tensor of rank {}",
            shape.len()
        )));
    }
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product();
    Ok((outer, shape[axis], inner))
}

/// Visits every lane along an axis: `f(offsets of its n elements in C order)`.
fn for_each_lane(
    outer: usize,
    n: usize,
    inner: usize,
    mut f: impl FnMut(&mut dyn Iterator<Item = usize>),
) {
    for o in 0..outer {
        for j in 0..inner {
            let base = o * n * inner + j;
            f(&mut (0..n).map(move |i| base + i * inner));
        }
    }
}

fn cumulate_t<T: Arith>(x: &Tensor, axis: usize, mul: bool) -> Result<Tensor, KernelError> {
    let lanes = split_at_axis(x, axis)?;
    let mut data = x.to_vec::<T>()?;
    cumulate_lanes(&mut data, lanes, mul);
    Ok(Tensor::from_slice(&data, x.shape())?)
}

/// Replaces each lane of `data` (C order, extents `(outer, n, inner)` around the axis) by its
/// running sum (`mul`: product): the per-element code of `cumsum`/`cumprod`, shared by the
/// interpreter's kernel and [`super::InPlaceExtra`].
pub(super) fn cumulate_lanes<T: Arith>(data: &mut [T], lanes: (usize, usize, usize), mul: bool) {
    let (outer, n, inner) = lanes;
    for_each_lane(outer, n, inner, |lane| {
        let mut prev: Option<usize> = None;
        for k in lane {
            if let Some(p) = prev {
                data[k] = if mul {
                    data[p].mul(data[k])
                } else {
                    data[p].add(data[k])
                };
            }
            prev = Some(k);
        }
    });
}

/// The message of `cumsum`/`cumprod` of a boolean input.
pub(super) const CUMULATE_BOOL: &str =
    "cumsum/cumprod: boolean input (cast it to an integer type first)";

fn cumulate(x: &Tensor, axis: usize, mul: bool) -> Result<Tensor, KernelError> {
    match x.dtype() {
        DType::Bool => Err(KernelError::Value(CUMULATE_BOOL.into())),
        DType::I8 => cumulate_t::<i8>(x, axis, mul),
        DType::I16 => cumulate_t::<i16>(x, axis, mul),
        DType::I32 => cumulate_t::<i32>(x, axis, mul),
        DType::I64 => cumulate_t::<i64>(x, axis, mul),
        DType::U8 => cumulate_t::<u8>(x, axis, mul),
        DType::U16 => cumulate_t::<u16>(x, axis, mul),
        DType::U32 => cumulate_t::<u32>(x, axis, mul),
        DType::U64 => cumulate_t::<u64>(x, axis, mul),
        DType::F32 => cumulate_t::<f32>(x, axis, mul),
        DType::F64 => cumulate_t::<f64>(x, axis, mul),
        DType::C64 => cumulate_t::<oxtensor_data::C64>(x, axis, mul),
        DType::C128 => cumulate_t::<oxtensor_data::C128>(x, axis, mul),
    }
}

/// The index buffers a sort along an axis works in, kept by [`super::InPlaceExtra`] between
/// calls so that a loop's step sorts without allocating.
#[derive(Default)]
pub(super) struct SortScratch {
    perm: Vec<usize>,
    offs: Vec<usize>,
}

/// For each lane along `axis`, the stable NaN-last permutation that sorts it, applied by
/// `emit(lane offsets, permutation)`.
fn sorted_lanes<T: Element>(
    data: &[T],
    (outer, n, inner): (usize, usize, usize),
    scratch: &mut SortScratch,
    mut emit: impl FnMut(&[usize], &[usize]),
) {
    let SortScratch { perm, offs } = scratch;
    for_each_lane(outer, n, inner, |lane| {
        offs.clear();
        offs.extend(lane);
        perm.clear();
        perm.extend(0..n);
        perm.sort_by(|&a, &b| nan_last(&data[offs[a]], &data[offs[b]]));
        emit(offs, perm);
    });
}

/// Writes `data` (C order, extents `(outer, n, inner)` around the axis) sorted along the axis
/// into `out`: the per-element code of `sort`, shared by the interpreter's kernel and
/// [`super::InPlaceExtra`].
pub(super) fn sort_into<T: Element>(
    data: &[T],
    out: &mut [T],
    lanes: (usize, usize, usize),
    scratch: &mut SortScratch,
) {
    sorted_lanes(data, lanes, scratch, |offs, perm| {
        for (i, &p) in perm.iter().enumerate() {
            out[offs[i]] = data[offs[p]];
        }
    });
}

/// Writes the indices that sort `data` (C order, extents `(outer, n, inner)` around the
/// axis) along the axis into `out`: the per-element code of `argsort`, shared by the
/// interpreter's kernel and [`super::InPlaceExtra`].
pub(super) fn argsort_into<T: Element>(
    data: &[T],
    out: &mut [i64],
    lanes: (usize, usize, usize),
    scratch: &mut SortScratch,
) {
    sorted_lanes(data, lanes, scratch, |offs, perm| {
        for (i, &p) in perm.iter().enumerate() {
            out[offs[i]] = p as i64;
        }
    });
}

fn sort(x: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    let lanes = split_at_axis(x, axis)?;
    dispatch_dtype!(x.dtype(), T => {
        let data = x.to_vec::<T>()?;
        let mut out = data.clone();
        sort_into(&data, &mut out, lanes, &mut SortScratch::default());
        Ok(Tensor::from_slice(&out, x.shape())?)
    })
}

fn argsort(x: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    let lanes = split_at_axis(x, axis)?;
    dispatch_dtype!(x.dtype(), T => {
        let data = x.to_vec::<T>()?;
        let mut out = vec![0i64; data.len()];
        argsort_into(&data, &mut out, lanes, &mut SortScratch::default());
        Ok(Tensor::from_slice(&out, x.shape())?)
    })
}

fn search<T: Element>(a: &[T], v: &[T], right: bool) -> Vec<i64> {
    v.iter()
        .map(|x| {
            a.partition_point(|y| match nan_last(y, x) {
                Ordering::Less => true,
                Ordering::Equal => right,
                Ordering::Greater => false,
            }) as i64
        })
        .collect()
}

fn searchsorted(a: &Tensor, v: &Tensor, right: bool) -> Result<Tensor, KernelError> {
    if a.ndim() != 1 {
        return Err(KernelError::Shape(format!(
            "searchsorted: the sorted array must be a vector, got shape {:?}",
            a.shape()
        )));
    }
    let out = if a.dtype().is_float() || v.dtype().is_float() {
        search(&a.to_vec_as::<f64>(), &v.to_vec_as::<f64>(), right)
    } else if a.dtype() == DType::U64 || v.dtype() == DType::U64 {
        search(&a.to_vec_as::<u64>(), &v.to_vec_as::<u64>(), right)
    } else {
        search(&a.to_vec_as::<i64>(), &v.to_vec_as::<i64>(), right)
    };
    Ok(Tensor::from_slice(&out, v.shape())?)
}

fn repeat(x: &Tensor, repeats: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    let (outer, n, inner) = split_at_axis(x, axis)?;
    let r = repeats.to_vec_as::<i64>();
    let counts: Vec<usize> = match (repeats.ndim(), r.len()) {
        (0, _) | (1, 1) => vec![r[0]; n],
        (1, len) if len == n => r,
        _ => {
            return Err(KernelError::Shape(format!(
                "repeat: {} repeat counts for an axis of extent {n}",
                r.len()
            )));
        }
    }
    .into_iter()
    .map(|c| {
        usize::try_from(c)
            .map_err(|_| KernelError::Value(format!("repeat: repeat counts must be >= 0, got {c}")))
    })
    .collect::<Result<_, _>>()?;
    let total: usize = counts.iter().sum();
    let mut shape = x.shape().to_vec();
    shape[axis] = total;
    dispatch_dtype!(x.dtype(), T => {
        let data = x.to_vec::<T>()?;
        let mut out: Vec<T> = Vec::with_capacity(outer * total * inner);
        for o in 0..outer {
            for (i, &c) in counts.iter().enumerate() {
                let row = &data[(o * n + i) * inner..(o * n + i + 1) * inner];
                for _ in 0..c {
                    out.extend_from_slice(row);
                }
            }
        }
        Ok(Tensor::from_slice(&out, &shape)?)
    })
}

fn unique(
    x: &Tensor,
    index: bool,
    inverse: bool,
    counts: bool,
) -> Result<Vec<Tensor>, KernelError> {
    dispatch_dtype!(x.dtype(), T => {
        let data = x.to_vec::<T>()?;
        let mut perm: Vec<usize> = (0..data.len()).collect();
        perm.sort_by(|&a, &b| nan_last(&data[a], &data[b]));
        let mut values: Vec<T> = Vec::new();
        let mut first: Vec<i64> = Vec::new();
        let mut count: Vec<i64> = Vec::new();
        let mut inv = vec![0i64; data.len()];
        for &p in &perm {
            let same = values
                .last()
                .is_some_and(|last| nan_last(last, &data[p]) == Ordering::Equal);
            if !same {
                values.push(data[p]);
                first.push(p as i64);
                count.push(0);
            }
            let g = values.len() - 1;
            count[g] += 1;
            inv[p] = g as i64;
        }
        let mut out = vec![Tensor::from_slice(&values, &[values.len()])?];
        if index {
            out.push(Tensor::from_slice(&first, &[first.len()])?);
        }
        if inverse {
            out.push(Tensor::from_slice(&inv, &[inv.len()])?);
        }
        if counts {
            out.push(Tensor::from_slice(&count, &[count.len()])?);
        }
        Ok(out)
    })
}

fn bincount(x: &Tensor, weights: Option<&Tensor>, minlength: usize) -> Result<Tensor, KernelError> {
    let bins: Vec<usize> = x
        .to_vec_as::<i64>()
        .into_iter()
        .map(|b| {
            usize::try_from(b).map_err(|_| {
                KernelError::Value(format!("bincount: the input must be non-negative, got {b}"))
            })
        })
        .collect::<Result<_, _>>()?;
    let len = bins.iter().map(|b| b + 1).max().unwrap_or(0).max(minlength);
    match weights {
        None => {
            let mut out = vec![0i64; len];
            for b in bins {
                out[b] += 1;
            }
            Ok(Tensor::from_slice(&out, &[len])?)
        }
        Some(w) => {
            if w.shape() != x.shape() {
                return Err(KernelError::Shape(format!(
                    "bincount: weights of shape {:?} for an input of shape {:?}",
                    w.shape(),
                    x.shape()
                )));
            }
            let mut out = vec![0f64; len];
            for (b, w) in bins.into_iter().zip(w.to_vec_as::<f64>()) {
                out[b] += w;
            }
            Ok(Tensor::from_slice(&out, &[len])?)
        }
    }
}

fn nonzero(x: &Tensor) -> Result<Tensor, KernelError> {
    let shape = x.shape().to_vec();
    let flat = x.to_vec_as::<bool>();
    let hits: Vec<usize> = (0..flat.len()).filter(|&i| flat[i]).collect();
    let ndim = shape.len();
    let mut out = vec![0i64; ndim * hits.len()];
    for (k, &i) in hits.iter().enumerate() {
        let mut rem = i;
        for d in (0..ndim).rev() {
            out[d * hits.len() + k] = (rem % shape[d]) as i64;
            rem /= shape[d];
        }
    }
    Ok(Tensor::from_slice(&out, &[ndim, hits.len()])?)
}
