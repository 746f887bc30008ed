//! The special functions as scalar ops ([`crate::ScalarOp::Special`]): one table naming, for
//! each, PyTensor's op name, the Python function name and the `oxtensor-special` function that
//! defines it. The semantics live only in `oxtensor-special`: the interpreter calls the Rust
//! function through [`SpecialFn::export`], the native backend the same function through the
//! symbol table it binds into each loaded library (both by [`SpecialFn::export_index`]).
//!
//! Every special function is float-valued: the output dtype is the promoted input dtype
//! upgraded to a float (`int8` → `float32`, `int64` → `float64`), as PyTensor's
//! `upgrade_to_float`. The arity is the number of parameters of the export.

use oxtensor_special::{EXPORTS, Export};

/// `a == b`, usable in constant evaluation.
const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The position of the export named `name` in [`EXPORTS`]; evaluated at compile time, so a
/// table line naming a function `oxtensor-special` lacks does not compile.
const fn export_index(name: &str) -> usize {
    let mut i = 0;
    while i < EXPORTS.len() {
        if str_eq(EXPORTS[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("a special function is missing from oxtensor_special::EXPORTS")
}

/// Declares every special function from one table, one line per function:
///
/// `Variant: "PyTensorOpName", "python_name", export_name, cost;`
///
/// generating [`SpecialFn`], [`SpecialFn::ALL`] and its accessors.
macro_rules! special_fns {
    ($(
        $(#[$doc:meta])*
        $v:ident: $name:literal, $py:literal, $export:ident, $cost:literal;
    )*) => {
        /// A special function applied elementwise: see the [module documentation](self).
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum SpecialFn {
            $($(#[$doc])* $v,)*
        }

        impl SpecialFn {
            /// Every special function, in table order.
            pub const ALL: [SpecialFn; [$(stringify!($v)),*].len()] = [$(SpecialFn::$v),*];

            /// PyTensor's op name, as printed by `debugprint`.
            pub fn name(self) -> &'static str {
                match self {
                    $(SpecialFn::$v => $name,)*
                }
            }

            /// The Python function name (`pt.<name>`, `pt.special.<name>`).
            pub fn py_name(self) -> &'static str {
                match self {
                    $(SpecialFn::$v => $py,)*
                }
            }

            /// The position of the defining function in `oxtensor_special::EXPORTS`: the
            /// slot of the native backend's symbol table.
            pub const fn export_index(self) -> usize {
                match self {
                    $(SpecialFn::$v => {
                        const I: usize = export_index(stringify!($export));
                        I
                    })*
                }
            }

            /// A rough cost of one element, in additions (see [`crate::ScalarOp::cost`]).
            pub fn cost(self) -> usize {
                match self {
                    $(SpecialFn::$v => $cost,)*
                }
            }
        }
    };
}

special_fns! {
    /// Γ(x) (`scipy.special.gamma`).
    Gamma: "Gamma", "gamma", gamma, 128;
    /// ψ(x) = d log|Γ(x)|/dx (`scipy.special.psi`, alias `digamma`).
    Psi: "Psi", "psi", digamma, 128;
    /// ψ′(x) (`polygamma(1, x)`).
    TriGamma: "TriGamma", "trigamma", trigamma, 128;
    /// ψ⁽ⁿ⁾(x) for an integer order n (`scipy.special.polygamma(n, x)`).
    PolyGamma: "PolyGamma", "polygamma", polygamma, 512;
    /// The regularized lower incomplete gamma function P(a, x).
    GammaInc: "GammaInc", "gammainc", gammainc, 512;
    /// The regularized upper incomplete gamma function Q(a, x) = 1 − P(a, x).
    GammaIncC: "GammaIncC", "gammaincc", gammaincc, 512;
    /// The inverse of P(a, ·): x with P(a, x) = p.
    GammaIncInv: "GammaIncInv", "gammaincinv", gammaincinv, 2048;
    /// The inverse of Q(a, ·): x with Q(a, x) = q.
    GammaIncCInv: "GammaIncCInv", "gammainccinv", gammainccinv, 2048;
    /// ∂P(a, x)/∂a: the gradient of `gammainc` (and, negated, of `gammaincc`) with respect
    /// to the shape (PyTensor's `GammaIncGrad`).
    GammaIncGrad: "GammaIncGrad", "gammainc_grad", gammainc_grad, 2048;
    /// B(a, b) = Γ(a)Γ(b)/Γ(a + b).
    Beta: "Beta", "beta", beta, 256;
    /// log|B(a, b)|.
    BetaLn: "BetaLn", "betaln", betaln, 256;
    /// The regularized incomplete beta function I_x(a, b) (`betainc(a, b, x)`).
    BetaInc: "BetaInc", "betainc", betainc, 1024;
    /// The inverse of I_·(a, b): x with I_x(a, b) = y.
    BetaIncInv: "BetaIncInv", "betaincinv", betaincinv, 4096;
    /// ∂I_x(a, b)/∂a: the gradient of `betainc` with respect to its first shape (PyTensor's
    /// `betainc_grad(a, b, x, wrtp=True)`).
    BetaIncDa: "BetaIncDa", "betainc_da", betainc_da, 4096;
    /// ∂I_x(a, b)/∂b: the gradient of `betainc` with respect to its second shape (PyTensor's
    /// `betainc_grad(a, b, x, wrtp=False)`).
    BetaIncDb: "BetaIncDb", "betainc_db", betainc_db, 4096;
    /// The inverse error function.
    Erfinv: "Erfinv", "erfinv", erfinv, 64;
    /// The inverse complementary error function.
    Erfcinv: "Erfcinv", "erfcinv", erfcinv, 64;
    /// The scaled complementary error function exp(x²)·erfc(x).
    Erfcx: "Erfcx", "erfcx", erfcx, 64;
    /// The modified Bessel function of the first kind, order 0.
    I0: "I0", "i0", i0, 64;
    /// The modified Bessel function of the first kind, order 1.
    I1: "I1", "i1", i1, 64;
    /// The modified Bessel function of the first kind of real order v (`iv(v, x)`).
    Iv: "Iv", "iv", iv, 1024;
    /// The exponentially scaled `iv`: iv(v, x)·exp(−|x|).
    Ive: "Ive", "ive", ive, 1024;
    /// The Bessel function of the first kind, order 0.
    J0: "J0", "j0", j0, 64;
    /// The Bessel function of the first kind, order 1.
    J1: "J1", "j1", j1, 64;
    /// The Bessel function of the first kind of real order v (`jv(v, x)`).
    Jv: "Jv", "jv", jv, 1024;
    /// The modified Bessel function of the second kind of integer order n (`kn(n, x)`).
    Kn: "Kn", "kn", kn, 1024;
    /// The modified Bessel function of the second kind of real order v (`kv(v, x)`).
    Kv: "Kv", "kv", kv, 1024;
    /// The exponentially scaled `kv`: kv(v, x)·exp(x).
    Kve: "Kve", "kve", kve, 1024;
    /// Owen's T function T(h, a).
    OwensT: "Owens_t", "owens_t", owens_t, 512;
    /// The Gauss hypergeometric function ₂F₁(a, b; c; x).
    Hyp2F1: "Hyp2F1", "hyp2f1", hyp2f1, 4096;
    /// ∂₂F₁(a, b; c; x)/∂a (PyTensor's `hyp2f1_grad(..., wrt=[0])`).
    Hyp2F1Da: "Hyp2F1Da", "hyp2f1_da", hyp2f1_da, 8192;
    /// ∂₂F₁(a, b; c; x)/∂b (PyTensor's `hyp2f1_grad(..., wrt=[1])`).
    Hyp2F1Db: "Hyp2F1Db", "hyp2f1_db", hyp2f1_db, 8192;
    /// ∂₂F₁(a, b; c; x)/∂c (PyTensor's `hyp2f1_grad(..., wrt=[2])`).
    Hyp2F1Dc: "Hyp2F1Dc", "hyp2f1_dc", hyp2f1_dc, 8192;
    /// The chi-squared survival function of x with k degrees of freedom (`chi2sf(x, k)`).
    Chi2SF: "Chi2SF", "chi2sf", chi2sf, 512;
    /// log(1 − eˣ), accurate for x near 0 and very negative x.
    Log1mexp: "Log1mexp", "log1mexp", log1mexp, 32;
    /// x·log(y), 0 where x = 0 (`scipy.special.xlogy`).
    XLogY: "XLogY", "xlogy", xlogy, 16;
    /// x·log1p(y), 0 where x = 0 (`scipy.special.xlog1py`).
    XLog1PY: "XLog1PY", "xlog1py", xlog1py, 16;
    /// log(p / (1 − p)).
    Logit: "Logit", "logit", logit, 16;
    /// Γ(n + 1) (`scipy.special.factorial(n, exact=False)`: 0 below 0).
    Factorial: "Factorial", "factorial", factorial, 128;
    /// The Pochhammer symbol (z)ₘ = Γ(z + m)/Γ(z).
    Poch: "Poch", "poch", poch, 256;
}

impl SpecialFn {
    /// The defining function of `oxtensor-special`: its name, C symbols, parameters and
    /// `f64` entry point.
    pub fn export(self) -> &'static Export {
        let table: &'static [Export] = EXPORTS;
        &table[self.export_index()]
    }

    /// The number of inputs.
    pub fn arity(self) -> usize {
        self.export().params.len()
    }

    /// True for the functions PyTensor builds from a true division (`logit(x) = log(x / (1 -
    /// x))`, `chi2sf(x, k) = gammaincc(k / 2, x / 2)`), so that integer inputs give `float64`
    /// where the other functions give PyTensor's `upgrade_to_float`.
    pub fn divides_integers(self) -> bool {
        matches!(self, SpecialFn::Logit | SpecialFn::Chi2SF)
    }

    /// The function a front end names `name`: its Python name, `digamma` for `psi`,
    /// `tri_gamma` for `trigamma` (PyTensor's spelling), or its op name in any case.
    pub fn from_name(name: &str) -> Option<SpecialFn> {
        let name = match name {
            "digamma" => "psi",
            "tri_gamma" => "trigamma",
            other => other,
        };
        SpecialFn::ALL
            .into_iter()
            .find(|f| f.py_name() == name || f.name().eq_ignore_ascii_case(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_names_its_export_and_is_found_by_name() {
        for f in SpecialFn::ALL {
            assert!(f.arity() >= 1 && f.arity() <= 4, "{f:?}");
            assert_eq!(SpecialFn::from_name(f.py_name()), Some(f));
            assert_eq!(SpecialFn::from_name(f.name()), Some(f));
        }
        assert_eq!(SpecialFn::Psi.export().name, "digamma");
        assert_eq!(SpecialFn::Hyp2F1.arity(), 4);
        assert_eq!(SpecialFn::from_name("digamma"), Some(SpecialFn::Psi));
        assert_eq!(SpecialFn::from_name("nope"), None);
    }
}
