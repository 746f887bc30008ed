//! Running a compiled function: a Rust executor walks the runtime's [`Plan`] and, per node,
//! calls the node's C kernel or the interpreter's reference kernel.
//!
//! Output dtypes and shapes are decided here from the node's types and the runtime shapes,
//! which are checked (with the interpreter's rule) before any C runs; output buffers are
//! allocated here and handed to C with the operands' data pointers and strides. Any case the
//! kernels do not take (a shape mismatch, an empty array, an element that is an error, such as
//! an integer power with a negative exponent) is handed to the interpreter, which computes the
//! node or reports the error exactly as it would have on its own.

use crate::emit::StagedLoop;
use crate::recurrence::LoopFn;
use crate::replay::{Decision, LaunchOf, Ran, Replay};
use crate::staged::StagedFn;
pub(crate) use crate::walk::ElemLayout;
use crate::walk::{ReduceWalk, Space, in_bounds};
use libloading::Library;
use oxtensor_data::{Tensor, dispatch_dtype};
use oxtensor_graph::{Axes, Node, Op, ReduceOp, TensorType, toposort};
use oxtensor_runtime::kernels::{self, KernelCtx, PARALLEL_THRESHOLD};
use oxtensor_runtime::{
    Call, Executable, InnerBodies, KernelError, Plan, RuntimeError, eval_node, run_interpreted,
};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The C signature of an elementwise kernel (see `emit::kernel::elemwise`).
pub(crate) type ElemFn = unsafe extern "C" fn(
    i64,
    i64,
    i32,
    *const i64,
    *const *const c_void,
    *const i64,
    *const *mut c_void,
) -> i32;

/// The C signature of a reduction kernel (see `emit::kernel::reduce`).
pub(crate) type ReduceFn = unsafe extern "C" fn(
    i64,
    i64,
    i32,
    *const i64,
    i32,
    *const i64,
    *const *const c_void,
    *const i64,
    *const i64,
    i32,
    *mut c_void,
) -> i32;

/// How the executor runs one node.
pub(crate) enum Step {
    /// An elementwise kernel.
    Elemwise(ElemFn),
    /// The elementwise kernel of a `FusedMatMul`'s epilogue.
    Epilogue(ElemFn),
    /// A reduction kernel over `axes`.
    Reduce {
        /// The kernel.
        f: ReduceFn,
        /// The reduced axes.
        axes: Axes,
        /// True for a `FusedReduce`, whose kernel computes its program on the node's inputs.
        fused: bool,
    },
    /// The whole-loop kernel of a `Scan` node.
    Loop(LoopFn),
    /// The staged whole-loop kernel of a `Scan` node, and its step's values and stages.
    Staged(StagedFn, Arc<StagedLoop>),
}

/// How the executor runs the node at one position of the schedule.
enum Kernel {
    /// The interpreter's reference kernel.
    Interp,
    /// An elementwise kernel, the node's cost per element ([`element_cost`]), and the layout
    /// of its last call.
    Elemwise(ElemFn, usize, LastLayout<ElemLayout>),
    /// A matrix product whose epilogue runs as an elementwise kernel on each panel of it, and
    /// the layout of the epilogue's last call.
    Epilogue(ElemFn, LastLayout<ElemLayout>),
    /// A reduction kernel, whether it computes a fused program (see [`Step::Reduce`]), its
    /// cost per reduced element ([`element_cost`]) and the layout of its last call.
    Reduce {
        f: ReduceFn,
        axes: Axes,
        fused: bool,
        cost: usize,
        last: LastLayout<ReduceLayout>,
    },
    /// A whole-loop kernel.
    Loop(LoopFn),
    /// A staged whole-loop kernel and its step's values and stages.
    Staged(StagedFn, Arc<StagedLoop>),
}

/// The layout of a kernel's last call (how it walks its operands), kept for the next call: a
/// function called again and again on arrays of the same shapes (a sampler's) then skips the
/// layout work, which on small arrays costs more than the loop. A call on another thread that
/// finds it locked computes its own.
pub(crate) struct LastLayout<T>(Mutex<Option<Arc<Kept<T>>>>);

/// A kept layout and the operand layouts it is for.
pub(crate) struct Kept<T> {
    /// The operands' ranks, shapes and strides, which decide the layout.
    key: SmallVec<[isize; 16]>,
    /// The layout.
    pub(crate) layout: T,
}

impl<T> LastLayout<T> {
    fn new() -> LastLayout<T> {
        LastLayout(Mutex::new(None))
    }

    /// The layout for `operands`: the kept one when they are laid out as last time, else
    /// `compute`d and kept. `None` when `compute` finds the operands do not fit.
    pub(crate) fn get(
        &self,
        operands: &[&Tensor],
        compute: impl FnOnce() -> Option<T>,
    ) -> Option<Arc<Kept<T>>> {
        let key = Self::key(operands);
        if let Ok(guard) = self.0.try_lock()
            && let Some(kept) = guard.as_ref().filter(|k| k.key == key)
        {
            return Some(kept.clone());
        }
        let kept = Arc::new(Kept {
            key,
            layout: compute()?,
        });
        if let Ok(mut guard) = self.0.try_lock() {
            *guard = Some(kept.clone());
        }
        Some(kept)
    }

    /// The kept layout, when it is the one for `operands` (what a call with them just used).
    fn current(&self, operands: &[&Tensor]) -> Option<Arc<Kept<T>>> {
        let key = Self::key(operands);
        let guard = self.0.try_lock().ok()?;
        guard.as_ref().filter(|k| k.key == key).cloned()
    }

    /// The operands' ranks, shapes and strides.
    fn key(operands: &[&Tensor]) -> SmallVec<[isize; 16]> {
        let mut key = SmallVec::new();
        for t in operands {
            key.push(t.ndim() as isize);
            key.extend(t.shape().iter().map(|&e| e as isize));
            key.extend_from_slice(t.strides());
        }
        key
    }
}

/// How a reduction call walks its operands.
pub(crate) struct ReduceLayout {
    /// The walk.
    pub(crate) walk: ReduceWalk,
    /// The output shape.
    pub(crate) out_shape: SmallVec<[usize; 4]>,
}

/// A function compiled by the native backend.
pub struct NativeExecutable {
    plan: Plan,
    /// One entry per node of the plan's schedule, so a call looks nothing up by key.
    kernels: Vec<Kernel>,
    /// Keeps the kernels' code mapped while the function pointers in `steps` may be called.
    _library: Option<Arc<Library>>,
    /// The compiled bodies of its inner-graph nodes.
    inner: InnerBodies,
    parallel: bool,
    /// Elements of the plan's constants, counted with the inputs' to decide whether a call
    /// runs on the thread pool (see [`NativeExecutable::run_call`]).
    constant_elements: usize,
    /// Calls of whole-loop kernels handed to the interpreter's loop (see
    /// [`NativeExecutable::interpreted_loops`]).
    interpreted_loops: AtomicUsize,
    /// The recorded call replayed while the inputs keep their layout, when every node is a
    /// C kernel or may be a view or shape arithmetic (no loop).
    replay: Option<Replay>,
}

/// Values shared by the parallel tasks of one kernel call.
struct Shared<T>(T);

// SAFETY: `Shared` wraps the raw pointers of one kernel call. The tasks only read the pointer
// values; what they point to is either read-only operand data (never written while the call
// runs) or output buffers written by each task at its own, disjoint, positions.
unsafe impl<T> Sync for Shared<T> {}
// SAFETY: as for `Sync`; moving the pointer values to another thread changes nothing.
unsafe impl<T> Send for Shared<T> {}

impl<T> Shared<T> {
    /// The value (a method, so that closures capture the whole wrapper, not the field).
    fn get(&self) -> &T {
        &self.0
    }
}

/// A writable pointer to a fresh tensor's elements.
fn out_ptr(t: &mut Tensor) -> Option<*mut c_void> {
    dispatch_dtype!(t.dtype(), T => t.data_mut::<T>().map(|s| s.as_mut_ptr().cast::<c_void>()))
}

/// Element pointers of a kernel call's operands, inline (no allocation per call).
type Ptrs<T> = SmallVec<[T; 8]>;

/// Contiguous outputs — output 0 in `donor`'s buffer when given (see [`Call::donor`]), the
/// others fresh — with their element pointers, or `None` when they cannot be allocated (the
/// interpreter then reports it).
fn alloc(
    node: &Node,
    shape: &[usize],
    donor: Option<&Tensor>,
) -> Option<(Vec<Tensor>, Ptrs<*mut c_void>)> {
    let mut outs = Vec::with_capacity(node.types().len());
    let mut ptrs = Ptrs::new();
    for (i, t) in node.types().iter().enumerate() {
        match donor.filter(|d| i == 0 && d.dtype() == t.dtype) {
            Some(d) => {
                // Writing through this pointer is sound: the plan hands a donor only when
                // nothing outside this call uses its owned storage (its only other handle, if
                // any, is a consumed shared variable's, locked by the caller), or a caller-lent
                // output buffer that nothing else reads or writes during the call
                // (`Call::out`); callers checked it is C-contiguous with this shape and no Rust
                // reference to its elements exists while the kernel runs.
                ptrs.push(d.data_ptr().cast_mut().cast::<c_void>());
                outs.push(d.clone());
            }
            None => {
                // SAFETY: the elementwise and reduction kernels this allocates for write every
                // element of each output before the tensor is returned (the same contract as a
                // lent buffer, which holds an earlier call's values); a kernel that fails drops
                // the outputs unread.
                let fresh = unsafe { Tensor::uninit(t.dtype, shape) }.ok()?;
                ptrs.push(fresh.data_ptr().cast_mut().cast::<c_void>());
                outs.push(fresh);
            }
        }
    }
    Some((outs, ptrs))
}

/// The caller-lent output buffer ([`Call::out`]) when it can hold an output of `shape`:
/// C-contiguous from the start of its owned storage, with exactly that shape (the dtype is
/// checked by [`alloc`]).
fn lent<'a>(out: Option<&'a Tensor>, shape: &[usize]) -> Option<&'a Tensor> {
    out.filter(|t| {
        t.shape() == shape
            && t.is_contiguous()
            && t.offset() == 0
            && t.storage().is_owned()
            && t.numel() * t.dtype().size() <= t.storage().len()
    })
}

/// The cost of one element of an elementwise node (or of a fused reduction's program), in
/// additions (the sum of its scalar ops'
/// [`ScalarOp::cost`](oxtensor_graph::ScalarOp::cost)): how much work a loop over its elements
/// is, when deciding whether to split it across threads.
fn element_cost(node: &Node) -> usize {
    let of = |n: &Node| match n.op() {
        Some(Op::Elemwise(s)) => s.cost(),
        _ => 0,
    };
    match node.op() {
        Some(Op::Composite(g) | Op::FusedReduce { body: g, .. }) => {
            toposort(g.outputs()).iter().map(|n| of(n)).sum::<usize>()
        }
        _ => of(node),
    }
    .max(1)
}

impl NativeExecutable {
    pub(crate) fn new(
        plan: Plan,
        mut steps: FxHashMap<u64, Step>,
        library: Option<Arc<Library>>,
        inner: InnerBodies,
        parallel: bool,
    ) -> NativeExecutable {
        let kernels = plan
            .schedule()
            .map(|n| match steps.remove(&n.id()) {
                None => Kernel::Interp,
                Some(Step::Elemwise(f)) => Kernel::Elemwise(f, element_cost(n), LastLayout::new()),
                Some(Step::Epilogue(f)) => Kernel::Epilogue(f, LastLayout::new()),
                Some(Step::Reduce { f, axes, fused }) => Kernel::Reduce {
                    f,
                    axes,
                    fused,
                    cost: element_cost(n),
                    last: LastLayout::new(),
                },
                Some(Step::Loop(f)) => Kernel::Loop(f),
                Some(Step::Staged(f, p)) => Kernel::Staged(f, p),
            })
            .collect::<Vec<_>>();
        let replay = kernels
            .iter()
            .all(|k| !matches!(k, Kernel::Loop(_) | Kernel::Staged(..)))
            .then(Replay::default);
        NativeExecutable {
            constant_elements: plan.constants().iter().map(|(_, t)| t.numel()).sum(),
            plan,
            kernels,
            _library: library,
            inner,
            parallel,
            interpreted_loops: AtomicUsize::new(0),
            replay,
        }
    }

    /// How many times a loop compiled whole to C was handed to the interpreter's loop instead
    /// (operands it does not take, an element that is an error): 0 when every loop ran in C.
    pub fn interpreted_loops(&self) -> usize {
        self.interpreted_loops.load(Ordering::Relaxed)
    }

    /// How many calls were replayed from a recording rather than run through the plan (see
    /// the `replay` module): what tests use to show the fast path really ran.
    pub fn replayed_calls(&self) -> usize {
        self.replay.as_ref().map_or(0, Replay::replayed)
    }

    /// How many nodes run as generated code (fused producers included).
    pub fn native_nodes(&self) -> usize {
        self.kernels
            .iter()
            .filter(|k| !matches!(k, Kernel::Interp))
            .count()
    }

    /// Runs `call(start, end)` over `[0, total)`, split across rayon's threads when the work
    /// (`total * cost` elements) is large. Returns the first non-zero status.
    fn split(&self, total: usize, cost: usize, call: impl Fn(i64, i64) -> i32 + Sync) -> i32 {
        let threads = rayon::current_num_threads();
        let work = total.saturating_mul(cost.max(1));
        if !self.parallel || threads < 2 || total < 2 || work <= PARALLEL_THRESHOLD {
            return call(0, total as i64);
        }
        // A few tasks per thread, each with at least a quarter of the threshold's work.
        let min_items = (PARALLEL_THRESHOLD / 4).div_ceil(cost.max(1));
        let chunk = total.div_ceil(threads * 4).max(min_items).max(1);
        (0..total.div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let start = c * chunk;
                call(start as i64, (start + chunk).min(total) as i64)
            })
            .reduce(|| 0, |a, b| if a != 0 { a } else { b })
    }

    fn elemwise(
        &self,
        (f, cost, last): (ElemFn, usize, &LastLayout<ElemLayout>),
        node: &Node,
        args: &[&Tensor],
        (donor, out): (Option<usize>, Option<&Tensor>),
    ) -> Result<Vec<Tensor>, RuntimeError> {
        let kept = last.get(args, || {
            let types: Vec<_> = node.inputs().iter().map(|v| v.ty().clone()).collect();
            ElemLayout::of(Space::elemwise(args, &types)?)
        });
        let Some(kept) = kept else {
            return eval_node(node, args);
        };
        let ElemLayout { walk, shape, numel } = &kept.layout;
        if !args.iter().all(|t| in_bounds(t)) {
            return eval_node(node, args);
        }
        let donor = lent(out, shape).or_else(|| {
            donor
                .map(|k| args[k])
                .filter(|t| t.shape() == shape.as_slice())
        });
        let Some((outs, out_ptrs)) = alloc(node, shape, donor) else {
            return eval_node(node, args);
        };
        let inputs: Ptrs<*const c_void> = args.iter().map(|t| t.data_ptr().cast()).collect();
        let call = Shared((walk, inputs, out_ptrs));
        let status = self.split(*numel, cost, |start, end| {
            let (walk, inputs, outs) = call.get();
            // SAFETY: `walk` has `dims.len()` (1..=MAX_DIM) extents whose product is
            // `numel`, and one stride per operand and extent; every operand pointer is
            // its tensor's first element and every position the walk reaches is inside the
            // tensor's storage (the shapes were checked against each other and `in_bounds`
            // held); each output holds `numel` elements of its dtype, contiguous, and
            // `[start, end)` is within `[0, numel)` and disjoint between concurrent calls. An
            // output that is a donated input's buffer has exactly that input's layout, so each
            // position is read and written only by the call that owns it; the kernels compute
            // a block before storing it when an output aliases an input (see `emit`).
            unsafe {
                f(
                    start,
                    end,
                    walk.dims.len() as i32,
                    walk.dims.as_ptr(),
                    inputs.as_ptr(),
                    walk.strides.as_ptr(),
                    outs.as_ptr(),
                )
            }
        });
        if status != 0 {
            return eval_node(node, args);
        }
        Ok(outs)
    }

    /// The layout of a reduction over `axes` of `operands` (the program's inputs when
    /// `fused`, which broadcast as the inputs of `node`), or `None` when their shapes do not fit.
    fn reduce_layout(
        axes: &[usize],
        operands: &[&Tensor],
        node: &Node,
        fused: bool,
    ) -> Option<ReduceLayout> {
        let space = if fused {
            let types: Vec<_> = node.inputs().iter().map(|v| v.ty().clone()).collect();
            Space::elemwise(operands, &types)
        } else {
            Space::of(operands.first()?)
        }?;
        if !axes.iter().all(|&a| a < space.shape.len()) {
            return None;
        }
        let main = (0..operands.len())
            .max_by_key(|&k| (operands[k].numel(), std::cmp::Reverse(k)))
            .unwrap_or(0);
        let walk = ReduceWalk::new(&space, axes, main)?;
        let out_shape = (0..space.shape.len())
            .filter(|d| !axes.contains(d))
            .map(|d| space.shape[d])
            .collect();
        Some(ReduceLayout { walk, out_shape })
    }

    /// Runs a reduction kernel on `args` (the reduced value, or a fused program's inputs).
    fn reduce(
        &self,
        (f, axes, fused, cost): (ReduceFn, &[usize], bool, usize),
        last: &LastLayout<ReduceLayout>,
        node: &Node,
        args: &[&Tensor],
        out: Option<&Tensor>,
    ) -> Result<Vec<Tensor>, RuntimeError> {
        let fallback = || eval_node(node, args);
        let op = match node.op() {
            Some(&Op::Reduce { op, .. } | &Op::FusedReduce { op, .. }) => op,
            _ => return fallback(),
        };
        let operands = if fused {
            args
        } else {
            &args[..args.len().min(1)]
        };
        let kept = last.get(operands, || {
            Self::reduce_layout(axes, operands, node, fused)
        });
        let Some(kept) = kept else {
            return fallback();
        };
        let (rw, out_shape) = (&kept.layout.walk, &kept.layout.out_shape[..]);
        if !operands.iter().all(|t| in_bounds(t)) {
            return fallback();
        }
        let Some((outs, out_ptrs)) = alloc(node, out_shape, lent(out, out_shape)) else {
            return fallback();
        };
        let Some(&out) = out_ptrs.first() else {
            return fallback();
        };
        let inputs: Ptrs<*const c_void> = operands
            .iter()
            .zip(&rw.base)
            .map(|(t, &b)| {
                t.data_ptr()
                    .wrapping_offset(b * t.dtype().size() as isize)
                    .cast()
            })
            .collect();
        let n_out = rw.kept.dims.iter().product::<i64>() as usize;
        let per_out = rw.reduced.dims.iter().product::<i64>() as usize;
        // The work per output: its reduced elements, each computing the fused program.
        let cost = per_out.saturating_mul(cost);
        let threads = rayon::current_num_threads();
        if self.parallel && threads > 1 && n_out < threads && cost > PARALLEL_THRESHOLD {
            let sizes: Vec<usize> = operands.iter().map(|t| t.dtype().size()).collect();
            let parts = self.reduce_parts(f, node, rw, &inputs, &sizes, threads * 2);
            return match parts.map(|t| combine(op, &t, out_shape)) {
                Some(Ok(t)) => Ok(vec![t]),
                _ => fallback(),
            };
        }
        let call = Shared((rw, inputs, out));
        let status = self.split(n_out, cost, |start, end| {
            let (rw, inputs, out) = call.get();
            // SAFETY: the kept and reduced walks have 1..=MAX_DIM extents each, with one
            // stride per operand and extent; operand pointers are the starting elements the
            // walk was built for (a reversed reduced dimension starts at its last element,
            // which is inside the view), and every position reached is inside the operand's
            // storage (shapes checked, `in_bounds` held); the output holds `n_out` elements
            // of the reduction's dtype, contiguous, and `[start, end)` is within it and
            // disjoint between concurrent calls.
            unsafe { call_reduce(f, rw, &rw.reduced.dims, inputs, start, end, *out) }
        });
        if status != 0 {
            return fallback();
        }
        Ok(outs)
    }

    /// A reduction with few outputs and long reductions, split along its outermost reduced
    /// dimension into about `parts` pieces reduced in parallel: a `[pieces, outputs]` tensor of
    /// partial results (in the output dtype), or `None` if a piece failed.
    fn reduce_parts(
        &self,
        f: ReduceFn,
        node: &Node,
        rw: &ReduceWalk,
        inputs: &[*const c_void],
        sizes: &[usize],
        parts: usize,
    ) -> Option<Tensor> {
        let outer = rw.reduced.dims[0] as usize;
        let chunk = outer.div_ceil(parts.min(outer).max(1));
        let parts = outer.div_ceil(chunk);
        let n_out = rw.kept.dims.iter().product::<i64>() as usize;
        let dtype = node.types().first()?.dtype;
        let mut partial = Tensor::zeros(dtype, &[parts, n_out]).ok()?;
        let base = out_ptr(&mut partial)?;
        let nr = rw.reduced.dims.len();
        let call = Shared((inputs, base));
        let status = (0..parts)
            .into_par_iter()
            .map(|p| {
                let (inputs, base) = call.get();
                let lo = p * chunk;
                let mut rdims = rw.reduced.dims.clone();
                rdims[0] = chunk.min(outer - lo) as i64;
                let ins: Vec<*const c_void> = inputs
                    .iter()
                    .zip(sizes)
                    .enumerate()
                    .map(|(k, (&ptr, &size))| {
                        let step = rw.reduced.strides[k * nr] as isize * size as isize;
                        ptr.cast::<u8>().wrapping_offset(lo as isize * step).cast()
                    })
                    .collect();
                let out = base
                    .cast::<u8>()
                    .wrapping_add(p * n_out * dtype.size())
                    .cast::<c_void>();
                // SAFETY: as for a whole reduction, on the sub-space whose outermost reduced
                // index runs over `[lo, lo + rdims[0])`: the operand pointers are moved to
                // index `lo` of that dimension (inside the walk checked before), and piece `p`
                // writes its own row of `n_out` elements of `partial`.
                unsafe { call_reduce(f, rw, &rdims, &ins, 0, n_out as i64, out) }
            })
            .reduce(|| 0, |a, b| if a != 0 { a } else { b });
        (status == 0).then_some(partial)
    }
}

/// Combines the `[pieces, outputs]` partial results of a split reduction with the
/// interpreter's reduction (the same op: sums of partial sums, maxima of maxima, …).
fn combine(op: ReduceOp, partial: &Tensor, shape: &[usize]) -> Result<Tensor, KernelError> {
    let ty = [TensorType::of_rank(partial.dtype(), 2)];
    let out_ty = [TensorType::of_rank(partial.dtype(), 1)];
    let ctx = KernelCtx {
        input_types: &ty,
        output_types: &out_ty,
    };
    let reduce = Op::Reduce {
        op,
        axes: smallvec::smallvec![0],
    };
    let mut r = kernels::eval(&reduce, &[partial], &ctx)?;
    let t = r
        .pop()
        .ok_or_else(|| KernelError::Value("reduce: no output".into()))?;
    Ok(t.reshape(shape)?)
}

/// Calls reduction kernel `f` for outputs `[start, end)` over the reduced extents `rdims`.
///
/// # Safety
/// `rw`, `rdims` and `inputs` must describe a walk inside every operand's storage, and `out`
/// must hold the outputs `[start, end)` of the reduction's dtype, written by no one else.
pub(crate) unsafe fn call_reduce(
    f: ReduceFn,
    rw: &ReduceWalk,
    rdims: &[i64],
    inputs: &[*const c_void],
    start: i64,
    end: i64,
    out: *mut c_void,
) -> i32 {
    // SAFETY: the caller guarantees the walk and the output; the extents and strides arrays
    // have the lengths passed alongside them.
    unsafe {
        f(
            start,
            end,
            rw.kept.dims.len() as i32,
            rw.kept.dims.as_ptr(),
            rdims.len() as i32,
            rdims.as_ptr(),
            inputs.as_ptr(),
            rw.kept.strides.as_ptr(),
            rw.reduced.strides.as_ptr(),
            rw.cols as i32,
            out,
        )
    }
}

impl NativeExecutable {
    /// Runs one node: its kernel, or the interpreter's for small arrays and nodes without one.
    fn step(&self, call: Call<'_>) -> Result<Vec<Tensor>, RuntimeError> {
        let Call {
            index,
            node,
            args,
            donor,
            out,
        } = call;
        let kernel = self.kernels.get(index).unwrap_or(&Kernel::Interp);
        // Every node with a kernel runs it, however small its arrays: the layout is kept
        // between calls (`LastLayout`), so even on a few elements the C call is the cheaper one.
        match kernel {
            Kernel::Interp => match self.inner.run(node, args) {
                Some(result) => result,
                None => eval_node(node, args),
            },
            Kernel::Elemwise(f, cost, last) => {
                self.elemwise((*f, *cost, last), node, args, (donor, out))
            }
            Kernel::Epilogue(f, last) => crate::epilogue::fused_matmul(*f, last, node, args),
            Kernel::Reduce {
                f,
                axes,
                fused,
                cost,
                last,
            } => self.reduce((*f, axes, *fused, *cost), last, node, args, out),
            Kernel::Loop(_) | Kernel::Staged(..) => {
                let looped = match (kernel, node.op()) {
                    (Kernel::Loop(f), Some(Op::Scan(s))) => crate::recurrence::run(*f, s, args),
                    (Kernel::Staged(f, p), Some(Op::Scan(s))) => crate::staged::run(*f, p, s, args),
                    _ => None,
                };
                if looped.is_none() {
                    self.interpreted_loops.fetch_add(1, Ordering::Relaxed);
                }
                match (looped, node.op()) {
                    (Some(outs), _) => Ok(outs),
                    (None, Some(op)) => {
                        run_interpreted(op, args).unwrap_or_else(|| eval_node(node, args))
                    }
                    (None, None) => eval_node(node, args),
                }
            }
        }
    }
}

impl NativeExecutable {
    /// Runs a call. A call on more than [`PARALLEL_THRESHOLD`] input and constant elements,
    /// with more than one thread, runs on a rayon worker (unless already on one): each of its
    /// parallel kernels then starts on that worker, which begins its own part at once while
    /// the others join, instead of the calling thread handing every kernel to the pool and
    /// sleeping until a worker has woken, run it and woken it again. The hand-off is paid
    /// once per call rather than once per parallel kernel (W5 has three).
    fn run_call(
        &self,
        values: Vec<Tensor>,
        outs: &[Option<Tensor>],
    ) -> Result<Vec<Tensor>, RuntimeError> {
        let elements = values.iter().map(Tensor::numel);
        if self.parallel
            && elements.fold(self.constant_elements, usize::saturating_add) > PARALLEL_THRESHOLD
            && rayon::current_num_threads() > 1
            && rayon::current_thread_index().is_none()
        {
            return rayon::scope(|_| self.run_here(values, outs));
        }
        self.run_here(values, outs)
    }

    /// Runs a call on this thread: replayed when its inputs' layout was recorded, else
    /// through the plan (recording it on the second call with one layout).
    fn run_here(
        &self,
        values: Vec<Tensor>,
        outs: &[Option<Tensor>],
    ) -> Result<Vec<Tensor>, RuntimeError> {
        let Some(replay) = &self.replay else {
            return self.plan.execute_into(values, None, outs, |c| self.step(c));
        };
        let mut recorder = match replay.replay(&values, outs) {
            Ok(result) => return Ok(result),
            Err(Decision::Normal) => {
                return self.plan.execute_into(values, None, outs, |c| self.step(c));
            }
            Err(Decision::Record(recorder)) => recorder,
        };
        recorder.start(self.plan.n_slots(), self.plan.constants());
        let output_slots: SmallVec<[usize; 4]> = self.plan.output_slots().collect();
        let result = self.plan.execute_into(values, None, outs, |call| {
            let (index, node, args) = (call.index, call.node, call.args);
            let results = self.step(call)?;
            let ran = Ran {
                node,
                slots: self.plan.wiring(index),
                args,
                outs: &results,
                launch: self.launch_of(index, args, &results),
            };
            recorder.step(ran, &output_slots);
            Ok(results)
        });
        if result.is_ok() {
            replay.keep(recorder, &output_slots);
        }
        result
    }

    /// The C kernel step `index` just ran on `args` giving `outs`, with its layout and its work
    /// (elements times cost), for a recording; `None` for a node without a kernel.
    fn launch_of(
        &self,
        index: usize,
        args: &[&Tensor],
        outs: &[Tensor],
    ) -> Option<(LaunchOf, usize)> {
        let first = outs.first()?;
        match self.kernels.get(index)? {
            Kernel::Elemwise(f, cost, last) => {
                let kept = last.current(args)?;
                (first.shape() == kept.layout.shape.as_slice()).then_some(())?;
                let work = kept.layout.numel.saturating_mul(*cost);
                Some((LaunchOf::Elem(*f, kept), work))
            }
            Kernel::Reduce {
                f,
                fused,
                cost,
                last,
                ..
            } => {
                let operands = if *fused {
                    args
                } else {
                    &args[..args.len().min(1)]
                };
                let kept = last.current(operands)?;
                (first.shape() == kept.layout.out_shape.as_slice()).then_some(())?;
                let rw = &kept.layout.walk;
                let elements = rw.kept.dims.iter().chain(&rw.reduced.dims).product::<i64>();
                let work = (elements.max(0) as usize).saturating_mul(*cost);
                Some((LaunchOf::Reduce(*f, kept), work))
            }
            Kernel::Interp | Kernel::Epilogue(..) | Kernel::Loop(_) | Kernel::Staged(..) => None,
        }
    }
}

impl Executable for NativeExecutable {
    fn run_timed(
        &self,
        values: Vec<Tensor>,
        times: Option<&mut [Duration]>,
    ) -> Result<Vec<Tensor>, RuntimeError> {
        match times {
            None => self.run_call(values, &[]),
            times => self.plan.execute(values, times, |call| self.step(call)),
        }
    }

    fn run_into(
        &self,
        values: Vec<Tensor>,
        outs: &[Option<Tensor>],
    ) -> Result<Vec<Tensor>, RuntimeError> {
        self.run_call(values, outs)
    }

    fn schedule(&self) -> Vec<Arc<Node>> {
        self.plan.schedule().cloned().collect()
    }
}
