//! Whole loops in C: a [`Scan`] whose step is elementwise (every step value has one shape, or
//! is a scalar every element reads) becomes one C function running every step, with the step's
//! fused program inlined and the taps read straight out of the sequences and the states'
//! trajectories. Nothing returns to Rust between steps.
//!
//! The step's outputs are written into their trajectory buffers, which the executor allocates
//! (each state's with its initial values in front, so its taps are rows before the current
//! one), and which become the node's outputs.

use super::program::Program;
use super::scalar::ctype;
use oxtensor_graph::{FrozenGraph, NodeKind, Scan, Var, toposort};
use rustc_hash::FxHashSet;
use std::fmt::Write;

/// A loop C can run whole (see the module documentation).
#[derive(PartialEq)]
pub(crate) struct LoopProgram {
    /// The step: inputs are the body's (each sequence's taps, each state's taps, the other
    /// values); outputs the states' next values, the mapped outputs and the `until` condition.
    pub body: Program,
    /// Per body input: whether it holds one value per element (else one value read by all).
    pub full: Vec<bool>,
    /// Whether the step values have elements to loop over (rank above 0).
    pub elementwise: bool,
    /// Per sequence, its taps.
    pub sequence_taps: Vec<Vec<i64>>,
    /// Per state, its taps.
    pub state_taps: Vec<Vec<i64>>,
    /// The number of mapped outputs.
    pub n_mapped: usize,
    /// Whether sequences are read from their last window.
    pub go_backwards: bool,
    /// Whether the last output stops the loop.
    pub until: bool,
    /// Per output, the rows of its ring buffer when only its last value is used (0: it keeps
    /// its whole trajectory); see [`ring_rows`].
    pub ring: Vec<usize>,
}

/// The rows output `i` of `s` keeps: 0 for the whole trajectory; when only its last value is
/// used ([`Scan::last_only`]), a ring of the rows the loop still reads (a state's `need`
/// earlier values and the current one; one for a mapped output). Step `t` writes row
/// `(t + need) % rows`.
pub(crate) fn ring_rows(s: &Scan, i: usize) -> usize {
    if !s.keeps_last_only(i) {
        return 0;
    }
    s.state_taps.get(i).map_or(0, |taps| Scan::buffer_len(taps)) + 1
}

/// The placeholders each output of `g` depends on.
fn reads(g: &FrozenGraph) -> Vec<FxHashSet<usize>> {
    let mut of: rustc_hash::FxHashMap<Var, FxHashSet<usize>> = Default::default();
    let get = |v: &Var, of: &rustc_hash::FxHashMap<Var, FxHashSet<usize>>| match v.node().kind() {
        NodeKind::Placeholder(i) => std::iter::once(*i).collect(),
        _ => of.get(v).cloned().unwrap_or_default(),
    };
    for node in toposort(g.outputs()) {
        let mut all = FxHashSet::default();
        for v in node.inputs() {
            all.extend(get(v, &of));
        }
        for k in 0..node.types().len() {
            of.insert(Var::output_of(&node, k), all.clone());
        }
    }
    g.outputs().iter().map(|o| get(o, &of)).collect()
}

impl LoopProgram {
    /// The C loop of `s`, or `None` when its step is not elementwise: some inner node is not
    /// an elementwise op or Composite; a step value's rank is neither the states' nor 0; an
    /// output of that rank reads no value of that rank (its shape would not be the states');
    /// a state's next value has another dtype than the state; or an `until` loop steps arrays.
    pub fn of_scan(s: &Scan) -> Option<LoopProgram> {
        let body = Program::composite(&s.body)?;
        let inputs = s.body.input_types();
        let outputs = s.body.outputs();
        let n_values = outputs.len() - usize::from(s.until);
        let rank = outputs.first()?.ty().ndim();
        if outputs[..n_values].iter().any(|o| o.ty().ndim() != rank)
            || inputs.iter().any(|t| t.ndim() != rank && t.ndim() != 0)
            || (s.until && (rank != 0 || outputs.last()?.ty().ndim() != 0))
        {
            return None;
        }
        let full: Vec<bool> = inputs
            .iter()
            .map(|t| rank > 0 && t.ndim() == rank)
            .collect();
        let reach = reads(&s.body);
        if rank > 0
            && reach[..n_values]
                .iter()
                .any(|r| !r.iter().any(|&i| full[i]))
        {
            return None;
        }
        let n_seq_taps: usize = s.sequence_taps.iter().map(Vec::len).sum();
        let mut at = n_seq_taps;
        for (i, taps) in s.state_taps.iter().enumerate() {
            let state = inputs[at..at + taps.len()].iter();
            if state.clone().any(|t| t.dtype != outputs[i].dtype()) {
                return None;
            }
            at += taps.len();
        }
        Some(LoopProgram {
            body,
            full,
            elementwise: rank > 0,
            sequence_taps: s.sequence_taps.clone(),
            state_taps: s.state_taps.clone(),
            n_mapped: s.n_mapped,
            go_backwards: s.go_backwards,
            until: s.until,
            ring: (0..s.n_outputs()).map(|i| ring_rows(s, i)).collect(),
        })
    }
}

/// For each sequence tap in body-input order: its sequence and the C expression of the row it
/// reads at step `t` (windows counted from the end when the loop goes backwards).
pub(super) fn sequence_rows(
    sequence_taps: &[Vec<i64>],
    go_backwards: bool,
) -> impl Iterator<Item = (usize, String)> + '_ {
    sequence_taps.iter().enumerate().flat_map(move |(i, taps)| {
        let window = if go_backwards {
            format!("(win[{i}] - 1 - t)")
        } else {
            "t".to_string()
        };
        let offset = taps.first().map_or(0, |&t| (-t).max(0));
        taps.iter()
            .map(move |&tap| (i, format!("({window} + {})", offset + tap)))
    })
}

/// The C row index `at` of a buffer of `ring` rows (0: not a ring).
pub(super) fn row(at: &str, ring: usize) -> String {
    if ring == 0 {
        format!("({at})")
    } else {
        format!("(({at}) % {ring})")
    }
}

/// The exported loop `ox_s{id}`:
///
/// ```c
/// int32_t ox_sN(int64_t total, int64_t n, const void *const *seq, const int64_t *win,
///               const void *const *oth, void *const *buf, int64_t *done);
/// ```
///
/// runs up to `total` steps over step values of `n` elements. Sequence `i` is `seq[i]`,
/// C-contiguous rows of `n` elements, of which `win[i]` windows fit its taps. State `i`'s
/// buffer `buf[i]` holds its `-min(taps)` initial rows, then one row per step, which the loop
/// writes; mapped output `m`'s buffer `buf[n_states + m]` one row per step. Other value `k` is
/// `oth[k]`: `n` contiguous elements, or one. Sets `*done` to the number of steps run (fewer
/// than `total` when the `until` condition held). An output that keeps only its last value
/// writes into a ring of [`ring_rows`] rows instead. Returns non-zero if an element was an error,
/// and the executor then runs the loop in the interpreter, which reports it.
pub(crate) fn emit(id: usize, p: &LoopProgram) -> String {
    emit_named(&format!("ox_s{id}"), "OX_EXPORT", p)
}

/// The loop of `p` as the C function `name`, declared with `linkage` (`OX_EXPORT`, or `static`
/// for a loop nested in a staged step).
pub(crate) fn emit_named(name: &str, linkage: &str, p: &LoopProgram) -> String {
    let ty = |k: usize| ctype(p.body.inputs[k]);
    let mut s = format!(
        "{linkage} int32_t {name}(int64_t total, int64_t n, const void *const *seq, \
         const int64_t *win, const void *const *oth, void *const *buf, int64_t *done) {{\n\
         \x20 (void)n; (void)seq; (void)win; (void)oth;\n"
    );
    // A scalar loop keeps each state's last values in registers (`r{i}_{m}`: `m` steps back),
    // so the chain from one step to the next does not go through memory.
    let n_seq_taps: usize = p.sequence_taps.iter().map(Vec::len).sum();
    let mut state_type = n_seq_taps;
    if !p.elementwise {
        for (i, taps) in p.state_taps.iter().enumerate() {
            let need = Scan::buffer_len(taps);
            let t = ty(state_type);
            for m in 1..=need {
                let _ = writeln!(s, "  {t} r{i}_{m} = ((const {t} *)buf[{i}])[{}];", need - m);
            }
            state_type += taps.len();
        }
    }
    s.push_str("  for (int64_t t = 0; t < total; t++) {\n");
    let mut k = 0;
    for (i, row) in sequence_rows(&p.sequence_taps, p.go_backwards) {
        let _ = writeln!(
            s,
            "    const {t} *p{k} = (const {t} *)seq[{i}] + {row} * n;",
            t = ty(k)
        );
        k += 1;
    }
    // Where each input is read from in the step: `p{k}[j]`, `p{k}[0]` or a register.
    let mut read: Vec<String> = p
        .full
        .iter()
        .enumerate()
        .map(|(k, &full)| format!("p{k}[{}]", if full { "j" } else { "0" }))
        .collect();
    for (i, taps) in p.state_taps.iter().enumerate() {
        let need = Scan::buffer_len(taps) as i64;
        for &tap in taps {
            if p.elementwise {
                let _ = writeln!(
                    s,
                    "    const {t} *p{k} = (const {t} *)buf[{i}] + {} * n;",
                    row(&format!("t + {}", need + tap), p.ring[i]),
                    t = ty(k)
                );
            } else {
                read[k] = format!("r{i}_{}", -tap);
            }
            k += 1;
        }
    }
    for o in 0..p.body.inputs.len() - k {
        let _ = writeln!(
            s,
            "    const {t} *p{i} = (const {t} *)oth[{o}];",
            i = k + o,
            t = ty(k + o)
        );
    }
    let n_states = p.state_taps.len();
    for (m, (_, d)) in p.body.outputs[..n_states + p.n_mapped].iter().enumerate() {
        let at = match p.state_taps.get(m) {
            Some(taps) => format!("t + {}", Scan::buffer_len(taps)),
            None => "t".to_string(),
        };
        let _ = writeln!(
            s,
            "    {t} *q{m} = ({t} *)buf[{m}] + {} * n;",
            row(&at, p.ring[m]),
            t = ctype(*d)
        );
    }
    s.push_str("    int32_t bad = 0;\n    uint8_t stop = 0;\n");
    if p.elementwise {
        s.push_str("#pragma GCC ivdep\n    for (int64_t j = 0; j < n; j++) {\n");
    } else {
        s.push_str("    {\n      const int64_t j = 0;\n      (void)j;\n");
    }
    for (k, from) in read.iter().enumerate() {
        let _ = writeln!(s, "      const {} x{k} = {from};", ty(k));
    }
    for st in &p.body.stmts {
        let _ = writeln!(s, "      {st}");
    }
    for e in &p.body.errors {
        let _ = writeln!(s, "      bad |= {e};");
    }
    for (m, (v, _)) in p.body.outputs[..n_states + p.n_mapped].iter().enumerate() {
        let _ = writeln!(s, "      q{m}[j] = {v};");
    }
    if !p.elementwise {
        for (i, taps) in p.state_taps.iter().enumerate() {
            for m in (2..=Scan::buffer_len(taps)).rev() {
                let _ = writeln!(s, "      r{i}_{m} = r{i}_{};", m - 1);
            }
            if let Some((v, _)) = p.body.outputs.get(i).filter(|_| !taps.is_empty()) {
                let _ = writeln!(s, "      r{i}_1 = {v};");
            }
        }
    }
    if p.until
        && let Some((v, _)) = p.body.outputs.last()
    {
        let _ = writeln!(s, "      stop = ({v}) != 0;");
    }
    s.push_str(
        "    }\n    if (bad) return 1;\n    if (stop) { *done = t + 1; return 0; }\n  }\n  \
         *done = total;\n  return 0;\n}\n",
    );
    s
}
