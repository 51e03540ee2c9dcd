"""Incumbent and credit rules checked over a whole offline run (Appendix C.1-C.2):
marginal gain against the incumbent at evaluation time, replacement only on absolute
improvement, revalidation with reset marginals, call accounting, and the information
boundary of the prompts."""

from __future__ import annotations

import importlib.util

import pytest

from relic_learner.llm import OfflineClient
from relic_learner.relic import Relic, RelicConfig


class RecordingClient(OfflineClient):
    """The offline backend, keeping every prompt it was sent."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.prompts: list[tuple[str, str | None, str]] = []

    def _complete(self, messages, purpose, *, tag, cache_salt):
        self.prompts.append((purpose, tag, "\n".join(m["content"] for m in messages)))
        return super()._complete(messages, purpose, tag=tag, cache_salt=cache_salt)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    client = RecordingClient(seed=11)
    relic = Relic(RelicConfig(env="dgc", batches=3, proposals=4, seed=11, workers=2),
                  tmp_path_factory.mktemp("run"), llm=client)
    relic.learn()
    return relic, client


def test_gain_is_measured_against_the_incumbent_at_evaluation_time(run):
    relic, _ = run
    incumbent = None
    for event in relic.run.events():
        if event["kind"] == "incumbent":
            incumbent = event["score"]
        elif event["kind"] == "proposal" and event["status"] == "ok":
            assert event["gain"] == pytest.approx(event["score"] - incumbent)
            assert event["incumbent"] == (event["score"] > incumbent)  # only an absolute improvement replaces
            if event["incumbent"]:
                incumbent = event["score"]
        elif event["kind"] == "batch_end":
            assert event["score"] == pytest.approx(incumbent)


def test_revalidation_picks_a_valid_program_and_resets_its_marginal(run):
    relic, _ = run
    revalidations = [e for e in relic.run.events() if e["kind"] == "revalidate"]
    assert {e["b"] for e in revalidations} == {2, 3} and len(revalidations) == 6
    final = relic.state
    events = relic.run.events()
    for event in revalidations:
        if event["role"] == "C":  # the team after revalidating A, B, C is the batch's incumbent team
            start = next(e for e in events if e["kind"] == "incumbent" and e["b"] == event["b"])
            assert start["score"] == pytest.approx(event["score"])
    last = [e for e in revalidations if e["b"] == 3]
    for event in last:  # the incumbents chosen at the last revalidation keep a zero marginal unless replaced later
        if final.incumbent[event["role"]] == event["incumbent"]:
            assert final.trees[event["role"]].nodes[event["incumbent"]].Q == 0.0


def test_call_accounting(run):
    relic, client = run
    ledger = client.ledger.snapshot()
    proposals = [e for e in relic.run.events() if e["kind"] == "proposal"]
    positive = {(e["b"], e["role"]) for e in proposals if e["status"] == "ok" and e["gain"] > 0}
    assert ledger["calls"]["proposal"] == len(proposals) == 3 * 3 * 4
    assert ledger["calls"]["auxiliary"] == 6 * 3 + len(positive)


def test_prompts_respect_the_information_boundary(run):
    relic, client = run
    sources = {r: relic.seeds[r] for r in "ABC"}
    for purpose, tag, text in client.prompts:
        if purpose != "proposal":
            continue
        # A role's prompt names its own function only: no teammate code reaches it.
        own = [r for r in "ABC" if f"def select_values_{r}(" in text]
        assert len(own) == 1, tag
        for other in set("ABC") - set(own):
            assert sources[other] not in text
    reflects = [t for p, tag, t in client.prompts if tag == "reflect"]
    assert reflects and all("[Reflection]" in t and "dominant" in t for t in reflects)
    assert any(tag == "lift" for _, tag, _ in client.prompts)  # archives filled after batch 1


def test_outputs_are_written(run):
    relic, _ = run
    path = relic.run.path
    for name in ("team/A.py", "team/B.py", "team/C.py", "public_tree.json", "operators.md", "curve.json"):
        assert (path / name).exists(), name
    assert (path / "curve.png").exists() == (importlib.util.find_spec("matplotlib") is not None)
    assert (path / "team" / "A.py").read_text() == relic.team()["A"]


@pytest.mark.parametrize(
    ("switch", "value"),
    [("ablation", a) for a in ("no_public_tree", "no_bridge", "no_lift", "no_reflect", "no_private_ucb")]
    + [("communication", "mislead"), ("communication", "nopeer"), ("mitigation", True)],
)
def test_every_study_switch_runs_and_does_what_it_says(tmp_path, switch, value):
    config = RelicConfig(env="mapp_ar", batches=3, proposals=2, seed=2, workers=1, **{switch: value})
    relic = Relic(config, tmp_path / "run", llm=RecordingClient(seed=2))
    relic.learn()
    events = relic.run.events()
    used = {e["operator"] for e in events if e["kind"] == "proposal"}
    assert sum(e["kind"] == "proposal" for e in events) == 3 * 3 * 2  # the budget is spent whatever the switch
    if value in ("no_bridge", "no_lift", "no_reflect"):
        assert value[3:] not in used
    if value == "no_reflect":
        assert "refine" in used  # batch 1 has nothing else
    if value == "nopeer":
        assert used == {"reflect"} and not any(e["kind"] in ("reveal", "distill", "cross_distill") for e in events)
    if value == "mislead":
        texts = [e["text"] for e in events if e["kind"] in ("reveal", "distill", "cross_distill")]
        assert texts and all(t.endswith("commit to the first option found.") for t in texts)
    if value == "no_public_tree":
        assert relic.state.public.flat and all(n.parent in (0, None) for n in relic.state.public.nodes)
    if value is True:  # mitigation: Lift/Bridge prompts carry the role's own evidence
        client = relic.llm
        guided = [t for _, tag, t in client.prompts if tag in ("lift", "bridge")]
        assert guided and all("[Your own evidence]" in t for t in guided)


def test_revalidation_keeps_the_incumbent_when_no_candidate_is_valid(tmp_path):
    """Issue 55: a teammate's incumbent that breaks on the new batch makes every program of
    the roles before it invalid; re-validation keeps their incumbents (and says so) instead
    of raising, and gives them their choice once the teammate is valid again."""
    import dataclasses

    from relic_learner.evaluate import Status, TeamEvaluator

    broken = None

    class BreaksOnBatch2(TeamEvaluator):
        def evaluate_many(self, teams, batch):
            results = super().evaluate_many(teams, batch)
            if relic.state.b < 2:
                return results
            return [dataclasses.replace(r, status=Status(False, "exception", "B", "breaks on batch 2"))
                    if team["B"] == broken else r for team, r in zip(teams, results)]

    with BreaksOnBatch2("dgc", workers=1) as evaluator:
        relic = Relic(RelicConfig(env="dgc", batches=2, proposals=1, seed=5, workers=1),
                      tmp_path / "run", llm=OfflineClient(seed=5), evaluator=evaluator)
        while relic.state.b < 2:
            relic.step()
        tree = relic.state.trees["B"]
        broken = tree.root.source + "\n# valid on batch 1 only\n"
        child = tree.add_child(tree.root, broken, 0.0, "reflect", batch=1, score=relic.state.incumbent_score)
        relic.state.incumbent["B"] = child.id
        relic.learn()
    events = [e for e in relic.run.events() if e["kind"] == "revalidate" and e["b"] == 2]
    assert [e["role"] for e in events] == ["A", "B", "C", "A"]
    assert events[0]["kept"] == "no candidate valid" and events[0]["score"] is None
    assert events[1]["incumbent"] != child.id  # B leaves the broken program
    assert events[3]["score"] is not None  # A chooses again beside a valid B
    assert relic.state.phase == "done"
