"""The seccomp filter in two parts: a zygote loads every rule but those on its own work
(fork a child, kill it), and each child stacks those on top, compiled to BPF by the zygote
and loaded with one prctl. Stacked, the child is refused what the whole filter refuses;
the zygote alone can still do its job.

Each check runs in a fresh interpreter: a loaded filter cannot be taken off again.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from relic_learner import jail

pytestmark = pytest.mark.skipif(jail.build_seccomp() is None, reason="libseccomp (pyseccomp) is not installed")

PRELUDE = r"""
import errno, json, os, signal, socket, sys, time
from relic_learner import jail

def outcome(call):
    try:
        call()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
"""

PROBE = PRELUDE + r"""
def fork_and_reap():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)

def kill_a_child():
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL

def tries():
    return {"socket": outcome(lambda: socket.socket().close()),
            "write": outcome(lambda: open("/dev/null", "w").close()),
            "fork": outcome(fork_and_reap)}

jail.no_new_privileges()
child_part = jail.CompiledFilter.build("child")  # compiled before the zygote's part goes on, as the zygote does
found = {"zygote loaded": jail.apply_seccomp(jail.build_seccomp("zygote"))}
found["zygote"] = {**tries(), "kill its child": outcome(kill_a_child)}
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(read)
    mine = {"loaded": child_part.load(), **tries(),
            "kill parent": outcome(lambda: os.kill(os.getppid(), 0)),
            "signal itself": outcome(lambda: os.kill(os.getpid(), 0))}
    os.write(write, json.dumps(mine).encode())
    os._exit(0)
os.close(write)
os.waitpid(pid, 0)
found["child"] = json.loads(os.read(read, 65536))
print(json.dumps(found))
"""


def test_the_zygote_forks_and_kills_but_its_child_can_do_neither():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["zygote loaded"] is True
    # The zygote: its own work allowed, everything else the whole filter refuses already refused.
    assert found["zygote"] == {"socket": "EPERM", "write": "EPERM", "fork": "ok", "kill its child": "ok"}
    # The child, with its part stacked on the zygote's: the whole filter, and no signal sent at all.
    assert found["child"] == {"loaded": True, "socket": "EPERM", "write": "EPERM", "fork": "EPERM",
                              "kill parent": "EPERM", "signal itself": "EPERM"}


WHOLE = PRELUDE + r"""
jail.no_new_privileges()
found = {"loaded": jail.apply_seccomp(), "fork": outcome(os.fork), "socket": outcome(socket.socket),
         "signal itself": outcome(lambda: os.kill(os.getpid(), 0)), "read": outcome(lambda: open(os.devnull).close())}
print(json.dumps(found))
"""


def test_the_whole_filter_in_one_process_refuses_both_parts():
    out = subprocess.run([sys.executable, "-c", WHOLE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found == {"loaded": True, "fork": "EPERM", "socket": "EPERM", "signal itself": "EPERM", "read": "ok"}


def test_an_unknown_part_or_a_torn_program_is_refused():
    with pytest.raises(ValueError, match="part must be one of"):
        jail.build_seccomp("referee")
    with pytest.raises(ValueError, match="8-byte instructions"):
        jail.CompiledFilter(b"\x06\x00\x00\x00\x00\x00\xff")
