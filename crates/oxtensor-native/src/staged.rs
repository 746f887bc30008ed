//! Running a staged whole-loop kernel (`emit::staged`): working out the shape of every value
//! of the step from a `Scan` node's operands, checking that every stage reads and writes
//! within its buffers, allocating the scratch and the trajectories once, and calling the C
//! loop. Anything the kernel does not take (shapes that broadcast at run time or change from
//! step to step, mismatched dtypes, no steps, empty values read by stages other than
//! elementwise ones, nests and products, an element that is an error) is
//! left to the interpreter's loop, which computes the node or reports the error in its own
//! words (naming the step and the inner variable).

use crate::emit::{Stage, StagedLoop, ValueKind};
use crate::recurrence::{LoopOperands, c_strides, trajectory};
use crate::staged_index::{self as index, FirstStep};
use crate::staged_shapes as shapes;
use oxtensor_data::Tensor;
use oxtensor_graph::{Scan, TensorType};
use rustc_hash::FxHashMap;
use std::ffi::c_void;

/// The C signature of a staged loop kernel (see `emit::staged::emit`).
pub(crate) type StagedFn = unsafe extern "C" fn(
    i64,
    *const i64,
    *const *const c_void,
    *const i64,
    *const *const c_void,
    *const *mut c_void,
    *mut c_void,
    *mut i64,
    *mut c_void,
    crate::staged_host::HostFn,
) -> i32;

/// A value's extents and the strides (in elements, from the pointer of the buffer it lives
/// in) its elements are read at.
#[derive(Clone)]
pub(crate) struct Layout {
    /// The extents.
    pub shape: Vec<usize>,
    /// The strides, in elements.
    pub strides: Vec<isize>,
}

impl Layout {
    /// A C-contiguous buffer of `shape`.
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: c_strides(shape),
        }
    }

    fn numel(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Whether `shape` fits the static type `ty` (rank, and every static extent).
fn fits(ty: &TensorType, shape: &[usize]) -> bool {
    ty.ndim() == shape.len()
        && ty
            .shape
            .iter()
            .zip(shape)
            .all(|(s, &d)| s.is_none_or(|s| s == d))
}

/// One 64-byte line of scratch (so every scratch value starts aligned for vector loads).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct Line([u8; 64]);

/// What [`layouts`] works out: every value's layout, the values known before the loop, and
/// the numbers of `d` the indexed views take (where they start, and the numbers).
type Laid = (Vec<Layout>, Vec<Option<Tensor>>, Vec<(usize, Vec<i64>)>);

/// The layouts of every value of `p` given the shapes of the body inputs, and the value of
/// each value known before the loop (params, and the other values `others`, which body
/// inputs from `n_taps` on are, when known: a nested loop's others may be values of the
/// outer step; `None` for the rest), or `None` when some stage's operands do not fit it or
/// a param cannot be computed (see the module documentation).
fn layouts(
    p: &StagedLoop,
    inputs: &[Vec<usize>],
    others: &[Option<&Tensor>],
    first: &mut FirstStep<'_>,
) -> Option<Laid> {
    let mut numbers = Vec::new();
    let mut out: Vec<Option<Layout>> = vec![None; p.values.len()];
    let mut params: Vec<Option<Tensor>> = vec![None; p.values.len()];
    let mut hosted = FxHashMap::default();
    let n_taps = inputs.len().checked_sub(others.len())?;
    for (v, value) in p.values.iter().enumerate() {
        match &value.kind {
            ValueKind::Input(k) => {
                out[v] = Some(Layout::contiguous(inputs.get(*k)?));
                if let Some(t) = k.checked_sub(n_taps).and_then(|o| others.get(o)?.as_ref()) {
                    params[v] = Some((*t).clone());
                }
            }
            ValueKind::View { of, order } => {
                let base = out.get(*of)?.as_ref()?;
                let kept: Vec<usize> = order.iter().flatten().copied().collect();
                if (0..base.shape.len()).any(|d| !kept.contains(&d) && base.shape[d] != 1) {
                    return None;
                }
                let (shape, strides) = order
                    .iter()
                    .map(|o| match o {
                        Some(d) => Some((*base.shape.get(*d)?, *base.strides.get(*d)?)),
                        None => Some((1, 0)),
                    })
                    .collect::<Option<(Vec<usize>, Vec<isize>)>>()?;
                out[v] = Some(Layout { shape, strides });
            }
            ValueKind::Param { var, args } => {
                let t = shapes::param(var, args, &out, &params)?;
                if t.dtype() != value.ty.dtype {
                    return None;
                }
                out[v] = Some(Layout::contiguous(t.shape()));
                params[v] = Some(t.to_contiguous());
            }
            ValueKind::Indexed { of, entries, at } => {
                let base = out.get(*of)?.as_ref()?;
                let (n, layout) = first.entries(entries, base, &params)?;
                numbers.push((*at, n));
                out[v] = Some(layout);
            }
            ValueKind::Reshape { of, shape } => {
                let base = out.get(*of)?.as_ref()?;
                let extents = shapes::reshaped(base, params.get(*shape)?.as_ref()?)?;
                out[v] = Some(Layout::contiguous(&extents));
            }
            ValueKind::Computed => {}
            // Never stored nor read: any layout.
            ValueKind::Folded => {
                out[v] = Some(Layout::contiguous(&[]));
                continue;
            }
        }
        // Computed values get their layouts from their stages, which come after every value
        // they read; views of them come after them.
        if value.kind == ValueKind::Computed {
            let shape = computed_shape(p, v, &out, &params, &mut hosted)?;
            out[v] = Some(Layout::contiguous(&shape));
        }
        if !fits(&value.ty, &out[v].as_ref()?.shape) {
            return None;
        }
    }
    Some((
        out.into_iter().collect::<Option<Vec<_>>>()?,
        params,
        numbers,
    ))
}

/// The shape of computed value `v`, from the operands of the stages writing it: one stage,
/// or one per branch of an `IfElse` (whose shapes must agree, or the loop is not laid out).
/// `hosted` keeps each host call's output shapes, worked out once for all its outputs.
fn computed_shape(
    p: &StagedLoop,
    v: usize,
    known: &[Option<Layout>],
    params: &[Option<Tensor>],
    hosted: &mut FxHashMap<usize, Vec<Vec<usize>>>,
) -> Option<Vec<usize>> {
    let mut shape: Option<Vec<usize>> = None;
    for (i, st) in p.stages.iter().enumerate() {
        if let Some(s) = written_shape(p, (i, st), v, known, params, hosted)? {
            if shape.as_ref().is_some_and(|have| *have != s) {
                return None;
            }
            shape = Some(s);
        }
    }
    shape
}

/// The shape stage `st` (number `i`) writes value `v` with (`Some(None)` when it does not
/// write `v`), or `None` when its operands do not fit it (see [`computed_shape`]).
fn written_shape(
    p: &StagedLoop,
    (i, st): (usize, &Stage),
    v: usize,
    known: &[Option<Layout>],
    params: &[Option<Tensor>],
    hosted: &mut FxHashMap<usize, Vec<Vec<usize>>>,
) -> Option<Option<Vec<usize>>> {
    let shape_of = |x: usize| known.get(x)?.as_ref().map(|l| l.shape.clone());
    let shape = match st {
        Stage::Elem { args, outs, .. } if outs.contains(&v) => {
            let rank = p.values[v].ty.ndim();
            let mut shape: Option<Vec<usize>> = None;
            for &(x, one) in args {
                let s = shape_of(x)?;
                if one {
                    continue;
                }
                if shape.as_ref().is_some_and(|have| *have != s) {
                    return None;
                }
                shape = Some(s);
            }
            let shape = shape.unwrap_or_else(|| vec![1; rank]);
            if shape.len() != rank {
                return None;
            }
            shape
        }
        Stage::Nest(n) if n.outs.contains(&v) => {
            let shape = shapes::iteration(p, n, known, params)?;
            match &n.reduce {
                Some((_, axes)) => shape
                    .iter()
                    .enumerate()
                    .filter(|(d, _)| !axes.contains(d))
                    .map(|(_, &e)| e)
                    .collect(),
                None => shape,
            }
        }
        Stage::Gather { from, out, .. } if *out == v => shape_of(*from)?,
        Stage::Join {
            args, axis, out, ..
        } if *out == v => {
            let mut shape = shape_of(*args.first()?)?;
            for &a in &args[1..] {
                let s = shape_of(a)?;
                let other = |d: usize| d != *axis && s.get(d) != shape.get(d);
                if s.len() != shape.len() || (0..s.len()).any(other) {
                    return None;
                }
                shape[*axis] = shape.get(*axis)?.checked_add(s[*axis])?;
            }
            shape
        }
        Stage::Split {
            x,
            sizes,
            axis,
            outs,
            ..
        } if outs.contains(&v) => {
            let shape = shape_of(*x)?;
            let sizes = params.get(*sizes)?.as_ref()?.to_vec_as::<i64>();
            let sizes: Vec<usize> = sizes
                .iter()
                .map(|&n| usize::try_from(n).ok())
                .collect::<Option<_>>()?;
            if sizes.len() != outs.len() || sizes.iter().sum::<usize>() != *shape.get(*axis)? {
                return None;
            }
            let mut piece = shape;
            piece[*axis] = sizes[outs.iter().position(|&o| o == v)?];
            piece
        }
        Stage::Inc { x, out, acc, .. } | Stage::IncTake { x, out, acc, .. } if *out == v => {
            let shape = shape_of(*x)?;
            // `acc + inc(0, y)`: the sum's operands have one shape.
            if let Some(acc) = acc
                && shape_of(*acc)? != shape
            {
                return None;
            }
            shape
        }
        Stage::Take {
            x, axis, idx, out, ..
        } if *out == v => {
            let (sx, si) = (shape_of(*x)?, shape_of(*idx)?);
            let before = sx.get(..*axis)?.iter().copied();
            let after = sx.get(axis + 1..)?.iter().copied();
            before.chain(si).chain(after).collect()
        }
        Stage::Host {
            node,
            args,
            outs,
            nested,
            ..
        } if outs.contains(&v) => {
            let shapes = args
                .iter()
                .map(|&a| shape_of(a))
                .collect::<Option<Vec<_>>>()?;
            let values: Vec<Option<&Tensor>> = args
                .iter()
                .map(|&a| params.get(a).and_then(Option::as_ref))
                .collect();
            let k = outs.iter().position(|&o| o == v)?;
            if let Some(all) = hosted.get(&i) {
                return Some(Some(all.get(k)?.clone()));
            }
            let shapes = match (nested, node.node().op()) {
                (Some(inner), Some(oxtensor_graph::Op::Scan(s))) => {
                    let layouts: Vec<Layout> = args
                        .iter()
                        .map(|&a| known.get(a)?.clone())
                        .collect::<Option<_>>()?;
                    let dtypes: Vec<_> = args.iter().map(|&a| p.values[a].ty.dtype).collect();
                    crate::staged_host::nest::output_shapes(inner, s, &layouts, &values, &dtypes)?
                }
                _ => crate::staged_host::output_shapes(node, &shapes, &values)?,
            };
            let shape = shapes.get(k)?.clone();
            hosted.insert(i, shapes);
            shape
        }
        Stage::MatMul { a, b, acc, out, .. } if *out == v => {
            let (sa, sb) = (shape_of(*a)?, shape_of(*b)?);
            let (m, ka) = match sa.as_slice() {
                [k] => (None, *k),
                [m, k] => (Some(*m), *k),
                _ => return None,
            };
            let (kb, n) = match sb.as_slice() {
                [k] => (*k, None),
                [k, n] => (*k, Some(*n)),
                _ => return None,
            };
            if ka != kb {
                return None;
            }
            let shape: Vec<usize> = m.into_iter().chain(n).collect();
            if let Some(acc) = acc
                && shape_of(*acc)? != shape
            {
                return None;
            }
            shape
        }
        _ => return Some(None),
    };
    Some(Some(shape))
}

/// The `n0, n1, s0, s1` of a gather of a view laid out as `l` (of rank at most 2).
fn gather_dims(l: &Layout) -> [i64; 4] {
    match (l.shape.as_slice(), l.strides.as_slice()) {
        ([n0, n1], [s0, s1]) => [*n0 as i64, *n1 as i64, *s0 as i64, *s1 as i64],
        ([n], [s]) => [1, *n as i64, 0, *s as i64],
        _ => [1, 1, 0, 0],
    }
}

/// The `m, n, k, as0, as1, bs0, bs1` of a product of operands laid out as `a` and `b`.
fn product_dims(a: &Layout, b: &Layout) -> [i64; 7] {
    let (m, k, as0, as1) = match (a.shape.as_slice(), a.strides.as_slice()) {
        ([m, k], [s0, s1]) => (*m, *k, *s0, *s1),
        ([k], [s]) => (1, *k, 0, *s),
        _ => (0, 0, 0, 0),
    };
    let (n, bs0, bs1) = match (b.shape.as_slice(), b.strides.as_slice()) {
        ([_, n], [s0, s1]) => (*n, *s0, *s1),
        ([_], [s]) => (1, *s, 0),
        _ => (0, 0, 0),
    };
    [
        m as i64, n as i64, k as i64, as0 as i64, as1 as i64, bs0 as i64, bs1 as i64,
    ]
}

/// A staged loop laid out for one call: every value's layout, the values known before the
/// loop (see [`layouts`]), the numbers `d` the kernel reads and its scratch.
pub(crate) struct Prepared {
    /// Every value's layout.
    pub layouts: Vec<Layout>,
    /// The values known before the loop.
    pub params: Vec<Option<Tensor>>,
    /// The kernel's `d`.
    pub dims: Vec<i64>,
    /// The kernel's scratch, 64-byte aligned lines.
    pub scratch: Vec<Line>,
}

/// Lays out `p` for body inputs of extents `shapes` (the taps' rows, then the other values),
/// the other values `others` where known, and states whose initial rows have extents `rows`;
/// `None` when the kernel does not take them (see the module documentation).
pub(crate) fn prepare(
    p: &StagedLoop,
    shapes: &[Vec<usize>],
    others: &[Option<&Tensor>],
    rows: &[&[usize]],
    first: &mut FirstStep<'_>,
) -> Option<Prepared> {
    let (layouts, params, numbers) = layouts(p, shapes, others, first)?;
    // An empty constant (a draw's `size` when it has none) is read by no loop in C, only by
    // the host call and the executor; other empty values only by stages whose loops run over
    // extents (see `shapes::empty_values_ok`), else the loop goes to the interpreter's.
    if layouts.iter().zip(&p.values).any(|(l, v)| {
        l.numel() == 0 && !matches!(&v.kind, ValueKind::Param { args, .. } if args.is_empty())
    }) && !shapes::empty_values_ok(p, &layouts, &params)
    {
        return None;
    }
    // Each state's next value has the shape of its rows.
    for (i, row) in rows.iter().enumerate() {
        if layouts[*p.outputs.get(i)?].shape != *row {
            return None;
        }
    }
    let mut dims = vec![0i64; p.dims_len()];
    let mut scratch_bytes = 0usize;
    for (v, (value, l)) in p.values.iter().zip(&layouts).enumerate() {
        dims[p.numel_at(v)] = l.numel() as i64;
        if value.kind == ValueKind::Computed && p.home[v].is_none() {
            dims[p.offset_at(v)] = scratch_bytes as i64;
            let bytes = l.numel().checked_mul(value.ty.dtype.size())?;
            scratch_bytes = scratch_bytes.checked_add(bytes.div_ceil(64) * 64)?;
        }
    }
    for st in &p.stages {
        match st {
            Stage::MatMul { a, b, at, .. } => {
                let pd = product_dims(&layouts[*a], &layouts[*b]);
                dims[*at..*at + 7].copy_from_slice(&pd);
                // Room for the matrix in column order (see `StagedLoop::invariant_matrix`).
                if p.invariant_matrix(st).is_some() {
                    dims[*at + 7] = scratch_bytes as i64;
                    let bytes = layouts[*a]
                        .numel()
                        .checked_mul(p.values[*a].ty.dtype.size())?;
                    scratch_bytes = scratch_bytes.checked_add(bytes.div_ceil(64) * 64)?;
                }
            }
            Stage::Gather { from, at, .. } => {
                dims[*at..*at + 4].copy_from_slice(&gather_dims(&layouts[*from]));
            }
            Stage::Nest(n) => {
                let numbers = shapes::nest_dims(p, n, &layouts, &params)?;
                dims.get_mut(n.at..n.at + numbers.len())?
                    .copy_from_slice(&numbers);
            }
            Stage::Inc {
                y,
                entries,
                out,
                at,
                ..
            } => {
                let shape = &layouts[*out].shape;
                let n = index::inc_dims(first, entries, shape, &layouts[*y], &params)?;
                dims.get_mut(*at..at + n.len())?.copy_from_slice(&n);
            }
            Stage::Take {
                x, axis, idx, at, ..
            } => {
                let n = index::take_dims(&layouts[*x], &layouts[*idx], None, *axis)?;
                dims.get_mut(*at..at + n.len())?.copy_from_slice(&n);
            }
            Stage::IncTake {
                x,
                axis,
                y,
                idx,
                at,
                ..
            } => {
                let y = Some(&layouts[*y]);
                let n = index::take_dims(&layouts[*x], &layouts[*idx], y, *axis)?;
                dims.get_mut(*at..at + n.len())?.copy_from_slice(&n);
            }
            // The blocks are the elements of the dimensions before the axis.
            Stage::Join {
                axis, out: x, at, ..
            }
            | Stage::Split { axis, x, at, .. } => {
                dims[*at] = layouts[*x].shape.get(..*axis)?.iter().product::<usize>() as i64;
            }
            Stage::Elem { .. } | Stage::Host { .. } | Stage::Check { .. } | Stage::Mark(_) => {}
        }
    }
    for (at, n) in numbers {
        dims.get_mut(at..at + n.len())?.copy_from_slice(&n);
    }
    let scratch = vec![Line([0; 64]); scratch_bytes.div_ceil(64).max(1)];
    Some(Prepared {
        layouts,
        params,
        dims,
        scratch,
    })
}

/// Runs staged loop kernel `f` of `p` (the loop of `s`) on the node's operands (`n_steps`,
/// sequences, initial buffers, other values): one tensor per state and per mapped output,
/// or `None` when the kernel does not take them.
pub(crate) fn run(f: StagedFn, p: &StagedLoop, s: &Scan, args: &[&Tensor]) -> Option<Vec<Tensor>> {
    let body_inputs = s.body.input_types();
    let operands = LoopOperands::of(s, args)?;
    let windows = operands.windows(s);
    let LoopOperands {
        total,
        sequences,
        initial,
        others,
        ..
    } = operands;
    if total == 0 {
        return None;
    }
    // The body inputs' shapes and the operands they come from, whose dtypes must be theirs.
    let mut shapes: Vec<Vec<usize>> = Vec::with_capacity(body_inputs.len());
    let tapped = sequences
        .iter()
        .zip(&s.sequence_taps)
        .chain(initial.iter().zip(&s.state_taps));
    for (t, taps) in tapped {
        let row = t.shape().get(1..)?.to_vec();
        for _ in taps {
            if body_inputs.get(shapes.len())?.dtype != t.dtype() {
                return None;
            }
            shapes.push(row.clone());
        }
    }
    for t in others {
        if body_inputs.get(shapes.len())?.dtype != t.dtype() {
            return None;
        }
        shapes.push(t.shape().to_vec());
    }
    let mut first = FirstStep::new(p, s, sequences, initial, &windows);
    let known: Vec<Option<&Tensor>> = others.iter().map(|&t| Some(t)).collect();
    let rows = initial
        .iter()
        .map(|t| t.shape().get(1..))
        .collect::<Option<Vec<_>>>()?;
    let Prepared {
        layouts,
        params,
        dims,
        mut scratch,
    } = prepare(p, &shapes, &known, &rows, &mut first)?;
    let mut host = crate::staged_host::HostCalls::new(p, &layouts, &params)?;
    let seq_data: Vec<Tensor> = sequences.iter().map(|t| t.to_contiguous()).collect();
    let seq_ptrs: Vec<*const c_void> = seq_data.iter().map(|t| t.data_ptr().cast()).collect();
    // The other values, then the params (in the order of their values).
    let param_values = p
        .values
        .iter()
        .zip(params)
        .filter(|(v, _)| matches!(v.kind, ValueKind::Param { .. }))
        .map(|(_, t)| t);
    let other_data: Vec<Tensor> = others
        .iter()
        .map(|t| Some(t.to_contiguous()))
        .chain(param_values)
        .collect::<Option<Vec<Tensor>>>()?;
    let other_ptrs: Vec<*const c_void> = other_data.iter().map(|t| t.data_ptr().cast()).collect();
    let mut buffers = Vec::with_capacity(s.n_outputs());
    let mut buf_ptrs = Vec::with_capacity(s.n_outputs());
    for (i, &v) in p.outputs.iter().enumerate() {
        let need = s.state_taps.get(i).map_or(0, |taps| Scan::buffer_len(taps));
        let init = initial.get(i).copied();
        if init.is_some_and(|t| t.shape().first().is_none_or(|&len| len < need)) {
            return None;
        }
        let ring = p.ring.get(i).copied().unwrap_or(0);
        let rows = if ring > 0 {
            ring
        } else {
            need.checked_add(total)?
        };
        let element = &layouts[v].shape;
        let (t, ptr) = trajectory(init, need, rows, element, p.values[v].ty.dtype)?;
        buffers.push((t, need, ring, element.clone()));
        buf_ptrs.push(ptr);
    }
    let mut done = 0i64;
    // SAFETY: the kernel reads, at step `t < total`, rows `w + offset + tap` of each sequence
    // (`w < windows[i]`, so within the `lengths[i]` rows of its contiguous copy, by
    // `sequence_steps`), each of `dims[k]` elements, the numel of the tap's value, which is
    // the sequence's row shape; rows `t + need + tap` (tap in `[-need, -1]`) of each state's
    // buffer and writes row `t + need` of it (or those rows modulo the ring's rows), rows of
    // the numel of the state's next value, which was checked to be its rows' shape; row `t`
    // of each mapped output's `total` rows; the contiguous other values whole. Every stage
    // reads and writes values whose extents `layouts` derived from those shapes and checked
    // against each other (elementwise operands of one shape or one element; products of
    // matching inner extents), views within their base values, and computed values live in
    // `scratch` at the 64-byte aligned offsets laid out above, or in the output rows; a
    // loop-invariant matrix copied into column order goes to its own scratch room of its
    // `m × k` elements, read back as such. A nest's iteration extents are those every
    // operand has or broadcasts from (extent 1, read at stride 0), checked by
    // `shapes::iteration`, and its outputs have them (less the reduced axes, at stride 0);
    // params are whole contiguous tensors after the other values in `oth`; a reshape views a
    // base checked to be in C order with as many elements; an indexed view or row update
    // wraps a negative position once and replaces one still outside its extent (`d`) by 0,
    // flagging the step as failed, so its offset stays within the value; a slice's bounds
    // clamp to its extent as Python's do, and one whose length is not step 0's (which its
    // layout and `d` hold) starts at 0 (or at `n - 1` for a negative step) instead, flagging
    // the step: step 0's slice had that length and step within the extent, so this one
    // does too; a row gather or scatter checks each index as a position, and its rows are
    // whole rows of values in C order of the extents checked above. A host call passes
    // `host_call` the pointers of its operands, laid out as `layouts` (which `host` copied),
    // and of its outputs, computed values of the extents the op's type rule gave (contiguous,
    // in scratch or an output row); `host` lives until the kernel returns. A join or split
    // copies blocks of values in C order whose extents were checked to agree but along its
    // axis, where the pieces' add up to the whole's, and no value is empty (a loop with
    // an empty value has only elementwise, nest, gather, product and check stages, whose
    // loops run over the extents, 0 iterations for an empty one, and no positions), so its
    // block count divides every element count; a check reads one element of each
    // condition. The
    // dtypes were checked to be the body's, which the kernel was generated for.
    let status = unsafe {
        f(
            total as i64,
            dims.as_ptr(),
            seq_ptrs.as_ptr(),
            windows.as_ptr(),
            other_ptrs.as_ptr(),
            buf_ptrs.as_ptr(),
            scratch.as_mut_ptr().cast(),
            &mut done,
            host.context(),
            crate::staged_host::host_call,
        )
    };
    let done = usize::try_from(done).ok().filter(|&d| d <= total)?;
    if status != 0 {
        return None;
    }
    buffers
        .into_iter()
        .map(|(t, need, ring, element)| {
            let n: usize = element.iter().product();
            let shape: Vec<usize> = std::iter::once(done)
                .chain(element.iter().copied())
                .collect();
            let last: Vec<usize> = std::iter::once(1).chain(element.iter().copied()).collect();
            match ring {
                0 => t.view(&shape, &c_strides(&shape), need * n).ok(),
                // The last value only: the row step `done - 1` wrote.
                _ => t
                    .view(&last, &c_strides(&last), ((done - 1 + need) % ring) * n)
                    .ok(),
            }
        })
        .collect()
}
