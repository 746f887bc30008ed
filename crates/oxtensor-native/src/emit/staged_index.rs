//! The indexing stages of a staged loop (`super::staged`): basic indexing by positions and
//! slices (`Subtensor`, a view whose pointer each step offsets; `IncSubtensor`, a copy with a
//! region updated), and integer-vector indexing along the first axis (`AdvancedSubtensor1`, a
//! gather of rows; `AdvancedIncSubtensor1`, a scatter of rows, repeated rows accumulating).
//!
//! Positions and slice bounds are values of the step, read when the stage runs; a slice's
//! step is known before the loop (a constant or a loop-invariant value). A slice's length must
//! not change from step to step: the executor works it out from the bounds of step 0
//! (`crate::staged_index::first_step`) and lays out every value from it; a step whose bounds
//! give another length, or a position out of range, reads in range instead and flags the step,
//! which hands the loop to the interpreter's, as every error of a staged step does.

use super::scalar::ctype;
use super::staged::{Mark, Stage, StagedLoop, ValueKind, region_rank};
use super::staged_lower::{Lowering, keeps_layout};
use oxtensor_graph::{IndexEntry, Node, Op, Var};
use std::fmt::Write;
use std::sync::Arc;

/// Entries of `d` per [`Entry`]: the extent and the stride of its dimension in the value
/// indexed, then, for a slice, its step and its length (the one of step 0).
pub(crate) const ENTRY: usize = 4;

/// Entries of `d` of a [`super::Stage::Take`] or [`super::Stage::IncTake`]: the indexed
/// extent, the stride of the indexed axis, the number of indices, their stride, the elements
/// per row, the strides of the update's rows and of the elements within them, then the number
/// of blocks before the indexed axis (1 for the first axis), the elements of a block of the
/// value indexed and of a block of the update.
pub(crate) const TAKE: usize = 10;

/// One entry of a basic index, over one leading dimension of the value indexed.
#[derive(PartialEq, Debug, Clone)]
pub(crate) enum Entry {
    /// A position (a 0-d signed integer value); the dimension is dropped.
    At(usize),
    /// `start:stop:step` (0-d signed integer values; absent bounds are Python's defaults;
    /// `step` is known before the loop).
    Slice {
        /// The first position, if given.
        start: Option<usize>,
        /// The end, if given.
        stop: Option<usize>,
        /// The step (a param or other value), if given.
        step: Option<usize>,
    },
}

impl Entry {
    /// The values the entry reads.
    pub fn reads(&self) -> impl Iterator<Item = usize> {
        match self {
            Entry::At(i) => [Some(*i), None, None],
            Entry::Slice { start, stop, step } => [*start, *stop, *step],
        }
        .into_iter()
        .flatten()
    }
}

/// Appends to `s` (indented by `pad`) the C adding to the local `off` the offset that
/// `entries` select (their numbers at `d[at]`, [`ENTRY`] each); a position out of range or a
/// slice of another length than step 0's sets `bad` and selects an offset within the value.
pub(super) fn resolve(s: &mut String, entries: &[Entry], at: usize, pad: &str) {
    for (e, entry) in entries.iter().enumerate() {
        let a = at + ENTRY * e;
        let _ = writeln!(s, "{pad}{{\n{pad}  const int64_t n = d[{a}];");
        match entry {
            Entry::At(i) => {
                let _ = writeln!(
                    s,
                    "{pad}  int64_t i = (int64_t)v{i}[0];\n{pad}  if (i < 0) i += n;\n\
                     {pad}  if (i < 0 || i >= n) {{ bad = 1; i = 0; }}\n\
                     {pad}  off += i * d[{}];",
                    a + 1
                );
            }
            Entry::Slice { start, stop, .. } => {
                // Python's `slice.indices`: negative bounds count from the end, then clamp.
                let bound = |v: &Option<usize>, lo: &str, hi: &str, none: &str| match v {
                    Some(v) => {
                        let x = format!(
                            "((int64_t)v{v}[0] < 0 ? (int64_t)v{v}[0] + n : (int64_t)v{v}[0])"
                        );
                        format!("({x} < {lo} ? {lo} : ({x} > {hi} ? {hi} : {x}))")
                    }
                    None => none.to_string(),
                };
                let _ = writeln!(
                    s,
                    "{pad}  const int64_t st = d[{}];\n{pad}  int64_t b, len;\n\
                     {pad}  if (st > 0) {{\n\
                     {pad}    b = {};\n{pad}    const int64_t e = {};\n\
                     {pad}    len = e > b ? (e - b + st - 1) / st : 0;\n\
                     {pad}  }} else {{\n\
                     {pad}    b = {};\n{pad}    const int64_t e = {};\n\
                     {pad}    len = b > e ? (b - e - st - 1) / (-st) : 0;\n\
                     {pad}  }}\n\
                     {pad}  if (len != d[{}]) {{ bad = 1; b = st > 0 ? 0 : n - 1; len = d[{}]; }}\n\
                     {pad}  if (len > 0) off += b * d[{}];",
                    a + 2,
                    bound(start, "0", "n", "0"),
                    bound(stop, "0", "n", "n"),
                    bound(start, "-1", "n - 1", "n - 1"),
                    bound(stop, "-1", "n - 1", "-1"),
                    a + 3,
                    a + 3,
                    a + 1
                );
            }
        }
        let _ = writeln!(s, "{pad}}}");
    }
}

/// The C index `i0 * {p}[0] + i1 * {p}[1] + …` of the `rank` loop counters at the strides
/// `d[at], d[at + 1], …`.
fn strided(rank: usize, at: usize) -> String {
    if rank == 0 {
        return "0".to_string();
    }
    (0..rank)
        .map(|k| format!("i{k} * d[{}]", at + k))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The C of a [`super::Stage::Inc`]: `out` = `x` (unless it is `x`'s own buffer), then the
/// region `entries` select, of rank `rank`, set to or incremented by `y` (its extents at
/// `d[at + ENTRY·entries]`, then `out`'s strides in it, then `y`'s, 0 where `y` broadcasts).
pub(super) fn inc(s: &mut String, p: &StagedLoop, stage: IncParts<'_>, rank: usize) {
    let IncParts {
        x,
        y,
        entries,
        out,
        set,
        at,
    } = stage;
    let t = ctype(p.values[out].ty.dtype);
    let _ = writeln!(
        s,
        "    {{\n      if (v{out} != v{x}) memcpy(v{out}, v{x}, (size_t)d[{}] * sizeof({t}));\n      \
         int64_t off = 0;",
        p.numel_at(out)
    );
    resolve(s, entries, at, "      ");
    let r = at + ENTRY * entries.len();
    for k in 0..rank {
        let _ = writeln!(
            s,
            "      for (int64_t i{k} = 0; i{k} < d[{}]; i{k}++)",
            r + k
        );
    }
    let op = if set { "=" } else { "+=" };
    let _ = writeln!(
        s,
        "      v{out}[off + {}] {op} v{y}[{}];\n    }}",
        strided(rank, r + rank),
        strided(rank, r + 2 * rank)
    );
}

/// The operands of a [`super::Stage::Inc`] that [`inc`] writes the C of.
pub(super) struct IncParts<'a> {
    /// The value copied.
    pub x: usize,
    /// The value written into the region.
    pub y: usize,
    /// The region's index.
    pub entries: &'a [Entry],
    /// The result.
    pub out: usize,
    /// Replace rather than add.
    pub set: bool,
    /// Where its numbers start in `d`.
    pub at: usize,
}

/// The C of a [`super::Stage::Take`] (`y` is `None`: `out[k] = x[idx[k]]`, rows in C order)
/// or a [`super::Stage::IncTake`] (`out = x`, then `out[idx[k]] op= y[k]` in index order, so
/// repeated rows accumulate, or the last one wins when setting). Numbers at `d[at]` (see
/// [`TAKE`]); an index out of range sets `bad` and reads row 0.
pub(super) fn take(
    s: &mut String,
    p: &StagedLoop,
    (x, idx, out): (usize, usize, usize),
    update: Option<(usize, bool)>,
    at: usize,
) {
    let t = ctype(p.values[out].ty.dtype);
    s.push_str("    {\n");
    if update.is_some() {
        let _ = writeln!(
            s,
            "      if (v{out} != v{x}) memcpy(v{out}, v{x}, (size_t)d[{}] * sizeof({t}));",
            p.numel_at(out)
        );
    }
    let _ = writeln!(
        s,
        "      const int64_t n = d[{at}], inner = d[{}], m = d[{}];\n      \
         for (int64_t b = 0; b < d[{}]; b++)\n      \
         for (int64_t k = 0; k < m; k++) {{\n        \
         int64_t i = (int64_t)v{idx}[k * d[{}]];\n        if (i < 0) i += n;\n        \
         if (i < 0 || i >= n) {{ bad = 1; i = 0; }}",
        at + 4,
        at + 2,
        at + 7,
        at + 3
    );
    match update {
        None => {
            let _ = writeln!(
                s,
                "        memcpy(v{out} + (b * m + k) * inner, v{x} + b * d[{}] + i * d[{}], \
                 (size_t)inner * sizeof({t}));",
                at + 8,
                at + 1
            );
        }
        Some((y, set)) => {
            let op = if set { "=" } else { "+=" };
            let _ = writeln!(
                s,
                "        {t} *o = v{out} + b * d[{}] + i * inner;\n        \
                 const {t} *u = v{y} + b * d[{}] + k * d[{}];\n\
                 #pragma GCC ivdep\n        \
                 for (int64_t j = 0; j < inner; j++) o[j] {op} u[j * d[{}]];",
                at + 8,
                at + 9,
                at + 5,
                at + 6
            );
        }
    }
    s.push_str("      }\n    }\n");
}

impl Lowering {
    /// Whether the executor can work out value `x` at step 0 before the loop (see
    /// `crate::staged_index::first_step`): a param or other value, a 0-d tap, a view of such a
    /// value, or a one-element elementwise value of such values.
    pub(super) fn probeable(&self, x: usize) -> bool {
        match &self.values[x].kind {
            ValueKind::Param { .. } => true,
            ValueKind::Input(k) => *k >= self.n_taps || self.values[x].ty.ndim() == 0,
            ValueKind::View { of, .. } => self.probeable(*of),
            ValueKind::Computed => self.scalars.contains(&x),
            _ => false,
        }
    }

    /// The value of `v` as a position: a 0-d signed integer that is stored.
    fn position(&mut self, v: &Var) -> Option<usize> {
        let x = self.value(v)?;
        let stored = self.values[x].kind != ValueKind::Folded;
        (stored && v.dtype().is_signed_int() && v.ty().ndim() == 0).then_some(x)
    }

    /// The entries of a basic index `spec` whose scalars are `scalars`: positions, and slices
    /// whose bounds the executor can work out at step 0 and whose step is known before the
    /// loop.
    fn entries(&mut self, spec: &[IndexEntry], scalars: &[Var]) -> Option<Vec<Entry>> {
        let mut it = scalars.iter();
        let mut out = Vec::with_capacity(spec.len());
        for e in spec {
            let entry = match *e {
                IndexEntry::Index => Entry::At(self.position(it.next()?)?),
                IndexEntry::Slice { start, stop, step } => {
                    let mut bound = |given: bool, known: fn(&Lowering, usize) -> bool| {
                        if !given {
                            return Some(None);
                        }
                        let x = self.position(it.next()?)?;
                        known(self, x).then_some(Some(x))
                    };
                    Entry::Slice {
                        start: bound(start, Lowering::probeable)?,
                        stop: bound(stop, Lowering::probeable)?,
                        step: bound(step, Lowering::is_param)?,
                    }
                }
            };
            out.push(entry);
        }
        it.next().is_none().then_some(out)
    }

    /// Lowers a `Subtensor` (positions and slices, see [`Entry`]): a view.
    pub(super) fn index(&mut self, node: &Arc<Node>, spec: &[IndexEntry]) -> Option<()> {
        let inputs = node.inputs();
        let of = self.value(inputs.first()?)?;
        if spec.len() > self.values[of].ty.ndim() || self.values[of].kind == ValueKind::Folded {
            return None;
        }
        let entries = self.entries(spec, &inputs[1..])?;
        let at = self.slots;
        self.slots += ENTRY * entries.len();
        self.define(
            Var::output_of(node, 0),
            ValueKind::Indexed { of, entries, at },
        );
        Some(())
    }

    /// Lowers an `IncSubtensor` (positions and slices) of a value in C order and a value of
    /// its dtype broadcasting to the region.
    pub(super) fn inc(&mut self, node: &Arc<Node>, spec: &[IndexEntry], set: bool) -> Option<()> {
        let inputs = node.inputs();
        let x = self.value(inputs.first()?)?;
        let y = self.value(inputs.get(1)?)?;
        let (tx, ty) = (&self.values[x].ty, &self.values[y].ty);
        if spec.len() > tx.ndim()
            || tx.dtype != ty.dtype
            || tx.dtype.is_complex()
            || !keeps_layout(&self.values, x)
            || self.values[y].kind == ValueKind::Folded
        {
            return None;
        }
        let ndim = tx.ndim();
        let entries = self.entries(spec, &inputs[2..])?;
        let rank = region_rank(&entries, ndim);
        if self.values[y].ty.ndim() > rank {
            return None;
        }
        let out = self.define(Var::output_of(node, 0), ValueKind::Computed);
        let at = self.slots;
        self.slots += ENTRY * entries.len() + 3 * rank;
        self.stages.push(Stage::Inc {
            x,
            y,
            entries,
            out,
            set,
            acc: None,
            at,
        });
        Some(())
    }

    /// The values of a `Take` or `IncTake` along the first axis: `x` (rows in C order, a real
    /// dtype) and `idx` (a signed integer array of any rank, read as the vector of its
    /// elements when in C order: see `crate::staged_index::take_dims`).
    fn take_operands(&mut self, x: &Var, idx: &Var, axis: usize) -> Option<(usize, usize)> {
        let (x, i) = (self.value(x)?, self.value(idx)?);
        let ok = idx.dtype().is_signed_int()
            && self.values[x].ty.ndim() > axis
            && !self.values[x].ty.dtype.is_complex()
            && keeps_layout(&self.values, x)
            && ![x, i]
                .iter()
                .any(|&v| self.values[v].kind == ValueKind::Folded);
        ok.then_some((x, i))
    }

    /// Lowers a `Take` along `axis` by an integer vector (`AdvancedSubtensor1`).
    pub(super) fn take(&mut self, node: &Arc<Node>, axis: usize) -> Option<()> {
        let inputs = node.inputs();
        let (x, idx) = self.take_operands(inputs.first()?, inputs.get(1)?, axis)?;
        let out = self.define(Var::output_of(node, 0), ValueKind::Computed);
        let at = self.slots;
        self.slots += TAKE;
        self.stages.push(Stage::Take {
            x,
            axis,
            idx,
            out,
            at,
        });
        Some(())
    }

    /// Lowers an `IncTake` along `axis` (`AdvancedIncSubtensor1`) whose update has the rows'
    /// dtype and keeps its rows in C order.
    pub(super) fn inc_take(&mut self, node: &Arc<Node>, axis: usize, set: bool) -> Option<()> {
        let inputs = node.inputs();
        let (x, idx) = self.take_operands(inputs.first()?, inputs.get(2)?, axis)?;
        let y = self.value(inputs.get(1)?)?;
        let ok = self.values[y].ty.dtype == self.values[x].ty.dtype
            && self.values[y].kind != ValueKind::Folded
            && keeps_layout(&self.values, y);
        if !ok {
            return None;
        }
        let out = self.define(Var::output_of(node, 0), ValueKind::Computed);
        let at = self.slots;
        self.slots += TAKE;
        self.stages.push(Stage::IncTake {
            x,
            axis,
            y,
            idx,
            out,
            set,
            acc: None,
            at,
        });
        Some(())
    }
}

/// The values stage `st` reads.
pub(super) fn reads(st: &Stage) -> Vec<usize> {
    match st {
        Stage::Elem { args, .. } => args.iter().map(|a| a.0).collect(),
        Stage::Nest(n) => n.args.clone(),
        Stage::Gather { from, .. } => vec![*from],
        Stage::Join { args, .. } => args.clone(),
        Stage::Split { x, .. } => vec![*x],
        Stage::Check { conds } => conds.clone(),
        Stage::Mark(Mark::If(c)) => vec![*c],
        Stage::Mark(_) => Vec::new(),
        Stage::MatMul { a, b, acc, .. } => [*a, *b].into_iter().chain(*acc).collect(),
        Stage::Inc {
            x, y, entries, acc, ..
        } => entries
            .iter()
            .flat_map(Entry::reads)
            .chain([*x, *y])
            .chain(*acc)
            .collect(),
        Stage::Take { x, idx, .. } => vec![*x, *idx],
        Stage::IncTake { x, y, idx, acc, .. } => [*x, *y, *idx].into_iter().chain(*acc).collect(),
        Stage::Host { args, .. } => args.clone(),
    }
}

/// Makes the increments (and the products adding into an accumulator) that compute a state's
/// next value from its last one update it in place, when the state keeps only its last value
/// (a ring, as the running sums of a backward loop do) and nothing reads the last value after
/// the increment: its ring then has one row, which the increment's result is, so the step no
/// longer copies the whole state (the gradient of an indexing loop adds one row per step into
/// a whole `dE`; an RNN's backward step adds `g hᵀ` into `dW`).
pub(super) fn update_in_place(p: &mut StagedLoop) {
    let mut tap = p.sequence_taps.iter().map(Vec::len).sum::<usize>();
    for (i, taps) in p.state_taps.iter().enumerate() {
        let x = tap;
        tap += taps.len();
        let out = p.outputs[i];
        if p.ring[i] == 0 || taps.as_slice() != [-1] || p.home[out] != Some(i) {
            continue;
        }
        let stage = p.stages.iter().position(|st| match st {
            Stage::Inc {
                x: a, out: o, acc, ..
            }
            | Stage::IncTake {
                x: a, out: o, acc, ..
            } => acc.unwrap_or(*a) == x && *o == out,
            Stage::MatMul {
                acc: Some(a),
                out: o,
                ..
            } => *a == x && *o == out,
            _ => false,
        });
        let Some(at) = stage else {
            continue;
        };
        // The values that are the last value or views of it.
        let mut aliases = vec![x];
        for (v, value) in p.values.iter().enumerate() {
            let of = match &value.kind {
                ValueKind::View { of, .. }
                | ValueKind::Reshape { of, .. }
                | ValueKind::Indexed { of, .. } => *of,
                _ => continue,
            };
            if aliases.contains(&of) {
                aliases.push(v);
            }
        }
        let operands = match &p.stages[at] {
            Stage::Inc { y, .. } | Stage::IncTake { y, .. } => vec![*y],
            Stage::MatMul { a, b, .. } => vec![*a, *b],
            _ => continue,
        };
        let read_later = p.stages[at + 1..]
            .iter()
            .flat_map(reads)
            .chain(p.outputs.iter().copied())
            .chain(p.until)
            .chain(operands)
            .any(|v| aliases.contains(&v));
        if !read_later {
            p.ring[i] = 1;
        }
    }
}

/// Whether `v` is known to be all zeros: a constant of zeros, or an `Alloc` (or a view) of
/// one (`zeros_like`, which the pullbacks of indexing increment).
pub(crate) fn known_zero(v: &Var) -> bool {
    if let Some(c) = v.constant_value() {
        return c.to_vec_as::<f64>().iter().all(|&x| x == 0.0);
    }
    match v.owner() {
        Some((Op::Alloc { .. } | Op::DimShuffle { .. } | Op::SpecifyShape(_), inputs)) => {
            inputs.first().is_some_and(known_zero)
        }
        _ => false,
    }
}

impl Lowering {
    /// Whether value `x` is known to be all zeros (a zero param, or an other value the
    /// caller found to be zeros).
    fn zero(&self, x: usize) -> bool {
        match &self.values[x].kind {
            ValueKind::Input(k) => k
                .checked_sub(self.n_taps)
                .is_some_and(|o| self.zeros.get(o) == Some(&true)),
            ValueKind::Param { var, .. } => known_zero(var),
            _ => false,
        }
    }

    /// Folds `acc + inc` into the increment stage computing `inc` from zeros (`inc(0, y)`,
    /// read nowhere else), when `acc` is a value of its dtype and rank in C order: the stage
    /// then copies `acc` instead of the zeros and writes the sum, `out`, the running sum of a
    /// backward step. Moves the stage after whatever computes `acc`. Whether it did.
    pub(super) fn fold_increment(&mut self, acc: usize, inc: usize, out: &Var) -> bool {
        let found = self.stages.iter().enumerate().position(|(i, st)| match st {
            Stage::Inc {
                x,
                out,
                set: false,
                acc: None,
                ..
            }
            | Stage::IncTake {
                x,
                out,
                set: false,
                acc: None,
                ..
            } => *out == inc && self.zero(*x) && i >= self.block && self.outside_branches(i),
            _ => false,
        });
        let (a, i) = (&self.values[acc], &self.values[inc]);
        let fits = acc != inc
            && a.ty.dtype == i.ty.dtype
            && a.ty.ndim() == i.ty.ndim()
            && out.ty().ndim() == i.ty.ndim()
            && out.dtype() == i.ty.dtype
            && a.kind != ValueKind::Folded
            && keeps_layout(&self.values, acc);
        let Some(index) = found.filter(|_| fits) else {
            return false;
        };
        let mut stage = self.stages.remove(index);
        for value in &mut self.values {
            if value.after > index {
                value.after -= 1;
            }
        }
        let sum = self.define(out.clone(), ValueKind::Computed);
        self.values[inc].kind = ValueKind::Folded;
        if let Stage::Inc { acc: a, out: o, .. } | Stage::IncTake { acc: a, out: o, .. } =
            &mut stage
        {
            *a = Some(acc);
            *o = sum;
        }
        self.stages.push(stage);
        true
    }
}
