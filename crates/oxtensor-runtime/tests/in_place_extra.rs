//! [`InPlaceExtra`], the allocation-free kernel a staged loop's host call runs for an
//! `argmax`/`argmin`, a `cumsum`/`cumprod`, a `sort`/`argsort` or a `MakeVector`, against the
//! interpreter's kernel of the same node: the same values bit for bit (ties, NaNs, integer
//! wrap-around, every axis, mixed dtypes converted) and the same errors with their messages;
//! extents the kernel rejects are left to it.

use oxtensor_data::{DType, Element, Tensor, dispatch_dtype};
use oxtensor_graph::{ArgReduceOp, ExtraOp, Op, TensorType};
use oxtensor_runtime::kernels::{InPlaceExtra, KernelCtx, eval};

/// The elements of `t` in C order as bytes of its dtype, in `u64` words (aligned for any).
fn words(t: &Tensor) -> (Vec<u64>, usize) {
    let bytes = t.numel() * t.dtype().size();
    let mut w = vec![0u64; bytes.div_ceil(8)];
    let c = t.to_contiguous();
    dispatch_dtype!(t.dtype(), T => {
        let v = c.to_vec::<T>().expect("elements");
        // SAFETY: `w` has room for `bytes` bytes; `v`'s elements are plain data.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr().cast::<u8>(), w.as_mut_ptr().cast::<u8>(), bytes) };
    });
    (w, bytes)
}

/// `op` on `inputs` both ways (twice in place: the kept buffers give the same result again):
/// the same bytes, or the same error.
fn agree(what: &str, op: &Op, out_dtype: DType, inputs: &[&Tensor]) {
    let params: Vec<(DType, &[usize])> = inputs.iter().map(|t| (t.dtype(), t.shape())).collect();
    let mut ours = InPlaceExtra::new(op, &params).unwrap_or_else(|| panic!("{what}: taken"));
    let (dtype, n) = ours.output();
    assert_eq!(dtype, out_dtype, "{what}: output dtype");
    let data: Vec<(Vec<u64>, usize)> = inputs.iter().map(|t| words(t)).collect();
    let args: Vec<&[u8]> = data
        .iter()
        // SAFETY: each buffer holds at least `bytes` initialised bytes.
        .map(|(w, b)| unsafe { std::slice::from_raw_parts(w.as_ptr().cast::<u8>(), *b) })
        .collect();
    let types: Vec<TensorType> = inputs
        .iter()
        .map(|t| TensorType::of_rank(t.dtype(), t.ndim()))
        .collect();
    let out_type = [TensorType::of_rank(out_dtype, 1)];
    let ctx = KernelCtx {
        input_types: &types,
        output_types: &out_type,
    };
    let want = eval(op, inputs, &ctx).map_err(|e| e.to_string());
    for round in 0..2 {
        let mut out = vec![0xA5u64; (n * dtype.size()).div_ceil(8)];
        // SAFETY: `out` has room for the output's bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), n * dtype.size())
        };
        let got = ours.run(&args, bytes).map_err(|e| e.to_string());
        match &want {
            Ok(w) => {
                got.unwrap_or_else(|e| panic!("{what}: {e}"));
                let (expected, len) = words(&w[0]);
                // SAFETY: `expected` holds `len` initialised bytes.
                let expected =
                    unsafe { std::slice::from_raw_parts(expected.as_ptr().cast::<u8>(), len) };
                assert_eq!(bytes, expected, "{what}, round {round}");
            }
            Err(w) => assert_eq!(&got.expect_err(what), w, "{what}, round {round}"),
        }
    }
}

/// `n` values of `T` from a fixed pattern with repeats (ties) and, for floats, a NaN at `nan`.
fn pattern<T: Element>(shape: &[usize], nan: Option<usize>) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<T> = (0..n)
        .map(|k| match nan {
            Some(i) if i == k => T::from_f64(f64::NAN),
            _ => T::from_f64(((k * 7 + 3) % 11) as f64 - 4.5),
        })
        .collect();
    Tensor::from_slice(&v, shape).expect("pattern")
}

#[test]
fn arg_reductions_match_the_kernel_along_every_axis_with_ties_and_nans() {
    for (op, name) in [
        (ArgReduceOp::ArgMax, "argmax"),
        (ArgReduceOp::ArgMin, "argmin"),
    ] {
        for nan in [None, Some(5)] {
            let x = pattern::<f64>(&[3, 4, 5], nan);
            for axis in [None, Some(0), Some(1), Some(2)] {
                let what = format!("{name} axis {axis:?} nan {nan:?}");
                agree(&what, &Op::ArgReduce { op, axis }, DType::I64, &[&x]);
            }
        }
        let ints = pattern::<i32>(&[6, 4], None);
        agree(
            name,
            &Op::ArgReduce { op, axis: Some(0) },
            DType::I64,
            &[&ints],
        );
        let f32s = pattern::<f32>(&[4, 6], Some(9));
        agree(
            name,
            &Op::ArgReduce { op, axis: Some(1) },
            DType::I64,
            &[&f32s],
        );
        let scalar = Tensor::scalar(2.5f64);
        agree(
            name,
            &Op::ArgReduce { op, axis: None },
            DType::I64,
            &[&scalar],
        );
    }
    // Extents the kernel rejects (an empty axis, an axis out of bounds) are left to it.
    let empty = Tensor::zeros(DType::F64, &[0, 3]).expect("empty");
    let argmax = |axis| Op::ArgReduce {
        op: ArgReduceOp::ArgMax,
        axis,
    };
    assert!(InPlaceExtra::new(&argmax(Some(0)), &[(DType::F64, empty.shape())]).is_none());
    assert!(InPlaceExtra::new(&argmax(Some(2)), &[(DType::F64, empty.shape())]).is_none());
    // The empty flattened search is an error in place too, in the kernel's words.
    agree("argmax of nothing", &argmax(None), DType::I64, &[&empty]);
}

#[test]
fn cumulative_sums_and_products_match_the_kernel_with_wrap_around() {
    for mul in [false, true] {
        let x = pattern::<f64>(&[3, 4], Some(6));
        for axis in [0, 1] {
            let op = Op::Extra(ExtraOp::Cumulate { axis, mul });
            agree(
                &format!("f64 axis {axis} mul {mul}"),
                &op,
                DType::F64,
                &[&x],
            );
        }
        let op = Op::Extra(ExtraOp::Cumulate { axis: 0, mul });
        let big: Vec<i8> = (0..12i8)
            .map(|k| 100i8.wrapping_sub(17i8.wrapping_mul(k)))
            .collect();
        let wraps = Tensor::from_slice(&big, &[12]).expect("i8");
        agree(&format!("i8 mul {mul}"), &op, DType::I8, &[&wraps]);
        let f32s = pattern::<f32>(&[5, 2], None);
        agree(&format!("f32 mul {mul}"), &op, DType::F32, &[&f32s]);
        let flags = Tensor::from_slice(&[true, false, true], &[3]).expect("bool");
        agree(&format!("bool mul {mul}"), &op, DType::Bool, &[&flags]);
    }
}

#[test]
fn sorts_and_argsorts_match_the_kernel_stably_with_nans_last() {
    let x = pattern::<f64>(&[4, 6], Some(7));
    for axis in [0, 1] {
        agree(
            &format!("sort axis {axis}"),
            &Op::Extra(ExtraOp::Sort { axis }),
            DType::F64,
            &[&x],
        );
        agree(
            &format!("argsort axis {axis}"),
            &Op::Extra(ExtraOp::ArgSort { axis }),
            DType::I64,
            &[&x],
        );
    }
    let ints = pattern::<i64>(&[40], None);
    agree(
        "sort i64",
        &Op::Extra(ExtraOp::Sort { axis: 0 }),
        DType::I64,
        &[&ints],
    );
    agree(
        "argsort i64",
        &Op::Extra(ExtraOp::ArgSort { axis: 0 }),
        DType::I64,
        &[&ints],
    );
    let op = Op::Extra(ExtraOp::Sort { axis: 1 });
    assert!(
        InPlaceExtra::new(&op, &[(DType::F64, &[4][..])]).is_none(),
        "axis out of bounds"
    );
}

#[test]
fn vectors_of_scalars_of_mixed_dtypes_match_the_kernel() {
    let items = [
        Tensor::scalar(2.75f64),
        Tensor::scalar(-3i64),
        Tensor::scalar(true),
        Tensor::scalar(1.5f32),
    ];
    let refs: Vec<&Tensor> = items.iter().collect();
    for dtype in [DType::F64, DType::F32, DType::I64, DType::I8, DType::Bool] {
        agree(
            &format!("make_vector {dtype}"),
            &Op::MakeVector(dtype),
            dtype,
            &refs,
        );
    }
    let vector = Tensor::from_slice(&[1.0f64, 2.0], &[2]).expect("vector");
    let op = Op::MakeVector(DType::F64);
    assert!(
        InPlaceExtra::new(&op, &[(DType::F64, vector.shape())]).is_none(),
        "not a scalar"
    );
}

#[test]
fn buffers_of_other_extents_than_laid_out_are_refused() {
    let op = Op::Extra(ExtraOp::Cumulate {
        axis: 0,
        mul: false,
    });
    let mut ours = InPlaceExtra::new(&op, &[(DType::F64, &[3][..])]).expect("taken");
    let input = [0u64; 2];
    let mut out = [0u64; 3];
    // SAFETY: both buffers hold the bytes the slices borrow.
    let (a, o) = unsafe {
        (
            std::slice::from_raw_parts(input.as_ptr().cast::<u8>(), 16),
            std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), 24),
        )
    };
    assert!(ours.run(&[a], o).is_err());
}
