//! Inner graphs lowered into a staged step (`super::staged`): an `OpFromGraph`'s body is
//! inlined, its placeholders standing for the node's operands; an `IfElse` becomes both
//! branches' stages between [`Mark`]s, so the C loop runs only the branch its condition
//! picks and no step calls back into the interpreter for it.

use super::program::Program;
use super::staged::{Entry, Mark, Stage, ValueKind};
use super::staged_lower::{Lowering, one_element};
use oxtensor_graph::{FrozenGraph, IfElse, Node, Var};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// What [`Lowering::snapshot`] keeps: enough to undo a lowering that failed half-way.
struct Snapshot {
    values: usize,
    stages: usize,
    slots: usize,
    of: FxHashMap<Var, usize>,
    scalars: FxHashSet<usize>,
}

impl Lowering {
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            values: self.values.len(),
            stages: self.stages.len(),
            slots: self.slots,
            of: self.of.clone(),
            scalars: self.scalars.clone(),
        }
    }

    fn restore(&mut self, s: Snapshot) {
        self.values.truncate(s.values);
        self.stages.truncate(s.stages);
        self.slots = s.slots;
        self.of = s.of;
        self.scalars = s.scalars;
    }

    /// Lowers `body` with its placeholders standing for `args`, giving the values of its
    /// outputs. The values `body`'s nodes define stay out of `self.of` afterwards: hash-consed
    /// nodes of another graph (the step, the other branch) may be the same `Var` and mean other
    /// values.
    fn lower_body(&mut self, body: &FrozenGraph, args: Vec<usize>) -> Option<Vec<usize>> {
        let of = self.of.clone();
        let inputs = std::mem::replace(&mut self.inputs, args);
        let lowered = self.lower_graph(body.outputs()).and_then(|()| {
            body.outputs()
                .iter()
                .map(|o| self.value(o))
                .collect::<Option<Vec<usize>>>()
        });
        self.inputs = inputs;
        self.of = of;
        lowered
    }

    /// The values of `node`'s operands.
    fn operands(&mut self, node: &Arc<Node>) -> Option<Vec<usize>> {
        node.inputs().iter().map(|v| self.value(v)).collect()
    }

    /// Inlines the `OpFromGraph` node `node` of body `body`: its stages join the step's, and
    /// its outputs are the values the body's outputs are. Undoes itself and gives `None` when
    /// some body node has no stage.
    pub(super) fn inline(&mut self, node: &Arc<Node>, body: &FrozenGraph) -> Option<()> {
        let snapshot = self.snapshot();
        let done = self
            .operands(node)
            .and_then(|args| self.lower_body(body, args));
        let Some(outs) = done else {
            self.restore(snapshot);
            return None;
        };
        for (k, x) in outs.into_iter().enumerate() {
            self.of.insert(Var::output_of(node, k), x);
        }
        Some(())
    }

    /// Lowers the `IfElse` node `node`: each output is a computed value (in scratch, or the
    /// output row it is the value of) that the last stages of each branch copy their
    /// output into; it comes after both branches' values, as the executor lays values out
    /// in order. Undoes itself and gives `None` when the condition is not one element or
    /// some branch node has no stage.
    pub(super) fn branch(&mut self, node: &Arc<Node>, b: &IfElse) -> Option<()> {
        let snapshot = self.snapshot();
        let block = self.block;
        let lowered = self.branches(node, b);
        self.block = block;
        if lowered.is_none() {
            self.restore(snapshot);
        }
        lowered
    }

    fn branches(&mut self, node: &Arc<Node>, b: &IfElse) -> Option<()> {
        let operands = self.operands(node)?;
        let (&cond, args) = operands.split_first()?;
        let stored = self.values[cond].kind != ValueKind::Folded;
        if !stored || !one_element(&self.values[cond].ty) {
            return None;
        }
        let mut writes = Vec::new();
        for (mark, side) in [
            (Mark::If(cond), &b.then_branch),
            (Mark::Else, &b.else_branch),
        ] {
            self.stages.push(Stage::Mark(mark));
            self.block = self.stages.len();
            writes.extend(self.side(side, args.to_vec(), node)?);
        }
        self.stages.push(Stage::Mark(Mark::End));
        let outs: Vec<usize> = (0..node.types().len())
            .map(|k| self.define(Var::output_of(node, k), ValueKind::Computed))
            .collect();
        for (k, (at, slot)) in writes {
            *self.stages.get_mut(at).and_then(|st| out_slot(st, slot))? = outs[k];
        }
        Some(())
    }

    /// Lowers one branch on `args`, then writes its outputs for the outputs of `node`, whose
    /// values the caller makes once both branches are lowered: the stage computing a branch
    /// output that nothing else reads writes it in place of its own value (which is then
    /// never stored); any other branch output is copied in C order. Gives, per output of
    /// `node`, the stage writing it and which of the stage's outputs it is.
    fn side(
        &mut self,
        body: &FrozenGraph,
        args: Vec<usize>,
        node: &Arc<Node>,
    ) -> Option<Vec<(usize, (usize, usize))>> {
        let results = self.lower_body(body, args)?;
        let results = results
            .into_iter()
            .map(|x| self.in_c_order(x))
            .collect::<Option<Vec<usize>>>()?;
        let mut writes = Vec::new();
        for (k, (&x, to)) in results.iter().zip(node.types()).enumerate() {
            let from = self.values[x].ty.clone();
            if from.dtype != to.dtype || from.ndim() != to.ndim() {
                return None;
            }
            let once = results.iter().filter(|&&r| r == x).count() == 1;
            if let Some(write) = self.writer(x).filter(|_| once) {
                self.values[x].kind = ValueKind::Folded;
                writes.push((k, write));
                continue;
            }
            let program = Program {
                inputs: vec![from.dtype],
                stmts: Vec::new(),
                errors: Vec::new(),
                outputs: vec![("x0".to_string(), from.dtype)],
            };
            let one = one_element(&from);
            writes.push((k, (self.stages.len(), 0)));
            self.stages.push(Stage::Elem {
                program,
                args: vec![(x, one)],
                outs: vec![usize::MAX],
            });
        }
        Some(writes)
    }

    /// The stage of the branch being lowered that computes value `x`, and which of its
    /// outputs `x` is, when it can write another value instead: an elementwise stage, a nest
    /// or a product, with nothing else reading `x` (no stage, view or index).
    fn writer(&mut self, x: usize) -> Option<(usize, usize)> {
        if self.values[x].kind != ValueKind::Computed || self.scalars.contains(&x) {
            return None;
        }
        let seen = self.values.iter().any(|v| match &v.kind {
            ValueKind::View { of, .. } | ValueKind::Reshape { of, .. } => *of == x,
            ValueKind::Indexed { of, entries, .. } => {
                *of == x || entries.iter().flat_map(Entry::reads).any(|r| r == x)
            }
            _ => false,
        });
        let read = self.stages[self.block..]
            .iter()
            .any(|st| super::staged_index::reads(st).contains(&x));
        if seen || read {
            return None;
        }
        let at = self.block
            + self.stages[self.block..]
                .iter()
                .position(|st| written(st).contains(&x))?;
        if !self.outside_branches(at) {
            return None;
        }
        let slot = written(&self.stages[at]).iter().position(|&o| o == x)?;
        let stage = self.stages.get_mut(at)?;
        out_slot(stage, slot).is_some().then_some((at, slot))
    }
}

impl Lowering {
    /// Whether stage `at` of the block being lowered runs whenever the block does (it is not
    /// inside a branch the block holds), so a rule may move it or make it write another value.
    pub(super) fn outside_branches(&self, at: usize) -> bool {
        let mut open = 0usize;
        for st in self.stages.get(self.block..at).into_iter().flatten() {
            match st {
                Stage::Mark(Mark::If(_)) => open += 1,
                Stage::Mark(Mark::End) => open = open.saturating_sub(1),
                _ => {}
            }
        }
        open == 0
    }
}

/// The values stage `st` writes, for the stages whose outputs [`out_slot`] can change.
fn written(st: &Stage) -> Vec<usize> {
    match st {
        Stage::Elem { outs, .. } => outs.clone(),
        Stage::Nest(n) => n.outs.clone(),
        Stage::MatMul { out, .. } => vec![*out],
        _ => Vec::new(),
    }
}

/// Output `slot` of stage `st`, to point it at another value.
fn out_slot(st: &mut Stage, slot: usize) -> Option<&mut usize> {
    match st {
        Stage::Elem { outs, .. } => outs.get_mut(slot),
        Stage::Nest(n) => n.outs.get_mut(slot),
        Stage::MatMul { out, .. } => (slot == 0).then_some(out),
        _ => None,
    }
}
