//! The C functions of one kernel: an elementwise loop (`ox_kN`) or a reduction (`ox_rN`),
//! both walking a merged strided space prepared on the Rust side (see `crate::walk`).
//!
//! Both share one inner structure: the space is walked run by run along its innermost
//! dimension, each run in blocks of `OX_BLK` elements. In a block, every operand is a
//! unit-stride pointer: the data itself when its innermost stride is 1, a buffer filled with
//! its value when the stride is 0 (broadcast), or a buffer gathered from its strided elements.
//! The block loop, over plain `restrict` pointers, is what GCC vectorises.

use super::program::Program;
use super::scalar::ctype;
use oxtensor_data::DType;
use oxtensor_graph::ReduceOp;
use std::fmt::Write;

/// `static inline int32_t NAME(int64_t n, <outs>, <ins>)`: the program over one block.
/// `outs` are the output pointers' C types and names.
fn block_fn(name: &str, p: &Program, outs: &[(String, String)]) -> String {
    let mut params = vec!["int64_t n".to_string()];
    for (ty, o) in outs {
        params.push(format!("{ty} *restrict {o}"));
    }
    for (i, &d) in p.inputs.iter().enumerate() {
        params.push(format!("const {} *restrict a{i}", ctype(d)));
    }
    let mut s = format!("static inline int32_t {name}({}) {{\n", params.join(", "));
    s.push_str("  int32_t bad = 0;\n  for (int64_t j = 0; j < n; j++) {\n");
    for (i, &d) in p.inputs.iter().enumerate() {
        let _ = writeln!(s, "    const {} x{i} = a{i}[j];", ctype(d));
    }
    for st in &p.stmts {
        let _ = writeln!(s, "    {st}");
    }
    for e in &p.errors {
        let _ = writeln!(s, "    bad |= {e};");
    }
    for ((_, o), (v, _)) in outs.iter().zip(&p.outputs) {
        let _ = writeln!(s, "    {o}[j] = {v};");
    }
    s.push_str("  }\n  return bad;\n}\n");
    s
}

/// Declarations of the typed base pointers `bK` and block buffers `bufK` of the operands.
fn operand_decls(inputs: &[DType], s: &mut String) {
    for (k, &d) in inputs.iter().enumerate() {
        let t = ctype(d);
        let _ = writeln!(s, "  const {t} *b{k} = (const {t} *)inp[{k}];");
        let _ = writeln!(s, "  {t} buf{k}[OX_BLK];");
    }
}

/// Fills the buffers of operands whose innermost stride `sK` is 0 with their value at `OFF[k]`
/// (once per run of `run` elements).
fn fill_broadcast(inputs: &[DType], off: &str, s: &mut String, indent: &str) {
    for k in 0..inputs.len() {
        let _ = writeln!(
            s,
            "{indent}if (s{k} == 0) {{ const int64_t c = run < OX_BLK ? run : OX_BLK; \
             for (int64_t j = 0; j < c; j++) buf{k}[j] = b{k}[{off}[{k}]]; }}"
        );
    }
}

/// Points `pK` at block `[s, s + n)` of each operand's run (gathering strided ones).
fn block_pointers(inputs: &[DType], off: &str, s: &mut String, indent: &str) {
    for (k, &d) in inputs.iter().enumerate() {
        let t = ctype(d);
        let _ = writeln!(
            s,
            "{indent}const {t} *p{k} = s{k} == 1 ? b{k} + {off}[{k}] + s : buf{k};\n\
             {indent}if (s{k} != 0 && s{k} != 1) for (int64_t j = 0; j < n; j++) \
             buf{k}[j] = b{k}[{off}[{k}] + (s + j) * s{k}];"
        );
    }
}

/// The elementwise kernel `ox_k{id}`:
///
/// ```c
/// int32_t ox_kN(int64_t start, int64_t end, int32_t ndim, const int64_t *dims,
///               const void *const *inp, const int64_t *istr, void *const *outp);
/// ```
///
/// computes flat output positions `[start, end)` of a walk of extents `dims` (`ndim` ≥ 1);
/// operand `k` starts at `inp[k]` with element strides `istr[k * ndim + d]`; outputs are
/// contiguous. Returns non-zero if some element is an error.
pub(crate) fn elemwise(id: usize, p: &Program) -> String {
    let n_in = p.inputs.len();
    let outs: Vec<(String, String)> = p
        .outputs
        .iter()
        .enumerate()
        .map(|(m, (_, d))| (ctype(*d).to_string(), format!("o{m}")))
        .collect();
    let mut s = block_fn(&format!("ox_blk{id}"), p, &outs);
    let _ = writeln!(
        s,
        "OX_EXPORT int32_t ox_k{id}(int64_t start, int64_t end, int32_t ndim, \
         const int64_t *dims, const void *const *inp, const int64_t *istr, void *const *outp) {{"
    );
    s.push_str("  if (ndim < 1 || ndim > OX_MAXDIM) return -1;\n");
    for (ty, o) in &outs {
        let m = &o[1..];
        let _ = writeln!(s, "  {ty} *{o} = ({ty} *)outp[{m}];");
    }
    operand_decls(&p.inputs, &mut s);
    let _ = writeln!(
        s,
        "  int64_t idx[OX_MAXDIM], off[{}];\n  ox_start(start, ndim, dims, idx);",
        n_in.max(1)
    );
    let _ = writeln!(
        s,
        "  for (int32_t k = 0; k < {n_in}; k++) off[k] = ox_offset(ndim, idx, istr + k * ndim);"
    );
    s.push_str("  int32_t bad = 0;\n  const int64_t inner = dims[ndim - 1];\n");
    s.push_str("  for (int64_t i = start; i < end;) {\n");
    s.push_str("    int64_t run = inner - idx[ndim - 1];\n    if (run > end - i) run = end - i;\n");
    for k in 0..n_in {
        let _ = writeln!(s, "    const int64_t s{k} = istr[{k} * ndim + ndim - 1];");
    }
    fill_broadcast(&p.inputs, "off", &mut s, "    ");
    s.push_str("    for (int64_t s = 0; s < run; s += OX_BLK) {\n");
    s.push_str("      const int64_t n = run - s < OX_BLK ? run - s : OX_BLK;\n");
    block_pointers(&p.inputs, "off", &mut s, "      ");
    let mut args = vec!["n".to_string()];
    args.extend(outs.iter().map(|(_, o)| format!("{o} + i + s")));
    args.extend((0..n_in).map(|k| format!("p{k}")));
    let _ = writeln!(s, "      bad |= ox_blk{id}({});", args.join(", "));
    s.push_str("    }\n");
    let _ = writeln!(
        s,
        "    i += run;\n    ox_advance(run, ndim, dims, idx, {n_in}, off, istr);\n  }}\n  return bad;\n}}"
    );
    s
}

/// How a reduction accumulates: accumulator type, identity, the C for folding one value in
/// (`push`) and merging two accumulators (`comb`), and the output conversion (`fin`), all as in
/// the interpreter's reducers (float sums in `f64`, integer sums and products in 64 bits with
/// wrapping, NaN-propagating max/min).
struct Monoid {
    acc: &'static str,
    ident: String,
    push: String,
    comb: String,
    fin: String,
}

fn monoid(op: ReduceOp, v: DType) -> Monoid {
    let out = op.output_dtype(v);
    let t = ctype(v);
    let wide = if v.is_signed_int() {
        "(uint64_t)(int64_t)x"
    } else {
        "(uint64_t)x"
    };
    let fin = format!("({})r", ctype(out));
    let m = |acc, ident: &str, push: String, comb: &str| Monoid {
        acc,
        ident: ident.to_string(),
        push,
        comb: comb.to_string(),
        fin: fin.clone(),
    };
    let (lo, hi) = extremes(v);
    match op {
        ReduceOp::Sum if v.is_float() => m("double", "0.0", "a + (double)x".into(), "a + b"),
        ReduceOp::Sum => m("uint64_t", "0", format!("a + {wide}"), "a + b"),
        ReduceOp::Prod if v.is_float() => m(ctype(v), "1", "a * x".into(), "a * b"),
        ReduceOp::Prod => m("uint64_t", "1", format!("a * {wide}"), "a * b"),
        ReduceOp::Max if v.is_float() => Monoid {
            acc: t,
            ident: lo,
            push: "((a > x) | (a != a)) ? a : x".into(),
            comb: "((a > b) | (a != a)) ? a : b".into(),
            fin,
        },
        ReduceOp::Max => m(t, &lo, "a > x ? a : x".into(), "a > b ? a : b"),
        ReduceOp::Min if v.is_float() => Monoid {
            acc: t,
            ident: hi,
            push: "((a < x) | (a != a)) ? a : x".into(),
            comb: "((a < b) | (a != a)) ? a : b".into(),
            fin,
        },
        ReduceOp::Min => m(t, &hi, "a < x ? a : x".into(), "a < b ? a : b"),
        ReduceOp::All => m("uint8_t", "1", "a & (x != 0)".into(), "a & b"),
        ReduceOp::Any => m("uint8_t", "0", "a | (x != 0)".into(), "a | b"),
    }
}

/// The identities of max and min: the lowest and highest values of `v` (∓∞ for floats).
fn extremes(v: DType) -> (String, String) {
    let (lo, hi) = match v {
        DType::Bool => ("0", "1"),
        DType::I8 => ("INT8_MIN", "INT8_MAX"),
        DType::I16 => ("INT16_MIN", "INT16_MAX"),
        DType::I32 => ("INT32_MIN", "INT32_MAX"),
        DType::I64 => ("INT64_MIN", "INT64_MAX"),
        DType::U8 => ("0", "UINT8_MAX"),
        DType::U16 => ("0", "UINT16_MAX"),
        DType::U32 => ("0", "UINT32_MAX"),
        DType::U64 => ("0", "UINT64_MAX"),
        DType::F32 => ("-__builtin_inff()", "__builtin_inff()"),
        DType::F64 => ("-__builtin_inf()", "__builtin_inf()"),
    };
    (lo.to_string(), hi.to_string())
}

/// Lanes of a leaf: independent accumulators (two AVX-512 vectors of `f64`).
const LANES: usize = 16;

/// The reduction kernel `ox_r{id}`:
///
/// ```c
/// int32_t ox_rN(int64_t ostart, int64_t oend, int32_t nk, const int64_t *kdims,
///               int32_t nr, const int64_t *rdims, const void *const *inp,
///               const int64_t *kstr, const int64_t *rstr, int32_t cols, void *outp);
/// ```
///
/// computes outputs `[ostart, oend)` (C order over the kept extents `kdims`), each reducing
/// the space `rdims`; operand `k` has kept strides `kstr[k * nk + d]` and reduced strides
/// `rstr[k * nr + d]`. The value reduced is operand 0 itself (`fused` is `None`) or the
/// fused program's output. With `cols`, consecutive outputs are reduced together, whole rows
/// at a time (every operand's innermost kept stride is 0 or 1); otherwise each output reduces
/// its own elements, run by run. Sums and products are pairwise over blocks of `OX_BLK`
/// elements (rows: leaves of 16 lanes) or of `OX_LEAF_ROWS` rows (columns).
pub(crate) fn reduce(id: usize, op: ReduceOp, input: DType, fused: Option<&Program>) -> String {
    let inputs: Vec<DType> = fused.map_or_else(|| vec![input], |p| p.inputs.clone());
    let n_in = inputs.len();
    let v = fused.and_then(|p| p.outputs.first()).map_or(input, |o| o.1);
    let vt = ctype(v);
    let m = monoid(op, v);
    let acc = m.acc;
    let mut s = String::new();
    if let Some(p) = fused {
        s.push_str(&block_fn(
            &format!("ox_val{id}"),
            p,
            &[(vt.to_string(), "v".to_string())],
        ));
    }
    let _ = writeln!(
        s,
        "static inline {acc} ox_push{id}({acc} a, {vt} x) {{ return {}; }}\n\
         static inline {acc} ox_comb{id}({acc} a, {acc} b) {{ return {}; }}",
        m.push, m.comb
    );
    let _ = writeln!(
        s,
        "static inline {acc} ox_leaf{id}(int64_t n, const {vt} *restrict v) {{\n\
         \x20 {acc} l[{LANES}];\n\
         \x20 for (int q = 0; q < {LANES}; q++) l[q] = {ident};\n\
         \x20 int64_t j = 0;\n\
         \x20 for (; j + {LANES} <= n; j += {LANES})\n\
         \x20   for (int q = 0; q < {LANES}; q++) l[q] = ox_push{id}(l[q], v[j + q]);\n\
         \x20 {acc} last = {ident};\n\
         \x20 for (; j < n; j++) last = ox_push{id}(last, v[j]);\n\
         \x20 for (int w = {LANES} / 2; w >= 1; w /= 2)\n\
         \x20   for (int q = 0; q < w; q++) l[q] = ox_comb{id}(l[q], l[q + w]);\n\
         \x20 return ox_comb{id}(l[0], last);\n}}",
        ident = m.ident
    );
    let ot = ctype(op.output_dtype(v));
    let _ = writeln!(
        s,
        "OX_EXPORT int32_t ox_r{id}(int64_t ostart, int64_t oend, int32_t nk, \
         const int64_t *kdims, int32_t nr, const int64_t *rdims, const void *const *inp, \
         const int64_t *kstr, const int64_t *rstr, int32_t cols, void *outp) {{"
    );
    s.push_str("  if (nk < 1 || nk > OX_MAXDIM || nr < 1 || nr > OX_MAXDIM) return -1;\n");
    let _ = writeln!(s, "  {ot} *out = ({ot} *)outp;");
    operand_decls(&inputs, &mut s);
    if fused.is_some() {
        let _ = writeln!(s, "  {vt} vals[OX_BLK];");
    }
    let _ = writeln!(
        s,
        "  int64_t kidx[OX_MAXDIM], ridx[OX_MAXDIM], koff[{n}], roff[{n}];\n\
         \x20 int32_t bad = 0;\n\
         \x20 int64_t rtotal = 1;\n\
         \x20 for (int32_t d = 0; d < nr; d++) rtotal *= rdims[d];\n\
         \x20 ox_start(ostart, nk, kdims, kidx);\n\
         \x20 for (int32_t k = 0; k < {n_in}; k++) koff[k] = ox_offset(nk, kidx, kstr + k * nk);",
        n = n_in
    );
    // The values of one block: `v` points at `n` of them.
    let values = |s: &mut String, indent: &str| {
        if fused.is_some() {
            let ps: Vec<String> = (0..n_in).map(|k| format!("p{k}")).collect();
            let _ = writeln!(
                s,
                "{indent}bad |= ox_val{id}(n, vals, {});\n{indent}const {vt} *v = vals;",
                ps.join(", ")
            );
        } else {
            let _ = writeln!(s, "{indent}const {vt} *v = p0;");
        }
    };

    // Rows: each output walks its reduced space run by run.
    s.push_str("  if (!cols) {\n    const int64_t run = rdims[nr - 1];\n");
    for k in 0..n_in {
        let _ = writeln!(s, "    const int64_t s{k} = rstr[{k} * nr + nr - 1];");
    }
    s.push_str("    for (int64_t o = ostart; o < oend; o++) {\n");
    let _ = writeln!(
        s,
        "      {acc} stack[64];\n      int sp = 0;\n      uint64_t cnt = 0;\n\
         \x20     for (int32_t d = 0; d < nr; d++) ridx[d] = 0;\n\
         \x20     for (int32_t k = 0; k < {n_in}; k++) roff[k] = koff[k];"
    );
    s.push_str("      for (int64_t i = 0; i < rtotal; i += run) {\n");
    fill_broadcast(&inputs, "roff", &mut s, "        ");
    s.push_str("        for (int64_t s = 0; s < run; s += OX_BLK) {\n");
    s.push_str("          const int64_t n = run - s < OX_BLK ? run - s : OX_BLK;\n");
    block_pointers(&inputs, "roff", &mut s, "          ");
    values(&mut s, "          ");
    let _ = writeln!(
        s,
        "          {acc} leaf = ox_leaf{id}(n, v);\n\
         \x20         for (uint64_t c = cnt++; c & 1; c >>= 1) leaf = ox_comb{id}(stack[--sp], leaf);\n\
         \x20         stack[sp++] = leaf;\n        }}\n\
         \x20       ox_advance(run, nr, rdims, ridx, {n_in}, roff, rstr);\n      }}\n\
         \x20     {acc} r = {ident};\n\
         \x20     if (sp > 0) {{ r = stack[sp - 1]; for (int q = sp - 2; q >= 0; q--) r = ox_comb{id}(stack[q], r); }}\n\
         \x20     out[o] = {fin};\n\
         \x20     ox_advance(1, nk, kdims, kidx, {n_in}, koff, kstr);\n    }}\n    return bad;\n  }}",
        ident = m.ident,
        fin = m.fin
    );

    // Columns: blocks of consecutive outputs accumulate whole rows elementwise.
    let _ = writeln!(
        s,
        "  {acc} leafv[OX_CBLK], cst[48][OX_CBLK];\n\
         \x20 const int64_t kin = kdims[nk - 1];"
    );
    for k in 0..n_in {
        let _ = writeln!(s, "  const int64_t s{k} = kstr[{k} * nk + nk - 1];");
    }
    s.push_str("  for (int64_t o = ostart; o < oend;) {\n");
    s.push_str(
        "    int64_t n = kin - kidx[nk - 1];\n    if (n > oend - o) n = oend - o;\n    \
         if (n > OX_CBLK) n = OX_CBLK;\n    const int64_t s = 0, run = n;\n    (void)s;\n",
    );
    let _ = writeln!(
        s,
        "    int csp = 0, rows = 0;\n    uint64_t ccnt = 0;\n\
         \x20   for (int64_t j = 0; j < n; j++) leafv[j] = {ident};\n\
         \x20   for (int32_t d = 0; d < nr; d++) ridx[d] = 0;\n\
         \x20   for (int32_t k = 0; k < {n_in}; k++) roff[k] = koff[k];\n\
         \x20   for (int64_t r = 0; r < rtotal; r++) {{",
        ident = m.ident
    );
    fill_broadcast(&inputs, "roff", &mut s, "      ");
    block_pointers(&inputs, "roff", &mut s, "      ");
    values(&mut s, "      ");
    let _ = writeln!(
        s,
        "      for (int64_t j = 0; j < n; j++) leafv[j] = ox_push{id}(leafv[j], v[j]);\n\
         \x20     if (++rows == OX_LEAF_ROWS || r + 1 == rtotal) {{\n\
         \x20       for (uint64_t c = ccnt++; c & 1; c >>= 1) {{\n\
         \x20         csp--;\n\
         \x20         for (int64_t j = 0; j < n; j++) leafv[j] = ox_comb{id}(cst[csp][j], leafv[j]);\n\
         \x20       }}\n\
         \x20       for (int64_t j = 0; j < n; j++) {{ cst[csp][j] = leafv[j]; leafv[j] = {ident}; }}\n\
         \x20       csp++;\n        rows = 0;\n      }}\n\
         \x20     ox_advance(1, nr, rdims, ridx, {n_in}, roff, rstr);\n    }}\n\
         \x20   for (int64_t j = 0; j < n; j++) {{\n\
         \x20     {acc} r = cst[csp - 1][j];\n\
         \x20     for (int q = csp - 2; q >= 0; q--) r = ox_comb{id}(cst[q][j], r);\n\
         \x20     out[o + j] = {fin};\n    }}\n\
         \x20   o += n;\n    ox_advance(n, nk, kdims, kidx, {n_in}, koff, kstr);\n  }}\n  return bad;\n}}",
        ident = m.ident,
        fin = m.fin
    );
    s
}
