//! Large matrix-vector and vector-matrix products, which the matmul kernel splits across
//! threads (by outputs or along the contracted dimension), against a plain loop; with the
//! thread count forced to one and to two, in float32 and float64.

use oxtensor_data::{DType, Tensor};
use oxtensor_graph::{Op, TensorType};
use oxtensor_runtime::kernels::{KernelCtx, eval};

fn matmul(a: &Tensor, b: &Tensor) -> Tensor {
    let types = [
        TensorType::of_rank(a.dtype(), 2),
        TensorType::of_rank(b.dtype(), 2),
    ];
    let out = [TensorType::of_rank(a.dtype(), 2)];
    let ctx = KernelCtx {
        input_types: &types,
        output_types: &out,
    };
    eval(&Op::MatMul, &[a, b], &ctx).unwrap().remove(0)
}

/// `a` (m×k, given as a strided view) times `b` (k×n), by loops in f64.
fn reference(a: &Tensor, b: &Tensor) -> Vec<f64> {
    let (m, k, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    let mut out = vec![0.0; m * n];
    for i in 0..m {
        for q in 0..k {
            let x = a.get::<f64>(&[i, q]);
            for j in 0..n {
                out[i * n + j] += x * b.get::<f64>(&[q, j]);
            }
        }
    }
    out
}

fn matrix(rows: usize, cols: usize, seed: u64) -> Tensor {
    let v: Vec<f64> = (0..rows * cols)
        .map(|i| ((i as u64 * 2654435761 + seed) % 1000) as f64 / 500.0 - 1.0)
        .collect();
    Tensor::from_slice(&v, &[rows, cols]).unwrap()
}

fn check(a: &Tensor, b: &Tensor) {
    let got = matmul(a, b);
    let want = reference(a, b);
    let got = got.to_vec::<f64>().unwrap();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-9 * (1.0 + w.abs()), "{g} != {w}");
    }
}

#[test]
fn matrix_times_vector_split_by_rows_and_by_contraction() {
    let x = matrix(5003, 101, 7);
    let w = matrix(101, 1, 3);
    check(&x, &w);
    // Xᵀ·g: the matrix's contiguous direction runs along the contraction.
    let xt = x.permute(&[1, 0]);
    let g = matrix(5003, 1, 11);
    check(&xt, &g);
}

#[test]
fn vector_times_matrix_split_by_columns_and_by_contraction() {
    let v = matrix(1, 4099, 5);
    let b = matrix(4099, 97, 13);
    check(&v, &b);
    let bt = matrix(97, 4099, 17).permute(&[1, 0]);
    check(&v, &bt);
}

/// Runs `f` on a pool of `threads` threads, so the kernel splits for that thread count.
fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
        .install(f)
}

/// `a·b` (a 2-D `a` and `b` of one float dtype, any strides) by a loop in f64, with each
/// output's forward error bound in `a`'s precision for a `k`-term dot product: `(k + 1)·u`
/// times the sum of the terms' magnitudes.
fn bounded_reference(a: &Tensor, b: &Tensor) -> Vec<(f64, f64)> {
    let (m, k, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    let u = if a.dtype() == DType::F32 {
        f64::from(f32::EPSILON) / 2.0
    } else {
        f64::EPSILON / 2.0
    };
    // C-ordered f64 copies of the (possibly strided) operands.
    let (a, b) = (a.to_vec_as::<f64>(), b.to_vec_as::<f64>());
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let (mut want, mut size) = (0.0, 0.0);
            for q in 0..k {
                let t = a[i * k + q] * b[q * n + j];
                want += t;
                size += t.abs();
            }
            out.push((want, (k as f64 + 1.0) * u * size));
        }
    }
    out
}

/// `a·b` on a pool of `threads` threads, checked against `want` (from [`bounded_reference`]).
fn check_on(threads: usize, a: &Tensor, b: &Tensor, want: &[(f64, f64)]) -> Tensor {
    let product = on_threads(threads, || matmul(a, b));
    assert_eq!(product.shape(), &[a.shape()[0], b.shape()[1]]);
    assert_eq!(product.dtype(), a.dtype());
    let got = product.to_vec_as::<f64>();
    assert_eq!(got.len(), want.len());
    for (i, (g, &(w, bound))) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= bound,
            "element {i} of {:?}·{:?} on {threads} threads: {g} != {w}",
            a.shape(),
            b.shape()
        );
    }
    product
}

#[test]
fn split_products_on_one_and_two_threads_match_a_loop_and_repeat_exactly() {
    // 4099·67 multiply-adds are above the split threshold (2^18); 4099 is prime, so no split
    // divides the rows or the contraction evenly.
    let (rows, cols) = (4099, 67);
    for dtype in [DType::F32, DType::F64] {
        let x = matrix(rows, cols, 7).cast(dtype);
        let wide = matrix(rows, 2 * cols, 19).cast(dtype);
        let cases = [
            // X·w: split by rows.
            (x.clone(), matrix(cols, 1, 3).cast(dtype)),
            // Xᵀ·r: split along the contraction, partial sums added.
            (x.permute(&[1, 0]), matrix(rows, 1, 11).cast(dtype)),
            // v·X: along the contraction; v·Xᵀ: by columns.
            (matrix(1, rows, 5).cast(dtype), x.clone()),
            (matrix(1, cols, 5).cast(dtype), x.permute(&[1, 0])),
            // Every other column of a wider matrix, and the rows reversed.
            (
                wide.view(&[rows, cols], &[2 * cols as isize, 2], 1)
                    .unwrap(),
                matrix(cols, 1, 3).cast(dtype),
            ),
            (
                x.view(&[rows, cols], &[-(cols as isize), 1], (rows - 1) * cols)
                    .unwrap(),
                matrix(cols, 1, 3).cast(dtype),
            ),
            // Many rows of four: split by rows, each task a short contraction.
            (
                matrix(70_001, 4, 23).cast(dtype),
                matrix(4, 1, 29).cast(dtype),
            ),
        ];
        for (a, b) in &cases {
            let want = bounded_reference(a, b);
            check_on(1, a, b, &want);
            let two = check_on(2, a, b, &want);
            // One thread count, one result: the split does not depend on scheduling.
            let again = on_threads(2, || matmul(a, b));
            assert!(
                two.to_bytes() == again.to_bytes(),
                "{:?}·{:?} on two threads differs between calls",
                a.shape(),
                b.shape()
            );
        }
    }
}

#[test]
fn tiny_and_empty_products_on_one_and_two_threads() {
    let f32 = |t: Tensor| t.cast(DType::F32);
    let cases = [
        (matrix(3, 2, 1), matrix(2, 1, 2)),
        (matrix(1, 1, 1), matrix(1, 1, 2)),
        (f32(matrix(1, 3, 1)), f32(matrix(3, 1, 2))),
        // No rows, no columns, and a sum over nothing (zeros).
        (matrix(0, 5, 1), matrix(5, 1, 2)),
        (matrix(1, 5, 1), matrix(5, 0, 2)),
        (matrix(4, 0, 1), matrix(0, 1, 2)),
    ];
    for (a, b) in &cases {
        let want = bounded_reference(a, b);
        for threads in [1, 2] {
            check_on(threads, a, b, &want);
        }
    }
}
