#!/usr/bin/env bash
# Runs the runtime's CUDA tests and example on a machine with an NVIDIA GPU and its driver.
# CI has no GPU, so these tests are #[ignore]d there; this script is the one place they run.
# Usage: runtime/gpu-check.sh   (from anywhere; takes a few minutes, most of it compiling)
set -euo pipefail
cd "$(dirname "$0")/.."

# Simulated GPUs would replace the real ones.
unset PLACEMENT_SIMULATED_GPUS

nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv || true

cargo test --release -p placement --test cuda -- --ignored --test-threads=1 --nocapture
cargo test --release -p placement --test no_gpu
cargo run --release -p placement --example tour
