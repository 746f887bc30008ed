//! Creation sites: every variable built from Python records the user's `file:line`, found by
//! walking the Python frames outward past those inside the `oxtensor` package.

use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::{ffi, intern};
use std::sync::{Arc, OnceLock};

/// Directory of the installed `oxtensor` Python package (frames under it are skipped).
static PACKAGE_DIR: OnceLock<String> = OnceLock::new();

/// Tells the bindings where the pure-Python package lives (called once by `oxtensor/__init__`).
#[pyfunction]
fn _set_package_dir(dir: String) {
    let _ = PACKAGE_DIR.set(dir);
}

/// Registers the functions of this module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_set_package_dir, m)?)?;
    m.add_function(wrap_pyfunction!(current_site, m)?)?;
    Ok(())
}

/// The `file:line` that [`user_site`] would record now (for tests and debugging).
#[pyfunction]
fn current_site(py: Python<'_>) -> String {
    user_site(py).to_string()
}

fn inside_package(file: &str) -> bool {
    match PACKAGE_DIR.get() {
        Some(dir) => file.starts_with(dir.as_str()),
        None => false,
    }
}

/// The innermost Python frame outside the `oxtensor` package, as `file:line`.
pub fn user_site(py: Python<'_>) -> Arc<str> {
    // SAFETY: we are attached to the interpreter (we hold `py`). `PyEval_GetFrame` returns a
    // borrowed reference to the running frame (or null), which we turn into an owned `Bound`
    // right away; `PyFrame_GetBack` and `PyFrame_GetCode` return new references, owned by the
    // `Bound`s built from them, so every reference is released exactly once.
    unsafe {
        let current = ffi::PyEval_GetFrame();
        let Some(mut frame) = Bound::from_borrowed_ptr_or_opt(py, current.cast::<ffi::PyObject>())
        else {
            return Arc::from("<unknown>");
        };
        loop {
            let raw = frame.as_ptr().cast::<ffi::PyFrameObject>();
            let code = ffi::PyFrame_GetCode(raw);
            let file = Bound::from_owned_ptr_or_opt(py, code.cast::<ffi::PyObject>())
                .and_then(|c| c.getattr(intern!(py, "co_filename")).ok());
            let file_str = file
                .as_ref()
                .and_then(|f| f.cast::<PyString>().ok())
                .and_then(|s| s.to_str().ok().map(str::to_owned));
            match file_str {
                Some(f) if !inside_package(&f) => {
                    let line = ffi::PyFrame_GetLineNumber(raw);
                    return Arc::from(format!("{f}:{line}"));
                }
                _ => {}
            }
            let back = ffi::PyFrame_GetBack(raw);
            match Bound::from_owned_ptr_or_opt(py, back.cast::<ffi::PyObject>()) {
                Some(b) => frame = b,
                None => return Arc::from("<unknown>"),
            }
        }
    }
}

/// Runs `f` (which builds graph nodes) with the user's `file:line` as the creation site.
pub fn at_user_site<R>(py: Python<'_>, f: impl FnOnce() -> R) -> R {
    oxtensor_graph::with_site(user_site(py), f)
}
