//! SeedSequence and PCG64 against NumPy records (`tests/fixtures/seeding.txt`, written by
//! `tests/fixtures/make_fixtures.py`): every comparison is exact.

use oxtensor_random::{Pcg64, Pcg64State, SeedSequence};

fn records() -> Vec<Vec<String>> {
    include_str!("fixtures/seeding.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split('|').map(str::to_string).collect())
        .collect()
}

fn hex_list(s: &str) -> Vec<u128> {
    if s.is_empty() {
        return Vec::new();
    }
    s.split(',')
        .map(|w| u128::from_str_radix(w, 16).expect("hex word"))
        .collect()
}

fn seed_of(s: &str) -> u128 {
    s.parse().expect("decimal seed")
}

#[test]
fn seed_sequence_pool_and_state_match_numpy() {
    let mut seen = 0;
    for r in records().iter().filter(|r| r[0] == "seedseq") {
        let entropy: Vec<u32> = hex_list(&r[1]).into_iter().map(|w| w as u32).collect();
        let key: Vec<u64> = if r[2].is_empty() {
            Vec::new()
        } else {
            r[2].split(',').map(|k| k.parse().expect("key")).collect()
        };
        let pool_size: usize = r[3].parse().expect("pool size");
        let ss = SeedSequence::with_spawn_key(entropy, key, pool_size).expect("pool size >= 4");
        let pool: Vec<u128> = ss.pool().iter().map(|&w| u128::from(w)).collect();
        assert_eq!(pool, hex_list(&r[4]), "pool of {r:?}");
        let s32: Vec<u128> = ss
            .generate_state_u32(8)
            .iter()
            .map(|&w| u128::from(w))
            .collect();
        assert_eq!(s32, hex_list(&r[5]), "uint32 state of {r:?}");
        let s64: Vec<u128> = ss
            .generate_state_u64(4)
            .iter()
            .map(|&w| u128::from(w))
            .collect();
        assert_eq!(s64, hex_list(&r[6]), "uint64 state of {r:?}");
        seen += 1;
    }
    assert_eq!(seen, 11);
}

#[test]
fn big_int_and_list_entropy_split_like_numpy() {
    assert_eq!(SeedSequence::from_u128(0).entropy(), &[0]);
    assert_eq!(
        SeedSequence::from_u128((1 << 100) + 12345).entropy(),
        &[12345, 0, 0, 16]
    );
    assert_eq!(
        SeedSequence::from_ints(&[1, (1 << 64) + 3, 0]).entropy(),
        &[1, 3, 0, 1, 0]
    );
}

#[test]
fn pool_size_below_four_is_an_error_naming_the_argument() {
    let err = SeedSequence::with_spawn_key(vec![1], Vec::new(), 3).expect_err("pool_size 3");
    assert_eq!(err.argument, "pool_size");
    assert!(err.to_string().contains("at least 4"), "{err}");
}

#[test]
fn spawned_children_match_numpy() {
    let mut root = SeedSequence::from_u128(2024);
    let kids = root.spawn(3);
    assert_eq!(root.n_children_spawned(), 3);
    for r in records().iter().filter(|r| r[0] == "spawn") {
        let i: usize = r[1].parse().expect("index");
        let got: Vec<u128> = kids[i]
            .generate_state_u64(4)
            .iter()
            .map(|&w| u128::from(w))
            .collect();
        assert_eq!(got, hex_list(&r[2]), "child {i}");
        assert_eq!(kids[i].spawn_key(), &[i as u64]);
    }
}

#[test]
fn pcg64_seeding_and_raw_words_match_numpy() {
    let recs = records();
    for r in recs.iter().filter(|r| r[0] == "pcgstate") {
        let s = Pcg64::seed_from_u128(seed_of(&r[1])).state();
        assert_eq!(s.state, hex_list(&r[2])[0], "state for seed {}", r[1]);
        assert_eq!(s.inc, hex_list(&r[3])[0], "inc for seed {}", r[1]);
    }
    for r in recs.iter().filter(|r| r[0] == "u64") {
        let mut g = Pcg64::seed_from_u128(seed_of(&r[1]));
        let got: Vec<u128> = (0..50).map(|_| u128::from(g.next_u64())).collect();
        assert_eq!(got, hex_list(&r[2]), "u64 stream for seed {}", r[1]);
    }
    for r in recs.iter().filter(|r| r[0] == "f64") {
        let mut g = Pcg64::seed_from_u128(seed_of(&r[1]));
        let got: Vec<u128> = (0..50)
            .map(|_| u128::from(g.next_f64().to_bits()))
            .collect();
        assert_eq!(got, hex_list(&r[2]), "f64 stream for seed {}", r[1]);
    }
}

#[test]
fn buffered_u32_and_state_round_trip_match_numpy() {
    for r in records().iter().filter(|r| r[0] == "u32") {
        let mut g = Pcg64::seed_from_u128(seed_of(&r[1]));
        let got: Vec<u128> = (0..51).map(|_| u128::from(g.next_u32())).collect();
        assert_eq!(got, hex_list(&r[2]), "u32 stream for seed {}", r[1]);
        let s = g.state();
        assert_eq!(s.has_uint32, r[3] == "1");
        assert_eq!(u128::from(s.uinteger), hex_list(&r[4])[0]);
        assert_eq!(s.state, hex_list(&r[5])[0]);
        // A generator rebuilt from the plain state continues the same stream.
        let mut h = Pcg64::from_state(Pcg64State { ..s });
        assert_eq!(h.next_u32(), g.next_u32());
        assert_eq!(h.next_u64(), g.next_u64());
    }
}

#[test]
fn advance_and_jumped_match_numpy() {
    let recs = records();
    for r in recs.iter().filter(|r| r[0] == "advance") {
        let mut g = Pcg64::seed_from_u128(seed_of(&r[1]));
        g.next_u32();
        g.advance(hex_list(&r[2])[0]);
        let s = g.state();
        assert_eq!(s.state, hex_list(&r[3])[0], "advance {:?}", r);
        assert_eq!(s.has_uint32, r[4] == "1");
        let got: Vec<u128> = (0..5).map(|_| u128::from(g.next_u64())).collect();
        assert_eq!(got, hex_list(&r[5]));
    }
    for r in recs.iter().filter(|r| r[0] == "jumped") {
        let mut g = Pcg64::seed_from_u128(seed_of(&r[1])).jumped(r[2].parse().expect("jumps"));
        assert_eq!(g.state().state, hex_list(&r[3])[0], "jumped {:?}", r);
        let got: Vec<u128> = (0..5).map(|_| u128::from(g.next_u64())).collect();
        assert_eq!(got, hex_list(&r[4]));
    }
}
