//! Test data: deterministic pseudo-random values with the edge cases of each dtype mixed in,
//! and views of them with unusual strides.

use oxtensor_data::{DType, Tensor};

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    /// Seeded generator.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform(0.0, 1.0) < p
    }
}

/// Float edge cases.
const FLOAT_SPECIALS: [f64; 22] = [
    0.0,
    -0.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    1.0,
    -1.0,
    1e300,
    -1e300,
    1e-300,
    5e-324,
    700.0,
    -745.0,
    40.0,
    -40.0,
    3.0,
    -7.0,
];

/// `n` values of `dtype`: edge cases with probability `special`, otherwise values of a
/// modest range (`±scale` for floats, small integers or the full range for integers).
pub fn values(rng: &mut Rng, dtype: DType, n: usize, special: f64, scale: f64) -> Tensor {
    let mut v = vec![0.0f64; n];
    let mut ints = vec![0i128; n];
    for i in 0..n {
        let sp = rng.chance(special);
        if dtype.is_float() {
            v[i] = if sp {
                FLOAT_SPECIALS[rng.below(FLOAT_SPECIALS.len())]
            } else {
                rng.uniform(-scale, scale)
            };
        } else {
            let (lo, hi): (i128, i128) = match dtype {
                DType::Bool => (0, 1),
                DType::I8 => (i8::MIN.into(), i8::MAX.into()),
                DType::I16 => (i16::MIN.into(), i16::MAX.into()),
                DType::I32 => (i32::MIN.into(), i32::MAX.into()),
                DType::I64 => (i64::MIN.into(), i64::MAX.into()),
                DType::U8 => (0, u8::MAX.into()),
                DType::U16 => (0, u16::MAX.into()),
                DType::U32 => (0, u32::MAX.into()),
                _ => (0, u64::MAX.into()),
            };
            ints[i] = if sp {
                [lo, hi, 0, 1, -1, 2, -7, 7, 3, lo + 1][rng.below(10)].clamp(lo, hi)
            } else {
                let small = (rng.below(41) as i128 - 20).clamp(lo, hi);
                if rng.chance(0.3) {
                    lo + (rng.next() as i128).rem_euclid(hi - lo + 1)
                } else {
                    small
                }
            };
        }
    }
    let t = if dtype.is_float() {
        Tensor::from_slice(&v, &[n]).expect("values")
    } else {
        let as_i64: Vec<i64> = ints.iter().map(|&x| x as i64).collect();
        Tensor::from_slice(&as_i64, &[n]).expect("values")
    };
    // i64 → unsigned casts wrap, so the bit patterns of u64 values survive.
    t.cast(dtype)
}

/// A tensor of `shape` and `dtype`, laid out as asked: contiguous, transposed in storage (a
/// permuted view of a permuted array), or with the last dimension reversed.
pub fn tensor(
    rng: &mut Rng,
    dtype: DType,
    shape: &[usize],
    layout: Layout,
    special: f64,
) -> Tensor {
    let n: usize = shape.iter().product();
    let flat = values(rng, dtype, n, special, 3.0);
    match layout {
        Layout::Contiguous => flat.reshape(shape).expect("reshape"),
        Layout::Transposed => {
            let rev: Vec<usize> = shape.iter().rev().copied().collect();
            let perm: Vec<usize> = (0..shape.len()).rev().collect();
            flat.reshape(&rev).expect("reshape").permute(&perm)
        }
        Layout::Reversed => {
            let t = flat.reshape(shape).expect("reshape");
            let mut strides: Vec<isize> = t.strides().to_vec();
            let Some(last) = shape.len().checked_sub(1) else {
                return t;
            };
            let offset = (shape[last].max(1) - 1) * strides[last] as usize;
            strides[last] = -strides[last];
            t.view(shape, &strides, offset).expect("reversed view")
        }
    }
}

/// How a test input is laid out in memory.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Layout {
    /// C order.
    Contiguous,
    /// Fortran order (strides increasing).
    Transposed,
    /// Last dimension walked backwards.
    Reversed,
}

/// A random layout.
pub fn any_layout(rng: &mut Rng) -> Layout {
    [Layout::Contiguous, Layout::Transposed, Layout::Reversed][rng.below(3)]
}
