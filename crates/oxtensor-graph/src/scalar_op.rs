use oxtensor_data::DType;
use std::fmt;

/// A scalar function applied elementwise (with broadcasting) by [`crate::Op::Elemwise`].
///
/// The set mirrors PyTensor's scalar ops. Each variant's meaning is NumPy's function of the same
/// name; where they differ (PyTensor's `int_div` is floor division, `round` is half to even)
/// the variant's doc says so. Output dtypes are decided by [`ScalarOp::output_dtype`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarOp {
    /// `a + b + …` (n-ary, at least one input); `or` on bools, as NumPy.
    Add,
    /// `a - b`.
    Sub,
    /// `a * b * …` (n-ary, at least one input); `and` on bools, as NumPy.
    Mul,
    /// `a / b`, always a float.
    TrueDiv,
    /// `a // b`: floor division (Python semantics; integer division by zero gives 0).
    IntDiv,
    /// `a % b` with the sign of the divisor (Python semantics; integer modulo by zero gives 0).
    Mod,
    /// `a ** b`.
    Pow,
    /// `-a`.
    Neg,
    /// `|a|`.
    Abs,
    /// `sign(a)` (−1, 0 or 1; NaN for NaN).
    Sign,
    /// `a * a`.
    Sqr,
    /// `√a`.
    Sqrt,
    /// `1 / a`, a float.
    Reciprocal,
    /// `eᵃ`.
    Exp,
    /// `2ᵃ`.
    Exp2,
    /// `eᵃ − 1`, accurate near 0.
    Expm1,
    /// Natural logarithm.
    Log,
    /// Base-2 logarithm.
    Log2,
    /// Base-10 logarithm.
    Log10,
    /// `log(1 + a)`, accurate near 0.
    Log1p,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Tangent.
    Tan,
    /// Inverse sine.
    Arcsin,
    /// Inverse cosine.
    Arccos,
    /// Inverse tangent.
    Arctan,
    /// `atan2(a, b)`.
    Arctan2,
    /// Hyperbolic sine.
    Sinh,
    /// Hyperbolic cosine.
    Cosh,
    /// Hyperbolic tangent.
    Tanh,
    /// Inverse hyperbolic sine.
    Arcsinh,
    /// Inverse hyperbolic cosine.
    Arccosh,
    /// Inverse hyperbolic tangent.
    Arctanh,
    /// `1 / (1 + e⁻ᵃ)`, computed without overflow.
    Sigmoid,
    /// `log(1 + eᵃ)`, computed without overflow.
    Softplus,
    /// The error function.
    Erf,
    /// `1 − erf(a)`, accurate for large `a`.
    Erfc,
    /// `log|Γ(a)|`.
    Gammaln,
    /// Larger of two (NaN if either is NaN, as `np.maximum`).
    Maximum,
    /// Smaller of two (NaN if either is NaN, as `np.minimum`).
    Minimum,
    /// `clip(a, lo, hi)` = `minimum(maximum(a, lo), hi)`.
    Clip,
    /// `where(cond, a, b)`.
    Switch,
    /// `a < b`.
    Lt,
    /// `a > b`.
    Gt,
    /// `a <= b`.
    Le,
    /// `a >= b`.
    Ge,
    /// `a == b`.
    Eq,
    /// `a != b`.
    Neq,
    /// Bitwise (logical on bools) and.
    And,
    /// Bitwise (logical on bools) or.
    Or,
    /// Bitwise (logical on bools) exclusive or.
    Xor,
    /// Bitwise not (logical on bools).
    Invert,
    /// True where NaN.
    IsNan,
    /// True where ±∞.
    IsInf,
    /// Round down.
    Floor,
    /// Round up.
    Ceil,
    /// Round to nearest, ties to even (`np.round`).
    RoundHalfEven,
    /// Round toward zero.
    Trunc,
    /// Conversion to another dtype (NumPy `astype`).
    Cast(DType),
}

/// How many inputs a scalar op takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Arity {
    /// Exactly this many.
    Fixed(usize),
    /// At least one.
    Variadic,
}

/// The family of a scalar op, deciding its output dtype.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    /// Output is the promoted input type (`add`, `maximum`, …).
    Arithmetic,
    /// Output is a float: the promoted input type upgraded to float (`exp`, `true_div`, …).
    Float,
    /// Output is `bool` (`lt`, `isnan`, …).
    Predicate,
    /// Integer or bool inputs only; output is the promoted type (`and`, `invert`, …).
    Bitwise,
    /// `switch`: the condition's type is free; the output promotes the two branches.
    Select,
    /// `cast`: the output is the target dtype.
    Convert,
}

impl ScalarOp {
    /// Every variant except `Cast` (which carries a dtype), for tests and tables.
    pub const ALL_BUT_CAST: [ScalarOp; 58] = {
        use ScalarOp::*;
        [
            Add,
            Sub,
            Mul,
            TrueDiv,
            IntDiv,
            Mod,
            Pow,
            Neg,
            Abs,
            Sign,
            Sqr,
            Sqrt,
            Reciprocal,
            Exp,
            Exp2,
            Expm1,
            Log,
            Log2,
            Log10,
            Log1p,
            Sin,
            Cos,
            Tan,
            Arcsin,
            Arccos,
            Arctan,
            Arctan2,
            Sinh,
            Cosh,
            Tanh,
            Arcsinh,
            Arccosh,
            Arctanh,
            Sigmoid,
            Softplus,
            Erf,
            Erfc,
            Gammaln,
            Maximum,
            Minimum,
            Clip,
            Switch,
            Lt,
            Gt,
            Le,
            Ge,
            Eq,
            Neq,
            And,
            Or,
            Xor,
            Invert,
            IsNan,
            IsInf,
            Floor,
            Ceil,
            RoundHalfEven,
            Trunc,
        ]
    };

    /// The number of inputs.
    pub fn arity(self) -> Arity {
        use ScalarOp::*;
        match self {
            Add | Mul => Arity::Variadic,
            Sub | TrueDiv | IntDiv | Mod | Pow | Arctan2 | Maximum | Minimum | Lt | Gt | Le
            | Ge | Eq | Neq | And | Or | Xor => Arity::Fixed(2),
            Clip | Switch => Arity::Fixed(3),
            Neg | Abs | Sign | Sqr | Sqrt | Reciprocal | Exp | Exp2 | Expm1 | Log | Log2
            | Log10 | Log1p | Sin | Cos | Tan | Arcsin | Arccos | Arctan | Sinh | Cosh | Tanh
            | Arcsinh | Arccosh | Arctanh | Sigmoid | Softplus | Erf | Erfc | Gammaln | Invert
            | IsNan | IsInf | Floor | Ceil | RoundHalfEven | Trunc | Cast(_) => Arity::Fixed(1),
        }
    }

    /// A rough cost of one element, in additions: 16 for a transcendental function, 32 for
    /// one that needs two or a series (`pow`, `softplus`, `erf`, …), 4 for a division or square
    /// root, 1 otherwise. Backends weigh a loop's length by it when deciding whether to split
    /// the loop across threads: 10^4 exponentials are worth two cores, 10^4 additions are not.
    pub fn cost(self) -> usize {
        use ScalarOp::*;
        match self {
            Pow | Softplus | Erf | Erfc | Gammaln | Arctan2 => 32,
            Exp | Exp2 | Expm1 | Log | Log2 | Log10 | Log1p | Sin | Cos | Tan | Arcsin | Arccos
            | Arctan | Sinh | Cosh | Tanh | Arcsinh | Arccosh | Arctanh | Sigmoid => 16,
            TrueDiv | IntDiv | Mod | Sqrt | Reciprocal => 4,
            _ => 1,
        }
    }

    /// The family deciding the output dtype.
    pub fn kind(self) -> ScalarKind {
        use ScalarOp::*;
        match self {
            Add | Sub | Mul | IntDiv | Mod | Pow | Neg | Abs | Sign | Sqr | Maximum | Minimum
            | Clip => ScalarKind::Arithmetic,
            TrueDiv | Sqrt | Reciprocal | Exp | Exp2 | Expm1 | Log | Log2 | Log10 | Log1p | Sin
            | Cos | Tan | Arcsin | Arccos | Arctan | Arctan2 | Sinh | Cosh | Tanh | Arcsinh
            | Arccosh | Arctanh | Sigmoid | Softplus | Erf | Erfc | Gammaln | Floor | Ceil
            | RoundHalfEven | Trunc => ScalarKind::Float,
            Lt | Gt | Le | Ge | Eq | Neq | IsNan | IsInf => ScalarKind::Predicate,
            And | Or | Xor | Invert => ScalarKind::Bitwise,
            Switch => ScalarKind::Select,
            Cast(_) => ScalarKind::Convert,
        }
    }

    /// The output dtype for these input dtypes, or a reason the combination is not allowed.
    pub fn output_dtype(self, inputs: &[DType]) -> Result<DType, String> {
        use oxtensor_data::{result_type, upgrade_to_float};
        let promoted = |ds: &[DType]| ds.iter().copied().reduce(result_type).unwrap_or(DType::F64);
        let p = promoted(inputs);
        match self.kind() {
            ScalarKind::Arithmetic => {
                let bool_ok = matches!(
                    self,
                    ScalarOp::Add
                        | ScalarOp::Mul
                        | ScalarOp::Maximum
                        | ScalarOp::Minimum
                        | ScalarOp::Abs
                        | ScalarOp::Clip
                );
                if p.is_bool() && !bool_ok {
                    Err(format!(
                        "{self} is not defined for bool inputs; cast them to an integer type first"
                    ))
                } else {
                    Ok(p)
                }
            }
            ScalarKind::Float => Ok(upgrade_to_float(p)),
            ScalarKind::Predicate => Ok(DType::Bool),
            ScalarKind::Bitwise => {
                if p.is_float() {
                    Err(format!("{self} needs integer or bool inputs, got {p}"))
                } else {
                    Ok(p)
                }
            }
            ScalarKind::Select => Ok(promoted(&inputs[1..])),
            ScalarKind::Convert => match self {
                ScalarOp::Cast(d) => Ok(d),
                _ => unreachable!("only Cast is a conversion"),
            },
        }
    }

    /// PyTensor's name for the op, as printed by `debugprint`.
    pub fn name(self) -> &'static str {
        use ScalarOp::*;
        match self {
            Add => "Add",
            Sub => "Sub",
            Mul => "Mul",
            TrueDiv => "True_div",
            IntDiv => "Int_div",
            Mod => "Mod",
            Pow => "Pow",
            Neg => "Neg",
            Abs => "Abs",
            Sign => "Sign",
            Sqr => "Sqr",
            Sqrt => "Sqrt",
            Reciprocal => "Reciprocal",
            Exp => "Exp",
            Exp2 => "Exp2",
            Expm1 => "Expm1",
            Log => "Log",
            Log2 => "Log2",
            Log10 => "Log10",
            Log1p => "Log1p",
            Sin => "Sin",
            Cos => "Cos",
            Tan => "Tan",
            Arcsin => "ArcSin",
            Arccos => "ArcCos",
            Arctan => "ArcTan",
            Arctan2 => "ArcTan2",
            Sinh => "Sinh",
            Cosh => "Cosh",
            Tanh => "Tanh",
            Arcsinh => "ArcSinh",
            Arccosh => "ArcCosh",
            Arctanh => "ArcTanh",
            Sigmoid => "Sigmoid",
            Softplus => "Softplus",
            Erf => "Erf",
            Erfc => "Erfc",
            Gammaln => "GammaLn",
            Maximum => "Maximum",
            Minimum => "Minimum",
            Clip => "Clip",
            Switch => "Switch",
            Lt => "LT",
            Gt => "GT",
            Le => "LE",
            Ge => "GE",
            Eq => "EQ",
            Neq => "NEQ",
            And => "AND",
            Or => "OR",
            Xor => "XOR",
            Invert => "Invert",
            IsNan => "IsNan",
            IsInf => "IsInf",
            Floor => "Floor",
            Ceil => "Ceil",
            RoundHalfEven => "RoundHalfToEven",
            Trunc => "Trunc",
            Cast(_) => "Cast",
        }
    }
}

impl fmt::Display for ScalarOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarOp::Cast(d) => write!(f, "Cast{{{d}}}"),
            other => f.write_str(other.name()),
        }
    }
}
