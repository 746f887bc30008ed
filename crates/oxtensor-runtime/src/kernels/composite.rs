//! The interpreter's kernel for `Op::Composite`: the inner scalar program run in one pass over
//! blocks of output elements.
//!
//! The output's iteration space is split into blocks of about [`BLOCK`] elements that are
//! contiguous runs of the (C-contiguous) outputs. For each block, every input is a strided view
//! of its own storage (broadcast dimensions have extent 1 and stride 0: nothing is copied or
//! materialized), the inner nodes are evaluated in order on block-sized temporaries with the
//! elementwise kernel ([`super::elemwise::elemwise`], so every op has exactly its `Elemwise`
//! semantics, dtype rules and errors), and the inner outputs are copied into the outputs.
//! Temporaries are dropped after their last use, so the working set stays in cache; blocks
//! run in parallel when the output has more than [`super::PARALLEL_THRESHOLD`] elements.
//!
//! A `Reduce` of a Composite is fused in [`super::composite_reduce`], which evaluates the same
//! [`Program`] block by block with [`run_block`] and reduces each block as it is computed.

use super::elemwise::elemwise;
use super::{KernelCtx, PARALLEL_THRESHOLD, donor_fits};
use crate::KernelError;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FrozenGraph, NodeKind, Op, ScalarOp, TensorType, Var, toposort};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Output elements per block: the temporaries of a block (a few per live inner value) stay in
/// the L2 cache, while the per-block dispatch of each inner op is amortized.
pub(in crate::kernels) const BLOCK: usize = 4096;

/// A block value and the static type it is checked against.
pub(in crate::kernels) type Value = (Tensor, TensorType);

/// Where an inner value comes from.
#[derive(Clone, Copy)]
enum Slot {
    /// The block of input `i`.
    Input(usize),
    /// Inner constant `i` (0-d).
    Const(usize),
    /// The result of step `i`.
    Step(usize),
}

/// One inner node: a scalar op over earlier slots.
struct Step {
    op: ScalarOp,
    args: Vec<Slot>,
    dtype: DType,
    /// The last step reading the result (`usize::MAX` for an output): it is dropped after it.
    last_use: usize,
}

/// The inner graph flattened into steps.
pub(in crate::kernels) struct Program {
    consts: Vec<Tensor>,
    steps: Vec<Step>,
    outputs: Vec<Slot>,
}

impl Program {
    fn new(g: &FrozenGraph) -> Result<Program, KernelError> {
        Program::of_outputs(g.outputs())
    }

    /// The program computing `outputs`, inner variables of a frozen graph: only the inner
    /// nodes they depend on become steps.
    pub(in crate::kernels) fn of_outputs(outputs: &[Var]) -> Result<Program, KernelError> {
        let mut slots: FxHashMap<Var, Slot> = FxHashMap::default();
        let mut consts = Vec::new();
        let mut steps: Vec<Step> = Vec::new();
        let mut slot_of =
            |v: &Var, slots: &mut FxHashMap<Var, Slot>| -> Result<Slot, KernelError> {
                if let Some(&s) = slots.get(v) {
                    return Ok(s);
                }
                let s = match v.node().kind() {
                    NodeKind::Placeholder(i) => Slot::Input(*i),
                    NodeKind::Constant(c) => {
                        consts.push(c.clone());
                        Slot::Const(consts.len() - 1)
                    }
                    _ => {
                        return Err(KernelError::Value(format!(
                            "Composite: inner graph reads {}, which is not an input",
                            v.describe()
                        )));
                    }
                };
                slots.insert(v.clone(), s);
                Ok(s)
            };
        for node in toposort(outputs) {
            let Some(Op::Elemwise(op)) = node.op() else {
                return Err(KernelError::Value(
                    "Composite: inner graphs may only hold elementwise ops".into(),
                ));
            };
            let args = node
                .inputs()
                .iter()
                .map(|v| slot_of(v, &mut slots))
                .collect::<Result<Vec<_>, _>>()?;
            let k = steps.len();
            for a in &args {
                if let Slot::Step(j) = *a {
                    steps[j].last_use = k;
                }
            }
            steps.push(Step {
                op: *op,
                args,
                dtype: node.types()[0].dtype,
                last_use: k,
            });
            slots.insert(Var::output_of(&node, 0), Slot::Step(k));
        }
        let outputs = outputs
            .iter()
            .map(|o| slot_of(o, &mut slots))
            .collect::<Result<Vec<_>, _>>()?;
        for o in &outputs {
            if let Slot::Step(j) = *o {
                steps[j].last_use = usize::MAX;
            }
        }
        Ok(Program {
            consts,
            steps,
            outputs,
        })
    }

    /// The program of one elementwise op over inputs `0..n_inputs`, with output dtype `dtype`.
    pub(in crate::kernels) fn single(op: ScalarOp, n_inputs: usize, dtype: DType) -> Program {
        Program {
            consts: Vec::new(),
            steps: vec![Step {
                op,
                args: (0..n_inputs).map(Slot::Input).collect(),
                dtype,
                last_use: usize::MAX,
            }],
            outputs: vec![Slot::Step(0)],
        }
    }

    /// The number of steps that can fail on their data: integer `power`s, which reject
    /// negative exponents. Other steps fail only on types, which type inference has checked.
    pub(in crate::kernels) fn fallible_steps(&self) -> usize {
        self.steps
            .iter()
            .filter(|s| s.op == ScalarOp::Pow && !s.dtype.is_float())
            .count()
    }
}

/// The output shape and the merged walk over it: dimensions of extent 1 dropped, adjacent
/// dimensions merged where every input allows it, and each input's element strides (0 where it
/// is broadcast).
struct Walk {
    shape: Vec<usize>,
    dims: Vec<usize>,
    strides: Vec<Vec<isize>>,
}

impl Walk {
    fn new(inputs: &[&Tensor], types: &[TensorType], ndim: usize) -> Result<Walk, KernelError> {
        if let Some((i, t)) = inputs.iter().enumerate().find(|(_, t)| t.ndim() != ndim) {
            return Err(KernelError::Shape(format!(
                "Composite: input {i} has shape {:?} but the output has rank {ndim}",
                t.shape()
            )));
        }
        let stretches = |i: usize, d: usize| {
            inputs[i].shape()[d] == 1
                && types.get(i).and_then(|t| t.shape.get(d).copied().flatten()) == Some(1)
        };
        let mut shape = vec![1; ndim];
        for (d, extent) in shape.iter_mut().enumerate() {
            let mut fixed: Option<(usize, usize)> = None;
            for i in (0..inputs.len()).filter(|&i| !stretches(i, d)) {
                let e = inputs[i].shape()[d];
                match fixed {
                    None => fixed = Some((i, e)),
                    Some((j, f)) if f != e => {
                        return Err(KernelError::Shape(format!(
                            "Composite: input {j} has shape {:?} but input {i} has shape {:?}: \
                             dimension {d} does not match (only a dimension of static extent \
                             1 broadcasts)",
                            inputs[j].shape(),
                            inputs[i].shape()
                        )));
                    }
                    Some(_) => {}
                }
            }
            *extent = fixed.map_or(1, |(_, e)| e);
        }
        let mut dims: Vec<usize> = Vec::new();
        let mut strides: Vec<Vec<isize>> = vec![Vec::new(); inputs.len()];
        for d in (0..ndim).filter(|&d| shape[d] != 1) {
            let s: Vec<isize> = (0..inputs.len())
                .map(|i| {
                    if inputs[i].shape()[d] == 1 {
                        0
                    } else {
                        inputs[i].strides()[d]
                    }
                })
                .collect();
            let merge = !dims.is_empty()
                && strides
                    .iter()
                    .zip(&s)
                    .all(|(prev, &si)| prev.last().is_some_and(|&p| p == si * shape[d] as isize));
            if merge {
                if let Some(last) = dims.last_mut() {
                    *last *= shape[d];
                }
                for (prev, si) in strides.iter_mut().zip(s) {
                    if let Some(p) = prev.last_mut() {
                        *p = si;
                    }
                }
            } else {
                dims.push(shape[d]);
                for (prev, si) in strides.iter_mut().zip(s) {
                    prev.push(si);
                }
            }
        }
        if dims.is_empty() {
            dims.push(1);
            for s in &mut strides {
                s.push(0);
            }
        }
        Ok(Walk {
            shape,
            dims,
            strides,
        })
    }
}

/// How the walk is cut into blocks: a chunk of `chunk` indices along dimension `k` times all
/// dimensions after it, for every index of the dimensions before it.
struct Blocks {
    k: usize,
    chunk: usize,
    per_outer: usize,
    inner: usize,
    count: usize,
}

impl Blocks {
    fn new(dims: &[usize]) -> Blocks {
        let mut k = dims.len() - 1;
        let mut inner = 1;
        while k > 0 && inner * dims[k] <= BLOCK {
            inner *= dims[k];
            k -= 1;
        }
        // `inner` is the product of the dimensions after `k`; it may exceed BLOCK only when k
        // is the last dimension (inner = 1), so a chunk is at least one row.
        let chunk = (BLOCK / inner).clamp(1, dims[k]);
        let per_outer = dims[k].div_ceil(chunk);
        let outer: usize = dims[..k].iter().product();
        Blocks {
            k,
            chunk,
            per_outer,
            inner,
            count: outer * per_outer,
        }
    }
}

/// One block: its shape (the walk's dimensions from `k` on) and each input's view of it.
fn block_views(
    walk: &Walk,
    blocks: &Blocks,
    b: usize,
    inputs: &[&Tensor],
) -> Result<(Vec<usize>, Vec<Value>), KernelError> {
    let (k, dims) = (blocks.k, &walk.dims);
    let (mut o, ch) = (b / blocks.per_outer, b % blocks.per_outer);
    let start = ch * blocks.chunk;
    let mut shape = vec![blocks.chunk.min(dims[k] - start)];
    shape.extend_from_slice(&dims[k + 1..]);
    let mut outer_idx = vec![0; k];
    for d in (0..k).rev() {
        outer_idx[d] = o % dims[d];
        o /= dims[d];
    }
    let views = inputs
        .iter()
        .zip(&walk.strides)
        .map(|(t, st)| {
            let mut offset = t.offset() as isize + start as isize * st[k];
            for (d, &i) in outer_idx.iter().enumerate() {
                offset += i as isize * st[d];
            }
            let vshape: Vec<usize> = shape
                .iter()
                .zip(&st[k..])
                .map(|(&e, &s)| if s == 0 { 1 } else { e })
                .collect();
            let ty = TensorType::new(
                t.dtype(),
                &vshape
                    .iter()
                    .zip(&st[k..])
                    .map(|(&e, &s)| (s == 0 || e == 1).then_some(1))
                    .collect::<Vec<_>>(),
            );
            let offset = usize::try_from(offset)
                .map_err(|_| KernelError::Index("Composite: negative block offset".into()))?;
            Ok((t.view(&vshape, &st[k..], offset)?, ty))
        })
        .collect::<Result<Vec<_>, KernelError>>()?;
    Ok((shape, views))
}

/// The static type of a block temporary: extent 1 is declared where the value has it (every
/// block value broadcasts against the block's shape, which the whole call was checked for).
fn block_type(t: &Tensor) -> TensorType {
    let shape: Vec<Option<usize>> = t.shape().iter().map(|&e| (e == 1).then_some(1)).collect();
    TensorType::new(t.dtype(), &shape)
}

/// Evaluates the program on one block; returns one contiguous block-shaped tensor per output.
pub(in crate::kernels) fn run_block(
    p: &Program,
    shape: &[usize],
    views: &[Value],
) -> Result<Vec<Tensor>, KernelError> {
    let rank = shape.len();
    let consts: Vec<Value> = p
        .consts
        .iter()
        .map(|c| {
            let t = c.reshape(&vec![1; rank])?;
            let ty = block_type(&t);
            Ok((t, ty))
        })
        .collect::<Result<_, KernelError>>()?;
    let mut values: Vec<Option<Value>> = Vec::with_capacity(p.steps.len());
    let get = |values: &[Option<Value>], s: Slot| -> Option<Value> {
        match s {
            Slot::Input(i) => views.get(i).cloned(),
            Slot::Const(i) => consts.get(i).cloned(),
            Slot::Step(i) => values.get(i).cloned().flatten(),
        }
    };
    let missing = || KernelError::Value("Composite: inner value used after release".into());
    for (k, step) in p.steps.iter().enumerate() {
        let args = step
            .args
            .iter()
            .map(|&s| get(&values, s).ok_or_else(missing))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&Tensor> = args.iter().map(|a| &a.0).collect();
        let types: Vec<TensorType> = args.iter().map(|a| a.1.clone()).collect();
        let out_ty = [TensorType::new(step.dtype, &vec![None; rank])];
        let ctx = KernelCtx {
            input_types: &types,
            output_types: &out_ty,
        };
        let t = elemwise(step.op, &refs, &ctx)?;
        let ty = block_type(&t);
        values.push(Some((t, ty)));
        for &a in &step.args {
            if let Slot::Step(j) = a
                && p.steps[j].last_use == k
            {
                values[j] = None;
            }
        }
    }
    p.outputs
        .iter()
        .map(|&s| {
            let (t, _) = get(&values, s).ok_or_else(missing)?;
            if t.shape() == shape && t.is_contiguous() {
                Ok(t)
            } else {
                Ok(t.broadcast_to(shape)?.to_contiguous())
            }
        })
        .collect()
}

/// The elements of a fresh output tensor as bytes (for copying blocks into it).
fn bytes_mut(t: &mut Tensor) -> Result<&mut [u8], KernelError> {
    let len = t.numel() * t.dtype().size();
    let ptr = oxtensor_data::dispatch_dtype!(t.dtype(), T => t.data_mut::<T>().map(|s| s.as_mut_ptr().cast::<u8>()))
        .ok_or_else(|| KernelError::Value("Composite: output buffer is not writable".into()))?;
    // SAFETY: `data_mut` gave unique access to `numel` contiguous elements at `ptr`, borrowed
    // from `t` for the lifetime of the returned slice; every dtype's elements are plain bytes
    // without padding, and only bytes copied from tensors of the same dtype are written.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Evaluates the frozen scalar program `g` elementwise over `inputs` (with `Elemwise`'s
/// broadcasting), returning one tensor per inner output, in one blocked pass (see the module
/// documentation).
pub fn composite(
    g: &FrozenGraph,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
) -> Result<Vec<Tensor>, KernelError> {
    // SAFETY: without a donor nothing is written outside the fresh outputs.
    unsafe { run(g, inputs, ctx, None) }
}

/// Like [`composite`], but writes output 0 into `inputs[donor]`'s buffer (and returns that
/// tensor) when it can hold it: owned storage, C-contiguous with exactly the output's shape,
/// output 0's dtype, and every input sharing its storage the same view.
/// Otherwise output 0 is fresh; the values are the same either way.
///
/// Each block reads its part of the donor before writing it (through a copy, so no reference
/// to the donor's elements outlives the read), and blocks are disjoint runs of the buffer, so
/// blocks may run in parallel.
///
/// # Safety
/// For the duration of the call, nothing else may read or write the elements of
/// `inputs[donor]`: no slice or pointer into them may be in use, on this thread or another.
pub unsafe fn composite_in_place(
    g: &FrozenGraph,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
    donor: usize,
) -> Result<Vec<Tensor>, KernelError> {
    // SAFETY: our caller's guarantee is the one `run` asks for.
    unsafe { run(g, inputs, ctx, Some(donor)) }
}

/// Where each output's elements live, as raw pointers, so that parallel blocks can write their
/// own disjoint runs while others read theirs.
struct Dest(Vec<(*mut u8, usize)>);

// SAFETY: the pointers are the outputs' element buffers; each block writes only its own run of
// elements, and a donor's run only after reading it (see `run`), so no two threads touch the
// same bytes and no reference to bytes being written exists.
unsafe impl Sync for Dest {}

impl Dest {
    /// `(first element, element size)` per output (a method, so that closures capture the
    /// whole wrapper, not the field).
    fn outputs(&self) -> &[(*mut u8, usize)] {
        &self.0
    }
}

/// [`composite`] and [`composite_in_place`].
///
/// # Safety
/// With `donor`, the guarantee [`composite_in_place`] asks of its caller.
unsafe fn run(
    g: &FrozenGraph,
    inputs: &[&Tensor],
    ctx: &KernelCtx<'_>,
    donor: Option<usize>,
) -> Result<Vec<Tensor>, KernelError> {
    if inputs.len() != g.input_types().len() {
        return Err(KernelError::Value(format!(
            "Composite takes {} inputs, got {}",
            g.input_types().len(),
            inputs.len()
        )));
    }
    let program = Program::new(g)?;
    let ndim = ctx.output_types.first().map_or(0, TensorType::ndim);
    let walk = Walk::new(inputs, ctx.input_types, ndim)?;
    let first = g.outputs().first().map(Var::dtype);
    let donor = donor
        .filter(|&k| first == Some(inputs[k].dtype()) && donor_fits(inputs, &walk.shape, k))
        .map(|k| inputs[k]);
    let mut outs = g
        .outputs()
        .iter()
        .enumerate()
        .map(|(i, o)| match donor {
            Some(d) if i == 0 => Ok(d.clone()),
            _ => Tensor::zeros(o.dtype(), &walk.shape),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let numel: usize = walk.shape.iter().product();
    if numel == 0 {
        return Ok(outs);
    }
    let mut dest = Vec::with_capacity(outs.len());
    for (i, t) in outs.iter_mut().enumerate() {
        let size = t.dtype().size();
        let ptr = match donor {
            // Writing through the donor's pointer is sound: `Storage` keeps its allocation
            // behind a raw pointer, and our caller guarantees nobody else uses the elements.
            Some(d) if i == 0 => d.data_ptr().cast_mut(),
            _ => bytes_mut(t)?.as_mut_ptr(),
        };
        dest.push((ptr, size));
    }
    let dest = Dest(dest);
    let blocks = Blocks::new(&walk.dims);
    // The first element and length of each block: blocks are consecutive runs in C order.
    let mut spans = Vec::with_capacity(blocks.count);
    let mut at = 0;
    for b in 0..blocks.count {
        let ch = b % blocks.per_outer;
        let len = blocks.chunk.min(walk.dims[blocks.k] - ch * blocks.chunk) * blocks.inner;
        spans.push((at, len));
        at += len;
    }
    let work = |b: usize| -> Result<(), KernelError> {
        let (shape, mut views) = block_views(&walk, &blocks, b, inputs)?;
        let (lo, len) = spans[b];
        if let Some(d) = donor {
            for (i, t) in inputs.iter().enumerate() {
                if Arc::ptr_eq(t.storage(), d.storage()) {
                    let mut copy = Tensor::zeros(d.dtype(), views[i].0.shape())?;
                    let size = d.dtype().size();
                    // SAFETY: the donor is C-contiguous with the output's shape, so block
                    // `b`'s elements are its `len` elements from `lo`, inside the storage; nobody writes them before this block does,
                    // below, after this borrow ends.
                    let run = unsafe {
                        std::slice::from_raw_parts(d.data_ptr().add(lo * size), len * size)
                    };
                    bytes_mut(&mut copy)?.copy_from_slice(run);
                    views[i].0 = copy;
                }
            }
        }
        let results = run_block(&program, &shape, &views)?;
        drop(views);
        for (&(ptr, size), r) in dest.outputs().iter().zip(&results) {
            let bytes = r.to_bytes();
            if bytes.len() != len * size {
                return Err(KernelError::Value(
                    "Composite: a block result has the wrong size".into(),
                ));
            }
            // SAFETY: each output holds `numel` contiguous elements of `size` bytes, and block
            // `b` owns elements `[lo, lo + len)`; no reference to them exists (a donor's run
            // was read through a copy above).
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.add(lo * size), len * size)
            };
        }
        Ok(())
    };
    if numel > PARALLEL_THRESHOLD && blocks.count > 1 {
        (0..blocks.count).into_par_iter().try_for_each(work)?;
    } else {
        (0..blocks.count).try_for_each(work)?;
    }
    Ok(outs)
}
