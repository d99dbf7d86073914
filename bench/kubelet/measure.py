#!/usr/bin/env python3
"""The kubelet and actorlet side by side on the same private containerd (CRI).

Adapted from ../shared/kubelet-oracle/abmeasure.py: there actorlet ran on
Docker; here both agents drive the one containerd run.sh starts, one after
the other, and every time comes from its CRI (crictl inspect: startedAt,
finishedAt, ns precision), never from polling the agents.

Usage: measure.py BACKEND TEST [n]      (environment: CMP_DIR, CRICTL)
  BACKEND: kubelet | actorlet
  TEST:    crash [pods]      CrashLoopBackOff schedule: exit 1 at once, CMP_RESTARTS (5) restarts per pod
           restart [n]       first restart from the exit: exit 0 after 2000 + U(0,999) ms, n fresh pods one after another
           start1 [n]        manifest written (renamed into place) -> container startedAt, 1 pod, n times
           start20 [rounds]  20 manifests at once -> every startedAt, rounds times
           idle [secs]       20 running pods: the agent's (and containerd's) CPU % and RSS over secs (60)
           clean             remove every manifest of this harness, wait for the containers to stop
Writes one JSON line per sample to CMP_DIR/results/BACKEND-TEST.jsonl (and stdout).
"""
import glob, json, os, random, statistics, subprocess, sys, time, datetime

D = os.environ.get("CMP_DIR", "/tmp/actorlet-conformance")
IMG = "actorlet/testworkload:0.1.0"
SOCK = f"unix://{D}/containerd/containerd.sock"
CRICTL = [os.environ.get("CRICTL", "crictl"), "--runtime-endpoint", SOCK, "--image-endpoint", SOCK, "--timeout", "10s"]
B = {
    # the kubelet names a static pod <name>-<node>; it labels containers io.kubernetes.*
    "kubelet": dict(manifests=f"{D}/kubelet/manifests", pidfile=f"{D}/kubelet/kubelet.pid",
                    filters=[], podlabel="io.kubernetes.pod.name", suffix="-kb-node",
                    name=lambda c: c["metadata"]["name"]),
    "actorlet": dict(manifests=f"{D}/actorlet/manifests", pidfile=f"{D}/actorlet/actorlet.pid",
                     filters=["--label", "io.actorlet.node=cmp-node", "--label", "io.actorlet.container.type=app"],
                     podlabel="io.actorlet.pod.name", suffix="",
                     name=lambda c: c["labels"].get("io.actorlet.container.name", "")),
}
RT_PIDFILE = f"{D}/containerd/containerd.pid"

def ts(s):
    """RFC3339Nano, or ns since the epoch -> epoch float; None for zero times."""
    if s in (None, "", 0) or str(s).startswith("0001") or str(s).startswith("1970"):
        return None
    if isinstance(s, (int, float)) or str(s).isdigit():
        v = int(s) / 1e9
        return v if v > 0 else None
    s = s.rstrip("Z")
    frac = 0.0
    if "." in s:
        s, f = s.split(".", 1)
        frac = float("0." + f.split("+")[0])
    s = s.split("+")[0]
    d = datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return d.timestamp() + frac

def sh(cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout

class Runtime:
    """The harness's app containers on containerd, with CRI's timestamps. A
    finished record is final; dead instances the agent's GC removes stay
    in the cache (crictl lists only what is left)."""
    def __init__(self, backend):
        self.b = B[backend]
        self.cache = {}

    def list(self):
        out = []
        js = json.loads(sh(CRICTL + ["ps", "-a", "-o", "json"] + self.b["filters"]) or '{"containers":[]}')
        for c in js.get("containers", []):
            pod = c["labels"].get(self.b["podlabel"], "")
            if not pod or self.b["name"](c) != "c":
                continue
            if self.b["suffix"] and pod.endswith(self.b["suffix"]):
                pod = pod[: -len(self.b["suffix"])]
            cid = c["id"]
            r = self.cache.get(cid)
            if r is None or r["finished"] is None:
                st = json.loads(sh(CRICTL + ["inspect", "-o", "json", cid]) or "{}").get("status", {})
                r = dict(id=cid, pod=pod, attempt=c["metadata"].get("attempt", 0),
                         started=ts(st.get("startedAt")), finished=ts(st.get("finishedAt")), exit=st.get("exitCode"))
                self.cache[cid] = r
            out.append(r)
        return out

# CMP_SECCOMP=RuntimeDefault (or Unconfined) gives every pod that
# securityContext.seccompProfile, so both agents run the same profile: left
# unset, the kubelet runs containers Unconfined (its default without
# seccompDefault) and actorlet with the runtime's default profile.
SECCOMP = os.environ.get("CMP_SECCOMP", "")

def manifest(name, args, restart="Always"):
    spec = {"hostNetwork": True, "restartPolicy": restart, "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "c", "image": IMG, "imagePullPolicy": "Never", "args": args}]}
    if SECCOMP:
        spec["securityContext"] = {"seccompProfile": {"type": SECCOMP}}
    return json.dumps({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"cmp": "1"}},
        "spec": spec,
    }, indent=1)

def write(backend, name, args, restart="Always"):
    d = B[backend]["manifests"]
    tmp = os.path.join(d, "." + name + ".tmp")
    with open(tmp, "w") as f:
        f.write(manifest(name, args, restart))
    t = time.time()
    os.rename(tmp, os.path.join(d, name + ".json"))
    return t

def remove(backend, prefix):
    for f in glob.glob(os.path.join(B[backend]["manifests"], prefix + "*.json")):
        os.remove(f)

def wait_gone(rt, prefix, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        # stopped is enough: the kubelet removes dead containers only in its 1-min GC
        if not [r for r in rt.list() if r["pod"].startswith(prefix) and r["finished"] is None]:
            return True
        time.sleep(0.5)
    return False

def out(backend, test, rec):
    rec = dict(backend=backend, test=test, **rec)
    os.makedirs(f"{D}/results", exist_ok=True)
    with open(f"{D}/results/{backend}-{test}.jsonl", "a") as f:
        f.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)

def med(xs):
    return round(statistics.median(xs), 3) if xs else None

def crash(backend, pods=3, timeout=600):
    restarts = int(os.environ.get("CMP_RESTARTS", "5"))
    rt = Runtime(backend)
    names = [f"crash{i}" for i in range(pods)]
    for n in names:
        write(backend, n, ["--exit-after", "1ms", "--exit-code", "1"])
    end = time.time() + timeout
    while time.time() < end:
        time.sleep(0.5)
        rt.list()
        if all(any(r["pod"] == n and r["attempt"] >= restarts and r["started"] for r in rt.cache.values()) for n in names):
            break
    for n in names:
        by = {r["attempt"]: r for r in rt.cache.values() if r["pod"] == n}
        for k in range(1, restarts + 1):
            if k in by and k - 1 in by and by[k]["started"] and by[k - 1]["finished"]:
                out(backend, "crash", dict(pod=n, restart=k, delay_s=round(by[k]["started"] - by[k - 1]["finished"], 3)))
    remove(backend, "crash")
    wait_gone(rt, "crash")

def restart(backend, n=10):
    rt = Runtime(backend)
    for i in range(n):
        name = f"rs{int(time.time()*1000)%10**8}"
        # 2000 + U(0,999) ms: the exit's phase against a 1 s relist is random
        ms = 2000 + random.randint(0, 999)
        write(backend, name, ["--exit-after", f"{ms}ms", "--exit-code", "0"])
        end = time.time() + 60
        got = None
        while time.time() < end:
            time.sleep(0.3)
            by = {r["attempt"]: r for r in rt.list() if r["pod"] == name}
            if 1 in by and by[1]["started"] and 0 in by and by[0]["finished"]:
                got = by[1]["started"] - by[0]["finished"]
                break
        remove(backend, name)
        if got is None:
            out(backend, "restart", dict(pod=name, error="no restart within 60 s"))
        else:
            out(backend, "restart", dict(pod=name, exit_after_ms=ms, finish_to_start_ms=round(got * 1000, 1)))
        wait_gone(rt, name, 30)

def start(backend, pods, rounds):
    rt = Runtime(backend)
    for rnd in range(rounds):
        prefix = f"st{pods}x{int(time.time()*1000)%10**7}-"
        names = [f"{prefix}{i}" for i in range(pods)]
        t0 = time.time()
        for nm in names:
            write(backend, nm, [])
        end = time.time() + 120
        starts = {}
        while time.time() < end and len(starts) < pods:
            time.sleep(0.2)
            for r in rt.list():
                if r["pod"] in names and r["started"]:
                    starts[r["pod"]] = r["started"]
        if len(starts) == pods:
            lat = sorted(s - t0 for s in starts.values())
            out(backend, f"start{pods}", dict(round=rnd, all_running_s=round(lat[-1], 3), first_s=round(lat[0], 3), median_pod_s=med(lat),
                                              load1=round(os.getloadavg()[0], 1)))
        else:
            out(backend, f"start{pods}", dict(round=rnd, error=f"{len(starts)}/{pods} started in 120 s"))
        remove(backend, prefix)
        wait_gone(rt, prefix, 90)

def cpu_rss(pid):
    with open(f"/proc/{pid}/stat") as f:
        p = f.read().rsplit(")", 1)[1].split()
    ticks = int(p[11]) + int(p[12])  # utime, stime
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return ticks, rss

def idle(backend, secs=60):
    rt = Runtime(backend)
    names = [f"idle-{i}" for i in range(20)]
    for nm in names:
        write(backend, nm, [])
    end = time.time() + 120
    while time.time() < end:
        time.sleep(1)
        if len({r["pod"] for r in rt.list() if r["pod"] in names and r["started"] and not r["finished"]}) == 20:
            break
    time.sleep(15)  # settle
    pids = {"agent": int(open(B[backend]["pidfile"]).read()), "containerd": int(open(RT_PIDFILE).read())}
    hz = os.sysconf("SC_CLK_TCK")
    a = {k: cpu_rss(p) for k, p in pids.items()}
    rss = {k: [] for k in pids}
    t0 = time.time()
    while time.time() - t0 < secs:
        time.sleep(5)
        for k, p in pids.items():
            rss[k].append(cpu_rss(p)[1])
    dt = time.time() - t0
    b = {k: cpu_rss(p) for k, p in pids.items()}
    load = os.getloadavg()[0]
    for k in pids:
        out(backend, "idle", dict(process=k, secs=round(dt, 1), cpu_pct=round(100.0 * (b[k][0] - a[k][0]) / hz / dt, 2),
                                  rss_mib=round(statistics.median(rss[k]) / 1024, 1), load1=round(load, 1)))
    remove(backend, "idle-")
    wait_gone(rt, "idle-", 90)

def clean(backend):
    rt = Runtime(backend)
    remove(backend, "")
    print("gone:", wait_gone(rt, "", 120))

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in B:
        sys.exit(__doc__)
    be, test = sys.argv[1], sys.argv[2]
    arg = int(sys.argv[3]) if len(sys.argv) > 3 else None
    os.makedirs(B[be]["manifests"], exist_ok=True)
    if test == "crash": crash(be, arg or 3)
    elif test == "restart": restart(be, arg or 10)
    elif test == "start1": start(be, 1, arg or 10)
    elif test == "start20": start(be, 20, arg or 3)
    elif test == "idle": idle(be, arg or 60)
    elif test == "clean": clean(be)
    else: sys.exit(__doc__)
