//! Whole loops in C for steps that are not elementwise: a `Scan` whose step is made of
//! elementwise ops (`Elemwise`, `Composite`, broadcasting dimensions of static extent 1),
//! reductions (`Reduce`, `FusedReduce`), `Alloc`, layout views (`DimShuffle`,
//! `SpecifyShape`, `Reshape`), indexing by integer scalars (`Subtensor`), matrix products of
//! rank at most 2 (`MatMul`: matrix–vector, vector–matrix, outer products) and shape
//! arithmetic (`Shape_i` and what is computed from extents only), with or without an `until`
//! condition, becomes one C function running every step as a *staged* program
//! (`super::staged_lower` builds it). Each stage is one loop: an elementwise program over a
//! value's elements, a loop nest (broadcasting, reducing, allocating; `super::staged_nest`)
//! or a matrix product. The values a step computes live in scratch buffers the executor
//! allocates once per call, or straight in the output rows of the step; the loop-invariant
//! other values are read where they are.
//!
//! Shapes are not compiled in: the executor (`crate::staged`) works out every value's shape
//! from the operands once per call (and the params, the values computed from extents only),
//! checks that each stage reads and writes within its buffers, and passes the extents,
//! strides and scratch offsets in one array `d`, at the indices [`StagedLoop`] assigns.

use super::program::Program;
use super::recurrence::{row, sequence_rows};
use super::scalar::ctype;
pub(crate) use super::staged_index::Entry;
use oxtensor_data::DType;
use oxtensor_graph::{ReduceOp, TensorType, Var};
use std::fmt::Write;

/// Entries of `d` per product or gather stage: a product's `m, n, k, as0, as1, bs0, bs1` and
/// the scratch offset of its matrix in column order (see [`StagedLoop::invariant_matrix`]); a
/// gather's `n0, n1, s0, s1`.
pub(crate) const SLOT: usize = 8;

/// What a value of the step is.
#[derive(PartialEq, Debug)]
pub(crate) enum ValueKind {
    /// Body input `k` (a sequence's or a state's tap, or an other value).
    Input(usize),
    /// Written by a stage: into scratch, or into the output row it is the value of.
    Computed,
    /// A product whose stage adds it to an accumulator and writes only the sum: never stored.
    Folded,
    /// A `DimShuffle` of another value: the same elements seen with another shape.
    View {
        /// The value seen.
        of: usize,
        /// The `DimShuffle` order (`None`: a new dimension of extent 1).
        order: Vec<Option<usize>>,
    },
    /// A loop-invariant value the executor computes once per call, before the loop, and
    /// passes after the other values: an extent (`Shape_i`, `Shape`), a constant of more than
    /// one element, or an op whose inputs are all such values (shape arithmetic). Shapes do
    /// not change from step to step in a staged loop, so neither do these.
    Param {
        /// The node output it is.
        var: Var,
        /// Per input of its node: the value it is, or `None` for a constant.
        args: Vec<Option<usize>>,
    },
    /// `x[i, a:b:c, …]`: value `of` at the positions and slices `entries` of its leading
    /// dimensions, its elements in place (see `super::staged_index`). A position out of range
    /// or a slice of another length than at step 0 is an error: the step reads within the value
    /// instead and the loop is handed to the interpreter's, which reports it or computes it.
    Indexed {
        /// The value indexed.
        of: usize,
        /// The entries, one per leading dimension.
        entries: Vec<Entry>,
        /// Where the entries' numbers are in `d` ([`ENTRY`](super::staged_index::ENTRY) each).
        at: usize,
    },
    /// A `Reshape` of a value in C order (checked per call): the same elements with the
    /// extents of the integer vector `shape`, a [`ValueKind::Param`].
    Reshape {
        /// The value seen.
        of: usize,
        /// The param holding the new extents.
        shape: usize,
    },
}

/// One value of the step.
#[derive(PartialEq, Debug)]
pub(crate) struct Value {
    /// Its static type.
    pub ty: TensorType,
    /// Where it comes from.
    pub kind: ValueKind,
    /// The node output it is (`None` for a body input or a copy the lowering adds), which the
    /// executor evaluates to find slice bounds at step 0 (see `crate::staged_index`).
    pub origin: Option<Var>,
    /// The number of stages that run before its pointer is set (a view of a value computed
    /// this step, or at positions computed this step, is set after the stage computing it).
    pub after: usize,
}

/// One loop of the step.
#[derive(PartialEq)]
pub(crate) enum Stage {
    /// An elementwise program over the elements of its outputs (all of one shape).
    Elem {
        /// The program; its input `k` is `args[k]`.
        program: Program,
        /// Per program input: the value, and whether the program reads its one element only
        /// (its static type has one element) rather than one per element.
        args: Vec<(usize, bool)>,
        /// The values the program's outputs are.
        outs: Vec<usize>,
    },
    /// `out` = the elements of view `from` (of rank at most 2, say a transpose) in C order,
    /// for an elementwise stage reading them.
    Gather {
        /// The view read.
        from: usize,
        /// Its contiguous copy.
        out: usize,
        /// Where its extents and strides start in `d`: `n0, n1, s0, s1`.
        at: usize,
    },
    /// `out = acc + a · b` (`acc` optional), NumPy's `matmul` for operands of rank 1 or 2.
    MatMul {
        /// The left operand.
        a: usize,
        /// The right operand.
        b: usize,
        /// A value of the output's shape added to the product.
        acc: Option<usize>,
        /// The product.
        out: usize,
        /// Where its extents and strides start in `d`: `m, n, k, as0, as1, bs0, bs1`.
        at: usize,
    },
    /// A loop nest over an iteration shape of rank `rank`: `program` on the elements of
    /// `args` (each read at its own strides, 0 along broadcast dimensions), its outputs
    /// written elementwise into `outs`, or, with `reduce`, combined over the reduced axes into
    /// `outs[0]`. Broadcasting elementwise ops, reductions (`Reduce`, `FusedReduce`) and
    /// `Alloc` are nests (see `super::staged_nest`).
    Nest(Nest),
    /// `out = x` with the region `x[i, a:b:c, …]` set to (or incremented by) `y`
    /// (`IncSubtensor` whose entries are positions and slices: the backward step of a loop
    /// that indexes). `x` is in C order; `y` broadcasts to the region.
    Inc {
        /// The value copied.
        x: usize,
        /// The value written into the region.
        y: usize,
        /// The region's entries.
        entries: Vec<Entry>,
        /// The result.
        out: usize,
        /// Replace rather than add.
        set: bool,
        /// A value copied instead of `x`, which is known to be zeros of its shape: the
        /// stage then computes `acc + inc(0, y)` (the running sum of a backward step).
        acc: Option<usize>,
        /// Where its numbers are in `d`: the entries' ([`ENTRY`](super::staged_index::ENTRY) each), then the region's
        /// extents, the result's strides in it and `y`'s (0 where it broadcasts).
        at: usize,
    },
    /// `out = take(x, idx, axis)` (`AdvancedSubtensor1`, an integer array `idx`: `x[idx]`,
    /// `x[:, idx]`): rows copied in C order.
    Take {
        /// The value indexed (its rows in C order; all of it, for an axis after the first).
        x: usize,
        /// The axis indexed.
        axis: usize,
        /// The indices (a signed integer array, read in C order).
        idx: usize,
        /// The rows gathered.
        out: usize,
        /// Where its numbers are in `d` ([`TAKE`](super::staged_index::TAKE)).
        at: usize,
    },
    /// `out = x` with `out[idx[k]]` (along `axis`) incremented by (or set to) `y[k]` in the
    /// order of `k` (`AdvancedIncSubtensor1`): repeated indices accumulate.
    IncTake {
        /// The value copied (in C order).
        x: usize,
        /// The axis indexed.
        axis: usize,
        /// The rows written (one per index, or one element).
        y: usize,
        /// The indices (a signed integer array, read in C order).
        idx: usize,
        /// The result.
        out: usize,
        /// Replace rather than add.
        set: bool,
        /// A value copied instead of `x`, which is known to be zeros of its shape (as for
        /// [`Stage::Inc`]).
        acc: Option<usize>,
        /// Where its numbers are in `d` ([`TAKE`](super::staged_index::TAKE)).
        at: usize,
    },
    /// `out` = the values `args` (each in C order) joined along `axis`: per index of the
    /// dimensions before `axis` (`d[at]` of them; one for the first axis), each value's block
    /// after it (its element count / `d[at]`) in turn. The backward step of a nested loop joins
    /// a state's initial rows to its trajectory; an RNN step concatenates `[x_t, h]`.
    Join {
        /// The values joined, in order.
        args: Vec<usize>,
        /// The axis.
        axis: usize,
        /// The result.
        out: usize,
        /// Where the number of blocks is in `d`.
        at: usize,
    },
    /// `outs` = the pieces of `x` (in C order) along `axis`, of the extents the param
    /// `sizes` holds: a `Split`, the pullback of a `Join` (each piece copied block by block
    /// as [`Stage::Join`] writes them).
    Split {
        /// The value split.
        x: usize,
        /// The param holding the pieces' extents along `axis`.
        sizes: usize,
        /// The axis.
        axis: usize,
        /// The pieces, in order.
        outs: Vec<usize>,
        /// Where the number of blocks is in `d`.
        at: usize,
    },
    /// A `CheckAndRaise`'s conditions (one-element bools): a false one is an error, which
    /// ends the loop after the step, and the interpreter's loop raises the check's error.
    Check {
        /// The conditions.
        conds: Vec<usize>,
    },
    /// A mark opening or closing the stages of one branch of an `IfElse`: the stages between
    /// [`Mark::If`] and its [`Mark::Else`] run when the condition holds, those between the
    /// `Else` and its [`Mark::End`] otherwise. Each branch ends by writing the node's outputs,
    /// so only the branch taken computes anything (as the interpreter runs only that branch).
    Mark(Mark),
    /// A node C does not compute (linear algebra): the loop calls the executor back to run
    /// the interpreter's kernel of it on `args`, writing `outs` (see `super::staged_host`).
    Host {
        /// An output of the node run.
        node: Var,
        /// The values of its inputs, in order.
        args: Vec<usize>,
        /// The values of its outputs, in order (contiguous).
        outs: Vec<usize>,
        /// Its number among the loop's host calls.
        id: usize,
        /// For a nested loop (a `Scan` node of the step), its own loop, emitted as a C
        /// function beside this one whose address the call passes first (see
        /// `super::staged_host`).
        nested: Option<Box<Nested>>,
    },
}

/// Where a [`Stage::Mark`] is in the stages of a branching step.
#[derive(PartialEq, Clone, Copy, Debug)]
pub(crate) enum Mark {
    /// The first branch starts: it runs when the one-element value is non-zero (NaN is
    /// true, as NumPy's `bool` and the interpreter's `IfElse` take it).
    If(usize),
    /// The second branch starts.
    Else,
    /// Both branches have ended.
    End,
}

/// The C loop of a loop nested in a staged step: the elementwise loop when its step is
/// elementwise (states kept in registers), else a staged loop.
#[derive(PartialEq)]
pub(crate) enum Nested {
    /// An elementwise step (`super::recurrence`).
    Loop(super::recurrence::LoopProgram),
    /// A staged step.
    Staged(StagedLoop),
}

/// The loop nest of a [`Stage::Nest`].
#[derive(PartialEq)]
pub(crate) struct Nest {
    /// The per-element program; its input `k` is `args[k]`.
    pub program: Program,
    /// The values read.
    pub args: Vec<usize>,
    /// The values written (all of one shape).
    pub outs: Vec<usize>,
    /// The combining op and the reduced axes of the iteration shape, for a reduction.
    pub reduce: Option<(ReduceOp, Vec<usize>)>,
    /// For an `Alloc`: the params (integer scalars) giving the iteration extents; any
    /// extent-1 dimension of an argument then broadcasts, as NumPy's `broadcast_to` does
    /// (elsewhere only dimensions of static extent 1 do, the `Elemwise` rule).
    pub alloc: Option<Vec<usize>>,
    /// The rank of the iteration shape.
    pub rank: usize,
    /// Where its numbers start in `d`: the `rank` extents, then per argument its `rank`
    /// strides, then the outputs' `rank` strides.
    pub at: usize,
}

/// A loop C runs whole with a staged step (see the module documentation).
#[derive(PartialEq)]
pub(crate) struct StagedLoop {
    /// Every value of the step, body inputs first, each after the values it is made from.
    pub values: Vec<Value>,
    /// The stages, in order.
    pub stages: Vec<Stage>,
    /// Per output (states' next values, then mapped outputs), its value.
    pub outputs: Vec<usize>,
    /// Per value, the output whose row it is written into (else it is in scratch, or is not
    /// computed).
    pub home: Vec<Option<usize>>,
    /// Per sequence, its taps.
    pub sequence_taps: Vec<Vec<i64>>,
    /// Per state, its taps.
    pub state_taps: Vec<Vec<i64>>,
    /// Whether sequences are read from their last window.
    pub go_backwards: bool,
    /// Per output, the rows of its ring buffer (0: the whole trajectory); see
    /// [`super::ring_rows`].
    pub ring: Vec<usize>,
    /// The value of the `until` condition (a 0-d value the loop stops after when it is true).
    pub until: Option<usize>,
    /// The entries of `d` after the element counts and scratch offsets: the extents and
    /// strides of the stages that take them (products, gathers, nests).
    pub slots: usize,
}

impl StagedLoop {
    /// The other value (loop-invariant) that a product stage reads as its left operand, a
    /// matrix, when the right one is a vector: the loop copies it into column order once
    /// (into scratch), where a matrix–vector product sums scaled columns in registers. Gives
    /// the index among the other values.
    pub fn invariant_matrix(&self, stage: &Stage) -> Option<usize> {
        let Stage::MatMul { a, b, .. } = stage else {
            return None;
        };
        let n_taps = self.n_taps();
        match self.values[*a].kind {
            ValueKind::Input(k)
                if k >= n_taps
                    && self.values[*a].ty.ndim() == 2
                    && self.values[*b].ty.ndim() == 1 =>
            {
                Some(k - n_taps)
            }
            _ => None,
        }
    }

    /// Where value `i`'s element count is in `d`.
    pub fn numel_at(&self, i: usize) -> usize {
        i
    }

    /// Where value `i`'s byte offset in scratch is in `d`.
    pub fn offset_at(&self, i: usize) -> usize {
        self.values.len() + i
    }

    /// The length of `d`.
    pub fn dims_len(&self) -> usize {
        2 * self.values.len() + self.slots
    }

    /// The number of other (loop-invariant) values: params are passed after them.
    pub fn n_others(&self) -> usize {
        self.values
            .iter()
            .filter(|v| matches!(v.kind, ValueKind::Input(k) if k >= self.n_taps()))
            .count()
    }

    /// The number of body inputs that are taps of sequences and states.
    fn n_taps(&self) -> usize {
        self.sequence_taps
            .iter()
            .chain(&self.state_taps)
            .map(Vec::len)
            .sum()
    }
}

/// The exported loop `ox_sN` of a [`StagedLoop`]:
///
/// ```c
/// int32_t ox_sN(int64_t total, const int64_t *d, const void *const *seq, const int64_t *win,
///               const void *const *oth, void *const *buf, void *scr, int64_t *done,
///               void *hctx, ox_host_fn host);
/// ```
///
/// runs `total` steps. `d` holds each value's element count, each scratch value's byte
/// offset in `scr` and each product's extents and strides (see [`StagedLoop`]). Sequence `i`
/// is `seq[i]`, C-contiguous rows of its taps' element count, of which `win[i]` windows fit
/// its taps; state `i`'s buffer `buf[i]` holds its `-min(taps)` initial rows and then one
/// row per step (or a ring of them), mapped output `m`'s `buf[n_states + m]` one row per
/// step; other value `k` is `oth[k]`, C-contiguous, and the params follow them in `oth`, in
/// the order of their values. Sets `*done` to the steps run (with an `until` condition, the
/// step it held after, inclusive); returns non-zero if an element was an error or an index
/// out of range (the executor then runs the interpreter's loop). A [`Stage::Host`] calls
/// `host(hctx, id, inputs, outputs)`; a non-zero return ends the loop the same way.
pub(crate) fn emit(id: usize, p: &StagedLoop) -> String {
    emit_named(&format!("ox_s{id}"), "OX_EXPORT", p)
}

/// The loop of `p` as the C function `name`, declared with `linkage` (`OX_EXPORT`, or
/// `static` for a nested loop), after the functions of its nested loops (`{name}_n{id}`).
fn emit_named(name: &str, linkage: &str, p: &StagedLoop) -> String {
    let ty = |v: usize| ctype(p.values[v].ty.dtype);
    let mut s = String::new();
    for st in &p.stages {
        if let Stage::Host {
            nested: Some(inner),
            id,
            ..
        } = st
        {
            let inner_name = format!("{name}_n{id}");
            s.push_str(&match &**inner {
                Nested::Loop(l) => super::recurrence::emit_named(&inner_name, "static", l),
                Nested::Staged(l) => emit_named(&inner_name, "static", l),
            });
        }
    }
    let mut helpers: Vec<DType> = Vec::new();
    for st in &p.stages {
        if let Stage::MatMul { out, .. } = st {
            let d = p.values[*out].ty.dtype;
            if !helpers.contains(&d) {
                let lanes = if d == DType::F32 { 16 } else { 8 };
                s.push_str(&super::matmul::helper(ctype(d), lanes));
                helpers.push(d);
            }
        }
    }
    let _ = write!(
        s,
        "{linkage} int32_t {name}(int64_t total, const int64_t *d, const void *const *seq, \
         const int64_t *win, const void *const *oth, void *const *buf, void *scr, \
         int64_t *done, void *hctx, ox_host_fn host) {{\n  (void)seq; (void)win; (void)oth; (void)scr; \
         (void)hctx; (void)host;\n"
    );
    for (v, value) in p.values.iter().enumerate() {
        if value.kind == ValueKind::Computed && p.home[v].is_none() {
            let _ = writeln!(
                s,
                "  {t} *v{v} = ({t} *)((char *)scr + d[{}]);",
                p.offset_at(v),
                t = ty(v)
            );
        }
    }
    // Loop-invariant matrices of matrix–vector products, in column order (when in row order).
    for st in &p.stages {
        if let (Some(o), Stage::MatMul { out, at, .. }) = (p.invariant_matrix(st), st) {
            let _ = writeln!(
                s,
                "  const {t} *m{at} = (const {t} *)oth[{o}];\n  int64_t m{at}s0 = d[{}], m{at}s1 = d[{}];\n  \
                 if (d[{}] == 1 && m{at}s1 == 1 && m{at}s0 != 1) {{\n    \
                 {t} *w = ({t} *)((char *)scr + d[{}]);\n    \
                 for (int64_t i = 0; i < d[{at}]; i++)\n      \
                 for (int64_t p = 0; p < d[{}]; p++) w[p * d[{at}] + i] = m{at}[i * m{at}s0 + p];\n    \
                 m{at} = w;\n    m{at}s0 = 1;\n    m{at}s1 = d[{at}];\n  }}",
                at + 3,
                at + 4,
                at + 1,
                at + 7,
                at + 2,
                t = ty(*out)
            );
        }
    }
    s.push_str("  for (int64_t t = 0; t < total; t++) {\n");
    // Where each body input is this step.
    let mut k = 0;
    for (i, row) in sequence_rows(&p.sequence_taps, p.go_backwards) {
        let _ = writeln!(
            s,
            "    {t} *v{k} = ({t} *)seq[{i}] + {row} * d[{k}];",
            t = ty(k)
        );
        k += 1;
    }
    for (i, taps) in p.state_taps.iter().enumerate() {
        let need = oxtensor_graph::Scan::buffer_len(taps) as i64;
        for &tap in taps {
            let _ = writeln!(
                s,
                "    {t} *v{k} = ({t} *)buf[{i}] + {} * d[{}];",
                row(&format!("t + {}", need + tap), p.ring[i]),
                p.numel_at(p.outputs[i]),
                t = ty(k)
            );
            k += 1;
        }
    }
    s.push_str("    int32_t bad = 0;\n");
    // Values computed into output rows: their pointers need only `t` (a branch's outputs are
    // written in both branches, so they are set before either).
    for (v, value) in p.values.iter().enumerate() {
        if let (ValueKind::Computed, Some(m)) = (&value.kind, p.home[v]) {
            let _ = writeln!(
                s,
                "    {t} *v{v} = ({t} *)buf[{m}] + {} * d[{}];",
                out_row(p, m),
                p.numel_at(v),
                t = ty(v)
            );
        }
    }
    // Each other value's pointer is set before the first stage reading it, after those it
    // needs.
    let mut counters = (0, p.n_others());
    let mut pending = p.values.iter().enumerate().peekable();
    for (i, st) in p.stages.iter().enumerate() {
        while let Some((v, _)) = pending.next_if(|(_, value)| value.after <= i) {
            pointer(&mut s, p, v, k, &mut counters);
        }
        stage(&mut s, p, st, name);
    }
    for (v, _) in pending {
        pointer(&mut s, p, v, k, &mut counters);
    }
    // Outputs that are not written in place: copied into their rows.
    for (m, &v) in p.outputs.iter().enumerate() {
        if p.home[v] != Some(m) {
            let _ = writeln!(
                s,
                "    memcpy(({t} *)buf[{m}] + {} * d[{n}], v{v}, (size_t)d[{n}] * sizeof({t}));",
                out_row(p, m),
                n = p.numel_at(v),
                t = ty(v)
            );
        }
    }
    s.push_str("    if (bad) return 1;\n");
    if let Some(c) = p.until {
        let _ = writeln!(s, "    if (v{c}[0]) {{ *done = t + 1; return 0; }}");
    }
    s.push_str("  }\n  *done = total;\n  return 0;\n}\n");
    s
}

/// The C row index output `m` writes this step.
fn out_row(p: &StagedLoop, m: usize) -> String {
    let at = match p.state_taps.get(m) {
        Some(taps) => format!("t + {}", oxtensor_graph::Scan::buffer_len(taps)),
        None => "t".to_string(),
    };
    row(&at, p.ring[m])
}

/// Appends the C setting value `v`'s pointer (`k`: the number of tap inputs; `counters`: the
/// other values and params placed so far).
fn pointer(s: &mut String, p: &StagedLoop, v: usize, k: usize, counters: &mut (usize, usize)) {
    let t = ctype(p.values[v].ty.dtype);
    match &p.values[v].kind {
        ValueKind::Input(i) if *i >= k => {
            let _ = writeln!(s, "    {t} *v{v} = ({t} *)oth[{}];", counters.0);
            counters.0 += 1;
        }
        ValueKind::Param { .. } => {
            let _ = writeln!(s, "    {t} *v{v} = ({t} *)oth[{}];", counters.1);
            counters.1 += 1;
        }
        ValueKind::Indexed { of, entries, at } => {
            let _ = writeln!(s, "    {t} *v{v};\n    {{\n      int64_t off = 0;");
            super::staged_index::resolve(s, entries, *at, "      ");
            let _ = writeln!(s, "      v{v} = v{of} + off;\n    }}");
        }
        // Computed values are in scratch (set before the loop) or in output rows (set first
        // in the step).
        ValueKind::Input(_) | ValueKind::Folded | ValueKind::Computed => {}
        ValueKind::View { of, .. } | ValueKind::Reshape { of, .. } => {
            let _ = writeln!(s, "    {t} *v{v} = v{of};");
        }
    }
}

/// Appends the C of stage `st` of `p`, the loop of C function `name`.
fn stage(s: &mut String, p: &StagedLoop, st: &Stage, name: &str) {
    let ty = |v: usize| ctype(p.values[v].ty.dtype);
    match st {
        Stage::Elem {
            program,
            args,
            outs,
        } => {
            let first = outs.first().copied().unwrap_or(0);
            let _ = writeln!(
                s,
                "    {{\n      const int64_t n = d[{}];\n#pragma GCC ivdep\n      \
                 for (int64_t j = 0; j < n; j++) {{",
                p.numel_at(first)
            );
            for (k, (v, one)) in args.iter().enumerate() {
                let at = if *one { "0" } else { "j" };
                let _ = writeln!(s, "        const {} x{k} = v{v}[{at}];", ty(*v));
            }
            for st in &program.stmts {
                let _ = writeln!(s, "        {st}");
            }
            for e in &program.errors {
                let _ = writeln!(s, "        bad |= {e};");
            }
            for (o, (value, _)) in outs.iter().zip(&program.outputs) {
                let _ = writeln!(s, "        v{o}[j] = {value};");
            }
            s.push_str("      }\n    }\n");
        }
        Stage::Nest(n) => super::staged_nest::emit(s, p, n),
        Stage::Join { args, out, at, .. } => {
            super::staged_join::blocks(s, p, (*out, args), true, *at)
        }
        Stage::Split { x, outs, at, .. } => {
            super::staged_join::blocks(s, p, (*x, outs), false, *at)
        }
        Stage::Check { conds } => {
            for c in conds {
                let _ = writeln!(s, "    bad |= !v{c}[0];");
            }
        }
        Stage::Mark(Mark::If(c)) => {
            let _ = writeln!(s, "    if (v{c}[0]) {{");
        }
        Stage::Mark(Mark::Else) => s.push_str("    } else {\n"),
        Stage::Mark(Mark::End) => s.push_str("    }\n"),
        Stage::Host {
            args,
            outs,
            id,
            nested,
            ..
        } => {
            let f = nested.as_ref().map(|_| format!("{name}_n{id}"));
            super::staged_host::emit(s, args, outs, *id, f.as_deref());
        }
        Stage::Inc {
            x,
            y,
            entries,
            out,
            set,
            acc,
            at,
        } => {
            let rank = region_rank(entries, p.values[*x].ty.ndim());
            let parts = super::staged_index::IncParts {
                x: acc.unwrap_or(*x),
                y: *y,
                entries,
                out: *out,
                set: *set,
                at: *at,
            };
            super::staged_index::inc(s, p, parts, rank);
        }
        Stage::Take {
            x, idx, out, at, ..
        } => {
            super::staged_index::take(s, p, (*x, *idx, *out), None, *at);
        }
        Stage::IncTake {
            x,
            y,
            idx,
            out,
            set,
            acc,
            at,
            ..
        } => {
            let from = acc.unwrap_or(*x);
            super::staged_index::take(s, p, (from, *idx, *out), Some((*y, *set)), *at);
        }
        Stage::Gather { from, out, at } => {
            let _ = writeln!(
                s,
                "    for (int64_t i = 0; i < d[{at}]; i++) {{\n      \
                 for (int64_t j = 0; j < d[{}]; j++) {{\n        \
                 v{out}[i * d[{}] + j] = v{from}[i * d[{}] + j * d[{}]];\n      }}\n    }}",
                at + 1,
                at + 1,
                at + 2,
                at + 3
            );
        }
        Stage::MatMul { a, b, acc, out, at } => {
            let acc = acc.map_or_else(|| "0".to_string(), |v| format!("v{v}"));
            let (left, s0, s1) = if p.invariant_matrix(st).is_some() {
                (format!("m{at}"), format!("m{at}s0"), format!("m{at}s1"))
            } else {
                (
                    format!("v{a}"),
                    format!("d[{}]", at + 3),
                    format!("d[{}]", at + 4),
                )
            };
            let _ = writeln!(
                s,
                "    ox_mm_{t}(d[{at}], d[{}], d[{}], {left}, {s0}, {s1}, v{b}, d[{}], \
                 d[{}], {acc}, v{out});",
                at + 1,
                at + 2,
                at + 5,
                at + 6,
                t = ty(*out)
            );
        }
    }
}

/// The rank of the region a basic index of `entries` selects in a value of rank `ndim`: its
/// slices' dimensions and the dimensions it does not index.
pub(crate) fn region_rank(entries: &[Entry], ndim: usize) -> usize {
    let slices = entries
        .iter()
        .filter(|e| matches!(e, Entry::Slice { .. }))
        .count();
    slices + ndim.saturating_sub(entries.len())
}
