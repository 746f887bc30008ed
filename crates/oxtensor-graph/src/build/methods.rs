//! Ergonomic Rust on [`Var`]: operator overloading and methods. They panic with the
//! [`GraphError`](crate::GraphError) message on invalid use (a programming error in Rust code,
//! like an out-of-bounds slice index); the fallible functions in [`crate::build`] are the
//! non-panicking forms, and the ones front ends use.

use super::{Built, Scalar, with_scalar};
use crate::{ScalarOp, Var};
use std::ops;

#[track_caller]
fn ok(b: Built) -> Var {
    b.unwrap_or_else(|e| panic!("{e}"))
}

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $op:ident) => {
        impl ops::$trait<&Var> for &Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: &Var) -> Var {
                ok(super::elemwise(ScalarOp::$op, &[self.clone(), rhs.clone()]))
            }
        }
        impl ops::$trait<Var> for Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: Var) -> Var {
                ops::$trait::$method(&self, &rhs)
            }
        }
        impl ops::$trait<&Var> for Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: &Var) -> Var {
                ops::$trait::$method(&self, rhs)
            }
        }
        impl ops::$trait<Var> for &Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: Var) -> Var {
                ops::$trait::$method(self, &rhs)
            }
        }
        impl<S: Into<Scalar>> ops::$trait<S> for &Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: S) -> Var {
                ok(with_scalar(ScalarOp::$op, self, rhs, false))
            }
        }
        impl<S: Into<Scalar>> ops::$trait<S> for Var {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: S) -> Var {
                ok(with_scalar(ScalarOp::$op, &self, rhs, false))
            }
        }
        impl ops::$trait<&Var> for f64 {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: &Var) -> Var {
                ok(with_scalar(ScalarOp::$op, rhs, self, true))
            }
        }
        impl ops::$trait<Var> for f64 {
            type Output = Var;
            #[track_caller]
            fn $method(self, rhs: Var) -> Var {
                ok(with_scalar(ScalarOp::$op, &rhs, self, true))
            }
        }
    };
}

binary_operator!(Add, add, Add);
binary_operator!(Sub, sub, Sub);
binary_operator!(Mul, mul, Mul);
binary_operator!(Div, div, TrueDiv);
binary_operator!(Rem, rem, Mod);

impl ops::Neg for &Var {
    type Output = Var;
    #[track_caller]
    fn neg(self) -> Var {
        ok(super::neg(self))
    }
}

impl ops::Neg for Var {
    type Output = Var;
    #[track_caller]
    fn neg(self) -> Var {
        ok(super::neg(&self))
    }
}

macro_rules! unary_methods {
    ($($name:ident),*) => {
        impl Var {
            $(
                #[doc = concat!("`", stringify!($name), "(self)`; see [`crate::build::", stringify!($name), "`]. Panics on invalid use.")]
                #[track_caller]
                pub fn $name(&self) -> Var {
                    ok(super::$name(self))
                }
            )*
        }
    };
}

unary_methods!(
    abs, sign, sqr, sqrt, reciprocal, exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan,
    arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, arctanh, sigmoid, softplus, erf,
    erfc, gammaln, floor, ceil, round, trunc, isnan, isinf
);

impl Var {
    /// `self ** exponent` for a weak scalar exponent. Panics on invalid use.
    #[track_caller]
    pub fn powf(&self, exponent: impl Into<Scalar>) -> Var {
        ok(with_scalar(ScalarOp::Pow, self, exponent, false))
    }

    /// `self ** other`. Panics on invalid use.
    #[track_caller]
    pub fn pow(&self, other: &Var) -> Var {
        ok(super::pow(self, other))
    }

    /// Sum over `axis` (`None`: all). Panics on an invalid axis.
    #[track_caller]
    pub fn sum(&self, axis: Option<&[i64]>) -> Var {
        ok(super::sum(self, axis, false))
    }

    /// Mean over `axis` (`None`: all). Panics on an invalid axis.
    #[track_caller]
    pub fn mean(&self, axis: Option<&[i64]>) -> Var {
        ok(super::mean(self, axis, false))
    }

    /// Maximum over `axis` (`None`: all). Panics on an invalid axis.
    #[track_caller]
    pub fn max(&self, axis: Option<&[i64]>) -> Var {
        ok(super::max(self, axis, false))
    }

    /// Minimum over `axis` (`None`: all). Panics on an invalid axis.
    #[track_caller]
    pub fn min(&self, axis: Option<&[i64]>) -> Var {
        ok(super::min(self, axis, false))
    }

    /// Product over `axis` (`None`: all). Panics on an invalid axis.
    #[track_caller]
    pub fn prod(&self, axis: Option<&[i64]>) -> Var {
        ok(super::prod(self, axis, false))
    }

    /// Reshape to constant extents (one may be −1). Panics on an impossible shape.
    #[track_caller]
    pub fn reshape(&self, shape: &[i64]) -> Var {
        ok(super::reshape(self, shape))
    }

    /// Transpose (reverse the axes).
    #[track_caller]
    pub fn t(&self) -> Var {
        ok(super::transpose(self, None))
    }

    /// Conversion to `dtype`.
    #[track_caller]
    pub fn astype(&self, dtype: oxtensor_data::DType) -> Var {
        ok(super::cast(self, dtype))
    }

    /// Matrix product. Panics on mismatched shapes.
    #[track_caller]
    pub fn matmul(&self, other: &Var) -> Var {
        ok(super::matmul(self, other))
    }

    /// Indexing `self[idx]`. Panics on an invalid index.
    #[track_caller]
    pub fn at(&self, idx: &[super::Idx]) -> Var {
        ok(super::subtensor(self, idx))
    }

    /// Names the variable and returns it (builder style).
    pub fn named(self, name: &str) -> Var {
        self.set_name(name);
        self
    }
}
