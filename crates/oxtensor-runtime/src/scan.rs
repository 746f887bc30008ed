//! Running a [`Scan`] node: the loop, step by step, over the step graph compiled once by the
//! backend (see `inner.rs`). This is the reference every faster loop is checked against.

use crate::kernels::{self, KernelCtx};
use crate::{Executable, KernelError, RuntimeError};
use oxtensor_data::Tensor;
use oxtensor_graph::scan::sequence_steps;
use oxtensor_graph::{Op, Scan, TensorType};
use std::collections::VecDeque;

fn fail(message: String) -> RuntimeError {
    RuntimeError::Kernel {
        op: "Scan".into(),
        var: "its inputs".into(),
        source: KernelError::Value(message),
    }
}

/// Entry `r` of `t` along its first axis, as a view.
fn row(t: &Tensor, r: usize) -> Result<Tensor, RuntimeError> {
    let offset = t.offset() as isize + r as isize * t.strides()[0];
    let offset = usize::try_from(offset).map_err(|_| fail(format!("row {r} is out of bounds")))?;
    t.view(&t.shape()[1..], &t.strides()[1..], offset)
        .map_err(|e| fail(e.to_string()))
}

/// The values of every step stacked along a new first axis (`empty` when there are none).
fn stack(values: &[Tensor], empty: &TensorType) -> Result<Tensor, RuntimeError> {
    if values.is_empty() {
        let shape: Vec<usize> = std::iter::once(0)
            .chain(empty.shape.iter().map(|d| d.unwrap_or(0)))
            .collect();
        return Tensor::zeros(empty.dtype, &shape).map_err(|e| fail(e.to_string()));
    }
    let rows: Vec<Tensor> = values
        .iter()
        .map(|v| {
            let shape: Vec<usize> = std::iter::once(1)
                .chain(v.shape().iter().copied())
                .collect();
            v.reshape(&shape)
        })
        .collect::<Result<_, _>>()
        .map_err(|e| fail(e.to_string()))?;
    let refs: Vec<&Tensor> = rows.iter().collect();
    let types: Vec<TensorType> = rows
        .iter()
        .map(|r| TensorType::of_rank(r.dtype(), r.ndim()))
        .collect();
    let out = [TensorType::of_rank(empty.dtype, empty.ndim() + 1)];
    let ctx = KernelCtx {
        input_types: &types,
        output_types: &out,
    };
    let mut joined = kernels::eval(&Op::Join { axis: 0 }, &refs, &ctx).map_err(|source| {
        RuntimeError::Kernel {
            op: "Scan".into(),
            var: "its stacked outputs".into(),
            source,
        }
    })?;
    joined
        .pop()
        .ok_or_else(|| fail("stacking produced nothing".into()))
}

/// Runs the loop of `s` on the node's `args` with the compiled step `body`; returns one
/// tensor per state and per mapped output, each step's values stacked.
pub(crate) fn run(
    s: &Scan,
    body: &dyn Executable,
    args: &[&Tensor],
) -> Result<Vec<Tensor>, RuntimeError> {
    let (n_seq, n_state) = (s.sequence_taps.len(), s.state_taps.len());
    let Some((n_steps, rest)) = args.split_first() else {
        return Err(fail("no n_steps value".into()));
    };
    let n_steps: i64 = n_steps
        .to_vec_as::<i64>()
        .first()
        .copied()
        .ok_or_else(|| fail("n_steps has no value".into()))?;
    let (sequences, rest) = rest.split_at(n_seq.min(rest.len()));
    let (initial, others) = rest.split_at(n_state.min(rest.len()));
    let lengths: Vec<usize> = sequences
        .iter()
        .map(|t| t.shape().first().copied().unwrap_or(0))
        .collect();
    let total = s.steps(n_steps, &lengths).map_err(fail)?;
    let op = Op::Scan(std::sync::Arc::new(s.clone())).to_string();
    let in_step = |step: usize, source: RuntimeError| RuntimeError::InLoop {
        op: op.clone(),
        step,
        source: Box::new(source),
    };
    // Per state: its latest `buffer_len` values, oldest first.
    let mut buffers: Vec<VecDeque<Tensor>> = Vec::with_capacity(n_state);
    for (i, (init, taps)) in initial.iter().zip(&s.state_taps).enumerate() {
        let need = Scan::buffer_len(taps);
        let len = init.shape().first().copied().unwrap_or(0);
        if len < need {
            return Err(fail(format!(
                "output {i} reads taps {taps:?}, which need {need} initial values; got {len}"
            )));
        }
        buffers.push(
            (len - need..len)
                .map(|r| row(init, r))
                .collect::<Result<_, _>>()?,
        );
    }
    let n_out = s.n_outputs();
    let mut trajectories: Vec<Vec<Tensor>> = vec![Vec::with_capacity(total); n_out];
    for step in 0..total {
        let mut values: Vec<Tensor> = Vec::with_capacity(s.body.input_types().len());
        for (seq, taps) in sequences.iter().zip(&s.sequence_taps) {
            // Going backwards, step 0 reads the sequence's last window (taps keep their
            // direction), as PyTensor does.
            let len = seq.shape().first().copied().unwrap_or(0);
            let window = if s.go_backwards {
                sequence_steps(taps, len).unwrap_or(0) - 1 - step
            } else {
                step
            };
            let offset = taps.first().map_or(0, |&t| (-t).max(0)) as usize;
            for &k in taps {
                values.push(row(seq, (window + offset).wrapping_add_signed(k as isize))?);
            }
        }
        for (buffer, taps) in buffers.iter().zip(&s.state_taps) {
            for &k in taps {
                let at = buffer.len().wrapping_add_signed(k as isize);
                values.push(buffer[at].clone());
            }
        }
        values.extend(others.iter().map(|t| (*t).clone()));
        let mut outs = body.run(values).map_err(|e| in_step(step, e))?;
        let stop = if s.until {
            let cond = outs
                .pop()
                .ok_or_else(|| in_step(step, fail("the step returned no condition".into())))?;
            cond.to_vec_as::<bool>().first().copied().unwrap_or(false)
        } else {
            false
        };
        for (i, value) in outs.into_iter().enumerate().take(n_out) {
            if let Some(first) = trajectories[i].first()
                && first.shape() != value.shape()
            {
                return Err(in_step(
                    step,
                    fail(format!(
                        "output {i} has shape {:?}, but shape {:?} at step 0; every step must give one shape",
                        value.shape(),
                        first.shape()
                    )),
                ));
            }
            if let Some(buffer) = buffers.get_mut(i) {
                if let Some(previous) = buffer.back()
                    && previous.shape() != value.shape()
                {
                    return Err(in_step(
                        step,
                        fail(format!(
                            "output {i} has shape {:?}, but its earlier values have shape {:?}",
                            value.shape(),
                            previous.shape()
                        )),
                    ));
                }
                buffer.pop_front();
                buffer.push_back(value.clone());
            }
            if s.keeps_last_only(i) {
                trajectories[i].clear();
            }
            trajectories[i].push(value);
        }
        if stop {
            break;
        }
    }
    trajectories
        .iter()
        .zip(s.body.outputs())
        .map(|(values, out)| stack(values, out.ty()))
        .collect()
}
