//! [`Scan`]: a loop whose step is a frozen inner graph (PyTensor's `scan`).
//!
//! A step reads slices of the *sequences* (each at one or more taps: offsets from the current
//! step), earlier values of the *states* (each at one or more negative taps), and *other*
//! values that do not change between steps (non-sequences, and every graph input or shared
//! variable the step reads). It returns each state's next value, then the *mapped* outputs
//! (values computed per step and not fed back), then optionally a 0-d `until` condition that
//! stops the loop after the step where it holds. The node returns, per state and per mapped
//! output, the values of every step, stacked along a new leading axis.
//!
//! The node's inputs are: `n_steps` (an integer scalar; negative means "as many steps as the
//! sequences allow"), the sequences, one initial buffer per state (its `-min(taps)` values
//! before the first step, oldest first), then the other values.

use crate::{FrozenGraph, GraphError, NodeKind, Op, TensorType, Var};
use rustc_hash::FxHashSet;
use std::sync::Arc;

/// A loop: the step graph and how its inputs and outputs are laid out (module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Scan {
    /// The step: inputs are each sequence's taps (in order), each state's taps, then the other
    /// values; outputs each state's next value, the mapped outputs, then the `until` condition.
    pub body: FrozenGraph,
    /// Per sequence, the taps it is read at (sorted, unique; `0` is the current step).
    pub sequence_taps: Vec<Vec<i64>>,
    /// Per state, the taps it is read at (sorted, unique, negative; `-1` is the previous step).
    pub state_taps: Vec<Vec<i64>>,
    /// How many outputs are mapped (computed per step, not fed back).
    pub n_mapped: usize,
    /// Whether steps read the sequences' windows from the last towards the first (each tap
    /// keeps its direction: step 0 reads the last window).
    pub go_backwards: bool,
    /// Whether the body's last output is a 0-d condition that stops the loop.
    pub until: bool,
    /// Truncated backpropagation through time: gradients flow back through only this many
    /// of the last steps (`None`: through all of them, PyTensor's `truncate_gradient=-1`).
    pub truncate_gradient: Option<usize>,
    /// Per node output, whether only its last step's value is used (a rewrite's finding: every
    /// reader takes `[-1]`). A backend may then keep just the rows the loop still reads and
    /// return a trajectory whose last row is that value; its leading extent is not known
    /// statically. Empty when no output is marked.
    pub last_only: Vec<bool>,
    /// The name shown when printing.
    pub name: Option<Arc<str>>,
}

/// How many steps a sequence of `len` entries read at `taps` (sorted) allows: each step reads
/// a window reaching from its lowest to its highest tap.
pub fn sequence_steps(taps: &[i64], len: usize) -> Option<usize> {
    let (&lo, &hi) = (taps.first()?, taps.last()?);
    let span = usize::try_from(hi.max(0) - lo.min(0)).ok()?;
    len.checked_sub(span)
}

impl Scan {
    /// The number of values before the first step a state read at `taps` needs.
    pub fn buffer_len(taps: &[i64]) -> usize {
        taps.first().map_or(0, |&t| t.unsigned_abs() as usize)
    }

    /// How many body inputs the sequences' and states' taps take.
    pub fn n_tap_inputs(&self) -> usize {
        self.sequence_taps
            .iter()
            .chain(&self.state_taps)
            .map(Vec::len)
            .sum()
    }

    /// The number of other values (non-sequences and captured leaves).
    pub fn n_other(&self) -> usize {
        self.body.input_types().len() - self.n_tap_inputs()
    }

    /// The number of node outputs (states, then mapped outputs).
    pub fn n_outputs(&self) -> usize {
        self.state_taps.len() + self.n_mapped
    }

    /// Whether only the last value of output `i` is used (see [`Scan::last_only`]).
    pub fn keeps_last_only(&self, i: usize) -> bool {
        self.last_only.get(i).copied().unwrap_or(false)
    }

    /// The number of steps a run takes: `n_steps` when it is not negative (checked against
    /// what the sequences allow), else as many as every sequence of length `lengths[i]`
    /// allows. Every backend counts steps here, so they agree on the count and on the error.
    pub fn steps(&self, n_steps: i64, lengths: &[usize]) -> Result<usize, String> {
        let mut allowed: Option<(usize, usize)> = None;
        for (i, (&len, taps)) in lengths.iter().zip(&self.sequence_taps).enumerate() {
            let n = sequence_steps(taps, len).unwrap_or(0);
            if allowed.is_none_or(|(m, _)| n < m) {
                allowed = Some((n, i));
            }
        }
        match (usize::try_from(n_steps).ok(), allowed) {
            (Some(n), Some((m, i))) if n > m => Err(format!(
                "n_steps is {n} but sequence {i} (length {}, taps {:?}) allows only {m} steps",
                lengths[i], self.sequence_taps[i]
            )),
            (Some(n), _) => Ok(n),
            (None, Some((m, _))) => Ok(m),
            (None, None) => Err(format!(
                "n_steps is {n_steps} and there are no sequences to count steps from"
            )),
        }
    }
}

/// What [`scan`] builds a loop from: the step's inputs as the caller made them, its outputs,
/// and the outer values.
pub struct ScanSpec<'a> {
    /// The step's tap inputs: per sequence its taps, then per state its taps (one variable of
    /// the step's shape each).
    pub tap_inputs: &'a [Var],
    /// Per sequence, its taps.
    pub sequence_taps: Vec<Vec<i64>>,
    /// Per state, its taps.
    pub state_taps: Vec<Vec<i64>>,
    /// Step inputs standing for values every step reads (`others`, in order).
    pub other_inputs: &'a [Var],
    /// The step's outputs: each state's next value, the mapped outputs, then the `until`
    /// condition when there is one.
    pub outputs: &'a [Var],
    /// The number of mapped outputs.
    pub n_mapped: usize,
    /// Whether the last output is an `until` condition.
    pub until: bool,
    /// The number of steps (negative: as many as the sequences allow).
    pub n_steps: Var,
    /// The sequences (leading axis: steps).
    pub sequences: &'a [Var],
    /// Per state, its initial buffer (leading axis: the values before the first step).
    pub initial: &'a [Var],
    /// The values `other_inputs` stand for.
    pub others: &'a [Var],
    /// Whether sequences are read backwards.
    pub go_backwards: bool,
    /// Through how many of the last steps gradients flow (`None`: all).
    pub truncate_gradient: Option<usize>,
    /// The name shown when printing.
    pub name: Option<&'a str>,
}

/// The leaves `outputs` read, not through `known` variables (which the step receives; they may
/// be outer expressions, whose own leaves the step then does not need): graph inputs, shared
/// variables and placeholders (an enclosing inner graph's inputs), in order of first use.
fn captured(outputs: &[Var], known: &[Var]) -> Vec<Var> {
    let known: FxHashSet<&Var> = known.iter().collect();
    let mut seen: FxHashSet<Var> = FxHashSet::default();
    let mut leaves = Vec::new();
    let mut stack: Vec<Var> = outputs.iter().rev().cloned().collect();
    while let Some(v) = stack.pop() {
        if known.contains(&v) || !seen.insert(v.clone()) {
            continue;
        }
        match v.owner() {
            Some((_, inputs)) => stack.extend(inputs.iter().rev().cloned()),
            None => {
                let kind = matches!(
                    v.node().kind(),
                    NodeKind::Input | NodeKind::Shared(_) | NodeKind::Placeholder(_)
                );
                if kind {
                    leaves.push(v);
                }
            }
        }
    }
    leaves
}

fn invalid(message: String) -> GraphError {
    GraphError::Invalid {
        op: "Scan".into(),
        message,
    }
}

/// Builds one [`Scan`] node (see the module documentation) and returns its outputs: per
/// state, then per mapped output, the values of every step. Every graph input and shared
/// variable the step reads besides its tap inputs and `other_inputs` also becomes an input of
/// the node (after `others`).
#[track_caller]
pub fn scan(spec: ScanSpec<'_>) -> Result<Vec<Var>, GraphError> {
    for (what, taps) in [
        ("sequence", &spec.sequence_taps),
        ("state", &spec.state_taps),
    ] {
        for (i, t) in taps.iter().enumerate() {
            if t.is_empty() || t.windows(2).any(|w| w[0] >= w[1]) {
                return Err(invalid(format!(
                    "the taps of {what} {i} must be sorted, unique and not empty, got {t:?}"
                )));
            }
        }
    }
    if let Some((i, t)) = spec
        .state_taps
        .iter()
        .enumerate()
        .find(|(_, t)| t.iter().any(|&k| k >= 0))
    {
        return Err(invalid(format!(
            "the taps of output {i} must be negative (earlier steps), got {t:?}"
        )));
    }
    if spec.other_inputs.len() != spec.others.len() {
        return Err(invalid(format!(
            "{} step inputs stand for {} other values",
            spec.other_inputs.len(),
            spec.others.len()
        )));
    }
    let known: Vec<Var> = spec
        .tap_inputs
        .iter()
        .chain(spec.other_inputs)
        .cloned()
        .collect();
    let extra = captured(spec.outputs, &known);
    let inputs: Vec<Var> = known.iter().chain(&extra).cloned().collect();
    let others: Vec<Var> = spec.others.iter().chain(&extra).cloned().collect();
    let op = Scan {
        body: FrozenGraph::freeze(&inputs, spec.outputs)?,
        sequence_taps: spec.sequence_taps,
        state_taps: spec.state_taps,
        n_mapped: spec.n_mapped,
        go_backwards: spec.go_backwards,
        truncate_gradient: spec.truncate_gradient,
        last_only: Vec::new(),
        until: spec.until,
        name: spec.name.map(Arc::from),
    };
    let node_inputs: Vec<Var> = std::iter::once(spec.n_steps)
        .chain(spec.sequences.iter().cloned())
        .chain(spec.initial.iter().cloned())
        .chain(others)
        .collect();
    Ok(Var::apply(Op::Scan(Arc::new(op)), &node_inputs)?.into_vec())
}

/// The output types of a [`Scan`] node on `inputs`, after checking them against the step.
pub(crate) fn infer(op: &Op, s: &Scan, inputs: &[Var]) -> Result<Vec<TensorType>, GraphError> {
    let (n_seq, n_state) = (s.sequence_taps.len(), s.state_taps.len());
    let expected = 1 + n_seq + n_state + s.n_other();
    if inputs.len() != expected {
        return Err(GraphError::Arity {
            op: op.to_string(),
            expected: expected.to_string(),
            got: inputs.len(),
        });
    }
    let n_steps = &inputs[0];
    if n_steps.ndim() != 0 || !n_steps.dtype().is_int() {
        return Err(GraphError::dtype(
            op,
            n_steps,
            "an integer scalar (n_steps)",
        ));
    }
    let body_in = s.body.input_types();
    let body_out = s.body.outputs();
    if body_out.len() != s.n_outputs() + usize::from(s.until) {
        return Err(invalid(format!(
            "the step returns {} values; {} states, {} mapped outputs{} need {}",
            body_out.len(),
            n_state,
            s.n_mapped,
            if s.until { " and a condition" } else { "" },
            s.n_outputs() + usize::from(s.until)
        )));
    }
    // Each outer value has the step's type with a leading axis.
    let mut k = 0;
    // The number of steps is static when `n_steps` is a constant: as given, or, when negative,
    // the fewest the sequences allow, if every sequence's length is static. A symbolic
    // `n_steps` may be either at run time, so the steps are not static then.
    let given = n_steps.const_int();
    let mut static_steps: Option<usize> = given.and_then(|n| usize::try_from(n).ok());
    let mut known_lengths = given.is_some();
    for (i, taps) in s.sequence_taps.iter().enumerate() {
        let seq = &inputs[1 + i];
        let step = &body_in[k];
        if seq.dtype() != step.dtype || seq.ndim() != step.ndim() + 1 {
            return Err(GraphError::dtype(
                op,
                seq,
                format!(
                    "{} of rank {} (sequence {i}: one step per entry of its first axis)",
                    step.dtype,
                    step.ndim() + 1
                ),
            ));
        }
        if given.is_some_and(|n| n < 0) {
            match seq.ty().shape[0] {
                Some(len) => {
                    let allowed = sequence_steps(taps, len).unwrap_or(0);
                    static_steps = Some(static_steps.map_or(allowed, |s| s.min(allowed)));
                }
                None => known_lengths = false,
            }
        }
        k += taps.len();
    }
    if n_seq == 0 && n_steps.const_int().is_some_and(|n| n < 0) {
        return Err(invalid(
            "n_steps must be given when there are no sequences".to_string(),
        ));
    }
    for (i, taps) in s.state_taps.iter().enumerate() {
        let init = &inputs[1 + n_seq + i];
        let step = &body_in[k];
        let next = &body_out[i];
        if init.dtype() != step.dtype || init.ndim() != step.ndim() + 1 {
            return Err(GraphError::dtype(
                op,
                init,
                format!(
                    "{} of rank {} (the initial values of output {i})",
                    step.dtype,
                    step.ndim() + 1
                ),
            ));
        }
        if next.dtype() != step.dtype || next.ndim() != step.ndim() {
            return Err(invalid(format!(
                "the step returns {} of rank {} for output {i}, whose earlier values are {} of rank {}; they must agree (cast the step's result)",
                next.dtype(),
                next.ndim(),
                step.dtype,
                step.ndim()
            )));
        }
        if init.ty().shape[0].is_some_and(|n| n < Scan::buffer_len(taps)) {
            return Err(GraphError::shape(
                op,
                format!(
                    "{} holds the initial values of output {i}: taps {taps:?} need at least {}",
                    init.describe(),
                    Scan::buffer_len(taps)
                ),
            ));
        }
        k += taps.len();
    }
    crate::inner::check_args(op, &inputs[1 + n_seq + n_state..], &body_in[k..])?;
    if s.until {
        let cond = &body_out[s.n_outputs()];
        if cond.ndim() != 0 {
            return Err(invalid(format!(
                "the until condition must be a scalar, got rank {}",
                cond.ndim()
            )));
        }
        static_steps = None;
    }
    if !known_lengths {
        static_steps = None;
    }
    Ok(body_out[..s.n_outputs()]
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let mut shape = vec![static_steps.filter(|_| !s.keeps_last_only(i))];
            shape.extend(o.ty().shape.iter().copied());
            TensorType::new(o.dtype(), &shape)
        })
        .collect())
}
