//! `np.matmul`: vector·vector, matrix·vector, vector·matrix, matrix·matrix, and stacks of
//! matrices with NumPy broadcasting of the leading (batch) dimensions.
//!
//! `float32`/`float64` products go to the `gemm` crate, which takes arbitrary row and column
//! strides, so transposed, reversed or sliced views are multiplied without a copy. Integer and
//! bool products (rare, and not worth a packed kernel) use a direct loop with wrapping
//! arithmetic in the output dtype, as NumPy does; a bool product is the logical or of ands.

use super::PARALLEL_THRESHOLD;
use super::layout::strided::Accumulate;
use super::reduce::storage_slice;
use crate::KernelError;
use oxtensor_data::{C64, C128, DType, Element, Tensor, broadcast_shapes, broadcast_strides};
use rayon::prelude::*;
use smallvec::SmallVec;

/// Multiply-adds (`m·n·k`) above which one product is worth splitting across threads.
pub(super) const GEMM_PARALLEL_WORK: usize = 1 << 18;

/// The fewest contracted indices a task of a matrix-vector product split along its
/// contraction reduces (see [`skinny`]): fewer make the partial results cost more than they save.
const SKINNY_MIN_CONTRACTION: usize = 1024;

/// The operands' common layout: one (m×k)·(k×n) product per batch position.
pub(super) struct Problem {
    pub(super) m: usize,
    pub(super) n: usize,
    pub(super) k: usize,
    /// Row and column strides of the left matrices.
    pub(super) a_rs: isize,
    pub(super) a_cs: isize,
    /// Row and column strides of the right matrices.
    pub(super) b_rs: isize,
    pub(super) b_cs: isize,
    /// Storage offsets of the left and right matrix of each batch position, in C order.
    pub(super) offsets: Vec<(isize, isize)>,
}

impl Problem {
    /// The layout of one product of the matrices `a` (m×k) and `b` (k×n), whose dtypes and
    /// contraction extents the caller has checked.
    pub(super) fn matrices(a: &Tensor, b: &Tensor) -> Problem {
        let (m, k, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
        let (at, bt) = (a.strides(), b.strides());
        Problem {
            m,
            n,
            k,
            a_rs: unit(m, at[0]),
            a_cs: unit(k, at[1]),
            b_rs: unit(k, bt[0]),
            b_cs: unit(n, bt[1]),
            offsets: vec![(a.offset() as isize, b.offset() as isize)],
        }
    }
}

/// The stride of a dimension as `gemm` should see it: a dimension of extent 1 is never stepped
/// along, and a unit stride lets `gemm` see it as dense.
fn unit(extent: usize, stride: isize) -> isize {
    if extent == 1 { 1 } else { stride }
}

/// `np.matmul(a, b)` computed in `dtype` (the NumPy result type of the operands; operands of
/// another dtype are converted first).
///
/// A 1-D left operand is a row vector and a 1-D right operand a column vector, and the
/// corresponding dimension is dropped from the result; dimensions before the last two are
/// batch dimensions and broadcast (extents equal or 1). Mismatched contraction or batch extents
/// are a [`KernelError::Shape`] naming both shapes.
pub fn matmul(a: &Tensor, b: &Tensor, dtype: DType) -> Result<Tensor, KernelError> {
    let (sa, sb) = (a.shape(), b.shape());
    if sa.is_empty() || sb.is_empty() {
        return Err(KernelError::Shape(format!(
            "matmul: operands must have at least one dimension, got shapes {sa:?} and {sb:?}"
        )));
    }
    let a = if a.dtype() == dtype {
        a.clone()
    } else {
        a.cast(dtype)
    };
    let b = if b.dtype() == dtype {
        b.clone()
    } else {
        b.cast(dtype)
    };
    let (na, nb) = (sa.len(), sb.len());
    let (at, bt) = (a.strides(), b.strides());
    // Left: (batch…, m, k); a vector is one row. Right: (batch…, k, n); a vector is one column.
    let (m, k, a_rs, a_cs) = if na == 1 {
        (1, sa[0], 0, at[0])
    } else {
        (sa[na - 2], sa[na - 1], at[na - 2], at[na - 1])
    };
    let (k2, n, b_rs, b_cs) = if nb == 1 {
        (sb[0], 1, bt[0], 0)
    } else {
        (sb[nb - 2], sb[nb - 1], bt[nb - 2], bt[nb - 1])
    };
    if k != k2 {
        return Err(KernelError::Shape(format!(
            "matmul: shapes {sa:?} and {sb:?} do not align: {k} (dim {}) != {k2} (dim {})",
            na - 1,
            nb.saturating_sub(2)
        )));
    }
    let (a_batch, b_batch) = (&sa[..na.saturating_sub(2)], &sb[..nb.saturating_sub(2)]);
    let mismatch = || {
        KernelError::Shape(format!(
            "matmul: shapes {sa:?} and {sb:?} do not broadcast: batch dimensions {a_batch:?} \
             and {b_batch:?}"
        ))
    };
    let batch = broadcast_shapes(a_batch, b_batch).map_err(|_| mismatch())?;
    let mut out_shape: SmallVec<[usize; 4]> = batch.clone();
    if na >= 2 {
        out_shape.push(m);
    }
    if nb >= 2 {
        out_shape.push(n);
    }
    let mut out = Tensor::zeros(dtype, &out_shape)?;
    if out.numel() == 0 || k == 0 {
        // An empty result, or a sum over nothing: zeros (false for bool).
        return Ok(out);
    }
    let a_bst = broadcast_strides(a_batch, &at[..a_batch.len()], &batch).ok_or_else(mismatch)?;
    let b_bst = broadcast_strides(b_batch, &bt[..b_batch.len()], &batch).ok_or_else(mismatch)?;
    let count: usize = batch.iter().product();
    let mut offsets = Vec::with_capacity(count);
    for flat in 0..count {
        let (mut ao, mut bo) = (a.offset() as isize, b.offset() as isize);
        let mut rest = flat;
        for d in (0..batch.len()).rev() {
            let i = (rest % batch[d]) as isize;
            rest /= batch[d];
            ao += i * a_bst[d];
            bo += i * b_bst[d];
        }
        offsets.push((ao, bo));
    }
    let p = Problem {
        m,
        n,
        k,
        a_rs: unit(m, a_rs),
        a_cs: unit(k, a_cs),
        b_rs: unit(k, b_rs),
        b_cs: unit(n, b_cs),
        offsets,
    };
    match dtype {
        DType::F32 => gemm_batches::<f32>(&p, &a, &b, &mut out)?,
        DType::F64 => gemm_batches::<f64>(&p, &a, &b, &mut out)?,
        DType::C64 => gemm_batches::<C64>(&p, &a, &b, &mut out)?,
        DType::C128 => gemm_batches::<C128>(&p, &a, &b, &mut out)?,
        DType::Bool => loop_batches::<bool>(&p, &a, &b, &mut out)?,
        DType::I8 => loop_batches::<i8>(&p, &a, &b, &mut out)?,
        DType::I16 => loop_batches::<i16>(&p, &a, &b, &mut out)?,
        DType::I32 => loop_batches::<i32>(&p, &a, &b, &mut out)?,
        DType::I64 => loop_batches::<i64>(&p, &a, &b, &mut out)?,
        DType::U8 => loop_batches::<u8>(&p, &a, &b, &mut out)?,
        DType::U16 => loop_batches::<u16>(&p, &a, &b, &mut out)?,
        DType::U32 => loop_batches::<u32>(&p, &a, &b, &mut out)?,
        DType::U64 => loop_batches::<u64>(&p, &a, &b, &mut out)?,
    }
    Ok(out)
}

/// The output's elements, which `matmul` has just allocated and holds uniquely.
fn output<T: Element>(out: &mut Tensor) -> Result<&mut [T], KernelError> {
    out.data_mut::<T>()
        .ok_or_else(|| KernelError::Value("matmul: fresh output is not writable".into()))
}

/// Float products through `gemm`: one call per batch position; batches of small products run
/// in parallel, a large product is parallelised by `gemm` itself, and a large matrix-vector
/// product by [`skinny`].
fn gemm_batches<T: GemmElement>(
    p: &Problem,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> Result<(), KernelError> {
    let (lhs, rhs) = (storage_slice::<T>(a)?, storage_slice::<T>(b)?);
    let dst = output::<T>(out)?;
    let (m, n, k) = (p.m, p.n, p.k);
    let work = m * n * k;
    let batches = p.offsets.len();
    let threads = rayon::current_num_threads();
    if batches == 1 && (m == 1 || n == 1) && work >= GEMM_PARALLEL_WORK && threads > 1 {
        return skinny(p, lhs, rhs, dst, threads);
    }
    let product = |(ao, bo): (isize, isize), d: &mut [T], parallelism: gemm::Parallelism| {
        debug_assert_eq!(d.len(), m * n);
        // SAFETY: `d` is this batch position's m×n block of the fresh C-contiguous output
        // (row stride n, column stride 1), written only here. `ao`/`bo` are the storage offsets
        // of element (0, 0) of this position's left/right matrix, and for i < m, p < k, j < n
        // the offsets ao + i·a_rs + p·a_cs and bo + p·b_rs + j·b_cs address elements of the
        // operand views (strides of extent-1 dimensions are never multiplied by a non-zero
        // index), all inside their storages, which `lhs`/`rhs` cover and nobody writes while
        // `a` and `b` are borrowed. m, n, k ≥ 1 (empty products return early).
        unsafe { gemm_into(p, (m, n, k), d.as_mut_ptr(), lhs, ao, rhs, bo, parallelism) }
    };
    if batches > 1 && work < GEMM_PARALLEL_WORK && batches * work > PARALLEL_THRESHOLD {
        dst.par_chunks_mut(m * n)
            .zip(p.offsets.par_iter())
            .for_each(|(d, &o)| product(o, d, gemm::Parallelism::None));
    } else {
        let parallelism = if work >= GEMM_PARALLEL_WORK {
            gemm::Parallelism::Rayon(0)
        } else {
            gemm::Parallelism::None
        };
        for (d, &o) in dst.chunks_mut(m * n).zip(&p.offsets) {
            product(o, d, parallelism);
        }
    }
    Ok(())
}

/// An element type `gemm` multiplies: the floats, and the complex types as `gemm`'s own
/// complex types (`num-complex`'s, with the same `repr(C)` layout of real then imaginary part).
///
/// # Safety
/// `Self` and `Self::G` must have the same size, alignment and meaning of their bytes.
pub(super) unsafe trait GemmElement: Element + Accumulate {
    /// The type `gemm` knows, with this type's layout.
    type G: 'static;
    /// Zero and one in `gemm`'s type.
    const ZERO_ONE: (Self::G, Self::G);
}

// SAFETY: the same type.
unsafe impl GemmElement for f32 {
    type G = f32;
    const ZERO_ONE: (f32, f32) = (0.0, 1.0);
}

// SAFETY: the same type.
unsafe impl GemmElement for f64 {
    type G = f64;
    const ZERO_ONE: (f64, f64) = (0.0, 1.0);
}

// SAFETY: both are `repr(C)` pairs of `f32`, real part first.
unsafe impl GemmElement for C64 {
    type G = gemm::c32;
    const ZERO_ONE: (gemm::c32, gemm::c32) = (gemm::c32::new(0.0, 0.0), gemm::c32::new(1.0, 0.0));
}

// SAFETY: both are `repr(C)` pairs of `f64`, real part first.
unsafe impl GemmElement for C128 {
    type G = gemm::c64;
    const ZERO_ONE: (gemm::c64, gemm::c64) = (gemm::c64::new(0.0, 0.0), gemm::c64::new(1.0, 0.0));
}

/// `d := lhs·rhs` for an `m×n×k` product whose left operand starts at storage offset `ao` and
/// right operand at `bo`, with the problem's strides; `d` is C-contiguous with row stride `n`
/// (a pointer, so its elements may be uninitialised: they are only written).
///
/// # Safety
/// For i < m, q < k, j < n, the offsets `ao + i·a_rs + q·a_cs` and `bo + q·b_rs + j·b_cs` must
/// lie inside `lhs` and `rhs`; `d` must point to `m·n` writable elements nothing else uses
/// during the call; m, n, k ≥ 1.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gemm_into<T: GemmElement>(
    p: &Problem,
    (m, n, k): (usize, usize, usize),
    d: *mut T,
    lhs: &[T],
    ao: isize,
    rhs: &[T],
    bo: isize,
    parallelism: gemm::Parallelism,
) {
    let (zero, one) = T::ZERO_ONE;
    // SAFETY: the caller guarantees the operand offsets and the output's extent; with
    // `read_dst` false, dst := 1·lhs·rhs. `T::G` has `T`'s layout (`GemmElement`), so the
    // pointers address the same elements.
    unsafe {
        gemm::gemm::<T::G>(
            m,
            n,
            k,
            d.cast(),
            1,
            n as isize,
            false,
            lhs.as_ptr().offset(ao).cast(),
            p.a_cs,
            p.a_rs,
            rhs.as_ptr().offset(bo).cast(),
            p.b_cs,
            p.b_rs,
            zero,
            one,
            false,
            false,
            false,
            parallelism,
        );
    }
}

/// A large matrix-vector (`n = 1`) or vector-matrix (`m = 1`) product, split across threads.
/// `gemm` runs these as one single-threaded pass over the matrix, which leaves the other cores
/// idle on a memory-bound loop. When the matrix's contiguous direction is across outputs (rows
/// of `a` for `n = 1`), each task computes its own range of outputs; otherwise each task
/// reduces a range of the contracted dimension, reading whole contiguous rows, and the partial
/// results are added in range order.
///
/// Both splits make a few tasks per thread (of at least 64 outputs, or of at least
/// [`SKINNY_MIN_CONTRACTION`] contracted indices), so a thread slowed by other work on its
/// core leaves its tasks to the others instead of making everyone wait for its half. The
/// ranges depend only on the extents and the thread count, so a product is bitwise
/// reproducible for a given thread count; between thread counts the contraction split changes
/// only the order of the additions.
fn skinny<T: GemmElement>(
    p: &Problem,
    lhs: &[T],
    rhs: &[T],
    dst: &mut [T],
    threads: usize,
) -> Result<(), KernelError> {
    let (m, n, k) = (p.m, p.n, p.k);
    let (ao, bo) = p.offsets[0];
    // Splitting the outputs: along m (rows of a) for n = 1, along n (columns of b) for m = 1.
    let outer = if n == 1 { m } else { n };
    let outputs_contiguous = if n == 1 { p.a_cs == 1 } else { p.b_rs == 1 };
    if outputs_contiguous && outer >= 2 * threads {
        let chunk = outer.div_ceil(threads * 4).max(64);
        dst.par_chunks_mut(chunk).enumerate().for_each(|(c, d)| {
            let start = (c * chunk) as isize;
            let len = d.len();
            let (shape, ao, bo) = if n == 1 {
                ((len, 1, k), ao + start * p.a_rs, bo)
            } else {
                ((1, len, k), ao, bo + start * p.b_cs)
            };
            // SAFETY: this task's outputs `[start, start + len)` are a sub-range of the
            // product's m·n outputs: moving the operand that indexes them by `start` steps
            // keeps every offset the smaller product reads inside the original product's
            // operand views (see `gemm_batches`); `d` is this task's own part of the output.
            unsafe {
                gemm_into(
                    p,
                    shape,
                    d.as_mut_ptr(),
                    lhs,
                    ao,
                    rhs,
                    bo,
                    gemm::Parallelism::None,
                )
            }
        });
        return Ok(());
    }
    let parts = (threads * 4).min(k / SKINNY_MIN_CONTRACTION).max(1);
    let chunk = k.div_ceil(parts);
    let partials: Vec<Vec<T>> = (0..k.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let start = c * chunk;
            let len = chunk.min(k - start);
            let mut d = vec![T::from_i64(0); m * n];
            let (ao, bo) = (ao + start as isize * p.a_cs, bo + start as isize * p.b_rs);
            // SAFETY: the contracted range `[start, start + len)` is inside `[0, k)`, so every
            // offset read is one the whole product reads (see `gemm_batches`); `d` is this
            // task's own m·n buffer.
            unsafe {
                gemm_into(
                    p,
                    (m, n, len),
                    d.as_mut_ptr(),
                    lhs,
                    ao,
                    rhs,
                    bo,
                    gemm::Parallelism::None,
                )
            };
            d
        })
        .collect();
    let mut partials = partials.into_iter();
    if let Some(first) = partials.next() {
        dst.copy_from_slice(&first);
        for part in partials {
            for (d, x) in dst.iter_mut().zip(part) {
                *d = d.accumulate(x);
            }
        }
    }
    Ok(())
}

/// `acc + a·b` in the ring of an integer type (wrapping), or `acc | (a & b)` for bool.
trait MulAdd: Element {
    /// `self + a·b`, or `self | (a & b)` for bool.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

macro_rules! mul_add_int {
    ($($t:ty),*) => {$(
        impl MulAdd for $t {
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                self.wrapping_add(a.wrapping_mul(b))
            }
        }
    )*};
}
mul_add_int!(i8, i16, i32, i64, u8, u16, u32, u64);

impl MulAdd for bool {
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        self | (a & b)
    }
}

/// Integer and bool products: for each output row, `row += a[i, p] · b[p, :]` over `p`, so
/// the inner loop runs along a row of `b` (contiguous for C-ordered operands). Rows are split
/// across threads when the work is large.
fn loop_batches<T: MulAdd>(
    p: &Problem,
    a: &Tensor,
    b: &Tensor,
    out: &mut Tensor,
) -> Result<(), KernelError> {
    let (lhs, rhs) = (storage_slice::<T>(a)?, storage_slice::<T>(b)?);
    let dst = output::<T>(out)?;
    let (m, n, k) = (p.m, p.n, p.k);
    let idx = |o: isize| o as usize;
    let row = |r: usize, d: &mut [T]| {
        let (ao, bo) = p.offsets[r / m];
        let a_row = ao + (r % m) as isize * p.a_rs;
        for q in 0..k {
            let av = lhs[idx(a_row + q as isize * p.a_cs)];
            let b_row = bo + q as isize * p.b_rs;
            if p.b_cs == 1 {
                for (d, &bv) in d.iter_mut().zip(&rhs[idx(b_row)..idx(b_row) + n]) {
                    *d = d.mul_add(av, bv);
                }
            } else {
                for (j, d) in d.iter_mut().enumerate() {
                    *d = d.mul_add(av, rhs[idx(b_row + j as isize * p.b_cs)]);
                }
            }
        }
    };
    if dst.len() * k > PARALLEL_THRESHOLD {
        dst.par_chunks_mut(n)
            .enumerate()
            .for_each(|(r, d)| row(r, d));
    } else {
        for (r, d) in dst.chunks_mut(n).enumerate() {
            row(r, d);
        }
    }
    Ok(())
}
