//! C expressions for scalar ops: one exhaustive `match` over [`ScalarOp`] mirroring the
//! interpreter's elementwise kernel (`oxtensor_runtime::kernels::elemwise`), including the
//! dtype each family computes in.

use oxtensor_data::{DType, Tensor, result_type};
use oxtensor_graph::{Arity, ScalarOp};

/// The C type holding a dtype (`bool` is one byte, 0 or 1).
pub(crate) fn ctype(d: DType) -> &'static str {
    match d {
        DType::Bool | DType::U8 => "uint8_t",
        DType::I8 => "int8_t",
        DType::I16 => "int16_t",
        DType::I32 => "int32_t",
        DType::I64 => "int64_t",
        DType::U16 => "uint16_t",
        DType::U32 => "uint32_t",
        DType::U64 => "uint64_t",
        DType::F32 => "float",
        DType::F64 => "double",
        // Never emitted: complex values run in the interpreter (see `expr`).
        DType::C64 => "float _Complex",
        DType::C128 => "double _Complex",
    }
}

/// The unsigned type integer arithmetic of `d` is done in, so that it wraps (no signed
/// overflow, and no promotion of 8/16-bit operands to a signed `int` that could overflow).
fn utype(d: DType) -> &'static str {
    match d {
        DType::I64 | DType::U64 => "uint64_t",
        _ => "uint32_t",
    }
}

/// A dtype's short name in C identifiers: the suffix of the prelude's per-dtype helpers
/// (`ox_floordiv_i32`) and of kernel names.
pub(super) fn suffix(d: DType) -> &'static str {
    match d {
        DType::Bool => "b",
        DType::I8 => "i8",
        DType::I16 => "i16",
        DType::I32 => "i32",
        DType::I64 => "i64",
        DType::U8 => "u8",
        DType::U16 => "u16",
        DType::U32 => "u32",
        DType::U64 => "u64",
        DType::F32 => "f32",
        DType::F64 => "f64",
        DType::C64 => "c64",
        DType::C128 => "c128",
    }
}

/// `e` (of dtype `from`) converted to `to` with NumPy `astype` semantics, as
/// `Element::cast_from` does: floats truncate and saturate into integers (NaN gives 0),
/// integers wrap, anything non-zero (NaN included) is `true`.
pub(crate) fn cast(e: &str, from: DType, to: DType) -> String {
    if from == to {
        return e.to_string();
    }
    match (from, to) {
        (_, DType::Bool) => format!("((uint8_t)(({e}) != 0))"),
        (DType::F32 | DType::F64, t) if t.is_int() => {
            format!("ox_f2{}((double)({e}))", suffix(t))
        }
        _ => format!("(({})({e}))", ctype(to)),
    }
}

/// A C literal for a one-element constant, exact (floats by their bits).
pub(crate) fn literal(t: &Tensor) -> Option<String> {
    if t.numel() != 1 {
        return None;
    }
    let bytes = t.to_bytes();
    let mut word = [0u8; 8];
    word.get_mut(..bytes.len())?.copy_from_slice(&bytes);
    let bits = u64::from_le_bytes(word);
    Some(match t.dtype() {
        DType::F64 => format!("ox_f64_bits(0x{bits:016x}ULL)"),
        DType::F32 => format!("ox_f32_bits(0x{bits:08x}U)"),
        DType::Bool => format!("((uint8_t){})", (bits != 0) as u8),
        d => format!("(({})0x{bits:x}ULL)", ctype(d)),
    })
}

/// A C expression for one scalar op, plus an optional condition that must be false for
/// every element (a signed integer `pow` with a negative exponent, an error in NumPy).
pub(crate) struct Expr {
    /// The value, of the op's output dtype.
    pub value: String,
    /// A condition meaning "this element is an error".
    pub error: Option<String>,
}

/// `f(args…)` evaluated in `f64` and rounded to `out` (a float type), as the interpreter's
/// `Float::via_f64` does.
fn call_f64(f: &str, args: &[String], out: DType) -> String {
    if out == DType::F64 {
        format!("{f}({})", args.join(", "))
    } else {
        let wide: Vec<String> = args.iter().map(|a| format!("(double)({a})")).collect();
        format!("((float){f}({}))", wide.join(", "))
    }
}

/// Left fold of `xs` with `step` (`((a ⊕ b) ⊕ c) ⊕ …`, the interpreter's order).
fn fold(xs: &[String], step: impl Fn(&str, &str) -> String) -> String {
    let mut acc = xs[0].clone();
    for x in &xs[1..] {
        acc = step(&acc, x);
    }
    acc
}

/// The C expression computing `op` on `args` (C expressions with their dtypes) with output
/// dtype `out`, or `None` when the interpreter rejects the combination (the node then runs
/// in the interpreter, which reports the error).
///
/// As in the interpreter, arithmetic, float and bitwise ops compute in the output dtype
/// (inputs converted with [`cast`]), predicates in the promoted input dtype, `switch` tests
/// its condition for non-zero; float functions other than those IEEE defines exactly run in
/// `f64`. Complex values get no C: their nodes run in the interpreter.
pub(crate) fn expr(op: ScalarOp, args: &[(String, DType)], out: DType) -> Option<Expr> {
    use ScalarOp::*;
    if out.is_complex() || args.iter().any(|(_, d)| d.is_complex()) {
        return None;
    }
    let arity_ok = match op.arity() {
        Arity::Fixed(k) => args.len() == k,
        Arity::Variadic => !args.is_empty(),
    };
    if !arity_ok {
        return None;
    }
    let xs: Vec<String> = args.iter().map(|(e, d)| cast(e, *d, out)).collect();
    let x = |i: usize| xs[i].as_str();
    let t = ctype(out);
    let u = utype(out);
    let sfx = suffix(out);
    let (is_bool, is_float, signed) = (out == DType::Bool, out.is_float(), out.is_signed_int());
    // The value for each class of output dtype; `None` where the op is not defined.
    let by = |f: Option<String>, i: Option<String>, b: Option<String>| {
        if is_bool {
            b.map(|v| format!("((uint8_t){v})"))
        } else if is_float {
            f
        } else {
            i
        }
    };
    let wrap = |a: &str, sym: &str, b: &str| format!("(({t})(({u}){a} {sym} ({u}){b}))");
    let helper = |name: &str, n: usize| format!("ox_{name}_{sfx}({})", xs[..n].join(", "));
    let float_only = |v: String| is_float.then_some(v);
    let native = |f64_name: &str, f32_name: &str| {
        float_only(format!(
            "{}({})",
            if out == DType::F32 {
                f32_name
            } else {
                f64_name
            },
            x(0)
        ))
    };
    let libm = |name: &str| float_only(call_f64(name, &xs, out));
    let compare = |sym: &str| {
        let p = result_type(args[0].1, args[1].1);
        let a = cast(&args[0].0, args[0].1, p);
        let b = cast(&args[1].0, args[1].1, p);
        (out == DType::Bool).then(|| format!("((uint8_t)({a} {sym} {b}))"))
    };
    let bitwise = |v: String| (!is_float).then_some(v);
    let (a0, d0) = (args[0].0.as_str(), args[0].1);
    let mut error = None;
    let value = match op {
        Add => by(
            Some(fold(&xs, |a, b| format!("({a} + {b})"))),
            Some(fold(&xs, |a, b| wrap(a, "+", b))),
            Some(fold(&xs, |a, b| format!("({a} | {b})"))),
        ),
        Mul => by(
            Some(fold(&xs, |a, b| format!("({a} * {b})"))),
            Some(fold(&xs, |a, b| wrap(a, "*", b))),
            Some(fold(&xs, |a, b| format!("({a} & {b})"))),
        ),
        Sub => by(
            Some(format!("({} - {})", x(0), x(1))),
            Some(wrap(x(0), "-", x(1))),
            None,
        ),
        IntDiv => by(
            Some(helper("floordiv", 2)),
            Some(helper("floordiv", 2)),
            None,
        ),
        Mod => by(Some(helper("mod", 2)), Some(helper("mod", 2)), None),
        Pow => {
            if signed {
                error = Some(format!("({} < 0)", x(1)));
            }
            by(
                Some(call_f64("pow", &xs, out)),
                Some(helper("pow", 2)),
                None,
            )
        }
        Neg => by(
            Some(format!("(-{})", x(0))),
            Some(format!("(({t})(0 - ({u}){}))", x(0))),
            None,
        ),
        Abs => by(
            Some(format!(
                "{}({})",
                if out == DType::F32 { "fabsf" } else { "fabs" },
                x(0)
            )),
            Some(if signed {
                helper("abs", 1)
            } else {
                xs[0].clone()
            }),
            Some(xs[0].clone()),
        ),
        Sign => by(
            Some(helper("sign", 1)),
            Some(if signed {
                format!("(({t})(({0} > 0) - ({0} < 0)))", x(0))
            } else {
                format!("(({t})({} != 0))", x(0))
            }),
            None,
        ),
        Sqr => by(
            Some(format!("({0} * {0})", x(0))),
            Some(wrap(x(0), "*", x(0))),
            None,
        ),
        Maximum => by(
            Some(helper("max", 2)),
            Some(helper("max", 2)),
            Some(format!("({} | {})", x(0), x(1))),
        ),
        Minimum => by(
            Some(helper("min", 2)),
            Some(helper("min", 2)),
            Some(format!("({} & {})", x(0), x(1))),
        ),
        Clip => by(
            Some(helper("clip", 3)),
            Some(helper("clip", 3)),
            Some(format!("(({} | {}) & {})", x(0), x(1), x(2))),
        ),
        TrueDiv => float_only(format!("({} / {})", x(0), x(1))),
        Reciprocal => float_only(format!("((({t})1) / {})", x(0))),
        Sqrt => native("sqrt", "sqrtf"),
        Floor => native("floor", "floorf"),
        Ceil => native("ceil", "ceilf"),
        Trunc => native("trunc", "truncf"),
        RoundHalfEven => native("nearbyint", "nearbyintf"),
        Exp => libm("exp"),
        Exp2 => libm("exp2"),
        Expm1 => libm("expm1"),
        Log => libm("log"),
        Log2 => libm("log2"),
        Log10 => libm("log10"),
        Log1p => libm("log1p"),
        Sin => libm("sin"),
        Cos => libm("cos"),
        Tan => libm("tan"),
        Arcsin => libm("asin"),
        Arccos => libm("acos"),
        Arctan => libm("atan"),
        Arctan2 => libm("atan2"),
        Sinh => libm("sinh"),
        Cosh => libm("cosh"),
        Tanh => libm("tanh"),
        Arcsinh => libm("asinh"),
        Arccosh => libm("acosh"),
        Arctanh => libm("atanh"),
        Sigmoid => libm("ox_sigmoid"),
        Softplus => libm("ox_softplus"),
        Erf => libm("erf"),
        Erfc => libm("erfc"),
        Gammaln => libm("ox_gammaln"),
        // Of a real input (complex ones never reach here).
        Real | Conj => Some(x(0).to_string()),
        Imag => Some(format!("(({t})0)")),
        Angle => float_only(call_f64("atan2", &["0.0".to_string(), xs[0].clone()], out)),
        Complex | ComplexFromPolar => None,
        Lt => compare("<"),
        Gt => compare(">"),
        Le => compare("<="),
        Ge => compare(">="),
        Eq => compare("=="),
        Neq => compare("!="),
        IsNan => (out == DType::Bool).then(|| match d0 {
            DType::F32 | DType::F64 => format!("((uint8_t)({a0} != {a0}))"),
            _ => "((uint8_t)0)".to_string(),
        }),
        IsInf => (out == DType::Bool).then(|| match d0 {
            DType::F64 => format!("((uint8_t)(fabs({a0}) == __builtin_inf()))"),
            DType::F32 => format!("((uint8_t)(fabsf({a0}) == __builtin_inff()))"),
            _ => "((uint8_t)0)".to_string(),
        }),
        And => bitwise(format!("(({t})({} & {}))", x(0), x(1))),
        Or => bitwise(format!("(({t})({} | {}))", x(0), x(1))),
        Xor => bitwise(format!("(({t})({} ^ {}))", x(0), x(1))),
        Invert if is_bool => Some(format!("((uint8_t)({} ^ 1))", x(0))),
        Invert => bitwise(format!("(({t})~{})", x(0))),
        Switch => {
            let cond = cast(a0, d0, DType::Bool);
            Some(format!("({cond} ? {} : {})", x(1), x(2)))
        }
        Cast(_) => Some(xs[0].clone()),
        Special(f) => libm(&super::special::caller(f.export().name)),
    }?;
    Some(Expr { value, error })
}
