//! Matrix functions: integer powers and the exponential.

use crate::batch::{ArgSpec, Batched, OutSpec, check_arity, float_dtype, rows};
use crate::util::{identity, lu_solve_checked, norm1};
use crate::{LinalgError, Real};
use faer::{Mat, MatRef};
use oxtensor_data::Tensor;

const A: [ArgSpec; 1] = [ArgSpec::matrix("a")];

/// `a` raised to the integer power `n`, `(m,m)->(m,m)`, like `numpy.linalg.matrix_power`:
/// binary powering; `n = 0` gives the identity and negative `n` powers the inverse (an
/// exactly singular `a` is then an error).
pub fn matrix_power(inputs: &[&Tensor], n: i64) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("matrix_power", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), matrix_power_imp(inputs, n))
}

fn matrix_power_imp<T: Real>(inputs: &[&Tensor], n: i64) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("matrix_power", inputs, &A)?;
    let m = b.square(0, "a")?;
    b.run(&[OutSpec::float(&[m, m])], |c| {
        let mut base = if n < 0 {
            lu_solve_checked("matrix_power", "a", c[0].mat(), identity::<T>(m).as_ref())?
        } else {
            c[0].mat().to_owned()
        };
        let mut e = n.unsigned_abs();
        let mut acc: Option<Mat<T>> = None;
        while e > 0 {
            if e & 1 == 1 {
                acc = Some(match acc {
                    None => base.clone(),
                    Some(x) => &x * &base,
                });
            }
            e >>= 1;
            if e > 0 {
                base = &base * &base;
            }
        }
        let r = acc.unwrap_or_else(|| identity(m));
        Ok(vec![rows(r.as_ref())])
    })
}

/// Matrix exponential, `(m,m)->(m,m)`, like `scipy.linalg.expm`: Padé approximants of degree
/// 3, 5, 7, 9 or 13 chosen from the 1-norm, with scaling and squaring for the degree 13
/// (Higham, "The scaling and squaring method for the matrix exponential revisited", 2005).
pub fn expm(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    check_arity("expm", inputs, 1)?;
    by_dtype!(float_dtype(inputs, &A), expm_imp(inputs))
}

/// Padé numerator coefficients `b_0..b_d` for each degree used (Higham 2005, Table 2.3's
/// companion coefficients).
const PADE3: [f64; 4] = [120.0, 60.0, 12.0, 1.0];
const PADE5: [f64; 6] = [30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0];
const PADE7: [f64; 8] = [
    17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0,
];
const PADE9: [f64; 10] = [
    17643225600.0,
    8821612800.0,
    2075673600.0,
    302702400.0,
    30270240.0,
    2162160.0,
    110880.0,
    3960.0,
    90.0,
    1.0,
];
const PADE13: [f64; 14] = [
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
];
/// Largest 1-norm for which each degree is accurate to double precision (Higham 2005).
const THETA: [(f64, &[f64]); 4] = [
    (1.495585217958292e-2, &PADE3),
    (2.539_398_330_063_23e-1, &PADE5),
    (9.504178996162932e-1, &PADE7),
    (2.097847961257068e0, &PADE9),
];
const THETA13: f64 = 5.371920351148152e0;

/// `Σ c_k X_k` over matrices of equal shape.
fn combo<T: Real>(terms: &[(f64, &Mat<T>)], n: usize) -> Mat<T> {
    Mat::from_fn(n, n, |i, j| {
        terms
            .iter()
            .fold(T::lit(0.0), |acc, (c, x)| acc + T::lit(*c) * x[(i, j)])
    })
}

/// `(V - U)⁻¹ (V + U)` for the Padé pieces `U` (odd) and `V` (even).
fn pade_ratio<T: Real>(u: &Mat<T>, v: &Mat<T>, n: usize) -> Result<Mat<T>, LinalgError> {
    let p = combo(&[(1.0, v), (1.0, u)], n);
    let q = combo(&[(1.0, v), (-1.0, u)], n);
    lu_solve_checked("expm", "a", q.as_ref(), p.as_ref())
}

fn expm_core<T: Real>(a: MatRef<'_, T>) -> Result<Mat<T>, LinalgError> {
    let n = a.nrows();
    let eye = identity::<T>(n);
    let a = a.to_owned();
    let a2 = &a * &a;
    let norm = norm1(a.as_ref());
    if !norm.is_finite() {
        // NaN or infinite entries: no scaling makes the series meaningful (SciPy gives NaN).
        return Ok(Mat::from_fn(n, n, |_, _| T::nan()));
    }
    for (theta, c) in THETA {
        if norm <= theta {
            // Even powers A^0, A^2, A^4, ... up to the degree.
            let mut pows = vec![eye.clone(), a2.clone()];
            while pows.len() < c.len() / 2 {
                let next = &pows[pows.len() - 1] * &a2;
                pows.push(next);
            }
            let odd: Vec<(f64, &Mat<T>)> = pows
                .iter()
                .enumerate()
                .map(|(k, p)| (c[2 * k + 1], p))
                .collect();
            let even: Vec<(f64, &Mat<T>)> = pows
                .iter()
                .enumerate()
                .map(|(k, p)| (c[2 * k], p))
                .collect();
            let u = &a * combo(&odd, n);
            let v = combo(&even, n);
            return pade_ratio(&u, &v, n);
        }
    }
    let s = if norm > THETA13 {
        (norm / THETA13).log2().ceil().max(0.0) as i32
    } else {
        0
    };
    let scale = 0.5f64.powi(s);
    let a1 = combo(&[(scale, &a)], n);
    let a2 = combo(&[(scale * scale, &a2)], n);
    let a4 = &a2 * &a2;
    let a6 = &a2 * &a4;
    let b = &PADE13;
    let inner_u = combo(&[(b[13], &a6), (b[11], &a4), (b[9], &a2)], n);
    let u = &a1
        * combo(
            &[
                (1.0, &(&a6 * &inner_u)),
                (b[7], &a6),
                (b[5], &a4),
                (b[3], &a2),
                (b[1], &eye),
            ],
            n,
        );
    let inner_v = combo(&[(b[12], &a6), (b[10], &a4), (b[8], &a2)], n);
    let v = combo(
        &[
            (1.0, &(&a6 * &inner_v)),
            (b[6], &a6),
            (b[4], &a4),
            (b[2], &a2),
            (b[0], &eye),
        ],
        n,
    );
    let mut r = pade_ratio(&u, &v, n)?;
    for _ in 0..s {
        r = &r * &r;
    }
    Ok(r)
}

fn expm_imp<T: Real>(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    let b = Batched::<T>::new("expm", inputs, &A)?;
    let m = b.square(0, "a")?;
    b.run(&[OutSpec::float(&[m, m])], |c| {
        Ok(vec![rows(expm_core(c[0].mat())?.as_ref())])
    })
}
