//! `np.argmax` / `np.argmin`: the index of the first extreme, where NaN counts as the extreme.

use super::walk::{Dim, at, fill_blocks, kept_dims, storage_slice};
use super::{MaxR, MinR, Num, is_nan, reduce_run};
use crate::KernelError;
use crate::kernels::PARALLEL_THRESHOLD;
use oxtensor_data::{DType, Element, Tensor, dispatch_dtype};
use oxtensor_graph::ArgReduceOp;
use rayon::prelude::*;
use smallvec::SmallVec;

/// Index (`int64`) of the largest (`ArgMax`) or smallest (`ArgMin`) element along `axis`, or in
/// the flattened C-order array when `axis` is `None`.
///
/// As in NumPy the first occurrence wins ties, and the first NaN wins outright (it is "the
/// extreme"); an empty sequence to search is an error.
pub fn arg_reduce(op: ArgReduceOp, axis: Option<usize>, x: &Tensor) -> Result<Tensor, KernelError> {
    let out_shape: Vec<usize> = match axis {
        None => Vec::new(),
        Some(a) => (0..x.ndim())
            .filter(|&d| d != a)
            .map(|d| x.shape()[d])
            .collect(),
    };
    // The flattened search reads the elements as one contiguous run.
    let x = if axis.is_none() {
        x.to_contiguous()
    } else {
        x.clone()
    };
    let mut out = Tensor::zeros(DType::I64, &out_shape)?;
    let dst = out
        .data_mut::<i64>()
        .ok_or_else(|| KernelError::Value("argmax/argmin: output not writable".into()))?;
    dispatch_dtype!(x.dtype(), T => {
        let data = storage_slice::<T>(&x)?;
        arg_into::<T>(op, axis, data, (x.shape(), x.strides(), x.offset()), dst)?;
    });
    Ok(out)
}

/// The per-element code of [`arg_reduce`], shared with [`crate::kernels::InPlaceExtra`]:
/// writes to `dst` the positions of the extremes of the view `(shape, strides, offset)` of
/// `data` (in elements; for `axis: None` the view must be C-contiguous), with the kernel's
/// errors (an axis out of bounds, an empty sequence).
pub(in crate::kernels) fn arg_into<T: Num>(
    op: ArgReduceOp,
    axis: Option<usize>,
    data: &[T],
    (shape, strides, offset): (&[usize], &[isize], usize),
    dst: &mut [i64],
) -> Result<(), KernelError> {
    let name = match op {
        ArgReduceOp::ArgMax => "argmax",
        ArgReduceOp::ArgMin => "argmin",
    };
    let empty = || KernelError::Value(format!("attempt to get {name} of an empty sequence"));
    let max = op == ArgReduceOp::ArgMax;
    match axis {
        None => {
            let numel: usize = shape.iter().product();
            if numel == 0 {
                return Err(empty());
            }
            let xs = &data[offset..offset + numel];
            let index = if max {
                flat_arg::<T, true>(xs)
            } else {
                flat_arg::<T, false>(xs)
            };
            if let Some(d) = dst.first_mut() {
                *d = index as i64;
            }
            Ok(())
        }
        Some(a) => {
            let Some(&n) = shape.get(a) else {
                return Err(KernelError::Value(format!(
                    "{name}: axis {a} is out of bounds for an array of dimension {}",
                    shape.len()
                )));
            };
            if n == 0 {
                return Err(empty());
            }
            if dst.is_empty() {
                return Ok(());
            }
            // The row-wise search writes a position only where it improves on the first.
            dst.fill(0);
            let kept = kept_dims(shape, strides, &[a]);
            let along = (n, strides[a]);
            let base = offset as isize;
            if max {
                axis_arg::<T, true>(data, &kept, along, base, dst);
            } else {
                axis_arg::<T, false>(data, &kept, along, base, dst);
            }
            Ok(())
        }
    }
}

/// True when `v` should replace `best` as the extreme so far (strictly better; NaN is
/// handled by the callers).
#[inline(always)]
fn better<T: Element, const MAX: bool>(v: T, best: T) -> bool {
    if MAX { v > best } else { v < best }
}

/// The first extreme of a sequence, as (position, value), by a sequential scan (for strided
/// data); `None` when empty.
fn scan<T: Element, const MAX: bool>(mut values: impl Iterator<Item = T>) -> Option<(usize, T)> {
    let mut best = values.next()?;
    let mut at_best = 0;
    if is_nan(best) {
        return Some((0, best));
    }
    for (i, v) in values.enumerate() {
        if is_nan(v) {
            return Some((i + 1, v));
        }
        if better::<T, MAX>(v, best) {
            best = v;
            at_best = i + 1;
        }
    }
    Some((at_best, best))
}

/// Combines the extremes of two parts (positions in one numbering): commutative and
/// associative, so parallel partial results may be merged in any grouping.
fn merge<T: Element, const MAX: bool>(a: (usize, T), b: (usize, T)) -> (usize, T) {
    let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
    if is_nan(first.1) {
        first
    } else if is_nan(second.1) || better::<T, MAX>(second.1, first.1) {
        second
    } else {
        first
    }
}

/// Elements per block of [`first_extreme`]'s vectorised first pass.
const BLOCK: usize = 2048;

/// The first extreme of a contiguous run, as (position, value); `None` when empty.
///
/// Two passes instead of one branchy scan: each block's extreme is found with the vectorised
/// max/min reduction (NaN propagating), keeping the first block that strictly improves on the
/// best so far; then the winning block is searched for the first element equal to its extreme
/// (or the first NaN), which is exactly where a sequential scan would have stopped.
fn first_extreme<T: Num, const MAX: bool>(xs: &[T]) -> Option<(usize, T)> {
    let mut best: Option<(usize, T)> = None;
    for (b, block) in xs.chunks(BLOCK).enumerate() {
        let m = if MAX {
            reduce_run(MaxR, block)
        } else {
            reduce_run(MinR, block)
        };
        if is_nan(m) {
            return block
                .iter()
                .position(|&v| is_nan(v))
                .map(|i| (b * BLOCK + i, m));
        }
        if best.is_none_or(|(_, v)| better::<T, MAX>(m, v)) {
            best = Some((b, m));
        }
    }
    let (b, m) = best?;
    let start = b * BLOCK;
    xs[start..(start + BLOCK).min(xs.len())]
        .iter()
        .position(|&v| v == m)
        .map(|i| (start + i, m))
}

/// Position of the first extreme of a non-empty contiguous run, in parallel chunks when long.
fn flat_arg<T: Num, const MAX: bool>(xs: &[T]) -> usize {
    let found = if xs.len() > PARALLEL_THRESHOLD {
        xs.par_chunks(PARALLEL_THRESHOLD)
            .enumerate()
            .filter_map(|(c, chunk)| {
                first_extreme::<T, MAX>(chunk).map(|(i, v)| (c * PARALLEL_THRESHOLD + i, v))
            })
            .reduce_with(merge::<T, MAX>)
    } else {
        first_extreme::<T, MAX>(xs)
    };
    found.map_or(0, |(i, _)| i)
}

/// Fills `dst` (C order over `kept`) with the position of the extreme along `along` (extent,
/// stride) for each kept position.
fn axis_arg<T: Num, const MAX: bool>(
    data: &[T],
    kept: &[Dim],
    along: Dim,
    base: isize,
    dst: &mut [i64],
) {
    let (n, s) = along;
    match kept.last() {
        // The innermost kept dimension is contiguous: update a whole row of candidates per
        // step along the axis, so memory is read in order.
        Some(&(width, 1)) if s != 1 => {
            let outer = &kept[..kept.len() - 1];
            fill_blocks(dst, width, outer, base, n * width, |o, d| {
                // On the stack for the widths of a loop's step (a Viterbi step's states).
                let mut best: SmallVec<[T; 32]> = SmallVec::from_slice(&data[at(o)..at(o) + width]);
                for r in 1..n {
                    let start = at(o + r as isize * s);
                    for ((b, i), &v) in best
                        .iter_mut()
                        .zip(d.iter_mut())
                        .zip(&data[start..start + width])
                    {
                        // Branch-free (`&`, `|`, selects) so the loop vectorises.
                        let take = !is_nan(*b) & (is_nan(v) | better::<T, MAX>(v, *b));
                        *b = if take { v } else { *b };
                        *i = if take { r as i64 } else { *i };
                    }
                }
            });
        }
        _ => fill_blocks(dst, 1, kept, base, n, |o, d| {
            let found = if s == 1 {
                first_extreme::<T, MAX>(&data[at(o)..at(o) + n])
            } else {
                scan::<T, MAX>((0..n).map(|i| data[at(o + i as isize * s)]))
            };
            d[0] = found.map_or(0, |(i, _)| i as i64);
        }),
    }
}
