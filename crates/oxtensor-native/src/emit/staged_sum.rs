//! A nested loop whose trajectory the outer step only sums (a triangular double loop: the
//! inner step count changes from outer step to outer step, `Σ_{j ≤ i} f(j)`), or averages
//! (the sum and the trajectory's length, `Shape_i{0}`).
//!
//! The trajectory's extents change from step to step, so the staged loop cannot lay it out;
//! its sum's do not. The inner loop is lowered with one more state instead, a running sum
//! `acc ← acc + Σ row` starting at 0 (and, when the length is read, a step counter), and the
//! output whose whole trajectory was read only so keeps its last value only (a ring): the
//! inner loop's rows are then known before the outer loop whatever its step count
//! (`crate::staged_host::nest`), and the sum (the length) is the running sum's (the
//! counter's) last value. A step count of 0 (an empty sum) ends the C loop, and the
//! interpreter's loop computes it.

use super::staged::ValueKind;
use super::staged_lower::Lowering;
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FrozenGraph, Node, Op, ReduceOp, ScalarOp, Scan, TensorType, Var, toposort};
use std::sync::Arc;

impl Lowering {
    /// Lowers the `Scan` node `node` (of loop `inner`, in the graph computing `outputs`: the
    /// step, or an inlined body) when that graph reads one of its outputs only through a sum
    /// of all its elements and its length (see the module documentation); `None` (having
    /// lowered nothing) otherwise.
    pub(super) fn summed_nested(
        &mut self,
        node: &Arc<Node>,
        inner: &Scan,
        outputs: &[Var],
    ) -> Option<()> {
        let (k, sum, extents) = summed_output(node, inner, outputs)?;
        let counted = extents.iter().any(|(axis, _)| *axis == 0);
        let (with_sum, s) = with_running_sum(node, inner, k, sum.dtype(), counted)?;
        let n_states = inner.state_taps.len();
        let new_node = with_sum.node();
        self.nested(new_node, &s)?;
        // The node's other outputs are the new node's (the running sum's and the counter's
        // states come after the others); output `k` stands for the running sum's last row, a
        // value of rank 0 that only [`Lowering::summed`] reads; its length is the counter's
        // last row, and its other extents its rows' (a param of the ring keeping its last).

        let added = 1 + usize::from(counted);
        for j in (0..inner.n_outputs()).filter(|&j| j != k) {
            let at = if j < n_states { j } else { j + added };
            let x = *self.of.get(&Var::output_of(new_node, at))?;
            self.of.insert(Var::output_of(node, j), x);
        }
        let acc = self.last_row(&Var::output_of(new_node, n_states), sum.ty())?;
        let mut count = None;
        for (axis, extent) in extents {
            if axis > 0 {
                let ring = *self.of.get(&Var::output_of(new_node, k))?;
                let args = vec![Some(ring)];
                let var = extent.clone();
                self.define(extent, ValueKind::Param { var, args });
                continue;
            }
            let x = match count {
                Some(x) => x,
                None => self.last_row(&Var::output_of(new_node, n_states + 1), extent.ty())?,
            };
            count = Some(x);
            self.of.insert(extent, x);
        }
        self.of.insert(Var::output_of(node, k), acc);
        Some(())
    }

    /// A value of type `ty` (rank 0) viewing the one row of the lowered ring output `out`.
    fn last_row(&mut self, out: &Var, ty: &TensorType) -> Option<usize> {
        let of = *self.of.get(out)?;
        let order = Vec::new();
        Some(self.push(ty.clone(), ValueKind::View { of, order }))
    }

    /// Lowers `node` when it is the sum, or reads an extent, of a nested loop's output that
    /// [`Lowering::summed_nested`] made a running sum of: the sum is the running sum's last
    /// row, the extents are lowered with it (an output of rank 1 or more standing for a value
    /// of rank 0 is one only it makes).
    pub(super) fn summed(&mut self, node: &Arc<Node>) -> Option<()> {
        let v = node.inputs().first()?;
        let x = *self.of.get(v)?;
        let value = &self.values[x];
        let last_row = matches!(&value.kind, ValueKind::View { order, .. } if order.is_empty());
        if !last_row || value.ty.ndim() != 0 || v.ndim() == 0 {
            return None;
        }
        let out = Var::output_of(node, 0);
        match node.op()? {
            Op::Reduce {
                op: ReduceOp::Sum, ..
            } => {
                self.of.insert(out, x);
                Some(())
            }
            Op::ShapeI(_) if self.of.contains_key(&out) => Some(()),
            _ => None,
        }
    }
}

/// What [`summed_output`] finds: the output, its sum, and its extents read (axis, `Shape_i`).
type Summed = (usize, Var, Vec<(usize, Var)>);

/// The output of `node` (not one of `returned`, the outputs of the graph it is in) that graph
/// reads only through one `Sum` over all its axes and any number of `Shape_i` (a mean), of
/// `float64` or `int64` elements.
fn summed_output(node: &Arc<Node>, inner: &Scan, returned: &[Var]) -> Option<Summed> {
    let nodes = toposort(returned);
    (0..inner.n_outputs()).find_map(|k| {
        let v = Var::output_of(node, k);
        if returned.contains(&v) {
            return None;
        }
        let (mut sums, mut extents) = (Vec::new(), Vec::new());
        for reader in nodes.iter().filter(|n| n.inputs().contains(&v)) {
            let out = Var::output_of(reader, 0);
            if reader.inputs().len() != 1 {
                return None;
            }
            match reader.op()? {
                Op::Reduce {
                    op: ReduceOp::Sum,
                    axes,
                } if axes.iter().copied().eq(0..v.ndim()) => sums.push(out),
                Op::ShapeI(axis) if out.dtype() == DType::I64 => extents.push((*axis, out)),
                _ => return None,
            }
        }
        let sum = match sums.as_slice() {
            [sum] => sum.clone(),
            _ => return None,
        };
        let dtype = sum.dtype();
        let summable = matches!(dtype, DType::F64 | DType::I64) && v.dtype() == dtype;
        summable.then_some((k, sum, extents))
    })
}

/// The loop `s` of `node` with a running sum of output `k`'s rows as one more state (after
/// the others, initially 0, of `dtype`), and, when `counted`, a step counter after it
/// (`int64`, initially 0); output `k` and the new states keep their last values only: an
/// output of the new node, and its loop.
fn with_running_sum(
    node: &Arc<Node>,
    s: &Scan,
    k: usize,
    dtype: DType,
    counted: bool,
) -> Option<(Var, Scan)> {
    let fresh: Vec<Var> = s
        .body
        .input_types()
        .iter()
        .map(|t| Var::input(None, t.clone()))
        .collect();
    let outs = s.body.instantiate(&fresh).ok()?;
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
    // Each new state: its step input, its next value and its initial row.
    let mut added = Vec::new();
    let acc = Var::input(None, TensorType::new(dtype, &[]));
    let next = Var::apply1(Op::Elemwise(ScalarOp::Add), &[acc.clone(), row_sum]).ok()?;
    added.push((acc, next, dtype));
    if counted {
        let count = Var::input(None, TensorType::new(DType::I64, &[]));
        let one = Var::int_constant(1);
        let next = Var::apply1(Op::Elemwise(ScalarOp::Add), &[count.clone(), one]).ok()?;
        added.push((count, next, DType::I64));
    }
    if added
        .iter()
        .any(|(_, next, d)| next.dtype() != *d || next.ndim() != 0)
    {
        return None;
    }
    let (n_taps, n_states) = (s.n_tap_inputs(), s.state_taps.len());
    let mut inputs = fresh.get(..n_taps)?.to_vec();
    inputs.extend(added.iter().map(|(input, _, _)| input.clone()));
    inputs.extend(fresh[n_taps..].iter().cloned());
    let mut outputs = outs.get(..n_states)?.to_vec();
    outputs.extend(added.iter().map(|(_, next, _)| next.clone()));
    outputs.extend(outs[n_states..].iter().cloned());
    let mut state_taps = s.state_taps.clone();
    let mut last_only: Vec<bool> = (0..s.n_outputs())
        .map(|j| j == k || s.keeps_last_only(j))
        .collect();
    for at in n_states..n_states + added.len() {
        state_taps.push(vec![-1]);
        last_only.insert(at, true);
    }
    let with_sum = Scan {
        body: FrozenGraph::freeze(&inputs, &outputs).ok()?,
        state_taps,
        last_only,
        ..s.clone()
    };
    // Its operands: `n_steps`, the sequences, the states' initial rows and the new states'
    // (zeros), the other values.
    let ins = node.inputs();
    let first_other = 1 + s.sequence_taps.len() + n_states;
    let mut operands = ins.get(..first_other)?.to_vec();
    for (_, _, d) in &added {
        operands.push(Var::constant(Tensor::zeros(*d, &[1]).ok()?));
    }
    operands.extend(ins[first_other..].iter().cloned());
    let out = Var::apply(Op::Scan(Arc::new(with_sum.clone())), &operands).ok()?;
    Some((out.into_iter().next()?, with_sum))
}
