//! Whole loops in C for steps that are not elementwise: a [`Scan`] whose step is made of
//! elementwise ops (`Elemwise`, `Composite`), layout views (`DimShuffle`) and matrix products
//! of rank at most 2 (`MatMul`: matrix–vector, vector–matrix, outer products) becomes one C
//! function running every step as a *staged* program. Each stage is one loop: an elementwise
//! program over a value's elements, or a matrix product. The values a step computes live in
//! scratch buffers the executor allocates once per call, or straight in the output rows of
//! the step; the loop-invariant other values are read where they are.
//!
//! Shapes are not compiled in: the executor (`crate::staged`) works out every value's shape
//! from the operands once per call, checks that each stage reads and writes within its
//! buffers, and passes the extents, strides and scratch offsets in one array `d`, at the
//! indices [`StagedLoop`] assigns.

use super::program::{Program, inline};
use super::recurrence::{row, sequence_rows};
use super::scalar::{ctype, expr, literal};
use oxtensor_data::DType;
use oxtensor_graph::{NodeKind, Op, ScalarOp, Scan, TensorType, Var, toposort};
use rustc_hash::FxHashMap;
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
}

/// One value of the step.
#[derive(PartialEq, Debug)]
pub(crate) struct Value {
    /// Its static type.
    pub ty: TensorType,
    /// Where it comes from.
    pub kind: ValueKind,
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
        let n_taps: usize = self
            .sequence_taps
            .iter()
            .chain(&self.state_taps)
            .map(Vec::len)
            .sum();
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
        2 * self.values.len() + SLOT * self.n_slotted()
    }

    /// The stages with extents and strides in `d` (products and gathers).
    fn n_slotted(&self) -> usize {
        self.stages
            .iter()
            .filter(|s| matches!(s, Stage::MatMul { .. } | Stage::Gather { .. }))
            .count()
    }

    /// The staged loop of `s`, or `None` when some step node is neither elementwise (as C
    /// computes it) nor a `DimShuffle` nor a `MatMul` of operands of rank 1 or 2 of one float
    /// dtype; an elementwise op reads a transposed view; the loop has an `until` condition; or
    /// a state's next value has another dtype than the state.
    pub fn of_scan(s: &Scan) -> Option<StagedLoop> {
        if s.until {
            return None;
        }
        let inputs = s.body.input_types();
        let mut values: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(k, t)| Value {
                ty: t.clone(),
                kind: ValueKind::Input(k),
            })
            .collect();
        let mut of: FxHashMap<Var, usize> = FxHashMap::default();
        let mut stages = Vec::new();
        let mut n_mm = 0;
        let uses = use_counts(s);
        let find = |v: &Var, of: &FxHashMap<Var, usize>| match v.node().kind() {
            NodeKind::Placeholder(i) => Some(*i),
            _ => of.get(v).copied(),
        };
        for node in toposort(s.body.outputs()) {
            let op = node.op()?;
            let out_ty = node.types().first()?.clone();
            match op {
                // A view of a constant is read as its literal by the ops reading it.
                Op::DimShuffle { .. } if constant(&Var::output_of(&node, 0)).is_some() => {}
                Op::DimShuffle { order } => {
                    let x = find(node.inputs().first()?, &of)?;
                    of.insert(Var::output_of(&node, 0), values.len());
                    values.push(Value {
                        ty: out_ty,
                        kind: ValueKind::View {
                            of: x,
                            order: order.to_vec(),
                        },
                    });
                }
                Op::MatMul => {
                    let (a, b) = (
                        find(node.inputs().first()?, &of)?,
                        find(node.inputs().get(1)?, &of)?,
                    );
                    let ok_rank = |t: &TensorType| (1..=2).contains(&t.ndim());
                    let float = out_ty.dtype;
                    if !matches!(float, DType::F32 | DType::F64)
                        || [a, b]
                            .iter()
                            .any(|&v| !ok_rank(&values[v].ty) || values[v].ty.dtype != float)
                    {
                        return None;
                    }
                    of.insert(Var::output_of(&node, 0), values.len());
                    values.push(Value {
                        ty: out_ty,
                        kind: ValueKind::Computed,
                    });
                    stages.push(Stage::MatMul {
                        a,
                        b,
                        acc: None,
                        out: values.len() - 1,
                        at: n_mm,
                    });
                    n_mm += 1;
                }
                Op::Elemwise(_) | Op::Composite(_) => {
                    let mut args: Vec<(String, DType)> = Vec::new();
                    let mut reads: Vec<(usize, bool)> = Vec::new();
                    let mut read_vars: Vec<&Var> = Vec::new();
                    for v in node.inputs() {
                        if let Some(c) = constant(v) {
                            args.push((c, v.dtype()));
                            continue;
                        }
                        let mut x = find(v, &of)?;
                        if !keeps_layout(&values, x) {
                            if values[x].ty.ndim() > 2 {
                                return None;
                            }
                            values.push(Value {
                                ty: values[x].ty.clone(),
                                kind: ValueKind::Computed,
                            });
                            stages.push(Stage::Gather {
                                from: x,
                                out: values.len() - 1,
                                at: n_mm,
                            });
                            n_mm += 1;
                            x = values.len() - 1;
                        }
                        args.push((format!("x{}", reads.len()), v.dtype()));
                        reads.push((x, one_element(&values[x].ty)));
                        read_vars.push(v);
                    }
                    // `acc + a · b` whose product is read nowhere else: the product's stage
                    // adds `acc`, and moves here, after whatever computes `acc`.
                    if let (Op::Elemwise(ScalarOp::Add), [(x, false), (y, false)]) =
                        (op, reads.as_slice())
                    {
                        let pairs = [(*x, *y, read_vars[1]), (*y, *x, read_vars[0])];
                        let fused = pairs.into_iter().find_map(|(acc, p, var)| {
                            let once = uses.get(var) == Some(&1);
                            fusable(&stages, &values, acc, p, &out_ty)
                                .filter(|_| once)
                                .map(|i| (i, acc))
                        });
                        if let Some((i, acc_value)) = fused {
                            let mut stage = stages.remove(i);
                            values.push(Value {
                                ty: out_ty,
                                kind: ValueKind::Computed,
                            });
                            of.insert(Var::output_of(&node, 0), values.len() - 1);
                            if let Stage::MatMul { acc, out, .. } = &mut stage {
                                values[*out].kind = ValueKind::Folded;
                                *acc = Some(acc_value);
                                *out = values.len() - 1;
                            }
                            stages.push(stage);
                            continue;
                        }
                    }
                    let out_types: Vec<DType> = node.types().iter().map(|t| t.dtype).collect();
                    let inputs: Vec<DType> = reads.iter().map(|r| values[r.0].ty.dtype).collect();
                    let program = elem_program(op, inputs, &args, &out_types)?;
                    let mut outs = Vec::new();
                    for (k, t) in node.types().iter().enumerate() {
                        if t.ndim() != out_ty.ndim() {
                            return None;
                        }
                        of.insert(Var::output_of(&node, k), values.len());
                        outs.push(values.len());
                        values.push(Value {
                            ty: t.clone(),
                            kind: ValueKind::Computed,
                        });
                    }
                    stages.push(Stage::Elem {
                        program,
                        args: reads,
                        outs,
                    });
                }
                _ => return None,
            }
        }
        let outputs = s
            .body
            .outputs()
            .iter()
            .map(|o| find(o, &of))
            .collect::<Option<Vec<usize>>>()?;
        // A state's next value has the state's dtype.
        let n_seq_taps: usize = s.sequence_taps.iter().map(Vec::len).sum();
        let mut at = n_seq_taps;
        for (i, taps) in s.state_taps.iter().enumerate() {
            if inputs[at..at + taps.len()]
                .iter()
                .any(|t| t.dtype != values[outputs[i]].ty.dtype)
            {
                return None;
            }
            at += taps.len();
        }
        // Outputs that are not computed values of their own are copied into their rows, which
        // needs their elements in order.
        let mut home = vec![None; values.len()];
        for (i, &v) in outputs.iter().enumerate() {
            if values[v].kind == ValueKind::Computed && home[v].is_none() {
                home[v] = Some(i);
            } else if !keeps_layout(&values, v) {
                return None;
            }
        }
        // Stages numbered their products in order; `at` becomes the index in `d`.
        let base = 2 * values.len();
        for st in &mut stages {
            if let Stage::MatMul { at, .. } | Stage::Gather { at, .. } = st {
                *at = base + SLOT * *at;
            }
        }
        Some(StagedLoop {
            values,
            stages,
            outputs,
            home,
            sequence_taps: s.sequence_taps.clone(),
            state_taps: s.state_taps.clone(),
            go_backwards: s.go_backwards,
            ring: (0..s.n_outputs()).map(|i| super::ring_rows(s, i)).collect(),
        })
    }
}

/// How many times each step node's output is read (by nodes or as a body output).
fn use_counts(s: &Scan) -> FxHashMap<Var, usize> {
    let mut n: FxHashMap<Var, usize> = FxHashMap::default();
    for node in toposort(s.body.outputs()) {
        for v in node.inputs() {
            *n.entry(v.clone()).or_default() += 1;
        }
    }
    for o in s.body.outputs() {
        *n.entry(o.clone()).or_default() += 1;
    }
    n
}

/// The index of the `MatMul` stage computing `product` (adding nothing yet), when it can add
/// `acc` instead: both are full values of `out`'s rank and dtype, `acc` in C order.
fn fusable(
    stages: &[Stage],
    values: &[Value],
    acc: usize,
    product: usize,
    out: &TensorType,
) -> Option<usize> {
    let index = stages
        .iter()
        .position(|s| matches!(s, Stage::MatMul { out, acc: None, .. } if *out == product))?;
    let same = |t: &TensorType| t.ndim() == out.ndim() && t.dtype == out.dtype;
    (acc != product
        && same(&values[product].ty)
        && same(&values[acc].ty)
        && keeps_layout(values, acc))
    .then_some(index)
}

/// Whether value `v` holds its elements in C order (it is not a view, or each view on the
/// way keeps the order of the dimensions it keeps).
fn keeps_layout(values: &[Value], mut v: usize) -> bool {
    while let ValueKind::View { of, order } = &values[v].kind {
        let kept: Vec<usize> = order.iter().flatten().copied().collect();
        if kept.windows(2).any(|w| w[0] > w[1]) {
            return false;
        }
        v = *of;
    }
    true
}

/// A C literal for `v` when it is a one-element constant, possibly seen through views.
fn constant(v: &Var) -> Option<String> {
    match (v.node().kind(), v.owner()) {
        (NodeKind::Constant(c), _) => literal(c),
        (_, Some((Op::DimShuffle { .. }, [x]))) => constant(x),
        _ => None,
    }
}

/// Whether a value of type `t` always has exactly one element.
fn one_element(t: &TensorType) -> bool {
    t.shape.iter().all(|d| *d == Some(1))
}

/// The program of an `Elemwise` or `Composite` node on C arguments `args` (`x0, x1, …` for
/// the values read, of dtypes `inputs`; literals for constants).
fn elem_program(
    op: &Op,
    inputs: Vec<DType>,
    args: &[(String, DType)],
    outs: &[DType],
) -> Option<Program> {
    let mut stmts = Vec::new();
    let mut errors = Vec::new();
    let values = match op {
        Op::Elemwise(s) => {
            let out = *outs.first()?;
            let e = expr(*s, args, out)?;
            stmts.push(format!("const {} t0 = {};", ctype(out), e.value));
            errors.extend(e.error);
            vec!["t0".to_string()]
        }
        Op::Composite(g) => inline(g, args, &mut stmts, &mut errors)?,
        _ => return None,
    };
    Some(Program {
        inputs,
        stmts,
        errors,
        outputs: values.into_iter().zip(outs.iter().copied()).collect(),
    })
}

/// The exported loop `ox_sN` of a [`StagedLoop`]:
///
/// ```c
/// int32_t ox_sN(int64_t total, const int64_t *d, const void *const *seq, const int64_t *win,
///               const void *const *oth, void *const *buf, void *scr, int64_t *done);
/// ```
///
/// runs `total` steps. `d` holds each value's element count, each scratch value's byte
/// offset in `scr` and each product's extents and strides (see [`StagedLoop`]). Sequence `i`
/// is `seq[i]`, C-contiguous rows of its taps' element count, of which `win[i]` windows fit
/// its taps; state `i`'s buffer `buf[i]` holds its `-min(taps)` initial rows and then one
/// row per step (or a ring of them), mapped output `m`'s `buf[n_states + m]` one row per
/// step; other value `k` is `oth[k]`, C-contiguous. Sets `*done` to the steps run; returns
/// non-zero if an element was an error (the executor then runs the interpreter's loop).
pub(crate) fn emit(id: usize, p: &StagedLoop) -> String {
    let ty = |v: usize| ctype(p.values[v].ty.dtype);
    let mut s = String::new();
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
        "OX_EXPORT int32_t ox_s{id}(int64_t total, const int64_t *d, const void *const *seq, \
         const int64_t *win, const void *const *oth, void *const *buf, void *scr, \
         int64_t *done) {{\n  (void)seq; (void)win; (void)oth; (void)scr;\n"
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
    let mut other = 0;
    for (v, value) in p.values.iter().enumerate() {
        match &value.kind {
            ValueKind::Input(i) if *i >= k => {
                let _ = writeln!(s, "    {t} *v{v} = ({t} *)oth[{other}];", t = ty(v));
                other += 1;
            }
            ValueKind::Input(_) | ValueKind::Folded => {}
            ValueKind::View { of, .. } => {
                let _ = writeln!(s, "    {t} *v{v} = v{of};", t = ty(v));
            }
            ValueKind::Computed => {
                if let Some(m) = p.home[v] {
                    let _ = writeln!(
                        s,
                        "    {t} *v{v} = ({t} *)buf[{m}] + {} * d[{}];",
                        out_row(p, m),
                        p.numel_at(v),
                        t = ty(v)
                    );
                }
            }
        }
    }
    s.push_str("    int32_t bad = 0;\n");
    for st in &p.stages {
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
    s.push_str("    if (bad) return 1;\n  }\n  *done = total;\n  return 0;\n}\n");
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
