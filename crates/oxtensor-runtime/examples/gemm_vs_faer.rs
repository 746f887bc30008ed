//! The dense float kernel for `matmul`: `gemm` 0.19 against `faer` 0.24's `matmul` on W4's two
//! products (`bench/peers.py`: X 512×1024 · W1 1024×1024, then 512×1024 · W2 1024×256), f64
//! and f32, with one and two threads, interleaved in rounds (best time per row).
//!
//! `faer` is built without its `rayon` feature here, so its two-thread rows split the output's
//! rows into two panels and run one sequential product per panel on the rayon pool; `gemm`'s
//! run both its own `Parallelism::Rayon(2)` and that split. The one-thread `GemmPanels` row
//! computes the product in panels of 128 rows: what an epilogue applied to each panel right
//! after its product would cost in packing the right operand again.
//!
//! ```text
//! cargo run --release -p oxtensor-runtime --example gemm_vs_faer [rounds]
//! ```

use std::hint::black_box;
use std::time::Instant;

/// A dense float type both crates multiply.
trait Float: Copy + Send + Sync + faer::traits::ComplexField + 'static {
    /// `x` in this type.
    fn of(x: f64) -> Self;
    /// Zero and one.
    const ZERO_ONE: (Self, Self);
}

impl Float for f64 {
    fn of(x: f64) -> Self {
        x
    }
    const ZERO_ONE: (Self, Self) = (0.0, 1.0);
}

impl Float for f32 {
    fn of(x: f64) -> Self {
        x as f32
    }
    const ZERO_ONE: (Self, Self) = (0.0, 1.0);
}

/// Rows per panel of the one-thread `GemmPanels` rows: what re-packing the right operand per
/// panel costs.
const PANEL: usize = 128;

/// How to compute `dst := a·b` (all C-contiguous).
#[derive(Clone, Copy, Debug)]
enum Kernel {
    /// `gemm::gemm`, its own rayon parallelism when threads > 1.
    Gemm,
    /// `gemm::gemm` sequential per panel of rows, panels on the rayon pool (one thread:
    /// panels of [`PANEL`] rows, one after the other).
    GemmPanels,
    /// `faer::linalg::matmul::matmul`, sequential per panel of rows.
    Faer,
}

/// `dst := a·b` for C-contiguous `a` (m×k), `b` (k×n), `dst` (m×n) with `kernel` on `threads`.
fn product<T: Float>(
    kernel: Kernel,
    threads: usize,
    (m, n, k): (usize, usize, usize),
    a: &[T],
    b: &[T],
    dst: &mut [T],
) {
    let (zero, one) = T::ZERO_ONE;
    let panel = |rows: std::ops::Range<usize>, d: &mut [T], par: gemm::Parallelism| {
        let mm = rows.len();
        let ap = &a[rows.start * k..rows.end * k];
        match kernel {
            Kernel::Gemm | Kernel::GemmPanels => {
                // SAFETY: `ap` is mm×k, `b` k×n, `d` mm×n, all C-contiguous and in bounds.
                unsafe {
                    gemm::gemm(
                        mm,
                        n,
                        k,
                        d.as_mut_ptr(),
                        1,
                        n as isize,
                        false,
                        ap.as_ptr(),
                        1,
                        k as isize,
                        b.as_ptr(),
                        1,
                        n as isize,
                        zero,
                        one,
                        false,
                        false,
                        false,
                        par,
                    )
                }
            }
            Kernel::Faer => {
                // SAFETY: as above.
                let (dm, am, bm) = unsafe {
                    (
                        faer::MatMut::from_raw_parts_mut(d.as_mut_ptr(), mm, n, n as isize, 1),
                        faer::MatRef::from_raw_parts(ap.as_ptr(), mm, k, k as isize, 1),
                        faer::MatRef::from_raw_parts(b.as_ptr(), k, n, n as isize, 1),
                    )
                };
                faer::linalg::matmul::matmul(dm, faer::Accum::Replace, am, bm, one, faer::Par::Seq);
            }
        }
    };
    match (kernel, threads) {
        (Kernel::Gemm, t) if t > 1 => panel(0..m, dst, gemm::Parallelism::Rayon(t)),
        (Kernel::Gemm | Kernel::Faer, 1) => panel(0..m, dst, gemm::Parallelism::None),
        (_, t) => {
            let rows = if t == 1 { PANEL } else { m.div_ceil(t) };
            use rayon::prelude::*;
            dst.par_chunks_mut(rows * n).enumerate().for_each(|(i, d)| {
                let r0 = i * rows;
                panel(r0..r0 + d.len() / n, d, gemm::Parallelism::None)
            });
        }
    }
}

/// Best seconds per call of `f` over `reps` calls.
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// One table for dtype `T`: every (shape, kernel, threads) row, best over `rounds`.
fn table<T: Float>(
    name: &str,
    rounds: usize,
    pool2: &rayon::ThreadPool,
    pool1: &rayon::ThreadPool,
) {
    let shapes = [(512usize, 1024usize, 1024usize), (512, 256, 1024)];
    let rows: Vec<((usize, usize, usize), Kernel, usize)> = shapes
        .iter()
        .flat_map(|&s| {
            [Kernel::Gemm, Kernel::GemmPanels, Kernel::Faer]
                .into_iter()
                .flat_map(move |kern| [1usize, 2].into_iter().map(move |t| (s, kern, t)))
        })
        .collect();
    let mut times = vec![f64::INFINITY; rows.len()];
    let data = |len: usize, seed: u64| -> Vec<T> {
        (0..len as u64)
            .map(|i| T::of((((i * 2654435761 + seed) % 1000) as f64 - 500.0) / 700.0))
            .collect()
    };
    for _ in 0..rounds {
        for (row, t) in rows.iter().zip(&mut times) {
            let ((m, n, k), kern, threads) = *row;
            let (a, b) = (data(m * k, 1), data(k * n, 2));
            let mut d = vec![T::ZERO_ONE.0; m * n];
            let pool = if threads == 1 { pool1 } else { pool2 };
            let s = pool.install(|| {
                best(3, || {
                    product(
                        kern,
                        threads,
                        (m, n, k),
                        black_box(&a),
                        black_box(&b),
                        &mut d,
                    )
                })
            });
            *t = t.min(s);
        }
    }
    println!("{name}");
    for (((m, n, k), kern, threads), t) in rows.iter().zip(&times) {
        let gflops = 2.0 * (m * n * k) as f64 / t / 1e9;
        println!(
            "  {m}x{k}·{k}x{n}  {:<11} {threads} thr  {:8.3} ms  {gflops:6.1} GFLOP/s",
            format!("{kern:?}"),
            t * 1e3
        );
    }
}

fn main() {
    let rounds = std::env::args()
        .nth(1)
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let pool1 = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("pool");
    let pool2 = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("pool");
    table::<f64>("float64", rounds, &pool2, &pool1);
    table::<f32>("float32", rounds, &pool2, &pool1);
}
