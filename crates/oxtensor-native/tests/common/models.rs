//! Building loops the way a model's author writes them (sequences, states and other values,
//! and a step computing from their taps), and checking a model: every loop of its graph,
//! unoptimized and in FAST_RUN with its gradient, runs whole in C and agrees with the
//! interpreter (`staged_models.rs`, `staged_ops.rs`).

use super::backend;
use oxtensor::gradient::GradOptions;
use oxtensor::{Mode, ScanSpec, function, grad, scan};
use oxtensor_data::Tensor;
use oxtensor_graph::{FunctionGraph, Op, TensorType, Var};
use oxtensor_runtime::{Backend, Executable, Interpreter};
use oxtensor_testkit::{Tol, assert_close};

/// A loop to build: sequences and states with their taps (a state's initial buffer holds
/// the `-min(taps)` values before step 0), the values every step reads, and `n_steps`
/// (negative: as many as the sequences allow).
pub struct Loop {
    /// The name shown when printing.
    pub name: &'static str,
    /// The sequences and their taps.
    pub sequences: Vec<(Var, Vec<i64>)>,
    /// The states' initial buffers and their taps.
    pub states: Vec<(Var, Vec<i64>)>,
    /// The values every step reads.
    pub others: Vec<Var>,
    /// The number of steps.
    pub n_steps: Var,
}

/// What a step computes: each state's next value, the mapped outputs and an optional
/// `until` condition.
pub struct Step {
    /// Each state's next value.
    pub next: Vec<Var>,
    /// The mapped outputs.
    pub mapped: Vec<Var>,
    /// The condition the loop stops after, if any.
    pub until: Option<Var>,
}

impl Loop {
    /// A loop over `sequences` (each read at tap 0) with `states` (each read at tap -1).
    pub fn new(name: &'static str, sequences: &[&Var], states: &[&Var], others: &[&Var]) -> Loop {
        Loop {
            name,
            sequences: sequences.iter().map(|&s| (s.clone(), vec![0])).collect(),
            states: states.iter().map(|&s| (one_row(s), vec![-1])).collect(),
            others: others.iter().map(|&o| o.clone()).collect(),
            n_steps: Var::int_constant(-1),
        }
    }

    /// The loop's outputs (each state's trajectory, then each mapped output's) with `step`
    /// as its step: `step(taps, others)` gets one step input per tap (sequences' first, in
    /// order) and one per other value.
    pub fn build(self, step: impl FnOnce(&[Var], &[Var]) -> Step) -> Vec<Var> {
        let entry =
            |outer: &Var| Var::input(None, TensorType::new(outer.dtype(), &outer.ty().shape[1..]));
        let taps: Vec<Var> = self
            .sequences
            .iter()
            .chain(&self.states)
            .flat_map(|(v, taps)| taps.iter().map(|_| entry(v)))
            .collect();
        let other_inputs: Vec<Var> = self
            .others
            .iter()
            .map(|o| Var::input(None, o.ty().clone()))
            .collect();
        let step = step(&taps, &other_inputs);
        let n_mapped = step.mapped.len();
        let until = step.until.is_some();
        let mut outputs = step.next;
        outputs.extend(step.mapped);
        outputs.extend(step.until);
        let (sequences, sequence_taps): (Vec<Var>, Vec<Vec<i64>>) =
            self.sequences.into_iter().unzip();
        let (initial, state_taps): (Vec<Var>, Vec<Vec<i64>>) = self.states.into_iter().unzip();
        scan(ScanSpec {
            tap_inputs: &taps,
            sequence_taps,
            state_taps,
            other_inputs: &other_inputs,
            outputs: &outputs,
            n_mapped,
            until,
            n_steps: self.n_steps,
            sequences: &sequences,
            initial: &initial,
            others: &self.others,
            go_backwards: false,
            truncate_gradient: None,
            name: Some(self.name),
        })
        .expect(self.name)
    }
}

/// `x` as a buffer of one row (a state's initial value read at tap -1).
pub fn one_row(x: &Var) -> Var {
    oxtensor::ops::expand_dims(x, 0).expect("one row")
}

/// Graph inputs of the dtypes and ranks of `vals`.
pub fn inputs_of(vals: &[Tensor]) -> Vec<Var> {
    vals.iter()
        .map(|v| Var::input(None, TensorType::of_rank(v.dtype(), v.shape().len())))
        .collect()
}

/// What builds a model's outputs and cost from its inputs.
pub type Build<'a> = &'a dyn Fn(&[Var]) -> (Vec<Var>, Var);

/// A model: its input values, its outputs and cost from the inputs, the inputs its cost is
/// differentiated by, and how close its values must be to the interpreter's.
pub struct Model<'a> {
    /// What the messages call it.
    pub name: &'static str,
    /// Its input values.
    pub values: Vec<Tensor>,
    /// Its outputs and cost from its inputs.
    pub build: Build<'a>,
    /// The inputs the cost is differentiated by (none: no gradient).
    pub wrt: &'static [usize],
    /// How close to the interpreter's its values must be.
    pub tol: Tol,
}

/// Checks that every loop of `g` is a C loop (an elementwise or a staged one) and that
/// running `g` on `vals` hands none of them to the interpreter's loop; returns the outputs.
pub fn assert_loops_in_c(what: &str, g: &FunctionGraph, vals: &[Tensor]) -> Vec<Tensor> {
    let scans = g
        .toposort()
        .iter()
        .filter(|n| matches!(n.op(), Some(Op::Scan(_))))
        .count();
    let source = backend().generate(g);
    let in_c = source.split("OX_EXPORT int32_t ox_s").skip(1).count();
    assert_eq!(in_c, scans, "{what}: a loop is not compiled to C");
    let (exec, _) = backend().compile_graph(g).expect("native compile");
    let out = exec.run(vals.to_vec()).expect("native run");
    assert_eq!(exec.interpreted_loops(), 0, "{what}: a loop fell back");
    out
}

/// Compares `got` with `want` output by output.
pub fn assert_all_close(what: &str, got: &[Tensor], want: &[Tensor], tol: Tol) {
    assert_eq!(got.len(), want.len(), "{what}: outputs");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert_close(&format!("{what}, output {k}"), g, w, tol);
    }
}

/// Checks `m`: its unoptimized graph, and its FAST_RUN graph with the gradient of its cost,
/// run every loop in C and agree with the interpreter.
pub fn check(m: &Model<'_>) {
    let inputs = inputs_of(&m.values);
    let (outputs, cost) = (m.build)(&inputs);
    let mut outputs = outputs;
    outputs.push(cost.clone());
    let g = FunctionGraph::new(inputs.clone(), outputs.clone()).expect("graph");
    let in_c = assert_loops_in_c(&format!("{} unoptimized", m.name), &g, &m.values);
    let want = Interpreter
        .compile(&g)
        .expect("interp")
        .run(m.values.clone())
        .expect("interp run");
    assert_all_close(&format!("{} unoptimized", m.name), &in_c, &want, m.tol);

    let wrt: Vec<Var> = m.wrt.iter().map(|&i| inputs[i].clone()).collect();
    if !wrt.is_empty() {
        let grads = grad(&cost, &wrt, &GradOptions::default()).expect("grad");
        outputs.extend(grads.iter().map(|g| g.var().expect("connected").clone()));
    }
    let build = |mode: Mode| {
        function(&inputs, &outputs)
            .mode(mode)
            .build()
            .expect(m.name)
    };
    let fast = build(Mode::FAST_RUN);
    let interp = build(Mode::new("interp", "fast_run").expect("mode"));
    let what = format!("{} in FAST_RUN", m.name);
    let in_c = assert_loops_in_c(&what, fast.graph(), &m.values);
    let want = interp.call(&m.values).expect("interp run");
    assert_all_close(&what, &in_c, &want, m.tol);
    // What `Function` runs is the same.
    assert_all_close(&what, &fast.call(&m.values).expect("call"), &want, m.tol);
}
