"""QBRank's objective call, round by round, inside lgb.train on objectives.py's 705k set (run from the repository root)."""
import sys, time, os
sys.path.insert(0, os.getcwd()+"/benchmarks")
import numpy as np
import objectives as B
import boostplug; print(boostplug.__file__)
d = B.mslr_sized()
fw = B.Framework("lightgbm", d, 2)
B.SPECS["qbrank"] = ("qbrank", {})
class PerCall(B.Timed):
    def __init__(s, fn): super().__init__(fn); s.calls=[]; s.cpu=[]
    def __call__(s, *a):
        t0=time.perf_counter(); c0=time.thread_time(); out=s.fn(*a); s.calls.append(time.perf_counter()-t0); s.cpu.append(time.thread_time()-c0); return out
for rep in range(2):
    o = PerCall(fw.objective("qbrank"))
    t = fw.train(o, 20)
    rec = B.Recorded(fw.objective("qbrank")); fw.train(rec, 20)
    tf = fw.train(B.Replayed(rec.rounds), 20)
    print(f"train {t:.2f} free {tf:.2f} ratio {t/tf:.3f} in-obj {sum(o.calls):.3f}")
    print(" per call ms:", " ".join(f"{x*1e3:.0f}" for x in o.calls))
    print(" thread cpu ms:", " ".join(f"{x*1e3:.0f}" for x in o.cpu))
