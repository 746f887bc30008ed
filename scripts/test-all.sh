#!/usr/bin/env bash
# The whole test suite: Rust crates, then the Python package built from source and its tests.
# Works on a fresh machine with Rust, Python 3 and pip (everything else comes from crates.io/PyPI).
set -euo pipefail
cd "$(dirname "$0")/.."
# One clean build: incremental caches would only cost disk (they filled the CI machine once).
export CARGO_INCREMENTAL=0

echo "== Rust: formatting and lints =="
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings

echo "== Rust: tests =="
cargo test --workspace --exclude oxtensor-py

if [ -f crates/oxtensor-py/pyproject.toml ]; then
    echo "== Python: build and install the package =="
    python3 -m pip install --quiet -r python/requirements-test.txt
    python3 -m pip install --quiet ./crates/oxtensor-py
    echo "== Python: tests =="
    (cd python/tests && python3 -m pytest -q)
fi
