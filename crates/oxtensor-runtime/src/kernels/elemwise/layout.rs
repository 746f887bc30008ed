//! Runtime broadcasting under PyTensor's static-1 rule, and the merged iteration space the
//! loops walk.

use crate::KernelError;
use oxtensor_data::{Shape, Tensor};
use oxtensor_graph::TensorType;
use smallvec::SmallVec;

/// Extents or strides of the merged walk, outermost first.
pub(super) type Walk<T> = SmallVec<[T; 4]>;

/// The output shape of an elementwise node and how each input is read along it.
///
/// Dimensions of output extent 1 are dropped and adjacent dimensions are merged wherever every
/// input allows it (`stride[d] == stride[d + 1] * extent[d + 1]`; the output is C-contiguous so
/// it always allows it), so same-shape contiguous inputs walk as one flat run and a transposed
/// or broadcast input as few, long runs.
pub(super) struct Layout {
    /// The output extents.
    pub shape: Shape,
    /// The number of output elements.
    pub numel: usize,
    /// Extents of the merged walk (empty when there is a single element).
    pub dims: Walk<usize>,
    /// For each input, its element strides along `dims` (0 where it is broadcast).
    pub strides: Vec<Walk<isize>>,
}

/// The static extent of input `i`'s dimension `d`, if its type says.
fn static_extent(types: &[TensorType], i: usize, d: usize) -> Option<usize> {
    types.get(i).and_then(|t| t.shape.get(d).copied().flatten())
}

/// Explains why input `i` and input `j` disagree in dimension `d`.
fn mismatch(inputs: &[&Tensor], types: &[TensorType], i: usize, j: usize, d: usize) -> KernelError {
    let (si, sj) = (inputs[i].shape(), inputs[j].shape());
    let mut msg = format!(
        "input {i} has shape {si:?} but input {j} has shape {sj:?}: dimension {d} does not match"
    );
    // A runtime extent of 1 would have been stretched had the type allowed it: say so.
    match [i, j].into_iter().find(|&k| inputs[k].shape()[d] == 1) {
        Some(k) => {
            let declared =
                static_extent(types, k, d).map_or("unknown".to_string(), |n| n.to_string());
            msg.push_str(&format!(
                " and input {k}'s dimension {d} is not broadcastable \
                 (its static extent is {declared}, not 1)"
            ));
        }
        None => msg.push_str(" (only a dimension of static extent 1 broadcasts)"),
    }
    KernelError::Shape(msg)
}

impl Layout {
    /// Checks that `inputs` fit together and computes the output shape and merged walk.
    ///
    /// A dimension of input `i` is stretched when its runtime extent is 1 and its static type
    /// (`types[i]`) declares extent 1 there; every other runtime extent must equal the output's.
    pub fn new(inputs: &[&Tensor], types: &[TensorType]) -> Result<Layout, KernelError> {
        let first = inputs.first().ok_or_else(|| {
            KernelError::Value("an elementwise op needs at least one input".into())
        })?;
        let rank = first.ndim();
        if let Some((i, t)) = inputs.iter().enumerate().find(|(_, t)| t.ndim() != rank) {
            return Err(KernelError::Shape(format!(
                "input {i} has shape {:?} (rank {}) but input 0 has shape {:?} (rank {rank}): \
                 inputs of an elementwise op must have equal rank",
                t.shape(),
                t.ndim(),
                first.shape()
            )));
        }
        let stretches =
            |i: usize, d: usize| inputs[i].shape()[d] == 1 && static_extent(types, i, d) == Some(1);
        let mut shape = Shape::with_capacity(rank);
        for d in 0..rank {
            let mut fixed: Option<usize> = None;
            for i in (0..inputs.len()).filter(|&i| !stretches(i, d)) {
                match fixed {
                    None => fixed = Some(i),
                    Some(j) if inputs[j].shape()[d] != inputs[i].shape()[d] => {
                        return Err(mismatch(inputs, types, i, j, d));
                    }
                    Some(_) => {}
                }
            }
            shape.push(fixed.map_or(1, |j| inputs[j].shape()[d]));
        }
        let numel = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| {
                KernelError::Shape(format!(
                    "the output shape {:?} has too many elements",
                    shape.as_slice()
                ))
            })?;

        // Merge from the innermost dimension outwards.
        let mut dims: Walk<usize> = Walk::new();
        let mut strides: Vec<Walk<isize>> = vec![Walk::new(); inputs.len()];
        if numel > 0 {
            for d in (0..rank).rev().filter(|&d| shape[d] != 1) {
                let stride = |i: usize| {
                    if inputs[i].shape()[d] == shape[d] {
                        inputs[i].strides()[d]
                    } else {
                        0
                    }
                };
                let merges = dims.last().is_some_and(|&inner| {
                    (0..inputs.len()).all(|i| {
                        let s = strides[i][strides[i].len() - 1];
                        s.checked_mul(inner as isize) == Some(stride(i))
                    })
                });
                if merges {
                    if let Some(inner) = dims.last_mut() {
                        *inner *= shape[d];
                    }
                } else {
                    dims.push(shape[d]);
                    for (i, s) in strides.iter_mut().enumerate() {
                        s.push(stride(i));
                    }
                }
            }
            dims.reverse();
            for s in &mut strides {
                s.reverse();
            }
        }
        Ok(Layout {
            shape,
            numel,
            dims,
            strides,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxtensor_data::DType;

    fn ty(shape: &[Option<usize>]) -> TensorType {
        TensorType::new(DType::F64, shape)
    }

    #[test]
    fn merges_contiguous_and_keeps_broadcast_dims() {
        let a = Tensor::zeros(DType::F64, &[2, 3, 4]).unwrap();
        let b = Tensor::zeros(DType::F64, &[2, 1, 4]).unwrap();
        let types = [ty(&[None, None, None]), ty(&[None, Some(1), None])];
        let l = Layout::new(&[&a, &a], &[types[0].clone(), types[0].clone()]).unwrap();
        assert_eq!(l.dims.as_slice(), &[24]);
        assert_eq!(l.strides[0].as_slice(), &[1]);
        let l = Layout::new(&[&a, &b], &types).unwrap();
        assert_eq!(l.shape.as_slice(), &[2, 3, 4]);
        assert_eq!(l.dims.as_slice(), &[2, 3, 4]);
        assert_eq!(l.strides[1].as_slice(), &[4, 0, 1]);
        let t = a.permute(&[2, 1, 0]);
        let l = Layout::new(&[&t], &types[..1]).unwrap();
        assert_eq!(l.dims.as_slice(), &[4, 3, 2]);
        assert_eq!(l.strides[0].as_slice(), &[1, 4, 12]);
    }

    #[test]
    fn mismatches_name_both_inputs() {
        let a = Tensor::zeros(DType::F64, &[3, 5]).unwrap();
        let b = Tensor::zeros(DType::F64, &[3, 1]).unwrap();
        let err = Layout::new(&[&a, &b], &[ty(&[None, None]), ty(&[None, None])])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("input 1 has shape [3, 1] but input 0 has shape [3, 5]"),
            "{err}"
        );
        assert!(
            err.contains("input 1's dimension 1 is not broadcastable"),
            "{err}"
        );
    }
}
