//! The per-call work of a staged loop's indexing stages (`emit::staged_index`): the values of
//! slice bounds at step 0, which fix each slice's length for the whole loop, the layouts of
//! the views they select, and the numbers of `d` the increment and row stages read.

use crate::emit::{Entry, StagedLoop, ValueKind, region_rank};
use crate::recurrence::c_strides;
use crate::staged::Layout;
use oxtensor_data::Tensor;
use oxtensor_graph::index::resolve_slice;
use oxtensor_graph::{NodeKind, Op, ScalarOp, Scan, Var};
use oxtensor_runtime::eval_node;
use rustc_hash::FxHashMap;

/// The largest slice step taken (a larger one selects one element at most; leaving it to the
/// interpreter keeps the C arithmetic on bounds far from overflow).
const MAX_STEP: u64 = 1 << 40;

/// The values of a loop's step 0 that slice bounds read, worked out before the loop: 0-d taps
/// from the operands, loop-invariant values and params as they are, and one-element
/// elementwise values through the interpreter's kernels (the numbers its loop would use).
pub(crate) struct FirstStep<'a> {
    p: &'a StagedLoop,
    /// Per body input, its value at step 0 when it is a 0-d tap.
    taps: Vec<Option<Tensor>>,
    /// The value of each node output.
    of: FxHashMap<&'a Var, usize>,
    /// The values worked out so far.
    memo: FxHashMap<usize, Tensor>,
}

/// Element `row` of `t`'s first axis, when its rows have one element (a 0-d tap).
fn row_of(t: &Tensor, row: i64) -> Option<Tensor> {
    if t.ndim() != 1 || usize::try_from(row).ok()? >= t.shape()[0] {
        return None;
    }
    let at = t.offset() as i64 + row * t.strides()[0] as i64;
    t.view(&[], &[], usize::try_from(at).ok()?).ok()
}

impl<'a> FirstStep<'a> {
    /// The step-0 values of `p`, the loop of `s`, on its sequences (whose windows are
    /// `windows`) and initial buffers.
    pub fn new(
        p: &'a StagedLoop,
        s: &Scan,
        sequences: &[&Tensor],
        initial: &[&Tensor],
        windows: &[i64],
    ) -> FirstStep<'a> {
        let mut taps = Vec::new();
        for (i, (t, ts)) in sequences.iter().zip(&s.sequence_taps).enumerate() {
            let window = match s.go_backwards {
                true => windows.get(i).map_or(0, |w| w - 1),
                false => 0,
            };
            let offset = ts.first().map_or(0, |&t| (-t).max(0));
            taps.extend(ts.iter().map(|tap| row_of(t, window + offset + tap)));
        }
        for (t, ts) in initial.iter().zip(&s.state_taps) {
            let len = t.shape().first().map_or(0, |&n| n as i64);
            taps.extend(ts.iter().map(|tap| row_of(t, len + tap)));
        }
        let of = p
            .values
            .iter()
            .enumerate()
            .filter_map(|(x, v)| Some((v.origin.as_ref()?, x)))
            .collect();
        FirstStep {
            p,
            taps,
            of,
            memo: FxHashMap::default(),
        }
    }

    /// Value `x` at step 0 (`params`: the values known before the loop, by value), or `None`
    /// when it cannot be worked out (the loop then goes to the interpreter's).
    pub fn value(&mut self, x: usize, params: &[Option<Tensor>]) -> Option<Tensor> {
        if let Some(t) = self.memo.get(&x) {
            return Some(t.clone());
        }
        let value = self.p.values.get(x)?;
        let t = match &value.kind {
            ValueKind::Param { .. } => params.get(x)?.clone()?,
            ValueKind::Input(k) => match params.get(x).cloned().flatten() {
                Some(t) => t,
                None => self.taps.get(*k)?.clone()?,
            },
            ValueKind::View { of, .. } => {
                let t = self.value(*of, params)?;
                (t.numel() == 1)
                    .then(|| t.reshape(&vec![1; value.ty.ndim()]).ok())
                    .flatten()?
            }
            ValueKind::Computed => {
                let var = value.origin.as_ref()?;
                let mut args = Vec::new();
                for v in var.node().inputs() {
                    args.push(match v.node().kind() {
                        NodeKind::Constant(c) => c.clone(),
                        NodeKind::Placeholder(i) => self.value(*i, params)?,
                        _ => {
                            let at = *self.of.get(v)?;
                            self.value(at, params)?
                        }
                    });
                }
                let refs: Vec<&Tensor> = args.iter().collect();
                eval_node(var.node(), &refs)
                    .ok()?
                    .into_iter()
                    .nth(var.index())?
            }
            _ => return None,
        };
        self.memo.insert(x, t.clone());
        Some(t)
    }

    /// Value `x` at step 0 as an integer.
    fn int(&mut self, x: usize, params: &[Option<Tensor>]) -> Option<i64> {
        self.value(x, params)?.item::<i64>()
    }

    /// The length of the slice `start : start + w : st` of a dimension of extent `n` whose
    /// bounds are not known at step 0 (they read taps of a nested loop, which are values of
    /// the outer step), where `w` is known before the loop and `st > 0`: `⌈w / st⌉`, the
    /// length wherever the window fits the extent. A step where it does not gives another
    /// length, which the C loop flags (reading the first `⌈w / st⌉` positions instead, which
    /// fit: checked here), handing the loop to the interpreter's.
    fn window(
        &mut self,
        start: usize,
        stop: usize,
        st: i64,
        n: usize,
        params: &[Option<Tensor>],
    ) -> Option<usize> {
        let var = self.p.values.get(stop)?.origin.as_ref()?;
        let Some((Op::Elemwise(ScalarOp::Add), [x, y])) = var.owner() else {
            return None;
        };
        let value_of = |v: &Var| match v.node().kind() {
            NodeKind::Placeholder(i) => Some(*i),
            _ => self.of.get(v).copied(),
        };
        let w = match (value_of(x), value_of(y)) {
            (Some(a), _) if a == start => y,
            (_, Some(b)) if b == start => x,
            _ => return None,
        };
        let w = match (w.node().kind(), value_of(w)) {
            (NodeKind::Constant(c), _) => c.item::<i64>()?,
            (_, Some(at)) => self.int(at, params)?,
            _ => return None,
        };
        let st = u64::try_from(st).ok()?;
        let len = usize::try_from(u64::try_from(w).unwrap_or(0).div_ceil(st)).ok()?;
        let last = (len.saturating_sub(1) as u64).checked_mul(st)?;
        (len == 0 || last < n as u64).then_some(len)
    }

    /// The numbers of `d` of `entries` over a value laid out as `base` (per entry its
    /// dimension's extent and stride, a slice's step and its length at step 0), and the
    /// layout of the region they select (from the start of the region).
    pub fn entries(
        &mut self,
        entries: &[Entry],
        base: &Layout,
        params: &[Option<Tensor>],
    ) -> Option<(Vec<i64>, Layout)> {
        let mut numbers = Vec::with_capacity(4 * entries.len());
        let (mut shape, mut strides) = (Vec::new(), Vec::new());
        for (d, e) in entries.iter().enumerate() {
            let (n, s) = (*base.shape.get(d)?, *base.strides.get(d)?);
            match e {
                Entry::At(_) => numbers.extend([n as i64, s as i64, 0, 0]),
                Entry::Slice { start, stop, step } => {
                    let st = match step {
                        Some(x) => self.int(*x, params)?,
                        None => 1,
                    };
                    if st == 0 || st.unsigned_abs() > MAX_STEP {
                        return None;
                    }
                    let mut bound = |b: &Option<usize>| match b {
                        Some(x) => self.int(*x, params).map(Some),
                        None => Some(None),
                    };
                    let len = match (bound(start), bound(stop)) {
                        (Some(a), Some(b)) => resolve_slice(n, a, b, Some(st)).ok()?.len,
                        _ => self.window((*start)?, (*stop)?, st, n, params)?,
                    };
                    numbers.extend([n as i64, s as i64, st, len as i64]);
                    shape.push(len);
                    strides.push(s.checked_mul(st as isize)?);
                }
            }
        }
        shape.extend(base.shape.get(entries.len()..)?);
        strides.extend(base.strides.get(entries.len()..)?);
        Some((numbers, Layout { shape, strides }))
    }
}

/// The strides at which a value laid out as `y` is read broadcast to `shape` (NumPy's rule:
/// trailing dimensions aligned, extent 1 read at stride 0), or `None` when it does not
/// broadcast.
fn broadcast(y: &Layout, shape: &[usize]) -> Option<Vec<i64>> {
    let lead = shape.len().checked_sub(y.shape.len())?;
    (0..shape.len())
        .map(|d| match d.checked_sub(lead) {
            None => Some(0),
            Some(k) if y.shape[k] == shape[d] => Some(y.strides[k] as i64),
            Some(k) if y.shape[k] == 1 => Some(0),
            Some(_) => None,
        })
        .collect()
}

/// The numbers of `d` of an increment of `entries` of a value of shape `x` (its result in C
/// order) by a value laid out as `y`: the entries', then the region's extents, the result's
/// strides in it and `y`'s; `None` when `y` does not broadcast to the region (the
/// interpreter's loop reports it).
pub(crate) fn inc_dims(
    first: &mut FirstStep<'_>,
    entries: &[Entry],
    x: &[usize],
    y: &Layout,
    params: &[Option<Tensor>],
) -> Option<Vec<i64>> {
    let (mut numbers, region) = first.entries(entries, &Layout::contiguous(x), params)?;
    if region.shape.len() != region_rank(entries, x.len()) {
        return None;
    }
    let ys = broadcast(y, &region.shape)?;
    numbers.extend(region.shape.iter().map(|&e| e as i64));
    numbers.extend(region.strides.iter().map(|&s| s as i64));
    numbers.extend(ys);
    Some(numbers)
}

/// An index array of any rank in C order seen as the vector of its elements (`x[idx]` with a
/// matrix `idx` gathers the rows of `idx`'s elements, in C order), and an update of the
/// gathered extents (`idx`'s in place of `axis`) in C order seen with those flattened; `None`
/// when the indices are not in C order or the update is none of those, one element or one
/// row.
fn flattened(
    x: &Layout,
    idx: &Layout,
    y: Option<&Layout>,
    axis: usize,
) -> Option<(Layout, Option<Layout>)> {
    if idx.shape.len() == 1 {
        return Some((idx.clone(), None));
    }
    if idx.strides != c_strides(&idx.shape) {
        return None;
    }
    let m: usize = idx.shape.iter().product();
    let (before, rest) = (x.shape.get(..axis)?, x.shape.get(axis + 1..)?);
    let gathered: Vec<usize> = [before, &idx.shape, rest].concat();
    // Any other update than one element, one row for all, or the gathered extents in C
    // order goes to the interpreter's loop (it broadcasts some other way, or not at all).
    let flat = match y {
        None => None,
        Some(y) if y.shape == gathered && y.strides == c_strides(&y.shape) => {
            Some(Layout::contiguous(&[before, &[m], rest].concat()))
        }
        Some(y) if y.shape.iter().product::<usize>() == 1 || y.shape == rest => None,
        Some(_) => return None,
    };
    Some((Layout::contiguous(&[m]), flat))
}

/// The numbers of `d` of a row gather or scatter of `x` along `axis` by the index vector laid
/// out as `idx` (see `emit::TAKE`), with the update laid out as `y` for a scatter: its rows
/// must be the index count's or one, each the rows of `x` in C order, or one element (along
/// an axis after the first, `x` must be in C order whole, and the update one element, one row,
/// or the gathered shape in C order); `None` otherwise (the interpreter's loop then computes
/// or reports it).
pub(crate) fn take_dims(
    x: &Layout,
    idx: &Layout,
    y: Option<&Layout>,
    axis: usize,
) -> Option<[i64; crate::emit::TAKE]> {
    let (flat_idx, flat_y) = flattened(x, idx, y, axis)?;
    let (idx, y) = (&flat_idx, flat_y.as_ref().or(y));
    let (n, s0) = (*x.shape.get(axis)?, *x.strides.get(axis)?);
    let (m, is) = (*idx.shape.first()?, *idx.strides.first()?);
    let rest = x.shape.get(axis + 1..)?;
    let inner: usize = rest.iter().product();
    let blocks: usize = x.shape.get(..axis)?.iter().product();
    if axis > 0 && x.strides != c_strides(&x.shape) {
        return None;
    }
    let gathered: Vec<usize> = x.shape[..axis]
        .iter()
        .copied()
        .chain([m])
        .chain(rest.iter().copied())
        .collect();
    let (ys, yj, yb) = match y {
        None => (0, 0, 0),
        Some(y) if y.shape.iter().product::<usize>() == 1 => (0, 0, 0),
        Some(y) if y.shape == rest => (0, 1, 0),
        Some(y) if axis > 0 => {
            if y.shape != gathered || y.strides != c_strides(&y.shape) {
                return None;
            }
            (inner as i64, 1, (m * inner) as i64)
        }
        Some(y) if y.shape.get(1..) == Some(rest) && y.shape[0] == m => (y.strides[0] as i64, 1, 0),
        Some(y) if y.shape.get(1..) == Some(rest) && y.shape[0] == 1 => (0, 1, 0),
        Some(_) => return None,
    };
    Some([
        n as i64,
        s0 as i64,
        m as i64,
        is as i64,
        inner as i64,
        ys,
        yj,
        blocks as i64,
        (n * inner) as i64,
        yb,
    ])
}
