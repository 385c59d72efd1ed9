#!/usr/bin/env bash
# The runtime on a real GPU, in one go (about five minutes on one GPU, most of it compiling):
# the CUDA tests (#[ignore]d in CI, which has no GPU), then the placement benchmark (implicit
# against explicit, a stray set_device, transfer rates) side by side with the same measurements
# in PyTorch where `import torch` works, and the #[device_check] overhead.
# Results: target/gpu-check/{cuda-tests.txt,placement.json,pytorch.json,transfers.svg,report.txt}
# Usage: runtime/gpu-check.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."

# Simulated GPUs would replace the real ones.
unset PLACEMENT_SIMULATED_GPUS
out=target/gpu-check
mkdir -p "$out"
quick=()
if [ "${1:-}" = "--quick" ]; then quick=(--quick); fi

{
    date -u
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv || true
} | tee "$out/report.txt"

cargo test --release -p placement --test cuda -- --ignored --test-threads=1 --nocapture 2>&1 | tee "$out/cuda-tests.txt"
cargo test --release -p placement --test no_gpu

compare=()
if python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    python3 runtime/bench_torch.py --json "$out/pytorch.json" "${quick[@]}"
    compare=(--compare "$out/pytorch.json")
else
    echo "PyTorch with CUDA is not installed here: no side-by-side comparison" | tee -a "$out/report.txt"
fi
cargo bench -p placement --bench placement -- --json "$out/placement.json" --svg "$out/transfers.svg" "${compare[@]}" "${quick[@]}" | tee -a "$out/report.txt"
cargo bench -p placement --bench device_check | tee -a "$out/report.txt"
echo "results in $out"
