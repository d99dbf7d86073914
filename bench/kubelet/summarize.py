#!/usr/bin/env python3
"""The table of measure.py's results: the kubelet against actorlet, medians
with (min–max, n), and actorlet's ratio. Usage: summarize.py [DIR]
(default CMP_DIR/results)."""
import glob, json, os, statistics, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("CMP_DIR", "/tmp/actorlet-conformance"), "results")

def load(backend, test):
    f = os.path.join(d, f"{backend}-{test}.jsonl")
    return [json.loads(l) for l in open(f) if l.strip()] if os.path.exists(f) else []

def cell(xs, unit, digits):
    if not xs:
        return "—", None
    xs = sorted(xs)
    m = statistics.median(xs)
    return f"**{m:.{digits}f} {unit}** ({xs[0]:.{digits}f}–{xs[-1]:.{digits}f}, n={len(xs)})", m

def row(name, k, a, unit="s", digits=2):
    kc, km = cell(k, unit, digits)
    ac, am = cell(a, unit, digits)
    ratio = f"{am / km:.2f}×" if km and am is not None else "—"
    print(f"| {name} | {kc} | {ac} | {ratio} |")

print("| row | kubelet v1.34 | actorlet | actorlet / kubelet |")
print("|---|---|---|---|")
for test, label in (("start1", "1 pod: manifest written → container started"), ("start20", "20 pods at once → all started")):
    row(label, [r["all_running_s"] for r in load("kubelet", test) if "all_running_s" in r],
        [r["all_running_s"] for r in load("actorlet", test) if "all_running_s" in r])
    if test == "start20":
        row("20 pods: first container started", [r["first_s"] for r in load("kubelet", test) if "first_s" in r],
            [r["first_s"] for r in load("actorlet", test) if "first_s" in r])
row("first restart: exit → next start (exit after 2–3 s)", [r["finish_to_start_ms"] for r in load("kubelet", "restart") if "finish_to_start_ms" in r],
    [r["finish_to_start_ms"] for r in load("actorlet", "restart") if "finish_to_start_ms" in r], "ms", 0)
kc, ac = load("kubelet", "crash"), load("actorlet", "crash")
for k in sorted({r["restart"] for r in kc + ac}):
    row(f"CrashLoopBackOff restart {k}: exit → start (nominal {[0, 10, 20, 40, 80, 160, 300][k-1]} s)",
        [r["delay_s"] for r in kc if r["restart"] == k], [r["delay_s"] for r in ac if r["restart"] == k], "s", 2)
for proc in ("agent", "containerd"):
    ki = [r for r in load("kubelet", "idle") if r["process"] == proc]
    ai = [r for r in load("actorlet", "idle") if r["process"] == proc]
    row(f"idle, 20 pods: {proc} CPU over 60 s", [r["cpu_pct"] for r in ki], [r["cpu_pct"] for r in ai], "%", 2)
    row(f"idle, 20 pods: {proc} RSS", [r["rss_mib"] for r in ki], [r["rss_mib"] for r in ai], "MiB", 1)
