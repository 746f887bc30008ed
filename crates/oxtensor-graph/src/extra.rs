//! The extra tensor ops, [`Op::Extra`]: the few NumPy functions of `pytensor.tensor.extra_ops`
//! and `pytensor.tensor.sort` that no composition of other ops computes exactly and
//! efficiently — scans along an axis, sorting, binary search, data-dependent repetition and
//! the ops whose output extent depends on the values (`unique`, `bincount`, `nonzero`).
//! Everything else in those modules (`diff`, `roll`, `tile`, `linspace`, `take_along_axis`,
//! …) is built from existing ops in [`crate::build::extra`] or the Python front end.
//!
//! Outputs whose extent depends on the input values have a dynamic static extent (`None`);
//! the runtime allocates them when the kernel has run.

use crate::infer::arity;
use crate::{GraphError, Op, StaticShape, TensorType, Var};
use oxtensor_data::DType;
use smallvec::{SmallVec, smallvec};
use std::fmt;

type Types = SmallVec<[TensorType; 1]>;

/// One extra op with its static parameters (axes are already normalised to `0..ndim`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ExtraOp {
    /// `np.cumsum(x, axis)` (`mul: false`) or `np.cumprod(x, axis)` (`mul: true`); input `x`,
    /// output of `x`'s type (PyTensor's `CumOp` keeps the dtype).
    Cumulate {
        /// The axis scanned.
        axis: usize,
        /// Product instead of sum.
        mul: bool,
    },
    /// `np.sort(x, axis, kind="stable")`: NaNs last, equal values keep their order.
    Sort {
        /// The axis sorted.
        axis: usize,
    },
    /// `np.argsort(x, axis, kind="stable")`: `int64` indices that sort `x` (NaNs last).
    ArgSort {
        /// The axis sorted.
        axis: usize,
    },
    /// `np.searchsorted(a, v, side)`: inputs `(a, v)` with `a` a sorted vector; output `int64`
    /// of `v`'s shape.
    SearchSorted {
        /// `side="right"` (the last suitable position) instead of `"left"`.
        right: bool,
    },
    /// `np.repeat(x, repeats, axis)`: inputs `(x, repeats)` where `repeats` is an integer
    /// scalar or a vector with one count per entry along `axis`.
    Repeat {
        /// The axis repeated along.
        axis: usize,
    },
    /// `np.unique(x, return_index, return_inverse, return_counts)` of the flattened `x`:
    /// outputs the sorted distinct values, then the requested `int64` vectors in that order.
    Unique {
        /// Output the index of each value's first occurrence.
        index: bool,
        /// Output, for each entry of `x`, the position of its value among the distinct ones.
        inverse: bool,
        /// Output how often each distinct value occurs.
        counts: bool,
    },
    /// `np.bincount(x, weights, minlength)`: inputs `(x)` or `(x, weights)`, `x` a vector of
    /// non-negative integers; output `int64` counts, or `float64` sums of weights.
    Bincount {
        /// A second input holds weights.
        weighted: bool,
        /// The least length of the output.
        minlength: usize,
    },
    /// `np.nonzero(x)` as one `int64` matrix of shape `(ndim, count)`: row `d` holds the
    /// coordinates along dimension `d` of the non-zero entries, in C order.
    Nonzero,
}

impl ExtraOp {
    /// How many outputs the op produces.
    pub fn n_outputs(&self) -> usize {
        match self {
            ExtraOp::Unique {
                index,
                inverse,
                counts,
            } => 1 + usize::from(*index) + usize::from(*inverse) + usize::from(*counts),
            ExtraOp::Cumulate { .. }
            | ExtraOp::Sort { .. }
            | ExtraOp::ArgSort { .. }
            | ExtraOp::SearchSorted { .. }
            | ExtraOp::Repeat { .. }
            | ExtraOp::Bincount { .. }
            | ExtraOp::Nonzero => 1,
        }
    }
}

impl fmt::Display for ExtraOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExtraOp::Cumulate { axis, mul: false } => write!(f, "CumOp{{{axis}, add}}"),
            ExtraOp::Cumulate { axis, mul: true } => write!(f, "CumOp{{{axis}, mul}}"),
            ExtraOp::Sort { axis } => write!(f, "SortOp{{stable, {axis}}}"),
            ExtraOp::ArgSort { axis } => write!(f, "ArgSortOp{{stable, {axis}}}"),
            ExtraOp::SearchSorted { right } => {
                write!(
                    f,
                    "SearchsortedOp{{{}}}",
                    if *right { "right" } else { "left" }
                )
            }
            ExtraOp::Repeat { axis } => write!(f, "Repeat{{axis={axis}}}"),
            ExtraOp::Unique {
                index,
                inverse,
                counts,
            } => write!(f, "Unique{{{index}, {inverse}, {counts}}}"),
            ExtraOp::Bincount {
                weighted,
                minlength,
            } => write!(f, "Bincount{{weighted={weighted}, minlength={minlength}}}"),
            ExtraOp::Nonzero => write!(f, "Nonzero"),
        }
    }
}

fn axis_in(op: &Op, x: &Var, axis: usize) -> Result<(), GraphError> {
    if axis < x.ndim() {
        Ok(())
    } else {
        Err(GraphError::invalid(
            op,
            format!(
                "axis {axis} is out of bounds for {} of rank {}",
                x.describe(),
                x.ndim()
            ),
        ))
    }
}

fn not_bool(op: &Op, x: &Var) -> Result<(), GraphError> {
    if x.dtype() == DType::Bool {
        Err(GraphError::dtype(
            op,
            x,
            "a numeric type (cast booleans first)",
        ))
    } else {
        Ok(())
    }
}

fn int_input(op: &Op, x: &Var) -> Result<(), GraphError> {
    if x.dtype().is_int() {
        Ok(())
    } else {
        Err(GraphError::dtype(op, x, "an integer type"))
    }
}

fn vector(op: &Op, x: &Var) -> Result<(), GraphError> {
    if x.ndim() == 1 {
        Ok(())
    } else {
        Err(GraphError::rank(op, x, "1 (a vector)"))
    }
}

fn ty(dtype: DType, shape: StaticShape) -> TensorType {
    TensorType { dtype, shape }
}

/// Checks the inputs of `e` (applied as `op`) and returns its output types.
pub(crate) fn infer(e: &ExtraOp, op: &Op, inputs: &[Var]) -> Result<Types, GraphError> {
    match e {
        ExtraOp::Cumulate { axis, .. } => {
            arity(op, inputs, 1)?;
            not_bool(op, &inputs[0])?;
            axis_in(op, &inputs[0], *axis)?;
            Ok(smallvec![inputs[0].ty().clone()])
        }
        ExtraOp::Sort { axis } | ExtraOp::ArgSort { axis } => {
            arity(op, inputs, 1)?;
            axis_in(op, &inputs[0], *axis)?;
            let x = inputs[0].ty();
            let dtype = if matches!(e, ExtraOp::Sort { .. }) {
                x.dtype
            } else {
                DType::I64
            };
            Ok(smallvec![ty(dtype, x.shape.clone())])
        }
        ExtraOp::SearchSorted { .. } => {
            arity(op, inputs, 2)?;
            vector(op, &inputs[0])?;
            Ok(smallvec![ty(DType::I64, inputs[1].ty().shape.clone())])
        }
        ExtraOp::Repeat { axis } => {
            arity(op, inputs, 2)?;
            let (x, r) = (&inputs[0], &inputs[1]);
            axis_in(op, x, *axis)?;
            int_input(op, r)?;
            if r.ndim() > 1 {
                return Err(GraphError::rank(op, r, "0 or 1 (the repeat counts)"));
            }
            let mut shape = x.ty().shape.clone();
            shape[*axis] = match (r.ndim(), r.const_int(), shape[*axis]) {
                (0, Some(k), Some(n)) => usize::try_from(k).ok().map(|k| k * n),
                _ => None,
            };
            Ok(smallvec![ty(x.dtype(), shape)])
        }
        ExtraOp::Unique {
            index,
            inverse,
            counts,
        } => {
            arity(op, inputs, 1)?;
            let x = &inputs[0];
            let mut out: Types = smallvec![ty(x.dtype(), smallvec![None])];
            if *index {
                out.push(ty(DType::I64, smallvec![None]));
            }
            if *inverse {
                let n = x
                    .ty()
                    .shape
                    .iter()
                    .try_fold(1usize, |a, d| d.map(|d| a * d));
                out.push(ty(DType::I64, smallvec![n]));
            }
            if *counts {
                out.push(ty(DType::I64, smallvec![None]));
            }
            Ok(out)
        }
        ExtraOp::Bincount { weighted, .. } => {
            arity(op, inputs, 1 + usize::from(*weighted))?;
            vector(op, &inputs[0])?;
            int_input(op, &inputs[0])?;
            let dtype = if *weighted {
                vector(op, &inputs[1])?;
                DType::F64
            } else {
                DType::I64
            };
            Ok(smallvec![ty(dtype, smallvec![None])])
        }
        ExtraOp::Nonzero => {
            arity(op, inputs, 1)?;
            if inputs[0].ndim() == 0 {
                return Err(GraphError::rank(
                    op,
                    &inputs[0],
                    "at least 1 (nonzero of a 0-d tensor is ambiguous; use atleast_1d)",
                ));
            }
            Ok(smallvec![ty(
                DType::I64,
                smallvec![Some(inputs[0].ndim()), None]
            )])
        }
    }
}

fn dims_of(v: &Var) -> Result<Vec<Var>, GraphError> {
    (0..v.ndim())
        .map(|d| match v.ty().shape[d] {
            Some(n) => Ok(Var::int_constant(n as i64)),
            None => Var::apply1(Op::ShapeI(d), std::slice::from_ref(v)),
        })
        .collect()
}

/// Symbolic extents of the outputs of `e`: those of the input for the ops that keep its shape
/// (of `v` for `searchsorted`), else each output's own (`Shape_i` of the output).
pub(crate) fn shape(
    e: &ExtraOp,
    ins: &[&Vec<Var>],
    outputs: &[Var],
) -> Result<Vec<Vec<Var>>, GraphError> {
    match e {
        ExtraOp::Cumulate { .. } | ExtraOp::Sort { .. } | ExtraOp::ArgSort { .. } => {
            Ok(vec![ins[0].clone()])
        }
        ExtraOp::SearchSorted { .. } => Ok(vec![ins[1].clone()]),
        ExtraOp::Repeat { .. }
        | ExtraOp::Unique { .. }
        | ExtraOp::Bincount { .. }
        | ExtraOp::Nonzero => outputs.iter().map(dims_of).collect(),
    }
}
