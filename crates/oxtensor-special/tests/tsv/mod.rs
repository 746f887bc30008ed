//! The fixture tables written by the `tests/fixtures/make_*.py` scripts: tab-separated rows of
//! numbers (the arguments, then the reference value, then another library's value), `#`
//! comments and blank lines skipped.

use std::fs;
use std::path::PathBuf;

/// One parsed row: the arguments, mpmath's reference value, and the compared library's value.
pub struct Row {
    /// The function's arguments.
    pub args: Vec<f64>,
    /// mpmath's value.
    pub reference: f64,
    /// The other library's value (SciPy's or PyTensor's).
    pub other: f64,
}

/// The rows of `tests/fixtures/{name}.tsv`, or `None` when the file is absent.
pub fn read(name: &str) -> Option<Vec<Row>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.tsv"));
    let text = fs::read_to_string(&path).ok()?;
    let rows = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let v: Vec<f64> = l
                .split('\t')
                .map(|t| {
                    t.trim()
                        .parse::<f64>()
                        .unwrap_or_else(|e| panic!("{name}: bad number {t:?}: {e}"))
                })
                .collect();
            let n = v.len();
            Row {
                args: v[..n - 2].to_vec(),
                reference: v[n - 2],
                other: v[n - 1],
            }
        })
        .collect();
    Some(rows)
}
