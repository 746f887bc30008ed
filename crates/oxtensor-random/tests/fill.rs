//! The bulk fills draw exactly what the one-at-a-time methods draw (same values bit for bit,
//! same final state), over enough draws to reach the ziggurats' tails and wedges many times.

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
