//! The Rust side of a kernel call: checking runtime shapes before any C runs, and laying out
//! the strided space the C loops walk.
//!
//! The check is the interpreter's (PyTensor's static-1 broadcasting rule, as in
//! `oxtensor_runtime::kernels::elemwise`): a dimension stretches only where its runtime extent
//! is 1 and its static type says 1; every other extent must equal the output's. When it fails,
//! the executor hands the node to the interpreter, which reports the error in its own words.

use oxtensor_data::{Shape, Tensor};
use oxtensor_graph::TensorType;
use smallvec::SmallVec;

/// The largest rank of a merged walk the generated code accepts (`OX_MAXDIM` in C).
pub(crate) const MAX_DIM: usize = 32;

/// Element strides of one operand, one per dimension.
pub(crate) type Strides = SmallVec<[isize; 4]>;

/// A space of elements and how each operand is read along it.
pub(crate) struct Space {
    /// The extents.
    pub shape: Shape,
    /// The number of elements (non-zero: empty spaces go to the interpreter).
    pub numel: usize,
    /// For each operand, its element strides along `shape` (0 where broadcast).
    pub strides: Vec<Strides>,
}

/// The static extent of input `i`'s dimension `d`, if its type says.
fn static_extent(types: &[TensorType], i: usize, d: usize) -> Option<usize> {
    types.get(i).and_then(|t| t.shape.get(d).copied().flatten())
}

impl Space {
    /// The output space of an elementwise node on `inputs` (static types `types`), or `None`
    /// when the shapes do not fit together or the space is empty.
    pub fn elemwise(inputs: &[&Tensor], types: &[TensorType]) -> Option<Space> {
        let rank = inputs.first()?.ndim();
        if inputs.iter().any(|t| t.ndim() != rank) {
            return None;
        }
        let stretches =
            |i: usize, d: usize| inputs[i].shape()[d] == 1 && static_extent(types, i, d) == Some(1);
        let mut shape = Shape::with_capacity(rank);
        for d in 0..rank {
            let mut fixed: Option<usize> = None;
            for i in (0..inputs.len()).filter(|&i| !stretches(i, d)) {
                let e = inputs[i].shape()[d];
                match fixed {
                    None => fixed = Some(e),
                    Some(f) if f != e => return None,
                    Some(_) => {}
                }
            }
            shape.push(fixed.unwrap_or(1));
        }
        let strides = inputs
            .iter()
            .map(|t| {
                (0..rank)
                    .map(|d| {
                        if t.shape()[d] == shape[d] {
                            t.strides()[d]
                        } else {
                            0
                        }
                    })
                    .collect()
            })
            .collect();
        Space::new(shape, strides)
    }

    /// The space of one tensor's own elements.
    pub fn of(t: &Tensor) -> Option<Space> {
        Space::new(t.shape().into(), vec![t.strides().into()])
    }

    fn new(shape: Shape, strides: Vec<Strides>) -> Option<Space> {
        let numel = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
        (numel > 0 && i64::try_from(numel).is_ok()).then_some(Space {
            shape,
            numel,
            strides,
        })
    }
}

/// True when every element the view addresses lies inside its storage (always so for a
/// well-formed `Tensor`; checked because the C code trusts it).
pub(crate) fn in_bounds(t: &Tensor) -> bool {
    let size = t.storage().len() / t.dtype().size();
    let (mut lo, mut hi) = (t.offset() as i128, t.offset() as i128);
    for (&n, &s) in t.shape().iter().zip(t.strides()) {
        if n == 0 {
            return true;
        }
        let span = (n as i128 - 1) * s as i128;
        if span < 0 {
            lo += span;
        } else {
            hi += span;
        }
    }
    lo >= 0 && hi < size as i128
}

/// A walk for C: extents (outermost first) and, operand-major, each operand's strides
/// (`strides[k * dims.len() + d]`).
pub(crate) struct Walk {
    /// The extents.
    pub dims: Vec<i64>,
    /// The strides.
    pub strides: Vec<i64>,
}

impl Walk {
    /// The walk over the dimensions `which` of `space` (in order): dimensions of extent 1 are
    /// dropped, and a dimension merges into the next inner one when every operand allows it
    /// (`stride[d] == stride[d + 1] * extent[d + 1]`). Never empty: a single element is the
    /// walk `[1]`. `None` when the rank is above [`MAX_DIM`].
    pub fn merged(space: &Space, which: &[usize]) -> Option<Walk> {
        let n_ops = space.strides.len();
        let mut dims: Vec<usize> = Vec::new();
        let mut strides: Vec<Vec<isize>> = vec![Vec::new(); n_ops];
        for &d in which.iter().rev() {
            let e = space.shape[d];
            if e == 1 {
                continue;
            }
            let merges = dims.last().is_some_and(|&inner| {
                (0..n_ops).all(|k| {
                    let s = strides[k][strides[k].len() - 1];
                    s.checked_mul(inner as isize) == Some(space.strides[k][d])
                })
            });
            match dims.last_mut() {
                Some(inner) if merges => *inner *= e,
                _ => {
                    dims.push(e);
                    for (k, s) in strides.iter_mut().enumerate() {
                        s.push(space.strides[k][d]);
                    }
                }
            }
        }
        Walk::from_parts(dims, strides)
    }

    fn from_parts(mut dims: Vec<usize>, mut strides: Vec<Vec<isize>>) -> Option<Walk> {
        if dims.is_empty() {
            dims.push(1);
            for s in &mut strides {
                s.push(0);
            }
        }
        if dims.len() > MAX_DIM {
            return None;
        }
        dims.reverse();
        let mut flat = Vec::with_capacity(dims.len() * strides.len());
        for mut s in strides {
            s.reverse();
            flat.extend(s.into_iter().map(|v| v as i64));
        }
        Some(Walk {
            dims: dims.into_iter().map(|d| d as i64).collect(),
            strides: flat,
        })
    }
}

/// How a reduction walks its space: the kept and the reduced dimensions, and where each
/// operand starts (in elements from its first element).
pub(crate) struct ReduceWalk {
    /// Kept dimensions, in output (C) order.
    pub kept: Walk,
    /// Reduced dimensions.
    pub reduced: Walk,
    /// Per operand, the element offset of its starting point.
    pub base: Vec<isize>,
    /// True when blocks of consecutive outputs should be reduced together (every operand's
    /// innermost kept stride is 0 or 1, and the main operand's reduced elements are not
    /// contiguous).
    pub cols: bool,
}

impl ReduceWalk {
    /// Splits `space` into kept dimensions and the `axes` reduced. The reduced dimensions are
    /// reordered for locality, which only changes the order elements are combined in: each is
    /// walked forwards in the main operand (`main`, the largest) and they are sorted by
    /// decreasing stride of it.
    pub fn new(space: &Space, axes: &[usize], main: usize) -> Option<ReduceWalk> {
        let n_ops = space.strides.len();
        let kept: Vec<usize> = (0..space.shape.len())
            .filter(|d| !axes.contains(d))
            .collect();
        let kept = Walk::merged(space, &kept)?;
        let mut base = vec![0isize; n_ops];
        let mut red: Vec<(usize, Vec<isize>)> = Vec::new();
        for &a in axes {
            let n = space.shape[a];
            if n == 1 {
                continue;
            }
            let mut s: Vec<isize> = space.strides.iter().map(|st| st[a]).collect();
            if s[main] < 0 {
                for (k, sk) in s.iter_mut().enumerate() {
                    base[k] += (n as isize - 1) * *sk;
                    *sk = -*sk;
                }
            }
            red.push((n, s));
        }
        red.sort_by_key(|(_, s)| std::cmp::Reverse(s[main].unsigned_abs()));
        let mut dims: Vec<usize> = Vec::new();
        let mut strides: Vec<Vec<isize>> = vec![Vec::new(); n_ops];
        for (n, s) in red.into_iter().rev() {
            let merges = dims.last().is_some_and(|&inner| {
                (0..n_ops).all(|k| {
                    strides[k]
                        .last()
                        .and_then(|l| l.checked_mul(inner as isize))
                        == Some(s[k])
                })
            });
            match dims.last_mut() {
                Some(inner) if merges => *inner *= n,
                _ => {
                    dims.push(n);
                    for (k, st) in strides.iter_mut().enumerate() {
                        st.push(s[k]);
                    }
                }
            }
        }
        let reduced = Walk::from_parts(dims, strides)?;
        let (nk, nr) = (kept.dims.len(), reduced.dims.len());
        let kept_inner = |k: usize| kept.strides[k * nk + nk - 1];
        let cols = kept.dims[nk - 1] > 1
            && (0..n_ops).all(|k| matches!(kept_inner(k), 0 | 1))
            && (0..n_ops).any(|k| kept_inner(k) == 1)
            && reduced.strides[main * nr + nr - 1] != 1;
        Some(ReduceWalk {
            kept,
            reduced,
            base,
            cols,
        })
    }
}

/// How an elementwise call walks its operands.
pub(crate) struct ElemLayout {
    /// The walk.
    pub(crate) walk: Walk,
    /// The output shape.
    pub(crate) shape: Shape,
    /// The number of output elements.
    pub(crate) numel: usize,
}

impl ElemLayout {
    /// The walk over every axis of an elementwise iteration `space` (`None` when its strides
    /// do not merge into one walk the kernels take).
    pub(crate) fn of(space: Space) -> Option<ElemLayout> {
        let all: Vec<usize> = (0..space.shape.len()).collect();
        Some(ElemLayout {
            walk: Walk::merged(&space, &all)?,
            shape: space.shape,
            numel: space.numel,
        })
    }
}
