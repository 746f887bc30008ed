//! Ziggurat samplers for the standard normal and standard exponential distributions, drawing
//! the same words in the same order as NumPy's `random_standard_normal(_f)` and
//! `random_standard_exponential(_f)` (Marsaglia & Tsang, "The Ziggurat Method for Generating
//! Random Variables", 2000, with 256 layers).
//!
//! One 64-bit word (32-bit for `f32`) gives the layer index, the sign and the magnitude; 99 % of
//! draws end there. Layer 0 falls back to the tail (Marsaglia's exponential-rejection tail) and
//! layers 1..255 to a wedge test against the density. Tails take `log1p(-u)` of a uniform u,
//! so u == 0 is harmless (NumPy's fix for GH 13361).

mod tables;

use crate::pcg64::Pcg64;
use tables::{
    F_EXP_F32_BITS, F_EXP_F64_BITS, F_NOR_F32_BITS, F_NOR_F64_BITS, K_EXP_F32, K_EXP_F64,
    K_NOR_F32, K_NOR_F64, W_EXP_F32_BITS, W_EXP_F64_BITS, W_NOR_F32_BITS, W_NOR_F64_BITS,
};

/// A table of doubles from their bits.
const fn f64_table(bits: [u64; 256]) -> [f64; 256] {
    let mut out = [0.0; 256];
    let mut i = 0;
    while i < 256 {
        out[i] = f64::from_bits(bits[i]);
        i += 1;
    }
    out
}

/// A table of floats from their bits.
const fn f32_table(bits: [u32; 256]) -> [f32; 256] {
    let mut out = [0.0; 256];
    let mut i = 0;
    while i < 256 {
        out[i] = f32::from_bits(bits[i]);
        i += 1;
    }
    out
}

static W_NOR_F64: [f64; 256] = f64_table(W_NOR_F64_BITS);
static F_NOR_F64: [f64; 256] = f64_table(F_NOR_F64_BITS);
static W_EXP_F64: [f64; 256] = f64_table(W_EXP_F64_BITS);
static F_EXP_F64: [f64; 256] = f64_table(F_EXP_F64_BITS);
static W_NOR_F32: [f32; 256] = f32_table(W_NOR_F32_BITS);
static F_NOR_F32: [f32; 256] = f32_table(F_NOR_F32_BITS);
static W_EXP_F32: [f32; 256] = f32_table(W_EXP_F32_BITS);
static F_EXP_F32: [f32; 256] = f32_table(F_EXP_F32_BITS);

/// Where the normal ziggurat's tail begins.
const NOR_R: f64 = 3.654_152_885_361_009;
/// `1 / NOR_R`, as NumPy rounds it.
const NOR_INV_R: f64 = 0.273_661_237_329_758_3;
/// Where the exponential ziggurat's tail begins.
const EXP_R: f64 = 7.697_117_470_131_05;

/// One layer draw of the normal ziggurat from word `r`: the layer, the 52-bit magnitude
/// and the signed candidate `x`.
#[inline(always)]
fn normal_layer(r: u64) -> (usize, u64, f64) {
    let idx = (r & 0xff) as usize;
    let r = r >> 8;
    let rabs = (r >> 1) & 0x000f_ffff_ffff_ffff;
    let x = rabs as f64 * W_NOR_F64[idx];
    (idx, rabs, if r & 1 == 1 { -x } else { x })
}

/// A standard normal double (NumPy's `random_standard_normal`). The common case (about 99%
/// of draws: one word, one table lookup and compare) is inline, so a bulk loop over it keeps
/// the generator in registers; the base strip's tail and the wedges are in [`normal_edge`].
#[inline]
pub fn standard_normal(g: &mut Pcg64) -> f64 {
    let (idx, rabs, x) = normal_layer(g.next_u64());
    if rabs < K_NOR_F64[idx] {
        return x;
    }
    normal_slow(g, idx, rabs, x)
}

/// The rest of [`standard_normal`] after a candidate outside its layer's rectangle: the edge
/// test of that candidate, then, if it is rejected, whole draws until one is accepted (the
/// same words in the same order as NumPy's loop).
#[cold]
#[inline(never)]
fn normal_slow(g: &mut Pcg64, idx: usize, rabs: u64, x: f64) -> f64 {
    if let Some(v) = normal_edge(g, idx, rabs, x) {
        return v;
    }
    loop {
        let (idx, rabs, x) = normal_layer(g.next_u64());
        if rabs < K_NOR_F64[idx] {
            return x;
        }
        if let Some(v) = normal_edge(g, idx, rabs, x) {
            return v;
        }
    }
}

/// The tail draw (layer 0, always accepted) or the wedge test of candidate `x` of layer `idx`
/// (`None`: rejected).
fn normal_edge(g: &mut Pcg64, idx: usize, rabs: u64, x: f64) -> Option<f64> {
    if idx == 0 {
        loop {
            let xx = -NOR_INV_R * (-g.next_f64()).ln_1p();
            let yy = -(-g.next_f64()).ln_1p();
            if yy + yy > xx * xx {
                return Some(if (rabs >> 8) & 1 == 1 {
                    -(NOR_R + xx)
                } else {
                    NOR_R + xx
                });
            }
        }
    }
    let u = g.next_f64();
    ((F_NOR_F64[idx - 1] - F_NOR_F64[idx]) * u + F_NOR_F64[idx] < (-0.5 * x * x).exp()).then_some(x)
}

/// A standard normal float (NumPy's `random_standard_normal_f`); note the wedge test evaluates
/// the density in double precision, as NumPy does.
pub fn standard_normal_f32(g: &mut Pcg64) -> f32 {
    loop {
        let r = g.next_u32();
        let idx = (r & 0xff) as usize;
        let negative = (r >> 8) & 1 == 1;
        let rabs = (r >> 9) & 0x007f_ffff;
        let mut x = rabs as f32 * W_NOR_F32[idx];
        if negative {
            x = -x;
        }
        if rabs < K_NOR_F32[idx] {
            return x;
        }
        if idx == 0 {
            loop {
                let xx = -(NOR_INV_R as f32) * (-g.next_f32()).ln_1p();
                let yy = -(-g.next_f32()).ln_1p();
                if yy + yy > xx * xx {
                    return if (rabs >> 8) & 1 == 1 {
                        -(NOR_R as f32 + xx)
                    } else {
                        NOR_R as f32 + xx
                    };
                }
            }
        }
        let u = g.next_f32();
        let lhs = (F_NOR_F32[idx - 1] - F_NOR_F32[idx]) * u + F_NOR_F32[idx];
        let xd = f64::from(x);
        if f64::from(lhs) < (-0.5 * xd * xd).exp() {
            return x;
        }
    }
}

/// One layer draw of the exponential ziggurat from word `r`: the layer, the magnitude and
/// the candidate `x`.
#[inline(always)]
fn exp_layer(r: u64) -> (usize, u64, f64) {
    let ri = r >> 3;
    let idx = (ri & 0xff) as usize;
    let ri = ri >> 8;
    (idx, ri, ri as f64 * W_EXP_F64[idx])
}

/// A standard exponential double (NumPy's `random_standard_exponential`, method "zig"); the
/// common case inline, as [`standard_normal`].
#[inline]
pub fn standard_exponential(g: &mut Pcg64) -> f64 {
    let (idx, ri, x) = exp_layer(g.next_u64());
    if ri < K_EXP_F64[idx] {
        return x;
    }
    exp_slow(g, idx, x)
}

/// The rest of [`standard_exponential`] after a candidate outside its layer's rectangle.
#[cold]
#[inline(never)]
fn exp_slow(g: &mut Pcg64, idx: usize, x: f64) -> f64 {
    if let Some(v) = exp_edge(g, idx, x) {
        return v;
    }
    loop {
        let (idx, ri, x) = exp_layer(g.next_u64());
        if ri < K_EXP_F64[idx] {
            return x;
        }
        if let Some(v) = exp_edge(g, idx, x) {
            return v;
        }
    }
}

/// The tail draw (layer 0) or the wedge test of candidate `x` (`None`: rejected).
fn exp_edge(g: &mut Pcg64, idx: usize, x: f64) -> Option<f64> {
    if idx == 0 {
        return Some(EXP_R - (-g.next_f64()).ln_1p());
    }
    let u = g.next_f64();
    ((F_EXP_F64[idx - 1] - F_EXP_F64[idx]) * u + F_EXP_F64[idx] < (-x).exp()).then_some(x)
}

/// A standard exponential float (NumPy's `random_standard_exponential_f`).
pub fn standard_exponential_f32(g: &mut Pcg64) -> f32 {
    loop {
        let ri = g.next_u32() >> 1;
        let idx = (ri & 0xff) as usize;
        let ri = ri >> 8;
        let x = ri as f32 * W_EXP_F32[idx];
        if ri < K_EXP_F32[idx] {
            return x;
        }
        if idx == 0 {
            return EXP_R as f32 - (-g.next_f32()).ln_1p();
        }
        let u = g.next_f32();
        if (F_EXP_F32[idx - 1] - F_EXP_F32[idx]) * u + F_EXP_F32[idx] < (-x).exp() {
            return x;
        }
    }
}
