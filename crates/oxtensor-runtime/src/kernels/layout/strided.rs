//! Strided memory walking shared by the layout and index kernels.
//!
//! Every copying kernel reduces to "combine a source of some shape and strides into a
//! destination of the same shape and other strides". [`Walk`] plans that loop once: it drops
//! extent-1 dimensions and merges adjacent dimensions that are contiguous with respect to each
//! other in *both* operands, so a C-contiguous copy becomes one run and a copy of a sliced
//! array becomes one run per row. [`apply`] then moves each run with a block copy when both
//! sides are dense, a fill when the source is broadcast, and an indexed loop otherwise.

use crate::KernelError;
use oxtensor_data::{Element, Tensor, contiguous_strides, dispatch_dtype};
use smallvec::{SmallVec, smallvec};

/// The whole storage of `t` as a slice of its element type, so kernels read any view through
/// bounds-checked indexing with the view's own offsets and strides.
pub(in crate::kernels) fn storage_of<T: Element>(t: &Tensor) -> Result<&[T], KernelError> {
    if t.dtype() != T::DTYPE {
        return Err(KernelError::Value(format!(
            "internal error: a {} tensor was read as {}",
            t.dtype(),
            T::DTYPE
        )));
    }
    let storage = t.storage();
    let n = storage.len() / std::mem::size_of::<T>();
    if n == 0 {
        return Ok(&[]);
    }
    // SAFETY: the storage is valid for reads of `len()` bytes while `t` (which holds the Arc)
    // is borrowed; it is aligned for its dtype (owned buffers are 64-byte aligned, external
    // ones aligned for their dtype by `Storage::external`'s contract); the dtype was checked to
    // be `T`, whose representation is exactly the dtype's bytes (the `Element` contract, which
    // for `bool` relies on bool storage holding only 0 and 1); and shared storage is never
    // written while shared (`Tensor::data_mut` requires unique ownership).
    Ok(unsafe { std::slice::from_raw_parts(storage.as_ptr().cast::<T>(), n) })
}

/// A zero-filled, C-contiguous, uniquely owned tensor of `shape`, written by `fill`. Kernels
/// return fresh buffers so later phases may write into outputs in place.
pub(in crate::kernels) fn fresh<T: Element>(
    shape: &[usize],
    fill: impl FnOnce(&mut [T]) -> Result<(), KernelError>,
) -> Result<Tensor, KernelError> {
    let mut t = Tensor::zeros(T::DTYPE, shape)?;
    let data = t.data_mut::<T>().ok_or_else(|| {
        KernelError::Value("internal error: a fresh buffer is not writable".into())
    })?;
    fill(data)?;
    Ok(t)
}

/// A fresh C-contiguous copy of any tensor, in a buffer of its own (dtype dispatched once).
pub(in crate::kernels) fn copy_any(t: &Tensor) -> Result<Tensor, KernelError> {
    dispatch_dtype!(t.dtype(), T => copy_fresh::<T>(t))
}

/// A fresh C-contiguous copy of `src` (any strides; broadcast stride-0 views are
/// materialised) in a buffer of its own.
fn copy_fresh<T: Accumulate>(src: &Tensor) -> Result<Tensor, KernelError> {
    let data = storage_of::<T>(src)?;
    let shape = src.shape();
    fresh::<T>(shape, |dst| {
        let walk = Walk::new(shape, &contiguous_strides(shape), src.strides());
        apply(&walk, Combine::Assign, dst, 0, data, src.offset() as isize);
        Ok(())
    })
}

/// How [`apply`] combines a source element into a destination element.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(in crate::kernels) enum Combine {
    /// Overwrite (`x[idx] = y`).
    Assign,
    /// Accumulate (`x[idx] += y`), see [`Accumulate`].
    Add,
}

/// NumPy's `+` on one dtype, as used by `inc_subtensor`: integers wrap, floats add, and `bool`
/// is logical or (NumPy's `np.add` on booleans).
pub(in crate::kernels) trait Accumulate: Element {
    /// `self + other` with NumPy semantics for the dtype.
    fn accumulate(self, other: Self) -> Self;
}

macro_rules! wrapping_accumulate {
    ($($t:ty),*) => {$(
        impl Accumulate for $t {
            #[inline]
            fn accumulate(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        }
    )*};
}
wrapping_accumulate!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Accumulate for f32 {
    #[inline]
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
}

impl Accumulate for f64 {
    #[inline]
    fn accumulate(self, other: Self) -> Self {
        self + other
    }
}

impl Accumulate for bool {
    #[inline]
    fn accumulate(self, other: Self) -> Self {
        self | other
    }
}

/// A planned C-order loop over one iteration space through two strided operands (`a`, the
/// destination, and `b`, the source), as runs along the innermost merged dimension.
pub(in crate::kernels) struct Walk {
    /// Outer dimensions after merging: (extent, stride in `a`, stride in `b`).
    outer: SmallVec<[(usize, isize, isize); 4]>,
    /// Elements per run.
    len: usize,
    /// Strides of a run in `a` and `b`.
    step: (isize, isize),
    /// The space has no elements.
    empty: bool,
}

impl Walk {
    /// Plans a walk over `shape`, where `a` and `b` are each operand's element strides.
    pub(in crate::kernels) fn new(shape: &[usize], a: &[isize], b: &[isize]) -> Walk {
        let mut dims: SmallVec<[(usize, isize, isize); 4]> = SmallVec::new();
        for ((&n, &sa), &sb) in shape.iter().zip(a).zip(b) {
            if n == 1 {
                continue;
            }
            if let Some(last) = dims.last_mut() {
                let scale = n as isize;
                if sa.checked_mul(scale) == Some(last.1) && sb.checked_mul(scale) == Some(last.2) {
                    *last = (last.0 * n, sa, sb);
                    continue;
                }
            }
            dims.push((n, sa, sb));
        }
        let (len, sa, sb) = dims.pop().unwrap_or((1, 0, 0));
        Walk {
            empty: shape.contains(&0),
            outer: dims,
            len,
            step: (sa, sb),
        }
    }

    /// True when the space is exactly one element (every extent 1, or rank 0).
    pub(in crate::kernels) fn is_single(&self) -> bool {
        !self.empty && self.outer.is_empty() && self.len == 1
    }

    /// Calls `f(a, b)` with the starting offsets of every run, in C order, starting from
    /// offsets `a0` and `b0`.
    pub(in crate::kernels) fn runs(&self, a0: isize, b0: isize, mut f: impl FnMut(isize, isize)) {
        if self.empty {
            return;
        }
        let mut idx: SmallVec<[usize; 4]> = smallvec![0; self.outer.len()];
        let (mut a, mut b) = (a0, b0);
        'next: loop {
            f(a, b);
            for (i, &(n, sa, sb)) in self.outer.iter().enumerate().rev() {
                idx[i] += 1;
                if idx[i] < n {
                    a += sa;
                    b += sb;
                    continue 'next;
                }
                idx[i] = 0;
                a -= sa * (n as isize - 1);
                b -= sb * (n as isize - 1);
            }
            return;
        }
    }

    /// Calls `f(a, b)` with the offsets of every element, in C order.
    pub(in crate::kernels) fn elems(&self, a0: isize, b0: isize, mut f: impl FnMut(isize, isize)) {
        let (n, (sa, sb)) = (self.len as isize, self.step);
        self.runs(a0, b0, |a, b| {
            for j in 0..n {
                f(a + j * sa, b + j * sb);
            }
        });
    }
}

/// Combines `src` into `dst` along `walk` (`a` is `dst`, `b` is `src`), the walk starting at
/// offset `d0` of `dst` and `s0` of `src`.
pub(in crate::kernels) fn apply<T: Accumulate>(
    walk: &Walk,
    mode: Combine,
    dst: &mut [T],
    d0: isize,
    src: &[T],
    s0: isize,
) {
    let run = (walk.len, walk.step.0, walk.step.1);
    walk.runs(d0, s0, |d, s| combine_run(mode, dst, d, src, s, run));
}

/// Combines one source element into one destination element.
#[inline]
pub(in crate::kernels) fn combine<T: Accumulate>(mode: Combine, dst: &mut T, v: T) {
    *dst = match mode {
        Combine::Assign => v,
        Combine::Add => dst.accumulate(v),
    };
}

/// One run of `n` elements: block copies when both sides are dense, a fill when the source is
/// broadcast, an indexed loop otherwise. Offsets come from valid views, so indexing stays in
/// bounds (a violation would be a bug in a view's construction, caught by the bounds check).
fn combine_run<T: Accumulate>(
    mode: Combine,
    dst: &mut [T],
    d: isize,
    src: &[T],
    s: isize,
    (n, ds, ss): (usize, isize, isize),
) {
    match (ds, ss) {
        (1, 1) => {
            let (d, s) = (d as usize, s as usize);
            let (out, inp) = (&mut dst[d..d + n], &src[s..s + n]);
            match mode {
                Combine::Assign => out.copy_from_slice(inp),
                Combine::Add => {
                    for (o, &v) in out.iter_mut().zip(inp) {
                        *o = o.accumulate(v);
                    }
                }
            }
        }
        (1, 0) => {
            let v = src[s as usize];
            let out = &mut dst[d as usize..d as usize + n];
            match mode {
                Combine::Assign => out.fill(v),
                Combine::Add => {
                    for o in out {
                        *o = o.accumulate(v);
                    }
                }
            }
        }
        _ => {
            for j in 0..n as isize {
                combine(
                    mode,
                    &mut dst[(d + j * ds) as usize],
                    src[(s + j * ss) as usize],
                );
            }
        }
    }
}
