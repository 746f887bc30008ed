//! A nested loop whose trajectory the outer step only sums (a triangular double loop: the
//! inner step count changes from outer step to outer step, `Σ_{j ≤ i} f(j)`).
//!
//! The trajectory's extents change from step to step, so the staged loop cannot lay it out;
//! its sum's do not. The inner loop is lowered with one more state instead, a running sum
//! `acc ← acc + Σ row` starting at 0, and every output whose whole trajectory was read only
//! by the sum keeps its last value only (a ring): the inner loop's rows are then known before
//! the outer loop whatever its step count (`crate::staged_host::nest`), and the sum is the
//! running sum's last value. A step count of 0 (an empty sum) ends the C loop, and the
//! interpreter's loop computes it.

use super::staged::ValueKind;
use super::staged_lower::Lowering;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FrozenGraph, Node, Op, ReduceOp, ScalarOp, Scan, TensorType, Var, toposort};
use std::sync::Arc;

impl Lowering {
    /// Lowers the `Scan` node `node` (of loop `inner`, in the graph computing `outputs`: the
    /// step, or an inlined body) when that graph reads one of its outputs only through a sum
    /// of all its elements (see the module documentation); `None` (having lowered nothing)
    /// otherwise.
    pub(super) fn summed_nested(
        &mut self,
        node: &Arc<Node>,
        inner: &Scan,
        outputs: &[Var],
    ) -> Option<()> {
        let (k, sum) = summed_output(node, inner, outputs)?;
        let (with_sum, s) = with_running_sum(node, inner, k, &sum.dtype())?;
        let n_states = inner.state_taps.len();
        let new_node = with_sum.node();
        self.nested(new_node, &s)?;
        // The node's other outputs are the new node's (the running sum's state comes after
        // the others); output `k` stands for the running sum's last row, a value of rank 0
        // that only [`Lowering::summed`] reads (the sum is its only reader).
        for j in (0..inner.n_outputs()).filter(|&j| j != k) {
            let at = if j < n_states { j } else { j + 1 };
            let x = *self.of.get(&Var::output_of(new_node, at))?;
            self.of.insert(Var::output_of(node, j), x);
        }
        let acc = *self.of.get(&Var::output_of(new_node, n_states))?;
        let last = self.push(
            sum.ty().clone(),
            ValueKind::View {
                of: acc,
                order: Vec::new(),
            },
        );
        self.of.insert(Var::output_of(node, k), last);
        Some(())
    }

    /// Lowers `node` when it is the sum of a nested loop's output that
    /// [`Lowering::summed_nested`] made a running sum of: the sum is the running sum's last
    /// row (an output of rank 1 or more standing for a value of rank 0 is one only it makes).
    pub(super) fn summed(&mut self, node: &Arc<Node>) -> Option<()> {
        let Some(Op::Reduce {
            op: ReduceOp::Sum, ..
        }) = node.op()
        else {
            return None;
        };
        let v = node.inputs().first()?;
        let x = *self.of.get(v)?;
        let value = &self.values[x];
        let last_row = matches!(&value.kind, ValueKind::View { order, .. } if order.is_empty());
        if !last_row || value.ty.ndim() != 0 || v.ndim() == 0 {
            return None;
        }
        self.of.insert(Var::output_of(node, 0), x);
        Some(())
    }
}

/// The output of `node` (in the graph computing `returned`) that graph reads only through a
/// `Sum` over all its axes (its one reader, not one of `returned`), of `float64` or `int64`
/// elements, and that sum.
fn summed_output(node: &Arc<Node>, inner: &Scan, returned: &[Var]) -> Option<(usize, Var)> {
    let nodes = toposort(returned);
    (0..inner.n_outputs()).find_map(|k| {
        let v = Var::output_of(node, k);
        if returned.contains(&v) {
            return None;
        }
        let mut readers = nodes.iter().filter(|n| n.inputs().iter().any(|x| *x == v));
        let reader = readers.next()?;
        if readers.next().is_some() || reader.inputs().len() != 1 {
            return None;
        }
        let Some(Op::Reduce {
            op: ReduceOp::Sum,
            axes,
        }) = reader.op()
        else {
            return None;
        };
        let sum = Var::output_of(reader, 0);
        let all = axes.iter().copied().eq(0..v.ndim());
        let dtype = sum.dtype();
        (all && matches!(dtype, DType::F64 | DType::I64) && v.dtype() == dtype).then_some((k, sum))
    })
}

/// The loop `s` of `node` with a running sum of output `k`'s rows as one more state (after
/// the others, initially 0, of `dtype`), output `k` and the running sum keeping their
/// last values only: an output of the new node, and its loop.
fn with_running_sum(node: &Arc<Node>, s: &Scan, k: usize, dtype: &DType) -> Option<(Var, Scan)> {
    let fresh: Vec<Var> = s
        .body
        .input_types()
        .iter()
        .map(|t| Var::input(None, t.clone()))
        .collect();
    let outs = s.body.instantiate(&fresh).ok()?;
    let dtype = *dtype;
    let acc = Var::input(None, TensorType::new(dtype, &[]));
    let row = outs.get(k)?;
    let row_sum = match row.ndim() {
        0 => row.clone(),
        n => Var::apply1(
            Op::Reduce {
                op: ReduceOp::Sum,
                axes: (0..n).collect(),
            },
            std::slice::from_ref(row),
        )
        .ok()?,
    };
    let next = Var::apply1(Op::Elemwise(ScalarOp::Add), &[acc.clone(), row_sum]).ok()?;
    if next.dtype() != dtype || next.ndim() != 0 {
        return None;
    }
    let (n_taps, n_states) = (s.n_tap_inputs(), s.state_taps.len());
    let mut inputs = fresh.get(..n_taps)?.to_vec();
    inputs.push(acc);
    inputs.extend(fresh[n_taps..].iter().cloned());
    let mut outputs = outs.get(..n_states)?.to_vec();
    outputs.push(next);
    outputs.extend(outs[n_states..].iter().cloned());
    let mut state_taps = s.state_taps.clone();
    state_taps.push(vec![-1]);
    let mut last_only: Vec<bool> = (0..s.n_outputs())
        .map(|j| j == k || s.keeps_last_only(j))
        .collect();
    last_only.insert(n_states, true);
    let with_sum = Scan {
        body: FrozenGraph::freeze(&inputs, &outputs).ok()?,
        state_taps,
        last_only,
        ..s.clone()
    };
    // Its operands: `n_steps`, the sequences, the states' initial rows and the running sum's
    // (a zero), the other values.
    let ins = node.inputs();
    let first_other = 1 + s.sequence_taps.len() + n_states;
    let mut operands = ins.get(..first_other)?.to_vec();
    operands.push(Var::constant(Tensor::zeros(dtype, &[1]).ok()?));
    operands.extend(ins[first_other..].iter().cloned());
    let out = Var::apply(Op::Scan(Arc::new(with_sum.clone())), &operands).ok()?;
    Some((out.into_iter().next()?, with_sum))
}
