"""What a role worker's messages cost, layer by layer: where the jail's CPU per message goes.

For each benchmark, one job's messages (the seed team on the 16-instance mixed batch of
training batch 3, recorded from a real referee: ``referee_work._messages``) are answered
by the worker's own code (``role_worker._Worker``: unpickle, answer, encode the reply)
five ways, and the CPU each way spends on them is printed:

* ``here``: in this process, one message after another (no process, no pipe);
* ``one child``: a forked child per role, fed over pipes one message at a time (as a
  referee feeds a single role); the child counts its own CPU and page faults from the
  first message to the last (its start-up is not counted);
* ``+ audit hook``: and the child installs the worker's audit hook;
* ``+ seccomp``: and the child loads both parts of the seccomp filter (set up before the
  count starts);
* ``side by side``: all layers, the three roles' children at once, fed round by round as
  the referee feeds them (a round: the messages sent before the first reply is read),
  sharing this machine's cores with this process, which plays the referee.

This process is set up as a zygote is (numpy's submodules imported, the module guard's
snapshot taken, the child's filter compiled, the heap frozen for the collector) before
any child is forked. What is left beside these figures in a real job is the fresh child
itself (fork, first-touch page faults: ``child_start.py``) and the namespaces of bubblewrap;
``referee_work.py --worker-cpu`` prints the jailed workers' CPU per job for comparison. Usage::

    python benchmarks/worker_layers.py [--env fjagv hmtsp ...]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import resource
import sys
import time
from pathlib import Path

from referee_work import _messages  # benchmarks/referee_work.py, beside this script

_MODES = ("one child", "+ audit hook", "+ seccomp", "side by side")


def _serve(in_fd: int, out_fd: int, signature, mode: str, child_filter) -> None:
    """A child's loop: layers for ``mode``, then answer until EOF, then report its own usage."""
    from relic_learner import channel, jail, role_worker

    if mode != "one child":
        sys.addaudithook(role_worker._audit)
    if mode in ("+ seccomp", "side by side"):
        jail.apply_seccomp(jail.build_seccomp("zygote"))
        child_filter.load()
    worker = role_worker._Worker(in_fd, out_fd, signature.function)
    start = resource.getrusage(resource.RUSAGE_SELF)
    while True:
        try:
            raw = channel.read_frame(in_fd, 1 << 31)
        except EOFError:
            break
        message = pickle.loads(raw)
        answers = worker.load(*message[1:]) if message[0] == "load" else worker.act(message[1])
        channel.write_frame(out_fd, channel.encode_reply(answers))
    end = resource.getrusage(resource.RUSAGE_SELF)
    usage = [end.ru_utime - start.ru_utime, end.ru_stime - start.ru_stime, end.ru_minflt - start.ru_minflt]
    channel.write_frame(out_fd, json.dumps(usage).encode())


def _children(roles: list[str], signatures: dict, mode: str, child_filter) -> dict[str, tuple[int, int, int]]:
    """Per role: (pid, our write end, our read end) of a forked child serving ``mode``."""
    out = {}
    for role in roles:
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            for fd in (to_w, from_r, *(fd for _, w, r in out.values() for fd in (w, r))):
                os.close(fd)
            try:
                _serve(to_r, from_w, signatures[role], mode, child_filter)
            finally:
                os._exit(0)
        os.close(to_r)
        os.close(from_w)
        out[role] = (pid, to_w, from_r)
    return out


def _finish(children: dict[str, tuple[int, int, int]]) -> list[float]:
    """Close the children's input, read each one's usage, reap them; summed [user, system, faults]."""
    from relic_learner import channel

    total = [0.0, 0.0, 0.0]
    for pid, write_end, read_end in children.values():
        os.close(write_end)
        usage = json.loads(channel.read_frame(read_end, 4096))
        os.close(read_end)
        os.waitpid(pid, 0)
        total = [a + b for a, b in zip(total, usage)]
    return total


def _measure(name: str, interface: str) -> dict[str, list[float]]:
    import numpy.fft  # noqa: F401 - as a zygote does, before forking
    import numpy.linalg  # noqa: F401
    import numpy.ma  # noqa: F401
    import numpy.polynomial  # noqa: F401

    from relic_envs.core.registry import get_benchmark
    from relic_learner import channel, jail, role_worker

    sent = _messages(name, interface)
    signatures = get_benchmark(name).signatures(interface)
    roles = [r for r in signatures if any(to == r for to, _ in sent)]
    role_worker._GUARD = role_worker._ModuleGuard()
    child_filter = jail.CompiledFilter.build("child")
    gc.collect()
    gc.freeze()

    start = time.process_time()
    workers = {r: role_worker._Worker(-1, -1, signatures[r].function) for r in roles}
    for role, raw in sent:
        message = pickle.loads(raw)
        worker = workers[role]
        answers = worker.load(*message[1:]) if message[0] == "load" else worker.act(message[1])
        channel.encode_reply(answers)
    out = {"here": [time.process_time() - start, 0.0, 0.0]}

    for mode in _MODES[:3]:
        children = _children(roles, signatures, mode, child_filter)
        for role, raw in sent:  # one message at a time, each answered before the next
            _, write_end, read_end = children[role]
            channel.write_frame(write_end, raw)
            channel.read_frame(read_end, channel.MAX_REPLY_BYTES)
        out[mode] = _finish(children)

    children = _children(roles, signatures, "side by side", child_filter)
    waiting: list[str] = []
    for role, raw in sent + [(None, b"")]:  # a round ends where a role is asked again (or at the end)
        if role is None or role in waiting:
            for asked in waiting:
                channel.read_frame(children[asked][2], channel.MAX_REPLY_BYTES)
            waiting = []
        if role is not None:
            channel.write_frame(children[role][1], raw)
            waiting.append(role)
    out["side by side"] = _finish(children)
    out["messages"] = [float(len(sent))] * 3
    return out


def main() -> None:
    if sys.argv[1:2] == ["--child"]:  # one benchmark, in a fresh process (no earlier children's state)
        print(json.dumps(_measure(sys.argv[2], sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", nargs="*", default=None, help="benchmarks (default: all built)")
    args = parser.parse_args()
    from _proc import run_script_on  # benchmarks/_proc.py
    from referee_work import _rows

    import relic_envs

    here = Path(__file__).resolve().parent.parent
    # The children run as role workers do: single-threaded BLAS, the sandbox's malloc thresholds.
    from relic_learner.sandbox import _MALLOC_DEFAULTS

    os.environ.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0", **_MALLOC_DEFAULTS})
    print("CPU ms per message of one job's messages (the roles' children together; user + system), and the children's"
          " minor page faults per message")
    header = f"{'benchmark':<20} {'messages':>8} {'here':>6}" + "".join(f" {m:>13} {'faults':>6}" for m in _MODES)
    print(header)
    print("-" * len(header))
    for name, interface, label in _rows(args.env or relic_envs.names()):
        got = run_script_on(here, str(Path(__file__).resolve()), "--child", name, interface)
        n = got["messages"][0]
        line = f"{label:<20} {n:>8.0f} {1e3 * got['here'][0] / n:>6.3f}"
        for mode in _MODES:
            user, system, faults = got[mode]
            line += f" {1e3 * (user + system) / n:>13.3f} {faults / n:>6.1f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
