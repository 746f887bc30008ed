//! C code generation: the translation units of a compiled function (a fixed prelude of
//! scalar helpers and declarations, then the code of each kernel), and the sources of the
//! shared objects it links: the drivers and the monoids of its reductions, each compiled once
//! per compiler and flags and kept by the cache.
//!
//! Equal kernels are emitted once: two nodes computing the same program (two `sigmoid`s of
//! `float64`, a gradient repeating a forward expression) share one exported function, and a
//! fused reduction reuses the block function of an equal elementwise kernel.

mod driver;
mod kernel;
mod matmul;
mod prelude;
mod program;
mod recurrence;
mod scalar;
mod special;
mod staged;
mod staged_branch;
mod staged_host;
mod staged_index;
mod staged_join;
mod staged_lower;
mod staged_nest;
mod staged_sum;
#[cfg(test)]
mod tests;

pub(crate) use program::Program;
pub(crate) use recurrence::{LoopProgram, ring_rows};
pub(crate) use staged::{Entry, Nest, Nested, Stage, StagedLoop, ValueKind, region_rank};
pub(crate) use staged_index::{TAKE, known_zero};

use oxtensor_data::DType;
use oxtensor_graph::ReduceOp;

/// What one kernel of a translation unit computes.
#[derive(PartialEq)]
pub(crate) enum KernelSource<'a> {
    /// An elementwise loop over a program (`ox_kN`).
    Elemwise(&'a Program),
    /// A reduction (`ox_rN`) of an input of dtype `input`, or of a fused program's output.
    Reduce {
        /// The combining function.
        op: ReduceOp,
        /// The reduced value's dtype when not fused.
        input: DType,
        /// The elementwise producer computed inside the reduction.
        fused: Option<&'a Program>,
    },
    /// A whole loop (`ox_sN`).
    Loop(&'a LoopProgram),
    /// A whole loop with a staged step (`ox_sN`).
    Staged(&'a StagedLoop),
}

/// Distinct kernels from which a function's code is split into two translation units, which
/// compile in parallel (see `docs/native-backend.md` for the measurements).
pub(crate) const SPLIT_AT: usize = 6;

/// A shared object: C compiled once per compiler and flags (the cache keeps the object),
/// and linked into every library that uses it.
pub(crate) struct Shared {
    /// What it holds (`drivers`, `monoid_sum_f64`, …).
    pub name: String,
    /// Its translation unit.
    pub source: String,
}

/// The generated code of a function.
pub(crate) struct Unit {
    /// The C source of each translation unit (two from [`SPLIT_AT`] distinct kernels on).
    pub parts: Vec<String>,
    /// The shared objects the units link: the drivers (unless every kernel is a whole loop),
    /// then the monoids they use.
    pub objects: Vec<Shared>,
    /// The exported function of each kernel, by kernel index (equal kernels share one).
    pub symbols: Vec<String>,
}

impl Unit {
    /// The number of distinct exported functions.
    pub fn distinct(&self) -> usize {
        let mut s: Vec<&String> = self.symbols.iter().collect();
        s.sort();
        s.dedup();
        s.len()
    }

    /// The whole source, parts one after the other (what the cache key hashes and the cache
    /// keeps for reading).
    pub fn text(&self) -> String {
        self.parts.join("\n/* ---- next translation unit ---- */\n")
    }
}

/// One translation unit being written: its text, the block functions it defines (static, so
/// each unit has its own) and the monoids it declares.
struct Part<'a> {
    source: String,
    blocks: Vec<(&'a Program, usize)>,
    monoids: Vec<String>,
}

/// The code of `kernels`: kernel `i` is exported as `symbols[i]`. Equal kernels are emitted
/// once; from [`SPLIT_AT`] distinct ones on, kernels go to two units, each new one to the
/// shorter.
pub(crate) fn translation_unit(kernels: &[KernelSource<'_>]) -> Unit {
    let distinct = (0..kernels.len())
        .filter(|&i| !kernels[..i].contains(&kernels[i]))
        .count();
    let n_parts = if distinct >= SPLIT_AT { 2 } else { 1 };
    let mut parts: Vec<Part<'_>> = (0..n_parts)
        .map(|_| Part {
            source: format!(
                "{}{}{}{}",
                prelude::HEADER,
                prelude::SCALAR,
                special::table(),
                driver::API
            ),
            blocks: Vec::new(),
            monoids: Vec::new(),
        })
        .collect();
    let mut n_blocks = 0;
    let mut symbols: Vec<String> = Vec::with_capacity(kernels.len());
    // Whole loops call no driver: a function of loops alone compiles and links one object less.
    let drivers = kernels
        .iter()
        .any(|k| !matches!(k, KernelSource::Loop(_) | KernelSource::Staged(_)));
    let mut objects: Vec<Shared> = drivers
        .then(|| Shared {
            name: "drivers".to_string(),
            source: driver::source(),
        })
        .into_iter()
        .collect();
    for (id, k) in kernels.iter().enumerate() {
        if let Some(first) = kernels[..id].iter().position(|e| e == k) {
            symbols.push(symbols[first].clone());
            continue;
        }
        let Some(part) = parts.iter_mut().min_by_key(|p| p.source.len()) else {
            continue;
        };
        match k {
            KernelSource::Elemwise(p) => {
                let b = block(p, part, &mut n_blocks);
                part.source.push_str(&kernel::elemwise(id, b, p));
                symbols.push(format!("ox_k{id}"));
            }
            KernelSource::Reduce { op, input, fused } => {
                let v = fused
                    .and_then(|p| p.outputs.first())
                    .map_or(*input, |o| o.1);
                let name = kernel::monoid_name(*op, v);
                let object = format!("monoid_{name}");
                if !objects.iter().any(|o| o.name == object) {
                    let source = format!(
                        "{}{}{}",
                        prelude::HEADER,
                        driver::API,
                        kernel::monoid_def(*op, v)
                    );
                    objects.push(Shared {
                        name: object,
                        source,
                    });
                }
                if !part.monoids.contains(&name) {
                    part.source.push('\n');
                    part.source.push_str(&kernel::monoid_decl(&name));
                    part.monoids.push(name.clone());
                }
                let (inputs, vals) = match fused {
                    Some(p) => (p.inputs.clone(), Some(block(p, part, &mut n_blocks))),
                    None => (vec![*input], None),
                };
                part.source
                    .push_str(&kernel::reduce(id, &name, &inputs, vals));
                symbols.push(format!("ox_r{id}"));
            }
            KernelSource::Loop(p) => {
                part.source.push('\n');
                part.source.push_str(&recurrence::emit(id, p));
                symbols.push(format!("ox_s{id}"));
            }
            KernelSource::Staged(p) => {
                part.source.push('\n');
                part.source.push_str(&staged::emit(id, p));
                symbols.push(format!("ox_s{id}"));
            }
        }
    }
    Unit {
        parts: parts.into_iter().map(|p| p.source).collect(),
        objects,
        symbols,
    }
}

/// The number of `p`'s block function in `part`, emitted there (numbered from `n_blocks`)
/// if no equal program has one.
fn block<'a>(p: &'a Program, part: &mut Part<'a>, n_blocks: &mut usize) -> usize {
    if let Some((_, b)) = part.blocks.iter().find(|(q, _)| *q == p) {
        return *b;
    }
    let b = *n_blocks;
    *n_blocks += 1;
    part.source.push('\n');
    part.source.push_str(&kernel::block(&b.to_string(), p));
    part.blocks.push((p, b));
    b
}
