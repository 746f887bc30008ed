use crate::kernels::{self, KernelCtx};
use crate::{Backend, Executable, RuntimeError};
use oxtensor_data::Tensor;
use oxtensor_graph::{FunctionGraph, Node, NodeKind, Var};
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// One scheduled node: where its inputs are read from, where its outputs go, and which slots
/// hold their last use here and can be freed afterwards.
struct Step {
    node: Arc<Node>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    free_after: Vec<usize>,
}

/// A schedule with slot assignment and liveness, shared by backends that execute node by node.
///
/// Every variable gets a slot; inputs take the first slots, constants are preloaded, and each
/// intermediate is dropped right after its last use, so memory does not grow with graph length.
pub struct Plan {
    steps: Vec<Step>,
    n_slots: usize,
    n_values: usize,
    constants: Vec<(usize, Tensor)>,
    outputs: Vec<usize>,
}

impl Plan {
    /// Schedules `graph` (topological order) and computes liveness.
    pub fn new(graph: &FunctionGraph) -> Plan {
        let mut slots = Slots::default();
        for v in graph.inputs().iter().chain(graph.shared_inputs()) {
            slots.slot(v);
        }
        let n_values = graph.inputs().len() + graph.shared_inputs().len();
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
        for (slot, step) in last_use {
            if !outputs.contains(&slot) {
                steps[step].free_after.push(slot);
            }
        }
        for step in &mut steps {
            step.free_after.sort_unstable();
        }
        Plan {
            steps,
            n_slots,
            n_values,
            constants,
            outputs,
        }
    }

    /// Runs the plan, evaluating each node with `eval_node`.
    pub fn execute(
        &self,
        values: &[Tensor],
        mut eval_node: impl FnMut(&Node, &[&Tensor]) -> Result<Vec<Tensor>, RuntimeError>,
    ) -> Result<Vec<Tensor>, RuntimeError> {
        if values.len() != self.n_values {
            return Err(RuntimeError::Arity {
                expected: self.n_values,
                got: values.len(),
            });
        }
        let mut slots: Vec<Option<Tensor>> = vec![None; self.n_slots];
        for (slot, v) in slots.iter_mut().zip(values) {
            *slot = Some(v.clone());
        }
        for (s, c) in &self.constants {
            slots[*s] = Some(c.clone());
        }
        for step in &self.steps {
            let outs = {
                let args: Vec<&Tensor> = step
                    .inputs
                    .iter()
                    .map(|&s| {
                        slots[s].as_ref().ok_or_else(|| {
                            RuntimeError::Unsupported(format!("slot {s} read before written"))
                        })
                    })
                    .collect::<Result<_, _>>()?;
                eval_node(&step.node, &args)?
            };
            for (&s, t) in step.outputs.iter().zip(outs) {
                slots[s] = Some(t);
            }
            for &s in &step.free_after {
                slots[s] = None;
            }
        }
        self.outputs
            .iter()
            .map(|&s| {
                slots[s].clone().ok_or_else(|| {
                    RuntimeError::Unsupported(format!("output slot {s} never written"))
                })
            })
            .collect()
    }
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

/// The reference backend: runs each node's kernel in schedule order. Every other backend and
/// every rewrite is tested against it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Interpreter;

struct InterpExecutable {
    plan: Plan,
}

/// Evaluates one node with the reference kernels, attributing failures to the node.
pub fn eval_node(node: &Node, args: &[&Tensor]) -> Result<Vec<Tensor>, RuntimeError> {
    let Some(op) = node.op() else {
        return Err(RuntimeError::Unsupported(
            "a leaf was scheduled as a node".into(),
        ));
    };
    let input_types: Vec<_> = node.inputs().iter().map(|v| v.ty().clone()).collect();
    let ctx = KernelCtx {
        input_types: &input_types,
        output_types: node.types(),
    };
    kernels::eval(op, args, &ctx).map_err(|source| RuntimeError::Kernel {
        op: op.to_string(),
        var: describe_node(node),
        source,
    })
}

fn describe_node(node: &Node) -> String {
    let names: Vec<String> = node.inputs().iter().map(|v| format!("{v:?}")).collect();
    format!("inputs ({}), created at {}", names.join(", "), node.site())
}

impl Executable for InterpExecutable {
    fn run(&self, values: &[Tensor]) -> Result<Vec<Tensor>, RuntimeError> {
        self.plan.execute(values, eval_node)
    }
}

impl Backend for Interpreter {
    fn name(&self) -> &'static str {
        "interp"
    }

    fn compile(&self, graph: &FunctionGraph) -> Result<Arc<dyn Executable>, RuntimeError> {
        Ok(Arc::new(InterpExecutable {
            plan: Plan::new(graph),
        }))
    }
}
