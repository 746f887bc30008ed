//! Walking strided views: the storage as a slice, merging dimensions, visiting the offsets of
//! a range of C-order positions run by run, and filling outputs (in parallel when large).

use crate::KernelError;
use crate::kernels::PARALLEL_THRESHOLD;
use oxtensor_data::{Element, Tensor};
use rayon::prelude::*;
use smallvec::SmallVec;

/// One dimension of a strided walk: extent and element stride.
pub(in crate::kernels) type Dim = (usize, isize);
/// The dimensions of a walk, outermost first.
pub(in crate::kernels) type Dims = SmallVec<[Dim; 4]>;

/// The whole storage of `x` as a slice of its element type, so that the element offsets of any
/// view (shape, strides, offset) index it with ordinary bounds-checked slicing.
pub(in crate::kernels) fn storage_slice<T: Element>(x: &Tensor) -> Result<&[T], KernelError> {
    if x.dtype() != T::DTYPE {
        return Err(KernelError::Value(format!(
            "kernel expected a {} tensor, got {}",
            T::DTYPE,
            x.dtype()
        )));
    }
    let storage = x.storage();
    let n = storage.len() / T::DTYPE.size();
    if n == 0 {
        return Ok(&[]);
    }
    // SAFETY: the storage holds `storage.len()` initialised bytes, so `n` whole elements from
    // its start; it is aligned for T (owned storage is 64-byte aligned, external buffers are
    // aligned for their dtype); every byte pattern there is a valid T (all bit patterns are
    // valid numbers, and bool storage only ever holds 0 or 1 — `Element`'s contract); and
    // storage reachable through a shared `&Tensor` is not written while borrowed (writing
    // needs unique ownership of the `Arc`). The slice borrows `x`, so it cannot outlive it.
    Ok(unsafe { std::slice::from_raw_parts(storage.as_ptr() as *const T, n) })
}

/// Merges adjacent dimensions (outer first) that form one strided run.
pub(super) fn coalesce(dims: &mut Dims) {
    let mut merged = Dims::new();
    for &(n, s) in dims.iter() {
        match merged.last_mut() {
            Some(last) if last.1 == s.wrapping_mul(n as isize) => *last = (last.0 * n, s),
            _ => merged.push((n, s)),
        }
    }
    *dims = merged;
}

/// The kept dimensions of a view of extents `shape` and `strides` (all but `axes`), in order, without extents of 1 and merged where
/// possible: output positions in C order walk them.
pub(super) fn kept_dims(shape: &[usize], strides: &[isize], axes: &[usize]) -> Dims {
    let mut dims: Dims = (0..shape.len())
        .filter(|d| !axes.contains(d) && shape[*d] != 1)
        .map(|d| (shape[d], strides[d]))
        .collect();
    coalesce(&mut dims);
    dims
}

/// Calls `f(start, len, stride)` for each maximal run along the innermost dimension covering
/// the flat C-order positions `lo..hi` of `dims`, whose position 0 is at offset `base`.
/// Every extent must be non-zero; no dimensions is a single position.
pub(super) fn for_each_run(
    dims: &[Dim],
    base: isize,
    lo: usize,
    hi: usize,
    mut f: impl FnMut(isize, usize, isize),
) {
    if lo >= hi {
        return;
    }
    let Some((&(n_in, s_in), outer)) = dims.split_last() else {
        f(base, 1, 1);
        return;
    };
    let mut idx: SmallVec<[usize; 4]> = smallvec::smallvec![0; outer.len()];
    let mut off = base;
    let mut rest = lo / n_in;
    for (i, &(n, s)) in idx.iter_mut().zip(outer).rev() {
        *i = rest % n;
        rest /= n;
        off += *i as isize * s;
    }
    let mut i_in = lo % n_in;
    let mut pos = lo;
    loop {
        let len = (n_in - i_in).min(hi - pos);
        f(off + i_in as isize * s_in, len, s_in);
        pos += len;
        if pos >= hi {
            return;
        }
        i_in = 0;
        for (i, &(n, s)) in idx.iter_mut().zip(outer).rev() {
            *i += 1;
            off += s;
            if *i < n {
                break;
            }
            off -= s * n as isize;
            *i = 0;
        }
    }
}

/// Calls `f(offset)` for each flat C-order position `lo..hi` of `dims` (see [`for_each_run`]).
pub(super) fn for_each_offset(
    dims: &[Dim],
    base: isize,
    lo: usize,
    hi: usize,
    mut f: impl FnMut(isize),
) {
    for_each_run(dims, base, lo, hi, |start, len, stride| {
        for t in 0..len {
            f(start + t as isize * stride);
        }
    });
}

/// Fills `dst`, a C-order output of `dst.len() / block` positions of `block` elements each,
/// calling `f(offset, block_slice)` with the input offset of each position of `dims` (from
/// `base`). `work` is the number of input elements read per position; above
/// [`PARALLEL_THRESHOLD`] in total the positions are split across threads.
pub(super) fn fill_blocks<O: Send>(
    dst: &mut [O],
    block: usize,
    dims: &[Dim],
    base: isize,
    work: usize,
    f: impl Fn(isize, &mut [O]) + Sync,
) {
    let count = dst.len() / block;
    let run = |lo: usize, chunk: &mut [O]| {
        let hi = lo + chunk.len() / block;
        let mut blocks = chunk.chunks_exact_mut(block);
        for_each_offset(dims, base, lo, hi, |o| {
            if let Some(b) = blocks.next() {
                f(o, b);
            }
        });
    };
    if count > 1 && count.saturating_mul(work) > PARALLEL_THRESHOLD {
        let per = count
            .div_ceil(4 * rayon::current_num_threads())
            .max(PARALLEL_THRESHOLD / work.max(1))
            .max(1);
        dst.par_chunks_mut(per * block)
            .enumerate()
            .for_each(|(i, chunk)| run(i * per, chunk));
    } else {
        run(0, dst);
    }
}

/// Converts a storage offset (non-negative for every element of a valid view) to an index.
#[inline(always)]
pub(super) fn at(offset: isize) -> usize {
    offset as usize
}
