"""What a role worker's fresh child costs to start, here: fork, set-up, exit.

Every job forks a fresh child per role from that role's zygote (docs/learner.md, "Every job
gets a fresh child"). This script sets a process up as a zygote is set up (numpy and a
benchmark imported, the child's part of the seccomp filter built, the zygote's part
loaded, the heap frozen for the collector), then forks ``--children`` children for each
stage below and prints, per child, the wall time from fork to reaped, the children's user
and system CPU, their minor page faults, and the parent's system CPU (the fork itself):

* ``fork, exit``: nothing else;
* ``+ rlimits``: the child's hard limits;
* ``+ child's filter``: and its part of the seccomp filter (7 rules), compiled by the zygote
  (``jail.CompiledFilter``): one ``prctl`` over the zygote's part;
* ``child's part, compiled here``: the same 7 rules compiled and loaded by libseccomp in the
  child (what a child did in 90dd034);
* ``whole filter, compiled here``: the whole ~110-rule filter compiled and loaded in the
  child, as every child did before the filter was split in two;
* ``+ program, from the referee``: with the child's filter, the first role's seed program as a
  child now gets it: code checked and compiled by the referee, unmarshalled;
* ``+ program, checked here``: the same text checked and compiled in the child, as every
  child did before (commit a7ef921 and earlier).

The figures depend on the machine's memory as much as on the code: on a VM whose host
takes back freed pages (virtio-balloon free page reporting), a page the child touches
can cost a fault on the host too, and the same command gives different figures at
different times. Run it beside the latency tables. Usage::

    python benchmarks/child_start.py [--children 200] [--env mapp_ar]
"""

from __future__ import annotations

import argparse
import gc
import marshal
import os
import resource
import time

import numpy  # noqa: F401 - imported before forking, as a zygote does
import numpy.fft  # noqa: F401
import numpy.linalg  # noqa: F401

from relic_envs.core.program import check_source
from relic_envs.core.registry import get_benchmark
from relic_envs.seeds import seed_source
from relic_learner import jail
from relic_learner.sandbox import compiled_program


def _stage(label: str, children: int, body) -> None:
    child0, self0 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    for _ in range(children):
        pid = os.fork()
        if pid == 0:
            try:
                body()
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    wall = time.perf_counter() - start
    child1, self1 = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    per = 1e3 / children
    print(f"{label:<28} {wall * per:>8.2f} {(child1.ru_utime - child0.ru_utime) * per:>8.2f}"
          f" {(child1.ru_stime - child0.ru_stime) * per:>8.2f} {(child1.ru_minflt - child0.ru_minflt) / children:>8.0f}"
          f" {(self1.ru_stime - self0.ru_stime) * per:>10.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--children", type=int, default=200, help="children forked per stage")
    parser.add_argument("--env", default="mapp_ar", help="the benchmark the zygote imports")
    args = parser.parse_args()
    bench = get_benchmark(args.env)
    role = bench.roles[0]
    signature, source = bench.signatures("paper")[role], seed_source(args.env, role)
    # Compiled from a text one newline longer: check_source remembers verdicts by text, and a
    # child that inherited this one's verdict would skip the walk it is here to measure.
    program = compiled_program(args.env, "paper", role, source + "\n")
    compiled = jail.CompiledFilter.build("child")
    child_part, whole = jail.build_seccomp("child"), jail.build_seccomp("whole")
    if compiled is None or child_part is None:
        raise SystemExit("libseccomp (pyseccomp) is not installed: nothing to measure")
    jail.no_new_privileges()
    if not jail.apply_seccomp(jail.build_seccomp("zygote")):
        raise SystemExit("the zygote's part of the filter did not load")
    gc.collect()
    gc.freeze()
    limit = 1 << 34
    print(f"per child, {args.children} children a stage (this process set up as a zygote of {args.env})")
    header = f"{'stage':<28} {'wall ms':>8} {'user ms':>8} {'sys ms':>8} {'faults':>8} {'parent sys':>10}"
    print(header)
    print("-" * len(header))
    _stage("fork, exit", args.children, lambda: None)
    _stage("+ rlimits", args.children, lambda: jail.apply_rlimits(limit))
    _stage("+ child's filter", args.children, lambda: (jail.apply_rlimits(limit), compiled.load()))
    _stage("child's part, compiled here", args.children, lambda: (jail.apply_rlimits(limit), jail.apply_seccomp(child_part)))
    _stage("whole filter, compiled here", args.children, lambda: (jail.apply_rlimits(limit), jail.apply_seccomp(whole)))
    _stage("+ program, from the referee", args.children,
           lambda: (jail.apply_rlimits(limit), compiled.load(), marshal.loads(program)))
    _stage("+ program, checked here", args.children,
           lambda: (jail.apply_rlimits(limit), compiled.load(), compile(check_source(source, signature), "<role>", "exec")))


if __name__ == "__main__":
    main()
