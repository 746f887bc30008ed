//! Lowering a `Scan` step to a [`StagedLoop`]: numbering the step's values (body inputs, each
//! node's outputs, views, params) and turning each node into a stage (see `super::staged`).

use super::program::{Program, inline};
use super::scalar::{ctype, expr, literal};
use super::staged::{Entry, Nest, SLOT, Stage, StagedLoop, Value, ValueKind};
use oxtensor_data::DType;
use oxtensor_graph::{Node, NodeKind, Op, ReduceOp, ScalarOp, Scan, TensorType, Var, toposort};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The values and stages of a step being lowered.
pub(super) struct Lowering {
    /// The values so far.
    pub values: Vec<Value>,
    /// The value of each lowered node output (and constant made a param).
    pub of: FxHashMap<Var, usize>,
    /// The stages so far.
    pub stages: Vec<Stage>,
    /// Entries of `d` the slotted stages so far take.
    pub slots: usize,
    /// The number of body inputs that are taps (the others are loop-invariant).
    pub n_taps: usize,
    /// The computed values of one element whose value at step 0 the executor can work out
    /// before the loop from the inputs (see `super::staged_index`).
    pub scalars: rustc_hash::FxHashSet<usize>,
    /// Per other (loop-invariant) value, whether it is known to be all zeros.
    pub zeros: Vec<bool>,
    /// The value each input (placeholder) of the graph being lowered is: the step's own
    /// inputs, or an inlined body's operands (see `super::staged_branch`).
    pub inputs: Vec<usize>,
    /// The first stage of the branch being lowered (0 outside branches, where a branch's
    /// first stage follows its `If` mark): a rule that moves or changes an earlier stage
    /// (folding a sum into a product) must not reach across a branch's start, which would
    /// make the stage conditional or the branch's work not.
    pub block: usize,
}

/// What the program of a node reads: C arguments (`x0, x1, …` for values, literals for
/// one-element constants), the values read, and the variables they come from.
type Reads = (Vec<(String, DType)>, Vec<usize>, Vec<Var>);

impl Lowering {
    /// Appends a value.
    pub(super) fn push(&mut self, ty: TensorType, kind: ValueKind) -> usize {
        self.values.push(Value {
            ty,
            kind,
            origin: None,
            after: self.stages.len(),
        });
        self.values.len() - 1
    }

    /// Appends the value `v` is. Inside a branch the value keeps no origin: the executor's
    /// step-0 values (`crate::staged_index`) evaluate the step's nodes, not a branch's.
    pub(super) fn define(&mut self, v: Var, kind: ValueKind) -> usize {
        let x = self.push(v.ty().clone(), kind);
        if self.block == 0 {
            self.values[x].origin = Some(v.clone());
        }
        self.of.insert(v, x);
        x
    }

    /// The value `v` is: a body input, a lowered node's output, or a constant (a param).
    pub(super) fn value(&mut self, v: &Var) -> Option<usize> {
        match v.node().kind() {
            NodeKind::Placeholder(i) => self.inputs.get(*i).copied(),
            _ if self.of.contains_key(v) => self.of.get(v).copied(),
            NodeKind::Constant(_) => Some(self.define(
                v.clone(),
                ValueKind::Param {
                    var: v.clone(),
                    args: Vec::new(),
                },
            )),
            _ => None,
        }
    }

    /// Whether value `x` is known before the loop: a param or an other (loop-invariant)
    /// value of the step.
    pub(super) fn is_param(&self, x: usize) -> bool {
        match self.values[x].kind {
            ValueKind::Param { .. } => true,
            ValueKind::Input(k) => k >= self.n_taps,
            _ => false,
        }
    }

    /// Lowers `node` as a param when it is one: an extent (`Shape_i`, `Shape`) of any value,
    /// or a shape-like op (elementwise arithmetic, `MakeVector`, views, indexing, `Alloc`,
    /// `Join`, `ARange`) whose inputs are params, other values and constants, not all constants.
    fn param(&mut self, node: &Arc<Node>, op: &Op) -> Option<()> {
        // Fusion may compute several extents in one Composite: each output is a param.
        if node.types().len() != 1 && !matches!(op, Op::Composite(_)) {
            return None;
        }
        let inputs = node.inputs();
        let args = match op {
            Op::Shape | Op::ShapeI(_) => vec![Some(self.value(inputs.first()?)?)],
            Op::Elemwise(_)
            | Op::Composite(_)
            | Op::MakeVector(_)
            | Op::DimShuffle { .. }
            | Op::SpecifyShape(_)
            | Op::Reshape { .. }
            | Op::Alloc { .. }
            | Op::Subtensor(_)
            | Op::Arange(_)
            | Op::Join { .. } => {
                let args = inputs
                    .iter()
                    .map(|v| match v.node().kind() {
                        NodeKind::Constant(_) => Some(None),
                        NodeKind::Placeholder(i) => self
                            .inputs
                            .get(*i)
                            .filter(|&&x| self.is_param(x))
                            .map(|&x| Some(x)),
                        _ => self
                            .of
                            .get(v)
                            .filter(|&&x| self.is_param(x))
                            .map(|&x| Some(x)),
                    })
                    .collect::<Option<Vec<_>>>()?;
                // Views of the other values stay views (read in place, and a product
                // takes a transposed matrix as it is).
                let view = matches!(
                    op,
                    Op::DimShuffle { .. } | Op::SpecifyShape(_) | Op::Reshape { .. }
                );
                let read = |a: &Option<usize>| {
                    a.is_some_and(|x| {
                        !view || matches!(self.values[x].kind, ValueKind::Param { .. })
                    })
                };
                if !args.iter().any(read) || args.iter().any(|a| a.is_some() && !read(a)) {
                    return None;
                }
                args
            }
            _ => return None,
        };
        for k in 0..node.types().len() {
            let var = Var::output_of(node, k);
            let args = args.clone();
            self.define(var.clone(), ValueKind::Param { var, args });
        }
        Some(())
    }

    /// What the program of `node` reads (see [`Reads`]).
    fn reads(&mut self, node: &Arc<Node>) -> Option<Reads> {
        let (mut args, mut reads, mut vars) = (Vec::new(), Vec::new(), Vec::new());
        for v in node.inputs() {
            if let Some(c) = constant(v) {
                args.push((c, v.dtype()));
                continue;
            }
            let x = self.value(v)?;
            args.push((format!("x{}", reads.len()), v.dtype()));
            reads.push(x);
            vars.push(v.clone());
        }
        Some((args, reads, vars))
    }

    /// Appends a [`Stage::Nest`], taking its entries of `d`.
    fn nest(&mut self, mut nest: Nest) -> Option<()> {
        if nest
            .args
            .iter()
            .any(|&a| self.values[a].ty.ndim() > nest.rank)
        {
            return None;
        }
        nest.at = self.slots;
        self.slots += nest.rank * (2 + nest.args.len());
        self.stages.push(Stage::Nest(nest));
        Some(())
    }

    /// The values of `node`'s outputs, all of rank `rank`, as computed values.
    pub(super) fn outputs(&mut self, node: &Arc<Node>, rank: usize) -> Option<Vec<usize>> {
        let mut outs = Vec::new();
        for k in 0..node.types().len() {
            let v = Var::output_of(node, k);
            if v.ty().ndim() != rank {
                return None;
            }
            outs.push(self.define(v, ValueKind::Computed));
        }
        Some(outs)
    }

    /// Lowers a reduction (`Reduce`, or `FusedReduce` with its program) of `node`.
    fn reduction(&mut self, node: &Arc<Node>, op: ReduceOp, axes: &[usize]) -> Option<()> {
        let (args, reads, _) = self.reads(node)?;
        let inputs: Vec<DType> = reads.iter().map(|&x| self.values[x].ty.dtype).collect();
        let (mut stmts, mut errors) = (Vec::new(), Vec::new());
        let (value, dtype) = match node.op()? {
            Op::FusedReduce { body, .. } => {
                let outs = inline(body, &args, &mut stmts, &mut errors)?;
                (outs.into_iter().next()?, body.outputs().first()?.dtype())
            }
            _ => args.into_iter().next()?,
        };
        let out_ty = node.types().first()?;
        if dtype.is_complex() || out_ty.dtype != op.output_dtype(dtype) {
            return None;
        }
        let rank = out_ty.ndim() + axes.len();
        if axes.iter().any(|&a| a >= rank) {
            return None;
        }
        let outs = self.outputs(node, out_ty.ndim())?;
        self.nest(Nest {
            program: Program {
                inputs,
                stmts,
                errors,
                outputs: vec![(value, dtype)],
            },
            args: reads,
            outs,
            reduce: Some((op, axes.to_vec())),
            alloc: None,
            rank,
            at: 0,
        })
    }

    /// Lowers an `Alloc` of `node` (a value broadcast to the extents its params hold).
    fn alloc(&mut self, node: &Arc<Node>, ndim: usize) -> Option<()> {
        let inputs = node.inputs();
        let dims = inputs[1..]
            .iter()
            .map(|v| self.value(v).filter(|&x| self.is_param(x)))
            .collect::<Option<Vec<usize>>>()?;
        let x = inputs.first()?;
        let out_ty = node.types().first()?;
        if x.dtype() != out_ty.dtype || dims.len() != ndim {
            return None;
        }
        let (value, args) = match constant(x) {
            Some(c) => (c, Vec::new()),
            None => ("x0".to_string(), vec![self.value(x)?]),
        };
        let inputs = args.iter().map(|&a| self.values[a].ty.dtype).collect();
        let outs = self.outputs(node, ndim)?;
        self.nest(Nest {
            program: Program {
                inputs,
                stmts: Vec::new(),
                errors: Vec::new(),
                outputs: vec![(value, x.dtype())],
            },
            args,
            outs,
            reduce: None,
            alloc: Some(dims),
            rank: ndim,
            at: 0,
        })
    }

    /// Lowers an elementwise node (`Elemwise`, `Composite`): a flat loop over its elements
    /// when its operands have its shape or one element; a nest when some broadcasts.
    fn elementwise(
        &mut self,
        node: &Arc<Node>,
        op: &Op,
        uses: &FxHashMap<Var, usize>,
    ) -> Option<()> {
        let out_ty = node.types().first()?.clone();
        let out_types: Vec<DType> = node.types().iter().map(|t| t.dtype).collect();
        let (args, mut reads, read_vars) = self.reads(node)?;
        if reads
            .iter()
            .any(|&x| broadcasts(&self.values[x].ty, &out_ty))
        {
            let inputs: Vec<DType> = reads.iter().map(|&r| self.values[r].ty.dtype).collect();
            let program = elem_program(op, inputs, &args, &out_types)?;
            let outs = self.outputs(node, out_ty.ndim())?;
            return self.nest(Nest {
                program,
                args: reads,
                outs,
                reduce: None,
                alloc: None,
                rank: out_ty.ndim(),
                at: 0,
            });
        }
        // Views read out of order are gathered into C order first.
        for x in &mut reads {
            *x = self.in_c_order(*x)?;
        }
        let reads: Vec<(usize, bool)> = reads
            .into_iter()
            .map(|x| (x, one_element(&self.values[x].ty)))
            .collect();
        // `acc + a · b` whose product is read nowhere else: the product's stage adds `acc`,
        // and moves here, after whatever computes `acc`.
        if let (Op::Elemwise(ScalarOp::Add), [(x, false), (y, false)]) = (op, reads.as_slice()) {
            let pairs = [(*x, *y, &read_vars[1]), (*y, *x, &read_vars[0])];
            let fused = pairs.into_iter().find_map(|(acc, p, var)| {
                let once = uses.get(var) == Some(&1);
                fusable(&self.stages[self.block..], &self.values, acc, p, &out_ty)
                    .map(|i| i + self.block)
                    .filter(|&i| self.outside_branches(i))
                    .filter(|_| once)
                    .map(|i| (i, acc))
            });
            // `acc + inc(0, y)`: the increment copies `acc` instead of the zeros.
            if fused.is_none() {
                let out = Var::output_of(node, 0);
                for (acc, inc, var) in [(*x, *y, &read_vars[1]), (*y, *x, &read_vars[0])] {
                    if uses.get(var) == Some(&1) && self.fold_increment(acc, inc, &out) {
                        return Some(());
                    }
                }
            }
            if let Some((i, acc_value)) = fused {
                let mut stage = self.stages.remove(i);
                for value in &mut self.values {
                    if value.after > i {
                        value.after -= 1;
                    }
                }
                let sum = self.define(Var::output_of(node, 0), ValueKind::Computed);
                if let Stage::MatMul { acc, out, .. } = &mut stage {
                    self.values[*out].kind = ValueKind::Folded;
                    *acc = Some(acc_value);
                    *out = sum;
                }
                self.stages.push(stage);
                return Some(());
            }
        }
        let inputs: Vec<DType> = reads.iter().map(|r| self.values[r.0].ty.dtype).collect();
        let program = elem_program(op, inputs, &args, &out_types)?;
        let known = reads.iter().all(|&(x, _)| self.probeable(x));
        let outs = self.outputs(node, out_ty.ndim())?;
        if known && self.block == 0 && outs.iter().all(|&o| one_element(&self.values[o].ty)) {
            self.scalars.extend(outs.iter().copied());
        }
        self.stages.push(Stage::Elem {
            program,
            args: reads,
            outs,
        });
        Some(())
    }

    /// Lowers a `MatMul` node of operands of rank 1 or 2 of one float dtype.
    fn matmul(&mut self, node: &Arc<Node>) -> Option<()> {
        let a = self.value(node.inputs().first()?)?;
        let b = self.value(node.inputs().get(1)?)?;
        let float = node.types().first()?.dtype;
        let ok = |t: &TensorType| (1..=2).contains(&t.ndim()) && t.dtype == float;
        if !matches!(float, DType::F32 | DType::F64)
            || !ok(&self.values[a].ty)
            || !ok(&self.values[b].ty)
        {
            return None;
        }
        let out = self.define(Var::output_of(node, 0), ValueKind::Computed);
        self.stages.push(Stage::MatMul {
            a,
            b,
            acc: None,
            out,
            at: self.slots,
        });
        self.slots += SLOT;
        Some(())
    }
}

impl Lowering {
    /// Lowers a `FusedMatMul` as the product's stage and the epilogue's elementwise stage over
    /// the product and the other operands. Fusion decides epilogues for whole-array kernels;
    /// inside a step an `acc + a·b` epilogue (a backward step's `dW + g ⊗ h`) is lowered as
    /// that `Add`, so the product's stage takes `acc` as its accumulator.
    fn fused_matmul(
        &mut self,
        node: &Arc<Node>,
        body: &oxtensor_graph::FrozenGraph,
        uses: &FxHashMap<Var, usize>,
    ) -> Option<()> {
        let (a, b, others) = match node.inputs() {
            [a, b, others @ ..] => (a, b, others),
            _ => return None,
        };
        let product = Var::apply1(Op::MatMul, &[a.clone(), b.clone()]).ok()?;
        let out = node.types().first()?;
        if product.dtype() != out.dtype || product.ndim() != out.ndim() {
            return None;
        }
        self.matmul(product.node())?;
        let accumulates = matches!(
            body.outputs().first().and_then(Var::owner),
            Some((Op::Elemwise(ScalarOp::Add), [x, y]))
                if matches!((x.node().kind(), y.node().kind()),
                    (NodeKind::Placeholder(0), NodeKind::Placeholder(1))
                    | (NodeKind::Placeholder(1), NodeKind::Placeholder(0)))
        );
        let mut operands = vec![product.clone()];
        operands.extend(others.iter().cloned());
        let (op, mut uses) = match accumulates {
            true => (Op::Elemwise(ScalarOp::Add), uses.clone()),
            false => (Op::Composite(body.clone()), FxHashMap::default()),
        };
        uses.insert(product, 1);
        let value = Var::apply1(op, &operands).ok()?;
        self.elementwise(value.node(), value.node().op()?, &uses)?;
        let x = *self.of.get(&value)?;
        self.of.insert(Var::output_of(node, 0), x);
        Some(())
    }
}

impl Lowering {
    /// Lowers every node of the graph computing `outputs` (the step, or an inlined body whose
    /// placeholders are `self.inputs`), in order; `None` when some node has no stage.
    pub(super) fn lower_graph(&mut self, outputs: &[Var]) -> Option<()> {
        let uses = use_counts(outputs);
        for node in toposort(outputs) {
            let op = node.op()?;
            // The sum of a nested loop's trajectory is its running sum.
            if self.summed(&node).is_some() {
                continue;
            }
            if self.param(&node, op).is_some() {
                continue;
            }
            let first = || node.inputs().first();
            match op {
                // A view of a constant is read as its literal by the ops reading it.
                Op::DimShuffle { .. } if constant(&Var::output_of(&node, 0)).is_some() => {}
                Op::DimShuffle { order } => {
                    let of = self.value(first()?)?;
                    let order = order.to_vec();
                    self.define(Var::output_of(&node, 0), ValueKind::View { of, order });
                }
                // The executor checks the extents, as for every value.
                Op::SpecifyShape(_) => {
                    let of = self.value(first()?)?;
                    let order = (0..self.values[of].ty.ndim()).map(Some).collect();
                    self.define(Var::output_of(&node, 0), ValueKind::View { of, order });
                }
                // A view read out of order is gathered into C order first.
                Op::Reshape { .. } => {
                    let of = self.value(first()?)?;
                    let of = self.in_c_order(of)?;
                    let shape = self.value(node.inputs().get(1)?)?;
                    if !self.is_param(shape) {
                        return None;
                    }
                    self.define(Var::output_of(&node, 0), ValueKind::Reshape { of, shape });
                }
                Op::Subtensor(spec) => self.index(&node, spec)?,
                Op::IncSubtensor { index, set } => self.inc(&node, index, *set)?,
                Op::Take { axis } => self.take(&node, *axis)?,
                Op::IncTake { axis, set } => self.inc_take(&node, *axis, *set)?,
                // A batched product (rank 3 or more) is a host call.
                Op::MatMul => self.matmul(&node).or_else(|| self.host(&node))?,
                Op::FusedMatMul { body } => self.fused_matmul(&node, body, &uses)?,
                Op::Join { axis } => self.join(&node, *axis)?,
                Op::Split { axis, .. } => self.split(&node, *axis)?,
                Op::CheckAndRaise(_) => self.check(&node)?,
                Op::Reduce { op, axes } | Op::FusedReduce { op, axes, .. } => {
                    self.reduction(&node, *op, axes)?;
                }
                Op::Alloc { ndim } => self.alloc(&node, *ndim)?,
                Op::Elemwise(_) | Op::Composite(_) => self.elementwise(&node, op, &uses)?,
                Op::Scan(inner) => self
                    .summed_nested(&node, inner, outputs)
                    .or_else(|| self.nested(&node, inner))?,
                // A branch or subroutine C cannot lower is called back.
                Op::IfElse(b) => self.branch(&node, b).or_else(|| self.host(&node))?,
                Op::OpFromGraph(o) => {
                    self.inline(&node, &o.body).or_else(|| self.host(&node))?;
                }
                _ if super::staged_host::hosted(op) || called_back(op) => self.host(&node)?,
                _ => return None,
            }
        }
        Some(())
    }
}

impl StagedLoop {
    /// The staged loop of `s`, or `None` when some step node is none of: elementwise (as C
    /// computes it, broadcasting dimensions of static extent 1), a reduction (`Reduce`,
    /// `FusedReduce`) of a real dtype, an `Alloc`, a `DimShuffle`, `SpecifyShape` or
    /// `Reshape` view, a `MatMul` (or a `FusedMatMul`, whose epilogue is then elementwise) of
    /// operands of rank 1 or 2 of one float dtype, a `Join` or a `Split` (by extents known
    /// before the loop) along any axis, a `CheckAndRaise` of one-element conditions, a param
    /// (shape arithmetic, see [`ValueKind::Param`]), a node the loop calls back
    /// (`super::staged_host`, [`called_back`], a batched `MatMul`), a branch or subroutine
    /// whose bodies are all of these (`super::staged_branch`) or a nested loop whose step is;
    /// or a state's next value has another dtype than the state.
    ///
    /// `zeros` says per other value of the loop whether it is known to be all zeros (see
    /// [`super::staged_index::known_zero`]).
    pub fn of_scan(s: &Scan, zeros: &[bool]) -> Option<StagedLoop> {
        let inputs = s.body.input_types();
        let mut l = Lowering {
            values: inputs
                .iter()
                .enumerate()
                .map(|(k, t)| Value {
                    ty: t.clone(),
                    kind: ValueKind::Input(k),
                    origin: None,
                    after: 0,
                })
                .collect(),
            of: FxHashMap::default(),
            stages: Vec::new(),
            slots: 0,
            n_taps: s
                .sequence_taps
                .iter()
                .chain(&s.state_taps)
                .map(Vec::len)
                .sum(),
            scalars: Default::default(),
            zeros: zeros.to_vec(),
            inputs: (0..inputs.len()).collect(),
            block: 0,
        };
        l.lower_graph(s.body.outputs())?;
        let n_outputs = s.n_outputs();
        let body_outputs = s.body.outputs();
        let outputs = body_outputs[..n_outputs]
            .iter()
            .map(|o| l.value(o))
            .collect::<Option<Vec<usize>>>()?;
        let until = match s.until {
            true => {
                let c = l.value(body_outputs.get(n_outputs)?)?;
                if !one_element(&l.values[c].ty) {
                    return None;
                }
                Some(c)
            }
            false => None,
        };
        let values = &l.values;
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
            } else if !keeps_layout(values, v) {
                return None;
            }
        }
        // Stages numbered their entries of `d` from 0; `at` becomes the index in `d`.
        let base = 2 * values.len();
        for st in &mut l.stages {
            match st {
                Stage::MatMul { at, .. }
                | Stage::Gather { at, .. }
                | Stage::Inc { at, .. }
                | Stage::Take { at, .. }
                | Stage::IncTake { at, .. }
                | Stage::Join { at, .. }
                | Stage::Split { at, .. } => {
                    *at += base;
                }
                Stage::Nest(n) => n.at += base,
                Stage::Elem { .. } | Stage::Host { .. } | Stage::Check { .. } | Stage::Mark(_) => {}
            }
        }
        for value in &mut l.values {
            if let ValueKind::Indexed { at, .. } = &mut value.kind {
                *at += base;
            }
        }
        let mut p = StagedLoop {
            values: l.values,
            stages: l.stages,
            outputs,
            home,
            sequence_taps: s.sequence_taps.clone(),
            state_taps: s.state_taps.clone(),
            go_backwards: s.go_backwards,
            ring: (0..n_outputs).map(|i| super::ring_rows(s, i)).collect(),
            until,
            slots: l.slots,
        };
        super::staged_index::update_in_place(&mut p);
        Some(p)
    }
}

/// Whether the loop calls back the interpreter's kernel of a step node of `op`, which C does
/// not compute, as it does for linear algebra and draws (`super::staged_host`): an
/// arg-reduction (a Viterbi step's `argmax`), a cumulative sum or product, a sort and the
/// other extra ops, a vector made of the step's scalars, or an `IfElse` or `OpFromGraph` whose
/// bodies do not lower into the step (`super::staged_branch`; the bodies are then compiled by
/// the interpreter once per run). The output extents come from the op's
/// type rule on the operands' extents (for an inner-graph op, its bodies' types on them);
/// where they depend on values (`unique`, branches of different extents), the loop is not
/// laid out and runs in the interpreter's loop.
fn called_back(op: &Op) -> bool {
    matches!(
        op,
        Op::ArgReduce { .. }
            | Op::Extra(_)
            | Op::MakeVector(_)
            | Op::IfElse(_)
            | Op::OpFromGraph(_)
    )
}

/// Whether an operand of type `arg` of an elementwise op with output type `out` broadcasts
/// against it (has another rank, or extent 1 where the output may have more), other than as
/// one element every element reads.
fn broadcasts(arg: &TensorType, out: &TensorType) -> bool {
    !one_element(arg)
        && (arg.ndim() != out.ndim()
            || arg
                .shape
                .iter()
                .zip(&out.shape)
                .any(|(a, o)| *a == Some(1) && *o != Some(1)))
}

/// How many times each node output of the graph computing `outputs` is read (by nodes or as
/// an output).
fn use_counts(outputs: &[Var]) -> FxHashMap<Var, usize> {
    let mut n: FxHashMap<Var, usize> = FxHashMap::default();
    for node in toposort(outputs) {
        for v in node.inputs() {
            *n.entry(v.clone()).or_default() += 1;
        }
    }
    for o in outputs {
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
/// way keeps the order of the dimensions it keeps; a reshape is checked to be in C order
/// when the loop runs).
pub(super) fn keeps_layout(values: &[Value], mut v: usize) -> bool {
    loop {
        match &values[v].kind {
            ValueKind::View { of, order } => {
                let kept: Vec<usize> = order.iter().flatten().copied().collect();
                if kept.windows(2).any(|w| w[0] > w[1]) {
                    return false;
                }
                v = *of;
            }
            // The trailing dimensions of a value in C order are, after positions and at most
            // one slice of step 1 on the last entry.
            ValueKind::Indexed { of, entries, .. } => {
                let (last, before) = match entries.split_last() {
                    Some(split) => split,
                    None => (&Entry::At(0), &[][..]),
                };
                let unit = matches!(last, Entry::At(_) | Entry::Slice { step: None, .. });
                if !unit || before.iter().any(|e| !matches!(e, Entry::At(_))) {
                    return false;
                }
                v = *of;
            }
            _ => return true,
        }
    }
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
pub(super) fn one_element(t: &TensorType) -> bool {
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
