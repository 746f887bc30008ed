use crate::special::SpecialFn;
use oxtensor_data::DType;
use std::fmt;

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
    /// The parts of complex numbers and their construction (`real`, `imag`, `angle`,
    /// `complex`, `complex_from_polar`); each op's rule is in [`ScalarOp::output_dtype`].
    Complex,
}

/// The arity column of [`scalar_ops!`]: `variadic` or a number of inputs.
macro_rules! arity {
    (variadic) => {
        Arity::Variadic
    };
    ($n:literal) => {
        Arity::Fixed($n)
    };
}

/// Whether the flag `$want` is among the `+ flag` markers of a [`scalar_ops!`] line: `bool`
/// for an arithmetic op NumPy defines on bools, `complex` for an op defined on complex numbers.
macro_rules! has_flag {
    ($want:ident;) => {
        false
    };
    (bool; bool $($rest:ident)*) => {
        true
    };
    (complex; complex $($rest:ident)*) => {
        true
    };
    ($want:ident; $other:ident $($rest:ident)*) => {
        has_flag!($want; $($rest)*)
    };
}

/// Declares every scalar op from one table, one line per op:
///
/// `Variant: "PyTensorName", arity, kind [+ bool] [+ complex], cost;`
///
/// and generates from it the [`ScalarOp`] enum (plus the two variants carrying data, `Cast`
/// and `Special`), [`ScalarOp::ALL_BUT_CAST`], [`ScalarOp::arity`], [`ScalarOp::kind`],
/// [`ScalarOp::cost`], [`ScalarOp::name`], whether an arithmetic op accepts bools and whether
/// an arithmetic or float op accepts complex numbers. The
/// special functions have their own table in [`crate::special`].
macro_rules! scalar_ops {
    ($(
        $(#[$doc:meta])*
        $v:ident: $name:literal, $arity:tt, $kind:ident $(+ $flag:ident)*, $cost:literal;
    )*) => {
        /// A scalar function applied elementwise (with broadcasting) by [`crate::Op::Elemwise`].
        ///
        /// The set mirrors PyTensor's scalar ops. Each variant's meaning is NumPy's function of
        /// the same name; where they differ (PyTensor's `int_div` is floor division, `round` is
        /// half to even) the variant's doc says so. Output dtypes are decided by
        /// [`ScalarOp::output_dtype`]. Declared by one table (`scalar_ops!` in this file).
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum ScalarOp {
            $($(#[$doc])* $v,)*
            /// Conversion to another dtype (NumPy `astype`).
            Cast(DType),
            /// A special function of SciPy (`gamma`, `betainc`, `jv`, …), computed by
            /// `oxtensor-special` in every backend.
            Special(SpecialFn),
        }

        impl ScalarOp {
            /// Every elementary op: all variants except `Cast` (which carries a dtype) and
            /// `Special` (whose functions are listed by [`SpecialFn::ALL`]).
            pub const ALL_BUT_CAST: [ScalarOp; [$(stringify!($v)),*].len()] =
                [$(ScalarOp::$v),*];

            /// The number of inputs.
            pub fn arity(self) -> Arity {
                match self {
                    $(ScalarOp::$v => arity!($arity),)*
                    ScalarOp::Cast(_) => Arity::Fixed(1),
                    ScalarOp::Special(f) => Arity::Fixed(f.arity()),
                }
            }

            /// A rough cost of one element, in additions: 16 for a transcendental function,
            /// 32 for one that needs two or a series (`pow`, `softplus`, `erf`, …), 4 for a
            /// division or square root, 1 otherwise; special functions say their own. Backends
            /// weigh a loop's length by it when deciding whether to split the loop across
            /// threads: 10^4 exponentials are worth two cores, 10^4 additions are not.
            pub fn cost(self) -> usize {
                match self {
                    $(ScalarOp::$v => $cost,)*
                    ScalarOp::Cast(_) => 1,
                    ScalarOp::Special(f) => f.cost(),
                }
            }

            /// The family deciding the output dtype.
            pub fn kind(self) -> ScalarKind {
                match self {
                    $(ScalarOp::$v => ScalarKind::$kind,)*
                    ScalarOp::Cast(_) => ScalarKind::Convert,
                    ScalarOp::Special(_) => ScalarKind::Float,
                }
            }

            /// Whether an arithmetic op is defined on bools (NumPy's logical `add`, `mul`, …).
            fn allows_bool(self) -> bool {
                match self {
                    $(ScalarOp::$v => has_flag!(bool; $($flag)*),)*
                    ScalarOp::Cast(_) | ScalarOp::Special(_) => true,
                }
            }

            /// Whether an arithmetic or float op is defined on complex numbers (NumPy's
            /// complex loops; `floor_divide`, `arctan2` or `erf` have none).
            pub fn allows_complex(self) -> bool {
                match self {
                    $(ScalarOp::$v => has_flag!(complex; $($flag)*),)*
                    ScalarOp::Cast(_) => true,
                    ScalarOp::Special(_) => false,
                }
            }

            /// PyTensor's name for the op, as printed by `debugprint`.
            pub fn name(self) -> &'static str {
                match self {
                    $(ScalarOp::$v => $name,)*
                    ScalarOp::Cast(_) => "Cast",
                    ScalarOp::Special(f) => f.name(),
                }
            }
        }
    };
}

scalar_ops! {
    /// `a + b + …` (n-ary, at least one input); `or` on bools, as NumPy.
    Add: "Add", variadic, Arithmetic + bool + complex, 1;
    /// `a - b`.
    Sub: "Sub", 2, Arithmetic + complex, 1;
    /// `a * b * …` (n-ary, at least one input); `and` on bools, as NumPy.
    Mul: "Mul", variadic, Arithmetic + bool + complex, 1;
    /// `a / b`, always a float.
    TrueDiv: "True_div", 2, Float + complex, 4;
    /// `a // b`: floor division (Python semantics; integer division by zero gives 0).
    IntDiv: "Int_div", 2, Arithmetic, 4;
    /// `a % b` with the sign of the divisor (Python semantics; integer modulo by zero gives 0).
    Mod: "Mod", 2, Arithmetic, 4;
    /// `a ** b`.
    Pow: "Pow", 2, Arithmetic + complex, 32;
    /// `-a`.
    Neg: "Neg", 1, Arithmetic + complex, 1;
    /// `|a|`.
    Abs: "Abs", 1, Arithmetic + bool + complex, 1;
    /// `sign(a)` (−1, 0 or 1; NaN for NaN).
    Sign: "Sign", 1, Arithmetic + complex, 1;
    /// `a * a`.
    Sqr: "Sqr", 1, Arithmetic + complex, 1;
    /// `√a`.
    Sqrt: "Sqrt", 1, Float + complex, 4;
    /// `1 / a`, a float.
    Reciprocal: "Reciprocal", 1, Float + complex, 4;
    /// `eᵃ`.
    Exp: "Exp", 1, Float + complex, 16;
    /// `2ᵃ`.
    Exp2: "Exp2", 1, Float + complex, 16;
    /// `eᵃ − 1`, accurate near 0.
    Expm1: "Expm1", 1, Float + complex, 16;
    /// Natural logarithm.
    Log: "Log", 1, Float + complex, 16;
    /// Base-2 logarithm.
    Log2: "Log2", 1, Float + complex, 16;
    /// Base-10 logarithm.
    Log10: "Log10", 1, Float + complex, 16;
    /// `log(1 + a)`, accurate near 0.
    Log1p: "Log1p", 1, Float + complex, 16;
    /// Sine.
    Sin: "Sin", 1, Float + complex, 16;
    /// Cosine.
    Cos: "Cos", 1, Float + complex, 16;
    /// Tangent.
    Tan: "Tan", 1, Float + complex, 16;
    /// Inverse sine.
    Arcsin: "ArcSin", 1, Float + complex, 16;
    /// Inverse cosine.
    Arccos: "ArcCos", 1, Float + complex, 16;
    /// Inverse tangent.
    Arctan: "ArcTan", 1, Float + complex, 16;
    /// `atan2(a, b)`.
    Arctan2: "ArcTan2", 2, Float, 32;
    /// Hyperbolic sine.
    Sinh: "Sinh", 1, Float + complex, 16;
    /// Hyperbolic cosine.
    Cosh: "Cosh", 1, Float + complex, 16;
    /// Hyperbolic tangent.
    Tanh: "Tanh", 1, Float + complex, 16;
    /// Inverse hyperbolic sine.
    Arcsinh: "ArcSinh", 1, Float + complex, 16;
    /// Inverse hyperbolic cosine.
    Arccosh: "ArcCosh", 1, Float + complex, 16;
    /// Inverse hyperbolic tangent.
    Arctanh: "ArcTanh", 1, Float + complex, 16;
    /// `1 / (1 + e⁻ᵃ)`, computed without overflow.
    Sigmoid: "Sigmoid", 1, Float, 16;
    /// `log(1 + eᵃ)`, computed without overflow.
    Softplus: "Softplus", 1, Float, 32;
    /// The error function.
    Erf: "Erf", 1, Float, 32;
    /// `1 − erf(a)`, accurate for large `a`.
    Erfc: "Erfc", 1, Float, 32;
    /// `log|Γ(a)|`.
    Gammaln: "GammaLn", 1, Float, 32;
    /// Larger of two (NaN if either is NaN, as `np.maximum`).
    Maximum: "Maximum", 2, Arithmetic + bool + complex, 1;
    /// Smaller of two (NaN if either is NaN, as `np.minimum`).
    Minimum: "Minimum", 2, Arithmetic + bool + complex, 1;
    /// `clip(a, lo, hi)` = `minimum(maximum(a, lo), hi)`.
    Clip: "Clip", 3, Arithmetic + bool + complex, 1;
    /// `where(cond, a, b)`.
    Switch: "Switch", 3, Select, 1;
    /// `a < b`.
    Lt: "LT", 2, Predicate, 1;
    /// `a > b`.
    Gt: "GT", 2, Predicate, 1;
    /// `a <= b`.
    Le: "LE", 2, Predicate, 1;
    /// `a >= b`.
    Ge: "GE", 2, Predicate, 1;
    /// `a == b`.
    Eq: "EQ", 2, Predicate, 1;
    /// `a != b`.
    Neq: "NEQ", 2, Predicate, 1;
    /// Bitwise (logical on bools) and.
    And: "AND", 2, Bitwise, 1;
    /// Bitwise (logical on bools) or.
    Or: "OR", 2, Bitwise, 1;
    /// Bitwise (logical on bools) exclusive or.
    Xor: "XOR", 2, Bitwise, 1;
    /// Bitwise not (logical on bools).
    Invert: "Invert", 1, Bitwise, 1;
    /// True where NaN.
    IsNan: "IsNan", 1, Predicate, 1;
    /// True where ±∞.
    IsInf: "IsInf", 1, Predicate, 1;
    /// Round down.
    Floor: "Floor", 1, Float, 1;
    /// Round up.
    Ceil: "Ceil", 1, Float, 1;
    /// Round to nearest, ties to even (`np.round`).
    RoundHalfEven: "RoundHalfToEven", 1, Float, 1;
    /// Round toward zero.
    Trunc: "Trunc", 1, Float, 1;
    /// The real part (the value itself for a real input).
    Real: "Real", 1, Complex, 1;
    /// The imaginary part (zero for a real input).
    Imag: "Imag", 1, Complex, 1;
    /// The argument `atan2(imag, real)` (0 or π for a real input), as `float64` like PyTensor.
    Angle: "Angle", 1, Complex, 16;
    /// The complex conjugate (the value itself for a real input).
    Conj: "Conj", 1, Arithmetic + bool + complex, 1;
    /// `real + imag·i` from two real inputs.
    Complex: "Complex", 2, Complex, 1;
    /// `abs·e^(angle·i)` from a modulus and an argument.
    ComplexFromPolar: "ComplexFromPolar", 2, Complex, 32;
}

impl ScalarOp {
    /// The output dtype for these input dtypes, or a reason the combination is not allowed.
    pub fn output_dtype(self, inputs: &[DType]) -> Result<DType, String> {
        use oxtensor_data::{result_type, upgrade_to_float};
        let promoted = |ds: &[DType]| ds.iter().copied().reduce(result_type).unwrap_or(DType::F64);
        let p = promoted(inputs);
        let kind = self.kind();
        let complex_in = inputs.iter().any(|d| d.is_complex());
        if complex_in
            && matches!(kind, ScalarKind::Arithmetic | ScalarKind::Float)
            && !self.allows_complex()
        {
            return Err(format!("{self} is not defined for complex inputs, got {p}"));
        }
        match kind {
            ScalarKind::Arithmetic => {
                if p.is_bool() && !self.allows_bool() {
                    Err(format!(
                        "{self} is not defined for bool inputs; cast them to an integer type first"
                    ))
                } else if self == ScalarOp::Abs {
                    // The modulus of a complex number is real.
                    Ok(p.real_part())
                } else {
                    Ok(p)
                }
            }
            // True division of integers (and what PyTensor builds from it) is `float64`, as in
            // NumPy and PyTensor.
            ScalarKind::Float
                if !p.is_inexact()
                    && match self {
                        ScalarOp::TrueDiv => true,
                        ScalarOp::Special(f) => f.divides_integers(),
                        _ => false,
                    } =>
            {
                Ok(DType::F64)
            }
            ScalarKind::Float => Ok(upgrade_to_float(p)),
            ScalarKind::Predicate => Ok(DType::Bool),
            ScalarKind::Complex => match self {
                ScalarOp::Real | ScalarOp::Imag => Ok(p.real_part()),
                // PyTensor's `angle` is always `float64` (NumPy keeps `float32` for complex64).
                ScalarOp::Angle => Ok(DType::F64),
                _ if complex_in => Err(format!("{self} needs real inputs, got {p}")),
                _ => Ok(upgrade_to_float(p).complex_of()),
            },
            ScalarKind::Bitwise => {
                if p.is_inexact() {
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

    /// Every op without data (the elementary ones, then each special function): what a
    /// table of names or a test iterates.
    pub fn all_but_cast() -> impl Iterator<Item = ScalarOp> {
        ScalarOp::ALL_BUT_CAST
            .into_iter()
            .chain(SpecialFn::ALL.into_iter().map(ScalarOp::Special))
    }

    /// The op a front end names `name`: PyTensor's lower-case function name (`"exp"`,
    /// `"true_div"`, `"gammainc"`, `"psi"`) or its op name in any case (`"GammaIncC"`).
    pub fn from_name(name: &str) -> Option<ScalarOp> {
        if let Some(f) = SpecialFn::from_name(name) {
            return Some(ScalarOp::Special(f));
        }
        ScalarOp::ALL_BUT_CAST
            .into_iter()
            .find(|op| op.name().eq_ignore_ascii_case(name))
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
