//! `kernels::reduce_of_elemwise` (a `Reduce` of an elementwise producer in one pass) against
//! the two passes it replaces: `kernels::eval` of the producer, then `kernels::eval` of the
//! `Reduce` on the chosen output. Values must be equal bit for bit (floats included: the fused
//! kernel combines exactly as the `Reduce` kernel does) and errors must be equal.
//!
//! * property tests: random shapes (rank 0–4, extents 0 and 1 included), random axis subsets,
//!   broadcasting through static-1 dimensions, permuted, stepped, reversed and zero-stride
//!   input views, input dtypes float64/float32/int64/int32/bool, every `ReduceOp`, producers
//!   that are single random elementwise ops or random single- and multi-output Composites
//!   (integer powers with negative exponents among them, so errors are compared too);
//! * larger views, so the pairwise trees split above the block size;
//! * sizes above the parallel threshold through the rows, columns and general paths;
//! * errors and fallbacks: shape mismatches, bad axes, empty max, a failing unused output.

use oxtensor_data::{DType, Element, Tensor, dispatch_dtype};
use oxtensor_graph::build::elemwise;
use oxtensor_graph::{
    Arity, Axes, FrozenGraph, Op, ReduceOp, ScalarOp, TensorType, Var, infer_types,
};
use oxtensor_runtime::KernelError;
use oxtensor_runtime::kernels::{KernelCtx, eval, reduce_of_elemwise};
use proptest::prelude::*;

use crate::strided_support;
use strided_support::{Layout, Rng, layout_for};

const REDUCE_OPS: [ReduceOp; 6] = ReduceOp::ALL;

const DTYPES: [DType; 5] = [DType::F64, DType::F32, DType::I64, DType::I32, DType::Bool];

// ---------------------------------------------------------------------------------------------
// A producer applied to inputs, and the two ways of reducing it.

/// An elementwise producer node: its op, the reduced output, its inputs and static types.
struct Case {
    producer: Op,
    output: usize,
    args: Vec<Tensor>,
    input_types: Vec<TensorType>,
    output_types: Vec<TensorType>,
}

impl Case {
    /// The node applying `producer` to `args` with the given static input types, its output
    /// types inferred by the graph (`None` if the graph rejects it).
    fn new(producer: Op, output: usize, args: Vec<Tensor>, types: Vec<TensorType>) -> Option<Case> {
        let vars: Vec<Var> = types.iter().map(|t| Var::input(None, t.clone())).collect();
        let output_types = infer_types(&producer, &vars).ok()?.into_vec();
        Some(Case {
            producer,
            output,
            args,
            input_types: types,
            output_types,
        })
    }

    fn ctx(&self) -> KernelCtx<'_> {
        KernelCtx {
            input_types: &self.input_types,
            output_types: &self.output_types,
        }
    }

    fn refs(&self) -> Vec<&Tensor> {
        self.args.iter().collect()
    }

    /// The fused kernel.
    fn one_pass(&self, op: ReduceOp, axes: &[usize]) -> Result<Tensor, KernelError> {
        let refs = self.refs();
        reduce_of_elemwise(&self.producer, self.output, op, axes, &refs, &self.ctx())
    }

    /// The producer's kernel, then the `Reduce` kernel, as the interpreter runs them unfused.
    fn two_pass(&self, op: ReduceOp, axes: &[usize]) -> Result<Tensor, KernelError> {
        let mut outs = eval(&self.producer, &self.refs(), &self.ctx())?;
        let x = outs.swap_remove(self.output);
        let ndim = x.ndim();
        let ctx = KernelCtx {
            input_types: &[TensorType::of_rank(x.dtype(), ndim)],
            output_types: &[TensorType::of_rank(
                op.output_dtype(x.dtype()),
                ndim.saturating_sub(axes.len()),
            )],
        };
        let reduce = Op::Reduce {
            op,
            axes: Axes::from_slice(axes),
        };
        Ok(eval(&reduce, &[&x], &ctx)?.swap_remove(0))
    }

    /// Asserts that both ways give the same bits, or the same error.
    #[track_caller]
    fn check(&self, op: ReduceOp, axes: &[usize]) {
        let what = || {
            let inputs: Vec<String> = self
                .args
                .iter()
                .zip(&self.input_types)
                .map(|(t, ty)| format!("{t:?} strides {:?} type {ty:?}", t.strides()))
                .collect();
            format!(
                "{op:?} over {axes:?} of output {} of {} on {inputs:#?}",
                self.output, self.producer
            )
        };
        match (self.one_pass(op, axes), self.two_pass(op, axes)) {
            (Ok(a), Ok(b)) => assert!(
                a.bits_eq(&b),
                "{}:\none pass {a:?}\ntwo passes {b:?}",
                what()
            ),
            (Err(a), Err(b)) => assert_eq!(a, b, "{}", what()),
            (a, b) => panic!("{}:\none pass {a:?}\ntwo passes {b:?}", what()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random inputs and producers.

/// One input: its layout (extent 1 where it stretches), dtype, and which dimensions stretch.
type InputSpec = (Layout, DType, Vec<bool>);

/// Three inputs over a common random shape of rank `0..=max_rank` (extents up to `max_extent`,
/// zero now and then), each stretching some dimensions (static extent 1), in any layout.
fn inputs(max_rank: usize, max_extent: usize) -> impl Strategy<Value = Vec<InputSpec>> {
    (0..=max_rank)
        .prop_flat_map(move |r| {
            prop::collection::vec(prop_oneof![1 => Just(0), 12 => 1..=max_extent], r)
        })
        .prop_flat_map(|shape| {
            let one = (
                prop::collection::vec(prop::bool::weighted(0.25), shape.len()),
                prop::sample::select(DTYPES.to_vec()),
            )
                .prop_flat_map(move |(ones, dtype)| {
                    let own: Vec<usize> = shape
                        .iter()
                        .zip(&ones)
                        .map(|(&e, &one)| if one { 1 } else { e })
                        .collect();
                    layout_for(own, 0.1).prop_map(move |l| (l, dtype, ones.clone()))
                });
            prop::collection::vec(one, 3)
        })
}

/// Small values: floats in [-3, 3) (not exactly summable), integers in -3..=3, random bools.
fn build(l: &Layout, dtype: DType, rng: &mut Rng) -> Tensor {
    dispatch_dtype!(dtype, T => l.build::<T>(|_| {
        if T::DTYPE.is_float() {
            T::from_f64(rng.signed_unit() * 3.0)
        } else {
            T::from_i64((rng.next() % 7) as i64 - 3)
        }
    }))
}

/// The tensors and static types of `specs`, values drawn from `seed`.
fn materialize(specs: &[InputSpec], seed: u64) -> (Vec<Tensor>, Vec<TensorType>) {
    let mut rng = Rng(seed);
    specs
        .iter()
        .map(|(l, dtype, ones)| {
            let statics: Vec<Option<usize>> = ones.iter().map(|&o| o.then_some(1)).collect();
            (
                build(l, *dtype, &mut rng),
                TensorType::new(*dtype, &statics),
            )
        })
        .unzip()
}

/// A random scalar op (a cast to a random dtype now and then).
fn random_op(rng: &mut Rng) -> ScalarOp {
    let all = ScalarOp::ALL_BUT_CAST;
    let k = (rng.next() % (all.len() as u64 + 5)) as usize;
    all.get(k)
        .copied()
        .unwrap_or_else(|| ScalarOp::Cast(DTYPES[k - all.len()]))
}

/// How many inputs `op` takes here (variadic ops: 2 or 3).
fn arity(op: ScalarOp, rng: &mut Rng) -> usize {
    match op.arity() {
        Arity::Fixed(k) => k,
        Arity::Variadic => 2 + (rng.next() % 2) as usize,
    }
}

/// A single elementwise op over the first inputs, one the graph accepts for their dtypes.
fn elemwise_case(args: &[Tensor], types: &[TensorType], rng: &mut Rng) -> Option<Case> {
    (0..40).find_map(|_| {
        let op = random_op(rng);
        let n = arity(op, rng).min(args.len());
        Case::new(Op::Elemwise(op), 0, args[..n].to_vec(), types[..n].to_vec())
    })
}

/// A random Composite over all inputs: a few inner ops on earlier values (inputs, results or
/// a constant), with one or two outputs (the last result, and maybe an earlier value, which
/// may be an input passed through); the reduced output is chosen at random.
fn composite_case(args: &[Tensor], types: &[TensorType], rng: &mut Rng) -> Option<Case> {
    let inner: Vec<Var> = types
        .iter()
        .map(|t| Var::input(None, TensorType::scalar(t.dtype)))
        .collect();
    let mut values = inner.clone();
    let steps = 1 + rng.next() % 4;
    let mut added = 0;
    for _ in 0..40 {
        if added == steps {
            break;
        }
        let op = random_op(rng);
        let picks: Vec<Var> = (0..arity(op, rng))
            .map(|_| {
                if rng.next().is_multiple_of(8) {
                    Var::scalar_constant(2.0, values[0].dtype())
                } else {
                    values[(rng.next() % values.len() as u64) as usize].clone()
                }
            })
            .collect();
        if let Ok(v) = elemwise(op, &picks) {
            values.push(v);
            added += 1;
        }
    }
    let last = values.last()?.clone();
    let mut outputs = vec![last];
    if rng.next().is_multiple_of(2) {
        outputs.push(values[(rng.next() % values.len() as u64) as usize].clone());
    }
    let output = (rng.next() % outputs.len() as u64) as usize;
    let g = FrozenGraph::freeze(&inner, &outputs).ok()?;
    Case::new(Op::Composite(g), output, args.to_vec(), types.to_vec())
}

fn axes_of(mask: u8, ndim: usize) -> Vec<usize> {
    (0..ndim).filter(|d| mask & (1 << d) != 0).collect()
}

// ---------------------------------------------------------------------------------------------
// Property tests.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Small random cases: every path, reduction and producer kind, bit for bit.
    #[test]
    fn matches_two_passes(
        specs in inputs(4, 5),
        composite in any::<bool>(),
        op in prop::sample::select(REDUCE_OPS.to_vec()),
        mask in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let (args, types) = materialize(&specs, seed);
        let mut rng = Rng(seed ^ 0xA5A5);
        let case = if composite {
            composite_case(&args, &types, &mut rng)
        } else {
            elemwise_case(&args, &types, &mut rng)
        };
        if let Some(case) = case {
            case.check(op, &axes_of(mask, specs[0].0.shape.len()));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Views of up to ~10⁴ elements, so the reductions exceed a block and split into trees.
    #[test]
    fn larger_views_match_two_passes(
        specs in inputs(3, 28),
        composite in any::<bool>(),
        op in prop::sample::select(REDUCE_OPS.to_vec()),
        mask in any::<u8>(),
        seed in any::<u64>(),
    ) {
        let (args, types) = materialize(&specs, seed);
        let mut rng = Rng(seed ^ 0x5A5A);
        let case = if composite {
            composite_case(&args, &types, &mut rng)
        } else {
            elemwise_case(&args, &types, &mut rng)
        };
        if let Some(case) = case {
            case.check(op, &axes_of(mask, specs[0].0.shape.len()));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Specific producers at sizes above the parallel threshold.

/// `exp(x - c)·sin(y)` (and `x - c` as a second output), `c` broadcast along the last axis.
fn softmax_like(dtype: DType) -> FrozenGraph {
    let p: Vec<Var> = (0..3)
        .map(|_| Var::input(None, TensorType::scalar(dtype)))
        .collect();
    let diff = &p[0] - &p[1];
    let out = diff.exp() * p[2].sin();
    FrozenGraph::freeze(&p, &[out, diff]).unwrap()
}

/// A Composite case over `x`, `c` (static extent 1 in the last axis) and `y`.
fn big_case(x: Tensor, c: Tensor, y: Tensor, output: usize) -> Case {
    let rank = x.ndim();
    let mut c_static = vec![None; rank];
    c_static[rank - 1] = Some(1);
    let types = vec![
        TensorType::of_rank(x.dtype(), rank),
        TensorType::new(c.dtype(), &c_static),
        TensorType::of_rank(y.dtype(), rank),
    ];
    Case::new(
        Op::Composite(softmax_like(x.dtype())),
        output,
        vec![x, c, y],
        types,
    )
    .unwrap()
}

/// The rows, columns and general paths, sequential and threaded, with long reductions split
/// into trees, in contiguous, transposed and reversed layouts; float64 and float32.
#[test]
fn large_reductions_match_two_passes() {
    let shapes: &[(&[usize], &[&[usize]])] = &[
        (&[70_001], &[&[0], &[]]),
        (&[300, 517], &[&[0], &[1], &[0, 1]]),
        (&[3, 40_000], &[&[0], &[1]]),
        (&[40_000, 3], &[&[0], &[1]]),
        (&[9, 9000], &[&[0]]),
        (&[20, 33, 130], &[&[0, 2], &[1], &[0, 1], &[1, 2], &[0]]),
    ];
    let mut rng = Rng(17);
    for &(shape, axes_list) in shapes {
        let mut c_shape = shape.to_vec();
        *c_shape.last_mut().unwrap() = 1;
        let base = Layout::contiguous(shape);
        let mut t = base.clone();
        t.perm.reverse();
        let mut r = base.clone();
        r.neg = vec![true; shape.len()];
        r.step[0] = 2;
        // Every dtype and output on the contiguous layout; one of each on the others (the
        // layouts exercise the reduction paths, the dtypes and outputs the producers).
        let cases = [
            (base, &[DType::F64, DType::F32][..], &[0, 1][..]),
            (t, &[DType::F32][..], &[1][..]),
            (r, &[DType::F64][..], &[0][..]),
        ];
        for (l, dtypes, outputs) in cases {
            for &dtype in dtypes {
                let x =
                    dispatch_dtype!(dtype, T => l.build::<T>(|_| T::from_f64(rng.signed_unit())));
                let y = dispatch_dtype!(dtype, T => l.build::<T>(|_| T::from_f64(rng.unit())));
                let c = dispatch_dtype!(dtype, T =>
                    Layout::contiguous(&c_shape).build::<T>(|_| T::from_f64(rng.unit())));
                for &output in outputs {
                    let case = big_case(x.clone(), c.clone(), y.clone(), output);
                    for &axes in axes_list {
                        for op in [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Prod] {
                            case.check(op, axes);
                        }
                    }
                }
            }
        }
    }
}

/// Integer and bool producers at parallel sizes: exact sums, wrapping products, any/all.
#[test]
fn large_integer_and_bool_reductions_match_two_passes() {
    let mut rng = Rng(23);
    for (shape, axes) in [
        (&[500, 300][..], &[0][..]),
        (&[500, 300], &[1]),
        (&[70, 40, 30], &[0, 2]),
    ] {
        let x = Layout::transposed(shape).build::<i32>(|_| (rng.next() % 201) as i32 - 100);
        let y = Layout::contiguous(shape).build::<i64>(|_| (rng.next() % 5) as i64 - 2);
        let types = vec![
            TensorType::of_rank(DType::I32, shape.len()),
            TensorType::of_rank(DType::I64, shape.len()),
        ];
        let mul = Case::new(
            Op::Elemwise(ScalarOp::Mul),
            0,
            vec![x.clone(), y.clone()],
            types.clone(),
        )
        .unwrap();
        let lt = Case::new(Op::Elemwise(ScalarOp::Lt), 0, vec![x, y], types).unwrap();
        for op in REDUCE_OPS {
            mul.check(op, axes);
            lt.check(op, axes);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Errors and fallbacks.

fn vector_case(op: ScalarOp, a: Tensor, b: Tensor, statics: [Option<usize>; 2]) -> Case {
    let types = vec![
        TensorType::new(a.dtype(), &statics[..1]),
        TensorType::new(b.dtype(), &statics[1..]),
    ];
    Case::new(Op::Elemwise(op), 0, vec![a, b], types).unwrap()
}

#[test]
fn errors_are_those_of_the_two_passes() {
    let f = |v: &[f64]| Tensor::from_slice(v, &[v.len()]).unwrap();
    // A runtime extent of 1 whose static type does not say 1 does not broadcast.
    let case = vector_case(ScalarOp::Add, f(&[1.0, 2.0]), f(&[3.0]), [None, None]);
    let err = case.one_pass(ReduceOp::Sum, &[0]).unwrap_err();
    assert!(matches!(err, KernelError::Shape(_)), "{err:?}");
    case.check(ReduceOp::Sum, &[0]);
    // … and does where it does.
    let case = vector_case(ScalarOp::Add, f(&[1.0, 2.0]), f(&[3.0]), [None, Some(1)]);
    assert_eq!(
        case.one_pass(ReduceOp::Sum, &[0]).unwrap().item::<f64>(),
        Some(9.0)
    );
    // Axes out of range or unsorted.
    case.check(ReduceOp::Sum, &[1]);
    let m = Tensor::zeros(DType::F64, &[2, 3]).unwrap();
    let case = vector_case(ScalarOp::Mul, m.clone(), m, [None, None]);
    case.check(ReduceOp::Sum, &[1, 0]);
    assert!(case.one_pass(ReduceOp::Sum, &[1, 0]).is_err());
    // Max and min of an empty reduction have no identity; sums do.
    let e = Tensor::zeros(DType::F32, &[0]).unwrap();
    let case = vector_case(ScalarOp::Sub, e.clone(), e, [None, None]);
    let err = case.one_pass(ReduceOp::Max, &[0]).unwrap_err();
    assert_eq!(
        err,
        KernelError::Value(
            "zero-size array to reduction operation maximum which has no identity".into()
        )
    );
    assert_eq!(
        case.one_pass(ReduceOp::Sum, &[0]).unwrap().item::<f32>(),
        Some(0.0)
    );
    // Integers to negative powers, found in some block of a large input.
    let mut exps = vec![2i64; 100_000];
    exps[77_777] = -1;
    let base = Tensor::full(3i64, &[100_000]).unwrap();
    let exps = Tensor::from_slice(&exps, &[100_000]).unwrap();
    let case = vector_case(ScalarOp::Pow, base, exps, [None, None]);
    let err = case.one_pass(ReduceOp::Sum, &[0]).unwrap_err();
    assert_eq!(
        err,
        KernelError::Value("Integers to negative integer powers are not allowed.".into())
    );
}

/// An output that is not reduced still raises its data errors, as the two passes (which
/// compute every output) do; without such a node, it is not computed at all.
#[test]
fn unused_outputs_raise_their_errors() {
    let p: Vec<Var> = (0..2)
        .map(|_| Var::input(None, TensorType::scalar(DType::I64)))
        .collect();
    let pow = elemwise(ScalarOp::Pow, &p).unwrap();
    let sum = &p[0] + &p[1];
    let g = FrozenGraph::freeze(&p, &[sum, pow]).unwrap();
    let x = Tensor::from_slice(&[1i64, 2, 3], &[3]).unwrap();
    let y = Tensor::from_slice(&[1i64, -1, 0], &[3]).unwrap();
    let types = vec![TensorType::of_rank(DType::I64, 1); 2];
    let case = Case::new(Op::Composite(g), 0, vec![x.clone(), y], types.clone()).unwrap();
    assert!(case.one_pass(ReduceOp::Sum, &[0]).is_err());
    case.check(ReduceOp::Sum, &[0]);
    let case = Case::new(Op::Composite(softmax_like(DType::F64)), 1, vec![], vec![]);
    assert!(case.is_none(), "a Composite needs its inputs");
    let z = Tensor::from_slice(&[1i64, 0, 2], &[3]).unwrap();
    let g =
        FrozenGraph::freeze(&p, &[&p[0] + &p[1], elemwise(ScalarOp::Pow, &p).unwrap()]).unwrap();
    let case = Case::new(Op::Composite(g), 0, vec![x, z], types).unwrap();
    assert_eq!(
        case.one_pass(ReduceOp::Sum, &[0]).unwrap().item::<i64>(),
        Some(9)
    );
}

/// Ops that are not elementwise, and outputs that do not exist, go through the two passes.
#[test]
fn other_producers_fall_back() {
    let a = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let types = vec![TensorType::of_rank(DType::F64, 2); 2];
    let case = Case::new(Op::MatMul, 0, vec![a.clone(), a.clone()], types.clone()).unwrap();
    case.check(ReduceOp::Sum, &[0]);
    assert_eq!(
        case.one_pass(ReduceOp::Sum, &[0, 1]).unwrap().item::<f64>(),
        Some(54.0)
    );
    let case = Case::new(Op::Elemwise(ScalarOp::Add), 0, vec![a.clone(), a], types).unwrap();
    let refs = case.refs();
    let err = reduce_of_elemwise(&case.producer, 1, ReduceOp::Sum, &[0], &refs, &case.ctx());
    assert!(matches!(err, Err(KernelError::Value(_))), "{err:?}");
}
