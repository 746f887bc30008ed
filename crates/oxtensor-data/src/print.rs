//! How a tensor prints, as NumPy prints arrays: each dtype as itself (an `int64` as an
//! integer, a `bool` as `True`/`False`), nested brackets by dimension, columns aligned, and
//! large arrays summarised with `...`.
//!
//! `Display` is NumPy's `str(a)`: floats with at most 8 decimals (`precision=8`), elements
//! separated by spaces, one row per line. `Debug` is for tests and logs: the dtype and shape,
//! then every shown element exactly (the shortest text that reads back as the same value), on
//! one line.

use crate::{DType, Element, Tensor};
use std::fmt;

/// Arrays with more elements print only `EDGE` items at each end of every dimension.
const SUMMARIZE_ABOVE: usize = 1000;
/// How many items are shown at each end of a summarised dimension.
const EDGE: usize = 3;
/// Decimals of a float in `Display` (NumPy's default `precision`).
const PRECISION: usize = 8;

/// Which of the two notations a tensor prints in.
#[derive(Clone, Copy, PartialEq)]
enum Style {
    /// NumPy's `str`: rounded floats, spaces, rows on lines.
    Display,
    /// Exact values, commas, one line.
    Debug,
}

/// The element strings of the shown positions (C order); in `Display`, all the same width.
fn cells(t: &Tensor, shown: &[Vec<usize>], style: Style) -> Vec<String> {
    let flat = flat_positions(t.shape(), shown);
    let texts: Vec<String> = match t.dtype() {
        DType::Bool => pick(t, &flat, |b: bool| {
            if b { "True" } else { "False" }.to_string()
        }),
        DType::F64 => floats(&pick(t, &flat, |v: f64| v), style, false),
        DType::F32 => floats(&pick(t, &flat, |v: f32| f64::from(v)), style, true),
        DType::C64 => complexes(&pick(t, &flat, |v: crate::C64| v.to_c128()), style, true),
        DType::C128 => complexes(&pick(t, &flat, |v: crate::C128| v), style, false),
        d => dispatch_dtype!(d, T => pick(t, &flat, |v: T| format!("{v:?}"))),
    };
    if style == Style::Debug {
        return texts;
    }
    let width = texts.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    texts.into_iter().map(|s| format!("{s:>width$}")).collect()
}

/// Complex numbers as NumPy writes them (`1.+2.j`): each part written as [`floats`] writes
/// it, the imaginary part always signed.
fn complexes(values: &[crate::C128], style: Style, single: bool) -> Vec<String> {
    let re: Vec<f64> = values.iter().map(|z| z.re).collect();
    let im: Vec<f64> = values.iter().map(|z| z.im).collect();
    let (re, im) = (floats(&re, style, single), floats(&im, style, single));
    let signed: Vec<String> = im
        .iter()
        .map(|i| {
            let i = i.trim();
            let sign = if i.starts_with('-') { "" } else { "+" };
            format!("{sign}{i}j")
        })
        .collect();
    let width = signed.iter().map(String::len).max().unwrap_or(0);
    re.into_iter()
        .zip(signed)
        .map(|(r, i)| match style {
            Style::Display => format!("{r}{i:<width$}"),
            Style::Debug => format!("{r}{i}"),
        })
        .collect()
}

/// The values at `flat` C-order positions, each mapped by `f`.
fn pick<T: Element, R>(t: &Tensor, flat: &[usize], f: impl Fn(T) -> R) -> Vec<R> {
    let all = t.to_vec::<T>().unwrap_or_default();
    flat.iter()
        .filter_map(|&i| all.get(i))
        .map(|&v| f(v))
        .collect()
}

/// C-order positions of the cartesian product of the shown indices per dimension.
fn flat_positions(shape: &[usize], shown: &[Vec<usize>]) -> Vec<usize> {
    let mut flat = vec![0usize];
    for (extent, picks) in shape.iter().zip(shown) {
        flat = flat
            .iter()
            .flat_map(|base| picks.iter().map(move |i| base * extent + i))
            .collect();
    }
    flat
}

/// Floats as NumPy writes them: `nan`, `inf`, `1.` for integral values; in `Display`, at
/// most 8 decimals with trailing zeros dropped (the decimal points then aligned by padding
/// the fractions), or scientific notation when magnitudes span too much; in `Debug`, the
/// shortest text that reads back as the same `f64` (or `f32`).
fn floats(values: &[f64], style: Style, single: bool) -> Vec<String> {
    let special = |v: f64| {
        if v.is_nan() {
            Some("nan".to_string())
        } else if v.is_infinite() {
            Some(if v > 0.0 { "inf" } else { "-inf" }.to_string())
        } else {
            None
        }
    };
    if style == Style::Debug {
        return values
            .iter()
            .map(|&v| {
                special(v).unwrap_or_else(|| {
                    let s = if single {
                        format!("{:?}", v as f32)
                    } else {
                        format!("{v:?}")
                    };
                    s.strip_suffix(".0").map_or(s.clone(), |i| format!("{i}."))
                })
            })
            .collect();
    }
    let finite: Vec<f64> = values
        .iter()
        .map(|v| v.abs())
        .filter(|v| v.is_finite())
        .collect();
    let max = finite.iter().copied().fold(0.0f64, f64::max);
    let min_nonzero = finite
        .iter()
        .copied()
        .filter(|&v| v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let scientific = max >= 1e8 || min_nonzero < 1e-4 || (max / min_nonzero) > 1e3;
    if scientific {
        // Every mantissa gets as many decimals as the one that needs the most (NumPy pads
        // them with zeros, so the exponents line up).
        let decimals = values
            .iter()
            .filter(|v| v.is_finite())
            .map(|&v| mantissa_decimals(v))
            .max()
            .unwrap_or(0);
        return values
            .iter()
            .map(|&v| special(v).unwrap_or_else(|| scientific_text(v, decimals)))
            .collect();
    }
    let texts: Vec<String> = values
        .iter()
        .map(|&v| {
            special(v).unwrap_or_else(|| {
                let s = format!("{v:.PRECISION$}");
                s.trim_end_matches('0').to_string()
            })
        })
        .collect();
    // Pads every fraction to the longest, so the decimal points line up.
    let frac = |s: &str| s.find('.').map_or(0, |p| s.len() - p - 1);
    let longest = texts.iter().map(|s| frac(s)).max().unwrap_or(0);
    texts
        .iter()
        .map(|s| {
            let pad = if s.contains('.') {
                longest - frac(s)
            } else {
                0
            };
            format!("{s}{}", " ".repeat(pad))
        })
        .collect()
}

/// How many mantissa decimals (at most 8) `v` needs in scientific notation.
fn mantissa_decimals(v: f64) -> usize {
    let s = format!("{v:.PRECISION$e}");
    let mantissa = s.split_once('e').map_or(s.as_str(), |(m, _)| m);
    mantissa
        .trim_end_matches('0')
        .split_once('.')
        .map_or(0, |(_, f)| f.len())
}

/// `v` in NumPy's scientific notation with `decimals` mantissa decimals and a signed
/// two-digit exponent (`1.50e-05`; `1.e+00` with none).
fn scientific_text(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if decimals == 0 {
        format!("{mantissa}.")
    } else {
        mantissa.to_string()
    };
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// Writes the nested brackets of dimension `dim` onwards, consuming `cells` in order.
fn nest(
    out: &mut String,
    shape: &[usize],
    shown: &[Vec<usize>],
    dim: usize,
    cells: &mut std::slice::Iter<'_, String>,
    style: Style,
) {
    if dim == shape.len() {
        out.push_str(cells.next().map_or("", String::as_str));
        return;
    }
    let sep = match style {
        Style::Display => " ",
        Style::Debug => ", ",
    };
    let inner = shape.len() - dim - 1;
    let between = match style {
        Style::Debug => ", ".to_string(),
        Style::Display if inner == 0 => " ".to_string(),
        Style::Display => format!("{}{}", "\n".repeat(inner), " ".repeat(dim + 1)),
    };
    out.push('[');
    let picks = &shown[dim];
    for (k, &i) in picks.iter().enumerate() {
        if k > 0 {
            out.push_str(&between);
            if i != picks[k - 1] + 1 {
                out.push_str("...");
                out.push_str(if inner == 0 { sep } else { &between });
            }
        }
        nest(out, shape, shown, dim + 1, cells, style);
    }
    out.push(']');
}

/// The whole tensor as text in `style`.
fn render(t: &Tensor, style: Style) -> String {
    let summarize = t.numel() > SUMMARIZE_ABOVE;
    let shown: Vec<Vec<usize>> = t
        .shape()
        .iter()
        .map(|&n| {
            if summarize && n > 2 * EDGE {
                (0..EDGE).chain(n - EDGE..n).collect()
            } else {
                (0..n).collect()
            }
        })
        .collect();
    let cells = cells(t, &shown, style);
    let mut out = String::new();
    nest(&mut out, t.shape(), &shown, 0, &mut cells.iter(), style);
    out
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A 0-d array prints as its scalar does, every digit kept (NumPy's `str(np.array(x))`).
        let text = if self.ndim() == 0 {
            let exact = render(self, Style::Debug);
            if self.dtype().is_float() && exact.ends_with('.') {
                format!("{exact}0")
            } else {
                exact
            }
        } else {
            render(self, Style::Display)
        };
        f.write_str(&text)
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor({}, {:?}, {})",
            self.dtype(),
            self.shape(),
            render(self, Style::Debug)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t<T: Element>(values: &[T], shape: &[usize]) -> Tensor {
        Tensor::from_slice(values, shape).expect("tensor")
    }

    #[test]
    fn each_dtype_prints_as_itself() {
        let big = t(&[(1i64 << 53) + 1, -2], &[2]);
        assert_eq!(
            format!("{big:?}"),
            "Tensor(int64, [2], [9007199254740993, -2])"
        );
        assert_eq!(big.to_string(), "[9007199254740993               -2]");
        assert_eq!(t(&[1i64, 0], &[2]).to_string(), "[1 0]");
        assert_eq!(t(&[true, false], &[2]).to_string(), "[ True False]");
        assert_eq!(t(&[255u8], &[1]).to_string(), "[255]");
        assert_eq!(Tensor::scalar(7i32).to_string(), "7");
    }

    #[test]
    fn floats_print_as_numpy_does() {
        assert_eq!(t(&[1.0f64, 2.0], &[2]).to_string(), "[1. 2.]");
        assert_eq!(t(&[1.5f64, 2.25], &[2]).to_string(), "[1.5  2.25]");
        assert_eq!(t(&[std::f64::consts::E], &[1]).to_string(), "[2.71828183]");
        assert_eq!(t(&[1e-5f64, 1.0], &[2]).to_string(), "[1.e-05 1.e+00]");
        assert_eq!(
            t(&[0.0f64, 0.5, 1000.0], &[3]).to_string(),
            "[0.e+00 5.e-01 1.e+03]"
        );
        assert_eq!(
            t(&[6.2037037e-4f64, -0.263231481], &[2]).to_string(),
            "[ 0.00062037 -0.26323148]"
        );
        assert_eq!(
            t(&[6.2037037037e-4f64, -0.263231481, 0.761564815], &[3]).to_string(),
            "[ 6.20370370e-04 -2.63231481e-01  7.61564815e-01]"
        );
        assert_eq!(Tensor::scalar(800.0f64).to_string(), "800.0");
        assert_eq!(
            Tensor::scalar(1.0f64 / 3.0).to_string(),
            "0.3333333333333333"
        );
        assert_eq!(
            t(&[f64::NAN, f64::NEG_INFINITY, 0.5], &[3]).to_string(),
            "[ nan -inf  0.5]"
        );
        assert_eq!(
            format!("{:?}", t(&[0.1f32, 1.0], &[2])),
            "Tensor(float32, [2], [0.1, 1.])"
        );
        assert_eq!(
            format!("{:?}", t(&[std::f64::consts::E], &[1])),
            "Tensor(float64, [1], [2.718281828459045])"
        );
    }

    #[test]
    fn dimensions_nest_and_large_arrays_are_summarised() {
        let m = t(&[1i64, 2, 3, 4, 5, 6], &[2, 3]);
        assert_eq!(m.to_string(), "[[1 2 3]\n [4 5 6]]");
        assert_eq!(
            format!("{m:?}"),
            "Tensor(int64, [2, 3], [[1, 2, 3], [4, 5, 6]])"
        );
        let cube = t(&[0i64, 1, 2, 3, 4, 5, 6, 7], &[2, 2, 2]);
        assert_eq!(cube.to_string(), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
        let long: Vec<i64> = (0..2000).collect();
        assert_eq!(
            t(&long, &[2000]).to_string(),
            "[   0    1    2 ... 1997 1998 1999]"
        );
        assert_eq!(t::<f64>(&[], &[0]).to_string(), "[]");
    }
}
