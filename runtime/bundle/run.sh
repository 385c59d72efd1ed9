#!/usr/bin/env bash
# The runtime's GPU check, from the bundle that runtime/gpu-bundle.sh built: it needs no Rust
# toolchain and no network. It names the GPU (nvidia-smi), runs the CUDA tests and the tests
# that need no GPU, then the placement benchmark (implicit against explicit, a stray set_device,
# transfer rates) side by side with the same measurements in PyTorch where `import torch` finds
# CUDA, and the #[device_check] overhead. Results in results/ beside this script: report.txt,
# cuda-tests.txt, no-gpu-tests.txt, placement.json, pytorch.json, transfers.svg. Without a GPU
# it runs what can run and says so in report.txt. It exits 0: the report says what failed.
# Usage: run.sh [--quick]     (--quick: fewer sizes and repetitions, within five minutes)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/results"
rm -rf "$out"
mkdir -p "$out"
report="$out/report.txt"
quick=()
if [ "${1:-}" = "--quick" ]; then quick=(--quick); fi
# Simulated GPUs would replace the real ones.
unset PLACEMENT_SIMULATED_GPUS

say() { echo "$*" | tee -a "$report"; }
# Runs a step, its output to a file, and says in the report how it ended.
step() {
    local what=$1 file=$2
    shift 2
    "$@" > "$out/$file" 2>&1
    local status=$?
    if [ $status -eq 0 ]; then say "$what: passed ($file)"; else say "$what: FAILED, exit $status ($file)"; fi
}

say "placement GPU check, $(date -u '+%Y-%m-%d %H:%M UTC')${quick:+ (quick)}"
gpu=0
if nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > "$out/gpus.csv" 2>/dev/null \
    && [ "$(wc -l < "$out/gpus.csv")" -gt 1 ]; then
    gpu=1
    tee -a "$report" < "$out/gpus.csv"
else
    say "no GPU found: nvidia-smi is missing or lists no GPU; the CUDA tests, the GPU benchmarks and PyTorch's side were not run"
fi
rm -f "$out/gpus.csv"

step "tests that need no GPU" no-gpu-tests.txt "$here/bin/no_gpu"
if [ $gpu -eq 1 ]; then
    step "CUDA tests" cuda-tests.txt "$here/bin/cuda" --ignored --test-threads=1 --nocapture
fi

compare=()
if [ $gpu -eq 1 ] && python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    step "PyTorch's side (bench_torch.py)" pytorch.txt \
        python3 "$here/bench_torch.py" --json "$out/pytorch.json" "${quick[@]}"
    if [ -s "$out/pytorch.json" ]; then compare=(--compare "$out/pytorch.json"); fi
elif [ $gpu -eq 1 ]; then
    say "PyTorch with CUDA is not installed here: no side-by-side comparison"
fi
step "placement benchmark" placement.txt "$here/bin/bench-placement" \
    --json "$out/placement.json" --svg "$out/transfers.svg" "${compare[@]}" "${quick[@]}"
cat "$out/placement.txt" >> "$report"
step "#[device_check] benchmark" device-check.txt "$here/bin/bench-device_check"
cat "$out/device-check.txt" >> "$report"
say "results in $out"
exit 0
