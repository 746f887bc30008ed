//! A host call of an arg-reduction (a Viterbi step's `argmax`), a `cumsum`/`cumprod`, a
//! `sort`/`argsort` or a `MakeVector`: instead of packing its operands into tensors for
//! `eval_node`, which allocates its output every step, it hands the loop's buffers straight
//! to an [`InPlaceExtra`] (the interpreter kernel's own per-element code, with its index
//! buffers kept between steps), which writes the result into the loop's output buffer. An
//! operand that is not contiguous (or that the output overlaps) is copied into a buffer kept
//! for it first.

use super::InPlaceOperand;
use crate::staged::Layout;
use oxtensor_data::DType;
use oxtensor_graph::Op;
use oxtensor_runtime::kernels::InPlaceExtra;
use smallvec::SmallVec;
use std::ffi::c_void;

/// The node of one host call, run in the loop's buffers.
pub(super) struct ExtraCall {
    kernel: InPlaceExtra,
    inputs: Vec<InPlaceOperand>,
    out_bytes: usize,
}

impl ExtraCall {
    /// The call of `op` on operands laid out as `inputs` of dtypes `dtypes`, into outputs
    /// laid out as `outputs`; `None` when [`InPlaceExtra`] does not take it or the output is
    /// not the one it writes, so the call runs the kernel through `eval_node`.
    pub fn new(
        op: &Op,
        inputs: &[(&Layout, bool)],
        dtypes: &[DType],
        outputs: &[(Vec<usize>, DType)],
    ) -> Option<ExtraCall> {
        let params: Vec<(DType, &[usize])> = inputs
            .iter()
            .zip(dtypes)
            .map(|((l, _), &d)| (d, l.shape.as_slice()))
            .collect();
        let kernel = InPlaceExtra::new(op, &params)?;
        let (dtype, n) = kernel.output();
        let [(shape, out_dtype)] = outputs else {
            return None;
        };
        if *out_dtype != dtype || shape.iter().product::<usize>() != n {
            return None;
        }
        let inputs = inputs
            .iter()
            .zip(dtypes)
            .map(|(&(l, contiguous), d)| InPlaceOperand::new(l, contiguous, d.size()))
            .collect();
        Some(ExtraCall {
            kernel,
            inputs,
            out_bytes: n * dtype.size(),
        })
    }

    /// Computes the node from the operands at `ins` into the output at `outs`; `None` when
    /// the kernel errors (the loop then ends and the interpreter reports the error).
    ///
    /// # Safety
    /// As [`super::HostCalls::run`]: `ins` holds a pointer per operand addressing its value as
    /// laid out at [`Self::new`], of its dtype, `outs` one to room for the output's elements,
    /// contiguous, of its dtype.
    pub unsafe fn run(
        &mut self,
        ins: *const *const c_void,
        outs: *const *mut c_void,
    ) -> Option<()> {
        // SAFETY: `outs` has an entry for the output (the caller's contract).
        let out = unsafe { *outs }.cast::<u8>();
        let (out_start, out_end) = (out as usize, out.wrapping_add(self.out_bytes) as usize);
        let mut args: SmallVec<[&[u8]; 4]> = SmallVec::new();
        for (i, op) in self.inputs.iter_mut().enumerate() {
            // SAFETY: `ins` has an entry per operand (the caller's contract).
            let src = unsafe { *ins.add(i) }.cast::<u8>();
            // SAFETY: `src` addresses the operand as laid out at [`Self::new`], aligned for its
            // dtype (the caller's contract); only the output is written while the slices
            // live, and an operand it overlaps is copied.
            args.push(unsafe { op.read(src, |start, end| end > out_start && out_end > start) });
        }
        let out: &mut [u8] = if self.out_bytes == 0 {
            &mut []
        } else {
            // SAFETY: the output's `out_bytes` bytes are writable (the caller's contract) and
            // overlap no operand slice passed (those were copied).
            unsafe { std::slice::from_raw_parts_mut(out, self.out_bytes) }
        };
        self.kernel.run(&args, out).ok()
    }
}
