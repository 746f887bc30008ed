//! Random inputs and random elementwise graphs for the property tests of several test files.

use oxtensor::Var;

/// `n` values in [-2, 2) from a xorshift stream seeded by `seed`.
pub fn pseudo_random(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            4.0 * ((s >> 11) as f64 / (1u64 << 53) as f64) - 2.0
        })
        .collect()
}

/// A random elementwise expression over `x` and `y` (vectors): one operation per code.
pub fn expr(x: &Var, y: &Var, codes: &[u8]) -> Var {
    let mut stack: Vec<Var> = vec![x.clone(), y.clone()];
    for &c in codes {
        let a = stack[stack.len() - 1].clone();
        let b = stack[(c as usize / 8) % stack.len()].clone();
        let v = match c % 8 {
            0 => &a + &b,
            1 => &a * &b,
            2 => &a - &b,
            3 => a.sin(),
            4 => a.abs().log1p(),
            5 => (-(&a * &a)).exp(),
            6 => a.tanh() * 2.0,
            _ => oxtensor::ops::maximum(&a, &b).unwrap(),
        };
        stack.push(v);
    }
    stack.pop().unwrap_or_else(|| x.clone())
}
