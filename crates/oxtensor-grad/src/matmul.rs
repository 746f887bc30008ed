//! The pullback of `MatMul` (`np.matmul`): `ga = g · bᵀ`, `gb = aᵀ · g` on the last two
//! dimensions, after promoting vector operands to matrices (a row for `a`, a column for `b`)
//! as NumPy does. Batch dimensions that were broadcast are summed back by the driver.

use crate::rules::{Term, grads};
use oxtensor_graph::build::{self as b, Built};
use oxtensor_graph::{GraphError, Var};

/// `v` with its last two dimensions swapped.
fn transpose_last2(v: &Var) -> Built {
    let n = v.ndim();
    let mut order: Vec<Option<usize>> = (0..n).map(Some).collect();
    order.swap(n - 2, n - 1);
    b::dimshuffle(v, &order)
}

/// `v` without dimension `d` (which has static extent 1).
fn drop_dim(v: &Var, d: usize) -> Built {
    let order: Vec<Option<usize>> = (0..v.ndim()).filter(|&i| i != d).map(Some).collect();
    b::dimshuffle(v, &order)
}

/// The pullback of `matmul(a, b)` with cotangent `g`.
pub(crate) fn pullback(
    a: &Var,
    bm: &Var,
    g: &Var,
    wanted: &[bool],
) -> Result<Vec<Term>, GraphError> {
    let (a_vec, b_vec) = (a.ndim() == 1, bm.ndim() == 1);
    let a2 = if a_vec {
        b::dimshuffle(a, &[None, Some(0)])?
    } else {
        a.clone()
    };
    let b2 = if b_vec {
        b::dimshuffle(bm, &[Some(0), None])?
    } else {
        bm.clone()
    };
    // The cotangent with the dimensions vector operands dropped put back (extent 1).
    let batch = g.ndim() - usize::from(!a_vec) - usize::from(!b_vec);
    let mut order: Vec<Option<usize>> = (0..batch).map(Some).collect();
    order.push(if a_vec { None } else { Some(batch) });
    order.push(if b_vec {
        None
    } else {
        Some(batch + usize::from(!a_vec))
    });
    let g2 = b::dimshuffle(g, &order)?;
    grads(wanted, |k| {
        if k == 0 {
            let ga = b::matmul(&g2, &transpose_last2(&b2)?)?;
            if a_vec {
                drop_dim(&ga, ga.ndim() - 2)
            } else {
                Ok(ga)
            }
        } else {
            let gb = b::matmul(&transpose_last2(&a2)?, &g2)?;
            if b_vec {
                drop_dim(&gb, gb.ndim() - 1)
            } else {
                Ok(gb)
            }
        }
    })
}
