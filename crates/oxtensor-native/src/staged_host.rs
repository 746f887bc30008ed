//! The Rust side of a staged loop's host calls (`emit::staged_host`): the step nodes C does
//! not compute (linear algebra, random draws) run the interpreter's own kernels, called back
//! from inside the C loop through [`host_call`] with the step's value pointers.
//!
//! Before the loop the executor works out each call's output extents from its operands'
//! with the op's type rule ([`output_shapes`], the one the graph checks) and allocates them
//! with every other value; [`HostCalls`] then keeps, per call, the operands' layouts and one
//! contiguous tensor per operand that each step's values are copied into, so a step allocates
//! only what the kernel itself does (its outputs, copied into the loop's buffers). The common
//! nodes skip the tensors, reading and writing the loop's buffers with the kernel's own
//! per-element code and allocating nothing per step: a random draw of a scalar distribution,
//! a categorical, a beta-binomial, a Dirichlet, a multinomial or a multivariate normal
//! ([`draw`]); a `float64` or `float32` `cholesky`, `cho_solve`, `solve_triangular`, `solve`,
//! `inv`, `det` or `slogdet`, batched or not ([`linalg`]); an `argmax`/`argmin`, a
//! `cumsum`/`cumprod`, a `sort`/`argsort` or a `MakeVector` ([`extra`]). A kernel error, an
//! output of other extents or dtype than laid out, or a panic (caught: it never unwinds into
//! C) makes the call return non-zero, which ends the C loop; the executor then runs the
//! interpreter's loop, which reports the error in its own words.

use crate::emit::{Stage, StagedLoop};
use crate::recurrence::c_strides;
use crate::staged::Layout;
use draw::DrawCall;
use extra::ExtraCall;
use linalg::LinalgCall;
use nest::NestCall;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::Op;
use oxtensor_graph::{Node, TensorType, Var, infer_types};
use oxtensor_runtime::eval_node;
use smallvec::SmallVec;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

mod draw;
mod extra;
mod linalg;
pub(crate) mod nest;

/// The C type of [`host_call`] (`ox_host_fn` in the generated prelude).
pub(crate) type HostFn =
    unsafe extern "C" fn(*mut c_void, i64, *const *const c_void, *const *mut c_void) -> i32;

/// The most elements of an integer operand known before the loop that [`output_shapes`]
/// hands the type rule as a constant (a draw's `size`, an extent): enough for any shape.
const KNOWN_INTS: usize = 32;

/// The extents of the outputs of `node`'s node on operands of extents `shapes`, by the op's
/// type rule, or `None` when it rejects them or leaves an extent unknown. `known` holds per
/// operand its value when the executor knows it before the loop: an integer one of at most
/// [`KNOWN_INTS`] elements goes to the rule as that constant, since extents may follow from
/// it (a random draw's `size`).
pub(crate) fn output_shapes(
    node: &Var,
    shapes: &[Vec<usize>],
    known: &[Option<&Tensor>],
) -> Option<Vec<Vec<usize>>> {
    let n = node.node();
    let inputs = n.inputs();
    if inputs.len() != shapes.len() || inputs.len() != known.len() {
        return None;
    }
    let vars: Vec<Var> = inputs
        .iter()
        .zip(shapes)
        .zip(known)
        .enumerate()
        .map(|(i, ((v, s), k))| match k {
            Some(t)
                if t.dtype() == v.dtype()
                    && t.dtype().is_int()
                    && t.numel() <= KNOWN_INTS
                    && t.shape() == s.as_slice() =>
            {
                Var::constant((*t).clone())
            }
            _ => {
                let shape: Vec<Option<usize>> = s.iter().map(|&d| Some(d)).collect();
                Var::placeholder(i, TensorType::new(v.dtype(), &shape))
            }
        })
        .collect();
    let op = n.op()?;
    if let Op::IfElse(_) | Op::OpFromGraph(_) = op {
        return body_shapes(op, &vars);
    }
    let types = infer_types(op, &vars).ok()?;
    types
        .iter()
        .map(|t| t.shape.iter().copied().collect::<Option<Vec<usize>>>())
        .collect()
}

/// The extents of the outputs of an inner-graph op on operands `vars`: its bodies rebuilt on
/// them (the frozen bodies' own types keep only what held where they were built), when every
/// body gives each output the same static extents.
fn body_shapes(op: &Op, vars: &[Var]) -> Option<Vec<Vec<usize>>> {
    let (bodies, args) = match op {
        Op::OpFromGraph(o) => (vec![&o.body], vars),
        Op::IfElse(b) => (vec![&b.then_branch, &b.else_branch], vars.get(1..)?),
        _ => return None,
    };
    let mut shapes: Option<Vec<Vec<usize>>> = None;
    for body in bodies {
        let outputs = body.instantiate(args).ok()?;
        let these = outputs
            .iter()
            .map(|v| v.ty().shape.iter().copied().collect::<Option<Vec<usize>>>())
            .collect::<Option<Vec<_>>>()?;
        if shapes.as_ref().is_some_and(|s| *s != these) {
            return None;
        }
        shapes = Some(these);
    }
    shapes
}

/// One host call of a loop, laid out for this call of the loop.
struct Call {
    /// The node run.
    node: Arc<Node>,
    /// Per operand: its layout in the loop's buffers, whether that layout is C-contiguous
    /// (decided once per run, not per step), and the contiguous tensor its values are copied
    /// into each step.
    inputs: Vec<(Layout, bool, Tensor)>,
    /// Per output: its extents and dtype (where the loop expects it, contiguous).
    outputs: Vec<(Vec<usize>, DType)>,
    /// For a draw of a scalar distribution or a categorical, the draw read from and written
    /// to the loop's buffers directly (no tensors per step); `None`: the node runs through
    /// `eval_node`.
    draw: Option<DrawCall>,
    /// For a linear algebra node [`LinalgCall`] takes, the node run in the loop's
    /// buffers directly (no tensors per step); `None`: the node runs through `eval_node`.
    linalg: Option<LinalgCall>,
    /// For an arg-reduction, a cumulative sum or product, a sort or argsort or a
    /// `MakeVector`, the node run in the loop's buffers directly (no tensors per step);
    /// `None`: the node runs through `eval_node`.
    extra: Option<ExtraCall>,
    /// For a nested loop, its staged loop laid out for this run (the call's operands follow
    /// the address of its C function).
    nest: Option<Box<NestCall>>,
    /// For an inner-graph op (`IfElse`, `OpFromGraph`), its bodies as the interpreter
    /// compiled them, held for the run so that no step compiles them again.
    _bodies: Vec<Arc<dyn oxtensor_runtime::Executable>>,
}

/// The host calls of one run of a staged loop, indexed by their `id`; its address is the
/// `hctx` the C loop passes back to [`host_call`].
pub(crate) struct HostCalls {
    calls: Vec<Call>,
}

impl HostCalls {
    /// The host calls of `p`, whose values are laid out as `layouts` (`params`: the values
    /// known before the loop); `None` when an operand cannot be allocated or a nested loop
    /// cannot be laid out.
    pub fn new(p: &StagedLoop, layouts: &[Layout], params: &[Option<Tensor>]) -> Option<HostCalls> {
        let mut calls = Vec::new();
        for st in &p.stages {
            let Stage::Host {
                node,
                args,
                outs,
                nested,
                ..
            } = st
            else {
                continue;
            };
            let nest = match (nested, node.node().op()) {
                (Some(inner), Some(Op::Scan(s))) => {
                    let ls: Vec<Layout> = args
                        .iter()
                        .map(|&a| layouts.get(a).cloned())
                        .collect::<Option<_>>()?;
                    let known: Vec<Option<&Tensor>> = args
                        .iter()
                        .map(|&a| params.get(a).and_then(Option::as_ref))
                        .collect();
                    let dtypes: Vec<DType> = args.iter().map(|&a| p.values[a].ty.dtype).collect();
                    Some(Box::new(NestCall::new(inner, s, &ls, &known, &dtypes)?))
                }
                (Some(_), _) => return None,
                _ => None,
            };
            let inputs = args
                .iter()
                .map(|&a| {
                    let l = layouts.get(a)?.clone();
                    let t = Tensor::zeros(p.values[a].ty.dtype, &l.shape).ok()?;
                    let contiguous = l.strides == c_strides(&l.shape);
                    Some((l, contiguous, t))
                })
                .collect::<Option<Vec<_>>>()?;
            let outputs = outs
                .iter()
                .map(|&o| Some((layouts.get(o)?.shape.clone(), p.values[o].ty.dtype)))
                .collect::<Option<Vec<_>>>()?;
            let draw = match node.node().op() {
                Some(Op::Random(r)) => {
                    let ls: Vec<&Layout> = inputs.iter().map(|(l, _, _)| l).collect();
                    let dtypes: Vec<DType> = inputs.iter().map(|(_, _, t)| t.dtype()).collect();
                    DrawCall::new(*r, &ls, &dtypes, &outputs)
                }
                _ => None,
            };
            let linalg = match node.node().op() {
                Some(Op::Linalg(op)) => {
                    let ls: Vec<(&Layout, bool)> = inputs.iter().map(|(l, c, _)| (l, *c)).collect();
                    let dtypes: Vec<DType> = inputs.iter().map(|(_, _, t)| t.dtype()).collect();
                    LinalgCall::new(op, &ls, &dtypes, &outputs)
                }
                _ => None,
            };
            let extra = match node.node().op() {
                Some(op @ (Op::ArgReduce { .. } | Op::Extra(_) | Op::MakeVector(_))) => {
                    let ls: Vec<(&Layout, bool)> = inputs.iter().map(|(l, c, _)| (l, *c)).collect();
                    let dtypes: Vec<DType> = inputs.iter().map(|(_, _, t)| t.dtype()).collect();
                    ExtraCall::new(op, &ls, &dtypes, &outputs)
                }
                _ => None,
            };
            let bodies = match node.node().op() {
                Some(op @ (Op::IfElse(_) | Op::OpFromGraph(_))) => {
                    oxtensor_runtime::interpreted_bodies(op).ok()?
                }
                _ => Vec::new(),
            };
            calls.push(Call {
                node: node.node().clone(),
                inputs,
                outputs,
                draw,
                linalg,
                extra,
                nest,
                _bodies: bodies,
            });
        }
        Some(HostCalls { calls })
    }

    /// The context pointer the C loop passes back to [`host_call`].
    pub fn context(&mut self) -> *mut c_void {
        (self as *mut HostCalls).cast()
    }

    /// Runs call `id` on the operands at `ins`, writing its outputs to `outs`.
    ///
    /// # Safety
    /// `ins` holds one pointer per operand of the call, each addressing its value laid out
    /// as the call's layout says (every element at its strides within the value's buffer),
    /// of the operand's dtype; `outs` one per output, each addressing room for its elements,
    /// contiguous, of its dtype.
    unsafe fn run(
        &mut self,
        id: i64,
        ins: *const *const c_void,
        outs: *const *mut c_void,
    ) -> Option<()> {
        let call = self.calls.get_mut(usize::try_from(id).ok()?)?;
        if let Some(nest) = &mut call.nest {
            // SAFETY: forwarded from the caller's contract, whose first input is, for a
            // nested loop, its C function (`emit::staged_host::emit`).
            return unsafe { nest.run(ins, outs) };
        }
        if let Some(draw) = &mut call.draw {
            // SAFETY: forwarded from the caller's contract; the draw was laid out with the
            // call's layouts.
            return unsafe { draw.run(ins, outs) };
        }
        if let Some(linalg) = &mut call.linalg {
            // SAFETY: forwarded from the caller's contract; the call was laid out with the
            // call's layouts and dtypes.
            return unsafe { linalg.run(ins, outs) };
        }
        if let Some(extra) = &mut call.extra {
            // SAFETY: forwarded from the caller's contract; the call was laid out with the
            // call's layouts and dtypes.
            return unsafe { extra.run(ins, outs) };
        }
        for (i, (layout, contiguous, t)) in call.inputs.iter_mut().enumerate() {
            // A tensor the kernel kept a view of is not written: a fresh one replaces it.
            if Arc::strong_count(t.storage()) != 1 || Arc::weak_count(t.storage()) != 0 {
                *t = Tensor::zeros(t.dtype(), &layout.shape).ok()?;
            }
            // SAFETY: `ins` has an entry per operand (the caller's contract).
            let src = unsafe { *ins.add(i) }.cast::<u8>();
            // SAFETY: `src` addresses the operand laid out as `layout` (the caller's
            // contract); `t` is a contiguous tensor of that shape and dtype whose storage it
            // alone holds (checked above, so no view sees the write).
            unsafe { copy_in(src, layout, *contiguous, t) };
        }
        let args: SmallVec<[&Tensor; 4]> = call.inputs.iter().map(|(_, _, t)| t).collect();
        let results = eval_node(&call.node, &args).ok()?;
        if results.len() != call.outputs.len() {
            return None;
        }
        for (j, (r, (shape, dtype))) in results.iter().zip(&call.outputs).enumerate() {
            if r.dtype() != *dtype || r.shape() != shape.as_slice() {
                return None;
            }
            let r = if r.is_contiguous() {
                r.clone()
            } else {
                r.to_contiguous()
            };
            // SAFETY: `outs` has an entry per output with room for its elements, contiguous,
            // of its dtype (the caller's contract), which `r` was checked to have; a kernel's
            // fresh output does not overlap the loop's buffers.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    r.data_ptr(),
                    (*outs.add(j)).cast::<u8>(),
                    r.numel() * dtype.size(),
                );
            }
        }
        Some(())
    }
}

/// Copies the elements of the value at `src`, laid out as `layout` (`contiguous`: in C
/// order), into `t` in C order.
///
/// # Safety
/// Every element of `layout` (offset `Σ iₖ·strideₖ` elements from `src`) is readable, of
/// `t`'s dtype; `contiguous` says whether `layout`'s strides are C-contiguous; `t` is
/// contiguous of `layout`'s extents, and its storage is held by it alone.
unsafe fn copy_in(src: *const u8, layout: &Layout, contiguous: bool, t: &Tensor) {
    // SAFETY: forwarded from the caller's contract: `t` has room for the elements, in C order.
    unsafe {
        copy_to(
            src,
            layout,
            contiguous,
            t.data_ptr().cast_mut(),
            t.dtype().size(),
        )
    }
}

/// One operand of a host call run in the loop's buffers (`extra`, `linalg`): its layout,
/// whether it is C-contiguous, the size of its elements and of the whole value in bytes, and
/// the buffer it is copied into when it cannot be read where it is (`u64` words, so aligned
/// for every dtype).
pub(crate) struct InPlaceOperand {
    layout: Layout,
    contiguous: bool,
    size: usize,
    bytes: usize,
    copy: Vec<u64>,
}

impl InPlaceOperand {
    /// An operand laid out as `layout` (`contiguous`: in C order) of elements of `size` bytes.
    pub fn new(layout: &Layout, contiguous: bool, size: usize) -> InPlaceOperand {
        let bytes = layout.shape.iter().product::<usize>() * size;
        InPlaceOperand {
            layout: layout.clone(),
            contiguous,
            size,
            bytes,
            copy: vec![0; bytes.div_ceil(8)],
        }
    }

    /// The operand's elements, in C order, from the value at `src`: read where they are when
    /// they are contiguous and `overlaps(start, end)` (the output's byte addresses against
    /// theirs) is false, else copied into the operand's own buffer first. The slice starts
    /// aligned for the operand's dtype.
    ///
    /// # Safety
    /// `src` addresses the value laid out as at [`Self::new`], aligned for its dtype, and no
    /// one writes it while the slice lives.
    pub unsafe fn read(
        &mut self,
        src: *const u8,
        overlaps: impl Fn(usize, usize) -> bool,
    ) -> &[u8] {
        if self.bytes == 0 {
            return &[];
        }
        let (start, end) = (src as usize, src.wrapping_add(self.bytes) as usize);
        if self.contiguous && !overlaps(start, end) {
            // SAFETY: the operand's `bytes` bytes are contiguous at `src` (its layout is
            // C-contiguous) and unwritten while borrowed (the caller's contract).
            return unsafe { std::slice::from_raw_parts(src, self.bytes) };
        }
        let dst = self.copy.as_mut_ptr().cast::<u8>();
        // SAFETY: `src` addresses the operand laid out as `self.layout` (the caller's
        // contract), of elements of `size` bytes; `self.copy` has room for its `bytes` bytes
        // and is our own buffer.
        unsafe { copy_to(src, &self.layout, self.contiguous, dst, self.size) };
        // SAFETY: `self.copy` holds at least `bytes` initialised bytes (u64 words), which the
        // slice borrows.
        unsafe { std::slice::from_raw_parts(dst, self.bytes) }
    }
}

/// Copies the elements of the value at `src`, laid out as `layout` (`contiguous`: in C
/// order), each of `size` bytes, to `dst` in C order.
///
/// # Safety
/// Every element of `layout` (offset `Σ iₖ·strideₖ` elements from `src`) is readable; `dst`
/// has room for all of them and overlaps none.
unsafe fn copy_to(src: *const u8, layout: &Layout, contiguous: bool, dst: *mut u8, size: usize) {
    let n: usize = layout.shape.iter().product();
    if n == 0 {
        return;
    }
    if contiguous {
        // SAFETY: the `n` elements are contiguous at `src` (the caller's contract) and `dst`
        // has room for them.
        unsafe { std::ptr::copy_nonoverlapping(src, dst, n * size) };
        return;
    }
    let rank = layout.shape.len();
    let mut index: SmallVec<[usize; 8]> = smallvec::smallvec![0; rank];
    for k in 0..n {
        let offset: isize = index
            .iter()
            .zip(&layout.strides)
            .map(|(&i, &s)| i as isize * s)
            .sum();
        // SAFETY: `offset` addresses an element of the value (the caller's contract), and
        // `k < n` one of `dst`'s.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src.offset(offset * size as isize),
                dst.add(k * size),
                size,
            );
        }
        for d in (0..rank).rev() {
            index[d] += 1;
            if index[d] < layout.shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// The function a staged loop calls for its host call `id` (see `emit::staged_host`): 0 when
/// it wrote the outputs, 1 when the node failed (or panicked), which ends the loop.
///
/// # Safety
/// `ctx` is the [`HostCalls::context`] of the calls laid out for this run of the loop, and
/// `ins`, `outs` hold call `id`'s operand and output pointers as [`HostCalls::run`] requires.
pub(crate) unsafe extern "C" fn host_call(
    ctx: *mut c_void,
    id: i64,
    ins: *const *const c_void,
    outs: *const *mut c_void,
) -> i32 {
    let ran = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `ctx` is the address of the live `HostCalls` of this run, which nothing
        // else uses while the loop runs (the caller's contract).
        let calls = unsafe { &mut *ctx.cast::<HostCalls>() };
        // SAFETY: forwarded from the caller's contract.
        unsafe { calls.run(id, ins, outs) }
    }));
    match ran {
        Ok(Some(())) => 0,
        _ => 1,
    }
}
