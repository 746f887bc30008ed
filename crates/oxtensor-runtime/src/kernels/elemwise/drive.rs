//! The loops: a node's inputs as [`Operand`]s, walked block by block (in parallel for large
//! outputs), with one monomorphic closure per call.

use super::layout::Layout;
use super::operand::{Arg, Operand, operand};
use crate::KernelError;
use crate::kernels::PARALLEL_THRESHOLD;
use oxtensor_data::{Element, Tensor};
use oxtensor_graph::TensorType;
use rayon::prelude::*;

/// Output elements computed per step: small enough that the scratch buffers of gathered
/// operands stay in the L1 cache, large enough that the per-block dispatch is negligible.
const BLOCK: usize = 1024;

/// The inputs of one elementwise node, checked and laid out.
pub(super) struct Args<'t> {
    inputs: &'t [&'t Tensor],
    /// Each input's whole storage as a flat view, so loops read it as a plain slice.
    whole: Vec<Tensor>,
    layout: Layout,
}

impl<'t> Args<'t> {
    /// Checks the runtime shapes against each other and the static-1 broadcasting rule.
    pub fn new(inputs: &'t [&'t Tensor], types: &[TensorType]) -> Result<Args<'t>, KernelError> {
        let layout = Layout::new(inputs, types)?;
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

    /// Input `i` as values of type `T`.
    pub fn operand<T: Element>(&self, i: usize) -> Result<Operand<'_, T>, KernelError> {
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

    /// A fresh output whose element at each position is `f` of input 0 there.
    pub fn map1<A: Element, O: Element>(
        &self,
        f: impl Fn(A) -> O + Sync,
    ) -> Result<Tensor, KernelError> {
        let a = self.operand::<A>(0)?;
        Ok(Tensor::build::<O>(self.shape(), |out| {
            drive(out, Vec::new, |buf, start, o| {
                match a.block(start, o.len(), buf) {
                    Arg::Scalar(x) => o.fill(f(x)),
                    Arg::Slice(x) => {
                        for (o, &x) in o.iter_mut().zip(x) {
                            *o = f(x);
                        }
                    }
                }
            })
        })?)
    }

    /// A fresh output of `f` applied to inputs 0 and 1.
    pub fn map2<A: Element, B: Element, O: Element>(
        &self,
        f: impl Fn(A, B) -> O + Sync,
    ) -> Result<Tensor, KernelError> {
        let (a, b) = (self.operand::<A>(0)?, self.operand::<B>(1)?);
        Ok(Tensor::build::<O>(self.shape(), |out| {
            drive(
                out,
                || (Vec::new(), Vec::new()),
                |(ba, bb), start, o| {
                    let n = o.len();
                    apply2(o, a.block(start, n, ba), b.block(start, n, bb), &f)
                },
            )
        })?)
    }

    /// A fresh output of `f` applied to inputs 0, 1 and 2.
    pub fn map3<A: Element, B: Element, C: Element, O: Element>(
        &self,
        f: impl Fn(A, B, C) -> O + Sync,
    ) -> Result<Tensor, KernelError> {
        let (a, b, c) = (
            self.operand::<A>(0)?,
            self.operand::<B>(1)?,
            self.operand::<C>(2)?,
        );
        Ok(Tensor::build::<O>(self.shape(), |out| {
            drive(
                out,
                || (Vec::new(), Vec::new(), Vec::new()),
                |(ba, bb, bc), start, o| {
                    let n = o.len();
                    let x = a.block_slice(start, n, ba);
                    let y = b.block_slice(start, n, bb);
                    let z = c.block_slice(start, n, bc);
                    for (((o, &x), &y), &z) in o.iter_mut().zip(x).zip(y).zip(z) {
                        *o = f(x, y, z);
                    }
                },
            )
        })?)
    }

    /// A fresh output folding all inputs left to right with `f` (`((a ⊕ b) ⊕ c) ⊕ …`), one
    /// pass over memory whatever their number; a single input is converted to `T`.
    pub fn fold<T: Element>(&self, f: impl Fn(T, T) -> T + Sync) -> Result<Tensor, KernelError> {
        if self.len() == 1 {
            return self.map1::<T, T>(|x| x);
        }
        let ops = (0..self.len())
            .map(|i| self.operand::<T>(i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Tensor::build::<T>(self.shape(), |out| {
            drive(
                out,
                || vec![Vec::new(); ops.len()],
                |bufs, start, o| {
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
        })?)
    }

    /// True if `pred` holds for input `i`, converted to `T`, at some output position.
    pub fn any<T: Element>(&self, i: usize, pred: impl Fn(T) -> bool) -> Result<bool, KernelError> {
        let a = self.operand::<T>(i)?;
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
