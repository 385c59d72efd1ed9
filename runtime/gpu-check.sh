#!/usr/bin/env bash
# The runtime on a real GPU, on a machine that has both a GPU and Rust: builds the bundle
# (runtime/gpu-bundle.sh) and runs it. Where the GPU machine has no Rust, build the bundle here
# and carry it there (see the README's "On a GPU").
# Results: target/gpu-check/results/{report.txt,cuda-tests.txt,placement.json,pytorch.json,transfers.svg}
# Usage: runtime/gpu-check.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
runtime/gpu-bundle.sh target/gpu-check
target/gpu-check/run.sh "$@"
