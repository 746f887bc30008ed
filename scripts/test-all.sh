#!/usr/bin/env bash
# The whole test suite: Rust crates, then the Python package built from source and its tests.
# Works on a fresh machine with Rust, Python 3 and pip (everything else comes from crates.io/PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
# One clean build: incremental caches would only cost disk (they filled the CI machine once).
export CARGO_INCREMENTAL=0

# Each section prints its start time in seconds since the suite began, so a slow CI run shows
# which section grew.
section() { echo "== [${SECONDS}s] $* =="; }

section "Rust: formatting and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings

# Property tests draw from a fixed seed here, so a CI run is reproducible; their regression
# files (`*.proptest-regressions`, committed) replay every case that once failed. Run
# `cargo test` without it to explore new cases.
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261125}"

section "Rust: tests"
# --no-fail-fast: one failing test binary must not hide failures in the others. The whole
# workspace, the Python extension included (it has no test harness, see its Cargo.toml): so its
# dependencies are built here once, with the same features, and the package build below only
# compiles the extension itself.
cargo test --workspace --no-fail-fast

# The generated C is compiled for this machine's CPU (-march=native). Compile it for the lower
# x86-64 levels too, so a machine with AVX-512 also runs what AVX2-only (v3) and SSE4.2-only
# (v2) CPUs get: other vector math variants, other rounding of transcendentals. v3, what most
# users without AVX-512 have, runs every native test; v2 the tests of vector math and
# reductions (modules of the native test binary, chosen by name), where the code differs by
# level (loops and caching are the same at every level). The binary is chosen with
# --workspace --test, not with `-p oxtensor-native`: with another set of packages cargo
# resolves other dependency features and rebuilds everything.
section "Rust: native backend compiled for x86-64-v3"
OXTENSOR_NATIVE_TARGET=x86-64-v3 cargo test --workspace --no-fail-fast --test native_tests
section "Rust: native backend compiled for x86-64-v2"
OXTENSOR_NATIVE_TARGET=x86-64-v2 cargo test --workspace --no-fail-fast --test native_tests -- \
    elemwise:: reduce:: fused:: targets::

if [ -f crates/oxtensor-py/pyproject.toml ]; then
    section "Python: build and install the package"
    python3 -m pip install --quiet -r python/requirements-test.txt
    # The tests need a correct build, not a fast one: build the extension in cargo's `dev`
    # profile. `test` inherits `dev` unchanged (Cargo.toml), so this reuses every library
    # `cargo test` compiled above (the same features, since that build included the
    # extension) and compiles only the extension itself, instead of building everything again
    # at opt-level 3 (under a minute instead of 6-9; the tests run no slower, their time is in
    # generated C and NumPy). Not the `test` profile: maturin would build a test harness. For
    # a fast installed package, run `pip install ./crates/oxtensor-py` afterwards (README).
    MATURIN_PEP517_ARGS="--profile dev" python3 -m pip install --quiet ./crates/oxtensor-py
    section "Python: tests"
    # In parallel processes (pytest-xdist), one per core up to four: the tests are independent
    # (each compiles its own functions; the on-disk cache is safe under concurrent writers).
    (cd python/tests && python3 -m pytest -q -n auto --maxprocesses 4)
fi
section "done"
