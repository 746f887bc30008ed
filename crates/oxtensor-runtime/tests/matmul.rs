//! The interpreter's `MatMul` kernel against a naive triple loop: every rank combination,
//! broadcast batch dimensions, zero-size dimensions, mixed dtypes, transposed, reversed,
//! strided and broadcast views; large products through gemm's threaded path; and the shape
//! errors.

use oxtensor_data::{DType, Element, Tensor, dispatch_dtype, result_type};
use oxtensor_graph::{Op, TensorType};
use oxtensor_runtime::KernelError;
use oxtensor_runtime::kernels::{KernelCtx, eval};
use proptest::prelude::*;

use crate::strided_support;
use strided_support::{Layout, Rng, layout_for};

/// `np.matmul` through the kernel dispatcher, output dtype the operands' result type.
fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor, KernelError> {
    let dtype = result_type(a.dtype(), b.dtype());
    let (ra, rb) = (a.ndim(), b.ndim());
    let out_ndim = ra.saturating_sub(2).max(rb.saturating_sub(2))
        + usize::from(ra >= 2)
        + usize::from(rb >= 2);
    let ctx = KernelCtx {
        input_types: &[
            TensorType::of_rank(a.dtype(), a.ndim()),
            TensorType::of_rank(b.dtype(), b.ndim()),
        ],
        output_types: &[TensorType::of_rank(dtype, out_ndim)],
    };
    let mut outs = eval(&Op::MatMul, &[a, b], &ctx)?;
    assert_eq!(outs.len(), 1);
    let out = outs.remove(0);
    assert_eq!(out.dtype(), dtype);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Building strided inputs.

/// Two operands of ranks 1–4 whose contraction extents agree and whose batch dimensions
/// broadcast (each equal to the common extent, or 1), with any layouts.
fn operands() -> impl Strategy<Value = (Layout, Layout)> {
    let extent = || prop_oneof![1 => Just(0usize), 8 => 1usize..=4];
    (
        1usize..=4,
        1usize..=4,
        prop::collection::vec(extent(), 2),
        (extent(), extent(), extent()),
        prop::collection::vec(prop::bool::weighted(0.3), 2),
        prop::collection::vec(prop::bool::weighted(0.3), 2),
    )
        .prop_flat_map(|(ra, rb, batch, (m, n, k), a_one, b_one)| {
            let batch_of = |rank: usize, ones: &[bool]| -> Vec<usize> {
                let nb = rank.saturating_sub(2);
                (0..nb)
                    .map(|i| {
                        let d = batch.len() - nb + i;
                        if ones[d] { 1 } else { batch[d] }
                    })
                    .collect()
            };
            let mut sa = batch_of(ra, &a_one);
            if ra >= 2 {
                sa.push(m);
            }
            sa.push(k);
            let mut sb = batch_of(rb, &b_one);
            sb.push(k);
            if rb >= 2 {
                sb.push(n);
            }
            (layout_for(sa, 0.1), layout_for(sb, 0.1))
        })
}

/// Small integers, so products are exact in every dtype. Negative values wrap to huge ones in
/// unsigned types, which exercises wrapping arithmetic but would make float results cancel
/// catastrophically; `wrap` false keeps unsigned values small instead.
fn build_small(l: &Layout, dtype: DType, seed: u64, wrap: bool) -> Tensor {
    let mut rng = Rng(seed);
    let low = if dtype.is_unsigned_int() && !wrap {
        0
    } else {
        3
    };
    dispatch_dtype!(dtype, T => l.build::<T>(|_| T::from_i64((rng.next() % 7) as i64 - low)))
}

// ---------------------------------------------------------------------------------------------
// Reference.

/// `np.matmul` by the definition: operands cast to the result dtype, each output element a
/// loop over the contraction index, read with `Tensor::get`. Integers wrap; bools are the
/// logical or of ands; floats accumulate in `f64`.
fn reference(a: &Tensor, b: &Tensor) -> Tensor {
    let dtype = result_type(a.dtype(), b.dtype());
    let (a, b) = (a.cast(dtype), b.cast(dtype));
    let (ra, rb) = (a.ndim(), b.ndim());
    let a3 = if ra == 1 {
        a.reshape(&[1, a.shape()[0]]).unwrap()
    } else {
        a.clone()
    };
    let b3 = if rb == 1 {
        b.reshape(&[b.shape()[0], 1]).unwrap()
    } else {
        b.clone()
    };
    let (sa, sb) = (a3.shape().to_vec(), b3.shape().to_vec());
    let (m, k, n) = (sa[sa.len() - 2], sa[sa.len() - 1], sb[sb.len() - 1]);
    let (ba, bb) = (&sa[..sa.len() - 2], &sb[..sb.len() - 2]);
    let nb = ba.len().max(bb.len());
    let ext = |s: &[usize], i: usize| {
        if i + s.len() >= nb {
            s[i + s.len() - nb]
        } else {
            1
        }
    };
    let batch: Vec<usize> = (0..nb)
        .map(|i| {
            if ext(ba, i) == 1 {
                ext(bb, i)
            } else {
                ext(ba, i)
            }
        })
        .collect();
    let mut full_shape = batch.clone();
    full_shape.extend([m, n]);
    let count: usize = full_shape.iter().product();
    let mut out_shape = batch.clone();
    if ra >= 2 {
        out_shape.push(m);
    }
    if rb >= 2 {
        out_shape.push(n);
    }
    dispatch_dtype!(dtype, T => {
        let mut values = Vec::with_capacity(count);
        let mut idx = vec![0usize; full_shape.len()];
        for _ in 0..count {
            let (bi, (i, j)) = (&idx[..nb], (idx[nb], idx[nb + 1]));
            let pick = |s: &[usize]| -> Vec<usize> {
                let lead = nb - s.len();
                (0..s.len()).map(|d| if s[d] == 1 { 0 } else { bi[lead + d] }).collect()
            };
            let (mut ia, mut ib) = (pick(ba), pick(bb));
            ia.extend([i, 0]);
            ib.extend([0, j]);
            let (mut fsum, mut isum, mut any) = (0.0f64, 0i64, false);
            for p in 0..k {
                let (la, lb) = (ia.len(), ib.len());
                ia[la - 1] = p;
                ib[lb - 2] = p;
                let (x, y) = (a3.get::<T>(&ia), b3.get::<T>(&ib));
                fsum += x.to_f64() * y.to_f64();
                isum = isum.wrapping_add(x.to_i64().wrapping_mul(y.to_i64()));
                any |= x.to_bool() && y.to_bool();
            }
            values.push(if dtype.is_float() {
                T::from_f64(fsum)
            } else if dtype.is_bool() {
                T::from_bool(any)
            } else {
                T::from_i64(isum)
            });
            for d in (0..full_shape.len()).rev() {
                idx[d] += 1;
                if idx[d] < full_shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Tensor::from_slice(&values, &out_shape).unwrap()
    })
}

/// Same dtype and shape; equal elements, floats within `rtol` of the larger magnitude or 1.
fn assert_close(actual: &Tensor, expected: &Tensor, rtol: f64, what: &str) {
    assert_eq!(actual.dtype(), expected.dtype(), "{what}: dtype");
    assert_eq!(actual.shape(), expected.shape(), "{what}: shape");
    if actual.dtype().is_float() {
        let (a, e) = (actual.to_vec_as::<f64>(), expected.to_vec_as::<f64>());
        for (i, (x, y)) in a.iter().zip(&e).enumerate() {
            let tol = rtol * x.abs().max(y.abs()).max(1.0);
            assert!(
                (x - y).abs() <= tol,
                "{what}: element {i}: got {x}, expected {y}"
            );
        }
    } else {
        assert_eq!(actual.to_bytes(), expected.to_bytes(), "{what}");
    }
}

fn check(a: &Tensor, b: &Tensor, rtol: f64) {
    let what = format!(
        "{:?} (strides {:?}) @ {:?} (strides {:?})",
        a,
        a.strides(),
        b,
        b.strides()
    );
    let got = matmul(a, b).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_close(&got, &reference(a, b), rtol, &what);
}

// ---------------------------------------------------------------------------------------------
// Property tests.

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    /// Every rank pair 1–4, broadcast batches, empty extents, any layouts, any dtype pair.
    #[test]
    fn matmul_matches_reference(
        (la, lb) in operands(),
        da in prop::sample::select(DType::REAL.to_vec()),
        db in prop::sample::select(DType::REAL.to_vec()),
        seed in any::<u64>(),
    ) {
        let wrap = !result_type(da, db).is_float();
        let a = build_small(&la, da, seed, wrap);
        let b = build_small(&lb, db, seed ^ 0x5555, wrap);
        check(&a, &b, 0.0);
    }

    /// Mismatched contraction extents are a shape error naming both shapes and dimensions.
    #[test]
    fn contraction_mismatch_is_an_error(
        ra in 1usize..=3,
        rb in 1usize..=3,
        k in 1usize..=5,
        extra in 1usize..=3,
    ) {
        let mut sa = vec![2; ra - 1];
        sa.push(k);
        let mut sb = vec![2; rb];
        let kb = rb.saturating_sub(2);
        sb[kb] = k + extra;
        let a = Tensor::zeros(DType::F64, &sa).unwrap();
        let b = Tensor::zeros(DType::F64, &sb).unwrap();
        let want = format!(
            "matmul: shapes {sa:?} and {sb:?} do not align: {k} (dim {}) != {} (dim {kb})",
            ra - 1,
            k + extra
        );
        prop_assert_eq!(matmul(&a, &b).err(), Some(KernelError::Shape(want)));
    }
}

// ---------------------------------------------------------------------------------------------
// Specific cases.

#[test]
fn every_rank_combination_has_numpy_shape() {
    let cases: &[(&[usize], &[usize], &[usize])] = &[
        (&[3], &[3], &[]),
        (&[2, 3], &[3], &[2]),
        (&[3], &[3, 4], &[4]),
        (&[2, 3], &[3, 4], &[2, 4]),
        (&[5, 2, 3], &[3], &[5, 2]),
        (&[3], &[5, 3, 4], &[5, 4]),
        (&[5, 2, 3], &[3, 4], &[5, 2, 4]),
        (&[2, 3], &[5, 3, 4], &[5, 2, 4]),
        (&[2, 1, 2, 3], &[5, 3, 4], &[2, 5, 2, 4]),
        (&[0, 2, 3], &[1, 3, 4], &[0, 2, 4]),
        (&[2, 0], &[0, 3], &[2, 3]),
    ];
    for &(sa, sb, so) in cases {
        let a = build_small(&Layout::contiguous(sa), DType::F64, 1, false);
        let b = build_small(&Layout::contiguous(sb), DType::F64, 2, false);
        let out = matmul(&a, &b).unwrap();
        assert_eq!(out.shape(), so, "{sa:?} @ {sb:?}");
        check(&a, &b, 0.0);
    }
    // A contraction over nothing is zeros.
    let a = Tensor::zeros(DType::I32, &[2, 0]).unwrap();
    let b = Tensor::zeros(DType::I32, &[0, 3]).unwrap();
    assert_eq!(matmul(&a, &b).unwrap().to_vec::<i32>().unwrap(), vec![0; 6]);
    // Vector·vector is a 0-d scalar.
    let v = Tensor::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let s = matmul(&v, &v).unwrap();
    assert_eq!((s.shape(), s.item::<f32>()), (&[][..], Some(14.0)));
}

#[test]
fn integer_and_bool_products_follow_numpy() {
    // uint8 wraps in its own type.
    let a = Tensor::from_slice(&[200u8], &[1]).unwrap();
    let b = Tensor::from_slice(&[2u8], &[1]).unwrap();
    let out = matmul(&a, &b).unwrap();
    assert_eq!((out.dtype(), out.item::<u8>()), (DType::U8, Some(144)));
    // Mixed int32 · int8 computes in int32.
    let a = Tensor::from_slice(&[1i32, 2, 3, 4], &[2, 2]).unwrap();
    let b = Tensor::from_slice(&[1i8, -1], &[2]).unwrap();
    let out = matmul(&a, &b).unwrap();
    assert_eq!(
        (out.dtype(), out.to_vec::<i32>().unwrap()),
        (DType::I32, vec![-1, -1])
    );
    // int64 · float32 computes in float64.
    let f = Tensor::from_slice(&[0.5f32, 0.25], &[2]).unwrap();
    let i = Tensor::from_slice(&[2i64, 4], &[2]).unwrap();
    let out = matmul(&i, &f).unwrap();
    assert_eq!((out.dtype(), out.item::<f64>()), (DType::F64, Some(2.0)));
    // Bool: or of ands.
    let a = Tensor::from_slice(&[true, false, false, false], &[2, 2]).unwrap();
    let b = Tensor::from_slice(&[false, true, true, true], &[2, 2]).unwrap();
    let out = matmul(&a, &b).unwrap();
    assert_eq!(
        (out.dtype(), out.to_vec::<bool>().unwrap()),
        (DType::Bool, vec![false, true, false, false])
    );
}

#[test]
fn shape_errors_name_both_shapes() {
    let z = |s: &[usize]| Tensor::zeros(DType::F64, s).unwrap();
    assert_eq!(
        matmul(&z(&[3, 4]), &z(&[5, 2])).err(),
        Some(KernelError::Shape(
            "matmul: shapes [3, 4] and [5, 2] do not align: 4 (dim 1) != 5 (dim 0)".into()
        ))
    );
    assert_eq!(
        matmul(&z(&[4]), &z(&[5])).err(),
        Some(KernelError::Shape(
            "matmul: shapes [4] and [5] do not align: 4 (dim 0) != 5 (dim 0)".into()
        ))
    );
    assert_eq!(
        matmul(&z(&[2, 3, 4]), &z(&[3, 4, 5])).err(),
        Some(KernelError::Shape(
            "matmul: shapes [2, 3, 4] and [3, 4, 5] do not broadcast: batch dimensions [2] \
             and [3]"
                .into()
        ))
    );
    assert!(matches!(
        matmul(&z(&[]), &z(&[3])),
        Err(KernelError::Shape(m)) if m.contains("at least one dimension")
    ));
}

/// Products large enough for gemm's threaded path, and batches for the batch-parallel path,
/// in float32/float64 with transposed, reversed and strided operands, plus a large int product.
#[test]
fn large_products_in_every_layout() {
    let mut rng = Rng(5);
    // m·n·k = 336,000: above the kernel's threshold for threading one product (2^18).
    let (m, k, n) = (80, 70, 60);
    let layouts = |shape: &[usize]| {
        let mut rev = Layout::contiguous(shape);
        rev.neg = vec![true; shape.len()];
        let mut strided = Layout::transposed(shape);
        strided.step = vec![2; shape.len()];
        vec![
            Layout::contiguous(shape),
            Layout::transposed(shape),
            rev,
            strided,
        ]
    };
    for la in layouts(&[m, k]) {
        for lb in layouts(&[k, n]) {
            let a = la.build::<f64>(|_| rng.signed_unit());
            let b = lb.build::<f64>(|_| rng.signed_unit());
            check(&a, &b, 1e-12);
            let a = la.build::<f32>(|_| rng.signed_unit() as f32);
            let b = lb.build::<f32>(|_| rng.signed_unit() as f32);
            check(&a, &b, 1e-5);
        }
    }
    // Many small products in parallel, the right operand broadcast over the batch.
    let a = Layout::contiguous(&[300, 8, 9]).build::<f64>(|_| rng.signed_unit());
    let b = Layout::transposed(&[1, 9, 7]).build::<f64>(|_| rng.signed_unit());
    check(&a, &b, 1e-12);
    let a = Layout::transposed(&[300, 8, 9]).build::<f32>(|_| rng.signed_unit() as f32);
    let b = Layout::contiguous(&[9]).build::<f32>(|_| rng.signed_unit() as f32);
    check(&a, &b, 1e-5);
    // A broadcast (stride 0) operand inside the matrix dimensions.
    let row = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[1, 3]).unwrap();
    let a = row.broadcast_to(&[64, 3]).unwrap();
    let b = Layout::contiguous(&[3, 70]).build::<f64>(|_| rng.signed_unit());
    check(&a, &b, 1e-12);
    // Integers above the parallel threshold.
    let a = Layout::transposed(&[120, 90]).build::<i32>(|_| (rng.next() % 201) as i32 - 100);
    let b = Layout::contiguous(&[90, 110]).build::<i64>(|_| (rng.next() % 201) as i64 - 100);
    check(&a, &b, 0.0);
}
