//! The loops: a node's inputs as [`Operand`]s, walked block by block (in parallel for large
//! outputs), with one monomorphic closure per call.

use super::layout::Layout;
use super::operand::{Arg, Operand, operand};
use crate::KernelError;
use crate::kernels::{PARALLEL_THRESHOLD, donor_fits};
use oxtensor_data::{Element, Tensor};
use oxtensor_graph::TensorType;
use rayon::prelude::*;
use std::sync::Arc;

/// Output elements computed per step: small enough that the scratch buffers of gathered
/// operands stay in the L1 cache, large enough that the per-block dispatch is negligible.
const BLOCK: usize = 1024;

/// The inputs of one elementwise node, checked and laid out, and where the output goes.
pub(super) struct Args<'t> {
    inputs: &'t [&'t Tensor],
    /// Each input's whole storage as a flat view, so loops read it as a plain slice (never read
    /// for an input sharing the donor's storage while the output is written).
    whole: Vec<Tensor>,
    layout: Layout,
    /// The input whose buffer the output overwrites, when [`Args::in_place`] accepted one.
    donor: Option<usize>,
}

/// Where a loop writes its output: a fresh tensor, or the buffer of the donor input at this
/// position.
#[derive(Clone, Copy)]
enum Target {
    /// A fresh, zero-filled tensor.
    Fresh,
    /// The donor's buffer.
    Donor(usize),
}

impl<'t> Args<'t> {
    /// Checks the runtime shapes against each other and the static-1 broadcasting rule.
    pub fn new(inputs: &'t [&'t Tensor], types: &[TensorType]) -> Result<Args<'t>, KernelError> {
        Args::build(inputs, types, None)
    }

    /// Like [`Args::new`], but loops write their output into `inputs[donor]`'s buffer when that
    /// is possible: the donor's storage is owned, it is C-contiguous, of the output's shape and (checked per loop) of the loop's output dtype, and every input
    /// sharing its storage is the same view. Otherwise loops write a fresh tensor.
    ///
    /// # Safety
    /// While the returned `Args` lives, nothing but it may read or write the elements of
    /// `inputs[donor]`: no slice or pointer into them may be in use, on this thread or another.
    pub unsafe fn in_place(
        inputs: &'t [&'t Tensor],
        types: &[TensorType],
        donor: usize,
    ) -> Result<Args<'t>, KernelError> {
        Args::build(inputs, types, Some(donor))
    }

    /// [`Args::new`] or [`Args::in_place`]; only `in_place` may pass a donor (whose caller
    /// upholds the contract that [`Args::write`] relies on).
    fn build(
        inputs: &'t [&'t Tensor],
        types: &[TensorType],
        donor: Option<usize>,
    ) -> Result<Args<'t>, KernelError> {
        let layout = Layout::new(inputs, types)?;
        // Decided before `whole` clones the inputs' storage handles.
        let donor = donor.filter(|&k| donor_fits(inputs, &layout.shape, k));
        let whole = inputs
            .iter()
            .map(|t| {
                let cap = t.storage().len() / t.dtype().size();
                t.view(&[cap], &[1], 0)
            })
            .collect::<Result<_, _>>()?;
        Ok(Args {
            inputs,
            whole,
            layout,
            donor,
        })
    }

    /// The output shape.
    pub fn shape(&self) -> &[usize] {
        &self.layout.shape
    }

    /// The number of output elements.
    pub fn numel(&self) -> usize {
        self.layout.numel
    }

    /// The number of inputs.
    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    /// The dtype of input `i`.
    pub fn dtype(&self, i: usize) -> oxtensor_data::DType {
        self.inputs[i].dtype()
    }

    /// Where a loop producing `O` writes: into the donor when its dtype is `O`.
    fn target<O: Element>(&self) -> Target {
        match self.donor {
            Some(k) if self.inputs[k].dtype() == O::DTYPE => Target::Donor(k),
            _ => Target::Fresh,
        }
    }

    /// Input `i` as values of type `T`, for a loop writing to `target`: an input sharing the
    /// donor's storage is read from the output block itself ([`Operand::Output`]), never
    /// through a slice of its storage.
    fn operand<T: Element>(&self, i: usize, target: Target) -> Result<Operand<'_, T>, KernelError> {
        if let Target::Donor(k) = target
            && Arc::ptr_eq(self.inputs[i].storage(), self.inputs[k].storage())
        {
            return Ok(Operand::Output);
        }
        let l = &self.layout;
        operand(
            self.inputs[i],
            &self.whole[i],
            i,
            &l.dims,
            &l.strides[i],
            l.numel,
        )
    }

    /// Runs `fill` on the output's elements (zeroed when fresh, the donor's values when in
    /// place) and returns the output tensor.
    fn write<O: Element>(
        &self,
        target: Target,
        fill: impl FnOnce(&mut [O]),
    ) -> Result<Tensor, KernelError> {
        let Target::Donor(k) = target else {
            return Ok(Tensor::build::<O>(self.shape(), fill)?);
        };
        let donor = self.inputs[k];
        // SAFETY: `Target::Donor` comes only from `donor`, set only by `Args::in_place`, whose
        // caller guarantees that nothing outside this `Args` reads or writes the donor's
        // elements while it lives (the memory plan checks that no other tensor, view or NumPy
        // array holds the storage). `donor_fits` checked that the storage is owned, that the donor
        // is C-contiguous with the output's `numel` elements, and `target` that they are `O`s;
        // they lie inside the storage (a `Tensor` invariant), aligned (owned storage is 64-byte
        // aligned and the offset a whole number of elements), and hold valid `O` values; the
        // pointer derives from the allocation's own pointer (`Storage` keeps it raw, not behind
        // a shared reference to the bytes), so it may be written through. Inside
        // this `Args`, while `out` lives nothing else reads them: operands of inputs sharing the
        // donor's storage are `Operand::Output`, holding no reference and reading through `out`
        // (each parallel block only its own elements), every other operand reads a different
        // allocation, and `whole`'s handle on the donor is read only by `any`, which returns
        // before a loop starts. So `out` is the only reference to this memory while it lives.
        let out = unsafe {
            std::slice::from_raw_parts_mut(donor.data_ptr().cast_mut().cast::<O>(), donor.numel())
        };
        fill(out);
        Ok(donor.clone())
    }

    /// The output (fresh or in the donor) whose element at each position is `f` of input 0
    /// there.
    pub fn map1<A: Element, O: Element>(
        &self,
        f: impl Fn(A) -> O + Sync,
    ) -> Result<Tensor, KernelError> {
        let target = self.target::<O>();
        let a = self.operand::<A>(0, target)?;
        self.write::<O>(target, |out| {
            drive(out, Vec::new, |buf, start, o| {
                a.stage(o, buf);
                match a.block(start, o.len(), buf) {
                    Arg::Scalar(x) => o.fill(f(x)),
                    Arg::Slice(x) => {
                        for (o, &x) in o.iter_mut().zip(x) {
                            *o = f(x);
                        }
                    }
                }
            })
        })
    }

    /// The output of `f` applied to inputs 0 and 1.
    pub fn map2<A: Element, B: Element, O: Element>(
        &self,
        f: impl Fn(A, B) -> O + Sync,
    ) -> Result<Tensor, KernelError> {
        let target = self.target::<O>();
        let (a, b) = (self.operand::<A>(0, target)?, self.operand::<B>(1, target)?);
        self.write::<O>(target, |out| {
            drive(
                out,
                || (Vec::new(), Vec::new()),
                |(ba, bb), start, o| {
                    a.stage(o, ba);
                    b.stage(o, bb);
                    let n = o.len();
                    apply2(o, a.block(start, n, ba), b.block(start, n, bb), &f)
                },
            )
        })
    }

    /// The output of `f` applied to inputs 0, 1 and 2.
    pub fn map3<A: Element, B: Element, C: Element, O: Element>(
        &self,
        f: impl Fn(A, B, C) -> O + Sync,
    ) -> Result<Tensor, KernelError> {
        let target = self.target::<O>();
        let (a, b, c) = (
            self.operand::<A>(0, target)?,
            self.operand::<B>(1, target)?,
            self.operand::<C>(2, target)?,
        );
        self.write::<O>(target, |out| {
            drive(
                out,
                || (Vec::new(), Vec::new(), Vec::new()),
                |(ba, bb, bc), start, o| {
                    a.stage(o, ba);
                    b.stage(o, bb);
                    c.stage(o, bc);
                    let n = o.len();
                    let x = a.block_slice(start, n, ba);
                    let y = b.block_slice(start, n, bb);
                    let z = c.block_slice(start, n, bc);
                    for (((o, &x), &y), &z) in o.iter_mut().zip(x).zip(y).zip(z) {
                        *o = f(x, y, z);
                    }
                },
            )
        })
    }

    /// The output of `f` applied to inputs 0, 1, 2 and 3 (all of one type `A`).
    pub fn map4<A: Element, O: Element>(
        &self,
        f: impl Fn(A, A, A, A) -> O + Sync,
    ) -> Result<Tensor, KernelError> {
        let target = self.target::<O>();
        let ops = [
            self.operand::<A>(0, target)?,
            self.operand::<A>(1, target)?,
            self.operand::<A>(2, target)?,
            self.operand::<A>(3, target)?,
        ];
        self.write::<O>(target, |out| {
            drive(
                out,
                || [Vec::new(), Vec::new(), Vec::new(), Vec::new()],
                |bufs, start, o| {
                    for (op, buf) in ops.iter().zip(bufs.iter_mut()) {
                        op.stage(o, buf);
                    }
                    let n = o.len();
                    let [b0, b1, b2, b3] = bufs;
                    let w = ops[0].block_slice(start, n, b0);
                    let x = ops[1].block_slice(start, n, b1);
                    let y = ops[2].block_slice(start, n, b2);
                    let z = ops[3].block_slice(start, n, b3);
                    for ((((o, &w), &x), &y), &z) in o.iter_mut().zip(w).zip(x).zip(y).zip(z) {
                        *o = f(w, x, y, z);
                    }
                },
            )
        })
    }

    /// The output folding all inputs left to right with `f` (`((a ⊕ b) ⊕ c) ⊕ …`), one pass
    /// over memory whatever their number; a single input is converted to `T`.
    pub fn fold<T: Element>(&self, f: impl Fn(T, T) -> T + Sync) -> Result<Tensor, KernelError> {
        if self.len() == 1 {
            return self.map1::<T, T>(|x| x);
        }
        let target = self.target::<T>();
        let ops = (0..self.len())
            .map(|i| self.operand::<T>(i, target))
            .collect::<Result<Vec<_>, _>>()?;
        self.write::<T>(target, |out| {
            drive(
                out,
                || vec![Vec::new(); ops.len()],
                |bufs, start, o| {
                    // Every input is read before the block's first write.
                    for (op, buf) in ops.iter().zip(bufs.iter_mut()) {
                        op.stage(o, buf);
                    }
                    let n = o.len();
                    let mut args = ops
                        .iter()
                        .zip(bufs.iter_mut())
                        .map(|(op, buf)| op.block(start, n, buf));
                    if let (Some(x), Some(y)) = (args.next(), args.next()) {
                        apply2(o, x, y, &f);
                    }
                    for arg in args {
                        match arg {
                            Arg::Scalar(y) => {
                                for o in o.iter_mut() {
                                    *o = f(*o, y);
                                }
                            }
                            Arg::Slice(y) => {
                                for (o, &y) in o.iter_mut().zip(y) {
                                    *o = f(*o, y);
                                }
                            }
                        }
                    }
                },
            )
        })
    }

    /// True if `pred` holds for input `i`, converted to `T`, at some output position.
    ///
    /// Reads the input itself (the donor too), so it must run before a loop writes the output.
    pub fn any<T: Element>(&self, i: usize, pred: impl Fn(T) -> bool) -> Result<bool, KernelError> {
        let a = self.operand::<T>(i, Target::Fresh)?;
        let mut buf = Vec::new();
        for start in (0..self.numel()).step_by(BLOCK) {
            let found = match a.block(start, BLOCK.min(self.numel() - start), &mut buf) {
                Arg::Scalar(x) => pred(x),
                Arg::Slice(x) => x.iter().any(|&x| pred(x)),
            };
            if found {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// `o[k] = f(x[k], y[k])` over one block, with a loop for each combination of scalar and
/// slice operands so that each is a plain slice loop the compiler vectorises.
#[inline(always)]
fn apply2<A: Copy, B: Copy, O: Copy>(
    o: &mut [O],
    x: Arg<'_, A>,
    y: Arg<'_, B>,
    f: &impl Fn(A, B) -> O,
) {
    let n = o.len();
    match (x, y) {
        (Arg::Slice(x), Arg::Slice(y)) => {
            let (x, y) = (&x[..n], &y[..n]);
            for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                *o = f(x, y);
            }
        }
        (Arg::Slice(x), Arg::Scalar(y)) => {
            for (o, &x) in o.iter_mut().zip(&x[..n]) {
                *o = f(x, y);
            }
        }
        (Arg::Scalar(x), Arg::Slice(y)) => {
            for (o, &y) in o.iter_mut().zip(&y[..n]) {
                *o = f(x, y);
            }
        }
        (Arg::Scalar(x), Arg::Scalar(y)) => o.fill(f(x, y)),
    }
}

/// Runs `body(state, start, block)` over consecutive blocks of `out` (`start` being the flat
/// position of the block's first element), splitting the work across rayon's threads when
/// `out` is larger than [`PARALLEL_THRESHOLD`]. Each thread's task makes its own `state` (the
/// scratch buffers) with `init`.
fn drive<O: Element, S>(
    out: &mut [O],
    init: impl Fn() -> S + Sync,
    body: impl Fn(&mut S, usize, &mut [O]) + Sync,
) {
    let run = |first: usize, chunk: &mut [O]| {
        let mut state = init();
        for (k, block) in chunk.chunks_mut(BLOCK).enumerate() {
            body(&mut state, first + k * BLOCK, block);
        }
    };
    let threads = rayon::current_num_threads();
    if out.len() > PARALLEL_THRESHOLD && threads > 1 {
        // A few tasks per thread balances uneven progress; each covers whole blocks.
        let task = out
            .len()
            .div_ceil(threads * 4)
            .max(PARALLEL_THRESHOLD / 4)
            .next_multiple_of(BLOCK);
        out.par_chunks_mut(task)
            .enumerate()
            .for_each(|(k, chunk)| run(k * task, chunk));
    } else {
        run(0, out);
    }
}
