//! Running a whole-loop kernel (`emit::recurrence`): checking a `Scan` node's operands,
//! laying out the trajectory buffers the C loop writes, and turning them into the node's
//! outputs. Anything the kernel does not take (mismatched shapes or dtypes, too few initial
//! values, no steps, an element that is an error) is left to the interpreter's loop, which
//! computes the node or reports the error in its own words.

use crate::emit::ring_rows;
use oxtensor_data::Tensor;
use oxtensor_graph::Scan;
use std::ffi::c_void;

/// The C signature of a loop kernel (see `emit::recurrence::emit`).
pub(crate) type LoopFn = unsafe extern "C" fn(
    i64,
    i64,
    *const *const c_void,
    *const i64,
    *const *const c_void,
    *const *mut c_void,
    *mut i64,
) -> i32;

/// C-order strides (in elements) of `shape`.
pub(crate) fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step *= d.max(1) as isize;
    }
    strides
}

/// A fresh C-contiguous tensor of `rows` rows of `element` shape whose first rows are the
/// last `need` rows of `init`, with a writable pointer to its elements. The other rows are
/// left unwritten (not even zeroed: a loop of 10^5 steps would pay a second pass over its
/// trajectory): the loop kernel writes each row before it reads it, and the caller views only
/// the initial rows and those the kernel wrote.
pub(crate) fn trajectory(
    init: Option<&Tensor>,
    need: usize,
    rows: usize,
    element: &[usize],
    dtype: oxtensor_data::DType,
) -> Option<(Tensor, *mut c_void)> {
    let shape: Vec<usize> = std::iter::once(rows)
        .chain(element.iter().copied())
        .collect();
    if need > 0 && init.is_none() {
        return None;
    }
    // SAFETY: nothing reads a row before it is written: the first `need` rows are copied
    // below, the loop kernel writes every other row before reading it back as a tap, and the
    // node's outputs (see `run`) view only the rows written by then.
    let t = unsafe { Tensor::uninit(dtype, &shape) }.ok()?;
    let ptr = t.data_ptr().cast_mut().cast::<c_void>();
    if let Some(init) = init.filter(|_| need > 0) {
        let len = *init.shape().first()?;
        let n: usize = element.iter().product();
        let start = len.checked_sub(need)?;
        let rows = init.view(
            &[need].iter().chain(element).copied().collect::<Vec<_>>(),
            init.strides(),
            usize::try_from(init.offset() as isize + start as isize * init.strides()[0]).ok()?,
        );
        let bytes = rows.ok()?.to_bytes();
        if bytes.len() != need * n * dtype.size() {
            return None;
        }
        // SAFETY: `ptr` addresses the `rows * n` elements of `t`, which nothing else references,
        // and `need <= rows`, so the `need * n` elements copied fit in it.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr.cast::<u8>(), bytes.len()) };
    }
    Some((t, ptr))
}

/// A scan node's operands split by role, with the number of steps the loop will run.
pub(crate) struct LoopOperands<'a> {
    /// Steps to run (`n_steps` against the sequences' lengths).
    pub total: usize,
    /// Each sequence's length.
    pub lengths: Vec<usize>,
    /// The sequences.
    pub sequences: &'a [&'a Tensor],
    /// The states' initial buffers.
    pub initial: &'a [&'a Tensor],
    /// The loop-invariant values.
    pub others: &'a [&'a Tensor],
}

impl<'a> LoopOperands<'a> {
    /// Splits `args` (`n_steps`, sequences, initial buffers, other values) as `s` reads them,
    /// or `None` when their count or the step count does not fit.
    pub(crate) fn of(s: &Scan, args: &'a [&'a Tensor]) -> Option<LoopOperands<'a>> {
        let (n_seq, n_state) = (s.sequence_taps.len(), s.state_taps.len());
        let (n_steps, rest) = args.split_first()?;
        let n_steps = *n_steps.to_vec_as::<i64>().first()?;
        if rest.len() != n_seq + n_state + s.n_other() {
            return None;
        }
        let (sequences, rest) = rest.split_at(n_seq);
        let (initial, others) = rest.split_at(n_state);
        let lengths: Vec<usize> = sequences
            .iter()
            .map(|t| t.shape().first().copied().unwrap_or(0))
            .collect();
        let total = s.steps(n_steps, &lengths).ok()?;
        Some(LoopOperands {
            total,
            lengths,
            sequences,
            initial,
            others,
        })
    }

    /// How many steps each sequence can feed with its taps (the rows the loop may start a
    /// window at), as the C loops take them.
    pub(crate) fn windows(&self, s: &Scan) -> Vec<i64> {
        s.sequence_taps
            .iter()
            .zip(&self.lengths)
            .map(|(taps, &len)| oxtensor_graph::scan::sequence_steps(taps, len).unwrap_or(0) as i64)
            .collect()
    }
}

/// Runs loop kernel `f` of `s` on the node's operands (`n_steps`, sequences, initial buffers,
/// other values): one tensor per state and per mapped output, or `None` when the kernel does
/// not take them.
pub(crate) fn run(f: LoopFn, s: &Scan, args: &[&Tensor]) -> Option<Vec<Tensor>> {
    let inputs = s.body.input_types();
    let operands = LoopOperands::of(s, args)?;
    let windows = operands.windows(s);
    let LoopOperands {
        total,
        sequences,
        initial,
        others,
        ..
    } = operands;
    // The element shape: every step value of the states' rank has it; the rest are scalars.
    let rank = s.body.outputs().first()?.ty().ndim();
    let row_shapes = sequences.iter().chain(initial).map(|t| t.shape().get(1..));
    let mut element: Option<&[usize]> = None;
    for shape in row_shapes.chain(others.iter().map(|t| Some(t.shape()))) {
        let shape = shape?;
        if shape.len() == rank && rank > 0 {
            if element.is_some_and(|e| e != shape) {
                return None;
            }
            element = element.or(Some(shape));
        } else if !shape.is_empty() {
            return None;
        }
    }
    let element: Vec<usize> = element.map_or_else(Vec::new, <[usize]>::to_vec);
    let n: usize = element.iter().product();
    // No elements (a state of extent 0): the kernel runs the steps and writes empty rows.
    if total == 0 {
        return None;
    }
    // Each operand's dtype is its body input's (a sequence's and a state's, their first tap's).
    let mut first_input = 0;
    for (t, taps) in sequences
        .iter()
        .zip(&s.sequence_taps)
        .chain(initial.iter().zip(&s.state_taps))
    {
        if inputs.get(first_input)?.dtype != t.dtype() {
            return None;
        }
        first_input += taps.len();
    }
    for (t, ty) in others.iter().zip(&inputs[first_input..]) {
        if ty.dtype != t.dtype() {
            return None;
        }
    }
    let seq_data: Vec<Tensor> = sequences.iter().map(|t| t.to_contiguous()).collect();
    let seq_ptrs: Vec<*const c_void> = seq_data.iter().map(|t| t.data_ptr().cast()).collect();
    let other_data: Vec<Tensor> = others.iter().map(|t| t.to_contiguous()).collect();
    let other_ptrs: Vec<*const c_void> = other_data.iter().map(|t| t.data_ptr().cast()).collect();
    let outputs = s.body.outputs();
    let mut buffers = Vec::with_capacity(s.n_outputs());
    let mut buf_ptrs = Vec::with_capacity(s.n_outputs());
    for i in 0..s.n_outputs() {
        let need = s.state_taps.get(i).map_or(0, |taps| Scan::buffer_len(taps));
        let init = initial.get(i).copied();
        if init.is_some_and(|t| t.shape().first().is_none_or(|&len| len < need)) {
            return None;
        }
        let ring = ring_rows(s, i);
        let rows = if ring > 0 {
            ring
        } else {
            need.checked_add(total)?
        };
        let (t, ptr) = trajectory(init, need, rows, &element, outputs.get(i)?.dtype())?;
        buffers.push((t, need, ring));
        buf_ptrs.push(ptr);
    }
    let mut done = 0i64;
    // SAFETY: the kernel reads, at step `t < total`, rows `w + offset + tap` of each sequence
    // (`w < windows[i]`, so within the `lengths[i]` rows of its contiguous copy, by
    // `sequence_steps`), rows `t + need + tap` (tap in `[-need, -1]`) of each state's buffer,
    // and `n` elements (or one, for a scalar) of each contiguous other value; it writes row
    // `t + need` of each state buffer and row `t` of each mapped buffer, all of `need + total`
    // (resp. `total`) rows of `n` elements, freshly allocated and referenced by nothing else.
    // The dtypes were checked to be the kernel's, the element shapes to be `element` (`n`
    // elements) or scalars where the kernel reads one value.
    let status = unsafe {
        f(
            total as i64,
            n as i64,
            seq_ptrs.as_ptr(),
            windows.as_ptr(),
            other_ptrs.as_ptr(),
            buf_ptrs.as_ptr(),
            &mut done,
        )
    };
    let done = usize::try_from(done).ok().filter(|&d| d <= total)?;
    if status != 0 {
        return None;
    }
    let shape: Vec<usize> = std::iter::once(done)
        .chain(element.iter().copied())
        .collect();
    let last: Vec<usize> = std::iter::once(1).chain(element).collect();
    let (strides, last_strides) = (c_strides(&shape), c_strides(&last));
    buffers
        .into_iter()
        .map(|(t, need, ring)| match ring {
            0 => t.view(&shape, &strides, need * n).ok(),
            // The last value only: the row step `done - 1` wrote.
            _ => t
                .view(&last, &last_strides, ((done - 1 + need) % ring) * n)
                .ok(),
        })
        .collect()
}
