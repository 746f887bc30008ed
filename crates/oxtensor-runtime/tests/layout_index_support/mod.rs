//! Helpers shared by the layout and index kernel tests: calling kernels through
//! `kernels::eval`, random strided tensors (permuted, reversed, stepped, broadcast, offset),
//! and naive element-by-element references.

#![allow(dead_code)] // each test binary uses a different subset

use oxtensor_data::{DType, Tensor, dispatch_dtype};
use oxtensor_graph::{Op, TensorType, Var, infer_types};
use oxtensor_runtime::KernelError;
use oxtensor_runtime::kernels::{KernelCtx, eval};
use proptest::prelude::*;

/// Runs `op` with input types of the values' dtypes and ranks (no static extents), and output
/// types inferred from them; when inference rejects the inputs (tests of runtime checks the
/// graph would have caught), the output type falls back to the first input's dtype.
pub fn run(op: &Op, inputs: &[&Tensor]) -> Result<Vec<Tensor>, KernelError> {
    let types: Vec<TensorType> = inputs
        .iter()
        .map(|t| TensorType::of_rank(t.dtype(), t.ndim()))
        .collect();
    run_typed(op, inputs, &types)
}

/// Runs `op` with the given input types (output types inferred, with `run`'s fallback).
pub fn run_typed(
    op: &Op,
    inputs: &[&Tensor],
    types: &[TensorType],
) -> Result<Vec<Tensor>, KernelError> {
    let vars: Vec<Var> = types.iter().map(|t| Var::input(None, t.clone())).collect();
    let outputs: Vec<TensorType> = match infer_types(op, &vars) {
        Ok(t) => t.into_vec(),
        Err(_) => {
            let dtype = inputs.first().map_or(DType::F64, |t| t.dtype());
            vec![TensorType::scalar(dtype); op.n_outputs()]
        }
    };
    eval(
        op,
        inputs,
        &KernelCtx {
            input_types: types,
            output_types: &outputs,
        },
    )
}

/// Runs a single-output op.
pub fn run1(op: &Op, inputs: &[&Tensor]) -> Result<Tensor, KernelError> {
    run(op, inputs).map(|mut v| v.remove(0))
}

/// An integer scalar of `dtype` (falling back to `int64` for negative values in unsigned types).
pub fn int(v: i64, dtype: DType) -> Tensor {
    if dtype.is_unsigned_int() && v < 0 {
        Tensor::scalar(v)
    } else {
        Tensor::scalar(v).cast(dtype)
    }
}

/// A contiguous `int64` tensor.
pub fn ints(values: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(values, shape).unwrap()
}

/// A contiguous `float64` tensor.
pub fn floats(values: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(values, shape).unwrap()
}

/// Asserts the error variant and message.
#[track_caller]
pub fn assert_err<T: std::fmt::Debug>(
    r: Result<T, KernelError>,
    variant: fn(String) -> KernelError,
    message: &str,
) {
    match r {
        Err(e) => assert_eq!(e, variant(message.to_string())),
        Ok(v) => panic!("expected error {message:?}, got {v:?}"),
    }
}

/// Asserts the error variant and that the message contains `part`.
#[track_caller]
pub fn assert_err_contains<T: std::fmt::Debug>(
    r: Result<T, KernelError>,
    variant: fn(String) -> KernelError,
    part: &str,
) {
    match r {
        Err(e) => {
            assert_eq!(
                std::mem::discriminant(&e),
                std::mem::discriminant(&variant(String::new())),
                "wrong variant: {e:?}"
            );
            assert!(
                e.to_string().contains(part),
                "{e} does not contain {part:?}"
            );
        }
        Ok(v) => panic!("expected an error containing {part:?}, got {v:?}"),
    }
}

/// Every multi-index of `shape`, in C order.
pub fn all_indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for &n in shape {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..n).map(move |i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    out
}

/// The C-order flat position of a multi-index.
pub fn ravel(index: &[usize], shape: &[usize]) -> usize {
    index.iter().zip(shape).fold(0, |acc, (&i, &n)| acc * n + i)
}

/// The reference gather: a contiguous tensor of `shape` whose element at `i` is `x[at(i)]`,
/// read element by element with `Tensor::get`.
pub fn gather(x: &Tensor, shape: &[usize], at: impl Fn(&[usize]) -> Vec<usize>) -> Tensor {
    dispatch_dtype!(x.dtype(), T => {
        let values: Vec<T> = all_indices(shape).iter().map(|i| x.get::<T>(&at(i))).collect();
        Tensor::from_slice(&values, shape).unwrap()
    })
}

/// The index into a right-aligned broadcast operand of `shape` for a position of the target.
pub fn broadcast_index(target_index: &[usize], shape: &[usize]) -> Vec<usize> {
    let lead = target_index.len() - shape.len();
    shape
        .iter()
        .enumerate()
        .map(|(d, &n)| if n == 1 { 0 } else { target_index[lead + d] })
        .collect()
}

/// Asserts bitwise equality with a readable failure.
#[track_caller]
pub fn assert_same(got: &Tensor, want: &Tensor) {
    assert!(got.bits_eq(want), "got {got:?}, want {want:?}");
}

/// NumPy's `+` per dtype, for reference updates: integers wrap, floats add, bools or.
pub trait NpAdd: Copy {
    /// `a + b`.
    fn np_add(self, other: Self) -> Self;
}
macro_rules! np_add_wrapping {
    ($($t:ty),*) => {$(impl NpAdd for $t { fn np_add(self, o: Self) -> Self { self.wrapping_add(o) } })*};
}
np_add_wrapping!(i8, i16, i32, i64, u8, u16, u32, u64);
impl NpAdd for f32 {
    fn np_add(self, o: Self) -> Self {
        self + o
    }
}
impl NpAdd for f64 {
    fn np_add(self, o: Self) -> Self {
        self + o
    }
}
impl NpAdd for bool {
    fn np_add(self, o: Self) -> Self {
        self | o
    }
}
impl<T: std::ops::Add<Output = T> + Copy> NpAdd for oxtensor_data::Complex<T> {
    fn np_add(self, o: Self) -> Self {
        oxtensor_data::Complex::new(self.re + o.re, self.im + o.im)
    }
}

/// Any dtype.
pub fn arb_dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(DType::REAL.to_vec())
}

/// Any integer dtype.
pub fn arb_int_dtype() -> impl Strategy<Value = DType> {
    prop::sample::select(vec![
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
    ])
}

/// A shape of rank in `ranks` with extents up to `max_extent`.
pub fn arb_shape(
    ranks: std::ops::RangeInclusive<usize>,
    max_extent: usize,
) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..=max_extent, ranks)
}

/// A tensor of `shape` and `dtype` over a larger storage: dimensions laid out in a random
/// order, with random steps, random reversals (negative strides), optional stride-0
/// (broadcast) dimensions when `broadcast`, and padding before and after.
pub fn arb_strided(shape: Vec<usize>, dtype: DType, broadcast: bool) -> BoxedStrategy<Tensor> {
    let nd = shape.len();
    let perm = Just((0..nd).collect::<Vec<usize>>()).prop_shuffle();
    let steps = prop::collection::vec(1isize..=2, nd);
    let flips = prop::collection::vec(any::<bool>(), nd);
    let zero_p = if broadcast { 0.15 } else { 0.0 };
    let zeros = prop::collection::vec(prop::bool::weighted(zero_p), nd);
    (perm, steps, flips, zeros, 0usize..3, any::<u64>())
        .prop_map(move |(perm, steps, flips, zeros, pad, seed)| {
            strided(&shape, dtype, &perm, &steps, &flips, &zeros, pad, seed)
        })
        .boxed()
}

/// Builds the tensor described in [`arb_strided`].
#[allow(clippy::too_many_arguments)]
pub fn strided(
    shape: &[usize],
    dtype: DType,
    perm: &[usize],
    steps: &[isize],
    flips: &[bool],
    zeros: &[bool],
    pad: usize,
    seed: u64,
) -> Tensor {
    let nd = shape.len();
    let mut mag = vec![0isize; nd];
    let mut acc = 1isize;
    for &d in perm.iter().rev() {
        if zeros[d] {
            continue;
        }
        mag[d] = acc * steps[d];
        acc = mag[d] * shape[d].max(1) as isize;
    }
    let (mut neg, mut pos) = (0isize, 0isize);
    for d in 0..nd {
        let span = (shape[d].max(1) as isize - 1) * mag[d];
        if flips[d] { neg += span } else { pos += span }
    }
    let strides: Vec<isize> = (0..nd)
        .map(|d| if flips[d] { -mag[d] } else { mag[d] })
        .collect();
    let offset = pad as isize + neg;
    let len = (offset + pos + 1) as usize + pad;
    let mut state = seed | 1;
    let values: Vec<f64> = (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % 81) as f64 * 0.25 - 10.0
        })
        .collect();
    let base = Tensor::from_slice(&values, &[len]).unwrap().cast(dtype);
    base.view(shape, &strides, offset as usize).unwrap()
}

/// A random strided tensor of random dtype and shape (ranks and extents as given).
pub fn arb_tensor(
    ranks: std::ops::RangeInclusive<usize>,
    max_extent: usize,
    broadcast: bool,
) -> BoxedStrategy<Tensor> {
    (arb_dtype(), arb_shape(ranks, max_extent))
        .prop_flat_map(move |(dt, shape)| arb_strided(shape, dt, broadcast))
        .boxed()
}

/// A shape that broadcasts to `target`: a suffix of it with some extents replaced by 1.
pub fn arb_fitting_shape(target: Vec<usize>) -> impl Strategy<Value = Vec<usize>> {
    let n = target.len();
    (0..=n, prop::collection::vec(prop::bool::weighted(0.3), n)).prop_map(move |(k, ones)| {
        (n - k..n)
            .map(|d| if ones[d] { 1 } else { target[d] })
            .collect()
    })
}
