//! Elementwise kernels writing into a donated input buffer (`kernels::eval_in_place`, used by
//! the interpreter for the memory plan's `Call::donor`), against `kernels::eval`.
//!
//! * property tests: every `ScalarOp` (and a cast to each dtype) on random shapes (empty and
//!   zero-dimensional ones included), dtypes (float64, float32, int64, int32, bool, mixed),
//!   with the donor at any position at the full output shape, the other inputs broadcasting
//!   through static-1 dimensions or transposed, and the donor repeated at other positions.
//!   The result must equal `eval`'s bit for bit (or fail with the same error, leaving the
//!   donor untouched), and share the donor's storage exactly when the donor can hold it;
//! * large inputs that take the parallel path, with loops computing in a type other than the
//!   donor's (a float64 condition read as bool, float32 math computed in float64);
//! * cases the kernel must refuse: a broadcast, transposed or missing donor;
//! * a two-output `Composite` (`kernels::composite_in_place`) with each input as the donor,
//!   next to broadcast, transposed and repeated inputs, small and parallel-sized;
//! * the interpreter running a graph whose nodes donate their inputs.
//!
//! The tests with exact arithmetic also run under Miri, which checks that no reference to the
//! donor coexists with the output written over it (rayon's dependencies need Tree Borrows;
//! Miri's math functions are deliberately imprecise, hence no `sin` there):
//! `MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-permissive-provenance -Zmiri-ignore-leaks
//! -Zmiri-num-cpus=2 -Zmiri-disable-isolation" cargo +nightly miri test -p oxtensor-runtime
//! --test inplace -- a_repeated_donor a_composite_donor unsuitable other_ops` (about 7 minutes).

use oxtensor_data::{DType, Element, Tensor, dispatch_dtype};
use oxtensor_graph::{
    Arity, FunctionGraph, Op, ReduceOp, ScalarOp, TensorType, Var, build, infer_types,
};
use oxtensor_runtime::kernels::{KernelCtx, eval, eval_in_place};
use oxtensor_runtime::{Backend, Interpreter};
use proptest::prelude::*;
use std::sync::Arc;

const DTYPES: [DType; 5] = [DType::F64, DType::F32, DType::I64, DType::I32, DType::Bool];

/// Every scalar op, with a cast to each tested dtype.
fn all_ops() -> Vec<ScalarOp> {
    let mut ops = ScalarOp::ALL_BUT_CAST.to_vec();
    ops.extend(DTYPES.map(ScalarOp::Cast));
    ops
}

/// An element of dtype `T` from a seed: a special value, a small number, or an extreme.
fn value<T: Element>(seed: u64) -> T {
    let pick = (seed >> 32) as usize;
    match T::DTYPE {
        DType::F32 | DType::F64 => {
            const SPECIAL: [f64; 12] = [
                0.0,
                -0.0,
                1.0,
                -1.0,
                0.5,
                2.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e-3,
                1e30,
                -7.25,
            ];
            if seed.is_multiple_of(3) {
                T::cast_from(SPECIAL[pick % SPECIAL.len()])
            } else {
                T::cast_from((seed % 4001) as f64 / 100.0 - 20.0)
            }
        }
        DType::Bool => T::cast_from(seed % 2 == 1),
        _ => {
            const EXTREME: [i64; 4] = [i64::MIN, i64::MAX, i32::MIN as i64, i32::MAX as i64];
            if seed.is_multiple_of(17) {
                T::cast_from(EXTREME[pick % EXTREME.len()])
            } else {
                T::cast_from((seed % 21) as i64 - 10)
            }
        }
    }
}

/// A fresh contiguous tensor of `shape` whose elements come from `seeds` (cycled).
fn filled(dtype: DType, shape: &[usize], seeds: &[u64]) -> Tensor {
    let n: usize = shape.iter().product();
    dispatch_dtype!(dtype, T => {
        let data: Vec<T> = (0..n)
            .map(|i| value::<T>(seeds[i % seeds.len()].wrapping_mul(i as u64 + 1)))
            .collect();
        Tensor::from_slice(&data, shape).expect("tensor")
    })
}

/// `filled`, but stored transposed: a non-contiguous view of `shape`.
fn transposed(dtype: DType, shape: &[usize], seeds: &[u64]) -> Tensor {
    let rev: Vec<usize> = shape.iter().rev().copied().collect();
    let axes: Vec<usize> = (0..shape.len()).rev().collect();
    filled(dtype, &rev, seeds).permute(&axes)
}

/// The static types of an elementwise node on these inputs, or `None` if the graph rejects it.
fn node_types(op: ScalarOp, types: &[TensorType]) -> Option<TensorType> {
    let vars: Vec<Var> = types
        .iter()
        .enumerate()
        .map(|(i, t)| Var::input(Some(&format!("x{i}")), t.clone()))
        .collect();
    infer_types(&Op::Elemwise(op), &vars)
        .ok()
        .map(|out| out[0].clone())
}

/// Runs `op` with `eval` and then `eval_in_place` (donor `k`, which the caller holds as the
/// only handle to its storage) and checks that they agree, that the result shares the donor's
/// storage exactly when `in_place` says, and that a refused donor is left untouched.
fn check(
    op: &Op,
    inputs: &[&Tensor],
    types: &[TensorType],
    out: &TensorType,
    k: usize,
    in_place: bool,
) -> Result<(), String> {
    let ctx = KernelCtx {
        input_types: types,
        output_types: std::slice::from_ref(out),
    };
    let expected = eval(op, inputs, &ctx);
    let donor = inputs.get(k).copied();
    let before = donor.map(Tensor::to_bytes);
    // SAFETY: the donor's only handles are the caller's tensor and the references in `inputs`,
    // and no slice into its elements is alive during the call.
    let actual = unsafe { eval_in_place(op, inputs, &ctx, k) };
    let unchanged = || donor.map(Tensor::to_bytes) == before;
    match (expected, actual) {
        (Err(e), Err(a)) if e.to_string() == a.to_string() => {
            if unchanged() {
                Ok(())
            } else {
                Err(format!("{op}: failed ({a}) but changed the donor"))
            }
        }
        (Ok(e), Ok(a)) => {
            if e.len() != a.len() || !e.iter().zip(&a).all(|(e, a)| e.bits_eq(a)) {
                return Err(format!("{op}: in place {a:?}, expected {e:?}"));
            }
            let shares = donor.is_some_and(|d| Arc::ptr_eq(a[0].storage(), d.storage()));
            if in_place {
                let d = donor.ok_or("no donor")?;
                if !shares || a[0].data_ptr() != d.data_ptr() {
                    return Err(format!(
                        "{op}: the result does not share the donor's buffer"
                    ));
                }
            } else if shares || !unchanged() {
                return Err(format!("{op}: wrote into a donor it should have refused"));
            }
            Ok(())
        }
        (e, a) => Err(format!("{op}: eval gave {e:?}, eval_in_place {a:?}")),
    }
}

/// One random elementwise call with a donor.
#[derive(Debug, Clone)]
struct Case {
    op: ScalarOp,
    /// The output (and donor) shape.
    shape: Vec<usize>,
    /// Inputs of a variadic op.
    n_variadic: usize,
    /// The donor's position (modulo the arity).
    donor: usize,
    /// Per input: dtype index into `DTYPES` (≥ 5: the donor's dtype), layout (0 contiguous,
    /// 1 broadcast through the dimensions flagged in `dims`, 2 transposed, 3 the donor
    /// itself), dimensions to broadcast, seeds.
    slots: Vec<(usize, u8, Vec<bool>, Vec<u64>)>,
    /// The donor's dtype.
    dtype: usize,
    donor_seeds: Vec<u64>,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    let extent = prop_oneof![1 => Just(0usize), 12 => 1usize..=6];
    (
        prop::sample::select(all_ops()),
        prop::collection::vec(extent, 0..=3),
        2usize..=4,
        0usize..4,
        0usize..DTYPES.len(),
        prop::collection::vec(any::<u64>(), 1..32),
    )
        .prop_flat_map(|(op, shape, n_variadic, donor, dtype, donor_seeds)| {
            let rank = shape.len();
            let slot = (
                prop_oneof![3 => Just(9usize), 1 => 0usize..DTYPES.len()],
                0u8..4,
                prop::collection::vec(any::<bool>(), rank),
                prop::collection::vec(any::<u64>(), 1..16),
            );
            prop::collection::vec(slot, 4).prop_map(move |slots| Case {
                op,
                shape: shape.clone(),
                n_variadic,
                donor,
                slots,
                dtype,
                donor_seeds: donor_seeds.clone(),
            })
        })
}

fn check_case(c: &Case) -> Result<(), String> {
    let n = match c.op.arity() {
        Arity::Fixed(n) => n,
        Arity::Variadic => c.n_variadic,
    };
    let k = c.donor % n;
    let dtype = DTYPES[c.dtype];
    let donor = filled(dtype, &c.shape, &c.donor_seeds);
    let full = TensorType::new(dtype, &vec![None; c.shape.len()]);
    let mut owned: Vec<Option<Tensor>> = Vec::new();
    let mut types = Vec::new();
    for (i, (dt, layout, dims, seeds)) in c.slots.iter().take(n).enumerate() {
        if i == k || *layout == 3 {
            owned.push(None);
            types.push(full.clone());
            continue;
        }
        let dt = DTYPES.get(*dt).copied().unwrap_or(dtype);
        let (t, ty) = match layout {
            1 => {
                let shape: Vec<usize> = c
                    .shape
                    .iter()
                    .zip(dims)
                    .map(|(&e, &b)| if b { 1 } else { e })
                    .collect();
                let stat: Vec<Option<usize>> = dims.iter().map(|&b| b.then_some(1)).collect();
                (filled(dt, &shape, seeds), TensorType::new(dt, &stat))
            }
            2 => (
                transposed(dt, &c.shape, seeds),
                TensorType::new(dt, &vec![None; c.shape.len()]),
            ),
            _ => (
                filled(dt, &c.shape, seeds),
                TensorType::new(dt, &vec![None; c.shape.len()]),
            ),
        };
        owned.push(Some(t));
        types.push(ty);
    }
    let inputs: Vec<&Tensor> = owned.iter().map(|t| t.as_ref().unwrap_or(&donor)).collect();
    let Some(out) = node_types(c.op, &types) else {
        return Ok(());
    };
    let numel: usize = c.shape.iter().product();
    // Where a loop computes the result, it goes into the donor when the dtypes match; an empty
    // output, and `isnan`/`isinf` of a non-float (all false), are fresh zeros.
    let in_place =
        out.dtype == dtype && numel > 0 && !matches!(c.op, ScalarOp::IsNan | ScalarOp::IsInf);
    check(&Op::Elemwise(c.op), &inputs, &types, &out, k, in_place)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Every op, dtype, donor position and broadcasting pattern agrees with `eval`.
    #[test]
    fn in_place_matches_eval(case in case_strategy()) {
        if let Err(e) = check_case(&case) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// Types with no static extents for `inputs`, and the node's output type.
fn plain_types(op: ScalarOp, inputs: &[&Tensor]) -> (Vec<TensorType>, TensorType) {
    let types: Vec<TensorType> = inputs
        .iter()
        .map(|t| TensorType::new(t.dtype(), &vec![None; t.ndim()]))
        .collect();
    let out = node_types(op, &types).expect("the graph accepts these inputs");
    (types, out)
}

/// Inputs larger than the parallel threshold, spanning many blocks and threads.
#[test]
fn large_inputs_run_in_place_in_parallel() {
    let shape = [3, 100_003];
    let seeds: Vec<u64> = (1..40u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    let cases: Vec<(ScalarOp, Vec<DType>, usize)> = vec![
        (ScalarOp::Sin, vec![DType::F64], 0),
        // float32 math computed through float64.
        (ScalarOp::Exp, vec![DType::F32], 0),
        (ScalarOp::Sub, vec![DType::I64, DType::I64], 1),
        // A float64 condition read as bool, donated to the float64 result.
        (
            ScalarOp::Switch,
            vec![DType::F64, DType::F64, DType::F64],
            0,
        ),
        (
            ScalarOp::Switch,
            vec![DType::Bool, DType::I32, DType::I32],
            2,
        ),
        // A comparison in int64 of a bool donor and an int64 input.
        (ScalarOp::Lt, vec![DType::Bool, DType::I64], 0),
        (ScalarOp::Add, vec![DType::F32; 4], 2),
        (ScalarOp::Clip, vec![DType::F64; 3], 1),
    ];
    for (op, dtypes, k) in cases {
        let owned: Vec<Tensor> = dtypes
            .iter()
            .enumerate()
            .map(|(i, &d)| filled(d, &shape, &seeds[i..]))
            .collect();
        let inputs: Vec<&Tensor> = owned.iter().collect();
        let (types, out) = plain_types(op, &inputs);
        let in_place = out.dtype == dtypes[k];
        if let Err(e) = check(&Op::Elemwise(op), &inputs, &types, &out, k, in_place) {
            panic!("{e}");
        }
    }
}

/// `x * x`, `x + y + x` and `pow(x, x)` with `x` donated: every position holding the donor
/// reads its values before the block is overwritten.
#[test]
fn a_repeated_donor_is_read_before_it_is_written() {
    // Miri checks the small sizes; the largest one runs in parallel.
    let lens: &[usize] = if cfg!(miri) {
        &[1, 5, 1025, 70_000]
    } else {
        &[1, 5, 1000, 1025, 200_000]
    };
    for &len in lens {
        let x = filled(DType::F64, &[len], &[3, 5, 7]);
        let y = filled(DType::F64, &[len], &[11, 13]);
        let (types, out) = plain_types(ScalarOp::Mul, &[&x, &x]);
        check(
            &Op::Elemwise(ScalarOp::Mul),
            &[&x, &x],
            &types,
            &out,
            0,
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (types, out) = plain_types(ScalarOp::Add, &[&x, &y, &x]);
        check(
            &Op::Elemwise(ScalarOp::Add),
            &[&x, &y, &x],
            &types,
            &out,
            2,
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let i = filled(DType::I32, &[len], &[2, 4, 9]);
        let (types, out) = plain_types(ScalarOp::Pow, &[&i, &i]);
        check(
            &Op::Elemwise(ScalarOp::Pow),
            &[&i, &i],
            &types,
            &out,
            1,
            true,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Donors the kernel must not write into: the donor is broadcast or transposed, of another
/// dtype than the output, or not an input at all. (A donor whose storage has other handles is
/// the memory plan's to refuse: see `tests/memory.rs` of the `oxtensor` crate.)
#[test]
fn unsuitable_donors_get_a_fresh_output() {
    let x = filled(DType::F64, &[4, 6], &[1, 2, 3]);
    let (types, out) = plain_types(ScalarOp::Neg, &[&x]);
    check(&Op::Elemwise(ScalarOp::Neg), &[&x], &types, &out, 1, false)
        .unwrap_or_else(|e| panic!("missing: {e}"));

    let t = transposed(DType::F64, &[4, 6], &[5]);
    check(&Op::Elemwise(ScalarOp::Neg), &[&t], &types, &out, 0, false)
        .unwrap_or_else(|e| panic!("transposed: {e}"));

    let row = filled(DType::F64, &[1, 6], &[7]);
    let types = [
        TensorType::new(DType::F64, &[None, None]),
        TensorType::new(DType::F64, &[Some(1), None]),
    ];
    let out = node_types(ScalarOp::Sub, &types).expect("types");
    check(
        &Op::Elemwise(ScalarOp::Sub),
        &[&x, &row],
        &types,
        &out,
        1,
        false,
    )
    .unwrap_or_else(|e| panic!("broadcast: {e}"));
    check(
        &Op::Elemwise(ScalarOp::Sub),
        &[&x, &row],
        &types,
        &out,
        0,
        true,
    )
    .unwrap_or_else(|e| panic!("full: {e}"));

    let i = filled(DType::I32, &[4, 6], &[9]);
    let cast = ScalarOp::Cast(DType::F64);
    let (types, out) = plain_types(cast, &[&i]);
    check(&Op::Elemwise(cast), &[&i], &types, &out, 0, false)
        .unwrap_or_else(|e| panic!("dtype: {e}"));
}

/// The Composite `(a·sin(b) + a, a − b)` over `x` and `y` with static types `types`: its op and
/// output 0's type.
fn composite_node(types: &[TensorType]) -> (Op, TensorType) {
    let s = [
        Var::input(Some("a"), TensorType::scalar(DType::F64)),
        Var::input(Some("b"), TensorType::scalar(DType::F64)),
    ];
    let first = build::add(
        &build::mul(&s[0], &build::sin(&s[1]).expect("sin")).expect("mul"),
        &s[0],
    )
    .expect("add");
    let second = build::sub(&s[0], &s[1]).expect("sub");
    let outer: Vec<Var> = types
        .iter()
        .enumerate()
        .map(|(i, t)| Var::input(Some(&format!("x{i}")), t.clone()))
        .collect();
    let outs = build::composite(&s, &[first, second], &outer).expect("composite");
    let node = outs[0].node().clone();
    let op = node.op().expect("an apply node").clone();
    (op, node.types()[0].clone())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A two-output Composite writes output 0 into the donor, whichever input it is, next to a
    /// broadcast, transposed or repeated other input, on small and parallel-sized outputs, and
    /// agrees with `eval` bit for bit.
    #[test]
    fn a_composite_runs_in_place(
        rows in 1usize..80,
        cols in prop::sample::select(vec![1usize, 3, 64, 1000]),
        other in 0usize..4,
        k in 0usize..2,
        seed in any::<u64>(),
    ) {
        let x = filled(DType::F64, &[rows, cols], &[seed, seed ^ 7]);
        let free = TensorType::new(DType::F64, &[None, None]);
        let (y, y_type) = match other {
            0 => (filled(DType::F64, &[rows, cols], &[seed >> 3]), free.clone()),
            1 => (
                filled(DType::F64, &[1, cols], &[seed >> 5]),
                TensorType::new(DType::F64, &[Some(1), None]),
            ),
            2 => (transposed(DType::F64, &[rows, cols], &[seed >> 7]), free.clone()),
            _ => (x.clone(), free.clone()),
        };
        let types = [free, y_type];
        let (op, out) = composite_node(&types);
        // A broadcast or transposed donor cannot hold the output (unless it has the output's
        // shape and layout anyway); a repeated one can.
        let in_place = k == 0 || (y.shape() == x.shape() && y.is_contiguous());
        let inputs = [&x, &y];
        if let Err(e) = check(&op, &inputs, &types, &out, k, in_place) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// A Composite with exact arithmetic, `(a·b + a, a − b)`, writing into its donor with the donor
/// repeated as both inputs, on one block and on enough blocks to run in parallel (the Miri run
/// in the module documentation checks that no reference to the donor meets a write).
#[test]
fn a_composite_donor_is_read_before_it_is_written() {
    let s = [
        Var::input(Some("a"), TensorType::scalar(DType::F64)),
        Var::input(Some("b"), TensorType::scalar(DType::F64)),
    ];
    let first = build::add(&build::mul(&s[0], &s[1]).expect("mul"), &s[0]).expect("add");
    let second = build::sub(&s[0], &s[1]).expect("sub");
    let free = TensorType::new(DType::F64, &[None, None]);
    let types = [free.clone(), free.clone()];
    let outer = [
        Var::input(Some("x"), free.clone()),
        Var::input(Some("y"), free),
    ];
    let node = build::composite(&s, &[first, second], &outer).expect("composite")[0]
        .node()
        .clone();
    let (op, out) = (node.op().expect("apply").clone(), node.types()[0].clone());
    let rows = if cfg!(miri) { 2 } else { 70 };
    for shape in [[3, 5], [rows, 1000]] {
        let x = filled(DType::F64, &shape, &[3, 5, 11]);
        let y = filled(DType::F64, &shape, &[2, 9]);
        check(&op, &[&x, &x], &types, &out, 1, true).unwrap_or_else(|e| panic!("{e}"));
        check(&op, &[&x, &y], &types, &out, 0, true).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Ops other than `Elemwise` and `Composite` ignore the donor and return what `eval` returns.
#[test]
fn other_ops_ignore_the_donor() {
    let x = filled(DType::F64, &[4, 6], &[1, 2, 3]);
    let types = [TensorType::new(DType::F64, &[None, None])];
    let reduce = Op::Reduce {
        op: ReduceOp::Sum,
        axes: [1].into_iter().collect(),
    };
    let vars = [Var::input(Some("x"), types[0].clone())];
    let out = infer_types(&reduce, &vars).expect("types")[0].clone();
    check(&reduce, &[&x], &types, &out, 0, false).unwrap_or_else(|e| panic!("{e}"));
}

/// The interpreter runs a chain whose nodes donate their inputs, repeated arguments included,
/// and gets the values of a plain loop.
#[test]
fn the_interpreter_runs_a_donating_chain() {
    let n = 100_000;
    let ty = TensorType::new(DType::F64, &[None]);
    let x = Var::input(Some("x"), ty);
    let c = Var::constant(Tensor::scalar(1.5f64).reshape(&[1]).expect("reshape"));
    let apply = |op: ScalarOp, inputs: &[Var]| Var::apply1(Op::Elemwise(op), inputs).expect("node");
    let s = apply(ScalarOp::Sin, std::slice::from_ref(&x));
    let sq = apply(ScalarOp::Mul, &[s.clone(), s]);
    let scaled = apply(ScalarOp::Mul, &[sq.clone(), c]);
    let y = apply(ScalarOp::Add, &[scaled.clone(), scaled]);
    let graph = FunctionGraph::new(vec![x], vec![y]).expect("graph");
    let exe = Interpreter.compile(&graph).expect("compile");
    let xs: Vec<f64> = (0..n).map(|i| i as f64 * 1e-4).collect();
    let input = Tensor::from_slice(&xs, &[n]).expect("tensor");
    let got = exe.run(vec![input.clone()]).expect("run");
    let want: Vec<f64> = xs
        .iter()
        .map(|&v| {
            let s = v.sin();
            let q = s * s * 1.5;
            q + q
        })
        .collect();
    assert_eq!(got[0].to_vec::<f64>().expect("f64"), want);
    assert_eq!(input.to_vec::<f64>().expect("f64"), xs, "the input changed");
}
