//! The one batching driver every op uses: NumPy gufunc broadcasting of leading dimensions
//! (PyTensor's `Blockwise`) around a core kernel that sees one set of core matrices.

use crate::{LinalgError, Real};
use faer::MatRef;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use oxtensor_data::{DType, StridedIndex, Tensor, broadcast_shapes, broadcast_strides};
use rayon::prelude::*;
use smallvec::SmallVec;
use std::borrow::Cow;

/// One input of an op: its name (for messages) and how many trailing dimensions its core has.
#[derive(Clone, Copy)]
pub(crate) struct ArgSpec {
    /// The argument's name, as in PyTensor/SciPy.
    pub name: &'static str,
    /// Number of trailing core dimensions (0 scalar, 1 vector, 2 matrix).
    pub core_ndim: usize,
    /// True for integer index arguments (pivots), which do not take part in choosing the dtype.
    pub index: bool,
}

impl ArgSpec {
    /// A floating-point matrix argument.
    pub const fn matrix(name: &'static str) -> ArgSpec {
        ArgSpec {
            name,
            core_ndim: 2,
            index: false,
        }
    }

    /// A floating-point argument with `core_ndim` core dimensions.
    pub const fn with_ndim(name: &'static str, core_ndim: usize) -> ArgSpec {
        ArgSpec {
            name,
            core_ndim,
            index: false,
        }
    }
}

/// The element type of an output.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutKind {
    /// The op's floating-point dtype.
    Float,
    /// `int32` (pivots, ranks), converted from the kernel's exact float values.
    Int32,
}

/// The core shape and kind of one output.
pub(crate) struct OutSpec {
    /// Core shape (appended to the batch shape).
    pub shape: Vec<usize>,
    /// Element type.
    pub kind: OutKind,
}

impl OutSpec {
    /// A floating-point output of core shape `shape`.
    pub fn float(shape: &[usize]) -> OutSpec {
        OutSpec {
            shape: shape.to_vec(),
            kind: OutKind::Float,
        }
    }

    /// An `int32` output of core shape `shape`.
    pub fn int32(shape: &[usize]) -> OutSpec {
        OutSpec {
            shape: shape.to_vec(),
            kind: OutKind::Int32,
        }
    }
}

/// One core argument as a kernel sees it: contiguous row-major data and its core shape.
#[derive(Clone, Copy)]
pub(crate) struct Core<'a, T> {
    /// Row-major elements.
    pub data: &'a [T],
    /// Core shape (length = the argument's core_ndim).
    pub shape: &'a [usize],
}

impl<'a, T: Real> Core<'a, T> {
    /// Number of elements of one core.
    fn data_len(&self) -> usize {
        self.shape.iter().product()
    }

    /// The core as a matrix: a vector is a column, a scalar a 1×1 matrix.
    pub fn mat(&self) -> MatRef<'a, T> {
        let (r, c) = match *self.shape {
            [r, c] => (r, c),
            [n] => (n, 1),
            _ => (1, 1),
        };
        MatRef::from_row_major_slice(self.data, r, c)
    }
}

/// The floating dtype an op computes in: `float32` when every non-index input is `float32`,
/// else `float64` (integers and booleans are read as `float64`, as NumPy's linalg does).
pub(crate) fn float_dtype(inputs: &[&Tensor], args: &[ArgSpec]) -> DType {
    let all_f32 = inputs
        .iter()
        .enumerate()
        .filter(|(i, _)| !args.get(*i).or(args.last()).is_some_and(|a| a.index))
        .all(|(_, t)| t.dtype() == DType::F32);
    if all_f32 && !inputs.is_empty() {
        DType::F32
    } else {
        DType::F64
    }
}

/// Checks the number of inputs.
pub(crate) fn check_arity(
    op: &'static str,
    inputs: &[&Tensor],
    n: usize,
) -> Result<(), LinalgError> {
    if inputs.len() != n {
        return Err(LinalgError::Arity {
            op,
            expected: n.to_string(),
            got: inputs.len(),
        });
    }
    Ok(())
}

/// Inputs read as `T`, with their broadcast batch shape and per-batch-element offsets.
///
/// An input that is already contiguous and of dtype `T` is borrowed, not copied: for a large
/// batch of tiny matrices that copy costs as much as the factorisations themselves.
pub(crate) struct Batched<'a, T: Clone> {
    op: &'static str,
    /// The broadcast batch shape.
    pub batch: Vec<usize>,
    /// Each input's core shape.
    pub cores: Vec<Vec<usize>>,
    data: Vec<Cow<'a, [T]>>,
    offsets: Vec<Vec<usize>>,
}

impl<'a, T: Real> Batched<'a, T> {
    /// Reads `inputs` (one per `args` entry, or `args[last]` repeated for variadic ops),
    /// checks each has at least its core dimensions, and broadcasts the batch dimensions.
    pub fn new(
        op: &'static str,
        inputs: &[&'a Tensor],
        args: &[ArgSpec],
    ) -> Result<Batched<'a, T>, LinalgError> {
        let mut batch_shapes = Vec::with_capacity(inputs.len());
        let mut cores = Vec::with_capacity(inputs.len());
        let mut data = Vec::with_capacity(inputs.len());
        for (i, t) in inputs.iter().enumerate() {
            let spec = args[i.min(args.len() - 1)];
            if spec.index && !(t.dtype().is_int() || t.dtype().is_bool()) {
                return Err(LinalgError::DType {
                    op,
                    arg: spec.name,
                    expected: "an integer dtype",
                    got: t.dtype(),
                });
            }
            let shape = t.shape();
            if shape.len() < spec.core_ndim {
                return Err(LinalgError::Shape {
                    op,
                    arg: spec.name,
                    expected: format!("at least {} dimension(s)", spec.core_ndim),
                    got: shape.to_vec(),
                });
            }
            let split = shape.len() - spec.core_ndim;
            batch_shapes.push(shape[..split].to_vec());
            cores.push(shape[split..].to_vec());
            let values =
                match t.as_slice::<T>() {
                    Some(borrowed) => Cow::Borrowed(borrowed),
                    None => Cow::Owned(t.cast(T::DTYPE).to_vec::<T>().map_err(|_| {
                        LinalgError::DType {
                            op,
                            arg: spec.name,
                            expected: "a numeric dtype",
                            got: t.dtype(),
                        }
                    })?),
                };
            data.push(values);
        }
        let mut batch: Vec<usize> = Vec::new();
        for b in &batch_shapes {
            batch = broadcast_shapes(&batch, b)
                .map_err(|_| LinalgError::Broadcast {
                    op,
                    shapes: batch_shapes.clone(),
                })?
                .to_vec();
        }
        let mut offsets = Vec::with_capacity(inputs.len());
        for (b, core) in batch_shapes.iter().zip(&cores) {
            let core_numel: usize = core.iter().product();
            let own: Vec<isize> = oxtensor_data::contiguous_strides(b)
                .iter()
                .map(|&s| s * core_numel as isize)
                .collect();
            let strides =
                broadcast_strides(b, &own, &batch).ok_or_else(|| LinalgError::Broadcast {
                    op,
                    shapes: batch_shapes.clone(),
                })?;
            offsets.push(StridedIndex::new(&batch, &strides, 0).collect());
        }
        Ok(Batched {
            op,
            batch,
            cores,
            data,
            offsets,
        })
    }

    /// An error saying input `arg` should have core shape `expected`.
    pub fn shape_error(&self, i: usize, arg: &'static str, expected: &str) -> LinalgError {
        let mut got = self.batch.clone();
        got.extend_from_slice(&self.cores[i]);
        LinalgError::Shape {
            op: self.op,
            arg,
            expected: format!("(..., {expected})"),
            got,
        }
    }

    /// Requires input `i` to be a square matrix and returns its order.
    pub fn square(&self, i: usize, arg: &'static str) -> Result<usize, LinalgError> {
        match self.cores[i][..] {
            [m, n] if m == n => Ok(m),
            _ => Err(self.shape_error(i, arg, "m, m")),
        }
    }

    /// Runs `kernel` on every batch element (in parallel when the batch is large) and
    /// assembles the outputs, each of shape `batch + spec.shape`.
    pub fn run<F>(&self, outs: &[OutSpec], kernel: F) -> Result<Vec<Tensor>, LinalgError>
    where
        F: Fn(&[Core<'_, T>]) -> Result<Vec<Vec<T>>, LinalgError> + Sync,
    {
        let nb: usize = self.batch.iter().product();
        let one = |b: usize| {
            let cores: Vec<Core<'_, T>> = (0..self.data.len())
                .map(|i| {
                    let n: usize = self.cores[i].iter().product();
                    let o = self.offsets[i][b];
                    Core {
                        data: &self.data[i][o..o + n],
                        shape: &self.cores[i],
                    }
                })
                .collect();
            kernel(&cores)
        };
        let work: usize = self.cores.iter().map(|c| c.iter().product::<usize>()).sum();
        let results: Vec<Vec<Vec<T>>> = if nb >= 2 && nb.saturating_mul(work) >= 1 << 14 {
            (0..nb).into_par_iter().map(one).collect::<Result<_, _>>()?
        } else {
            (0..nb).map(one).collect::<Result<_, _>>()?
        };
        let mut tensors = Vec::with_capacity(outs.len());
        for (k, spec) in outs.iter().enumerate() {
            let core_numel: usize = spec.shape.iter().product();
            let mut shape = self.batch.clone();
            shape.extend_from_slice(&spec.shape);
            let mut flat: Vec<T> = Vec::with_capacity(nb * core_numel);
            for r in &results {
                assert_eq!(
                    r[k].len(),
                    core_numel,
                    "{}: kernel output {k} size",
                    self.op
                );
                flat.extend_from_slice(&r[k]);
            }
            let too_large = |_| LinalgError::TooLarge {
                op: self.op,
                shape: shape.clone(),
            };
            let t = match spec.kind {
                OutKind::Float => Tensor::from_slice(&flat, &shape).map_err(too_large)?,
                OutKind::Int32 => {
                    let ints: Vec<i32> = flat.iter().map(|x| x.as_f64() as i32).collect();
                    Tensor::from_slice(&ints, &shape).map_err(too_large)?
                }
            };
            tensors.push(t);
        }
        Ok(tensors)
    }

    /// Runs `kernel` on every batch element, writing each element's one floating-point
    /// output of core shape `out` straight into its slice of the output tensor, so no
    /// per-element vectors or copies are made. `kernel` gets the cores, the element's output
    /// slice (zeroed) and a workspace of `scratch`, allocated once per sequential run or
    /// per parallel chunk rather than once per element. Work is split over threads only when
    /// there is enough of it to pay for the scheduling.
    pub fn run_into<F>(
        &self,
        out: &[usize],
        scratch: StackReq,
        kernel: F,
    ) -> Result<Tensor, LinalgError>
    where
        F: Fn(&[Core<'_, T>], &mut [T], &mut MemStack) -> Result<(), LinalgError> + Sync,
    {
        let mut outs = self.run_into_many(&[out], scratch, |cores, parts, stack| {
            kernel(cores, &mut *parts[0], stack)
        })?;
        outs.pop().ok_or(LinalgError::TooLarge {
            op: self.op,
            shape: self.batch.clone(),
        })
    }
}

impl<T: Real> Batched<'_, T> {
    /// [`Batched::run_into_many`] for outputs of either kind: the kernel writes every
    /// output in the op's float dtype (integer ones as exact whole numbers), and the `int32`
    /// outputs (pivots, permutation indices: small next to the float ones) are converted
    /// after the run, their only copy.
    pub fn run_into_kinds<F>(
        &self,
        outs: &[OutSpec],
        scratch: StackReq,
        kernel: F,
    ) -> Result<Vec<Tensor>, LinalgError>
    where
        F: Fn(&[Core<'_, T>], &mut [&mut [T]], &mut MemStack) -> Result<(), LinalgError> + Sync,
    {
        let shapes: Vec<&[usize]> = outs.iter().map(|o| &o.shape[..]).collect();
        let tensors = self.run_into_many(&shapes, scratch, kernel)?;
        Ok(tensors
            .into_iter()
            .zip(outs)
            .map(|(t, spec)| match spec.kind {
                OutKind::Float => t,
                OutKind::Int32 => t.cast(DType::I32),
            })
            .collect())
    }

    /// Like [`Batched::run_into`] for an op with several floating-point outputs (core shapes
    /// `outs`): `kernel` gets one zeroed slice per output, each the element's part of that
    /// output tensor, and writes its results there, so nothing is collected per element and
    /// copied again.
    pub fn run_into_many<F>(
        &self,
        outs: &[&[usize]],
        scratch: StackReq,
        kernel: F,
    ) -> Result<Vec<Tensor>, LinalgError>
    where
        F: Fn(&[Core<'_, T>], &mut [&mut [T]], &mut MemStack) -> Result<(), LinalgError> + Sync,
    {
        let nb: usize = self.batch.iter().product();
        let numels: Vec<usize> = outs.iter().map(|o| o.iter().product()).collect();
        let mut tensors = Vec::with_capacity(outs.len());
        for out in outs {
            let mut shape = self.batch.clone();
            shape.extend_from_slice(out);
            tensors.push(
                Tensor::zeros(T::DTYPE, &shape).map_err(|_| LinalgError::TooLarge {
                    op: self.op,
                    shape: shape.clone(),
                })?,
            );
        }
        let mut flats: Vec<&mut [T]> = Vec::with_capacity(outs.len());
        for t in tensors.iter_mut() {
            let shape = t.shape().to_vec();
            flats.push(
                t.data_mut::<T>()
                    .ok_or(LinalgError::TooLarge { op: self.op, shape })?,
            );
        }
        // Runs the `count` elements from `first` on, whose outputs `dsts` hold.
        let span = |first: usize, count: usize, dsts: &mut [&mut [T]]| {
            let mut mem = MemBuffer::new(scratch);
            let stack = MemStack::new(&mut mem);
            let mut cores: Vec<Core<'_, T>> = self
                .cores
                .iter()
                .map(|shape| Core { data: &[], shape })
                .collect();
            for k in 0..count {
                let b = first + k;
                for (i, core) in cores.iter_mut().enumerate() {
                    let n = core.data_len();
                    let o = self.offsets[i][b];
                    core.data = &self.data[i][o..o + n];
                }
                let mut parts: SmallVec<[&mut [T]; 4]> = dsts
                    .iter_mut()
                    .zip(&numels)
                    .map(|(d, &c)| &mut d[k * c..(k + 1) * c])
                    .collect();
                kernel(&cores, &mut parts, stack)?;
            }
            Ok(())
        };
        let work: usize = self.cores.iter().map(|c| c.iter().product::<usize>()).sum();
        let per_elem = work.max(numels.iter().sum()).max(1);
        if nb >= 2 && nb.saturating_mul(per_elem) >= 1 << 16 {
            // Chunks of about 2^14 elements of work, as in `run_into`.
            let per = ((1usize << 14) / per_elem).clamp(1, nb);
            let mut chunks: Vec<Vec<&mut [T]>> =
                (0..nb.div_ceil(per)).map(|_| Vec::new()).collect();
            for (flat, &c) in flats.iter_mut().zip(&numels) {
                if c == 0 {
                    // A zero-sized output has no chunks: every element gets an empty slice.
                    chunks.iter_mut().for_each(|chunk| chunk.push(&mut []));
                } else {
                    for (chunk, part) in chunks.iter_mut().zip(flat.chunks_mut(per * c)) {
                        chunk.push(part);
                    }
                }
            }
            chunks
                .into_par_iter()
                .enumerate()
                .try_for_each(|(i, mut dsts)| {
                    let first = i * per;
                    span(first, per.min(nb - first), &mut dsts)
                })?;
        } else {
            span(0, nb, &mut flats)?;
        }
        Ok(tensors)
    }
}

/// A matrix's elements in row-major order.
pub(crate) fn rows<T: Real>(m: MatRef<'_, T>) -> Vec<T> {
    let mut out = vec![T::lit(0.0); m.nrows() * m.ncols()];
    crate::util::write_rows(m, &mut out);
    out
}
