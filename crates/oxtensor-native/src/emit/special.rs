//! The special functions in generated C: every translation unit declares a table of function
//! pointers, one per entry of `oxtensor_special::EXPORTS` in its order, and a small `static
//! inline` caller per function (`ox_sp_gamma(x)`) reading its slot. The loader fills the table
//! right after loading the library by calling its exported `ox_bind_special` with the `f64`
//! entry points of the running process ([`crate::bind`]).
//!
//! Why a table: the generated library is loaded with `RTLD_LOCAL` by a host (a Rust test
//! binary, the Python extension module) whose own symbols it cannot see, so it cannot link
//! against `oxt_gamma_f64` by name. The table is a weak, hidden definition, so the two
//! translation units of a large function share one table in the linked library. Slots are
//! read and written with relaxed atomics: a library already running kernels on other threads
//! may be bound again (loading the same path twice returns the same library), with the same
//! values.
//!
//! The table's layout (count, order, arities) is written out in the source text, which the
//! compile cache hashes, so a library built for another layout is never reused.

use oxtensor_special::EXPORTS;
use std::sync::OnceLock;

/// The C name of the caller of export `name` (`ox_sp_gamma`).
pub(crate) fn caller(name: &str) -> String {
    format!("ox_sp_{name}")
}

/// The table, `ox_bind_special` and one caller per export, as C.
pub(crate) fn table() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let n = EXPORTS.len();
        let mut c = format!(
            "
/* Special functions: oxtensor-special's f64 entry points, in the order of its EXPORTS,
   filled by the loader through ox_bind_special (see emit/special.rs). */
typedef void (*ox_fn)(void);
__attribute__((weak, visibility(\"hidden\"))) ox_fn ox_special_table[{n}];
OX_EXPORT __attribute__((weak)) int64_t ox_bind_special(const ox_fn *t, int64_t n) {{
  if (n != {n}) return {n};
  for (int64_t i = 0; i < {n}; i++)
    __atomic_store_n(&ox_special_table[i], t[i], __ATOMIC_RELAXED);
  return {n}; }}
"
        );
        for (i, e) in EXPORTS.iter().enumerate() {
            let params: Vec<String> = e.params.iter().map(|p| format!("double {p}")).collect();
            let types = vec!["double"; e.params.len()].join(", ");
            c.push_str(&format!(
                "static inline double {}({}) {{\n  return ((double (*)({types}))\
                 __atomic_load_n(&ox_special_table[{i}], __ATOMIC_RELAXED))({}); }}\n",
                caller(e.name),
                params.join(", "),
                e.params.join(", "),
            ));
        }
        c
    })
}
