//! Staged steps holding joins, splits, reshapes and run-time checks: a step concatenating
//! values along any axis (an RNN's `[x_t, h]`, an ODE's right-hand side stacked from
//! scalars) and the backward step, which splits the join's cotangent into the pieces'
//! (`Split`); a reshape of a transposed view; `einsum`'s check that extents agree, and an
//! assertion on a value of the step that fails at some step (reported by the interpreter).
//! Loops whose values have no elements (staged and elementwise), and an empty `max`.
//! Checked to run every loop in C and against the interpreter, on random ranks, axes and
//! extents, forwards and with gradients.
use crate::common;

use common::data::Rng;
use common::models::{Loop, Model, Step, check, inputs_of};
use common::staged::{assert_reported_by_the_interpreter, square_sum, values};
use oxtensor::ops::{self, Idx};
use oxtensor_data::Tensor;
use oxtensor_graph::{FunctionGraph, Var};
use oxtensor_testkit::Tol;

/// `J = [x_t, S, 0.5·x_t]` joined along `axis`, split back into three pieces (of the
/// pieces' extents, a param of the step), `S ← tanh(0.9·b + Σ a·c)`, with `J` and `a·c` as
/// mapped outputs. Inputs `x` (steps × piece), `S_0`.
fn join_split(v: &[Var], axis: usize) -> (Vec<Var>, Var) {
    let lp = Loop::new("join-split", &[&v[0]], &[&v[1]], &[]);
    let out = lp.build(|taps, _| {
        let (x, s) = (&taps[0], &taps[1]);
        let joined = ops::concatenate(&[x.clone(), s.clone(), x * 0.5], axis as i64).expect("join");
        let extent = |p: &Var| ops::shape_i(p, axis).expect("extent");
        let sizes = [extent(x), extent(s), extent(x)];
        let pieces = ops::split(&(&joined * 0.9), &sizes, axis as i64).expect("split");
        let (a, b, c) = (&pieces[0], &pieces[1], &pieces[2]);
        Step {
            next: vec![(b + &(a * c).sum(None)).tanh()],
            mapped: vec![joined.clone(), a * c],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

/// The axis and values of a random [`join_split`] case: rank 1 to 3, extents 1 to 4.
fn join_values(seed: u64) -> (usize, Vec<Tensor>) {
    let mut rng = Rng::new(seed);
    let rank = 1 + rng.below(3);
    let axis = rng.below(rank);
    let steps = 1 + rng.below(6);
    let mut piece: Vec<usize> = (0..rank).map(|_| 1 + rng.below(4)).collect();
    let mut state = piece.clone();
    state[axis] = 1 + rng.below(4);
    piece.insert(0, steps);
    let vals = vec![values(&mut rng, &piece, 1.0), values(&mut rng, &state, 0.8)];
    (axis, vals)
}

#[test]
fn joins_and_splits_along_any_axis_run_in_c() {
    for seed in 0..12 {
        let (axis, vals) = join_values(seed);
        check(&Model {
            name: "join-split",
            values: vals,
            build: &|v| join_split(v, axis),
            wrt: &[0, 1],
            tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
        });
    }
}

/// An RNN on a batch whose step multiplies the concatenation `[x_t, h]` (batch × (inputs +
/// hidden)) by one weight matrix, `h ← tanh([x_t, h] W + b)`, and whose mapped output joins
/// a transposed view (gathered first). Inputs `X, W, b, h_0`.
fn concat_rnn(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("concat-rnn", &[&v[0]], &[&v[3]], &[&v[1], &v[2]]);
    let out = lp.build(|taps, o| {
        let (x, h) = (&taps[0], &taps[1]);
        let xh = ops::concatenate(&[x.clone(), h.clone()], 1).expect("[x, h]");
        let next = (&xh.matmul(&o[0]) + &o[1]).tanh();
        let wide = ops::concatenate(&[next.t(), next.t()], 1).expect("[hᵀ, hᵀ]");
        Step {
            next: vec![next],
            mapped: vec![wide],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

/// A Lotka–Volterra model by Euler steps, its right-hand side stacked from the state's two
/// entries: `y ← y + 0.01·[θ₀y₀ − θ₁y₀y₁, θ₃y₀y₁ − θ₂y₁]`. Inputs `y_0, θ`.
fn lotka_volterra(v: &[Var]) -> (Vec<Var>, Var) {
    let mut lp = Loop::new("lotka-volterra", &[], &[&v[0]], &[&v[1]]);
    lp.n_steps = Var::int_constant(60);
    let out = lp.build(|taps, o| {
        let (y, th) = (&taps[0], &o[0]);
        let at = |x: &Var, i: i64| x.at(&[Idx::int(i)]);
        let (y0, y1) = (at(y, 0), at(y, 1));
        let both = &y0 * &y1;
        let dy = ops::stack(
            &[
                &(&at(th, 0) * &y0) - &(&at(th, 1) * &both),
                &(&at(th, 3) * &both) - &(&at(th, 2) * &y1),
            ],
            0,
        )
        .expect("stack");
        Step {
            next: vec![y + &(&dy * 0.01)],
            mapped: vec![],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

#[test]
fn concatenating_steps_and_their_gradients_run_in_c() {
    let mut rng = Rng::new(30);
    let (steps, batch, inputs, hidden) = (7, 3, 2, 4);
    check(&Model {
        name: "concat rnn",
        values: vec![
            values(&mut rng, &[steps, batch, inputs], 1.0),
            values(&mut rng, &[inputs + hidden, hidden], 0.5),
            values(&mut rng, &[hidden], 0.2),
            values(&mut rng, &[batch, hidden], 0.5),
        ],
        build: &concat_rnn,
        wrt: &[0, 1, 2, 3],
        tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
    });
    check(&Model {
        name: "lotka-volterra",
        values: vec![
            Tensor::from_slice(&[1.0, 0.5], &[2]).expect("y0"),
            Tensor::from_slice(&[1.0, 0.4, 0.8, 0.3], &[4]).expect("theta"),
        ],
        build: &lotka_volterra,
        wrt: &[0, 1],
        tol: Tol::REORDERED,
    });
}

/// `S ← tanh(0.5·S + reshape(X_tᵀ, S's extents))` and, mapped, `reshape(X_tᵀ, (-1,))`: a
/// reshape of a transposed view (gathered into C order first). Inputs `X` (steps × m × n),
/// `S_0` (n × m).
fn reshaped_transpose(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("reshaped-transpose", &[&v[0]], &[&v[1]], &[]);
    let out = lp.build(|taps, _| {
        let (x, s) = (&taps[0], &taps[1]);
        let extent = |d: usize| ops::shape_i(s, d).expect("extent");
        let xt = ops::reshape_sym(&x.t(), &[extent(0), extent(1)]).expect("reshape");
        let flat = ops::reshape(&x.t(), &[-1]).expect("flatten");
        Step {
            next: vec![(&(s * 0.5) + &xt).tanh()],
            mapped: vec![flat],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

#[test]
fn reshapes_of_transposed_views_run_in_c() {
    let mut rng = Rng::new(32);
    let (m, n) = (3, 4);
    check(&Model {
        name: "reshaped transpose",
        values: vec![
            values(&mut rng, &[5, m, n], 1.0),
            values(&mut rng, &[n, m], 0.5),
        ],
        build: &reshaped_transpose,
        wrt: &[0, 1],
        // `tanh` from two math libraries, then its derivative compounded through the steps.
        tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
    });
}

/// `h ← tanh(einsum("ij,j->i", W, h) + x_t)` (einsum checks that the extents of `j` agree:
/// a condition known before the loop), with `h` asserted to stay below `bound` in absolute
/// value (a condition the step computes). Inputs `X, W, h_0, bound`.
fn checked_rnn(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("checked-rnn", &[&v[0]], &[&v[2]], &[&v[1], &v[3]]);
    let out = lp.build(|taps, o| {
        let (x, h, w, bound) = (&taps[0], &taps[1], &o[0], &o[1]);
        let wh = ops::einsum("ij,j->i", &[w.clone(), h.clone()]).expect("einsum");
        let next = (&wh + x).tanh();
        let within = ops::lt(&next.abs().max(None), bound).expect("bound");
        let next = ops::check::assert_that(&next, &[within], "h left its bound").expect("assert");
        Step {
            next: vec![next],
            mapped: vec![],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

#[test]
fn checks_in_a_step_run_in_c_and_a_failing_one_is_reported_by_the_interpreter() {
    let mut rng = Rng::new(31);
    let vals = vec![
        values(&mut rng, &[9, 4], 1.0),
        values(&mut rng, &[4, 4], 0.5),
        values(&mut rng, &[4], 0.5),
        Tensor::scalar(2.0),
    ];
    check(&Model {
        name: "checked rnn",
        values: vals.clone(),
        build: &checked_rnn,
        wrt: &[0, 1, 2],
        tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
    });
    // A bound some step's `h` exceeds: the C loop stops and the interpreter's loop raises.
    let mut low = vals;
    low[3] = Tensor::scalar(0.6);
    let inputs = inputs_of(&low);
    let (out, _) = checked_rnn(&inputs);
    let g = FunctionGraph::new(inputs, out).expect("graph");
    assert_reported_by_the_interpreter(&g, low, "h left its bound");
}

/// The Viterbi algorithm's step: `δ ← max(δ[:, None] + log A, axis 0) + e_t`, with
/// `ψ_t = argmax(…, axis 0)` mapped (an arg-reduction, a host call). Inputs `E` (steps ×
/// states), `log A`, `δ_0`.
fn viterbi(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("viterbi", &[&v[0]], &[&v[2]], &[&v[1]]);
    let out = lp.build(|taps, o| {
        let (e, delta, log_a) = (&taps[0], &taps[1], &o[0]);
        let scores = &ops::expand_dims(delta, 1).expect("column") + log_a;
        let best = ops::argmax(&scores, Some(0), false).expect("argmax");
        Step {
            next: vec![&scores.max(Some(&[0])) + e],
            mapped: vec![best],
            until: None,
        }
    });
    let cost = out[0].sum(None);
    (out, cost)
}

/// A step of host-called nodes C does not compute: `h ← tanh(0.5·sort(cumsum(h·x_t)) +
/// (W @ h[None, :, None])[:, 0, 0])`, a cumulative sum, a sort and a batched product (`W`
/// of n × n × n). Inputs `X` (steps × n), `W`, `h_0` (n).
fn host_called(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("host-called", &[&v[0]], &[&v[2]], &[&v[1]]);
    let out = lp.build(|taps, o| {
        let (x, h, w) = (&taps[0], &taps[1], &o[0]);
        let running = ops::extra::cumsum(&(h * x), Some(0)).expect("cumsum");
        let sorted = ops::extra::sort(&running, Some(0)).expect("sort");
        let col = ops::expand_dims(&ops::expand_dims(h, 1).expect("col"), 0).expect("batch");
        let mixed = w.matmul(&col).at(&[Idx::full(), Idx::int(0), Idx::int(0)]);
        Step {
            next: vec![(&(&sorted * 0.5) + &mixed).tanh()],
            mapped: vec![],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

#[test]
fn steps_with_nodes_c_does_not_compute_call_them_back() {
    let mut rng = Rng::new(33);
    let (steps, k) = (20, 4);
    check(&Model {
        name: "viterbi",
        values: vec![
            values(&mut rng, &[steps, k], 2.0),
            values(&mut rng, &[k, k], 1.0),
            values(&mut rng, &[k], 0.5),
        ],
        build: &viterbi,
        wrt: &[0, 1, 2],
        tol: Tol::EXACT,
    });
    let n = 3;
    check(&Model {
        name: "host-called",
        values: vec![
            values(&mut rng, &[steps, n], 1.0),
            values(&mut rng, &[n, n, n], 0.5),
            values(&mut rng, &[n], 0.5),
        ],
        build: &host_called,
        wrt: &[0, 1, 2],
        tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
    });
}
/// An RNN whose state may have no elements: `h ← tanh(W h + x_t) + 0.1·Σh`, with `Σh`,
/// `Πh` and `max(h ⊗ c, axis 1)` mapped (a product, sums and a max over an axis that is not
/// empty). Inputs `X` (steps × n), `W` (n × n), `h_0` (n), `c` (3).
fn maybe_empty_rnn(v: &[Var]) -> (Vec<Var>, Var) {
    let lp = Loop::new("maybe-empty", &[&v[0]], &[&v[2]], &[&v[1], &v[3]]);
    let out = lp.build(|taps, o| {
        let (x, h, (w, c)) = (&taps[0], &taps[1], (&o[0], &o[1]));
        let total = h.sum(None);
        let outer = &ops::expand_dims(h, 1).expect("column") * c;
        Step {
            next: vec![&(&w.matmul(h) + x).tanh() + &(&total * 0.1)],
            mapped: vec![total, h.prod(None), outer.max(Some(&[1]))],
            until: None,
        }
    });
    let cost = square_sum(&out);
    (out, cost)
}

#[test]
fn loops_whose_values_have_no_elements_run_in_c_like_the_interpreter() {
    let mut rng = Rng::new(32);
    for n in [0, 2] {
        check(&Model {
            name: "maybe-empty rnn",
            values: vec![
                values(&mut rng, &[7, n], 1.0),
                values(&mut rng, &[n, n], 0.5),
                values(&mut rng, &[n], 0.5),
                values(&mut rng, &[3], 1.0),
            ],
            build: &maybe_empty_rnn,
            wrt: &[0, 1, 2],
            tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
        });
    }
    // An elementwise step (the elementwise C loop) over an empty state.
    check(&Model {
        name: "empty elementwise",
        values: vec![values(&mut rng, &[5, 0], 1.0), values(&mut rng, &[0], 1.0)],
        build: &|v| {
            let lp = Loop::new("empty-elementwise", &[&v[0]], &[&v[1]], &[]);
            let out = lp.build(|taps, _| Step {
                next: vec![(&(&taps[1] * 0.5) + &taps[0]).tanh()],
                mapped: vec![],
                until: None,
            });
            let cost = square_sum(&out);
            (out, cost)
        },
        wrt: &[0, 1],
        tol: Tol::MATH_LIBRARIES.or_scaled(1e-12),
    });
    // A max over an empty row has no identity: the C loop is not laid out, and the
    // interpreter's loop raises NumPy's error.
    let vals = vec![values(&mut rng, &[4, 0], 1.0)];
    let inputs = inputs_of(&vals);
    let out = Loop::new("empty-max", &[&inputs[0]], &[], &[]).build(|taps, _| Step {
        next: vec![],
        mapped: vec![taps[0].max(Some(&[0]))],
        until: None,
    });
    let g = FunctionGraph::new(inputs, out).expect("graph");
    assert_reported_by_the_interpreter(&g, vals, "zero-size array");
}
