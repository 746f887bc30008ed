//! Times the kernels on issue 14's benchmark shapes (fixed-seed inputs, one thread):
//! `bench_numpy.py` beside it times NumPy/SciPy (and JAX, when installed) on the same shapes,
//! so the two outputs give kernel-level ratios without a Python build of oxtensor. Run with
//! `RAYON_NUM_THREADS=1 cargo run --release -p oxtensor-linalg --example bench` and
//! `python3 crates/oxtensor-linalg/examples/bench_numpy.py` (an argument to either keeps the
//! lines whose name contains it, e.g. `batched`); each line is the best of several
//! repetitions (the least disturbed by other load), in milliseconds.

use oxtensor_data::Tensor;
use oxtensor_linalg as la;
use std::time::{Duration, Instant};

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
        let gb = &g[b * n * n..(b + 1) * n * n];
        let ob = &mut out[b * n * n..(b + 1) * n * n];
        for i in 0..n {
            for j in 0..=i {
                let dot: f64 = (0..n).map(|k| gb[i * n + k] * gb[j * n + k]).sum();
                ob[i * n + j] = dot;
                ob[j * n + i] = dot;
            }
            ob[i * n + i] += n as f64;
        }
    }
    Tensor::from_slice(&out, &[batch, n, n]).expect("shape fits")
}

/// A diagonally shifted random matrix with `kl` sub- and `ku` superdiagonals.
fn banded(n: usize, kl: usize, ku: usize) -> Tensor {
    let g = data(&[n, n], 9).to_vec::<f64>().expect("f64");
    let mut out = vec![0.0; n * n];
    for i in 0..n {
        for j in i.saturating_sub(kl)..(i + ku + 1).min(n) {
            out[i * n + j] = g[i * n + j] + if i == j { 2.0 } else { 0.0 };
        }
    }
    Tensor::from_slice(&out, &[n, n]).expect("shape fits")
}

/// Prints the best time of `f` over repetitions filling about half a second (3 at least),
/// when `name` contains the command line's first argument (if any).
fn time(name: &str, shape: &str, f: impl Fn() -> Result<Vec<Tensor>, la::LinalgError>) {
    if std::env::args()
        .nth(1)
        .is_some_and(|only| !name.contains(&only))
    {
        return;
    }
    f().expect("op runs");
    let mut best = Duration::MAX;
    let start = Instant::now();
    let mut reps = 0;
    while reps < 3 || (start.elapsed() < Duration::from_millis(500) && reps < 200) {
        let t = Instant::now();
        f().expect("op runs");
        best = best.min(t.elapsed());
        reps += 1;
    }
    println!("{name:24} {shape:12} {:10.4} ms", best.as_secs_f64() * 1e3);
}

fn main() {
    let (a, b) = (spd(1000, 8), data(&[1000, 8], 3));
    let vector = Some(1);
    time("batched chol+cho_solve", "1000x8x8", || {
        let l = la::cholesky(&[&a], &la::CholeskyParams::default())?.remove(0);
        let x = la::cho_solve(
            &[&l, &b],
            &la::ChoSolveParams {
                lower: true,
                b_ndim: vector,
            },
        )?;
        Ok(vec![l, x.into_iter().next().expect("x")])
    });
    time("batched cholesky", "1000x8x8", || {
        la::cholesky(&[&a], &la::CholeskyParams::default())
    });
    let l = la::cholesky(&[&a], &la::CholeskyParams::default())
        .expect("spd")
        .remove(0);
    time("batched cho_solve", "1000x8x8", || {
        la::cho_solve(
            &[&l, &b],
            &la::ChoSolveParams {
                lower: true,
                b_ndim: vector,
            },
        )
    });
    time("batched solve", "1000x8x8", || {
        la::solve(
            &[&a, &b],
            &la::SolveParams {
                b_ndim: vector,
                ..Default::default()
            },
        )
    });
    time("batched det", "1000x8x8", || la::det(&[&a]));
    for (n, kl, ku) in [(1000, 1, 1), (10000, 1, 1), (2000, 3, 2)] {
        let t = banded(n, kl, ku);
        let rhs = data(&[n], 4);
        let assume_a = if kl == 1 && ku == 1 {
            la::AssumeA::Tridiagonal
        } else {
            la::AssumeA::Banded
        };
        time(&format!("solve {assume_a:?}"), &format!("n={n}"), || {
            la::solve(
                &[&t, &rhs],
                &la::SolveParams {
                    assume_a,
                    ..Default::default()
                },
            )
        });
    }
    for n in [100, 500, 2000] {
        let s = spd(1, n);
        let g = data(&[n, n], 5);
        let rhs = data(&[n, 1], 3);
        let shape = format!("n={n}");
        time("cholesky", &shape, || {
            la::cholesky(&[&s], &la::CholeskyParams::default())
        });
        time("solve", &shape, || {
            la::solve(&[&g, &rhs], &la::SolveParams::default())
        });
        time("eigh", &shape, || la::eigh(&[&s], true));
        time("eigvalsh", &shape, || la::eigvalsh(&[&s], true));
        time("svd", &shape, || {
            la::svd(
                &[&g],
                &la::SvdParams {
                    full_matrices: false,
                    compute_uv: true,
                },
            )
        });
        time("svd values", &shape, || {
            la::svd(
                &[&g],
                &la::SvdParams {
                    full_matrices: false,
                    compute_uv: false,
                },
            )
        });
        time("qr", &shape, || la::qr(&[&g], la::QrMode::Reduced));
        time("det", &shape, || la::det(&[&g]));
    }
}
