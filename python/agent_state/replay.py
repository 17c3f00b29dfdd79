"""Replay as evals: compare a candidate's trajectory with the recorded one.

A recorded thread is ground truth: the tools it called, with which arguments, and its final
answer (``ai.trajectory``). A candidate (a new model, a new prompt) runs on a fork of the thread
and produces its own trajectory; :func:`compare` says whether it called the same tools with the
same arguments, in order, and whether its final answer is the same (exactly, or by a scorer the
caller passes for open text).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .client import Client
from .models import EvalRun, TrajectoryStep

#: scorer(expected final content, actual final content) -> score in [0, 1]
Scorer = Callable[[Any, Any], float]


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str | None
    arguments: Any


@dataclass(frozen=True, slots=True)
class Comparison:
    """How a candidate's trajectory differs from the recorded one."""

    expected_tools: list[ToolCall]
    actual_tools: list[ToolCall]
    tool_mismatches: list[tuple[int, ToolCall | None, ToolCall | None]]
    expected_final: Any
    actual_final: Any
    final_score: float
    passed: bool
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def tools_match(self) -> bool:
        return not self.tool_mismatches

    def diff_lines(self) -> list[str]:
        """A human-readable diff, one line per difference ('-' recorded, '+' candidate)."""
        lines: list[str] = []
        for index, expected, actual in self.tool_mismatches:
            if expected is not None:
                lines.append(f"- tool #{index + 1}: {expected.name}({_dump(expected.arguments)})")
            if actual is not None:
                lines.append(f"+ tool #{index + 1}: {actual.name}({_dump(actual.arguments)})")
        if self.final_score < 1.0:
            lines.append(f"- final: {_dump(self.expected_final)}")
            lines.append(f"+ final: {_dump(self.actual_final)}  (score {self.final_score:.2f})")
        return lines

    def as_json(self) -> dict[str, Any]:
        return {
            "tool_mismatches": [
                {"index": i, "expected": _call_json(e), "actual": _call_json(a)} for i, e, a in self.tool_mismatches
            ],
            "expected_final": self.expected_final,
            "actual_final": self.actual_final,
        }


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _call_json(call: ToolCall | None) -> dict[str, Any] | None:
    return None if call is None else {"name": call.name, "arguments": call.arguments}


def exact(expected: Any, actual: Any) -> float:
    """The default scorer: 1.0 when the final answers are equal, else 0.0."""
    return 1.0 if expected == actual else 0.0


def tool_calls(steps: Sequence[TrajectoryStep]) -> list[ToolCall]:
    return [ToolCall(s.tool_name, s.arguments) for s in steps if s.role == "tool_call"]


def final_answer(steps: Sequence[TrajectoryStep]) -> Any:
    return next((s.content for s in steps if s.is_final), None)


def compare(
    reference: Sequence[TrajectoryStep],
    candidate: Sequence[TrajectoryStep],
    scorer: Scorer = exact,
    pass_score: float = 1.0,
) -> Comparison:
    """Compares two trajectories: same tools, same arguments, same order; final answer by scorer."""
    expected, actual = tool_calls(reference), tool_calls(candidate)
    mismatches: list[tuple[int, ToolCall | None, ToolCall | None]] = []
    for index in range(max(len(expected), len(actual))):
        e = expected[index] if index < len(expected) else None
        a = actual[index] if index < len(actual) else None
        if e != a:
            mismatches.append((index, e, a))
    expected_final, actual_final = final_answer(reference), final_answer(candidate)
    score = float(scorer(expected_final, actual_final))
    tools_score = 1.0 - len(mismatches) / max(len(expected), len(actual), 1)
    return Comparison(
        expected_tools=expected,
        actual_tools=actual,
        tool_mismatches=mismatches,
        expected_final=expected_final,
        actual_final=actual_final,
        final_score=score,
        passed=not mismatches and score >= pass_score,
        scores={"tools": tools_score, "final": score},
    )


#: run(client, fork_thread_id, checkpoint_id): the candidate (a graph, a new model or prompt) runs
#: on the fork, starting from the checkpoint, and writes its messages to the fork thread.
Run = Callable[[Client, str, str], None]


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """A replay: the fork it ran on, the comparison, and the eval run recorded for it."""

    fork_thread_id: str
    comparison: Comparison
    eval_run: EvalRun | None


def replay(
    client: Client,
    thread_id: str,
    checkpoint_id: str,
    run: Run,
    *,
    scorer: Scorer = exact,
    pass_score: float = 1.0,
    candidate: str | None = None,
    checkpoint_ns: str = "",
    record: bool = True,
) -> ReplayResult:
    """Forks ``thread_id`` at ``checkpoint_id`` (``ai.fork_thread``), runs the candidate on the fork,
    and compares what it did with what the recorded thread did after that checkpoint. The original
    thread is never touched. With ``record``, the outcome goes to ``ai.eval_runs``."""
    fork = client.fork_thread(thread_id, checkpoint_id, None, checkpoint_ns)
    run(client, fork, checkpoint_id)
    reference = _whole_trajectory(client, thread_id, checkpoint_id, checkpoint_ns)
    comparison = compare(reference, _whole_trajectory(client, fork), scorer, pass_score)
    eval_run = None
    if record:
        name: str = candidate or str(getattr(run, "__qualname__", repr(run)))
        eval_run = client.record_eval_run(
            thread_id, name, comparison.passed, comparison.scores, comparison.as_json(), fork, checkpoint_id
        )
    return ReplayResult(fork, comparison, eval_run)


def _whole_trajectory(
    client: Client, thread_id: str, after_checkpoint_id: str | None = None, checkpoint_ns: str = ""
) -> list[TrajectoryStep]:
    """Every step: ai.trajectory returns a page of at most 10,000, read on by the last step's seq."""
    steps: list[TrajectoryStep] = []
    while True:
        page = client.trajectory(
            thread_id, after_checkpoint_id, checkpoint_ns, after_seq=steps[-1].seq if steps else None
        )
        steps.extend(page)
        if len(page) < 10000:
            return steps
