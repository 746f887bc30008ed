//! A host call of a random draw of a scalar distribution, a categorical, a beta-binomial, a
//! Dirichlet, a multinomial, a multivariate normal, a permutation or a choice without
//! replacement: instead of packing its operands into tensors for
//! `eval_node`, it reads the generator's words and the parameters straight from the loop's
//! buffers into an [`InPlaceDraws`] (the interpreter kernel's own drawing loops, with their
//! buffers kept between steps) and writes the next generator and the draws into the loop's
//! buffers, allocating nothing per step.

use crate::staged::Layout;
use oxtensor_data::{DType, Element, dispatch_dtype};
use oxtensor_graph::random::{RNG_WORDS, RandomOp};
use oxtensor_runtime::kernels::random::InPlaceDraws;
use std::ffi::c_void;

/// One operand read element by element: its dtype and, per dimension of the draw's batch
/// shape, its extent and stride (0 along a broadcast dimension), in elements.
struct Operand {
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
}

/// The draw of one host call whose node is a [`RandomOp`] that [`InPlaceDraws`] takes.
pub(super) struct DrawCall {
    draws: InPlaceDraws,
    rng: Operand,
    size: Operand,
    params: Vec<Operand>,
    /// A parameter's first element alone (for one that has a single element).
    scalar: Operand,
    draw_dtype: DType,
    words: [u64; RNG_WORDS],
    size_values: Vec<i64>,
}

/// The most dimensions of an operand a draw reads.
const MAX_RANK: usize = 8;

impl DrawCall {
    /// The draw of `r` on operands laid out as `inputs` (the generator, `size`, then the
    /// parameters) of dtypes `dtypes`, into outputs laid out as `outputs` (the generator,
    /// then the draw); `None` when [`InPlaceDraws`] does not take it or the layouts are not
    /// those of a draw, so the call runs the kernel through `eval_node`.
    pub fn new(
        r: RandomOp,
        inputs: &[&Layout],
        dtypes: &[DType],
        outputs: &[(Vec<usize>, DType)],
    ) -> Option<DrawCall> {
        let [(rng_shape, DType::U64), (shape, draw_dtype)] = outputs else {
            return None;
        };
        // A vector-valued draw's last dimension is its support; the rest is the batch shape.
        let batch = &shape[..shape.len().checked_sub(r.dist.support_ndim())?];
        if rng_shape.as_slice() != [RNG_WORDS]
            || *draw_dtype != r.dtype
            || inputs.len() != dtypes.len()
            || inputs.len() < 2
            || dtypes[0] != DType::U64
            || inputs[0].shape.as_slice() != [RNG_WORDS]
            || batch.len() > MAX_RANK
        {
            return None;
        }
        let params: Vec<(DType, &[usize])> = inputs[2..]
            .iter()
            .zip(&dtypes[2..])
            .map(|(l, &d)| (d, l.shape.as_slice()))
            .collect();
        let draws = InPlaceDraws::new(r, &params, batch)?;
        if draws.count() != shape.iter().product::<usize>() {
            return None;
        }
        let size = Operand {
            dtype: dtypes[1],
            shape: inputs[1].shape.clone(),
            strides: inputs[1].strides.clone(),
        };
        if !size.dtype.is_int() || size.shape.len() > 1 {
            return None;
        }
        let params = inputs[2..]
            .iter()
            .zip(&dtypes[2..])
            .enumerate()
            .map(|(k, (l, &dtype))| {
                if draws.reads_whole_params() {
                    broadcast(l, &[], l.shape.len(), dtype)
                } else {
                    broadcast(l, batch, r.dist.param_core_ndims(k), dtype)
                }
            })
            .collect::<Option<Vec<_>>>()?;
        Some(DrawCall {
            draws,
            rng: Operand {
                dtype: DType::U64,
                shape: inputs[0].shape.clone(),
                strides: inputs[0].strides.clone(),
            },
            scalar: Operand {
                dtype: DType::F64,
                shape: Vec::new(),
                strides: Vec::new(),
            },
            size_values: vec![0; size.shape.iter().product()],
            size,
            params,
            draw_dtype: *draw_dtype,
            words: [0; RNG_WORDS],
        })
    }

    /// Draws from the operands at `ins` into the outputs at `outs`; `None` when the kernel
    /// errors (the loop then ends and the interpreter reports the error).
    ///
    /// # Safety
    /// As [`super::HostCalls::run`]: `ins` holds a pointer per operand addressing its value as
    /// laid out at [`Self::new`], `outs` one per output with room for its elements.
    pub unsafe fn run(
        &mut self,
        ins: *const *const c_void,
        outs: *const *mut c_void,
    ) -> Option<()> {
        // SAFETY: `ins` has a pointer per operand, each addressing its value as laid out
        // (the caller's contract); the generator is RNG_WORDS `uint64` words.
        unsafe {
            for (w, v) in self
                .words
                .iter_mut()
                .zip(Elements::<u64>::new(*ins, &self.rng))
            {
                *w = v;
            }
            let src = *ins.add(1);
            let size_values = &mut self.size_values;
            dispatch_dtype!(self.size.dtype, S => {
                for (o, v) in size_values.iter_mut().zip(Elements::<S>::new(src, &self.size)) {
                    *o = i64::cast_from(v);
                }
            });
        }
        for (k, p) in self.params.iter().enumerate() {
            // A parameter with one element serves every batch element: it is read once.
            let operand = if self.draws.param_len(k) == 1 {
                &self.scalar
            } else {
                p
            };
            // SAFETY: operand `2 + k` is parameter `k`, whose elements `p` addresses (its
            // strides broadcast to the batch shape, 0 where it repeats), and whose first
            // element `self.scalar` addresses.
            unsafe {
                let src = *ins.add(2 + k);
                dispatch_dtype!(p.dtype, S => {
                    self.draws.load_param(k, Elements::<S>::new(src, operand));
                });
            }
        }
        let next = self.draws.draw(&self.words, &self.size_values).ok()?;
        // SAFETY: `outs[0]` has room for the RNG_WORDS `uint64` words of the next generator
        // and `outs[1]` for the draws, contiguous, of the draw's dtype (the caller's
        // contract; the layouts were checked at `new`).
        unsafe {
            std::ptr::copy_nonoverlapping(next.as_ptr(), (*outs).cast::<u64>(), RNG_WORDS);
            let n = self.draws.count();
            dispatch_dtype!(self.draw_dtype, T => {
                let out = std::slice::from_raw_parts_mut((*outs.add(1)).cast::<T>(), n);
                self.draws.write(out);
            });
        }
        Some(())
    }
}

/// Operand `l`, whose last `core` dimensions are its core (a categorical's probabilities),
/// broadcast to the batch shape `batch` (right-aligned, stride 0 along its batch extents of 1
/// and the batch's leading dimensions it lacks), its core read whole after each batch element.
fn broadcast(l: &Layout, batch: &[usize], core: usize, dtype: DType) -> Option<Operand> {
    let split = l.shape.len().checked_sub(core)?;
    let lead = batch.len().checked_sub(split)?;
    if batch.len() + core > MAX_RANK {
        return None;
    }
    let mut strides = vec![0isize; batch.len()];
    for (i, (&e, &s)) in l.shape[..split].iter().zip(&l.strides).enumerate() {
        if e != 1 {
            if e != batch[lead + i] {
                return None;
            }
            strides[lead + i] = s;
        }
    }
    let mut shape = batch.to_vec();
    shape.extend_from_slice(&l.shape[split..]);
    strides.extend_from_slice(&l.strides[split..]);
    Some(Operand {
        dtype,
        shape,
        strides,
    })
}

/// The elements of an operand in C order, read from the loop's buffer.
struct Elements<'a, S> {
    src: *const S,
    o: &'a Operand,
    index: [usize; MAX_RANK],
    offset: isize,
    left: usize,
}

impl<'a, S: Element> Elements<'a, S> {
    /// The elements of the operand at `src` laid out as `o`.
    ///
    /// # Safety
    /// Every element of `o` (offset `Σ iₖ·strideₖ` elements from `src`) is readable, of type
    /// `S`, which is `o`'s dtype, while the iterator lives; `o` has at most [`MAX_RANK`]
    /// dimensions.
    unsafe fn new(src: *const c_void, o: &'a Operand) -> Elements<'a, S> {
        let left = if o.shape.len() > MAX_RANK {
            0
        } else {
            o.shape.iter().product()
        };
        Elements {
            src: src.cast::<S>(),
            o,
            index: [0; MAX_RANK],
            offset: 0,
            left,
        }
    }
}

impl<S: Element> Iterator for Elements<'_, S> {
    type Item = S;

    fn next(&mut self) -> Option<S> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // SAFETY: `offset` addresses an element of the operand (the contract of `new`).
        let v = unsafe { *self.src.offset(self.offset) };
        let o = self.o;
        for d in (0..o.shape.len()).rev() {
            self.index[d] += 1;
            self.offset += o.strides[d];
            if self.index[d] < o.shape[d] {
                break;
            }
            self.offset -= o.strides[d] * o.shape[d] as isize;
            self.index[d] = 0;
        }
        Some(v)
    }
}
