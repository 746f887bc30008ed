//! Times a few kernels on fixed-seed inputs; `bench_numpy.py` beside it times NumPy/SciPy on
//! the same shapes. Run with `cargo run --release -p oxtensor-linalg --example bench`.

use oxtensor_data::Tensor;
use oxtensor_linalg as la;
use std::time::Instant;

fn data(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed;
    let v: Vec<f64> = (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    Tensor::from_slice(&v, shape).expect("shape fits")
}

/// `G Gᵀ + n I` for every batch element: symmetric positive definite.
fn spd(batch: usize, n: usize) -> Tensor {
    let g = data(&[batch, n, n], 7).to_vec::<f64>().expect("f64");
    let mut out = vec![0.0; batch * n * n];
    for b in 0..batch {
        let o = b * n * n;
        for i in 0..n {
            for j in 0..n {
                let dot: f64 = (0..n).map(|k| g[o + i * n + k] * g[o + j * n + k]).sum();
                out[o + i * n + j] = dot + if i == j { n as f64 } else { 0.0 };
            }
        }
    }
    Tensor::from_slice(&out, &[batch, n, n]).expect("shape fits")
}

fn time(name: &str, batch: usize, n: usize, f: impl Fn() -> Result<Vec<Tensor>, la::LinalgError>) {
    f().expect("op runs");
    let reps = 5;
    let start = Instant::now();
    for _ in 0..reps {
        f().expect("op runs");
    }
    let ms = start.elapsed().as_secs_f64() * 1e3 / reps as f64;
    println!("{name:10} batch={batch:5} n={n:4} {ms:10.3} ms");
}

fn main() {
    for &(batch, n) in &[(1000, 4), (100, 32), (1, 256), (1, 512)] {
        let a = spd(batch, n);
        let b = data(&[batch, n, 1], 3);
        let g = data(&[batch, n, n], 5);
        time("cholesky", batch, n, || {
            la::cholesky(&[&a], &la::CholeskyParams::default())
        });
        time("solve", batch, n, || {
            la::solve(&[&g, &b], &la::SolveParams::default())
        });
        time("inv", batch, n, || la::inv(&[&g]));
        time("det", batch, n, || la::det(&[&g]));
        time("eigh", batch, n, || la::eigh(&[&a], true));
        time("svd", batch, n, || {
            la::svd(
                &[&g],
                &la::SvdParams {
                    full_matrices: false,
                    compute_uv: true,
                },
            )
        });
        time("expm", batch, n, || la::expm(&[&g]));
    }
}
