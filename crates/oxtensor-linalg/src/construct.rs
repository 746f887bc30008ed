//! Constructions of larger matrices from smaller ones: kron and block_diag.

use crate::batch::{ArgSpec, Batched, OutSpec, float_dtype};
use crate::decomp::matrix_dims;
use crate::{LinalgError, Real};
use oxtensor_data::Tensor;

/// Kronecker product, inputs `[a, b]`, `(m,n),(p,q)->(mp,nq)`, batched over leading
/// dimensions. (NumPy's `kron` on inputs of more than two dimensions takes the product over
/// every axis instead; here leading axes are batch axes, as for every other op.)
pub fn kron(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    crate::batch::check_arity("kron", inputs, 2)?;
    let args = [ArgSpec::matrix("a"), ArgSpec::matrix("b")];
    by_dtype!(float_dtype(inputs, &args), kron_imp(inputs, &args))
}

fn kron_imp<T: Real>(inputs: &[&Tensor], args: &[ArgSpec]) -> Result<Vec<Tensor>, LinalgError> {
    let bt = Batched::<T>::new("kron", inputs, args)?;
    let (m, n) = matrix_dims(&bt, 0, "a")?;
    let (p, q) = matrix_dims(&bt, 1, "b")?;
    bt.run(&[OutSpec::float(&[m * p, n * q])], |c| {
        let (a, b) = (c[0].data, c[1].data);
        let mut out = Vec::with_capacity(m * p * n * q);
        for i in 0..m {
            for k in 0..p {
                for j in 0..n {
                    out.extend(b[k * q..(k + 1) * q].iter().map(|&y| a[i * n + j] * y));
                }
            }
        }
        Ok(vec![out])
    })
}

/// Block-diagonal matrix of one or more matrices, `(m1,n1),(m2,n2),…->(Σm,Σn)`, batched over
/// leading dimensions, like `scipy.linalg.block_diag` (which takes no batch dimensions).
pub fn block_diag(inputs: &[&Tensor]) -> Result<Vec<Tensor>, LinalgError> {
    if inputs.is_empty() {
        return Err(LinalgError::Arity {
            op: "block_diag",
            expected: "at least 1".into(),
            got: 0,
        });
    }
    let args = [ArgSpec::matrix("arrays")];
    by_dtype!(float_dtype(inputs, &args), block_diag_imp(inputs, &args))
}

fn block_diag_imp<T: Real>(
    inputs: &[&Tensor],
    args: &[ArgSpec],
) -> Result<Vec<Tensor>, LinalgError> {
    let bt = Batched::<T>::new("block_diag", inputs, args)?;
    let dims = (0..inputs.len())
        .map(|i| matrix_dims(&bt, i, "arrays"))
        .collect::<Result<Vec<_>, _>>()?;
    let rows_total: usize = dims.iter().map(|d| d.0).sum();
    let cols_total: usize = dims.iter().map(|d| d.1).sum();
    bt.run(&[OutSpec::float(&[rows_total, cols_total])], |c| {
        let mut out = vec![T::lit(0.0); rows_total * cols_total];
        let (mut r0, mut c0) = (0, 0);
        for (core, &(m, n)) in c.iter().zip(&dims) {
            for i in 0..m {
                let dst = (r0 + i) * cols_total + c0;
                out[dst..dst + n].copy_from_slice(&core.data[i * n..(i + 1) * n]);
            }
            r0 += m;
            c0 += n;
        }
        Ok(vec![out])
    })
}
