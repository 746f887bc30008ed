//! The pullback of a [`Scan`]: backpropagation through time, as another `Scan` running the
//! steps backwards (so it runs in every backend and can be differentiated again).
//!
//! Outside the loop, each step's inputs are laid out as stacks with one entry per step: for a
//! sequence read at tap `k`, the slice of the sequence step `t` reads; for a state read at tap
//! `k`, its value at step `t + k` (from the initial buffer followed by the trajectory). The
//! backward loop reads those stacks, the cotangents of the outputs and the other values; it
//! recomputes the step and pulls it back, reading the states' next values (which pullbacks
//! read: `tanh`'s `1 - y²`) from the trajectories instead of recomputing them. Its states are, per state of the loop read at taps
//! down to `-L`, `L` *carries*: the cotangents still to be added to the `L` values before the
//! current step (carry `m` is for the value `L - m` steps back), and, per float value every
//! step reads, the sum of its cotangents so far. Going from step `t` to `t - 1`, the carries
//! shift by one and each tap's cotangent is added to the carry of the value it read; the value
//! produced at step `t` gets its trajectory cotangent plus the last carry. After the loop, the
//! carries are the cotangents of the initial buffer's last `L` values.

use crate::error::GradError;
use crate::rules::Term;
use crate::util::{grad_dtype, zeros_like};
use oxtensor_graph::build::{self, Idx};
use oxtensor_graph::{Scan, ScanSpec, TensorType, Var};
use rustc_hash::{FxHashMap, FxHashSet};

fn step_input(ty: &TensorType, dtype: oxtensor_data::DType) -> Var {
    Var::input(None, TensorType::new(dtype, &ty.shape[1..]))
}

/// `x[start : start + n]` along the first axis (`start` may be negative: from the end).
fn rows(x: &Var, start: i64, n: Option<&Var>) -> Result<Var, GradError> {
    rows_from(x, &Var::int_constant(start), n)
}

/// `x[start : start + n]` along the first axis, for a symbolic `start`.
fn rows_from(x: &Var, start: &Var, n: Option<&Var>) -> Result<Var, GradError> {
    let stop = match n {
        Some(n) => Some(build::add(n, start)?),
        None => None,
    };
    Ok(build::subtensor(
        x,
        &[Idx::Slice(Some(start.clone()), stop, None)],
    )?)
}

/// `x[::-1]` along the first axis.
fn reversed(x: &Var) -> Result<Var, GradError> {
    Ok(build::subtensor(x, &[Idx::range(None, None, Some(-1))])?)
}

/// The pullback of a `Scan` node (see the module documentation).
pub(crate) fn pullback(
    s: &Scan,
    inputs: &[Var],
    outputs: &[Var],
    cotangents: &[Option<Var>],
    wanted: &[bool],
) -> Result<Vec<Term>, GradError> {
    if s.last_only.contains(&true) {
        return Err(GradError::Invalid(
            "grad: a loop rewritten to keep only its last values has no trajectories to run back \
             through; differentiate the graph before compiling it"
                .into(),
        ));
    }
    let (n_seq, n_state) = (s.sequence_taps.len(), s.state_taps.len());
    let sequences = &inputs[1..1 + n_seq];
    let initial = &inputs[1 + n_seq..1 + n_seq + n_state];
    let others = &inputs[1 + n_seq + n_state..];
    let Some(first) = outputs.first() else {
        return Ok(vec![Term::Disconnected; inputs.len()]);
    };
    let steps = build::shape_i(first, 0)?;
    // Truncated backpropagation runs back through the last `back_steps` steps only: the first
    // `skipped` steps get no cotangents, and neither does what they read.
    let (back_steps, skipped) = match s.truncate_gradient {
        Some(n) => {
            let back = build::minimum(&steps, &Var::int_constant(n as i64))?;
            let skipped = build::sub(&steps, &back)?;
            (back, skipped)
        }
        None => (steps.clone(), Var::int_constant(0)),
    };
    // Per step stacks of what the step read, and their step-shaped inner stand-ins.
    let mut stacks: Vec<Var> = Vec::new();
    let mut step_values: Vec<Var> = Vec::new();
    let mut seq_stacks: Vec<Vec<Var>> = Vec::new();
    for (seq, taps) in sequences.iter().zip(&s.sequence_taps) {
        let offset = -taps[0].min(0);
        // Going backwards, step `t` reads window `windows - 1 - t`: the last `steps` windows,
        // reversed.
        let first_window = if s.go_backwards {
            let span = offset + taps[taps.len() - 1].max(0);
            let windows = build::sub(&build::shape_i(seq, 0)?, &Var::int_constant(span))?;
            build::sub(&windows, &steps)?
        } else {
            Var::int_constant(0)
        };
        // Going backwards, the last steps read the first windows.
        let first_window = if s.go_backwards {
            first_window
        } else {
            skipped.clone()
        };
        let mut mine = Vec::new();
        for &k in taps {
            let start = build::add(&first_window, &Var::int_constant(k + offset))?;
            let forward = rows_from(seq, &start, Some(&back_steps))?;
            let stack = if s.go_backwards {
                reversed(&forward)?
            } else {
                forward
            };
            step_values.push(step_input(seq.ty(), seq.dtype()));
            stacks.push(stack.clone());
            mine.push(stack);
        }
        seq_stacks.push(mine);
    }
    let mut kept_initial: Vec<Var> = Vec::new();
    for ((init, taps), trajectory) in initial.iter().zip(&s.state_taps).zip(outputs) {
        let l = Scan::buffer_len(taps) as i64;
        let kept = rows(init, -l, None)?;
        let buffer = build::concatenate(&[kept.clone(), trajectory.clone()], 0)?;
        for &k in taps {
            let start = build::add(&skipped, &Var::int_constant(l + k))?;
            stacks.push(rows_from(&buffer, &start, Some(&back_steps))?);
            step_values.push(step_input(init.ty(), init.dtype()));
        }
        kept_initial.push(kept);
    }
    let n_taps = step_values.len();
    // The outputs' cotangents at the steps run back through (zeros where none), and their
    // stand-ins.
    for (o, c) in outputs.iter().zip(cotangents) {
        let dtype = grad_dtype(o.dtype());
        let c = match c {
            Some(c) => build::cast(c, dtype)?,
            None => zeros_like(o, dtype)?,
        };
        step_values.push(step_input(o.ty(), dtype));
        stacks.push(match s.truncate_gradient {
            Some(_) => rows_from(&c, &skipped, Some(&back_steps))?,
            None => c,
        });
    }
    // The backward loop's states: carries per state, sums per float other value.
    let mut carries: Vec<Vec<Var>> = Vec::new();
    let mut carry_init: Vec<Var> = Vec::new();
    for (init, taps) in initial.iter().zip(&s.state_taps) {
        let dtype = grad_dtype(init.dtype());
        let zero_row = zeros_like(&rows(init, 0, Some(&Var::int_constant(1)))?, dtype)?;
        let mine: Vec<Var> = (0..Scan::buffer_len(taps))
            .map(|_| step_input(init.ty(), dtype))
            .collect();
        carry_init.extend(std::iter::repeat_n(zero_row, mine.len()));
        carries.push(mine);
    }
    let summed: Vec<usize> = (0..others.len())
        .filter(|&p| others[p].dtype().is_inexact())
        .collect();
    let mut sums: Vec<Var> = Vec::new();
    for &p in &summed {
        let o = &others[p];
        sums.push(Var::input(None, o.ty().clone()));
        carry_init.push(zeros_like(
            &build::expand_dims(o, 0)?,
            grad_dtype(o.dtype()),
        )?);
    }
    let other_inputs: Vec<Var> = others
        .iter()
        .map(|o| Var::input(None, o.ty().clone()))
        .collect();
    // The backward step: recompute the step, pull it back, move the carries.
    let forward_in: Vec<Var> = step_values[..n_taps]
        .iter()
        .chain(&other_inputs)
        .cloned()
        .collect();
    let forward_out = s.body.instantiate(&forward_in)?;
    let cot_in = &step_values[n_taps..];
    let mut seeds: Vec<Var> = Vec::new();
    for (i, c) in cot_in.iter().enumerate() {
        match carries.get(i).and_then(|m| m.last()) {
            Some(last) => seeds.push(build::add(c, last)?),
            None => seeds.push(c.clone()),
        }
    }
    let wrt: Vec<Var> = forward_in.clone();
    let grads = crate::pullback(&forward_out[..s.n_outputs()], &wrt, &seeds)?;
    let mut new_states: Vec<Var> = Vec::new();
    let mut g_at = n_seq_taps(s);
    for (mine, taps) in carries.iter().zip(&s.state_taps) {
        let l = mine.len() as i64;
        let g_state = &grads[g_at..g_at + taps.len()];
        for m in 0..l {
            let mut value = if m >= 1 {
                mine[(m - 1) as usize].clone()
            } else {
                zeros_like(&mine[0], mine[0].dtype())?
            };
            for (g, &k) in g_state.iter().zip(taps) {
                if l + k == m {
                    value = build::add(&value, &build::cast(g, value.dtype())?)?;
                }
            }
            new_states.push(value);
        }
        g_at += taps.len();
    }
    for (acc, &p) in sums.iter().zip(&summed) {
        let g = &grads[n_taps + p];
        new_states.push(build::add(acc, &build::cast(g, acc.dtype())?)?);
    }
    let mapped: Vec<Var> = grads[..n_seq_taps(s)].to_vec();
    let body_outputs: Vec<Var> = new_states.iter().chain(&mapped).cloned().collect();
    // What the step produced is read back from the trajectories rather than recomputed.
    let at_steps = |o: &Var| match s.truncate_gradient {
        Some(_) => rows_from(o, &skipped, Some(&back_steps)),
        None => Ok(o.clone()),
    };
    let mut body_outputs = body_outputs;
    let read_back = read_back_states(&forward_out[..n_state], &mut body_outputs)?;
    for (k, input) in read_back {
        stacks.push(at_steps(&outputs[k])?);
        step_values.push(input);
    }
    let tap_inputs: Vec<Var> = step_values
        .iter()
        .chain(carries.iter().flatten())
        .chain(&sums)
        .cloned()
        .collect();
    let n_carries = carry_init.len();
    let back = oxtensor_graph::scan(ScanSpec {
        tap_inputs: &tap_inputs,
        sequence_taps: vec![vec![0]; stacks.len()],
        state_taps: vec![vec![-1]; n_carries],
        other_inputs: &other_inputs,
        outputs: &body_outputs,
        n_mapped: mapped.len(),
        until: false,
        n_steps: back_steps.clone(),
        sequences: &stacks,
        initial: &carry_init,
        others,
        go_backwards: true,
        truncate_gradient: None,
        name: Some(&format!("{}_grad", s.name.as_deref().unwrap_or("scan_fn"))),
    })?;
    let last = |v: &Var| -> Result<Var, GradError> { Ok(build::subtensor(v, &[Idx::int(-1)])?) };
    // Cotangents of the node's inputs.
    let mut terms = vec![Term::Disconnected];
    let mut at = n_carries;
    for (seq, mine) in sequences.iter().zip(&seq_stacks) {
        let cots: Vec<Var> = back[at..at + mine.len()]
            .iter()
            .map(reversed)
            .collect::<Result<_, _>>()?;
        at += mine.len();
        let g = crate::pullback(mine, std::slice::from_ref(seq), &cots)?;
        terms.push(g.into_iter().next().map_or(Term::Zero, Term::Grad));
    }
    let mut c = 0;
    for ((init, kept), taps) in initial.iter().zip(&kept_initial).zip(&s.state_taps) {
        let l = Scan::buffer_len(taps);
        let finals: Vec<Var> = back[c..c + l].iter().map(last).collect::<Result<_, _>>()?;
        c += l;
        let mut stacked = build::stack(&finals, 0)?;
        if s.truncate_gradient.is_some() {
            stacked = initial_cotangent(&stacked, &skipped, l)?;
        }
        let g = crate::pullback(
            std::slice::from_ref(kept),
            std::slice::from_ref(init),
            &[stacked],
        )?;
        terms.push(g.into_iter().next().map_or(Term::Zero, Term::Grad));
    }
    let mut sum_at = c;
    for p in 0..others.len() {
        if summed.contains(&p) {
            terms.push(Term::Grad(last(&back[sum_at])?));
            sum_at += 1;
        } else {
            terms.push(Term::Zero);
        }
    }
    Ok(terms
        .into_iter()
        .zip(wanted)
        .map(|(t, &w)| if w { t } else { Term::Disconnected })
        .collect())
}

/// Replaces, in `body` (the backward step's outputs), each state's next value the forward
/// step computes (`next[k]`) that `body` reads by a new step input (a row of state `k`'s
/// trajectory); gives the states `k` replaced with their inputs. The backward loop reads each from the state's
/// trajectory, which it reads anyway (the taps' stacks): pullbacks read their op's result
/// (`tanh`'s `1 - y²`, `exp`'s `y`), so without this the backward step recomputes the forward
/// step, products included, every step.
fn read_back_states(next: &[Var], body: &mut Vec<Var>) -> Result<Vec<(usize, Var)>, GradError> {
    let nodes = oxtensor_graph::toposort(body);
    let read: FxHashSet<&Var> = nodes
        .iter()
        .flat_map(|n| n.inputs())
        .chain(body.iter())
        .collect();
    let mut replace = FxHashMap::default();
    let mut states = Vec::new();
    for (k, v) in next.iter().enumerate() {
        if v.owner().is_some() && read.contains(v) && !replace.contains_key(v) {
            // The step's static extents (the trajectory's row may know fewer).
            let input = Var::input(None, v.ty().clone());
            replace.insert(v.clone(), input.clone());
            states.push((k, input));
        }
    }
    if !states.is_empty() {
        *body = oxtensor_graph::clone_replace(body, &replace)?;
    }
    Ok(states)
}

/// The cotangent of a state's last `l` initial values, from the `carries` (stacked) of the
/// `l` values before the first step run back through: after `skipped` steps, carry `m` is for
/// buffer row `skipped + m`, which is initial value `skipped + m` when below `l` (a later row
/// is a value of the trajectory, which truncation leaves without a cotangent).
fn initial_cotangent(carries: &Var, skipped: &Var, l: usize) -> Result<Var, GradError> {
    let l = l as i64;
    let shift = build::minimum(skipped, &Var::int_constant(l))?;
    let padded = build::concatenate(&[zeros_like(carries, carries.dtype())?, carries.clone()], 0)?;
    let start = build::sub(&Var::int_constant(l), &shift)?;
    rows_from(&padded, &start, Some(&Var::int_constant(l)))
}

/// How many step inputs the sequences' taps take.
fn n_seq_taps(s: &Scan) -> usize {
    s.sequence_taps.iter().map(Vec::len).sum()
}
