//! Host calls in staged loops: a step node that C does not compute (linear algebra: a
//! factorisation, a solve, a determinant) becomes a [`Stage::Host`], where the loop calls the
//! executor back through a function pointer (`host(hctx, id, inputs, outputs)`) to run the
//! interpreter's own kernel of that node on the step's values, without leaving the loop
//! (`crate::staged_host` is the Rust side). There is one implementation of each such op,
//! the interpreter's; its errors end the loop, which the executor then hands to the
//! interpreter's, so they are reported in its words.

use super::recurrence::LoopProgram;
use super::staged::{Nested, Stage, StagedLoop};
use super::staged_lower::Lowering;
use oxtensor_graph::{Node, Op, Scan, Var};
use std::fmt::Write;
use std::sync::Arc;

/// Whether the loop may call `op` back: an op whose kernel computes its outputs from its
/// inputs alone, whose outputs' extents follow from its inputs' extents and the values
/// known before the loop (so the executor lays them out before the loop). A random draw is
/// one: its generator is an input like any other (a state carried from step to step, or a
/// loop-invariant value) and its next generator an output, so the loop draws exactly what
/// the interpreter's does, in the same order.
pub(super) fn hosted(op: &Op) -> bool {
    matches!(op, Op::Linalg(_) | Op::Random(_))
}

impl Lowering {
    /// Lowers `node` as a [`Stage::Host`]: every input a value, every output a computed value.
    pub(super) fn host(&mut self, node: &Arc<Node>) -> Option<()> {
        let args = node
            .inputs()
            .iter()
            .map(|v| self.value(v))
            .collect::<Option<Vec<usize>>>()?;
        let outs = (0..node.types().len())
            .map(|k| self.define(Var::output_of(node, k), super::staged::ValueKind::Computed))
            .collect();
        let id = self
            .stages
            .iter()
            .filter(|st| matches!(st, Stage::Host { .. }))
            .count();
        self.stages.push(Stage::Host {
            node: Var::output_of(node, 0),
            args,
            outs,
            id,
            nested: None,
        });
        Some(())
    }

    /// Lowers the `Scan` node `node` (of loop `s`) as a host call running its own C loop:
    /// the elementwise loop when its step is elementwise, else a staged loop when it stages.
    pub(super) fn nested(&mut self, node: &Arc<Node>, s: &Scan) -> Option<()> {
        let first = 1 + s.sequence_taps.len() + s.state_taps.len();
        let zeros: Vec<bool> = node
            .inputs()
            .get(first..)?
            .iter()
            .map(super::known_zero)
            .collect();
        let inner = match LoopProgram::of_scan(s) {
            Some(l) => Nested::Loop(l),
            None => Nested::Staged(StagedLoop::of_scan(s, &zeros)?),
        };
        self.host(node)?;
        if let Some(Stage::Host { nested, .. }) = self.stages.last_mut() {
            *nested = Some(Box::new(inner));
        }
        Some(())
    }
}

/// Appends the C of host call `id` reading values `args` and writing `outs`: on failure the
/// loop returns 1 at once (no later stage reads what the call did not write). A nested loop's
/// call passes the address of its C function `nested` first.
pub(super) fn emit(
    s: &mut String,
    args: &[usize],
    outs: &[usize],
    id: usize,
    nested: Option<&str>,
) {
    let list = |vs: &[usize], cast: &str| {
        vs.iter()
            .map(|v| format!("({cast})v{v}"))
            .collect::<Vec<_>>()
    };
    let inputs: Vec<String> = nested
        .map(|f| format!("(const void *){f}"))
        .into_iter()
        .chain(list(args, "const void *"))
        .collect();
    let _ = writeln!(
        s,
        "    {{\n      const void *hi[] = {{ {} }};\n      void *ho[] = {{ {} }};\n      \
         if (host(hctx, {id}, hi, ho)) return 1;\n    }}",
        inputs.join(", "),
        list(outs, "void *").join(", "),
    );
}
