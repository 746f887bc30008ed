//! The C ABI of every function (`oxt_<name>_f64` / `oxt_<name>_f32`), the `f32` Rust entry
//! points, and [`EXPORTS`], the one table a C code generator reads to declare them.
//!
//! Everything here is generated from a single list by the `exports!` macro, so a function cannot
//! be exported under one name and declared under another. The f32 variants compute in f64 and
//! round once, which keeps them correctly rounded wherever the f64 result is within a few ulps.

/// A double-precision entry point, by arity.
#[derive(Clone, Copy, Debug)]
pub enum EntryF64 {
    /// `f(x)`.
    Unary(extern "C" fn(f64) -> f64),
    /// `f(a, x)`.
    Binary(extern "C" fn(f64, f64) -> f64),
    /// `f(a, b, x)`.
    Ternary(extern "C" fn(f64, f64, f64) -> f64),
    /// `f(a, b, c, x)`.
    Quaternary(extern "C" fn(f64, f64, f64, f64) -> f64),
}

/// One exported function: its name in this crate, its two C symbols, and its parameter names
/// (whose count is the arity).
#[derive(Clone, Copy, Debug)]
pub struct Export {
    /// The Rust function name, e.g. `"gammainc"` (also SciPy's name, except `chi2sf` = `chdtrc`
    /// with swapped arguments).
    pub name: &'static str,
    /// The C symbol of the double-precision entry point, e.g. `"oxt_gammainc_f64"`.
    pub symbol_f64: &'static str,
    /// The C symbol of the single-precision entry point, e.g. `"oxt_gammainc_f32"`.
    pub symbol_f32: &'static str,
    /// The parameter names in order; `params.len()` is the arity.
    pub params: &'static [&'static str],
    /// The double-precision entry point itself, for callers that hold the table (tests, an
    /// interpreter dispatching by name).
    pub entry: EntryF64,
}

impl Export {
    /// The number of arguments.
    pub fn arity(&self) -> usize {
        self.params.len()
    }
}

macro_rules! exports {
    ($( $variant:ident : $name:ident => $sym64:ident, $sym32:ident ( $($arg:ident),+ ); )*) => {
        $(
            #[doc = concat!("C entry point of [`crate::", stringify!($name), "`] in double precision.")]
            #[unsafe(no_mangle)]
            pub extern "C" fn $sym64($($arg: f64),+) -> f64 {
                crate::$name($($arg),+)
            }

            #[doc = concat!("C entry point of [`crate::", stringify!($name),
                "`] in single precision (computed in f64, rounded once).")]
            #[unsafe(no_mangle)]
            pub extern "C" fn $sym32($($arg: ::core::primitive::f32),+) -> ::core::primitive::f32 {
                crate::$name($(f64::from($arg)),+) as ::core::primitive::f32
            }
        )*

        /// Single-precision versions of every function: computed in f64 and rounded once.
        pub mod f32 {
            $(
                #[doc = concat!("[`crate::", stringify!($name), "`] in single precision.")]
                pub fn $name($($arg: ::core::primitive::f32),+) -> ::core::primitive::f32 {
                    super::$sym32($($arg),+)
                }
            )*
        }

        /// Every exported function, in a stable order: the one list the C code generator and
        /// the interpreter read.
        pub const EXPORTS: &[Export] = &[
            $(
                Export {
                    name: stringify!($name),
                    symbol_f64: stringify!($sym64),
                    symbol_f32: stringify!($sym32),
                    params: &[$(stringify!($arg)),+],
                    entry: EntryF64::$variant($sym64),
                },
            )*
        ];
    };
}

exports! {
    Unary: gamma => oxt_gamma_f64, oxt_gamma_f32(x);
    Unary: gammaln => oxt_gammaln_f64, oxt_gammaln_f32(x);
    Unary: digamma => oxt_digamma_f64, oxt_digamma_f32(x);
    Unary: trigamma => oxt_trigamma_f64, oxt_trigamma_f32(x);
    Binary: polygamma => oxt_polygamma_f64, oxt_polygamma_f32(n, x);
    Unary: factorial => oxt_factorial_f64, oxt_factorial_f32(x);
    Binary: poch => oxt_poch_f64, oxt_poch_f32(z, m);
    Binary: beta => oxt_beta_f64, oxt_beta_f32(a, b);
    Binary: betaln => oxt_betaln_f64, oxt_betaln_f32(a, b);
    Binary: gammainc => oxt_gammainc_f64, oxt_gammainc_f32(a, x);
    Binary: gammaincc => oxt_gammaincc_f64, oxt_gammaincc_f32(a, x);
    Binary: gammainc_grad => oxt_gammainc_grad_f64, oxt_gammainc_grad_f32(a, x);
    Binary: gammaincinv => oxt_gammaincinv_f64, oxt_gammaincinv_f32(a, p);
    Binary: gammainccinv => oxt_gammainccinv_f64, oxt_gammainccinv_f32(a, q);
    Binary: chi2sf => oxt_chi2sf_f64, oxt_chi2sf_f32(x, k);
    Ternary: betainc => oxt_betainc_f64, oxt_betainc_f32(a, b, x);
    Ternary: betaincinv => oxt_betaincinv_f64, oxt_betaincinv_f32(a, b, y);
    Ternary: betainc_da => oxt_betainc_da_f64, oxt_betainc_da_f32(a, b, x);
    Ternary: betainc_db => oxt_betainc_db_f64, oxt_betainc_db_f32(a, b, x);
    Unary: erfinv => oxt_erfinv_f64, oxt_erfinv_f32(y);
    Unary: erfcinv => oxt_erfcinv_f64, oxt_erfcinv_f32(y);
    Unary: erfcx => oxt_erfcx_f64, oxt_erfcx_f32(x);
    Unary: i0 => oxt_i0_f64, oxt_i0_f32(x);
    Unary: i1 => oxt_i1_f64, oxt_i1_f32(x);
    Unary: i0e => oxt_i0e_f64, oxt_i0e_f32(x);
    Unary: i1e => oxt_i1e_f64, oxt_i1e_f32(x);
    Binary: iv => oxt_iv_f64, oxt_iv_f32(v, x);
    Binary: ive => oxt_ive_f64, oxt_ive_f32(v, x);
    Unary: j0 => oxt_j0_f64, oxt_j0_f32(x);
    Unary: j1 => oxt_j1_f64, oxt_j1_f32(x);
    Binary: jv => oxt_jv_f64, oxt_jv_f32(v, x);
    Binary: kn => oxt_kn_f64, oxt_kn_f32(n, x);
    Binary: kv => oxt_kv_f64, oxt_kv_f32(v, x);
    Binary: kve => oxt_kve_f64, oxt_kve_f32(v, x);
    Binary: owens_t => oxt_owens_t_f64, oxt_owens_t_f32(h, a);
    Quaternary: hyp2f1 => oxt_hyp2f1_f64, oxt_hyp2f1_f32(a, b, c, x);
    Quaternary: hyp2f1_da => oxt_hyp2f1_da_f64, oxt_hyp2f1_da_f32(a, b, c, x);
    Quaternary: hyp2f1_db => oxt_hyp2f1_db_f64, oxt_hyp2f1_db_f32(a, b, c, x);
    Quaternary: hyp2f1_dc => oxt_hyp2f1_dc_f64, oxt_hyp2f1_dc_f32(a, b, c, x);
    Unary: log1mexp => oxt_log1mexp_f64, oxt_log1mexp_f32(x);
    Binary: xlogy => oxt_xlogy_f64, oxt_xlogy_f32(x, y);
    Binary: xlog1py => oxt_xlog1py_f64, oxt_xlog1py_f32(x, y);
    Unary: logit => oxt_logit_f64, oxt_logit_f32(p);
    Unary: expit => oxt_expit_f64, oxt_expit_f32(x);
}

/// C declarations of every entry point (`double oxt_gamma_f64(double x);` and the float twin),
/// one per line, for the native backend's generated sources.
pub fn c_declarations() -> String {
    let mut out = String::new();
    for e in EXPORTS {
        for (sym, ty) in [(e.symbol_f64, "double"), (e.symbol_f32, "float")] {
            let params: Vec<String> = e.params.iter().map(|p| format!("{ty} {p}")).collect();
            out.push_str(&format!("{ty} {sym}({});\n", params.join(", ")));
        }
    }
    out
}

/// Looks an export up by its Rust/SciPy name.
pub fn find(name: &str) -> Option<&'static Export> {
    EXPORTS.iter().find(|e| e.name == name)
}
