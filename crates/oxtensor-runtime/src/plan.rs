//! The memory plan every node-by-node backend runs: a schedule, a slot per value, liveness,
//! and which input buffer each elementwise node may overwrite with its result.
//!
//! Planning is static and cheap; the decisions that depend on runtime facts (is this buffer
//! still referenced elsewhere, does its shape equal the output's) are made per call, in
//! [`Plan::execute`], with checks that cost a few comparisons per node.

use oxtensor_data::Tensor;
use oxtensor_graph::{FunctionGraph, Node, NodeKind, Op, Var};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::RuntimeError;

/// One scheduled node: where its inputs are read from, where its outputs go, which slots hold
/// their last use here, and which input positions may donate their buffer to output 0.
struct Step {
    node: Arc<Node>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    free_after: Vec<usize>,
    /// `(input position, handles its storage may have)`: 1 for an intermediate, 2 for a
    /// consumed shared variable (this call's value and the variable's own, locked by the caller
    /// until the update replaces it).
    donors: Vec<(usize, usize)>,
    /// The first graph output that is this node's output 0, if any: its caller-lent buffer
    /// ([`Call::out`]) is offered to the node.
    output_of: Option<usize>,
}

/// A schedule with slot assignment, liveness and in-place decisions, shared by backends that
/// execute node by node.
///
/// Every variable gets a slot; inputs take the first slots, constants are preloaded, and each
/// intermediate is dropped right after its last use, so memory does not grow with graph length.
///
/// **In place.** An `Elemwise` or `Composite` node may write its first output into the buffer of
/// an input whose last use it is ([`Call::donor`]): the input is an intermediate or a shared
/// variable the call consumes ([`FunctionGraph::consumed`]: its update replaces it), never a
/// graph input, another shared variable, a constant or a graph output; it has the output's
/// dtype and is statically broadcastable exactly as the output. A consumed shared variable is
/// overwritten only by a step of the schedule's final run of elementwise steps, so a call that
/// fails on an index, a matrix product or any other non-elementwise step has not touched it. At run time the buffer must also be referenced by no one
/// else (no view of it, no other slot, no caller) and be C-contiguous with the output's shape.
/// A chain of elementwise nodes on large arrays therefore runs in one buffer, without fresh
/// allocations (and their page faults). View ops (`DimShuffle`, `Reshape` of contiguous data)
/// alias their input by returning views; graph outputs may share storage with each other or with
/// inputs, and the boundary (`Function`, the Python wrapper) copies where that would be seen.
pub struct Plan {
    steps: Vec<Step>,
    n_slots: usize,
    /// The values [`Plan::execute`] takes (explicit inputs, then shared inputs): each value is
    /// checked against its variable's type, so no kernel ever sees a dtype, rank or static
    /// extent other than the one it was compiled for.
    inputs: Vec<Var>,
    constants: Vec<(usize, Tensor)>,
    /// The graph outputs' slots, each with whether it is that slot's last mention in the
    /// list (its value is then moved out rather than cloned).
    outputs: Vec<(usize, bool)>,
}

/// One node's evaluation request, handed by [`Plan::execute`] to the backend.
pub struct Call<'a> {
    /// The node's position in [`Plan::schedule`], for backends that keep per-step data.
    pub index: usize,
    /// The node.
    pub node: &'a Node,
    /// Its input values.
    pub args: &'a [&'a Tensor],
    /// An input position whose buffer the node may overwrite with its output 0: that tensor is
    /// C-contiguous, has exactly output 0's shape and dtype, and is used by nothing but this
    /// call (its slot is freed right after; its only other handle, if any, is a consumed
    /// shared variable's, which the caller holds locked). A backend that writes into it returns a
    /// clone of that tensor as output 0; one that ignores it simply allocates.
    pub donor: Option<usize>,
    /// A buffer the caller lends for output 0, when output 0 is a graph output
    /// ([`Plan::execute_into`]): owned storage nobody else reads or writes during the call,
    /// of the shape, dtype and layout the caller last saw (a backend checks that they fit,
    /// C-contiguous with output 0's shape and dtype, before writing into it). A backend that
    /// writes into it returns a clone of that tensor as output 0; one that ignores it allocates.
    pub out: Option<&'a Tensor>,
}

impl Plan {
    /// Schedules `graph` (topological order) and computes liveness and in-place candidates.
    pub fn new(graph: &FunctionGraph) -> Plan {
        let mut slots = Slots::default();
        for v in graph.inputs().iter().chain(graph.shared_inputs()) {
            slots.slot(v);
        }
        let inputs: Vec<Var> = graph
            .inputs()
            .iter()
            .chain(graph.shared_inputs())
            .cloned()
            .collect();
        let n_values = inputs.len();
        let consumed: Vec<usize> = graph.consumed().iter().map(|v| slots.slot(v)).collect();
        let mut steps = Vec::new();
        for node in graph.toposort() {
            let inputs = node.inputs().iter().map(|v| slots.slot(v)).collect();
            let outputs = (0..node.types().len())
                .map(|i| slots.slot(&Var::output_of(node, i)))
                .collect();
            steps.push(Step {
                node: node.clone(),
                inputs,
                outputs,
                free_after: Vec::new(),
                donors: Vec::new(),
                output_of: None,
            });
        }
        let outputs: Vec<usize> = graph.outputs().iter().map(|v| slots.slot(v)).collect();
        let Slots {
            of: slot_of,
            constants,
        } = slots;
        let n_slots = slot_of.len();
        let mut last_use: FxHashMap<usize, usize> = FxHashMap::default();
        for (i, step) in steps.iter().enumerate() {
            for &s in &step.inputs {
                last_use.insert(s, i);
            }
        }
        for (&slot, &step) in &last_use {
            if !outputs.contains(&slot) {
                steps[step].free_after.push(slot);
            }
        }
        let is_constant = |s: usize| constants.iter().any(|(c, _)| *c == s);
        let elementwise = |n: &Node| matches!(n.op(), Some(Op::Elemwise(_) | Op::Composite(_)));
        // Consumed shared variables are overwritten only in the schedule's final run of
        // elementwise steps, after every step that can fail for other reasons than mismatched
        // shapes (an index out of range, a matrix product's dimensions) has succeeded.
        let tail = steps
            .iter()
            .rposition(|s| !elementwise(&s.node))
            .map_or(0, |i| i + 1);
        for (i, step) in steps.iter_mut().enumerate() {
            step.free_after.sort_unstable();
            if !elementwise(&step.node) {
                continue;
            }
            let Some(out_ty) = step.node.types().first() else {
                continue;
            };
            for (k, (v, &s)) in step.node.inputs().iter().zip(&step.inputs).enumerate() {
                let writable =
                    (s >= n_values && !is_constant(s)) || (i >= tail && consumed.contains(&s));
                if writable
                    && !outputs.contains(&s)
                    && last_use.get(&s) == Some(&i)
                    && v.ty().dtype == out_ty.dtype
                    && v.ty().broadcastable() == out_ty.broadcastable()
                {
                    step.donors.push((k, if s < n_values { 2 } else { 1 }));
                }
            }
        }
        for step in &mut steps {
            step.output_of = step
                .outputs
                .first()
                .and_then(|s| outputs.iter().position(|o| o == s));
        }
        let outputs = outputs
            .iter()
            .enumerate()
            .map(|(i, &s)| (s, !outputs[i + 1..].contains(&s)))
            .collect();
        Plan {
            steps,
            n_slots,
            inputs,
            constants,
            outputs,
        }
    }

    /// The nodes in the order they run; [`Call::index`] indexes this.
    pub fn schedule(&self) -> impl ExactSizeIterator<Item = &Arc<Node>> {
        self.steps.iter().map(|s| &s.node)
    }

    /// How many slots a call uses (inputs first, then constants and intermediates).
    pub fn n_slots(&self) -> usize {
        self.n_slots
    }

    /// The constants, with the slots they are preloaded into.
    pub fn constants(&self) -> &[(usize, Tensor)] {
        &self.constants
    }

    /// The graph outputs' slots, in output order.
    pub fn output_slots(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.outputs.iter().map(|&(s, _)| s)
    }

    /// The slots scheduled node `index` reads its inputs from and writes its outputs to: what a
    /// backend that records a call (to replay it without the plan) follows.
    pub fn wiring(&self, index: usize) -> (&[usize], &[usize]) {
        self.steps
            .get(index)
            .map_or((&[], &[]), |s| (&s.inputs[..], &s.outputs[..]))
    }

    /// Runs the plan on `values` (explicit inputs, then shared inputs), evaluating each node
    /// with `eval`. With `times`, which must have one entry per scheduled node, adds each node's
    /// wall time to its entry. The values are taken by value so that a consumed shared
    /// variable's buffer, handed over by its only owner, can be overwritten.
    pub fn execute(
        &self,
        values: Vec<Tensor>,
        times: Option<&mut [Duration]>,
        eval: impl FnMut(Call<'_>) -> Result<Vec<Tensor>, RuntimeError>,
    ) -> Result<Vec<Tensor>, RuntimeError> {
        self.execute_into(values, times, &[], eval)
    }

    /// [`Plan::execute`], offering `outs[j]` (when given) to the node computing graph output
    /// `j` as the buffer of its output 0 ([`Call::out`]). The caller guarantees that each
    /// given buffer is owned storage that nothing else reads or writes until the call returns,
    /// and that no two of them share storage.
    pub fn execute_into(
        &self,
        values: Vec<Tensor>,
        mut times: Option<&mut [Duration]>,
        outs: &[Option<Tensor>],
        mut eval: impl FnMut(Call<'_>) -> Result<Vec<Tensor>, RuntimeError>,
    ) -> Result<Vec<Tensor>, RuntimeError> {
        if values.len() != self.inputs.len() {
            return Err(RuntimeError::Arity {
                expected: self.inputs.len(),
                got: values.len(),
            });
        }
        for (var, value) in self.inputs.iter().zip(&values) {
            if !var.ty().accepts(value.dtype(), value.shape()) {
                return Err(RuntimeError::InputType {
                    input: var.describe(),
                    got: format!("{} of shape {:?}", value.dtype(), value.shape()),
                });
            }
        }
        // Filled in place: building the (large) inline array elsewhere and moving it here
        // would copy all of it on every call.
        let mut slots: SmallVec<[Option<Tensor>; 16]> = SmallVec::new();
        slots.extend(values.into_iter().map(Some));
        slots.resize_with(self.n_slots, || None);
        for (s, c) in &self.constants {
            slots[*s] = Some(c.clone());
        }
        for (index, step) in self.steps.iter().enumerate() {
            let started = times.as_ref().map(|_| Instant::now());
            let outs = {
                let mut args: SmallVec<[&Tensor; 4]> = SmallVec::new();
                for &s in &step.inputs {
                    match &slots[s] {
                        Some(t) => args.push(t),
                        None => return Err(unwritten(s)),
                    }
                }
                let donor = step
                    .donors
                    .iter()
                    .find(|&&(k, handles)| donatable(&args, k, handles))
                    .map(|&(k, _)| k);
                let out = step
                    .output_of
                    .and_then(|j| outs.get(j))
                    .and_then(Option::as_ref)
                    .filter(|t| t.storage().is_owned());
                eval(Call {
                    index,
                    node: &step.node,
                    args: &args,
                    donor,
                    out,
                })?
            };
            for (&s, t) in step.outputs.iter().zip(outs) {
                slots[s] = Some(t);
            }
            for &s in &step.free_after {
                slots[s] = None;
            }
            if let (Some(times), Some(started)) = (times.as_deref_mut(), started)
                && let Some(t) = times.get_mut(index)
            {
                *t += started.elapsed();
            }
        }
        let mut outs = Vec::with_capacity(self.outputs.len());
        for &(s, last) in &self.outputs {
            let value = if last {
                slots[s].take()
            } else {
                slots[s].clone()
            };
            outs.push(value.ok_or_else(|| unwritten(s))?);
        }
        Ok(outs)
    }
}

/// The error for a slot read before any step wrote it (a planning bug, never a user's).
#[cold]
fn unwritten(slot: usize) -> RuntimeError {
    RuntimeError::Unsupported(format!("slot {slot} read before written"))
}

/// Whether `args[k]` can be overwritten by the elementwise result of `args`: its storage has no
/// more than the plan's expected `handles` (each position of `args` holding that slot borrows the
/// same tensor, so a repeated argument is fine) and is owned (not a caller's buffer), it is
/// C-contiguous from the start of its storage, and its shape is the broadcast shape of all
/// arguments.
fn donatable(args: &[&Tensor], k: usize, handles: usize) -> bool {
    let t = args[k];
    if Arc::strong_count(t.storage()) > handles
        || !t.storage().is_owned()
        || !t.is_contiguous()
        || t.offset() != 0
        || t.numel() * t.dtype().size() != t.storage().len()
    {
        return false;
    }
    args.iter().all(|a| {
        a.ndim() == t.ndim()
            && a.shape()
                .iter()
                .zip(t.shape())
                .all(|(&e, &full)| e == full || e == 1)
    })
}

/// Slot assignment: one slot per variable, constants remembered for preloading.
#[derive(Default)]
struct Slots {
    of: FxHashMap<Var, usize>,
    constants: Vec<(usize, Tensor)>,
}

impl Slots {
    fn slot(&mut self, v: &Var) -> usize {
        if let Some(&s) = self.of.get(v) {
            return s;
        }
        let s = self.of.len();
        self.of.insert(v.clone(), s);
        if let NodeKind::Constant(c) = v.node().kind() {
            self.constants.push((s, c.clone()));
        }
        s
    }
}
