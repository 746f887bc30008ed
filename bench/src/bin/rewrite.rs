//! The rewrite pipeline (`FAST_RUN`) on graphs of 1,000 / 3,000 / 10,000 nodes mixing patterns
//! of every pass (useless operations, canonical forms, stabilizations, specializations). Prints
//! the best of several runs, the time per node, and the same for an already-rewritten graph
//! (the cost of the sweeps that only confirm the fixpoint).
//!
//! `cargo run --release -p oxtensor-bench --bin rewrite`

use oxtensor::oxtensor_graph::{FunctionGraph, toposort};
use oxtensor::{DType, Mode, vector};
use oxtensor_bench::best;
use std::hint::black_box;

const REPS: usize = 5;

/// A graph of at least `n` apply nodes: a chain of blocks, each with about twenty nodes.
fn mixed_graph(n: usize) -> FunctionGraph {
    let x = vector("x", DType::F64);
    let w = vector("w", DType::F64);
    let mut acc = x.clone();
    let mut blocks = 0;
    while blocks % 16 != 0 || toposort(std::slice::from_ref(&acc)).len() < n {
        let t = ((&acc * 1.0 + 0.0).exp() - 1.0) * &w;
        let u = (1.0 + t.exp()).log() + x.powf(2.0);
        acc = (-(-&u)) / 3.0 + (&u - 2.0).sigmoid();
        blocks += 1;
    }
    FunctionGraph::new(vec![x, w], vec![acc]).unwrap_or_else(|e| panic!("graph: {e}"))
}

fn main() {
    let mode = Mode::FAST_RUN;
    println!("FAST_RUN rewrite, best of {REPS}");
    println!(
        "{:>8} {:>10} {:>12} {:>10} {:>14} {:>12}",
        "nodes", "rewrites", "time", "per node", "rewritten →", "re-run"
    );
    for n in [1_000, 3_000, 10_000] {
        let graph = mixed_graph(n);
        let nodes = graph.toposort().len();
        let (done, report) = mode
            .rewrite(&graph)
            .unwrap_or_else(|e| panic!("rewrite: {e}"));
        let t = best(REPS, || {
            black_box(mode.rewrite(&graph).expect("rewrite"));
        });
        let t_again = best(REPS, || {
            black_box(mode.rewrite(&done).expect("rewrite"));
        });
        println!(
            "{nodes:>8} {:>10} {:>9.2} ms {:>7.2} µs {:>8} nodes {:>9.2} ms",
            report.total_hits(),
            t * 1e3,
            t / nodes as f64 * 1e6,
            done.toposort().len(),
            t_again * 1e3
        );
        if n == 10_000 {
            print!("{report}");
        }
    }
}
