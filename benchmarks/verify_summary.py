"""verify --json files of the GPU tier -> one line per kernel: cases, verdict, CPU runtime vs GPU (max ULP)."""
import json, glob, os, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f)); cases = d["cases"]
    worst = {}; exact = True; ok = all(c["equivalent"] for c in cases)
    gpu_bit = all(o["bit_identical"] for c in cases for o in c["outputs"])
    for c in cases:
        for o in c["cpu_runtime_vs_gpu"]:
            exact &= o["bit_identical"]
            if o.get("max_ulp") is not None:
                worst[o["name"].split()[0]] = max(worst.get(o["name"].split()[0], 0), o["max_ulp"])
    dists = sorted({c["distribution"] for c in cases})
    print(f"{os.path.basename(f)[:-5]}: {len(cases)} cases, equivalent={ok}, translation==Numba(GPU) bit-identical in all: {gpu_bit}; CPU runtime vs GPU: {'bit-identical' if exact else 'max ULP ' + str(worst)}; dists {dists}")
