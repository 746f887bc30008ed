//! Whole loops in C whose step draws random numbers: each draw (`Op::Random`) is a host call
//! of the staged loop, its generator a `uint64` state carried from step to step. Random draws
//! are exactly specified, so every case is compared bit for bit with the interpreter's loop:
//! the trajectories and every step's generator (the last one is the final state). Covered:
//! normal, uniform, integers and poisson draws; gamma, binomial, pareto (`float32`),
//! half-normal of scale 0, Student's t, categorical; permutations and choices without
//! replacement (with `p`, of `arange(a)` and of an array's rows); draws with a `size`, with parameters that broadcast, with parameters computed from the state this step, several draws chained on one
//! generator; the gradient of a reparametrised draw; a draw whose parameter is invalid at some
//! step, reported by the interpreter naming the step.

use crate::common;

use common::staged::{assert_all_staged, assert_reported_by_the_interpreter, assert_staged_like};
use oxtensor::gradient::GradOptions;
use oxtensor::random::{self, Distribution, RNG_WORDS, default_rng, generator_to_tensor};
use oxtensor::{Mode, ScanSpec, function, grad, scan};
use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{FunctionGraph, TensorType, Var};
use oxtensor_runtime::{Backend, Interpreter};
use oxtensor_testkit::Tol;

/// A step input of `dtype` and static extents `shape`.
fn step_input(dtype: DType, shape: &[usize]) -> Var {
    let shape: Vec<Option<usize>> = shape.iter().map(|&d| Some(d)).collect();
    Var::input(None, TensorType::new(dtype, &shape))
}

/// A float64 constant.
fn c(v: f64) -> Var {
    Var::scalar_constant(v, DType::F64)
}

/// The `size` vector of extents `dims`.
fn size(dims: &[i64]) -> Var {
    let dims: Vec<Var> = dims.iter().map(|&d| Var::int_constant(d)).collect();
    random::size_vector(Some(&dims)).expect("size")
}

/// The initial buffer (one row) of a generator seeded like `np.random.default_rng(seed)`.
fn rng_row(seed: u128) -> Tensor {
    let words = generator_to_tensor(&default_rng(seed)).to_vec_as::<u64>();
    Tensor::from_slice(&words, &[1, RNG_WORDS]).expect("generator")
}

/// One recurrence: its step, from the previous state and generator and the other values,
/// gives the next state, the next generator and the mapped outputs.
type Step = fn(&Var, &Var, &[Var]) -> (Var, Var, Vec<Var>);

/// A state: its dtype, its extents and its initial buffer (one row).
type State<'a> = (DType, &'a [usize], Tensor);

/// A loop of `steps` steps of `step` over a state of `dtype` and extents `shape` (initial row
/// `x0`) and a generator seeded with `seed`, reading `others` (float64 values): the graph and
/// the values of its inputs.
fn recurrence(
    step: Step,
    (dtype, shape, x0): State<'_>,
    others: &[Tensor],
    seed: u128,
    steps: i64,
) -> (FunctionGraph, Vec<Tensor>) {
    let x = step_input(dtype, shape);
    let r = step_input(DType::U64, &[RNG_WORDS]);
    let other_inputs: Vec<Var> = others
        .iter()
        .map(|t| {
            let shape: Vec<Option<usize>> = t.shape().iter().map(|&d| Some(d)).collect();
            Var::input(None, TensorType::new(DType::F64, &shape))
        })
        .collect();
    let (x_new, r_new, mapped) = step(&x, &r, &other_inputs);
    let mut outputs = vec![x_new, r_new];
    outputs.extend(mapped.iter().cloned());
    let row = |d: DType, n: usize| {
        let shape: Vec<Option<usize>> = std::iter::once(None)
            .chain(std::iter::repeat_n(None, n))
            .collect();
        Var::input(None, TensorType::new(d, &shape))
    };
    let initial = [row(dtype, shape.len()), row(DType::U64, 1)];
    let outer_others: Vec<Var> = others
        .iter()
        .map(|t| Var::input(None, TensorType::of_rank(DType::F64, t.ndim())))
        .collect();
    let outs = scan(ScanSpec {
        tap_inputs: &[x, r],
        sequence_taps: vec![],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: &other_inputs,
        outputs: &outputs,
        n_mapped: mapped.len(),
        until: false,
        n_steps: Var::int_constant(steps),
        sequences: &[],
        initial: &initial,
        others: &outer_others,
        go_backwards: false,
        truncate_gradient: None,
        name: Some("draws"),
    })
    .expect("scan");
    let mut inputs = initial.to_vec();
    inputs.extend(outer_others);
    let g = FunctionGraph::new(inputs, outs).expect("graph");
    let mut vals = vec![x0, rng_row(seed)];
    vals.extend(others.iter().cloned());
    (g, vals)
}

/// Runs `g` as staged C loops (checking that none falls back) and in the interpreter, and
/// checks every output is bit for bit the interpreter's.
fn assert_draws_equal(what: &str, g: &FunctionGraph, vals: &[Tensor]) {
    let in_c = assert_all_staged(what, g, vals);
    let want = Interpreter
        .compile(g)
        .expect("interp")
        .run(vals.to_vec())
        .expect("interp run");
    assert_eq!(in_c.len(), want.len(), "{what}");
    for (k, (got, want)) in in_c.iter().zip(&want).enumerate() {
        assert_eq!(got.dtype(), want.dtype(), "{what}, output {k}");
        assert_eq!(got.shape(), want.shape(), "{what}, output {k}");
        let bits = |t: &Tensor| match t.dtype() {
            DType::F64 => t.to_vec_as::<f64>().iter().map(|v| v.to_bits()).collect(),
            DType::F32 => t
                .to_vec_as::<f32>()
                .iter()
                .map(|v| u64::from(v.to_bits()))
                .collect(),
            _ => t.to_vec_as::<u64>(),
        };
        assert_eq!(bits(got), bits(want), "{what}, output {k}");
    }
}

/// `x ← a·x + normal(0, σ)`: an AR(1) simulation.
fn ar1(x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
    let (r, z) = random::normal(r, &c(0.0), &o[1], None).expect("normal");
    (&(&o[0] * x) + &z, r, vec![])
}

/// `x ← x/2 + uniform(-1, 1, size=3)`.
fn uniform_walk(x: &Var, r: &Var, _: &[Var]) -> (Var, Var, Vec<Var>) {
    let (r, u) = random::uniform(r, &c(-1.0), &c(1.0), Some(&size(&[3]))).expect("uniform");
    (&(x * 0.5) + &u, r, vec![])
}

/// `n ← n + integers(0, 10)`: an integer state.
fn counter(n: &Var, r: &Var, _: &[Var]) -> (Var, Var, Vec<Var>) {
    let (lo, hi) = (Var::int_constant(0), Var::int_constant(10));
    let (r, k) = random::integers(r, &lo, &hi, None).expect("integers");
    (n + &k, r, vec![])
}

/// A stochastic volatility model: `h ← μ + φ(h − μ) + s·normal()`, then, from the same
/// generator, an observation `normal(0, exp(h/2))` and a count `poisson(exp(h))` whose
/// parameters are the new state's.
fn volatility(h: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
    let (mu, phi, s) = (&o[0], &o[1], &o[2]);
    let (r, z) = random::standard_normal(r, None).expect("normal");
    let h_new = &(mu + &(phi * &(h - mu))) + &(s * &z);
    let (r, y) = random::normal(&r, &c(0.0), &(&h_new * 0.5).exp(), None).expect("normal");
    let (r, k) = random::random_variable(Distribution::Poisson, &r, None, &[h_new.exp()], None)
        .expect("poisson");
    (h_new, r, vec![y, k])
}

/// `x ← 0.9·x + Σ₀ normal(x, σ)` with `σ` of extents 2 × 1 broadcast against the state
/// (3,), plus a draw of `size` (2, 3) from `normal(x, 1)`, mapped.
fn broadcast(x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
    let (r, z) = random::normal(r, x, &o[0], None).expect("normal");
    let (r, w) = random::normal(&r, x, &c(1.0), Some(&size(&[2, 3]))).expect("normal");
    (&(x * 0.9) + &z.sum(Some(&[0])), r, vec![w])
}

/// Draws of several distributions from one generator, their parameters broadcast against
/// each other and a `size`, some computed from the state (`x`, extents 3), `o[0]` of extents
/// 2 × 1 and `o[1]` of extents 3: gamma (2, 3); binomial with integer `n` (3,) and a size
/// (2, 3); pareto from `float32` parameters drawn as `float32` (SciPy's `float32`
/// arithmetic); a half-normal of scale 0 (SciPy's `loc` without drawing); uniform with a size;
/// Student's t (SciPy's checks, every element its own parameters); poisson from the state.
fn several(x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
    let draw = |dist: Distribution, r: &Var, size: Option<&Var>, params: &[Var], dtype| {
        random::random_variable(dist, r, size, params, dtype)
            .unwrap_or_else(|e| panic!("{}: {e}", dist.name()))
    };
    let (a, b) = (&o[0], &o[1]);
    let (r, g) = draw(
        Distribution::Gamma,
        r,
        None,
        &[&(x * x) + 0.5, a.clone()],
        None,
    );
    let n = Var::constant(Tensor::from_slice(&[3i64, 5, 7], &[3]).expect("n"));
    let six = size(&[2, 3]);
    let (r, k) = draw(Distribution::Binomial, &r, Some(&six), &[n, c(0.3)], None);
    let b32 = b.astype(DType::F32);
    let two = Var::scalar_constant(2.0, DType::F32);
    let (r, p) = draw(
        Distribution::Pareto,
        &r,
        None,
        &[b32, two],
        Some(DType::F32),
    );
    let (r, h) = draw(
        Distribution::HalfNormal,
        &r,
        None,
        &[x.clone(), b * 0.0],
        None,
    );
    let (r, u) = draw(
        Distribution::Uniform,
        &r,
        Some(&six),
        &[x.clone(), x + 1.0],
        None,
    );
    let (r, t) = draw(
        Distribution::StudentT,
        &r,
        None,
        &[c(4.0), x.clone(), a.clone()],
        None,
    );
    let (r, m) = draw(Distribution::Poisson, &r, None, &[&(x * x) + 1.0], None);
    let mixed = &(&g.sum(Some(&[0])) * 0.01) + &(&u.sum(Some(&[0])) * 0.1);
    (&(x * 0.5) + &mixed, r, vec![k, p, h, t, m])
}

/// Categorical draws: an index from `softmax(x)` of the state (extents 3), computed this
/// step; a `size` (4, 2) of draws from the two rows of probabilities `o[0]` (2 × 3); and five
/// draws sharing the one row `softmax(x)`. The state moves by a uniform draw and the index.
fn categorical(x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
    let draw = |r: &Var, size: Option<&Var>, p: &Var| {
        random::random_variable(
            Distribution::Categorical,
            r,
            size,
            std::slice::from_ref(p),
            None,
        )
        .expect("categorical")
    };
    let e = x.exp();
    let p = &e / &e.sum(None);
    let (r, z) = draw(r, None, &p);
    let (r, rows) = draw(&r, Some(&size(&[4, 2])), &o[0]);
    let (r, shared) = draw(&r, Some(&size(&[5])), &p);
    let (r, u) = random::uniform(&r, &c(-1.0), &c(1.0), Some(&size(&[3]))).expect("uniform");
    let moved = &(&(x * 0.5) + &u) + &(&z.astype(DType::F64) * 0.1);
    (moved, r, vec![z, rows, shared])
}

/// A float64 tensor of `shape` holding `v`.
fn f64s(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape).expect("tensor")
}

#[test]
fn loops_drawing_random_numbers_run_as_staged_c_loops_with_the_interpreters_draws() {
    let cases: Vec<(&str, Step, State<'_>, Vec<Tensor>)> = vec![
        (
            "AR(1) with normal noise",
            ar1,
            (DType::F64, &[], f64s(&[0.5], &[1])),
            vec![Tensor::scalar(0.8f64), Tensor::scalar(0.3f64)],
        ),
        (
            "uniform draws of size 3",
            uniform_walk,
            (DType::F64, &[3], f64s(&[1.0, -2.0, 0.25], &[1, 3])),
            vec![],
        ),
        (
            "an integer counter",
            counter,
            (
                DType::I64,
                &[],
                Tensor::from_slice(&[4i64], &[1]).expect("n0"),
            ),
            vec![],
        ),
        (
            "stochastic volatility",
            volatility,
            (DType::F64, &[], f64s(&[-0.2], &[1])),
            vec![
                Tensor::scalar(-0.5f64),
                Tensor::scalar(0.9f64),
                Tensor::scalar(0.4f64),
            ],
        ),
        (
            "broadcast parameters and a size",
            broadcast,
            (DType::F64, &[3], f64s(&[0.1, 0.2, -0.3], &[1, 3])),
            vec![f64s(&[0.5, 2.0], &[2, 1])],
        ),
        (
            "several distributions, broadcast parameters, sizes and dtypes",
            several,
            (DType::F64, &[3], f64s(&[0.1, 0.2, -0.3], &[1, 3])),
            vec![f64s(&[0.5, 2.0], &[2, 1]), f64s(&[1.5, 3.0, 0.75], &[3])],
        ),
        (
            "categorical draws from rows computed in the step, given and shared",
            categorical,
            (DType::F64, &[3], f64s(&[0.1, 0.2, -0.3], &[1, 3])),
            vec![f64s(&[0.2, 0.5, 0.3, 0.6, 0.1, 0.3], &[2, 3])],
        ),
    ];
    for (seed, (what, step, state, others)) in cases.into_iter().enumerate() {
        let (g, vals) = recurrence(step, state, &others, 100 + seed as u128, 7);
        assert_draws_equal(what, &g, &vals);
    }
}

#[test]
fn a_loop_drawing_from_an_unchanging_generator_draws_the_same_numbers_each_step() {
    // The generator is a loop-invariant value, not a state: every step draws the same number.
    fn step(x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
        let (_, z) = random::normal(&o[0], &c(0.0), &c(1.0), None).expect("normal");
        (x + &z, r.clone(), vec![z])
    }
    let x = step_input(DType::F64, &[]);
    let r = step_input(DType::U64, &[RNG_WORDS]);
    let fixed = step_input(DType::U64, &[RNG_WORDS]);
    let (x_new, r_same, mapped) = step(&x, &r, std::slice::from_ref(&fixed));
    let inputs = [
        Var::input(None, TensorType::of_rank(DType::F64, 1)),
        Var::input(None, TensorType::of_rank(DType::U64, 2)),
        Var::input(None, TensorType::of_rank(DType::U64, 1)),
    ];
    let outs = scan(ScanSpec {
        tap_inputs: &[x, r],
        sequence_taps: vec![],
        state_taps: vec![vec![-1], vec![-1]],
        other_inputs: std::slice::from_ref(&fixed),
        outputs: &[x_new, r_same, mapped[0].clone()],
        n_mapped: 1,
        until: false,
        n_steps: Var::int_constant(4),
        sequences: &[],
        initial: &inputs[..2],
        others: &inputs[2..],
        go_backwards: false,
        truncate_gradient: None,
        name: Some("fixed"),
    })
    .expect("scan");
    let g = FunctionGraph::new(inputs.to_vec(), outs).expect("graph");
    let fixed_rng = generator_to_tensor(&default_rng(9));
    let vals = vec![f64s(&[0.0], &[1]), rng_row(3), fixed_rng];
    assert_draws_equal("an unchanging generator", &g, &vals);
    let z = assert_all_staged("an unchanging generator", &g, &vals)[2].to_vec_as::<f64>();
    assert!(z.iter().all(|&v| v == z[0]), "{z:?}");
}

#[test]
fn gradients_through_a_reparametrised_draw_run_as_staged_loops_like_the_interpreter() {
    // `x ← a·x + μ + σ·z`, z standard normal: the gradient of Σx w.r.t. a, μ and σ.
    fn step(x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
        let (r, z) = random::standard_normal(r, None).expect("normal");
        let x_new = &(&(&o[0] * x) + &o[1]) + &(&o[2] * &z);
        (x_new, r, vec![])
    }
    let others = [
        Tensor::scalar(0.7f64),
        Tensor::scalar(0.1f64),
        Tensor::scalar(0.5f64),
    ];
    let (g, vals) = recurrence(step, (DType::F64, &[], f64s(&[0.3], &[1])), &others, 5, 6);
    let inputs = g.inputs().to_vec();
    let cost = g.outputs()[0].sum(None);
    let grads = grad(&cost, &inputs[2..], &GradOptions::default()).expect("grad");
    let mut all = vec![cost];
    all.extend(grads.iter().filter_map(|g| g.var().cloned()));
    let build = |mode: Mode| {
        function(&inputs, &all)
            .mode(mode)
            .build()
            .expect("function")
    };
    let fast = build(Mode::FAST_RUN);
    let interp = build(Mode::new("interp", "fast_run").expect("mode"));
    // C sums the backward step's terms in another order than the interpreter.
    let tol = Tol::MATH_LIBRARIES.or_scaled(1e-12);
    assert_staged_like("reparametrised draws", fast.graph(), &interp, &vals, tol);
}

#[test]
fn an_invalid_scale_at_some_step_is_reported_by_the_interpreter() {
    // `s ← s − 1` from 2.5, and a draw of scale `s`: negative at step 2.
    fn step(s: &Var, r: &Var, _: &[Var]) -> (Var, Var, Vec<Var>) {
        let s_new = s - 1.0;
        let (r, z) = random::normal(r, &c(0.0), &s_new, None).expect("normal");
        (s_new, r, vec![z])
    }
    let (g, vals) = recurrence(step, (DType::F64, &[], f64s(&[2.5], &[1])), &[], 1, 5);
    assert_reported_by_the_interpreter(&g, vals, "step 2 of");
}

/// A draw of `dist` with parameters `params` (and a `size` when given), its default dtype.
fn draw_of(dist: Distribution, r: &Var, size: Option<&Var>, params: &[Var]) -> (Var, Var) {
    random::random_variable(dist, r, size, params, None)
        .unwrap_or_else(|e| panic!("{}: {e}", dist.name()))
}

/// A random walk with correlated noise for each method of `multivariate_normal`:
/// `x ← mvn(x, Σ)` with `Σ = o[0]` (3 × 3); then, mapped, a draw of `size` (2,) around the
/// state and one per covariance of `o[1]` (2 × 3 × 3) around the two means `0.5·x` and `x`.
fn mv_walk(dist: Distribution) -> Step {
    fn walk(dist: Distribution, x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
        let (r, x_new) = draw_of(dist, r, None, &[x.clone(), o[0].clone()]);
        let (r, sized) = draw_of(dist, &r, Some(&size(&[2])), &[x.clone(), o[0].clone()]);
        let means = oxtensor_graph::build::stack(&[x * 0.5, x.clone()], 0).expect("means");
        let (r, batched) = draw_of(dist, &r, None, &[means, o[1].clone()]);
        (x_new, r, vec![sized, batched])
    }
    match dist {
        Distribution::MvNormalSvd => |x, r, o| walk(Distribution::MvNormalSvd, x, r, o),
        Distribution::MvNormalEigh => |x, r, o| walk(Distribution::MvNormalEigh, x, r, o),
        _ => |x, r, o| walk(Distribution::MvNormal, x, r, o),
    }
}

/// A point of the simplex moved by Dirichlet and multinomial draws: `x ← dirichlet(1 + 5x)`;
/// mapped, a `size` (4,) of Dirichlet draws from small alphas `0.05·x` (NumPy's stick
/// breaking), Dirichlet draws from the two rows of `o[0]` (2 × 3), counts of
/// `multinomial(20, x)`, a `size` (3, 2) of counts with `n` = (5, 40) and the rows of `o[0]`,
/// and beta-binomial counts with `n` = (5, 40), `a = x₀ + 0.5`, `b = 2`.
fn simplex(x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
    let (r, x_new) = draw_of(Distribution::Dirichlet, r, None, &[&(x * 5.0) + 1.0]);
    let (r, small) = draw_of(Distribution::Dirichlet, &r, Some(&size(&[4])), &[x * 0.05]);
    let (r, rows) = draw_of(Distribution::Dirichlet, &r, None, &[o[0].clone()]);
    let twenty = Var::int_constant(20);
    let (r, counts) = draw_of(
        Distribution::Multinomial,
        &r,
        None,
        &[twenty, x_new.clone()],
    );
    let ns = Var::constant(Tensor::from_slice(&[5i64, 40], &[2]).expect("n"));
    let six = size(&[3, 2]);
    let (r, sized) = draw_of(
        Distribution::Multinomial,
        &r,
        Some(&six),
        &[ns.clone(), o[0].clone()],
    );
    let first = x_new.at(&[oxtensor_graph::build::Idx::At(Var::int_constant(0))]);
    let (r, mixed) = draw_of(
        Distribution::BetaBinom,
        &r,
        None,
        &[ns, &first + 0.5, c(2.0)],
    );
    (x_new, r, vec![small, rows, counts, sized, mixed])
}

#[test]
fn loops_drawing_vectors_run_as_staged_c_loops_with_the_interpreters_draws() {
    let cov = f64s(&[2.0, 0.3, 0.1, 0.3, 1.0, -0.2, 0.1, -0.2, 0.5], &[3, 3]);
    let covs = f64s(
        &[
            2.0, 0.3, 0.1, 0.3, 1.0, -0.2, 0.1, -0.2, 0.5, // the first
            1.0, 0.5, 0.0, 0.5, 2.0, 0.1, 0.0, 0.1, 3.0, // the second
        ],
        &[2, 3, 3],
    );
    let x0 = f64s(&[0.1, 0.2, -0.3], &[1, 3]);
    for (seed, dist) in [
        Distribution::MvNormal,
        Distribution::MvNormalSvd,
        Distribution::MvNormalEigh,
    ]
    .into_iter()
    .enumerate()
    {
        let others = [cov.clone(), covs.clone()];
        let state = (DType::F64, &[3][..], x0.clone());
        let (g, vals) = recurrence(mv_walk(dist), state, &others, 200 + seed as u128, 9);
        assert_draws_equal(dist.name(), &g, &vals);
    }
    let rows = f64s(&[0.2, 0.5, 0.3, 0.6, 0.1, 0.3], &[2, 3]);
    let point = (DType::F64, &[3][..], f64s(&[0.2, 0.3, 0.5], &[1, 3]));
    let (g, vals) = recurrence(simplex, point, &[rows], 210, 9);
    assert_draws_equal("dirichlet and multinomial", &g, &vals);
}

#[test]
fn an_invalid_covariance_or_alpha_at_some_step_is_reported_by_the_interpreter() {
    // `s ← s − 1` from 2.5: the covariance `s·I` stops being positive definite at step 2.
    fn cov(s: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
        let s_new = s - 1.0;
        let mean = Var::constant(f64s(&[0.0; 3], &[3]));
        let (r, z) = draw_of(Distribution::MvNormal, r, None, &[mean, &o[0] * &s_new]);
        (s_new, r, vec![z])
    }
    // The same `s` as every alpha: negative at step 2.
    fn alpha(s: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
        let s_new = s - 1.0;
        let (r, z) = draw_of(Distribution::Dirichlet, r, None, &[&o[0] * &s_new]);
        (s_new, r, vec![z])
    }
    let eye = f64s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], &[3, 3]);
    let ones = f64s(&[1.0; 3], &[3]);
    for (step, other) in [(cov as Step, eye), (alpha as Step, ones)] {
        let (g, vals) = recurrence(step, (DType::F64, &[], f64s(&[2.5], &[1])), &[other], 1, 5);
        assert_reported_by_the_interpreter(&g, vals, "step 2 of");
    }
}

/// An int64 vector constant.
fn i64s(v: &[i64]) -> Var {
    Var::constant(Tensor::from_slice(v, &[v.len()]).expect("ints"))
}

/// Permutations and choices without replacement: `x ← 0.9·permutation(x) + u` (the entries
/// of the state, extents 5, shuffled); mapped, a shuffled `arange(6)`, a `size` (3,) of
/// shuffles of the state, a (2, 2) sample of `arange(10)`, 3 of the rows of `o[0]` (4 × 2), 3
/// of `arange(5)` with probabilities `softmax(x)` computed this step, and 2 of the entries
/// of the state with probabilities `o[1]` (one of them 0).
fn shuffles(x: &Var, r: &Var, o: &[Var]) -> (Var, Var, Vec<Var>) {
    use Distribution::{ChoiceWithoutReplacement as Choice, ChoiceWithoutReplacementP as P};
    let (r, shuffled) = draw_of(Distribution::Permutation, r, None, std::slice::from_ref(x));
    let six = Var::int_constant(6);
    let (r, arange) = draw_of(Distribution::Permutation, &r, None, &[six]);
    let three = size(&[3]);
    let (r, sized) = draw_of(
        Distribution::Permutation,
        &r,
        Some(&three),
        std::slice::from_ref(x),
    );
    let ten = Var::int_constant(10);
    let (r, sample) = draw_of(Choice, &r, None, &[ten, i64s(&[2, 2])]);
    let (r, rows) = draw_of(Choice, &r, None, &[o[0].clone(), i64s(&[3])]);
    let e = x.exp();
    let p = &e / &e.sum(None);
    let five = Var::int_constant(5);
    let (r, weighted) = draw_of(P, &r, None, &[five, p, i64s(&[3])]);
    let (r, entries) = draw_of(P, &r, None, &[x.clone(), o[1].clone(), i64s(&[2])]);
    let (r, u) = random::uniform(&r, &c(-0.1), &c(0.1), Some(&size(&[5]))).expect("uniform");
    let moved = &(&shuffled * 0.9) + &u;
    (
        moved,
        r,
        vec![arange, sized, sample, rows, weighted, entries],
    )
}

#[test]
fn loops_drawing_permutations_and_choices_run_as_staged_c_loops_with_the_interpreters_draws() {
    let rows = f64s(&[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5], &[4, 2]);
    let p = f64s(&[0.1, 0.0, 0.4, 0.3, 0.2], &[5]);
    let x0 = f64s(&[0.1, 0.2, -0.3, 0.4, -0.5], &[1, 5]);
    let (g, vals) = recurrence(shuffles, (DType::F64, &[5], x0), &[rows, p], 220, 9);
    assert_draws_equal("permutations and choices", &g, &vals);
}
