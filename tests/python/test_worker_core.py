"""The decisions Worker and AsyncWorker share (agent_state._worker_core), without a database."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from agent_state import Job, errors
from agent_state._worker_core import LOST, RENEW_BATCH, Failure, JobState, Phase, Snooze, WorkerCore
from agent_state._worker_core import TIMED_OUT as _TIMED_OUT


def _job(job_id: int) -> Job:
    now = datetime(2031, 1, 1, tzinfo=timezone.utc)
    fields: dict[str, Any] = {name: None for name in Job.__dataclass_fields__}
    fields.update(job_id=job_id, thread_id=f"t{job_id}", fencing_token=1, attempts=1, payload={}, status="IN_PROGRESS")
    fields.update(created_at=now, updated_at=now, run_at=now)
    return Job(**fields)


def _core(concurrency: int = 2, prefetch: int | None = None, lease: float = 3.0) -> WorkerCore[JobState]:
    return WorkerCore(
        concurrency=concurrency,
        prefetch=prefetch,
        lease=timedelta(seconds=lease),
        poll_interval=1.0,
        grace_period=1.0,
        max_backoff=5.0,
    )


def test_claims_fill_concurrency_plus_prefetch_and_stop_when_stopping() -> None:
    core = _core(concurrency=2, prefetch=3)
    assert core.claim_size() == 5
    core.claimed([JobState(_job(i)) for i in range(4)], now=0.0)
    assert (core.claim_size(), core.stats.claimed) == (1, 4)
    assert _core(concurrency=32).claim_size() == 64, "prefetch defaults to concurrency"
    assert _core(concurrency=1).claim_size() == 2, "a worker of long runs does not hoard jobs"
    core.stop()
    assert (core.phase, core.claim_size()) == (Phase.STOPPING, 0)
    with pytest.raises(ValueError):
        _core(concurrency=0)
    with pytest.raises(ValueError):
        _core(prefetch=-1)


#: a prefetch for many short jobs (docs/operations.md, "Batches")
SHORT_JOBS_PREFETCH = 16


def test_with_jobs_waiting_a_claim_waits_until_half_the_prefetch_is_free() -> None:
    """One handler, a prefetch for short jobs: a claim per finished job would cost a round trip per
    job (issue 41 item 5); the worker claims again when half its prefetch is free, or at once when
    no claimed job waits for a handler."""
    core = _core(concurrency=1, prefetch=SHORT_JOBS_PREFETCH)
    assert core.claim_size() == 1 + SHORT_JOBS_PREFETCH
    jobs = [JobState(_job(i)) for i in range(1 + SHORT_JOBS_PREFETCH)]
    core.claimed(jobs, now=0.0)
    for n, ctx in enumerate(jobs[: SHORT_JOBS_PREFETCH // 2], start=1):
        core.start(ctx)
        core.handler_done(ctx)
        assert core.claim_size() == (n if n >= SHORT_JOBS_PREFETCH // 2 else 0), n
    rest = _core(concurrency=1, prefetch=SHORT_JOBS_PREFETCH)
    rest.claimed(jobs[:2], now=0.0)  # one runs, one waits: half the prefetch is not free yet, but
    rest.start(jobs[0])
    rest.handler_done(jobs[0])
    assert rest.claim_size() == SHORT_JOBS_PREFETCH, "nothing waits for the handler: claim at once"
    spare = _core(concurrency=2, prefetch=3)  # a small prefetch: whatever is free, as before
    spare.claimed(jobs[:5], now=0.0)
    spare.start(jobs[0])
    spare.handler_done(jobs[0])
    assert spare.claim_size() == 1


def test_a_slot_runs_a_held_job_skips_a_lost_one_and_hands_back_one_taken_while_stopping() -> None:
    core = _core()
    held, lost, late = (JobState(_job(i)) for i in range(3))
    core.claimed([held, lost, late], now=0.0)
    lost._lose()
    assert core.start(held) == "run" and held.running
    assert core.start(lost) == "skip"
    core.stop()
    assert core.start(late) == "release" and not late.running
    assert core.in_flight == 2


def test_settle_books_what_the_handler_finished_and_returns_what_is_left_to_send() -> None:
    core = _core()
    states = [JobState(_job(i)) for i in range(6)]
    core.claimed(states, now=0.0)
    completed_inline, paused, failed_inline, _lost, _raised, returned = states
    completed_inline.finished = True
    paused.finished = paused.paused = True
    failed_inline.finished = failed_inline.failed = True
    outcomes = [None, None, None, LOST, Failure(RuntimeError("boom")), {"ok": 1}]
    plan = core.settle(zip(states, outcomes, strict=True))
    assert [(s.job.job_id, text) for s, text in plan.failures] == [(4, "RuntimeError: boom")]
    assert [(s.job.job_id, r) for s, r in plan.completions] == [(5, {"ok": 1})]
    stats = core.stats
    assert (stats.completed, stats.paused, stats.failed, stats.lost) == (1, 1, 1, 1)
    core.completed(plan.completions, done=set())
    assert returned.lease_lost and stats.lost == 2, "left out of complete_jobs' answer: lost"


def test_renewals_are_due_after_a_third_of_the_lease_in_batches_and_a_left_out_job_is_lost() -> None:
    core = _core(lease=3.0)
    states = [JobState(_job(i)) for i in range(RENEW_BATCH + 1)]
    core.claimed(states, now=10.0)
    assert core.due(10.5) == []
    batches = core.due(11.0)
    assert [len(b) for b in batches] == [RENEW_BATCH, 1]
    core.renewed(batches[0], [s.job.job_id for s in batches[0][1:]], now=11.0)
    assert batches[0][0].lease_lost and not batches[0][1].lease_lost
    assert batches[0][1].renewed_at == 11.0
    assert [len(b) for b in core.due(11.0)] == [1], "renewed ones are not due, the lost one never again"


def test_drain_ends_only_when_a_claim_found_nothing_and_nothing_was_held() -> None:
    assert WorkerCore.drained(0, held_before=False)
    assert not WorkerCore.drained(0, held_before=True)
    assert not WorkerCore.drained(1, held_before=False)


def test_backoff_grows_with_jitter_up_to_the_cap_and_listen_never_retries_faster_than_the_poll() -> None:
    core = _core()
    backoff = core.backoff()
    delays = [backoff.next() for _ in range(12)]
    assert all(0 < d <= 5.0 for d in delays) and delays[-1] >= 2.5
    backoff.reset()
    assert backoff.next() <= 0.1
    assert core.listen_delay(core.backoff()) == 1.0


def _timed_job(job_id: int, timeout: float, deadline: float | None = None) -> Job:
    """A job claimed at T (2031-01-01) with a run timeout, and a total deadline (seconds after T)."""
    job = _job(job_id)
    claimed = job.created_at
    fields = {name: getattr(job, name) for name in Job.__dataclass_fields__}
    fields.update(claimed_at=claimed, timeout=timedelta(seconds=timeout))
    if deadline is not None:
        fields.update(deadline=claimed + timedelta(seconds=deadline))
    return Job(**fields)


def test_an_attempts_deadline_is_kept_on_the_workers_clock_and_never_renewed_past() -> None:
    """Deadlines (issue 38): the claim's answer puts the attempt's end as far from the claim as the
    database does (claimed_at + timeout, or the total deadline if sooner); a lease is not renewed
    once it has passed, and a job whose deadline passed while it waited is not started."""
    core = _core(concurrency=2, prefetch=0, lease=3.0)
    timed, capped, free = JobState(_timed_job(1, 10.0)), JobState(_timed_job(2, 10.0, deadline=4.0)), JobState(_job(3))
    core.claimed([timed, capped, free], now=100.0)
    assert (timed.deadline_at, capped.deadline_at, free.deadline_at) == (110.0, 104.0, None)
    assert capped.deadline == capped.job.claimed_at + timedelta(seconds=4)  # type: ignore[operator]
    assert [c.job.job_id for c in core.due(now=101.0)[0]] == [1, 2, 3]
    assert [c.job.job_id for c in core.due(now=104.0)[0]] == [1, 3], "not renewed past its deadline"
    assert core.start(capped, now=104.0) == "skip" and capped.timed_out, "past its deadline before it started"
    assert core.start(timed, now=104.0) == "run"
    assert core.run_timeout(timed, now=104.0) == 6.0 and core.run_timeout(free, now=104.0) is None


def test_a_handler_that_ends_past_its_deadline_timed_out_whatever_it_returned() -> None:
    core = _core(concurrency=3, prefetch=0)
    late, early, cancelled = (JobState(_timed_job(i, 10.0)) for i in (1, 2, 3))
    core.claimed([late, early, cancelled], now=0.0)
    outcomes = [
        (late, core.outcome(late, "done", now=10.0)),  # a thread that returned at its deadline
        (early, core.outcome(early, "done", now=9.0)),
        # asyncio.wait_for's TimeoutError a clock tick before the deadline is the deadline's
        (cancelled, core.outcome(cancelled, Failure(TimeoutError()), now=9.99)),
    ]
    assert [o for _, o in outcomes] == [_TIMED_OUT, "done", _TIMED_OUT]
    assert late.lease_lost and late.timed_out and not early.lease_lost
    plan = core.settle(outcomes)
    assert [c.job.job_id for c, _ in plan.completions] == [2]
    assert (core.stats.timed_out, plan.failures) == (2, [])
    with pytest.raises(errors.DeadlineExceeded):
        late.check()


def test_a_snooze_is_sent_not_failed_and_counted() -> None:
    core = _core(concurrency=2)
    ctx, other = JobState(_job(1)), JobState(_job(2))
    core.claimed([ctx, other], now=0.0)
    plan = core.settle([(ctx, Failure(Snooze(30))), (other, Failure(Snooze(until=ctx.job.created_at)))])
    assert [(c.job.job_id, s.when()) for c, s in plan.snoozes] == [(1, timedelta(seconds=30)), (2, ctx.job.created_at)]
    assert plan.failures == []
    core.snooze_sent(ctx, True)
    core.snooze_sent(other, False)
    assert (core.stats.snoozed, core.stats.lost, ctx.finished) == (1, 1, True)
    with pytest.raises(ValueError):
        Snooze()
