//! Layout and creation kernels: views that only change shape, strides and offset
//! (`DimShuffle`, `Reshape` of contiguous data, `SpecifyShape`, `Split`), shape queries, and
//! ops that build fresh arrays (`Alloc`, `Arange`, `Eye`, `MakeVector`, `Join`).
//!
//! Runtime values may disagree with what the graph assumed (an extent the type left open, an
//! index computed at run time), so every kernel checks its inputs and reports NumPy-like
//! [`KernelError`]s instead of panicking.

pub(in crate::kernels) mod args;
pub(in crate::kernels) mod strided;

use crate::KernelError;
use args::{int_scalar, int_values, tuple};
use oxtensor_data::{DType, Element, Shape, Strides, Tensor, contiguous_strides, dispatch_dtype};
use strided::{Accumulate, Combine, Walk, apply, copy_any, fresh, storage_of};

/// One flag per dimension.
type SmallFlags = smallvec::SmallVec<[bool; 4]>;

/// `Op::DimShuffle`: output dimension `i` is input dimension `order[i]`, or a new dimension of
/// extent 1 where `None`. Returns a view (only strides change). Input dimensions left out are
/// dropped and must have runtime extent 1, since dropping anything else would lose data.
pub fn dimshuffle(x: &Tensor, order: &[Option<usize>]) -> Result<Tensor, KernelError> {
    let nd = x.ndim();
    let mut used: SmallFlags = smallvec::smallvec![false; nd];
    for &a in order.iter().flatten() {
        if a >= nd {
            return Err(KernelError::Value(format!(
                "dimshuffle: axis {a} is out of bounds for array of dimension {nd}"
            )));
        }
        if std::mem::replace(&mut used[a], true) {
            return Err(KernelError::Value(format!(
                "dimshuffle: axis {a} appears twice in the new order"
            )));
        }
    }
    for (d, &u) in used.iter().enumerate() {
        if !u && x.shape()[d] != 1 {
            return Err(KernelError::Shape(format!(
                "dimshuffle: cannot drop dimension {d} of an array of shape {}: only \
                 dimensions of extent 1 can be dropped",
                tuple(x.shape())
            )));
        }
    }
    let (shape, strides): (Shape, Strides) = order
        .iter()
        .map(|o| o.map_or((1, 0), |a| (x.shape()[a], x.strides()[a])))
        .unzip();
    Ok(x.view(&shape, &strides, x.offset())?)
}

/// `Op::Reshape`: the same elements in C order under the shape given by the integer vector
/// `shape` (any integer dtype), where one entry may be −1 (inferred). A view when `x` is
/// contiguous, else a contiguous copy viewed under the new shape.
pub fn reshape(x: &Tensor, shape: &Tensor) -> Result<Tensor, KernelError> {
    if shape.ndim() != 1 {
        return Err(KernelError::Shape(format!(
            "reshape: the new shape must be a vector, got an array of shape {}",
            tuple(shape.shape())
        )));
    }
    let dims = int_values(shape, &"reshape: the new shape")?;
    let size = x.numel();
    let mismatch = || {
        KernelError::Shape(format!(
            "cannot reshape array of size {size} into shape {}",
            tuple(&dims)
        ))
    };
    let mut unknown = None;
    let mut known = 1usize;
    let mut out = Shape::with_capacity(dims.len());
    for (i, &d) in dims.iter().enumerate() {
        if d == -1 {
            if unknown.replace(i).is_some() {
                return Err(KernelError::Value(format!(
                    "can only specify one unknown dimension (new shape {})",
                    tuple(&dims)
                )));
            }
            out.push(0);
            continue;
        }
        let d = usize::try_from(d).map_err(|_| {
            KernelError::Value(format!(
                "negative dimensions not allowed (new shape {})",
                tuple(&dims)
            ))
        })?;
        known = known.checked_mul(d).ok_or_else(mismatch)?;
        out.push(d);
    }
    match unknown {
        Some(i) => {
            if known == 0 || !size.is_multiple_of(known) {
                return Err(mismatch());
            }
            out[i] = size / known;
        }
        None if known != size => return Err(mismatch()),
        None => {}
    }
    let strides = contiguous_strides(&out);
    if x.is_contiguous() {
        Ok(x.view(&out, &strides, x.offset())?)
    } else {
        Ok(copy_any(x)?.view(&out, &strides, 0)?)
    }
}

/// `Op::Shape`: the `int64` vector of `x`'s extents.
pub fn shape(x: &Tensor) -> Tensor {
    let dims: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    Tensor::from_slice(&dims, &[dims.len()]).expect("a vector of the rank's length")
}

/// `Op::ShapeI`: the `int64` scalar extent of dimension `i`.
pub fn shape_i(x: &Tensor, i: usize) -> Result<Tensor, KernelError> {
    let d = x.shape().get(i).ok_or_else(|| {
        KernelError::Value(format!(
            "shape_i: axis {i} is out of bounds for array of dimension {}",
            x.ndim()
        ))
    })?;
    Ok(Tensor::scalar(*d as i64))
}

/// `Op::SpecifyShape`: checks that `x` has the rank of `spec` and every extent `spec` fixes,
/// and returns `x` itself (a view). This is where runtime values are held to static promises.
pub fn specify_shape(x: &Tensor, spec: &[Option<usize>]) -> Result<Tensor, KernelError> {
    let shown = || {
        let dims: Vec<String> = spec
            .iter()
            .map(|d| d.map_or("None".into(), |v| v.to_string()))
            .collect();
        tuple(&dims)
    };
    if x.ndim() != spec.len() {
        return Err(KernelError::Shape(format!(
            "specify_shape: expected an array of rank {} (shape {}), got shape {}",
            spec.len(),
            shown(),
            tuple(x.shape())
        )));
    }
    for (d, (&have, want)) in x.shape().iter().zip(spec).enumerate() {
        if let Some(w) = *want
            && w != have
        {
            return Err(KernelError::Shape(format!(
                "specify_shape: dimension {d} has extent {have}, expected {w} (expected shape \
                 {}, got shape {})",
                shown(),
                tuple(x.shape())
            )));
        }
    }
    Ok(x.clone())
}

/// `Op::Alloc`: `value` broadcast (NumPy's right-aligned rules) to the shape given by the
/// integer scalars `dims`, materialised in a fresh contiguous buffer (not a stride-0 view, so
/// later phases may write into the output in place).
pub fn alloc(value: &Tensor, dims: &[&Tensor]) -> Result<Tensor, KernelError> {
    let mut shape = Shape::with_capacity(dims.len());
    for (i, d) in dims.iter().enumerate() {
        let n = int_scalar(d, &format_args!("alloc: extent {i}"))?;
        let n = usize::try_from(n).map_err(|_| {
            KernelError::Value(format!(
                "alloc: negative dimensions are not allowed (extent {i} is {n})"
            ))
        })?;
        shape.push(n);
    }
    let stretched = value.broadcast_to(&shape).map_err(|_| {
        KernelError::Shape(format!(
            "alloc: could not broadcast input array from shape {} into shape {}",
            tuple(value.shape()),
            tuple(&shape)
        ))
    })?;
    copy_any(&stretched)
}

/// A 0-d arange bound as an exact integer (any integer or bool dtype).
fn exact(t: &Tensor) -> Option<i128> {
    if t.dtype().is_unsigned_int() {
        t.item::<u64>().map(i128::from)
    } else {
        t.item::<i64>().map(i128::from)
    }
}

/// `Op::Arange`: `np.arange(start, stop, step, dtype)`. The length is
/// `ceil((stop - start) / step)`, at least 0. With integer (or bool) bounds everything is exact
/// integer arithmetic; with any float bound the length is computed in `f64` (as type inference
/// does) and element `i` is `start + i * step` converted to `dtype`.
pub fn arange(
    dtype: DType,
    start: &Tensor,
    stop: &Tensor,
    step: &Tensor,
) -> Result<Tensor, KernelError> {
    for (name, t) in [("start", start), ("stop", stop), ("step", step)] {
        if t.ndim() != 0 {
            return Err(KernelError::Shape(format!(
                "arange: {name} must be a scalar, got an array of shape {}",
                tuple(t.shape())
            )));
        }
    }
    let not_scalar = || KernelError::Shape("arange: bounds must be one-element scalars".into());
    if [start, stop, step].iter().all(|t| !t.dtype().is_float()) {
        let (a, b, s) = (
            exact(start).ok_or_else(not_scalar)?,
            exact(stop).ok_or_else(not_scalar)?,
            exact(step).ok_or_else(not_scalar)?,
        );
        if s == 0 {
            return Err(KernelError::Value("arange: step cannot be zero".into()));
        }
        let len = if s > 0 {
            (b - a + s - 1).div_euclid(s)
        } else {
            (a - b - s - 1).div_euclid(-s)
        };
        let len = usize::try_from(len.max(0))
            .map_err(|_| KernelError::Value("arange: maximum allowed size exceeded".into()))?;
        dispatch_dtype!(dtype, T => fresh::<T>(&[len], |out| {
            for (i, o) in out.iter_mut().enumerate() {
                let v = a + i as i128 * s;
                *o = match i64::try_from(v) {
                    Ok(v) => T::from_i64(v),
                    Err(_) => T::from_u64(v as u64),
                };
            }
            Ok(())
        }))
    } else {
        let f = |t: &Tensor| t.item::<f64>().ok_or_else(not_scalar);
        let (a, b, s) = (f(start)?, f(stop)?, f(step)?);
        if s == 0.0 {
            return Err(KernelError::Value("arange: step cannot be zero".into()));
        }
        let len = ((b - a) / s).ceil();
        if !len.is_finite() {
            return Err(KernelError::Value(format!(
                "arange: cannot compute length (start {a:?}, stop {b:?}, step {s:?})"
            )));
        }
        if len >= isize::MAX as f64 {
            return Err(KernelError::Value(
                "arange: maximum allowed size exceeded".into(),
            ));
        }
        let len = len.max(0.0) as usize;
        dispatch_dtype!(dtype, T => fresh::<T>(&[len], |out| {
            for (i, o) in out.iter_mut().enumerate() {
                *o = T::from_f64(a + i as f64 * s);
            }
            Ok(())
        }))
    }
}

/// `Op::Eye`: `np.eye(n, m, k)` — an `n × m` array of zeros with ones on diagonal `k`
/// (positive above the main diagonal, negative below). Negative extents are an error, as in
/// NumPy.
pub fn eye(dtype: DType, n: &Tensor, m: &Tensor, k: &Tensor) -> Result<Tensor, KernelError> {
    let rows = int_scalar(n, &"eye: n")?;
    let cols = int_scalar(m, &"eye: m")?;
    let k = int_scalar(k, &"eye: k")?;
    let (Ok(rows), Ok(cols)) = (usize::try_from(rows), usize::try_from(cols)) else {
        return Err(KernelError::Value(format!(
            "eye: negative dimensions are not allowed (n = {rows}, m = {cols})"
        )));
    };
    dispatch_dtype!(dtype, T => fresh::<T>(&[rows, cols], |out| {
        // Row i holds its one at column i + k; only rows where that column exists.
        let (k, r, c) = (i128::from(k), rows as i128, cols as i128);
        let first = (-k).clamp(0, r);
        let last = (c - k).clamp(first, r);
        for i in first..last {
            out[(i * c + i + k) as usize] = T::from_bool(true);
        }
        Ok(())
    }))
}

/// `Op::MakeVector`: a vector of the scalar `items`, each converted to `dtype` with NumPy
/// cast semantics (`Element::cast_from`).
pub fn make_vector(dtype: DType, items: &[&Tensor]) -> Result<Tensor, KernelError> {
    for (i, t) in items.iter().enumerate() {
        if t.ndim() != 0 {
            return Err(KernelError::Shape(format!(
                "make_vector: item {i} must be a scalar, got an array of shape {}",
                tuple(t.shape())
            )));
        }
    }
    dispatch_dtype!(dtype, T => {
        let values: Vec<T> = items
            .iter()
            .map(|t| t.item::<T>().ok_or_else(|| KernelError::Shape("make_vector: empty item".into())))
            .collect::<Result<_, _>>()?;
        Ok(Tensor::from_slice(&values, &[values.len()])?)
    })
}

/// `Op::Join`: `np.concatenate(xs, axis)` converted to `dtype` (the node's output dtype).
/// Inputs must have equal rank and equal extents off `axis`; errors name the inputs' positions
/// and shapes.
pub fn join(axis: usize, xs: &[&Tensor], dtype: DType) -> Result<Tensor, KernelError> {
    let Some(first) = xs.first() else {
        return Err(KernelError::Value(
            "join: need at least one array to concatenate".into(),
        ));
    };
    let nd = first.ndim();
    if axis >= nd {
        return Err(KernelError::Value(format!(
            "join: axis {axis} is out of bounds for array of dimension {nd}"
        )));
    }
    let mut out: Shape = first.shape().into();
    out[axis] = 0;
    for (j, x) in xs.iter().enumerate() {
        if x.ndim() != nd {
            return Err(KernelError::Shape(format!(
                "join: all the input arrays must have the same number of dimensions, but the \
                 array at index 0 has shape {} and the array at index {j} has shape {}",
                tuple(first.shape()),
                tuple(x.shape())
            )));
        }
        if let Some(d) = (0..nd).find(|&d| d != axis && x.shape()[d] != first.shape()[d]) {
            return Err(KernelError::Shape(format!(
                "join: all the input array dimensions except for the concatenation axis must \
                 match exactly, but along dimension {d}, the array at index 0 has shape {} and \
                 the array at index {j} has shape {}",
                tuple(first.shape()),
                tuple(x.shape())
            )));
        }
        out[axis] = out[axis].checked_add(x.shape()[axis]).ok_or_else(|| {
            KernelError::Shape(format!(
                "join: the joined extent along axis {axis} overflows"
            ))
        })?;
    }
    dispatch_dtype!(dtype, T => join_into::<T>(axis, xs, &out))
}

/// Copies each input (converted to `T` first when its dtype differs) into its slab of a fresh
/// output of shape `out`; dense inputs move as one block per outer index.
fn join_into<T: Accumulate>(
    axis: usize,
    xs: &[&Tensor],
    out: &[usize],
) -> Result<Tensor, KernelError> {
    let strides = contiguous_strides(out);
    fresh::<T>(out, |dst| {
        let mut start = 0isize;
        for x in xs {
            let converted;
            let src = if x.dtype() == T::DTYPE {
                *x
            } else {
                converted = x.cast(T::DTYPE);
                &converted
            };
            let walk = Walk::new(src.shape(), &strides, src.strides());
            let data = storage_of::<T>(src)?;
            apply(
                &walk,
                Combine::Assign,
                dst,
                start * strides[axis],
                data,
                src.offset() as isize,
            );
            start += src.shape()[axis] as isize;
        }
        Ok(())
    })
}

/// `Op::Split`: views of `x` cut along `axis` into consecutive pieces of the given sizes
/// (an integer vector of any integer dtype). Sizes must be non-negative and add up to the
/// extent of `axis`.
pub fn split(
    axis: usize,
    n: usize,
    x: &Tensor,
    sizes: &Tensor,
) -> Result<Vec<Tensor>, KernelError> {
    let nd = x.ndim();
    if axis >= nd {
        return Err(KernelError::Value(format!(
            "split: axis {axis} is out of bounds for array of dimension {nd}"
        )));
    }
    if sizes.ndim() != 1 {
        return Err(KernelError::Shape(format!(
            "split: the sizes must be a vector, got an array of shape {}",
            tuple(sizes.shape())
        )));
    }
    let sizes = int_values(sizes, &"split: the sizes")?;
    if sizes.len() != n {
        return Err(KernelError::Shape(format!(
            "split: expected {n} sizes, got {}",
            sizes.len()
        )));
    }
    if let Some((i, v)) = sizes.iter().enumerate().find(|(_, v)| **v < 0) {
        return Err(KernelError::Value(format!(
            "split: sizes must be non-negative, but size {i} is {v} (sizes {})",
            tuple(&sizes)
        )));
    }
    let extent = x.shape()[axis];
    let total: i128 = sizes.iter().map(|&v| i128::from(v)).sum();
    if total != extent as i128 {
        return Err(KernelError::Shape(format!(
            "split: sizes {} add up to {total}, but axis {axis} of the array of shape {} has \
             extent {extent}",
            tuple(&sizes),
            tuple(x.shape())
        )));
    }
    let stride = x.strides()[axis];
    let mut shape: Shape = x.shape().into();
    let mut start = 0usize;
    sizes
        .iter()
        .map(|&n| {
            // Every size is non-negative and they sum to `extent`, so each fits in usize.
            let n = n as usize;
            shape[axis] = n;
            let offset = if n == 0 {
                0
            } else {
                // The piece's first element is an element of `x`, so its offset is valid.
                (x.offset() as isize + start as isize * stride) as usize
            };
            start += n;
            Ok(x.view(&shape, x.strides(), offset)?)
        })
        .collect()
}
