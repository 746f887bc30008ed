//! 200 000 draws per case against NumPy (`tests/fixtures/bulk.txt`): an order-sensitive digest
//! of the draws' bits and the generator state afterwards must both match, which reaches the
//! rare branches the short fixtures may miss (ziggurat tails and wedges, the rejection steps of
//! BTPE, PTRS and HRUA).

use crate::common;

use common::{Draws, arguments, records, run, run_integers};
use oxtensor_random::default_rng;

/// XOR of every draw's bits rotated left by its index mod 64, as `make_fixtures.py` computes.
fn digest(bits: impl Iterator<Item = u64>) -> u64 {
    bits.enumerate()
        .fold(0, |acc, (i, b)| acc ^ b.rotate_left((i % 64) as u32))
}

#[test]
fn bulk_draws_match_numpy_digests() {
    let mut cases = 0;
    for f in records(include_str!("fixtures/bulk.txt")) {
        let (name, seed, args, n, want, after) = (f[0], f[1], f[2], f[4], f[5], f[6]);
        let n: usize = n.parse().expect("count");
        let mut g = default_rng(seed.parse().expect("seed"));
        let arg_strs = arguments(args);
        let draws = if name == "integers" {
            let mut a = arg_strs.clone();
            a.push("0");
            run_integers(name, &mut g, &a[..3], n)
        } else {
            let a: Vec<f64> = arg_strs
                .iter()
                .map(|s| s.parse().expect("float argument"))
                .collect();
            run(name, &mut g, &a, n)
        };
        let got = match draws {
            Draws::F64(v) => digest(v.iter().map(|x| x.to_bits())),
            Draws::F32(v) => digest(v.iter().map(|x| u64::from(x.to_bits()))),
            Draws::I64(v) => digest(v.iter().map(|&x| x as u64)),
            _ => panic!("{name}: bulk cases are scalar"),
        };
        assert_eq!(
            format!("{got:x}"),
            want,
            "{name}({args}): digest of {n} draws differs from NumPy"
        );
        assert_eq!(
            format!("{:x}", g.state().state),
            after,
            "{name}({args}): state after {n} draws"
        );
        cases += 1;
    }
    assert_eq!(cases, 23);
}
