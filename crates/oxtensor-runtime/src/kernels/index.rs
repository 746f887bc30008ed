//! Indexing kernels: basic indexing (`x[i, a:b:c]`, a view) and its functional update, and
//! integer-array indexing along one axis (`np.take`) and its functional update (`np.add.at` /
//! assignment).
//!
//! Index arithmetic follows Python exactly through `oxtensor_graph::index` (shared with type
//! inference, so static and runtime shapes agree); indices and sizes are runtime values, so
//! every one is checked and reported NumPy-style.

use super::layout::args::{int_scalar, int_values, tuple};
use super::layout::strided::{
    Accumulate, Combine, Walk, apply, combine, copy_any, fresh, storage_of,
};
use crate::KernelError;
use oxtensor_data::{
    DType, Shape, Strides, Tensor, broadcast_strides, contiguous_strides, dispatch_dtype,
};
use oxtensor_graph::IndexEntry;
use oxtensor_graph::index::{resolve_index, resolve_slice};

/// The layout a basic index selects from an array of the given layout.
struct Region {
    shape: Shape,
    strides: Strides,
    offset: isize,
}

/// Applies the index pattern `spec` (entries for the leading dimensions, with their scalar
/// inputs consumed in order) to an array layout, giving the selected region's layout.
fn resolve_basic(
    shape: &[usize],
    strides: &[isize],
    offset: isize,
    spec: &[IndexEntry],
    scalars: &[&Tensor],
) -> Result<Region, KernelError> {
    if spec.len() > shape.len() {
        return Err(KernelError::Index(format!(
            "too many indices for array: array is {}-dimensional, but {} were indexed",
            shape.len(),
            spec.len()
        )));
    }
    let needed: usize = spec.iter().map(|e| e.n_inputs()).sum();
    if scalars.len() != needed {
        return Err(KernelError::Value(format!(
            "the index pattern takes {needed} scalar inputs, got {}",
            scalars.len()
        )));
    }
    let mut inputs = scalars.iter().enumerate();
    let mut next = |present: bool| -> Result<Option<i64>, KernelError> {
        if !present {
            return Ok(None);
        }
        let (k, t) = inputs.next().ok_or_else(|| {
            KernelError::Value("the index pattern ran out of scalar inputs".into())
        })?;
        int_scalar(t, &format_args!("index input {k}")).map(Some)
    };
    let mut region = Region {
        shape: Shape::new(),
        strides: Strides::new(),
        offset,
    };
    for (d, entry) in spec.iter().enumerate() {
        let (n, s) = (shape[d], strides[d]);
        match *entry {
            IndexEntry::Index => {
                let i = next(true)?.unwrap_or_default();
                let r = resolve_index(n, i).map_err(|_| {
                    KernelError::Index(format!(
                        "index {i} is out of bounds for axis {d} with size {n}"
                    ))
                })?;
                region.offset += r as isize * s;
            }
            IndexEntry::Slice { start, stop, step } => {
                let (a, b, c) = (next(start)?, next(stop)?, next(step)?);
                let r = resolve_slice(n, a, b, c).map_err(KernelError::Value)?;
                if r.len > 0 {
                    region.offset += r.start as isize * s;
                }
                let stride = if r.len > 1 {
                    s.checked_mul(r.step as isize).ok_or_else(|| {
                        KernelError::Index(format!("slice step {} overflows the stride", r.step))
                    })?
                } else {
                    s
                };
                region.shape.push(r.len);
                region.strides.push(stride);
            }
        }
    }
    region.shape.extend_from_slice(&shape[spec.len()..]);
    region.strides.extend_from_slice(&strides[spec.len()..]);
    Ok(region)
}

/// `Op::Subtensor`: basic indexing `x[i, a:b:c, …]` with Python semantics (negative indices
/// count from the end, slice bounds clamp, steps may be negative). Returns a view of `x`.
pub fn subtensor(
    x: &Tensor,
    spec: &[IndexEntry],
    scalars: &[&Tensor],
) -> Result<Tensor, KernelError> {
    let r = resolve_basic(x.shape(), x.strides(), x.offset() as isize, spec, scalars)?;
    let offset = if r.shape.contains(&0) {
        0
    } else {
        usize::try_from(r.offset).map_err(|_| {
            KernelError::Index(format!(
                "index region starts before the array ({})",
                r.offset
            ))
        })?
    };
    Ok(x.view(&r.shape, &r.strides, offset)?)
}

/// `y` converted to `dtype` when needed (NumPy assignment casts the value to the target).
fn as_dtype(y: &Tensor, dtype: DType) -> Tensor {
    if y.dtype() == dtype {
        y.clone()
    } else {
        y.cast(dtype)
    }
}

/// `Op::IncSubtensor`: functional `x[idx] = y` (`set`) or `x[idx] += y` for a basic index.
/// The result is a fresh contiguous copy of `x` (its dtype) with `y`, converted to `x`'s dtype
/// and broadcast NumPy-style to the indexed region, assigned or added in.
pub fn inc_subtensor(
    x: &Tensor,
    y: &Tensor,
    spec: &[IndexEntry],
    scalars: &[&Tensor],
    set: bool,
) -> Result<Tensor, KernelError> {
    // The output buffer first: every offset below is then within a real allocation.
    let mut out = copy_any(x)?;
    let region = resolve_basic(out.shape(), out.strides(), 0, spec, scalars)?;
    let mismatch = || {
        KernelError::Shape(format!(
            "could not broadcast input array from shape {} into shape {}",
            tuple(y.shape()),
            tuple(&region.shape)
        ))
    };
    let y = as_dtype(y, x.dtype());
    let y_strides =
        broadcast_strides(y.shape(), y.strides(), &region.shape).ok_or_else(mismatch)?;
    let walk = Walk::new(&region.shape, &region.strides, &y_strides);
    let mode = if set { Combine::Assign } else { Combine::Add };
    dispatch_dtype!(x.dtype(), T => {
        let src = storage_of::<T>(&y)?;
        let dst = out.data_mut::<T>().ok_or_else(not_writable)?;
        apply(&walk, mode, dst, region.offset, src, y.offset() as isize);
    });
    Ok(out)
}

fn not_writable() -> KernelError {
    KernelError::Value("internal error: a fresh copy is not writable".into())
}

/// Checks `axis` against `x`'s rank and resolves the integer index array `idx` (any integer
/// dtype and rank) against the extent of `axis`: negative indices wrap once, out-of-range ones
/// are an error (not clipped, unlike `np.take`'s default).
fn resolve_indices(x: &Tensor, idx: &Tensor, axis: usize) -> Result<Vec<usize>, KernelError> {
    let nd = x.ndim();
    if axis >= nd {
        return Err(KernelError::Value(format!(
            "axis {axis} is out of bounds for array of dimension {nd}"
        )));
    }
    let n = x.shape()[axis];
    int_values(idx, &"the index array")?
        .into_iter()
        .map(|i| {
            resolve_index(n, i).map_err(|_| {
                KernelError::Index(format!(
                    "index {i} is out of bounds for axis {axis} with size {n}"
                ))
            })
        })
        .collect()
}

/// The shape `x.shape[:axis] + idx.shape + x.shape[axis+1:]` of a take along `axis`.
fn take_shape(x: &Tensor, idx: &Tensor, axis: usize) -> Shape {
    let xs = x.shape();
    xs[..axis]
        .iter()
        .chain(idx.shape())
        .chain(&xs[axis + 1..])
        .copied()
        .collect()
}

/// `Op::Take`: `np.take(x, idx, axis)` — the output replaces `x`'s `axis` by `idx`'s
/// dimensions. Indices may be of any integer dtype and rank; negative ones count from the end,
/// out-of-range ones are an error. Each selected slab moves as block copies when dense.
pub fn take(x: &Tensor, idx: &Tensor, axis: usize) -> Result<Tensor, KernelError> {
    let pos = resolve_indices(x, idx, axis)?;
    let out_shape = take_shape(x, idx, axis);
    let out_strides = contiguous_strides(&out_shape);
    let (xs, xst) = (x.shape(), x.strides());
    let inner: usize = xs[axis + 1..].iter().product();
    // The output is (outer, idx…, inner) in C order: the k-th index's slab starts k * inner
    // elements after its outer position.
    let outer = Walk::new(&xs[..axis], &out_strides[..axis], &xst[..axis]);
    let slab = Walk::new(
        &xs[axis + 1..],
        &out_strides[axis + idx.ndim()..],
        &xst[axis + 1..],
    );
    let x_axis = xst[axis];
    dispatch_dtype!(x.dtype(), T => fresh::<T>(&out_shape, |dst| {
        // Inside the fill: the output exists, so k * inner (< its size) cannot overflow.
        let pairs: Vec<(isize, isize)> = pos
            .iter()
            .enumerate()
            .map(|(k, &p)| ((k * inner) as isize, p as isize * x_axis))
            .collect();
        let src = storage_of::<T>(x)?;
        indexed_slabs(&outer, &slab, &pairs, Combine::Assign, (dst, 0), (src, x.offset() as isize));
        Ok(())
    }))
}

/// For every position of `outer` and then every index in order, combines one slab (walked by
/// `slab`) of the source into the destination; `pairs[k]` holds index `k`'s slab offsets
/// (destination, source) relative to the outer position; `dst` and `src` are the buffers with
/// the walk's starting offsets. Single-element slabs (indexing the last axis) take a
/// direct loop instead of one walk per element.
fn indexed_slabs<T: Accumulate>(
    outer: &Walk,
    slab: &Walk,
    pairs: &[(isize, isize)],
    mode: Combine,
    (dst, d0): (&mut [T], isize),
    (src, s0): (&[T], isize),
) {
    if slab.is_single() {
        outer.elems(d0, s0, |d, s| {
            for &(dk, sk) in pairs {
                combine(mode, &mut dst[(d + dk) as usize], src[(s + sk) as usize]);
            }
        });
    } else {
        outer.elems(d0, s0, |d, s| {
            for &(dk, sk) in pairs {
                apply(slab, mode, dst, d + dk, src, s + sk);
            }
        });
    }
}

/// Relative offsets of the positions of `shape` in C order under `strides`.
fn offsets(shape: &[usize], strides: &[isize]) -> Vec<isize> {
    let mut out = Vec::with_capacity(shape.iter().product());
    Walk::new(shape, strides, strides).elems(0, 0, |a, _| out.push(a));
    out
}

/// `Op::IncTake`: functional `x[..., idx, ...] += y` along `axis` with repeated indices
/// accumulating (`np.add.at`), or with `set`, assignment where the last occurrence wins. `y`
/// is converted to `x`'s dtype and broadcast NumPy-style to the take shape
/// `x.shape[:axis] + idx.shape + x.shape[axis+1:]`; indices are checked as for [`take`].
pub fn inc_take(
    x: &Tensor,
    y: &Tensor,
    idx: &Tensor,
    axis: usize,
    set: bool,
) -> Result<Tensor, KernelError> {
    let pos = resolve_indices(x, idx, axis)?;
    let region = take_shape(x, idx, axis);
    let mismatch = || {
        KernelError::Shape(format!(
            "shape mismatch: value array of shape {} could not be broadcast to indexing result \
             of shape {}",
            tuple(y.shape()),
            tuple(&region)
        ))
    };
    let y = as_dtype(y, x.dtype());
    let ys = broadcast_strides(y.shape(), y.strides(), &region).ok_or_else(mismatch)?;
    // The output buffer first: every offset below is then within a real allocation.
    let mut out = copy_any(x)?;
    let (xs, out_strides) = (x.shape(), out.strides().to_vec());
    let k_end = axis + idx.ndim();
    let y_k = offsets(idx.shape(), &ys[axis..k_end]);
    let outer = Walk::new(&xs[..axis], &out_strides[..axis], &ys[..axis]);
    let slab = Walk::new(&xs[axis + 1..], &out_strides[axis + 1..], &ys[k_end..]);
    let pairs: Vec<(isize, isize)> = pos
        .iter()
        .zip(&y_k)
        .map(|(&p, &yk)| (p as isize * out_strides[axis], yk))
        .collect();
    let mode = if set { Combine::Assign } else { Combine::Add };
    dispatch_dtype!(x.dtype(), T => {
        let src = storage_of::<T>(&y)?;
        let dst = out.data_mut::<T>().ok_or_else(not_writable)?;
        // For each outer position, indices are applied in order, so for every target element
        // later occurrences see (and, when setting, overwrite) earlier ones.
        indexed_slabs(&outer, &slab, &pairs, mode, (dst, 0), (src, y.offset() as isize));
    });
    Ok(out)
}
