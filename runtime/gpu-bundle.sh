#!/usr/bin/env bash
# Builds, on a machine with Rust, everything the runtime's GPU check runs, into DIR: the CUDA
# tests and the tests that need no GPU, the placement and device_check benchmarks (release
# executables, symbols stripped), bench_torch.py, and run.sh, which needs nothing else: no cargo,
# no rustc, no network. At most 64 MiB in all, what one call carries to a GPU machine.
# Usage: runtime/gpu-bundle.sh DIR     then, on the GPU machine: DIR/run.sh [--quick]
set -euo pipefail
if [ $# -ne 1 ]; then
    echo "usage: runtime/gpu-bundle.sh DIR" >&2
    exit 2
fi
mkdir -p "$1"
dir=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."

# The executables of the test and bench targets named, as `name path` lines, from cargo's JSON.
executables() {
    python3 -c '
import json, sys
wanted = set(sys.argv[1:])
for line in sys.stdin:
    message = json.loads(line)
    target = message.get("target", {})
    if (message.get("reason") == "compiler-artifact" and message.get("executable")
            and target.get("name") in wanted
            and set(target.get("kind", [])) & {"test", "bench"}):
        print(target["name"], message["executable"])
' "$@"
}

built=$(mktemp)
trap 'rm -f "$built"' EXIT
cargo test --release --locked -p placement --test cuda --test no_gpu --no-run --message-format json \
    | executables cuda no_gpu > "$built"
cargo bench --locked -p placement --bench placement --bench device_check --no-run --message-format json \
    | executables placement device_check | sed 's/^/bench-/' >> "$built"

rm -rf "$dir/bin" "$dir/results"
mkdir -p "$dir/bin"
while read -r name path; do
    install -m 755 "$path" "$dir/bin/$name"
    strip --strip-all "$dir/bin/$name"
done < "$built"
for name in cuda no_gpu bench-placement bench-device_check; do
    if [ ! -x "$dir/bin/$name" ]; then
        echo "gpu-bundle: cargo built no executable for $name" >&2
        exit 1
    fi
done
install -m 644 runtime/bench_torch.py "$dir/bench_torch.py"
install -m 755 runtime/bundle/run.sh "$dir/run.sh"

size=$(du -sb "$dir" | cut -f1)
limit=$((64 * 1024 * 1024))
if [ "$size" -gt "$limit" ]; then
    echo "gpu-bundle: $dir holds $size bytes, over the 64 MiB one call can carry" >&2
    exit 1
fi
echo "gpu-bundle: $dir ($((size / 1024 / 1024)) MiB); on the GPU machine run $(basename "$dir")/run.sh [--quick]"
