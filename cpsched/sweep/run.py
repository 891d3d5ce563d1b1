"""Running a sweep's tasks: on Ray where it is installed, else on a local process pool.

Both back ends yield ``(task, row)`` as solves finish, whatever their order; the driver
appends each row to the table before it takes the next. Each task asks for as many CPUs as
it has CP-SAT workers: Ray's ``num_cpus``, and on the local pool a count of busy cores
that never passes ``--jobs`` (a task wider than that runs alone).
"""

from __future__ import annotations

import collections
import importlib.util
import logging
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from cpsched.core.errors import InputError
from cpsched.sweep.solve import solve_task
from cpsched.sweep.spec import Task
from cpsched.sweep.table import ERROR

# Batches of (task, row) that finished together (row None: stopped by a signal).
Rows = Iterator[list[tuple[Task, "dict[str, Any] | None"]]]
# A worker process that dies (out of memory, a crash in native code) takes its solve with
# it; the solve is retried this many times before it becomes an error row.
CRASH_RETRIES = 1
# One-worker tasks in flight per pool process: the queue that keeps a process busy while
# the driver writes rows (solves of tiny graphs take a few milliseconds).
QUEUE_AHEAD = 4


def ray_installed() -> bool:
    spec = importlib.util.find_spec("ray")
    # a folder named ray on the path (a namespace package, no origin) is not Ray
    return spec is not None and spec.origin is not None


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def crash_row(task: Task, reason: str) -> dict[str, Any]:
    p = task.payload()
    return {
        "key": task.key,
        "graph": task.graph.label,
        "method": task.method.label,
        "options": p["options_text"],
        "seed": task.seed,
        "time_limit": task.time_limit,
        "status": ERROR,
        "error": reason,
    }


# -- local process pool ----------------------------------------------------------------------


def _quiet_worker() -> None:
    # Ctrl-C reaches the whole process group: the driver stops the sweep, the workers
    # must not turn it into an "interrupted" result; SIGTERM (how the driver ends them)
    # gets its default action back from the driver's handler that a fork copies
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _pool(jobs: int) -> ProcessPoolExecutor:
    # fork: the workers start with cpsched imported (Linux; elsewhere fork is not safe
    # with the native libraries loaded, and spawn imports it again in each worker)
    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    return ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_quiet_worker)


def _stop(ex: ProcessPoolExecutor) -> None:
    # the executor has no public way to stop running calls: end its processes
    for p in list((getattr(ex, "_processes", None) or {}).values()):
        if p.is_alive():
            p.terminate()
    ex.shutdown(wait=True, cancel_futures=True)


def _may_submit(t: Task, busy: int, wide: int, running: int, jobs: int) -> bool:
    """Start ``t`` now? Within ``jobs`` CPUs, or alone; one-worker tasks are also queued
    ahead (``QUEUE_AHEAD`` per process) while no wider task is out, so that a process never
    waits for the driver, and still never more than ``jobs`` run at once: the pool has
    ``jobs`` processes of one thread each."""
    if busy + t.workers <= jobs or running == 0:
        return True
    return t.workers == 1 and wide == 0 and running < QUEUE_AHEAD * jobs


def local_rows(tasks: Sequence[Task], jobs: int) -> Rows:
    """Solves on ``jobs`` local processes, never more CP-SAT workers than ``jobs`` at once;
    yields the rows that finished together."""
    pending = collections.deque(tasks)
    crashes: collections.Counter[str] = collections.Counter()
    ex = _pool(jobs)
    running: dict[Future, Task] = {}
    busy = wide = 0
    finished = False
    try:
        while pending or running:
            while pending and _may_submit(pending[0], busy, wide, len(running), jobs):
                t = pending.popleft()
                running[ex.submit(solve_task, t.payload())] = t
                busy += t.workers
                wide += t.workers > 1
            done, _ = wait(list(running), return_when=FIRST_COMPLETED)
            broken = False
            batch: list[tuple[Task, dict[str, Any] | None]] = []
            for f in done:
                t = running.pop(f)
                busy -= t.workers
                wide -= t.workers > 1
                try:
                    row = f.result()
                except BrokenProcessPool:
                    broken = True
                    crashes[t.key] += 1
                    if crashes[t.key] > CRASH_RETRIES:
                        batch.append((t, crash_row(t, "the worker process died during this solve")))
                    else:
                        pending.appendleft(t)
                    continue
                batch.append((t, row))
            if broken:
                # every call still on the broken pool is lost: retry them on a new one
                for t in running.values():
                    crashes[t.key] += 1
                    pending.appendleft(t)
                running.clear()
                busy = wide = 0
                _stop(ex)
                ex = _pool(jobs)
            yield batch
        finished = True
    finally:
        if finished:
            ex.shutdown(wait=True)
        else:
            _stop(ex)


# -- Ray -------------------------------------------------------------------------------------


def ray_rows(tasks: Sequence[Task], jobs: int | None, address: str | None) -> Rows:
    """Solves as Ray tasks (``num_cpus`` = the task's workers), local or on ``address``.
    Graph files travel as objects, so a cluster's machines need not have them."""
    import ray

    ray.init(
        address=address,
        num_cpus=None if address else jobs,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
        ignore_reinit_error=True,
    )
    inflight: dict[Any, Task] = {}
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        widest = max((t.workers for t in tasks), default=1)
        if widest > cpus:
            raise InputError(
                f"a solve asks for {widest} workers but the Ray cluster has {cpus} CPUs"
            )
        remote = ray.remote(max_retries=CRASH_RETRIES)(solve_task)
        blobs: dict[str, Any] = {}
        if address:
            for t in tasks:
                p = t.graph.path
                if p is not None and p not in blobs:
                    with open(p, "rb") as f:
                        blobs[p] = ray.put(f.read())
        pending = collections.deque(tasks)
        cap = max(8, 4 * cpus)  # enough queued to keep every CPU busy, few to cancel
        while pending or inflight:
            while pending and len(inflight) < cap:
                t = pending.popleft()
                ref = remote.options(num_cpus=t.workers).remote(
                    t.payload(), blobs.get(t.graph.path or "")
                )
                inflight[ref] = t
            ready, rest = ray.wait(list(inflight), num_returns=1)
            if rest:  # and every other one already done
                ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
            batch: list[tuple[Task, dict[str, Any] | None]] = []
            for ref in ready:
                t = inflight.pop(ref)
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayError as e:
                    msg = " ".join(str(e).split())[:300]
                    row = crash_row(t, f"Ray task failed: {type(e).__name__}: {msg}")
                batch.append((t, row))
            yield batch
    finally:
        for ref in inflight:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # already finished or gone with its worker
                pass
        ray.shutdown()


# -- CPU use ---------------------------------------------------------------------------------


def _machine_ticks() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat (Linux)."""
    try:
        with open("/proc/stat") as f:
            parts = f.readline().split()
    except OSError:
        return None
    if not parts or parts[0] != "cpu":
        return None
    vals = [int(v) for v in parts[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    return sum(vals) - idle, sum(vals)


@dataclass
class CpuMeter:
    """Wall time, CPU seconds of this process and its finished children, and the
    machine-wide busy share over the same interval (other jobs on the machine count too)."""

    wall0: float = field(default_factory=time.perf_counter)
    times0: os.times_result = field(default_factory=os.times)
    ticks0: tuple[int, int] | None = field(default_factory=_machine_ticks)

    def read(self, n_cores: int, children: bool = True) -> dict[str, float | None]:
        wall = time.perf_counter() - self.wall0
        t = os.times()
        cpu = (t.user - self.times0.user) + (t.system - self.times0.system)
        if children:
            cpu += (t.children_user - self.times0.children_user) + (
                t.children_system - self.times0.children_system
            )
        ticks = _machine_ticks()
        machine = None
        if ticks and self.ticks0 and ticks[1] > self.ticks0[1]:
            machine = (ticks[0] - self.ticks0[0]) / (ticks[1] - self.ticks0[1])
        return {
            "wall_s": wall,
            "cpu_s": cpu if children else None,
            "cores_busy": (cpu / wall) if children and wall > 0 else None,
            "cores": float(n_cores),
            "machine_busy": machine,
        }


@dataclass
class Progress:
    """A line on stderr every ``every`` seconds: solves done, failed, elapsed."""

    total: int
    echo: Callable[[str], None]
    every: float = 10.0
    done: int = 0
    failed: int = 0
    t0: float = field(default_factory=time.perf_counter)
    last: float = field(default_factory=time.perf_counter)

    def step(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed
        now = time.perf_counter()
        if now - self.last >= self.every or self.done == self.total:
            self.last = now
            self.echo(
                f"  {self.done}/{self.total} solves done ({self.failed} failed), "
                f"{now - self.t0:.1f} s"
            )
