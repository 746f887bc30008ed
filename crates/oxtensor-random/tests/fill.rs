//! The bulk fills draw exactly what the one-at-a-time methods draw (same values bit for bit,
//! same final state) and what NumPy draws (the 200 000-draw digests of `fixtures/bulk.txt`),
//! also when called on pieces of uneven lengths.

use oxtensor_random::default_rng;

const N: usize = 200_000;

#[test]
fn fill_normal_equals_repeated_normal() {
    let (mut a, mut b) = (default_rng(11), default_rng(11));
    let mut out = vec![0.0; N];
    a.fill_normal(1.5, 2.0, &mut out);
    for (k, &x) in out.iter().enumerate() {
        let want = b.normal(1.5, 2.0).expect("scale >= 0");
        assert_eq!(x.to_bits(), want.to_bits(), "draw {k}");
    }
    assert_eq!(a.state(), b.state());
}

#[test]
fn fill_exponential_equals_repeated_exponential() {
    let (mut a, mut b) = (default_rng(12), default_rng(12));
    let mut out = vec![0.0; N];
    a.fill_exponential(3.0, &mut out);
    for (k, &x) in out.iter().enumerate() {
        let want = b.exponential(3.0).expect("scale >= 0");
        assert_eq!(x.to_bits(), want.to_bits(), "draw {k}");
    }
    assert_eq!(a.state(), b.state());
}

#[test]
fn fill_uniform_equals_repeated_uniform() {
    let (mut a, mut b) = (default_rng(13), default_rng(13));
    let mut out = vec![0.0; N];
    a.fill_uniform(-1.0, 3.0, &mut out);
    for (k, &x) in out.iter().enumerate() {
        let want = b.uniform(-1.0, 2.0).expect("finite range");
        assert_eq!(x.to_bits(), want.to_bits(), "draw {k}");
    }
    assert_eq!(a.state(), b.state());
}

/// XOR of every draw's bits rotated left by its index mod 64, as `make_fixtures.py` computes.
fn digest(v: &[f64]) -> String {
    let d = v.iter().enumerate().fold(0u64, |acc, (i, x)| {
        acc ^ x.to_bits().rotate_left((i % 64) as u32)
    });
    format!("{d:x}")
}

/// The `bulk.txt` record of NumPy's 200 000 draws of `name` from `default_rng(7)`: (digest,
/// state after).
fn numpy_bulk(name: &str) -> (String, String) {
    let line = include_str!("fixtures/bulk.txt")
        .lines()
        .find(|l| l.starts_with(&format!("{name}|7||f64|")))
        .expect("a bulk record");
    let f: Vec<&str> = line.split('|').collect();
    assert_eq!(f[4], N.to_string());
    (f[5].to_string(), f[6].to_string())
}

#[test]
fn fills_equal_numpys_200000_draws() {
    for (name, fill) in [
        ("standard_normal", 0usize),
        ("standard_exponential", 1usize),
    ] {
        let (want, after) = numpy_bulk(name);
        // Whole, and in uneven pieces.
        for piece in [N, 1, 3, 5, 997, 65_536] {
            let mut g = default_rng(7);
            let mut out = vec![0.0; N];
            for chunk in out.chunks_mut(piece) {
                if fill == 0 {
                    g.fill_normal(0.0, 1.0, chunk);
                } else {
                    g.fill_exponential(1.0, chunk);
                }
            }
            assert_eq!(digest(&out), want, "{name} in pieces of {piece}");
            assert_eq!(format!("{:x}", g.state().state), after, "{name} state");
        }
    }
}

#[test]
fn fills_leave_the_state_of_the_last_word_used() {
    // Every short length, then one-at-a-time draws continue the same stream;
    // the 32-bit buffer is left alone, as 64-bit draws leave it.
    for len in 0..40 {
        let (mut a, mut b) = (default_rng(21), default_rng(21));
        a.bit_generator_mut().next_u32();
        b.bit_generator_mut().next_u32();
        let mut out = vec![0.0; len];
        a.fill_normal(0.0, 1.0, &mut out);
        for (k, &x) in out.iter().enumerate() {
            assert_eq!(
                x.to_bits(),
                b.standard_normal().to_bits(),
                "len {len} draw {k}"
            );
        }
        assert_eq!(a.state(), b.state(), "len {len}");
        a.fill_exponential(2.0, &mut out);
        for &x in &out {
            assert_eq!(x.to_bits(), b.exponential(2.0).expect("scale").to_bits());
        }
        assert_eq!(a.state(), b.state(), "len {len}");
        assert_eq!(a.random().to_bits(), b.random().to_bits());
    }
}
