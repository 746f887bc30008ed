//! A host call of a linear algebra node on `float64` or `float32` matrices, batched or not
//! (`cholesky`, `cho_solve`, `solve_triangular`, `solve`, `inv`, `det`,
//! `slogdet`): instead of packing its operands into tensors for `eval_node`, which allocates
//! its outputs and its batch bookkeeping every step, it hands the loop's buffers straight to
//! an [`InPlaceLinalg`] (the interpreter kernel's own per-matrix kernel, with its workspace
//! kept between steps), which writes the results into the loop's output buffers. An operand
//! that is not contiguous (or that the output overlaps) is copied into a buffer kept for it
//! first.

use super::InPlaceOperand;
use crate::staged::Layout;
use oxtensor_data::DType;
use oxtensor_graph::LinalgOp;
use oxtensor_runtime::kernels::{InPlaceLinalg, Real};
use smallvec::SmallVec;
use std::ffi::c_void;

/// The linear algebra node of one host call, run in the loop's buffers.
pub(super) struct LinalgCall {
    kernel: InPlaceLinalg,
    inputs: Vec<InPlaceOperand>,
}

impl LinalgCall {
    /// The call of `op` on operands laid out as `inputs` of dtypes `dtypes`, into outputs
    /// laid out as `outputs`; `None` when [`InPlaceLinalg`] does not take it or the outputs
    /// are not the ones it writes, so the call runs the kernel through `eval_node`.
    pub fn new(
        op: &LinalgOp,
        inputs: &[(&Layout, bool)],
        dtypes: &[DType],
        outputs: &[(Vec<usize>, DType)],
    ) -> Option<LinalgCall> {
        let params: Vec<(DType, &[usize])> = inputs
            .iter()
            .zip(dtypes)
            .map(|((l, _), &d)| (d, l.shape.as_slice()))
            .collect();
        let kernel = InPlaceLinalg::new(op, &params)?;
        let (lens, dtype) = (kernel.out_lens(), kernel.dtype());
        if outputs.len() != lens.len()
            || outputs
                .iter()
                .zip(lens)
                .any(|((shape, d), &n)| *d != dtype || shape.iter().product::<usize>() != n)
        {
            return None;
        }
        let inputs = inputs
            .iter()
            .map(|&(l, contiguous)| InPlaceOperand::new(l, contiguous, dtype.size()))
            .collect();
        Some(LinalgCall { kernel, inputs })
    }

    /// Computes the node from the operands at `ins` into the outputs at `outs`; `None` when
    /// the kernel errors (the loop then ends and the interpreter reports the error).
    ///
    /// # Safety
    /// As [`super::HostCalls::run`]: `ins` holds a pointer per operand addressing its value
    /// (of the kernel's dtype) as laid out at [`Self::new`], `outs` one per output to room
    /// for its elements, contiguous.
    pub unsafe fn run(
        &mut self,
        ins: *const *const c_void,
        outs: *const *mut c_void,
    ) -> Option<()> {
        // SAFETY: forwarded from the caller's contract, in the kernel's element type.
        unsafe {
            match self.kernel.dtype() {
                DType::F32 => self.run_as::<f32>(ins, outs),
                _ => self.run_as::<f64>(ins, outs),
            }
        }
    }

    /// [`Self::run`] with elements of type `T`.
    ///
    /// # Safety
    /// As [`Self::run`], `T` being the element type of the kernel's dtype.
    unsafe fn run_as<T: Real>(
        &mut self,
        ins: *const *const c_void,
        outs: *const *mut c_void,
    ) -> Option<()> {
        let mut out_ptrs: SmallVec<[(*mut T, usize); 2]> = SmallVec::new();
        for (j, &n) in self.kernel.out_lens().iter().enumerate() {
            // SAFETY: `outs` has an entry per output (the caller's contract).
            out_ptrs.push((unsafe { *outs.add(j) }.cast::<T>(), n));
        }
        let overlaps_out = |start: usize, end: usize, skip: Option<usize>| {
            out_ptrs.iter().enumerate().any(|(j, &(p, n))| {
                let (s, e) = (p as usize, p.wrapping_add(n) as usize);
                Some(j) != skip && start < e && s < end
            })
        };
        // Outputs laid out over each other cannot be written as separate slices: the loop
        // then ends and the interpreter runs it (distinct values never do).
        if out_ptrs
            .iter()
            .enumerate()
            .any(|(j, &(p, n))| overlaps_out(p as usize, p.wrapping_add(n) as usize, Some(j)))
        {
            return None;
        }
        let mut args: SmallVec<[&[T]; 3]> = SmallVec::new();
        for (i, op) in self.inputs.iter_mut().enumerate() {
            // SAFETY: `ins` has an entry per operand (the caller's contract).
            let src = unsafe { *ins.add(i) }.cast::<u8>();
            // SAFETY: `src` addresses the operand as laid out at [`Self::new`], aligned for `T`
            // (the caller's contract); only the outputs are written while the slices live, and
            // an operand one overlaps is copied.
            let bytes = unsafe { op.read(src, |start, end| overlaps_out(start, end, None)) };
            // SAFETY: `bytes` holds the operand's elements of `T` (the kernel's dtype), starting
            // aligned for `T` (`InPlaceOperand::read`).
            args.push(unsafe {
                std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size_of::<T>())
            });
        }
        let mut out: SmallVec<[&mut [T]; 2]> = out_ptrs
            .iter()
            // SAFETY: each output's `n` elements are writable (the caller's contract), and
            // overlap neither another output nor an operand slice passed (those were copied).
            .map(|&(p, n)| unsafe { std::slice::from_raw_parts_mut(p, n) })
            .collect();
        self.kernel.run(&args, &mut out).ok()
    }
}
