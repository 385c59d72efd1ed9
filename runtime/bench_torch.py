"""The placement benchmark's measurements, with PyTorch, for a side-by-side comparison.

Writes the same JSON as `cargo bench -p placement --bench placement -- --json FILE` (sections
`mlp`, `switching`, `transfers`), so that `--compare FILE` prints both. Needs a CUDA GPU.

    python3 bench_torch.py --json results/pytorch.json [--quick]   (run.sh of the GPU bundle runs it)
"""

import argparse
import json
import statistics
import time

import torch

BATCH = 64
WIDTHS = [256, 512, 256, 16]


def median_time(run, rounds, calls):
    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def mlp(quick):
    rounds, calls = (3, 5) if quick else (9, 20)
    device = torch.device("cuda:0")
    layers = [
        (torch.randn(a, b, device=device), torch.randn(BATCH, b, device=device))
        for a, b in zip(WIDTHS, WIDTHS[1:])
    ]
    x = torch.randn(BATCH, WIDTHS[0])

    def explicit():
        h = x.to(device)
        for weight, bias in layers:
            h = torch.relu(h @ weight + bias)
        return h

    torch.cuda.set_device(0)

    def implicit():
        h = x.cuda()
        for weight, bias in layers:
            h = torch.relu(h @ weight.cuda() + bias.cuda())
        return h

    with torch.no_grad():
        explicit_s = median_time(explicit, rounds, calls)
        implicit_s = median_time(implicit, rounds, calls)
    return [{
        "device": "cuda:0",
        "explicit_us": explicit_s * 1e6,
        "implicit_us": implicit_s * 1e6,
        "ratio": implicit_s / explicit_s,
    }]


def switching(quick):
    sizes = [1 << 18, 1 << 22] if quick else [1 << 18, 1 << 22, 1 << 26]
    two = torch.cuda.device_count() > 1
    home, away = "cuda:0", ("cuda:1" if two else "cpu")
    steps = 4 if quick else 16
    out = []
    for size in sizes:
        x = torch.randn(size // 4, device=home)

        def switch():
            t = x
            for step in range(steps):
                target = away if step % 2 == 0 else home
                if target.startswith("cuda"):
                    torch.cuda.set_device(int(target.split(":")[1]))
                    t = torch.relu(t.cuda())
                else:
                    t = torch.relu(t.cpu())

        def explicit():
            t = x
            for _ in range(steps):
                t = torch.relu(t.to(home))

        explicit_s = median_time(explicit, 3 if quick else 5, 1) / steps
        switching_s = median_time(switch, 3 if quick else 5, 1) / steps
        extra = max(switching_s - explicit_s, 1e-12)
        out.append({
            "devices": f"{home} <-> {away}",
            "bytes": size,
            "explicit_us": explicit_s * 1e6,
            "switching_us": switching_s * 1e6,
            "ratio": switching_s / explicit_s,
            "extra_gbps": size / extra / 1e9,
        })
    return out


def transfers(quick):
    top = 24 if quick else 30
    out = []
    gpu = torch.device("cuda:0")
    for exponent in range(12, top + 1, 2):
        size = 1 << exponent
        host = torch.zeros(size // 4)
        pinned = host.pin_memory()
        on_gpu = host.to(gpu)
        pinned_out = torch.empty(size // 4).pin_memory()
        reps = max(64 >> (exponent // 4), 3)
        kinds = [
            ("host to device, pageable", lambda: host.to(gpu)),
            ("host to device, pinned", lambda: pinned.to(gpu, non_blocking=True)),
            ("device to host, pageable", lambda: on_gpu.to("cpu")),
            ("device to host, pinned", lambda: pinned_out.copy_(on_gpu, non_blocking=True)),
        ]
        if torch.cuda.device_count() > 1:
            kinds.append(("device to device", lambda: on_gpu.to("cuda:1")))
        for kind, run in kinds:
            seconds = median_time(run, reps, 1)
            out.append({"kind": kind, "bytes": size, "seconds": seconds, "gbps": size / seconds / 1e9, "of_best": 0.0})
    best = max(t["gbps"] for t in out)
    for t in out:
        t["of_best"] = t["gbps"] / best
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", required=True)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    results = {
        "source": "pytorch " + torch.__version__,
        "machine": f"{torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}",
        "mlp": mlp(args.quick),
        "switching": switching(args.quick),
        "transfers": transfers(args.quick),
    }
    with open(args.json, "w") as out:
        json.dump(results, out, indent=2)
    print(f"pytorch results: {args.json}")


if __name__ == "__main__":
    main()
