//! The C of a [`Stage::Nest`](super::staged::Stage) of a staged loop: `rank` nested loops over
//! the iteration shape, each argument read at its own strides (0 along the dimensions it
//! broadcasts over), the program's outputs written at the outputs' strides, or, for a
//! reduction, folded into the output element the reduced axes collapse to (strides 0 there),
//! with the monoid of the native reduction kernels (the interpreter's semantics: float sums in
//! `double`, NaN-propagating max and min).

use super::kernel::monoid;
use super::scalar::ctype;
use super::staged::{Nest, StagedLoop};
use std::fmt::Write;

/// The C index `i0 * {p}0 + i1 * {p}1 + …` of an element at the strides held in the locals
/// `{p}0, {p}1, …` (see [`emit`]).
fn index(rank: usize, p: &str) -> String {
    if rank == 0 {
        return "0".to_string();
    }
    (0..rank)
        .map(|d| format!("i{d} * {p}{d}"))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Appends the C of nest `n` of `p` to `s` (inside the step loop, where each value `k` is
/// the pointer `vk` and `bad` collects element errors).
pub(super) fn emit(s: &mut String, p: &StagedLoop, n: &Nest) {
    let ty = |v: usize| ctype(p.values[v].ty.dtype);
    let (r, at) = (n.rank, n.at);
    s.push_str("    {\n");
    let reduce = n
        .reduce
        .as_ref()
        .zip(n.outs.first())
        .zip(n.program.outputs.first());
    if let Some(((&(op, _), &out), &(_, value_dtype))) = reduce {
        let m = monoid(op, value_dtype);
        let _ = writeln!(
            s,
            "      for (int64_t j = 0; j < d[{}]; j++) v{out}[j] = ({}){};",
            p.numel_at(out),
            ty(out),
            m.ident
        );
    }
    // Extents and strides in locals (`n{d}`, `a{k}_{d}`, `o{d}`), which the loops then
    // need not reload from `d` on every element.
    let local = |name: String, from: usize| format!("      const int64_t {name} = d[{from}];\n");
    for d in 0..r {
        s.push_str(&local(format!("n{d}"), at + d));
        for k in 0..n.args.len() {
            s.push_str(&local(format!("a{k}_{d}"), at + r * (1 + k) + d));
        }
        s.push_str(&local(format!("o{d}"), at + r * (1 + n.args.len()) + d));
    }
    for d in 0..r {
        // Elementwise nests write values no argument is: no iteration reads another's output.
        if d + 1 == r && n.reduce.is_none() {
            s.push_str("#pragma GCC ivdep\n");
        }
        let _ = writeln!(s, "      for (int64_t i{d} = 0; i{d} < n{d}; i{d}++)");
    }
    s.push_str("      {\n");
    for (k, &a) in n.args.iter().enumerate() {
        let _ = writeln!(
            s,
            "        const {} x{k} = v{a}[{}];",
            ty(a),
            index(r, &format!("a{k}_"))
        );
    }
    for st in &n.program.stmts {
        let _ = writeln!(s, "        {st}");
    }
    for e in &n.program.errors {
        let _ = writeln!(s, "        bad |= {e};");
    }
    let o = index(r, "o");
    match reduce {
        Some(((&(op, _), &out), (value, value_dtype))) => {
            let m = monoid(op, *value_dtype);
            let _ = writeln!(
                s,
                "        {{\n          {acc} a = ({acc})v{out}[{o}];\n          \
                 const {vt} x = {value};\n          v{out}[{o}] = ({ot})({push});\n        }}",
                acc = m.acc,
                vt = ctype(*value_dtype),
                ot = ty(out),
                push = m.push
            );
        }
        None => {
            for (out, (value, _)) in n.outs.iter().zip(&n.program.outputs) {
                let _ = writeln!(s, "        v{out}[{o}] = {value};");
            }
        }
    }
    s.push_str("      }\n    }\n");
}
