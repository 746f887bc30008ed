//! The C of one kernel: the block loop of an elementwise program, the combining functions of
//! a reduction's monoid, and the exported entry points `ox_kN` and `ox_rN`, which hand those
//! to the shared drivers of [`super::driver`].
//!
//! The drivers walk the strided space run by run along its innermost dimension, each run in
//! blocks of `OX_BLK` elements, and give a block function unit-stride pointers: the data
//! itself when its innermost stride is 1, a buffer filled with its value when the stride is 0
//! (broadcast), or a buffer gathered from its strided elements. The block loop, over plain
//! unit-stride pointers, is what GCC vectorises; it is all the per-kernel code there is. The
//! monoids are compiled once into shared objects; a kernel's unit only declares its monoid.

use super::program::Program;
use super::scalar::ctype;
use oxtensor_data::DType;
use oxtensor_graph::ReduceOp;
use std::fmt::Write;

/// The block function `ox_blk{name}` of `p`, with the `ox_blk_t` signature of the drivers:
///
/// ```c
/// int32_t ox_blkN(int64_t n, void *const *o, const void *const *a);
/// ```
///
/// computes `n` elements of each output `o[m]` (of the program's output dtypes) from the
/// unit-stride inputs `a[k]`, and returns non-zero if some element is an error. The loop is in
/// `ox_bodyN`. An output may be exactly an input (the same address and element size: written
/// in place), which is well defined here: each iteration reads its elements before writing
/// them and touches no other iteration's. So the pointers are not `restrict`, and
/// `#pragma GCC ivdep` (no dependence between iterations, true in that case too) lets GCC
/// vectorise the loop without run-time alias checks. The drivers route any other overlap
/// through a scratch buffer.
pub(crate) fn block(name: &str, p: &Program) -> String {
    let mut params = vec!["int64_t n".to_string()];
    let mut args = vec!["n".to_string()];
    for (m, (_, d)) in p.outputs.iter().enumerate() {
        let t = ctype(*d);
        params.push(format!("{t} *o{m}"));
        args.push(format!("({t} *)o[{m}]"));
    }
    for (k, &d) in p.inputs.iter().enumerate() {
        let t = ctype(d);
        params.push(format!("const {t} *a{k}"));
        args.push(format!("(const {t} *)a[{k}]"));
    }
    let mut s = format!(
        "static inline int32_t ox_body{name}({}) {{\n",
        params.join(", ")
    );
    s.push_str("  int32_t bad = 0;\n#pragma GCC ivdep\n  for (int64_t j = 0; j < n; j++) {\n");
    for (k, &d) in p.inputs.iter().enumerate() {
        let _ = writeln!(s, "    const {} x{k} = a{k}[j];", ctype(d));
    }
    for st in &p.stmts {
        let _ = writeln!(s, "    {st}");
    }
    for e in &p.errors {
        let _ = writeln!(s, "    bad |= {e};");
    }
    for (m, (v, _)) in p.outputs.iter().enumerate() {
        let _ = writeln!(s, "    o{m}[j] = {v};");
    }
    s.push_str("  }\n  return bad;\n}\n");
    let _ = writeln!(
        s,
        "static int32_t ox_blk{name}(int64_t n, void *const *o, const void *const *a) {{\n\
         \x20 return ox_body{name}({});\n}}",
        args.join(", ")
    );
    s
}

/// A C array of the element sizes of `dtypes` (one `0` when empty: C has no empty arrays).
fn sizes(dtypes: impl Iterator<Item = DType>) -> String {
    let v: Vec<String> = dtypes.map(|d| d.size().to_string()).collect();
    if v.is_empty() {
        "0".to_string()
    } else {
        v.join(", ")
    }
}

/// The elementwise kernel `ox_k{id}`, running block function `ox_blk{blk}` of `p`:
///
/// ```c
/// int32_t ox_kN(int64_t start, int64_t end, int32_t ndim, const int64_t *dims,
///               const void *const *inp, const int64_t *istr, void *const *outp);
/// ```
///
/// computes flat output positions `[start, end)` of a walk of extents `dims` (`ndim` ≥ 1);
/// operand `k` starts at `inp[k]` with element strides `istr[k * ndim + d]`; outputs are
/// contiguous, and may be the memory of an input read with the outputs' layout (written in
/// place). Returns non-zero if some element is an error.
///
/// A kernel that can fail (`p.errors`) tells the driver so: an output written in place then
/// goes through a scratch buffer, so that the failing block's inputs stay as they were.
pub(crate) fn elemwise(id: usize, blk: usize, p: &Program) -> String {
    format!(
        "static const uint8_t ox_isz{id}[] = {{{}}}, ox_osz{id}[] = {{{}}};\n\
         OX_EXPORT int32_t ox_k{id}(int64_t start, int64_t end, int32_t ndim, \
         const int64_t *dims, const void *const *inp, const int64_t *istr, void *const *outp) {{\n\
         \x20 return ox_map(ox_blk{blk}, {}, {}, ox_isz{id}, {}, ox_osz{id}, start, end, ndim, \
         dims, inp, istr, outp);\n}}\n",
        sizes(p.inputs.iter().copied()),
        sizes(p.outputs.iter().map(|o| o.1)),
        i32::from(!p.errors.is_empty()),
        p.inputs.len(),
        p.outputs.len(),
    )
}

/// How a reduction accumulates: accumulator type, identity, the C for folding one value in
/// (`push`) and merging two accumulators (`comb`), and the output conversion (`fin`), all as in
/// the interpreter's reducers (float sums in `f64`, integer sums and products in 64 bits with
/// wrapping, NaN-propagating max/min).
pub(super) struct Monoid {
    pub(super) acc: &'static str,
    pub(super) ident: String,
    pub(super) push: String,
    comb: String,
    fin: String,
}

pub(super) fn monoid(op: ReduceOp, v: DType) -> Monoid {
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
        DType::F32 | DType::C64 => ("-__builtin_inff()", "__builtin_inff()"),
        DType::F64 | DType::C128 => ("-__builtin_inf()", "__builtin_inf()"),
    };
    (lo.to_string(), hi.to_string())
}

/// Lanes of a leaf: independent accumulators (two AVX-512 vectors of `f64`).
const LANES: usize = 16;

/// The C name of the monoid of `op` over values of dtype `v` (`sum_f64`, `max_i32`, …).
pub(crate) fn monoid_name(op: ReduceOp, v: DType) -> String {
    format!(
        "{}_{}",
        format!("{op:?}").to_lowercase(),
        super::scalar::suffix(v)
    )
}

/// The field of the C union `ox_acc` holding a value of C type `t`.
fn acc_field(t: &str) -> &'static str {
    match t {
        "double" => "f64",
        "float" => "f32",
        "uint64_t" => "u64",
        "int64_t" => "i64",
        "uint32_t" => "u32",
        "int32_t" => "i32",
        "uint16_t" => "u16",
        "int16_t" => "i16",
        "int8_t" => "i8",
        _ => "u8",
    }
}

/// A function over typed `restrict` arrays (`ox_{name}_`) and its untyped twin (`ox_{name}`),
/// whose address a driver calls.
fn typed(name: &str, params: &[(String, &str)], body: &str) -> String {
    let typed: Vec<String> = params.iter().map(|(t, p)| format!("{t} {p}")).collect();
    let untyped: Vec<String> = params
        .iter()
        .map(|(t, p)| {
            if t.contains('*') {
                let constness = if t.starts_with("const") { "const " } else { "" };
                format!("{constness}void *{p}")
            } else {
                format!("{t} {p}")
            }
        })
        .collect();
    let casts: Vec<String> = params
        .iter()
        .map(|(t, p)| {
            if t.contains('*') {
                format!("({}){p}", t.replace("restrict", "").trim_end())
            } else {
                (*p).to_string()
            }
        })
        .collect();
    format!(
        "static inline void ox_{name}_({}) {{\n{body}}}\n\
         static void ox_{name}({}) {{ ox_{name}_({}); }}\n",
        typed.join(", "),
        untyped.join(", "),
        casts.join(", ")
    )
}

/// The definition of the monoid `ox_mon_{name}` of `op` over values of dtype `v` (see
/// [`monoid_name`]): the `ox_monoid` every reduction with this op and dtype uses, compiled once
/// into a shared object. Leaves keep [`LANES`] independent accumulators, combined pairwise.
pub(crate) fn monoid_def(op: ReduceOp, v: DType) -> String {
    let name = monoid_name(op, v);
    let m = monoid(op, v);
    let (acc, vt, ot) = (m.acc, ctype(v), ctype(op.output_dtype(v)));
    let mut s = format!(
        "static inline {acc} ox_push_{name}1({acc} a, {vt} x) {{ return {}; }}\n\
         static inline {acc} ox_comb_{name}1({acc} a, {acc} b) {{ return {}; }}\n",
        m.push, m.comb
    );
    let leaf = format!(
        "  {acc} l[{LANES}];\n\
         \x20 for (int q = 0; q < {LANES}; q++) l[q] = {ident};\n\
         \x20 int64_t j = 0;\n\
         \x20 for (; j + {LANES} <= n; j += {LANES})\n\
         \x20   for (int q = 0; q < {LANES}; q++) l[q] = ox_push_{name}1(l[q], v[j + q]);\n\
         \x20 {acc} last = {ident};\n\
         \x20 for (; j < n; j++) last = ox_push_{name}1(last, v[j]);\n\
         \x20 for (int w = {LANES} / 2; w >= 1; w /= 2)\n\
         \x20   for (int q = 0; q < w; q++) l[q] = ox_comb_{name}1(l[q], l[q + w]);\n\
         \x20 *r = ox_comb_{name}1(l[0], last);\n",
        ident = m.ident
    );
    let n = ("int64_t".to_string(), "n");
    let cv = format!("const {vt} *restrict");
    let ca = format!("const {acc} *restrict");
    let a = format!("{acc} *restrict");
    s.push_str(&typed(
        &format!("leaf_{name}"),
        &[n.clone(), (cv.clone(), "v"), (a.clone(), "r")],
        &leaf,
    ));
    s.push_str(&typed(
        &format!("push_{name}"),
        &[n.clone(), (cv, "v"), (a.clone(), "a")],
        &format!("  for (int64_t j = 0; j < n; j++) a[j] = ox_push_{name}1(a[j], v[j]);\n"),
    ));
    s.push_str(&typed(
        &format!("comb_{name}"),
        &[n.clone(), (ca.clone(), "b"), (a, "a")],
        &format!("  for (int64_t j = 0; j < n; j++) a[j] = ox_comb_{name}1(b[j], a[j]);\n"),
    ));
    let fin = if acc == ot {
        "0".to_string()
    } else {
        s.push_str(&typed(
            &format!("fin_{name}"),
            &[n, (ca, "a"), (format!("{ot} *restrict"), "out")],
            &format!(
                "  for (int64_t j = 0; j < n; j++) {{ const {acc} r = a[j]; out[j] = {}; }}\n",
                m.fin
            ),
        ));
        format!("ox_fin_{name}")
    };
    let _ = writeln!(
        s,
        "OX_HIDDEN const ox_monoid ox_mon_{name} = {{ sizeof({vt}), sizeof({acc}), sizeof({ot}), \
         {{ .{field} = {ident} }}, ox_leaf_{name}, ox_push_{name}, ox_comb_{name}, {fin} }};",
        field = acc_field(acc),
        ident = m.ident
    );
    s
}

/// The declaration of the monoid `ox_mon_{name}`, for the units that use it.
pub(crate) fn monoid_decl(name: &str) -> String {
    format!("OX_HIDDEN extern const ox_monoid ox_mon_{name};\n")
}

/// The reduction kernel `ox_r{id}`, reducing with monoid `ox_mon_{monoid}` the values of
/// operand 0 (`vals` is `None`) or of block function `ox_blk{vals}` over the operands (a fused
/// producer), whose dtypes are `inputs`:
///
/// ```c
/// int32_t ox_rN(int64_t ostart, int64_t oend, int32_t nk, const int64_t *kdims,
///               int32_t nr, const int64_t *rdims, const void *const *inp,
///               const int64_t *kstr, const int64_t *rstr, int32_t cols, void *outp);
/// ```
///
/// computes outputs `[ostart, oend)` (C order over the kept extents `kdims`), each reducing
/// the space `rdims`; operand `k` has kept strides `kstr[k * nk + d]` and reduced strides
/// `rstr[k * nr + d]`. With `cols`, consecutive outputs are reduced together, whole rows
/// at a time (every operand's innermost kept stride is 0 or 1); otherwise each output reduces
/// its own elements, run by run. Sums and products are pairwise over blocks of `OX_BLK`
/// elements (rows: leaves of 16 lanes) or of `OX_LEAF_ROWS` rows (columns).
pub(crate) fn reduce(id: usize, monoid: &str, inputs: &[DType], vals: Option<usize>) -> String {
    let vals = vals.map_or_else(|| "0".to_string(), |b| format!("ox_blk{b}"));
    format!(
        "static const uint8_t ox_isz{id}[] = {{{}}};\n\
         static const ox_red ox_red{id} = {{ &ox_mon_{monoid}, {}, ox_isz{id}, {vals} }};\n\
         OX_EXPORT int32_t ox_r{id}(int64_t ostart, int64_t oend, int32_t nk, \
         const int64_t *kdims, int32_t nr, const int64_t *rdims, const void *const *inp, \
         const int64_t *kstr, const int64_t *rstr, int32_t cols, void *outp) {{\n\
         \x20 return ox_reduce(&ox_red{id}, ostart, oend, nk, kdims, nr, rdims, inp, kstr, rstr, \
         cols, outp);\n}}\n",
        sizes(inputs.iter().copied()),
        inputs.len(),
    )
}
