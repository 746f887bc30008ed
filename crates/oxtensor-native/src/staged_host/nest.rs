//! A host call of a nested loop: a `Scan` node inside a staged step whose own step is
//! elementwise or stages (`emit::staged_host`). Its C loop (the elementwise loop, which keeps
//! scalar states in registers, or a staged loop) is laid out once per run of the outer loop, from
//! the extents of the outer values it reads (fixed for the run), and each outer step only
//! points it at that step's values, copies its states' initial rows into its buffers, calls
//! its C function and copies its outputs into the outer loop's buffers: nothing is allocated
//! per step.
//!
//! The inner loop's buffers need their rows known before the outer loop: its step count is
//! known then (`n_steps` a value known before the outer loop, or the sequences' lengths), or
//! every output keeps only its last value (a ring, `Scan::last_only`), so the count may change
//! from step to step (an `n_steps` computed in the outer step, an `until` condition). Values
//! of the inner step known before the inner loop (its params) must be computable from values
//! known before the outer one. Anything else is not laid out, and the outer loop goes to the
//! interpreter's.

use super::{HostCalls, copy_to, host_call};
use crate::emit::{Nested, StagedLoop, ValueKind};
use crate::recurrence::{LoopFn, c_strides};
use crate::staged::{Layout, Line, Prepared, StagedFn, prepare};
use crate::staged_index::FirstStep;
use oxtensor_data::{DType, Element, Tensor, dispatch_dtype};
use oxtensor_graph::Scan;
use oxtensor_graph::scan::sequence_steps;
use std::ffi::c_void;

/// An operand of the inner loop read from the outer loop's buffers: its layout there, and,
/// when that is not C order, the contiguous tensor it is copied into each step.
struct Operand {
    layout: Layout,
    copy: Option<Tensor>,
}

impl Operand {
    /// The operand laid out as `layout`, of `dtype`.
    fn new(layout: &Layout, dtype: DType) -> Option<Operand> {
        let copy = match layout.strides == c_strides(&layout.shape) {
            true => None,
            false => Some(Tensor::zeros(dtype, &layout.shape).ok()?),
        };
        Some(Operand {
            layout: layout.clone(),
            copy,
        })
    }

    /// The address of the operand's elements in C order, given its address `src`.
    ///
    /// # Safety
    /// Every element of the operand's layout (offset `Σ iₖ·strideₖ` elements from `src`) is
    /// readable, of its dtype.
    unsafe fn place(&self, src: *const c_void) -> *const c_void {
        match &self.copy {
            None => src,
            Some(t) => {
                let dst = t.data_ptr().cast_mut();
                // SAFETY: `src` addresses the operand (the caller's contract); `t` is a
                // contiguous tensor of its extents and dtype which only this call writes, and
                // which no kernel holds (it is handed to C as a pointer only).
                unsafe { copy_to(src.cast(), &self.layout, false, dst, t.dtype().size()) };
                dst.cast_const().cast()
            }
        }
    }
}

/// One output buffer of the inner loop: a state's initial rows and its trajectory (or ring),
/// or a mapped output's rows.
struct Buffer {
    /// The rows, contiguous.
    rows: Tensor,
    /// The initial rows a state needs before step 0 (0 for a mapped output).
    need: usize,
    /// The ring's rows (0: a whole trajectory).
    ring: usize,
    /// The bytes of one row.
    row_bytes: usize,
    /// The bytes of one element.
    size: usize,
    /// For a state needing initial rows: the layout of its last `need` initial rows in the
    /// initial operand, and their offset from it, in elements.
    init: Option<(Layout, bool, isize)>,
}

/// A nested loop laid out for one run of the outer loop (see the module documentation).
pub(crate) struct NestCall {
    /// The inner loop's node (for its step count).
    scan: Scan,
    /// The step count, when known before the outer loop.
    total: Option<usize>,
    /// The dtype of the `n_steps` operand.
    n_steps_dtype: DType,
    /// Each sequence's length, and the windows of its taps.
    lengths: Vec<usize>,
    windows: Vec<i64>,
    /// What the kernel of its kind needs besides the buffers.
    kernel: Kernel,
    sequences: Vec<Operand>,
    others: Vec<Operand>,
    seq_ptrs: Vec<*const c_void>,
    oth_ptrs: Vec<*const c_void>,
    buffers: Vec<Buffer>,
    buf_ptrs: Vec<*mut c_void>,
    /// The extents of the node's outputs.
    shapes: Vec<Vec<usize>>,
}

/// Per output of the inner loop, the extents and dtype of its rows.
type Elements = Vec<(Vec<usize>, DType)>;

/// The inner kernel's own numbers.
enum Kernel {
    /// An elementwise loop over step values of `n` elements.
    Loop { n: i64 },
    /// A staged loop: its `d`, scratch, params (after the other values in `oth`) and host
    /// calls.
    Staged {
        dims: Vec<i64>,
        scratch: Vec<Line>,
        params: Vec<Tensor>,
        host: HostCalls,
    },
}

/// The extent of the step values of elementwise loop `s` (of rank `rank`) given the extents
/// of its body inputs: the one every input of that rank has (the others are 0-d).
fn element(rank: usize, shapes: &[Vec<usize>]) -> Option<Vec<usize>> {
    let mut element: Option<&Vec<usize>> = None;
    for shape in shapes {
        if shape.len() == rank && rank > 0 {
            if element.is_some_and(|e| e != shape) {
                return None;
            }
            element = element.or(Some(shape));
        } else if !shape.is_empty() {
            return None;
        }
    }
    Some(element.cloned().unwrap_or_default())
}

/// The extents of the outputs of nested loop `inner` (the loop of `s`) on operands laid out as
/// `layouts` of dtypes `dtypes` (`known`: their values when known before the outer loop), or
/// `None` when it cannot be laid out before the outer loop.
pub(crate) fn output_shapes(
    inner: &Nested,
    s: &Scan,
    layouts: &[Layout],
    known: &[Option<&Tensor>],
    dtypes: &[DType],
) -> Option<Vec<Vec<usize>>> {
    Some(NestCall::new(inner, s, layouts, known, dtypes)?.shapes)
}

impl NestCall {
    /// Lays out `inner`, the C loop of `s`, on operands (`n_steps`, sequences, initial
    /// buffers, other values) laid out as `layouts` in the outer loop, of dtypes `dtypes`
    /// (`known`: their values when known before the outer loop).
    pub fn new(
        inner: &Nested,
        s: &Scan,
        layouts: &[Layout],
        known: &[Option<&Tensor>],
        dtypes: &[DType],
    ) -> Option<NestCall> {
        let (n_seq, n_state) = (s.sequence_taps.len(), s.state_taps.len());
        let n = layouts.len();
        if n != 1 + n_seq + n_state + s.n_other() || known.len() != n || dtypes.len() != n {
            return None;
        }
        let seq_l = &layouts[1..1 + n_seq];
        let init_l = &layouts[1 + n_seq..1 + n_seq + n_state];
        let other_l = &layouts[1 + n_seq + n_state..];
        let lengths = seq_l
            .iter()
            .map(|l| l.shape.first().copied())
            .collect::<Option<Vec<usize>>>()?;
        let windows = s
            .sequence_taps
            .iter()
            .zip(&lengths)
            .map(|(taps, &len)| sequence_steps(taps, len).unwrap_or(0) as i64)
            .collect::<Vec<i64>>();
        let total = match known[0] {
            Some(t) => Some(s.steps(*t.to_vec_as::<i64>().first()?, &lengths).ok()?),
            None => None,
        };
        let ring = match inner {
            Nested::Loop(l) => &l.ring,
            Nested::Staged(p) => &p.ring,
        };
        let rings = (0..s.n_outputs()).all(|i| ring.get(i).is_some_and(|&r| r > 0));
        if total == Some(0) || ((total.is_none() || s.until) && !rings) {
            return None;
        }
        // The body inputs' extents, and their dtypes, which the kernel was generated for.
        let body = s.body.input_types();
        let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(body.len());
        let mut operand_dtypes = Vec::with_capacity(body.len());
        let tapped = seq_l
            .iter()
            .chain(init_l)
            .zip(s.sequence_taps.iter().chain(&s.state_taps))
            .zip(&dtypes[1..]);
        for ((l, taps), &dtype) in tapped {
            let row = l.shape.get(1..)?;
            for _ in taps {
                shapes.push(row.to_vec());
                operand_dtypes.push(dtype);
            }
        }
        for (l, &dtype) in other_l.iter().zip(&dtypes[1 + n_seq + n_state..]) {
            shapes.push(l.shape.clone());
            operand_dtypes.push(dtype);
        }
        if body.len() != shapes.len()
            || body.iter().zip(&operand_dtypes).any(|(b, &d)| b.dtype != d)
        {
            return None;
        }
        let (kernel, elements) = match inner {
            Nested::Loop(_) => {
                let rank = s.body.outputs().first()?.ndim();
                let element = element(rank, &shapes)?;
                let n = element.iter().product::<usize>();
                if n == 0 {
                    return None;
                }
                let kernel = Kernel::Loop { n: n as i64 };
                let elements = (0..s.n_outputs())
                    .map(|i| Some((element.clone(), s.body.outputs().get(i)?.dtype())))
                    .collect::<Option<Vec<_>>>()?;
                (kernel, elements)
            }
            Nested::Staged(p) => {
                let rows = init_l
                    .iter()
                    .map(|l| l.shape.get(1..))
                    .collect::<Option<Vec<_>>>()?;
                Self::staged(
                    p,
                    s,
                    &shapes,
                    &known[1 + n_seq + n_state..],
                    &rows,
                    &windows,
                )?
            }
        };
        let sequences = seq_l
            .iter()
            .zip(&dtypes[1..])
            .map(|(l, &d)| Operand::new(l, d))
            .collect::<Option<Vec<_>>>()?;
        let others = other_l
            .iter()
            .zip(&dtypes[1 + n_seq + n_state..])
            .map(|(l, &d)| Operand::new(l, d))
            .collect::<Option<Vec<_>>>()?;
        let mut buffers = Vec::with_capacity(s.n_outputs());
        let mut out_shapes = Vec::with_capacity(s.n_outputs());
        for (i, (element, dtype)) in elements.iter().enumerate() {
            let dtype = *dtype;
            let need = s.state_taps.get(i).map_or(0, |taps| Scan::buffer_len(taps));
            let ring = ring.get(i).copied().unwrap_or(0);
            let n_rows = match ring {
                0 => need.checked_add(total?)?,
                _ => ring,
            };
            let init = match init_l.get(i) {
                Some(l) if need > 0 => {
                    let len = *l.shape.first()?;
                    let start = len.checked_sub(need)?;
                    let mut shape = l.shape.clone();
                    shape[0] = need;
                    let layout = Layout {
                        shape,
                        strides: l.strides.clone(),
                    };
                    let contiguous = layout.strides == c_strides(&layout.shape);
                    Some((layout, contiguous, start as isize * *l.strides.first()?))
                }
                _ => None,
            };
            let shape: Vec<usize> = std::iter::once(n_rows).chain(element.clone()).collect();
            let rows = Tensor::zeros(dtype, &shape).ok()?;
            let row_bytes = element.iter().product::<usize>() * dtype.size();
            let leading = if ring > 0 { 1 } else { total? };
            out_shapes.push(std::iter::once(leading).chain(element.clone()).collect());
            buffers.push(Buffer {
                rows,
                need,
                ring,
                row_bytes,
                size: dtype.size(),
                init,
            });
        }
        let buf_ptrs = buffers
            .iter()
            .map(|b| b.rows.data_ptr().cast_mut().cast())
            .collect();
        let n_params = match &kernel {
            Kernel::Staged { params, .. } => params.len(),
            Kernel::Loop { .. } => 0,
        };
        let oth_ptrs = vec![std::ptr::null(); others.len() + n_params];
        Some(NestCall {
            scan: s.clone(),
            total,
            n_steps_dtype: dtypes[0],
            lengths,
            windows,
            kernel,
            seq_ptrs: vec![std::ptr::null(); sequences.len()],
            sequences,
            others,
            oth_ptrs,
            buffers,
            buf_ptrs,
            shapes: out_shapes,
        })
    }

    /// The kernel of staged loop `p` (of `s`) laid out for body inputs of extents `shapes`,
    /// other values `others` where known, initial rows of extents `rows` and sequence windows
    /// `windows`, with each output's extents and dtype.
    fn staged(
        p: &StagedLoop,
        s: &Scan,
        shapes: &[Vec<usize>],
        others: &[Option<&Tensor>],
        rows: &[&[usize]],
        windows: &[i64],
    ) -> Option<(Kernel, Elements)> {
        // No tap is known before the outer loop: slice bounds read from taps do not lay out.
        let mut first = FirstStep::new(p, s, &[], &[], windows);
        let Prepared {
            layouts,
            params,
            dims,
            scratch,
        } = prepare(p, shapes, others, rows, &mut first)?;
        let host = HostCalls::new(p, &layouts, &params)?;
        let params = p
            .values
            .iter()
            .zip(params)
            .filter(|(v, _)| matches!(v.kind, ValueKind::Param { .. }))
            .map(|(_, t)| t)
            .collect::<Option<Vec<Tensor>>>()?;
        let elements = p
            .outputs
            .iter()
            .map(|&v| Some((layouts.get(v)?.shape.clone(), p.values.get(v)?.ty.dtype)))
            .collect::<Option<Vec<_>>>()?;
        let kernel = Kernel::Staged {
            dims,
            scratch,
            params,
            host,
        };
        Some((kernel, elements))
    }

    /// Runs the inner loop on the operands at `ins` (after the address of its C function),
    /// writing its outputs to `outs`; `None` when it fails or does not fit its layout (the
    /// outer loop then ends, and the interpreter's loop reports or computes it).
    ///
    /// # Safety
    /// As [`super::HostCalls::run`], where `ins[0]` is the address of the inner loop's C
    /// function (emitted for the [`Nested`] loop this call was laid out for) and the operands
    /// follow, laid out as at [`Self::new`].
    pub unsafe fn run(
        &mut self,
        ins: *const *const c_void,
        outs: *const *mut c_void,
    ) -> Option<()> {
        // SAFETY: `ins` has the function's address first (the caller's contract).
        let f = unsafe { *ins };
        if f.is_null() {
            return None;
        }
        // SAFETY: the operands follow the function (the caller's contract).
        let operand = |k: usize| unsafe { *ins.add(1 + k) };
        let total = match self.total {
            Some(t) => t,
            None => {
                let n: i64;
                // SAFETY: operand 0 is `n_steps`, a 0-d integer of its dtype.
                unsafe {
                    dispatch_dtype!(self.n_steps_dtype, T => {
                        n = i64::cast_from(*operand(0).cast::<T>());
                    });
                }
                self.scan.steps(n, &self.lengths).ok()?
            }
        };
        if total == 0 {
            return None;
        }
        let n_seq = self.sequences.len();
        for (k, op) in self.sequences.iter().enumerate() {
            // SAFETY: operand `1 + k` is sequence `k`, laid out as `op`'s layout.
            self.seq_ptrs[k] = unsafe { op.place(operand(1 + k)) };
        }
        for (i, b) in self.buffers.iter().enumerate() {
            if let Some((layout, contiguous, offset)) = &b.init {
                let size = b.size;
                // SAFETY: operand `1 + n_seq + i` is state `i`'s initial buffer, whose last
                // `need` rows start `offset` elements from it and are laid out as `layout`;
                // the buffer's first `need` rows have room for them and are not the operand.
                unsafe {
                    let src = operand(1 + n_seq + i)
                        .cast::<u8>()
                        .offset(offset * size as isize);
                    copy_to(src, layout, *contiguous, b.rows.data_ptr().cast_mut(), size);
                }
            }
        }
        let n_state = self.scan.state_taps.len();
        for (k, op) in self.others.iter().enumerate() {
            // SAFETY: operand `1 + n_seq + n_state + k` is other value `k`, laid out as `op`'s.
            self.oth_ptrs[k] = unsafe { op.place(operand(1 + n_seq + n_state + k)) };
        }
        let n_others = self.others.len();
        let mut done = 0i64;
        let status = match &mut self.kernel {
            Kernel::Loop { n } => {
                // SAFETY: the kernel is the elementwise loop of `Nested::Loop` (the caller's
                // contract), of signature `LoopFn`; as `recurrence::run` lays it out (see its
                // safety note): sequences of rows of `n` elements, contiguous, with the
                // windows of their lengths; the states' buffers with their initial rows and
                // room for `total` steps (or a ring) of `n` elements; the other values
                // contiguous, `n` elements or one; the dtypes checked to be the body's.
                unsafe {
                    let f = std::mem::transmute::<*const c_void, LoopFn>(f);
                    f(
                        total as i64,
                        *n,
                        self.seq_ptrs.as_ptr(),
                        self.windows.as_ptr(),
                        self.oth_ptrs.as_ptr(),
                        self.buf_ptrs.as_ptr(),
                        &mut done,
                    )
                }
            }
            Kernel::Staged {
                dims,
                scratch,
                params,
                host,
            } => {
                for (slot, t) in self.oth_ptrs[n_others..].iter_mut().zip(params.iter()) {
                    *slot = t.data_ptr().cast();
                }
                // SAFETY: the kernel is the staged loop of `Nested::Staged` (the caller's
                // contract), of signature `StagedFn`, laid out by `prepare` for body inputs of
                // the extents and dtypes of these operands (as `staged::run` lays out a loop:
                // see its safety note): sequences contiguous with the windows of their
                // lengths, the states' buffers with their initial rows and room for `total`
                // steps (or a ring), the other values contiguous and the params after them,
                // scratch and `d` from `prepare`, and the inner host calls laid out for its
                // values; all live until it returns.
                unsafe {
                    let f = std::mem::transmute::<*const c_void, StagedFn>(f);
                    f(
                        total as i64,
                        dims.as_ptr(),
                        self.seq_ptrs.as_ptr(),
                        self.windows.as_ptr(),
                        self.oth_ptrs.as_ptr(),
                        self.buf_ptrs.as_ptr(),
                        scratch.as_mut_ptr().cast(),
                        &mut done,
                        host.context(),
                        host_call,
                    )
                }
            }
        };
        let done = usize::try_from(done)
            .ok()
            .filter(|&d| d >= 1 && d <= total)?;
        if status != 0 {
            return None;
        }
        for (j, b) in self.buffers.iter().enumerate() {
            let (row, n_rows) = match b.ring {
                0 if done == total => (b.need, done),
                0 => return None,
                ring => ((done - 1 + b.need) % ring, 1),
            };
            // SAFETY: the buffer holds `need + total` rows (or `ring`), of which these were
            // written; `outs[j]` has room for output `j`'s elements, laid out from
            // `self.shapes[j]`, which is these rows' extents, and is the outer loop's buffer.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    b.rows.data_ptr().add(row * b.row_bytes),
                    (*outs.add(j)).cast::<u8>(),
                    n_rows * b.row_bytes,
                );
            }
        }
        Some(())
    }
}
