//! Large matrix-vector and vector-matrix products, which the matmul kernel splits across
//! threads (by outputs or along the contracted dimension), against a plain loop.

use oxtensor_data::Tensor;
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
