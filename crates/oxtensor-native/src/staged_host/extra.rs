//! A host call of an arg-reduction (a Viterbi step's `argmax`), a `cumsum`/`cumprod`, a
//! `sort`/`argsort` or a `MakeVector`: instead of packing its operands into tensors for
//! `eval_node`, which allocates its output every step, it hands the loop's buffers straight
//! to an [`InPlaceExtra`] (the interpreter kernel's own per-element code, with its index
//! buffers kept between steps), which writes the result into the loop's output buffer. An
//! operand that is not contiguous (or that the output overlaps) is copied into a buffer kept
//! for it first.

use super::copy_to;
use crate::staged::Layout;
use oxtensor_data::DType;
use oxtensor_graph::Op;
use oxtensor_runtime::kernels::InPlaceExtra;
use smallvec::SmallVec;
use std::ffi::c_void;

/// One operand: its layout, whether it is C-contiguous, the size of its elements and of the
/// whole value in bytes, and the buffer it is copied into when it must be (`u64` words, so
/// aligned for every dtype).
struct Operand {
    layout: Layout,
    contiguous: bool,
    size: usize,
    bytes: usize,
    copy: Vec<u64>,
}

/// The node of one host call, run in the loop's buffers.
pub(super) struct ExtraCall {
    kernel: InPlaceExtra,
    inputs: Vec<Operand>,
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
            .map(|(&(l, contiguous), d)| {
                let bytes = l.shape.iter().product::<usize>() * d.size();
                Operand {
                    layout: l.clone(),
                    contiguous,
                    size: d.size(),
                    bytes,
                    copy: vec![0; bytes.div_ceil(8)],
                }
            })
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
            let (start, end) = (src as usize, src.wrapping_add(op.bytes) as usize);
            if op.bytes == 0 {
                args.push(&[]);
            } else if op.contiguous && (end <= out_start || out_end <= start) {
                // SAFETY: the operand's `bytes` bytes are contiguous at `src` (its layout is
                // C-contiguous), of its dtype, and the output written below does not overlap
                // them.
                args.push(unsafe { std::slice::from_raw_parts(src, op.bytes) });
            } else {
                let dst = op.copy.as_mut_ptr().cast::<u8>();
                // SAFETY: `src` addresses the operand laid out as `op.layout` (the caller's
                // contract), of elements of `size` bytes; `op.copy` has room for its `bytes`
                // bytes and is our own buffer.
                unsafe { copy_to(src, &op.layout, op.contiguous, dst, op.size) };
                // SAFETY: `op.copy` holds at least `bytes` initialised bytes (u64 words), which
                // the slice borrows.
                args.push(unsafe { std::slice::from_raw_parts(dst, op.bytes) });
            }
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
