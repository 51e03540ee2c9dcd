"""DiMES instances and the paper's generator (Appendix B.4, "Instance generation").

60 people x 2 attendances = 120 PEAV variables, 20 slots, 50 sweeps. ``M`` meetings
(training batches 16, 14, 12, 10, 8; test 12) receive the 120 attendances in sizes
that differ by at most one, and no person attends one meeting twice. Meetings are
placed uniformly among 4 locations; travel between distinct locations is a symmetric
uniform integer in 6..10 and 0 within a location. Preference costs ``a[i, h]`` are
U[0, 10]; initial slots are uniform.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from relic_envs.core.instance import Instance, check_array, check_range
from relic_envs.dcop._sweep import balanced_ownership
from relic_envs.dcop.dimes.simulator import N_SLOTS, travel_time
from relic_envs.errors import InvalidInstance

N_PEOPLE = 60
N_LOCATIONS = 4
TRAIN_MEETINGS = (16, 14, 12, 10, 8)
TEST_MEETINGS = 12


@dataclasses.dataclass(frozen=True)
class DiMESRegime:
    n_meetings: int
    n_people: int = N_PEOPLE


REGIMES = {f"train{b}": DiMESRegime(m) for b, m in enumerate(TRAIN_MEETINGS, start=1)}
REGIMES["test"] = DiMESRegime(TEST_MEETINGS)


@dataclasses.dataclass(frozen=True)
class DiMESInstance(Instance):
    """Attendance variables ``2p`` and ``2p + 1`` belong to person ``p``."""

    kind = "dimes"
    meeting: np.ndarray  # (N,) int64, meeting of each attendance, 0..M-1
    location: np.ndarray  # (N,) int64, location (0..3) of each attendance's meeting
    travel: np.ndarray  # (4, 4) int64, symmetric travel times, 0 on the diagonal
    pref: np.ndarray  # (N, 20) float64, preference cost a[i, h] in [0, 10]
    x0: np.ndarray  # (N,) int64, initial slots 0..19
    owner: np.ndarray  # (N,) int8, role of each variable: 0=A, 1=B, 2=C
    seed: int  # uint32 seed of the exploration tensor u

    def validate(self) -> None:
        check_array("x0", self.x0, (None,), "iu")
        n = self.x0.shape[0]
        if n % 2:
            raise InvalidInstance(f"field 'x0' must have an even length (two attendances per person), got {n}")
        check_array("meeting", self.meeting, (n,), "iu")
        check_array("location", self.location, (n,), "iu")
        check_array("travel", self.travel, (N_LOCATIONS, N_LOCATIONS), "iu")
        check_array("pref", self.pref, (n, N_SLOTS), "f")
        check_array("owner", self.owner, (n,), "iu")
        check_range("x0", self.x0, 0, N_SLOTS - 1)
        check_range("location", self.location, 0, N_LOCATIONS - 1)
        check_range("owner", self.owner, 0, 2)
        check_range("meeting", self.meeting, 0, n - 1)


def _attendances(n_people: int, n_meetings: int, rng: np.random.Generator) -> np.ndarray:
    """Meeting of each attendance: balanced sizes, no person twice in one meeting."""
    labels = rng.permutation(np.arange(2 * n_people) % n_meetings)
    pairs = labels.reshape(n_people, 2)
    while True:
        bad = np.flatnonzero(pairs[:, 0] == pairs[:, 1])
        if bad.size == 0:
            return pairs.reshape(-1)
        p, q = bad[0], rng.integers(n_people)
        # Swapping second attendances keeps meeting sizes; accept only if it fixes p without breaking q.
        if pairs[q, 1] != pairs[p, 0] and pairs[p, 1] != pairs[q, 0]:
            pairs[p, 1], pairs[q, 1] = pairs[q, 1], pairs[p, 1]


def generate(regime: DiMESRegime, rng: np.random.Generator) -> DiMESInstance:
    """Draw one DiMES instance of a regime."""
    n = 2 * regime.n_people
    meeting = _attendances(regime.n_people, regime.n_meetings, rng).astype(np.int64)
    meeting_location = rng.integers(0, N_LOCATIONS, size=regime.n_meetings)
    upper = np.triu(rng.integers(6, 11, size=(N_LOCATIONS, N_LOCATIONS)), k=1)
    travel = (upper + upper.T).astype(np.int64)
    pref = rng.uniform(0.0, 10.0, size=(n, N_SLOTS))
    x0 = rng.integers(0, N_SLOTS, size=n).astype(np.int64)
    seed = int(rng.integers(0, 2**32))
    location = meeting_location[meeting].astype(np.int64)
    owner = np.zeros(n, dtype=np.int8)
    inst = DiMESInstance(meeting=meeting, location=location, travel=travel, pref=pref, x0=x0, owner=owner, seed=seed)
    return dataclasses.replace(inst, owner=ownership(inst))


def ownership(inst: DiMESInstance) -> np.ndarray:
    """Balanced thirds: A travel pressure, B preference-saving opportunity, C meeting size.

    Ties are broken by the variable's preference spread, then by index.
    """
    n = inst.x0.size
    pressure = travel_time(inst)
    saving = inst.pref[np.arange(n), inst.x0] - inst.pref.min(axis=1)
    size = np.bincount(inst.meeting)[inst.meeting].astype(np.float64)
    spread = np.ptp(inst.pref, axis=1)
    tie = spread / (spread.max() + 1.0) * 1e-3
    return balanced_ownership(np.stack([pressure + tie, saving + tie, size + tie], axis=1))
