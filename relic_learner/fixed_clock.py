"""numpy's wall clock, stopped in a role worker (issue 54: scores repeat by construction).

A validated program cannot import ``time``, and the validator refuses the literal clock
forms (``np.datetime64("now")``, ``"today"``, datetime dtype strings), but a string built
at run time (``"won"[::-1]`` with a dtype ``"]s[8M"[::-1]``) still reaches numpy's
datetime parser, which asks libc's ``time()`` for "now" and "today". So the zygote points
numpy's own import of ``time`` (its slot in the extension's global offset table, which
the dynamic loader fills and reads on every call) at a function that always answers 0:
in a role worker "now" is 1970-01-01T00:00:00 and "today" is 1970-01-01, in every child.

This touches only the calling module's table (libc, Python's ``time`` module and the
trusted code outside the jail keep the real clock). It is done once, in the zygote,
before any program exists, on memory the child then inherits. :func:`stop` says whether
it took; where it did not (another ELF layout, another libc), the determinism check of
``relic_learner.evaluate`` is what catches a clock read.
"""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

_TIME_SYMBOLS = (b"time",)  # numpy's datetime parser ("now", "today") calls time(&t) only
_SHT_RELA, _SHT_DYNSYM = 4, 11
_PROT = {"r": 1, "w": 2, "x": 4}


def _stopped_time(_pointer: int) -> int:  # numpy initialises its time_t to 0 and reads the return value
    return 0


_STOPPED = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p)(_stopped_time)


def _sections(data: bytes) -> list[tuple[int, int, int, int, int]]:
    """(type, offset, size, link, entry size) of each section of an ELF64 little-endian file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    out = []
    for i in range(shnum):
        _, kind, _, _, offset, size, link, _, _, entsize = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        out.append((kind, offset, size, link, entsize))
    return out


def _slots(path: str, names: tuple[bytes, ...]) -> list[int]:
    """Offsets (from the load address) of the relocation slots that import ``names``."""
    data = Path(path).read_bytes()
    sections = _sections(data)
    found = []
    for kind, offset, size, link, entsize in sections:
        if kind != _SHT_RELA or not entsize:
            continue
        symtab = sections[link]
        if symtab[0] != _SHT_DYNSYM:
            continue
        strtab = sections[symtab[3]]
        for r in range(size // entsize):
            r_offset, r_info, _ = struct.unpack_from("<QQq", data, offset + r * entsize)
            symbol = r_info >> 32
            if not symbol:
                continue
            st_name, = struct.unpack_from("<I", data, symtab[1] + symbol * symtab[4])
            start = strtab[1] + st_name
            if data[start:data.index(b"\0", start)] in names:
                found.append(r_offset)
    return found


def _mappings(path: str) -> list[tuple[int, int, str, int]]:
    """(start, end, permissions, file offset) of this process's mappings of ``path``."""
    out = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].strip() == path:
                start, end = (int(x, 16) for x in fields[0].split("-"))
                out.append((start, end, fields[1], int(fields[2], 16)))
    return out


def _write_pointer(address: int, value: int, mappings: list[tuple[int, int, str, int]]) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    page = os.sysconf("SC_PAGE_SIZE")
    for start, end, perms, _ in mappings:  # noqa: B007  (perms is read after the break)
        if start <= address < end:
            break
    else:
        return False
    base = address & ~(page - 1)
    before = sum(bit for letter, bit in _PROT.items() if letter in perms)
    if "w" not in perms and libc.mprotect(base, page, before | _PROT["w"]) != 0:
        return False
    ctypes.c_void_p.from_address(address).value = value
    if "w" not in perms:
        libc.mprotect(base, page, before)
    return True


def stop() -> bool:
    """Point every numpy extension's ``time`` import at the stopped clock; True if every one took.

    False (and nothing half-done that matters: a slot either holds the real ``time`` or
    the stopped one) where the layout is not one this reads (non-ELF64, no
    ``/proc/self/maps``) or a slot could not be written.
    """
    import numpy

    root = str(Path(numpy.__file__).resolve().parent)
    target = ctypes.cast(_STOPPED, ctypes.c_void_p).value
    took, seen = True, 0
    try:
        loaded = sorted({line.split(maxsplit=5)[5].strip() for line in open("/proc/self/maps")
                         if line.count(" ") >= 5 and len(line.split(maxsplit=5)) == 6
                         and line.split(maxsplit=5)[5].strip().startswith(root + "/")
                         and ".so" in line})
        for path in loaded:
            mappings = _mappings(path)
            bias = min(start - offset for start, _, _, offset in mappings if offset == 0) if mappings else None
            if bias is None:
                continue
            for slot in _slots(path, _TIME_SYMBOLS):
                seen += 1
                took = _write_pointer(bias + slot, target, mappings) and took
    except (OSError, ValueError, struct.error):
        return False
    return took and seen > 0
