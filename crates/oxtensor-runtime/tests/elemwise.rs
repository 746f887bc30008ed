//! The interpreter's elementwise kernel (`Op::Elemwise`) against an independent reference: a
//! plain per-element loop over exact values (`i128` for integers, `f64` for floats, rounded to
//! `float32` after each operation where the output is `float32`) using std and libm, in
//! property tests: every `ScalarOp` (and a cast to every dtype) on random shapes (empty ones
//! included), random dtypes, broadcasting through static-1 dimensions, and contiguous,
//! permuted, reversed, padded and zero-stride inputs, with special values mixed in.
//! `elemwise_cases.rs` holds the fixtures computed by NumPy/SciPy and the cases spelled out.

use crate::elemwise_support::{node_types, run_typed};
use oxtensor_data::{DType, Element, Tensor, contiguous_strides, dispatch_dtype, result_type};
use oxtensor_graph::{Arity, ScalarKind, ScalarOp, TensorType};
use oxtensor_runtime::KernelError;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------------
// The reference.

/// An exact scalar value: the dtype travels separately.
#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    B(bool),
    I(i128),
    F(f64),
}

fn wrap(x: i128, d: DType) -> i128 {
    let bits = d.size() as u32 * 8;
    let m = x & ((1i128 << bits) - 1);
    if d.is_signed_int() && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

fn round_to(x: f64, d: DType) -> f64 {
    if d == DType::F32 { x as f32 as f64 } else { x }
}

/// NumPy `astype` (float to integer saturates, as `Element` documents).
fn cast(v: V, to: DType) -> V {
    match to {
        DType::Bool => V::B(match v {
            V::B(b) => b,
            V::I(i) => i != 0,
            V::F(f) => f != 0.0,
        }),
        DType::F32 | DType::F64 => V::F(match v {
            V::B(b) => b as u8 as f64,
            V::I(i) if to == DType::F32 => i as f32 as f64,
            V::I(i) => i as f64,
            V::F(f) => round_to(f, to),
        }),
        _ => V::I(match v {
            V::B(b) => b as i128,
            V::I(i) => wrap(i, to),
            V::F(f) => match to {
                DType::I8 => f as i8 as i128,
                DType::I16 => f as i16 as i128,
                DType::I32 => f as i32 as i128,
                DType::I64 => f as i64 as i128,
                DType::U8 => f as u8 as i128,
                DType::U16 => f as u16 as i128,
                DType::U32 => f as u32 as i128,
                _ => f as u64 as i128,
            },
        }),
    }
}

fn values(t: &Tensor) -> Vec<V> {
    let d = t.dtype();
    if d.is_float() {
        t.to_vec_as::<f64>().into_iter().map(V::F).collect()
    } else if d.is_bool() {
        t.to_vec_as::<bool>().into_iter().map(V::B).collect()
    } else if d.is_unsigned_int() {
        t.to_vec_as::<u64>()
            .into_iter()
            .map(|x| V::I(x as i128))
            .collect()
    } else {
        t.to_vec_as::<i64>()
            .into_iter()
            .map(|x| V::I(x as i128))
            .collect()
    }
}

/// `(a // b, a % b)` by CPython's float algorithm, each step rounded to the dtype.
fn py_divmod(a: f64, b: f64, d: DType) -> (f64, f64) {
    let r = |x: f64| round_to(x, d);
    let m0 = a % b;
    if b == 0.0 {
        return (r(a / b), m0);
    }
    let mut m = m0;
    let mut div = r(r(a - m) / b);
    if m != 0.0 {
        if (b < 0.0) != (m < 0.0) {
            m = r(m + b);
            div = r(div - 1.0);
        }
    } else {
        m = 0.0f64.copysign(b);
    }
    let q = if div != 0.0 {
        let fl = div.floor();
        if r(div - fl) > 0.5 { r(fl + 1.0) } else { fl }
    } else {
        0.0f64.copysign(r(a / b))
    };
    (q, m)
}

fn ref_float(op: ScalarOp, x: &[f64], d: DType) -> f64 {
    use ScalarOp::*;
    let r = |v: f64| round_to(v, d);
    let any_nan = x.iter().any(|v| v.is_nan());
    let a = x[0];
    let b = x.get(1).copied().unwrap_or(0.0);
    match op {
        Add => x[1..].iter().fold(a, |acc, &v| r(acc + v)),
        Mul => x[1..].iter().fold(a, |acc, &v| r(acc * v)),
        Sub => r(a - b),
        TrueDiv => r(a / b),
        IntDiv => py_divmod(a, b, d).0,
        Mod => py_divmod(a, b, d).1,
        Pow => r(a.powf(b)),
        Neg => -a,
        Abs => a.abs(),
        Sign => {
            if a.is_nan() {
                a
            } else if a > 0.0 {
                1.0
            } else if a < 0.0 {
                -1.0
            } else {
                0.0
            }
        }
        Sqr => r(a * a),
        Sqrt => r(a.sqrt()),
        Reciprocal => r(1.0 / a),
        Exp => r(a.exp()),
        Exp2 => r(a.exp2()),
        Expm1 => r(a.exp_m1()),
        Log => r(a.ln()),
        Log2 => r(a.log2()),
        Log10 => r(a.log10()),
        Log1p => r(a.ln_1p()),
        Sin => r(a.sin()),
        Cos => r(a.cos()),
        Tan => r(a.tan()),
        Arcsin => r(a.asin()),
        Arccos => r(a.acos()),
        Arctan => r(a.atan()),
        Arctan2 => r(a.atan2(b)),
        Sinh => r(a.sinh()),
        Cosh => r(a.cosh()),
        Tanh => r(a.tanh()),
        Arcsinh => r(libm::asinh(a)),
        // NumPy: NaN below 1 (libm's acosh returns numbers there).
        Arccosh => r(if a < 1.0 { f64::NAN } else { libm::acosh(a) }),
        Arctanh => r(libm::atanh(a)),
        Sigmoid => r(if a >= 0.0 {
            1.0 / (1.0 + (-a).exp())
        } else {
            a.exp() / (1.0 + a.exp())
        }),
        Softplus => r(if a < -37.0 {
            a.exp()
        } else if a < 18.0 {
            a.exp().ln_1p()
        } else if a < 33.3 {
            a + (-a).exp()
        } else {
            a
        }),
        Erf => r(libm::erf(a)),
        Erfc => r(libm::erfc(a)),
        Gammaln => r(libm::lgamma(a)),
        Maximum if any_nan => f64::NAN,
        Maximum => a.max(b),
        Minimum if any_nan => f64::NAN,
        Minimum => a.min(b),
        Clip if any_nan => f64::NAN,
        Clip => a.max(b).min(x[2]),
        Floor => a.floor(),
        Ceil => a.ceil(),
        Trunc => a.trunc(),
        RoundHalfEven => a.round_ties_even(),
        other => panic!("{other} is not a float function"),
    }
}

/// `None` for a negative exponent (NumPy's error).
fn ref_int(op: ScalarOp, x: &[i128], d: DType) -> Option<i128> {
    use ScalarOp::*;
    let w = |v: i128| wrap(v, d);
    let a = x[0];
    let b = x.get(1).copied().unwrap_or(0);
    Some(match op {
        Add => x[1..].iter().fold(a, |acc, &v| w(acc + v)),
        Mul => x[1..].iter().fold(a, |acc, &v| w(acc.wrapping_mul(v))),
        Sub => w(a - b),
        IntDiv if b == 0 => 0,
        IntDiv => {
            let q = a / b;
            w(if a % b != 0 && ((a < 0) != (b < 0)) {
                q - 1
            } else {
                q
            })
        }
        Mod if b == 0 => 0,
        Mod => {
            let m = a % b;
            if m != 0 && ((m < 0) != (b < 0)) {
                m + b
            } else {
                m
            }
        }
        Pow if b < 0 => return None,
        Pow => {
            let (mut base, mut e, mut acc) = (a, b as u128, 1i128);
            while e > 0 {
                if e & 1 == 1 {
                    acc = w(acc.wrapping_mul(base));
                }
                base = w(base.wrapping_mul(base));
                e >>= 1;
            }
            acc
        }
        Neg => w(-a),
        Abs => w(a.abs()),
        Sign => a.signum(),
        Sqr => w(a.wrapping_mul(a)),
        Maximum => a.max(b),
        Minimum => a.min(b),
        Clip => a.max(b).min(x[2]),
        And => w(a & b),
        Or => w(a | b),
        Xor => w(a ^ b),
        Invert => w(!a),
        other => panic!("{other} is not an integer function"),
    })
}

fn ref_bool(op: ScalarOp, x: &[bool]) -> bool {
    use ScalarOp::*;
    let (a, b) = (x[0], x.get(1).copied().unwrap_or(false));
    match op {
        Add | Maximum => x.iter().any(|&v| v),
        Mul | Minimum => x.iter().all(|&v| v),
        Abs => a,
        Clip => a.max(b).min(x[2]),
        And => a & b,
        Or => a | b,
        Xor => a ^ b,
        Invert => !a,
        other => panic!("{other} is not a bool function"),
    }
}

/// The reference for one element: `None` when NumPy raises (a negative integer power).
fn reference(op: ScalarOp, x: &[V], dtypes: &[DType], out: DType) -> Option<V> {
    let to = |d: DType| -> Vec<V> { x.iter().map(|&v| cast(v, d)).collect() };
    let compute = |c: &[V], d: DType| -> Option<V> {
        Some(match c[0] {
            V::F(_) => V::F(ref_float(
                op,
                &c.iter()
                    .map(|v| match v {
                        V::F(f) => *f,
                        _ => unreachable!(),
                    })
                    .collect::<Vec<_>>(),
                d,
            )),
            V::I(_) => V::I(ref_int(
                op,
                &c.iter()
                    .map(|v| match v {
                        V::I(i) => *i,
                        _ => unreachable!(),
                    })
                    .collect::<Vec<_>>(),
                d,
            )?),
            V::B(_) => V::B(ref_bool(
                op,
                &c.iter()
                    .map(|v| match v {
                        V::B(b) => *b,
                        _ => unreachable!(),
                    })
                    .collect::<Vec<_>>(),
            )),
        })
    };
    match op.kind() {
        ScalarKind::Arithmetic | ScalarKind::Float | ScalarKind::Bitwise => compute(&to(out), out),
        ScalarKind::Predicate => {
            let p = dtypes.iter().copied().reduce(result_type).unwrap_or(out);
            let c = to(p);
            let ord = match (c[0], c.get(1).copied().unwrap_or(c[0])) {
                (V::F(a), V::F(b)) => a.partial_cmp(&b),
                (V::I(a), V::I(b)) => a.partial_cmp(&b),
                (V::B(a), V::B(b)) => a.partial_cmp(&b),
                _ => unreachable!(),
            };
            use std::cmp::Ordering::*;
            Some(V::B(match op {
                ScalarOp::Lt => ord == Some(Less),
                ScalarOp::Gt => ord == Some(Greater),
                ScalarOp::Le => matches!(ord, Some(Less | Equal)),
                ScalarOp::Ge => matches!(ord, Some(Greater | Equal)),
                ScalarOp::Eq => ord == Some(Equal),
                ScalarOp::Neq => ord != Some(Equal),
                ScalarOp::IsNan => matches!(c[0], V::F(f) if f.is_nan()),
                ScalarOp::IsInf => matches!(c[0], V::F(f) if f.is_infinite()),
                other => panic!("{other} is not a predicate"),
            }))
        }
        ScalarKind::Select => {
            let cond = cast(x[0], DType::Bool) == V::B(true);
            Some(cast(if cond { x[1] } else { x[2] }, out))
        }
        ScalarKind::Convert => Some(cast(x[0], out)),
        // Not drawn by `all_ops`: the complex family has its own tests.
        ScalarKind::Complex => None,
    }
}

/// Units in the last place allowed between kernel and reference floats.
const ULPS: f64 = 4.0;

fn close(got: V, want: V, d: DType) -> bool {
    match (got, want) {
        (V::F(g), V::F(w)) => {
            if g.is_nan() || w.is_nan() {
                return g.is_nan() && w.is_nan();
            }
            let eps = if d == DType::F32 {
                f32::EPSILON as f64
            } else {
                f64::EPSILON
            };
            g == w || (g - w).abs() <= ULPS * eps * g.abs().max(w.abs())
        }
        _ => got == want,
    }
}

/// Evaluates the reference over the broadcast output; `None` if NumPy would raise.
fn reference_tensor(
    op: ScalarOp,
    inputs: &[&Tensor],
    out_shape: &[usize],
    out: DType,
) -> Option<Vec<V>> {
    let vals: Vec<Vec<V>> = inputs.iter().map(|t| values(t)).collect();
    let dtypes: Vec<DType> = inputs.iter().map(|t| t.dtype()).collect();
    let n: usize = out_shape.iter().product();
    let mut result = Vec::with_capacity(n);
    let mut index = vec![0usize; out_shape.len()];
    for _ in 0..n {
        let x: Vec<V> = inputs
            .iter()
            .zip(&vals)
            .map(|(t, v)| {
                let strides = contiguous_strides(t.shape());
                let flat: isize = (0..index.len())
                    .map(|d| {
                        if t.shape()[d] == 1 {
                            0
                        } else {
                            index[d] as isize * strides[d]
                        }
                    })
                    .sum();
                v[flat as usize]
            })
            .collect();
        result.push(reference(op, &x, &dtypes, out)?);
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < out_shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Some(result)
}

/// Runs the kernel and checks it against the reference (or NumPy's error).
pub(crate) fn check(
    op: ScalarOp,
    inputs: &[&Tensor],
    types: &[TensorType],
    out_type: &TensorType,
) -> Result<(), String> {
    let got = run_typed(op, inputs, types, out_type);
    // Each dimension is the extent of the inputs that are not stretched (1 if all are).
    let out_shape: Vec<usize> = (0..out_type.ndim())
        .map(|d| {
            inputs
                .iter()
                .map(|t| t.shape()[d])
                .find(|&e| e != 1)
                .unwrap_or(1)
        })
        .collect();
    let want = reference_tensor(op, inputs, &out_shape, out_type.dtype);
    let ctx = || {
        let ins: Vec<String> = inputs
            .iter()
            .map(|t| format!("{t:?} strides {:?} offset {}", t.strides(), t.offset()))
            .collect();
        format!("{op} on {ins:?} with types {types:?}")
    };
    match (got, want) {
        (Err(KernelError::Value(m)), None)
            if m == "Integers to negative integer powers are not allowed." =>
        {
            Ok(())
        }
        (Err(e), _) => Err(format!("{}: kernel failed: {e}", ctx())),
        (Ok(t), None) => Err(format!("{}: expected NumPy's error, got {t:?}", ctx())),
        (Ok(t), Some(want)) => {
            if t.dtype() != out_type.dtype || t.shape() != out_shape.as_slice() {
                return Err(format!(
                    "{}: got {} {:?}, expected {} {:?}",
                    ctx(),
                    t.dtype(),
                    t.shape(),
                    out_type.dtype,
                    out_shape
                ));
            }
            let got = values(&t);
            for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                if !close(g, w, out_type.dtype) {
                    return Err(format!("{}: element {k}: got {g:?}, expected {w:?}", ctx()));
                }
            }
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Random inputs.

/// Special float values mixed into random data.
const SPECIAL_F: [f64; 16] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    -0.0,
    0.0,
    1000.0,
    -1000.0,
    0.5,
    -0.5,
    2.5,
    1e-310,
    1.0,
    -1.0,
    40.0,
    -40.0,
    1e300,
];

fn float_value(seed: u64) -> f64 {
    let r = seed >> 4;
    match seed % 4 {
        0 => SPECIAL_F[(r % 16) as usize],
        1 => (r % 2_000_001) as f64 / 1000.0 - 1000.0,
        2 => (r % 2_000_001) as f64 / 1e6 - 1.0,
        _ => f64::from_bits(r.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
    }
}

fn int_value(seed: u64, d: DType) -> i128 {
    let r = seed >> 3;
    let bits = d.size() as u32 * 8;
    let (min, max) = if d.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    match seed % 8 {
        0..=3 => wrap((r % 11) as i128 - 5, d),
        4 => min,
        5 => max,
        6 => wrap(r as i128, d),
        _ => wrap((r % 3) as i128 - 1, d),
    }
}

/// A contiguous tensor of `dtype` and `shape` whose elements come from `seeds` (cycled).
fn make(dtype: DType, shape: &[usize], seeds: &[u64], small: bool) -> Tensor {
    let n: usize = shape.iter().product();
    let seed = |k: usize| seeds[k % seeds.len()].wrapping_add(k as u64 / seeds.len() as u64);
    dispatch_dtype!(dtype, T => {
        let data: Vec<T> = (0..n)
            .map(|k| {
                let s = seed(k);
                if small {
                    T::from_i64((s % 9) as i64)
                } else if dtype.is_float() {
                    T::from_f64(float_value(s))
                } else if dtype.is_bool() {
                    T::from_bool(s & 1 == 1)
                } else if dtype.is_unsigned_int() {
                    T::from_u64(int_value(s, dtype) as u64)
                } else {
                    T::from_i64(int_value(s, dtype) as i64)
                }
            })
            .collect();
        Tensor::from_slice(&data, shape).unwrap()
    })
}

/// A tensor with the logical `shape` laid out in memory according to `layout`: 0 contiguous,
/// 1 permuted, 2 reversed in every dimension, 3 padded with an offset, 4 zero-stride along
/// its first dimension of extent > 1.
fn lay_out(dtype: DType, shape: &[usize], seeds: &[u64], layout: u8, small: bool) -> Tensor {
    let rank = shape.len();
    match layout {
        1 if rank >= 2 => {
            let rev: Vec<usize> = shape.iter().rev().copied().collect();
            let axes: Vec<usize> = (0..rank).rev().collect();
            make(dtype, &rev, seeds, small).permute(&axes)
        }
        2 if rank >= 1 => {
            let base = make(dtype, shape, seeds, small);
            if base.numel() == 0 {
                return base;
            }
            let strides = contiguous_strides(shape);
            let offset: isize = shape
                .iter()
                .zip(&strides)
                .map(|(&n, &s)| (n as isize - 1) * s)
                .sum();
            let neg: Vec<isize> = strides.iter().map(|s| -s).collect();
            base.view(shape, &neg, offset as usize).unwrap()
        }
        3 => {
            let padded: Vec<usize> = shape.iter().map(|&n| n + 1).collect();
            let base = make(dtype, &padded, seeds, small);
            let strides = if rank == 0 {
                let b = make(dtype, &[2], seeds, small);
                return b.view(&[], &[], 1).unwrap();
            } else {
                contiguous_strides(&padded)
            };
            if shape.contains(&0) {
                return make(dtype, shape, seeds, small);
            }
            base.view(shape, &strides, 1).unwrap()
        }
        4 => match shape.iter().position(|&n| n > 1) {
            Some(d) => {
                let mut one = shape.to_vec();
                one[d] = 1;
                make(dtype, &one, seeds, small).broadcast_to(shape).unwrap()
            }
            None => make(dtype, shape, seeds, small),
        },
        _ => make(dtype, shape, seeds, small),
    }
}

/// One input slot of a random case.
#[derive(Clone, Debug)]
struct Slot {
    dtype: usize,
    layout: u8,
    /// Per dimension: 0 static unknown, 1 static exact, 2 broadcast (static and runtime 1).
    dims: Vec<u8>,
    seeds: Vec<u64>,
}

#[derive(Clone, Debug)]
struct Case {
    shape: Vec<usize>,
    slots: Vec<Slot>,
    n_variadic: usize,
    small_exponents: bool,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    let extent = prop_oneof![1 => Just(0usize), 9 => 1usize..=5];
    (
        prop::collection::vec(extent, 0..=3),
        1usize..=4,
        any::<bool>(),
    )
        .prop_flat_map(|(shape, n_variadic, small_exponents)| {
            let rank = shape.len();
            let slot = (
                0usize..11,
                0u8..5,
                prop::collection::vec(0u8..3, rank),
                prop::collection::vec(any::<u64>(), 1..48),
            )
                .prop_map(|(dtype, layout, dims, seeds)| Slot {
                    dtype,
                    layout,
                    dims,
                    seeds,
                });
            prop::collection::vec(slot, 4).prop_map(move |slots| Case {
                shape: shape.clone(),
                slots,
                n_variadic,
                small_exponents,
            })
        })
}

/// Every op the property test runs: each `ScalarOp` of real values (the complex family is
/// checked against NumPy in `crates/oxtensor/tests/complex.rs` and
/// `python/tests/test_complex.py`), and a cast to every real dtype.
fn all_ops() -> Vec<ScalarOp> {
    let mut ops: Vec<ScalarOp> = ScalarOp::ALL_BUT_CAST
        .into_iter()
        .filter(|op| op.kind() != ScalarKind::Complex && *op != ScalarOp::Conj)
        .collect();
    ops.extend(DType::REAL.iter().map(|&d| ScalarOp::Cast(d)));
    ops
}

/// Input dtypes the graph accepts for `op`: the slots' own if possible, else one shared dtype.
fn choose_dtypes(
    op: ScalarOp,
    slots: &[Slot],
    static_of: &dyn Fn(usize) -> Vec<Option<usize>>,
) -> Option<(Vec<DType>, Vec<TensorType>, TensorType)> {
    let n = slots.len();
    let mixed: Vec<DType> = slots.iter().map(|s| DType::REAL[s.dtype]).collect();
    let candidates = std::iter::once(mixed)
        .chain((0..11).map(|k| vec![DType::REAL[(slots[0].dtype + k) % 11]; n]));
    for dtypes in candidates {
        let spec: Vec<_> = dtypes
            .iter()
            .enumerate()
            .map(|(i, &d)| (d, static_of(i)))
            .collect();
        if let Some((types, out)) = node_types(op, &spec) {
            return Some((dtypes, types, out));
        }
    }
    None
}

fn check_case(case: &Case) -> Result<(), String> {
    let rank = case.shape.len();
    for op in all_ops() {
        let n = match op.arity() {
            Arity::Fixed(n) => n,
            Arity::Variadic => case.n_variadic,
        };
        let slots = &case.slots[..n];
        let runtime = |i: usize| -> Vec<usize> {
            (0..rank)
                .map(|d| {
                    if slots[i].dims[d] == 2 {
                        1
                    } else {
                        case.shape[d]
                    }
                })
                .collect()
        };
        let static_of = |i: usize| -> Vec<Option<usize>> {
            let rt = runtime(i);
            (0..rank)
                .map(|d| match slots[i].dims[d] {
                    0 => None,
                    _ => Some(rt[d]),
                })
                .collect()
        };
        let Some((dtypes, types, out)) = choose_dtypes(op, slots, &static_of) else {
            return Err(format!("{op}: no dtype accepted"));
        };
        let inputs: Vec<Tensor> = (0..n)
            .map(|i| {
                let small = case.small_exponents && op == ScalarOp::Pow && i == 1;
                lay_out(
                    dtypes[i],
                    &runtime(i),
                    &slots[i].seeds,
                    slots[i].layout,
                    small,
                )
            })
            .collect();
        let refs: Vec<&Tensor> = inputs.iter().collect();
        check(op, &refs, &types, &out)?;
    }
    Ok(())
}

proptest! {

    /// Every op on random shapes, dtypes, layouts and values matches the reference.
    #[test]
    fn every_op_matches_the_reference(case in case_strategy()) {
        if let Err(e) = check_case(&case) {
            prop_assert!(false, "{}", e);
        }
    }

    /// Inputs big enough to span several blocks, in every layout, with mixed dtypes.
    #[test]
    fn strided_inputs_across_block_boundaries(
        rows in 1usize..50,
        cols in 1usize..70,
        layouts in prop::collection::vec(0u8..5, 3),
        dtypes in prop::collection::vec(prop::sample::select(
            vec![DType::F64, DType::F32, DType::I32, DType::U8, DType::Bool]), 3),
        seeds in prop::collection::vec(any::<u64>(), 1..64),
        bcast in 0u8..4,
    ) {
        // bcast: 0 none, 1 input 1 is a row, 2 input 1 is a column, 3 input 1 is a scalar.
        let (r1, c1) = match bcast {
            1 => (1, cols),
            2 => (rows, 1),
            3 => (1, 1),
            _ => (rows, cols),
        };
        let stat = |n: usize, full: usize| if n == 1 && full != 1 { Some(1) } else { None };
        use ScalarOp::{Add, Clip, Lt, Maximum, Switch};
        for op in [Add, Maximum, Lt, Clip, Switch] {
            let n = if matches!(op, ScalarOp::Clip | ScalarOp::Switch) { 3 } else { 2 };
            let mut spec = vec![(dtypes[0], vec![None, None])];
            spec.push((dtypes[1], vec![stat(r1, rows), stat(c1, cols)]));
            if n == 3 {
                spec.push((dtypes[2], vec![None, None]));
            }
            let Some((types, out)) = node_types(op, &spec) else { continue };
            let shapes = [[rows, cols], [r1, c1], [rows, cols]];
            let inputs: Vec<Tensor> = (0..n)
                .map(|i| lay_out(dtypes[i], &shapes[i], &seeds, layouts[i], false))
                .collect();
            let refs: Vec<&Tensor> = inputs.iter().collect();
            if let Err(e) = check(op, &refs, &types, &out) {
                prop_assert!(false, "{}", &e[..e.len().min(3000)]);
            }
        }
    }

    /// Random float binary ops on random values (no specials) with broadcasting on both sides.
    #[test]
    fn float_binary_ops_broadcast_both_ways(
        a in prop::collection::vec(-1e3f64..1e3, 1..6),
        b in prop::collection::vec(-1e3f64..1e3, 1..6),
        f32_out in any::<bool>(),
    ) {
        let d = if f32_out { DType::F32 } else { DType::F64 };
        let ta = Tensor::from_slice(&a, &[a.len(), 1]).unwrap().cast(d);
        let tb = Tensor::from_slice(&b, &[1, b.len()]).unwrap().cast(d);
        for op in [
            ScalarOp::Add, ScalarOp::Sub, ScalarOp::Mul, ScalarOp::TrueDiv, ScalarOp::IntDiv,
            ScalarOp::Mod, ScalarOp::Pow, ScalarOp::Arctan2, ScalarOp::Maximum, ScalarOp::Lt,
        ] {
            let spec = [(d, vec![None, Some(1)]), (d, vec![Some(1), None])];
            let (types, out) = node_types(op, &spec).unwrap();
            if let Err(e) = check(op, &[&ta, &tb], &types, &out) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
