"""The communication interventions of Figure 3 as switches, checked on the requests sent:
Mislead without/with principle selection, NoPeer with scalar/full Reflect (Section 6, D.5).

Each test puts a run in batch 2 or 3 with a known archive and public tree, forces the
operator by marking the others tried at the root, and reads the prompt the backend got.
"""

from __future__ import annotations

import pytest

from relic_learner.evaluate import TeamEvaluator
from relic_learner.llm import OfflineClient
from relic_learner.relic import Relic, RelicConfig, Switches, switches

ENV = "hmtsp"


class RecordingClient(OfflineClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.prompts: list[tuple[str | None, str]] = []

    def _complete(self, messages, purpose, *, tag, cache_salt):
        self.prompts.append((tag, "\n".join(m["content"] for m in messages)))
        return super()._complete(messages, purpose, tag=tag, cache_salt=cache_salt)


@pytest.fixture(scope="module")
def evaluator():
    with TeamEvaluator(ENV, sandbox=False, workers=1) as ev:
        yield ev


def _relic(tmp_path, evaluator, b: int = 2, **switch) -> Relic:
    config = RelicConfig(env=ENV, batches=3, proposals=2, seed=1, workers=1, **switch)
    relic = Relic(config, tmp_path / "_".join(f"{k}-{v}" for k, v in switch.items()), llm=RecordingClient(seed=1),
                  evaluator=evaluator)
    s = relic.state
    s.b = b
    s.incumbent_score = evaluator.evaluate(relic.team(), relic.batch()).mean_score
    s.archives["A"].append("B", "Serve the nearest waiting customer first.", 1)
    for k, contributor in enumerate("BCBC"):
        node = s.public.add(f"Principle number {k}: keep routes short.", "STRATEGY", contributor, 1, "distill")
        s.public.retrieve(node.id)  # all tried once ...
    s.public.endorse(2, 5.0)  # ... and one clearly endorsed
    return relic


def _prompt_for(relic: Relic, operator: str, h: int = 0) -> str:
    root = relic.state.trees["A"].root
    root.N_op = {op: 1 for op in ("lift", "bridge", "reflect") if op != operator}  # the others already tried
    relic.llm.prompts.clear()
    relic._propose("A", h)
    (tag, prompt), = [p for p in relic.llm.prompts if p[0] == operator]
    return prompt


def test_switch_table():
    table = {(c, m): switches(RelicConfig(env=ENV, communication=c, mitigation=m))
             for c in ("full", "mislead", "nopeer") for m in (False, True)}
    assert table["mislead", False] == Switches(selection=False, evidence=False, reflect="full")
    assert table["mislead", True] == Switches(selection=True, evidence=True, reflect="full")
    assert table["nopeer", False].reflect == "scalar" and table["nopeer", True].reflect == "full"
    assert table["full", False] == Switches(selection=True, evidence=False, reflect="full")


def test_mislead_without_selection_retrieves_uniformly_and_with_selection_by_endorsement(tmp_path, evaluator):
    plain = _relic(tmp_path, evaluator, communication="mislead")
    chosen = {next(line for line in _prompt_for(plain, "bridge", h).splitlines() if line.startswith("Principle"))
              for h in range(6)}
    assert len(chosen) > 1  # endorsement does not steer retrieval
    selected = _relic(tmp_path, evaluator, communication="mislead", mitigation=True)
    chosen = {next(line for line in _prompt_for(selected, "bridge", h).splitlines() if line.startswith("Principle"))
              for h in range(3)}
    assert chosen == {"Principle number 1: keep routes short."}  # node 2, the endorsed one (public UCT)


def test_mislead_mitigation_adds_the_recipients_own_evidence(tmp_path, evaluator):
    assert "[Your own evidence]" not in _prompt_for(_relic(tmp_path, evaluator, communication="mislead"), "lift")
    mitigated = _prompt_for(_relic(tmp_path, evaluator, communication="mislead", mitigation=True), "lift")
    assert "[Your own evidence]" in mitigated and "principle text is never ground truth" in mitigated


def test_mislead_without_selection_never_prunes(tmp_path, evaluator):
    for mitigation, prunes in ((False, False), (True, True)):
        relic = _relic(tmp_path, evaluator, b=3, communication="mislead", mitigation=mitigation)
        relic.state.curve.append({"b": 3, "start": relic.state.incumbent_score})
        relic._end_batch()
        assert any(e["kind"] == "prune" for e in relic.run.events()) == prunes


def test_nopeer_reflect_is_scalar_and_its_mitigation_is_the_full_credit_map(tmp_path, evaluator):
    scalar = _prompt_for(_relic(tmp_path, evaluator, communication="nopeer"), "reflect")
    assert "changes the team's mean score by" in scalar and "- dominant:" not in scalar
    full = _prompt_for(_relic(tmp_path, evaluator, communication="nopeer", mitigation=True), "reflect")
    assert "- dominant:" in full and "- redundant:" in full and "changes the team's mean score by" not in full
