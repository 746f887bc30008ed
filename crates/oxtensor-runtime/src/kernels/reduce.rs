//! Reductions (`Op::Reduce`) and arg-reductions (`Op::ArgReduce`) with NumPy semantics.
//!
//! A reduction first normalises its input view: dimensions of extent 1 are dropped, the kept
//! and the reduced dimensions are each merged where they are laid out as one run, and reduced
//! dimensions are flipped to positive strides and ordered by decreasing stride (the order in
//! which reduced elements are combined does not change the result beyond float rounding). Then
//! one of three loops runs, after a single dispatch on the dtype:
//!
//! * **rows** — the reduced elements of each output are one contiguous run (trailing axes of a
//!   C array, or a full reduction): a pairwise reduction of the run with several independent
//!   accumulators, which the compiler vectorises;
//! * **columns** — the innermost kept dimension is contiguous (leading axes of a C array):
//!   rows are accumulated elementwise into a row of accumulators, a cache-sized chunk of
//!   columns at a time, pairwise over blocks of reduced rows ([`columns`]), so it vectorises
//!   across outputs;
//! * **general** — anything else: each output walks its reduced elements run by run.
//!
//! Float sums are pairwise (blocked) and `float32` accumulates in `f64`, so long sums do not
//! drift. Work above [`PARALLEL_THRESHOLD`] elements is split across rayon's threads, over
//! outputs or over halves of a long reduction.

mod arg;
mod columns;
mod walk;

pub(in crate::kernels) use arg::arg_into;
pub use arg::arg_reduce;
pub(in crate::kernels) use columns::{column_mid, column_tree};
pub(in crate::kernels) use walk::{Dim, Dims, storage_slice};

use super::PARALLEL_THRESHOLD;
use crate::KernelError;
use oxtensor_data::{Element, Tensor, dispatch_dtype};
use oxtensor_graph::ReduceOp;
use smallvec::SmallVec;
use walk::{at, coalesce, fill_blocks, for_each_run, kept_dims};

/// Elements a contiguous run is split into before it is reduced with independent lanes; the
/// pairwise tree above these leaves keeps float error at `O(log n)`.
const LEAF: usize = 512;
/// Independent accumulators in a leaf (enough for two AVX vectors of `f64`).
const LANES: usize = 8;

/// Reduces `x` over `axes` (sorted, unique, in range), dropping them; the output dtype is
/// [`ReduceOp::output_dtype`] of the input's.
///
/// An empty reduction yields the identity (`0`, `1`, `true`, `false`), except for `Max` and
/// `Min`, which have none and fail as NumPy does.
pub fn reduce(op: ReduceOp, axes: &[usize], x: &Tensor) -> Result<Tensor, KernelError> {
    let shape = x.shape();
    if let Some(&bad) = axes.iter().find(|&&a| a >= shape.len()) {
        return Err(KernelError::Value(format!(
            "reduce: axis {bad} is out of bounds for an array of dimension {}",
            shape.len()
        )));
    }
    if axes.windows(2).any(|w| w[0] >= w[1]) {
        return Err(KernelError::Value(format!(
            "reduce: axes {axes:?} must be sorted and unique"
        )));
    }
    let out_shape: SmallVec<[usize; 4]> = (0..shape.len())
        .filter(|d| !axes.contains(d))
        .map(|d| shape[d])
        .collect();
    let out_dtype = op.output_dtype(x.dtype());
    let reduced: usize = axes.iter().map(|&a| shape[a]).product();
    if reduced == 0 {
        return match op {
            ReduceOp::Max | ReduceOp::Min => Err(KernelError::Value(format!(
                "zero-size array to reduction operation {} which has no identity",
                if op == ReduceOp::Max {
                    "maximum"
                } else {
                    "minimum"
                }
            ))),
            ReduceOp::Sum | ReduceOp::Any => Ok(Tensor::zeros(out_dtype, &out_shape)?),
            ReduceOp::Prod => {
                dispatch_dtype!(out_dtype, O => Ok(Tensor::full(O::from_i64(1), &out_shape)?))
            }
            ReduceOp::All => Ok(Tensor::full(true, &out_shape)?),
        };
    }
    if out_shape.contains(&0) {
        return Ok(Tensor::zeros(out_dtype, &out_shape)?);
    }
    let out = dispatch_dtype!(x.dtype(), T => match op {
        ReduceOp::Sum => run::<T, _>(SumR, x, axes, &out_shape),
        ReduceOp::Prod => run::<T, _>(ProdR, x, axes, &out_shape),
        ReduceOp::Max => run::<T, _>(MaxR, x, axes, &out_shape),
        ReduceOp::Min => run::<T, _>(MinR, x, axes, &out_shape),
        ReduceOp::All => run::<T, _>(AllR, x, axes, &out_shape),
        ReduceOp::Any => run::<T, _>(AnyR, x, axes, &out_shape),
    })?;
    debug_assert_eq!(out.dtype(), out_dtype);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Per-dtype arithmetic.

/// Wrapping (integer) or IEEE (float) addition and multiplication of an accumulator type.
pub(in crate::kernels) trait Arith: Copy + Send + Sync {
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// Sum (wrapping for integers).
    fn add(self, other: Self) -> Self;
    /// Product (wrapping for integers).
    fn mul(self, other: Self) -> Self;
}

macro_rules! arith_int {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
        }
    )*};
}
arith_int!(i64, u64);

macro_rules! arith_float {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            fn mul(self, other: Self) -> Self {
                self * other
            }
        }
    )*};
}
arith_float!(f32, f64);

/// What the reductions need of an element type beyond [`Element`]: NumPy's widened types for
/// sums and products, and the identities of max and min.
pub(in crate::kernels) trait Num: Element {
    /// What a sum accumulates in: `f64` for floats (so `float32` sums do not drift), 64-bit
    /// integers otherwise.
    type SumAcc: Arith;
    /// Output (and product accumulator) type of sums and products.
    type Out: Element + Arith;
    /// The smallest value (−∞ for floats), identity of max.
    const LOWEST: Self;
    /// The largest value (+∞ for floats), identity of min.
    const HIGHEST: Self;
    /// Widens for summing.
    fn sum_acc(self) -> Self::SumAcc;
    /// Widens for multiplying.
    fn prod_acc(self) -> Self::Out;
    /// Narrows a finished sum to the output type.
    fn sum_out(acc: Self::SumAcc) -> Self::Out;
}

macro_rules! num {
    ($($t:ty => $acc:ty, $out:ty, $lo:expr, $hi:expr;)*) => {$(
        impl Num for $t {
            type SumAcc = $acc;
            type Out = $out;
            const LOWEST: Self = $lo;
            const HIGHEST: Self = $hi;
            #[inline(always)]
            fn sum_acc(self) -> $acc {
                self as $acc
            }
            #[inline(always)]
            fn prod_acc(self) -> $out {
                self as $out
            }
            #[inline(always)]
            fn sum_out(acc: $acc) -> $out {
                acc as $out
            }
        }
    )*};
}
num! {
    bool => i64, i64, false, true;
    i8 => i64, i64, i8::MIN, i8::MAX;
    i16 => i64, i64, i16::MIN, i16::MAX;
    i32 => i64, i64, i32::MIN, i32::MAX;
    i64 => i64, i64, i64::MIN, i64::MAX;
    u8 => u64, u64, u8::MIN, u8::MAX;
    u16 => u64, u64, u16::MIN, u16::MAX;
    u32 => u64, u64, u32::MIN, u32::MAX;
    u64 => u64, u64, u64::MIN, u64::MAX;
    f32 => f64, f32, f32::NEG_INFINITY, f32::INFINITY;
    f64 => f64, f64, f64::NEG_INFINITY, f64::INFINITY;
}

/// True for a float NaN; always false for integers and bools (where `x == x`).
#[inline(always)]
#[allow(clippy::eq_op)]
fn is_nan<T: PartialEq>(x: T) -> bool {
    x != x
}

/// `np.maximum`: the larger value, NaN if either is NaN.
#[inline(always)]
fn max_nan<T: Element>(acc: T, x: T) -> T {
    // `|`, not `||`: no branch, so the lanes of a leaf become vector selects.
    if (acc > x) | is_nan(acc) { acc } else { x }
}

/// `np.minimum`: the smaller value, NaN if either is NaN.
#[inline(always)]
fn min_nan<T: Element>(acc: T, x: T) -> T {
    if (acc < x) | is_nan(acc) { acc } else { x }
}

// ---------------------------------------------------------------------------------------------
// Reducers: the combining function of each `ReduceOp`, as a monoid over an accumulator.

/// A reduction as a monoid: elements are pushed into accumulators that start at `identity`,
/// partial accumulators are combined, and the final one is converted to the output type.
/// `combine` must be associative (up to float rounding) so the loops may regroup freely.
pub(in crate::kernels) trait Reducer<T>: Copy + Send + Sync {
    /// The running value.
    type Acc: Copy + Send + Sync;
    /// The output element type.
    type Out: Element;
    /// The value of a reduction over nothing (for max/min, the far end of the type).
    fn identity(self) -> Self::Acc;
    /// Folds one element into an accumulator.
    fn push(self, acc: Self::Acc, x: T) -> Self::Acc;
    /// Merges two partial results, the one over earlier elements first.
    fn combine(self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The output value of a finished accumulator.
    fn finish(self, acc: Self::Acc) -> Self::Out;
}

/// `ReduceOp::Sum`: pairwise, floats in `f64`, integers widened to 64 bits (wrapping).
#[derive(Copy, Clone)]
pub(in crate::kernels) struct SumR;
/// `ReduceOp::Prod`: in the output type (wrapping for integers).
#[derive(Copy, Clone)]
pub(in crate::kernels) struct ProdR;
/// `ReduceOp::Max`: NaN-propagating, as `np.maximum`.
#[derive(Copy, Clone)]
pub(in crate::kernels) struct MaxR;
/// `ReduceOp::Min`: NaN-propagating, as `np.minimum`.
#[derive(Copy, Clone)]
pub(in crate::kernels) struct MinR;
/// `ReduceOp::All`: logical and of the truth values.
#[derive(Copy, Clone)]
pub(in crate::kernels) struct AllR;
/// `ReduceOp::Any`: logical or of the truth values.
#[derive(Copy, Clone)]
pub(in crate::kernels) struct AnyR;

impl<T: Num> Reducer<T> for SumR {
    type Acc = T::SumAcc;
    type Out = T::Out;
    #[inline(always)]
    fn identity(self) -> Self::Acc {
        <T::SumAcc as Arith>::ZERO
    }
    #[inline(always)]
    fn push(self, acc: Self::Acc, x: T) -> Self::Acc {
        acc.add(x.sum_acc())
    }
    #[inline(always)]
    fn combine(self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        a.add(b)
    }
    #[inline(always)]
    fn finish(self, acc: Self::Acc) -> Self::Out {
        T::sum_out(acc)
    }
}

impl<T: Num> Reducer<T> for ProdR {
    type Acc = T::Out;
    type Out = T::Out;
    #[inline(always)]
    fn identity(self) -> Self::Acc {
        <T::Out as Arith>::ONE
    }
    #[inline(always)]
    fn push(self, acc: Self::Acc, x: T) -> Self::Acc {
        acc.mul(x.prod_acc())
    }
    #[inline(always)]
    fn combine(self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        a.mul(b)
    }
    #[inline(always)]
    fn finish(self, acc: Self::Acc) -> Self::Out {
        acc
    }
}

impl<T: Num> Reducer<T> for MaxR {
    type Acc = T;
    type Out = T;
    #[inline(always)]
    fn identity(self) -> T {
        T::LOWEST
    }
    #[inline(always)]
    fn push(self, acc: T, x: T) -> T {
        max_nan(acc, x)
    }
    #[inline(always)]
    fn combine(self, a: T, b: T) -> T {
        max_nan(a, b)
    }
    #[inline(always)]
    fn finish(self, acc: T) -> T {
        acc
    }
}

impl<T: Num> Reducer<T> for MinR {
    type Acc = T;
    type Out = T;
    #[inline(always)]
    fn identity(self) -> T {
        T::HIGHEST
    }
    #[inline(always)]
    fn push(self, acc: T, x: T) -> T {
        min_nan(acc, x)
    }
    #[inline(always)]
    fn combine(self, a: T, b: T) -> T {
        min_nan(a, b)
    }
    #[inline(always)]
    fn finish(self, acc: T) -> T {
        acc
    }
}

impl<T: Element> Reducer<T> for AllR {
    type Acc = bool;
    type Out = bool;
    #[inline(always)]
    fn identity(self) -> bool {
        true
    }
    #[inline(always)]
    fn push(self, acc: bool, x: T) -> bool {
        acc & x.to_bool()
    }
    #[inline(always)]
    fn combine(self, a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn finish(self, acc: bool) -> bool {
        acc
    }
}

impl<T: Element> Reducer<T> for AnyR {
    type Acc = bool;
    type Out = bool;
    #[inline(always)]
    fn identity(self) -> bool {
        false
    }
    #[inline(always)]
    fn push(self, acc: bool, x: T) -> bool {
        acc | x.to_bool()
    }
    #[inline(always)]
    fn combine(self, a: bool, b: bool) -> bool {
        a | b
    }
    #[inline(always)]
    fn finish(self, acc: bool) -> bool {
        acc
    }
}

// ---------------------------------------------------------------------------------------------
// The reduction loops.

/// Where [`reduce_run`] splits a run of `len` elements into halves (the first half a whole
/// number of lanes long), or `None` for a leaf. The fused kernels split at the same places so
/// their results are those of [`reduce_run`] on the materialized run.
pub(in crate::kernels) fn run_mid(len: usize) -> Option<usize> {
    (len > LEAF).then(|| (len / 2).next_multiple_of(LANES))
}

/// Where [`reduce_strided`] splits the positions `lo..hi` into halves, or `None` for a leaf.
pub(in crate::kernels) fn strided_mid(lo: usize, hi: usize) -> Option<usize> {
    (hi - lo > LEAF).then(|| lo + (hi - lo) / 2)
}

/// Reduces a contiguous run pairwise: leaves of [`LEAF`] elements use [`LANES`] independent
/// accumulators; halves above [`PARALLEL_THRESHOLD`] run on two threads.
pub(in crate::kernels) fn reduce_run<T: Element, R: Reducer<T>>(r: R, xs: &[T]) -> R::Acc {
    let Some(mid) = run_mid(xs.len()) else {
        return reduce_leaf(r, xs);
    };
    let (a, b) = xs.split_at(mid);
    let (x, y) = if xs.len() > PARALLEL_THRESHOLD {
        rayon::join(|| reduce_run(r, a), || reduce_run(r, b))
    } else {
        (reduce_run(r, a), reduce_run(r, b))
    };
    r.combine(x, y)
}

/// A leaf of [`reduce_run`]: at most [`LEAF`] elements, with [`LANES`] independent accumulators.
fn reduce_leaf<T: Element, R: Reducer<T>>(r: R, xs: &[T]) -> R::Acc {
    if xs.len() < LANES {
        // Short runs (many small outputs): setting up the lanes would cost more than the work.
        return xs.iter().fold(r.identity(), |a, &x| r.push(a, x));
    }
    let mut acc = [r.identity(); LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a = r.push(*a, x);
        }
    }
    let mut last = r.identity();
    for &x in tail {
        last = r.push(last, x);
    }
    let [a0, a1, a2, a3, a4, a5, a6, a7] = acc;
    let left = r.combine(r.combine(a0, a1), r.combine(a2, a3));
    let right = r.combine(r.combine(a4, a5), r.combine(a6, a7));
    r.combine(r.combine(left, right), last)
}

/// Reduces the flat positions `lo..hi` of the reduced dimensions `red` from `base`, pairwise
/// over blocks of [`LEAF`]; within a block, contiguous runs go through [`reduce_run`].
pub(in crate::kernels) fn reduce_strided<T: Element, R: Reducer<T>>(
    r: R,
    data: &[T],
    red: &[Dim],
    base: isize,
    lo: usize,
    hi: usize,
) -> R::Acc {
    if let Some(mid) = strided_mid(lo, hi) {
        let (x, y) = if hi - lo > PARALLEL_THRESHOLD {
            rayon::join(
                || reduce_strided(r, data, red, base, lo, mid),
                || reduce_strided(r, data, red, base, mid, hi),
            )
        } else {
            (
                reduce_strided(r, data, red, base, lo, mid),
                reduce_strided(r, data, red, base, mid, hi),
            )
        };
        return r.combine(x, y);
    }
    let mut acc = r.identity();
    for_each_run(red, base, lo, hi, |start, len, stride| {
        if stride == 1 {
            acc = r.combine(acc, reduce_run(r, &data[at(start)..at(start) + len]));
        } else {
            for t in 0..len {
                acc = r.push(acc, data[at(start + t as isize * stride)]);
            }
        }
    });
    acc
}

/// Runs reducer `r` over `axes` of `x` (non-empty input and output) into a fresh tensor.
fn run<T: Element, R: Reducer<T>>(
    r: R,
    x: &Tensor,
    axes: &[usize],
    out_shape: &[usize],
) -> Result<Tensor, KernelError> {
    let data = storage_slice::<T>(x)?;
    let kept = kept_dims(x.shape(), x.strides(), axes);
    let mut base = x.offset() as isize;
    let mut red: Dims = Dims::new();
    for &a in axes {
        let (n, s) = (x.shape()[a], x.strides()[a]);
        if n != 1 {
            // The order reduced elements are combined in is free: walk reversed axes forwards.
            if s < 0 {
                base += (n as isize - 1) * s;
            }
            red.push((n, s.abs()));
        }
    }
    red.sort_by_key(|&(_, s)| std::cmp::Reverse(s));
    coalesce(&mut red);
    let count: usize = red.iter().map(|d| d.0).product();

    let mut out = Tensor::zeros(R::Out::DTYPE, out_shape)?;
    let dst = out
        .data_mut::<R::Out>()
        .ok_or_else(|| KernelError::Value("reduce: fresh output is not writable".into()))?;
    match (red.as_slice(), kept.last()) {
        // Rows: each output reduces one contiguous run (or a single element).
        ([], _) | ([(_, 1)], _) => fill_blocks(dst, 1, &kept, base, count, |o, d| {
            d[0] = r.finish(reduce_run(r, &data[at(o)..at(o) + count]));
        }),
        // Columns: the innermost kept dimension is contiguous; accumulate rows.
        (_, Some(&(n, 1))) => {
            let outer = &kept[..kept.len() - 1];
            fill_blocks(dst, n, outer, base, count * n, |o, d| {
                columns::reduce_columns(r, data, &red, o, count, d);
            });
        }
        // General: walk each output's reduced elements.
        _ => fill_blocks(dst, 1, &kept, base, count, |o, d| {
            d[0] = r.finish(reduce_strided(r, data, &red, o, 0, count));
        }),
    }
    Ok(out)
}
