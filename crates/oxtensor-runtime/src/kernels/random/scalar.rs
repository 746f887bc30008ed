//! Element-wise draws of the scalar distributions (one value per batch element, from scalar
//! parameters): [`draw_scalars`] is the one loop that draws them, which the interpreter's
//! kernel runs on columns it builds from tensors and [`super::InPlaceDraws`] on columns a
//! caller fills in place (a staged loop's host call), so both draw the same values bit for bit.

use super::{
    Column, Narrow, array_wording, bad, draw_float, draw_int, fill_repeated, scipy_degenerate,
};
use crate::KernelError;
use oxtensor_graph::random::Distribution;
use oxtensor_random::Generator;

/// Where [`draw_scalars`] writes: `float64` draws of a continuous distribution or `int64` draws
/// of a discrete one, one per batch element in C order.
pub(super) enum Draws<'a> {
    Float(&'a mut [f64]),
    Int(&'a mut [i64]),
}

/// True for the distributions [`draw_scalars`] draws: scalar draws from scalar parameters,
/// each element on its own (not the vector-valued, categorical, beta-binomial, permutation or
/// choice draws, which the kernel draws in their own ways).
pub(super) fn is_scalar(dist: Distribution) -> bool {
    use Distribution as D;
    dist.support_ndim() == 0
        && (0..dist.params().len()).all(|k| dist.param_core_ndims(k) == 0)
        && !matches!(
            dist,
            D::Categorical
                | D::BetaBinom
                | D::Permutation
                | D::ChoiceWithoutReplacement
                | D::ChoiceWithoutReplacementP
        )
}

/// Draws `out` (one value per batch element) from a scalar distribution whose parameters are
/// `floats` (every parameter as `float64`) and `ints` (the integer ones as `int64`). `arrays`:
/// NumPy sees the parameters as arrays (its wording of errors); `narrow`: which are `float32`.
pub(super) fn draw_scalars(
    g: &mut Generator,
    dist: Distribution,
    floats: &[Column<f64>],
    ints: &[Column<i64>],
    arrays: bool,
    narrow: Narrow,
    out: Draws<'_>,
) -> Result<(), KernelError> {
    let wording = |e| bad(dist, if arrays { array_wording(e) } else { e });
    match out {
        Draws::Int(out) => {
            let mut pf = [0.0; 3];
            let mut pn = [0i64; 3];
            for (i, o) in out.iter_mut().enumerate() {
                for (k, c) in floats.iter().enumerate() {
                    pf[k] = c.at(i)[0];
                }
                for (k, c) in ints.iter().enumerate() {
                    pn[k] = c.at(i)[0];
                }
                *o = draw_int(g, dist, &pf, &pn).map_err(wording)?;
            }
            Ok(())
        }
        Draws::Float(out) => {
            if scipy_degenerate(dist, floats, narrow, out)? {
                return Ok(());
            }
            let mut pf = [0.0; 3];
            if floats.iter().all(|c| c.repeated) {
                for (k, c) in floats.iter().enumerate() {
                    pf[k] = c.values[0];
                }
                return fill_repeated(g, dist, &pf, narrow, out).map_err(wording);
            }
            out.iter_mut().enumerate().try_for_each(|(i, o)| {
                for (k, c) in floats.iter().enumerate() {
                    pf[k] = c.at(i)[0];
                }
                *o = draw_float(g, dist, &pf, narrow).map_err(wording)?;
                Ok(())
            })
        }
    }
}
