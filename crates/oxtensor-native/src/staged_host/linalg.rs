//! A host call of a small linear algebra node (`cholesky`, `cho_solve`, `solve_triangular`
//! on `float64` matrices without batch dimensions): instead of packing its operands into
//! tensors for `eval_node`, which allocates its output and its batch bookkeeping every step,
//! it hands the loop's buffers straight to an [`InPlaceLinalg`] (the interpreter kernel's own
//! per-matrix kernel, with its workspace kept between steps), which writes the result into
//! the loop's output buffer. An operand that is not contiguous (or that the output overlaps)
//! is copied into a buffer kept for it first.

use super::copy_to;
use crate::staged::Layout;
use oxtensor_data::DType;
use oxtensor_graph::LinalgOp;
use oxtensor_runtime::kernels::InPlaceLinalg;
use smallvec::SmallVec;
use std::ffi::c_void;

/// One operand: its layout, whether it is C-contiguous, and the buffer it is copied into
/// when it must be.
struct Operand {
    layout: Layout,
    contiguous: bool,
    copy: Vec<f64>,
}

/// The linear algebra node of one host call, run in the loop's buffers.
pub(super) struct LinalgCall {
    kernel: InPlaceLinalg,
    inputs: Vec<Operand>,
}

impl LinalgCall {
    /// The call of `op` on operands laid out as `inputs` of dtypes `dtypes`, into outputs
    /// laid out as `outputs`; `None` when [`InPlaceLinalg`] does not take it or the output is
    /// not the one it writes, so the call runs the kernel through `eval_node`.
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
        let [(shape, DType::F64)] = outputs else {
            return None;
        };
        if shape.iter().product::<usize>() != kernel.out_len() {
            return None;
        }
        let inputs = inputs
            .iter()
            .map(|&(l, contiguous)| Operand {
                layout: l.clone(),
                contiguous,
                copy: vec![0.0; l.shape.iter().product()],
            })
            .collect();
        Some(LinalgCall { kernel, inputs })
    }

    /// Computes the node from the operands at `ins` into the output at `outs`; `None` when
    /// the kernel errors (the loop then ends and the interpreter reports the error).
    ///
    /// # Safety
    /// As [`super::HostCalls::run`]: `ins` holds a pointer per operand addressing its
    /// `float64` value as laid out at [`Self::new`], `outs` one to room for the output's
    /// elements, contiguous.
    pub unsafe fn run(
        &mut self,
        ins: *const *const c_void,
        outs: *const *mut c_void,
    ) -> Option<()> {
        let n_out = self.kernel.out_len();
        // SAFETY: `outs[0]` has room for the output's `n_out` `float64` elements (the
        // caller's contract).
        let out_ptr = unsafe { *outs }.cast::<f64>();
        let out_range = out_ptr as usize..out_ptr.wrapping_add(n_out) as usize;
        let mut args: SmallVec<[&[f64]; 3]> = SmallVec::new();
        for (i, op) in self.inputs.iter_mut().enumerate() {
            // SAFETY: `ins` has an entry per operand (the caller's contract).
            let src = unsafe { *ins.add(i) }.cast::<f64>();
            let len = op.copy.len();
            let end = src.wrapping_add(len) as usize;
            let overlaps = (src as usize) < out_range.end && out_range.start < end;
            if op.contiguous && !overlaps {
                // SAFETY: the operand's `len` elements are contiguous at `src` (its layout
                // is C-contiguous), `float64`, and no output written below overlaps them.
                args.push(unsafe { std::slice::from_raw_parts(src, len) });
            } else {
                // SAFETY: `src` addresses the operand laid out as `op.layout` (the caller's
                // contract); `op.copy` has room for its elements and is our own buffer.
                unsafe {
                    copy_to(
                        src.cast::<u8>(),
                        &op.layout,
                        op.contiguous,
                        op.copy.as_mut_ptr().cast::<u8>(),
                        std::mem::size_of::<f64>(),
                    );
                }
                args.push(&op.copy);
            }
        }
        // SAFETY: the output's `n_out` elements are writable (the caller's contract) and
        // overlap no operand slice passed (those it overlaps were copied above).
        let out = unsafe { std::slice::from_raw_parts_mut(out_ptr, n_out) };
        self.kernel.run(&args, out).ok()
    }
}
