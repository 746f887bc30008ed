//! Loops whose steps slice and gather (`staged_stages.rs`): a sliding window over a
//! non-sequence with bounds from a sequence, shape arithmetic, constants and negative steps,
//! and an embedding lookup with a scatter-add, with their values and loops written by hand.

use super::data::Rng;
use super::staged::{typed, values};
use oxtensor::{Idx, ScanSpec, scan};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{TensorType, Var};
use oxtensor_testkit::{Tol, assert_close};

/// The window length of [`windowing_step`].
pub const WINDOW: i64 = 3;

/// `start:stop` of the graph's integer scalars.
fn range(start: Option<&Var>, stop: Option<&Var>) -> Idx {
    Idx::Slice(start.cloned(), stop.cloned(), None)
}

/// A step reading windows and slices: with `s_t`, `e_t` and `M_t` from sequences, `lo` a
/// loop-invariant integer and `n = len(x)`, `w = x[s_t : s_t + 3]`,
/// `v = x[e_t - n : e_t - n + 3]` (negative bounds computed in the step),
/// `u = x[c % (n − 2) : c % (n − 2) + 3]` with `c` a counter state,
/// `h ← tanh(0.5·h + w − 0.25·v + 0.125·u)`, `c ← c + 1` and `a ← a` with `h` added at
/// `a[s_t : s_t + 3]`; mapped
/// outputs `Σ M_t[lo:]`, the column sums of `M_t[::-1]`, `Σ M_t[lo::-2]` (a negative constant
/// step), `h[:-1]` and `h` with `h[::-2]` set to 0.
pub fn windowing_step(inputs: &[Var]) -> Vec<Var> {
    let (st, et) = (
        Var::input(None, TensorType::scalar(DType::I64)),
        Var::input(None, TensorType::scalar(DType::I64)),
    );
    let (mt, hp, ap) = (typed(&[None, None]), typed(&[None]), typed(&[None]));
    let cp = Var::input(None, TensorType::scalar(DType::I64));
    let xi = typed(&[None]);
    let lo = Var::input(None, TensorType::scalar(DType::I64));
    let k = Var::int_constant(WINDOW);
    let n = oxtensor::ops::shape_i(&xi, 0).expect("n");
    let w = xi.at(&[range(Some(&st), Some(&(&st + &k)))]);
    let from_end = &et - &n;
    let v = xi.at(&[range(Some(&from_end), Some(&(&from_end + &k)))]);
    let q = &cp % &(&n - &Var::int_constant(2));
    let u = xi.at(&[range(Some(&q), Some(&(&q + &k)))]);
    let next = (&(&(&(&hp * 0.5) + &w) - &(&v * 0.25)) + &(&u * 0.125)).tanh();
    let c_next = &cp + &Var::int_constant(1);
    let window = ap.at(&[range(Some(&st), Some(&(&st + &k)))]);
    let a_next = oxtensor::ops::inc_subtensor(&window, &next).expect("inc");
    let rows = mt.at(&[range(Some(&lo), None)]).sum(None);
    let flipped = mt.at(&[Idx::range(None, None, Some(-1))]).sum(Some(&[0]));
    let every_other = mt
        .at(&[Idx::Slice(
            Some(lo.clone()),
            None,
            Some(Var::int_constant(-2)),
        )])
        .sum(None);
    let head = next.at(&[Idx::range(None, Some(-1), None)]);
    let zero = Var::constant(Tensor::scalar(0.0f64));
    let zeroed = oxtensor::ops::set_subtensor(&next.at(&[Idx::range(None, None, Some(-2))]), &zero)
        .expect("set");
    scan(ScanSpec {
        tap_inputs: &[st, et, mt, hp, ap, cp],
        sequence_taps: vec![vec![0], vec![0], vec![0]],
        state_taps: vec![vec![-1], vec![-1], vec![-1]],
        other_inputs: &[xi, lo],
        outputs: &[
            next,
            a_next,
            c_next,
            rows,
            flipped,
            every_other,
            head,
            zeroed,
        ],
        n_mapped: 5,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: &inputs[..3],
        initial: &[
            oxtensor::ops::expand_dims(&inputs[3], 0).expect("h0"),
            oxtensor::ops::expand_dims(&inputs[4], 0).expect("a0"),
            oxtensor::ops::expand_dims(&inputs[7], 0).expect("c0"),
        ],
        others: &inputs[5..7],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("windowing"),
    })
    .expect("scan")
}

/// The graph inputs of [`windowing_step`]: `s`, `e` (integer vectors), `M` (steps × r × c),
/// `h0`, `a0`, `x`, `lo`, `c0`.
pub fn windowing_inputs() -> Vec<Var> {
    vec![
        Var::input(None, TensorType::of_rank(DType::I64, 1)),
        Var::input(None, TensorType::of_rank(DType::I64, 1)),
        Var::input(None, TensorType::of_rank(DType::F64, 3)),
        Var::input(None, TensorType::of_rank(DType::F64, 1)),
        Var::input(None, TensorType::of_rank(DType::F64, 1)),
        Var::input(None, TensorType::of_rank(DType::F64, 1)),
        Var::input(None, TensorType::scalar(DType::I64)),
        Var::input(None, TensorType::scalar(DType::I64)),
    ]
}

/// How [`windowing_values`] picks the bounds.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Bounds {
    /// Every window within `x` (the loop is staged), `lo` mostly within `M_t`'s rows.
    Inside,
    /// One window of a later step runs past `x`'s end or starts at a negative position (its
    /// length differs from step 0's).
    Outside,
}

/// Values for [`windowing_step`] (`x` and `a0` of `n` elements, `M` of steps × r × c).
pub fn windowing_values(seed: u64, bounds: Bounds) -> Vec<Tensor> {
    let mut rng = Rng::new(seed);
    let k = WINDOW as usize;
    let (n, r, c, steps) = (
        k + 1 + rng.below(6),
        1 + rng.below(5),
        1 + rng.below(4),
        2 + rng.below(7),
    );
    let mut s: Vec<i64> = (0..steps).map(|_| rng.below(n - k + 1) as i64).collect();
    let e: Vec<i64> = (0..steps).map(|_| rng.below(n - k) as i64).collect();
    if bounds == Bounds::Outside {
        let t = 1 + rng.below(steps - 1);
        s[t] = match rng.below(2) {
            0 => (n - k + 1 + rng.below(3)) as i64,
            _ => -((1 + rng.below(k)) as i64),
        };
    }
    // Mostly within `[-r, r)`; now and then beyond, where the slices clamp or are empty.
    let lo = match rng.below(4) {
        0 => rng.below(2 * r + 7) as i64 - (r as i64 + 3),
        _ => rng.below(2 * r) as i64 - r as i64,
    };
    vec![
        Tensor::from_slice(&s, &[steps]).expect("s"),
        Tensor::from_slice(&e, &[steps]).expect("e"),
        values(&mut rng, &[steps, r, c], 1.0),
        values(&mut rng, &[k], 1.0),
        values(&mut rng, &[n], 1.0),
        values(&mut rng, &[n], 1.0),
        Tensor::scalar(lo),
        Tensor::scalar(rng.below(6) as i64),
    ]
}

/// Python's `range(n)[start:stop:step]` positions.
pub fn positions(n: usize, start: Option<i64>, stop: Option<i64>, step: i64) -> Vec<usize> {
    let r = oxtensor_graph::index::resolve_slice(n, start, stop, Some(step)).expect("slice");
    (0..r.len as i64)
        .map(|j| (r.start + j * r.step) as usize)
        .collect()
}

/// [`windowing_step`]'s loop by hand (bounds inside): the trajectories of its outputs (the
/// counter's as floats).
pub fn windowing_by_hand(vals: &[Tensor]) -> Vec<Vec<f64>> {
    let (s, e) = (vals[0].to_vec_as::<i64>(), vals[1].to_vec_as::<i64>());
    let m = vals[2].to_vec_as::<f64>();
    let (r, c) = (vals[2].shape()[1], vals[2].shape()[2]);
    let mut h = vals[3].to_vec_as::<f64>();
    let mut acc = vals[4].to_vec_as::<f64>();
    let x = vals[5].to_vec_as::<f64>();
    let lo = vals[6].to_vec_as::<i64>()[0];
    let mut counter = vals[7].to_vec_as::<i64>()[0];
    let (n, k) = (x.len(), h.len());
    let mut out = vec![Vec::new(); 8];
    for (t, (&st, &et)) in s.iter().zip(&e).enumerate() {
        let mt = &m[t * r * c..(t + 1) * r * c];
        let row_sum =
            |rows: &[usize]| -> f64 { rows.iter().flat_map(|&i| &mt[i * c..(i + 1) * c]).sum() };
        let w = positions(n, Some(st), Some(st + WINDOW), 1);
        let back = et - n as i64;
        let v = positions(n, Some(back), Some(back + WINDOW), 1);
        let q = counter % (n as i64 - 2);
        let u = positions(n, Some(q), Some(q + WINDOW), 1);
        h = (0..k)
            .map(|i| (0.5 * h[i] + x[w[i]] - 0.25 * x[v[i]] + 0.125 * x[u[i]]).tanh())
            .collect();
        counter += 1;
        for (i, &p) in w.iter().enumerate() {
            acc[p] += h[i];
        }
        let mut zeroed = h.clone();
        for p in positions(k, None, None, -2) {
            zeroed[p] = 0.0;
        }
        out[0].extend(&h);
        out[1].extend(&acc);
        out[2].push(counter as f64);
        out[3].push(row_sum(&positions(r, Some(lo), None, 1)));
        out[4].extend((0..c).map(|j| (0..r).rev().map(|i| mt[i * c + j]).sum::<f64>()));
        out[5].push(row_sum(&positions(r, Some(lo), None, -2)));
        out[6].extend(&h[..k - 1]);
        out[7].extend(zeroed);
    }
    out
}

/// An embedding step: with `idx_t` a vector of token ids per step (negative ones count from
/// the end) and `E` a `V × n` table, `rows = E[idx_t]`, `h ← tanh(0.5·h + Σ_k rows_k)` and
/// `G ← G` with `rows_k · h` added at each token's row (repeated tokens accumulate); `rows`
/// is a mapped output.
pub fn embedding_step(inputs: &[Var]) -> Vec<Var> {
    let it = Var::input(None, TensorType::of_rank(DType::I64, 1));
    let (hp, gp, ei) = (typed(&[None]), typed(&[None, None]), typed(&[None, None]));
    let rows = ei.at(&[Idx::At(it.clone())]);
    let next = (&(&hp * 0.5) + &rows.sum(Some(&[0]))).tanh();
    let scaled = &rows * &hp;
    let g_next =
        oxtensor::ops::inc_subtensor(&gp.at(&[Idx::At(it.clone())]), &scaled).expect("inc");
    scan(ScanSpec {
        tap_inputs: &[it, hp, gp],
        sequence_taps: vec![vec![0]],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: &[ei],
        outputs: &[next, g_next, rows],
        n_mapped: 1,
        until: false,
        n_steps: Var::int_constant(-1),
        sequences: &inputs[..1],
        initial: &[
            oxtensor::ops::expand_dims(&inputs[1], 0).expect("h0"),
            oxtensor::ops::expand_dims(&inputs[2], 0).expect("G0"),
        ],
        others: &inputs[3..4],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("embedding"),
    })
    .expect("scan")
}

/// The graph inputs of [`embedding_step`]: token ids (steps × m), `h0`, `G0`, `E`.
pub fn embedding_inputs() -> Vec<Var> {
    vec![
        Var::input(None, TensorType::of_rank(DType::I64, 2)),
        Var::input(None, TensorType::of_rank(DType::F64, 1)),
        Var::input(None, TensorType::of_rank(DType::F64, 2)),
        Var::input(None, TensorType::of_rank(DType::F64, 2)),
    ]
}

/// Values for [`embedding_step`]: tokens in `[-V, V)` (a small vocabulary, so tokens repeat),
/// or with one out of range at a later step.
pub fn embedding_values(seed: u64, out_of_range: bool) -> Vec<Tensor> {
    let mut rng = Rng::new(seed);
    let (vocab, n, m, steps) = (
        1 + rng.below(5),
        1 + rng.below(6),
        1 + rng.below(5),
        2 + rng.below(7),
    );
    let mut tokens: Vec<i64> = (0..steps * m)
        .map(|_| rng.below(2 * vocab) as i64 - vocab as i64)
        .collect();
    if out_of_range {
        let at = m + rng.below((steps - 1) * m);
        tokens[at] = match rng.below(2) {
            0 => vocab as i64,
            _ => -(vocab as i64) - 1,
        };
    }
    vec![
        Tensor::from_slice(&tokens, &[steps, m]).expect("tokens"),
        values(&mut rng, &[n], 1.0),
        values(&mut rng, &[vocab, n], 0.5),
        values(&mut rng, &[vocab, n], 1.0),
    ]
}

/// [`embedding_step`]'s loop by hand: the trajectories of `h`, `G` and `rows`.
pub fn embedding_by_hand(vals: &[Tensor]) -> Vec<Vec<f64>> {
    let tokens = vals[0].to_vec_as::<i64>();
    let m = vals[0].shape()[1];
    let mut h = vals[1].to_vec_as::<f64>();
    let mut g = vals[2].to_vec_as::<f64>();
    let e = vals[3].to_vec_as::<f64>();
    let (vocab, n) = (vals[3].shape()[0] as i64, h.len());
    let mut out = vec![Vec::new(); 3];
    for step in tokens.chunks(m) {
        let ids: Vec<usize> = step.iter().map(|t| t.rem_euclid(vocab) as usize).collect();
        let rows: Vec<f64> = ids
            .iter()
            .flat_map(|&i| &e[i * n..(i + 1) * n])
            .copied()
            .collect();
        for (k, &i) in ids.iter().enumerate() {
            for j in 0..n {
                g[i * n + j] += rows[k * n + j] * h[j];
            }
        }
        h = (0..n)
            .map(|j| (0.5 * h[j] + (0..m).map(|k| rows[k * n + j]).sum::<f64>()).tanh())
            .collect();
        out[0].extend(&h);
        out[1].extend(&g);
        out[2].extend(rows);
    }
    out
}

/// Checks case `seed`'s outputs from the C loop (`in_c`) against the interpreter's (`want`)
/// and against the loop written by hand (`hand`, one flat list per output, in float64).
pub fn assert_like_interpreter_and_hand(
    seed: u64,
    in_c: &[Tensor],
    want: &[Tensor],
    hand: &[Vec<f64>],
    tol: Tol,
) {
    for (k, ((c, i), h)) in in_c.iter().zip(want).zip(hand).enumerate() {
        assert_close(&format!("case {seed}, output {k}"), c, i, tol);
        let h = Tensor::from_slice(h, i.shape())
            .expect("by hand")
            .cast(i.dtype());
        assert_close(&format!("case {seed}, output {k} by hand"), c, &h, tol);
    }
}
