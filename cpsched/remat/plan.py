"""Rematerialization / eviction plans: the event list (``events``), what may be cloned or
evicted (``policy``), the independent replay checker (``replay``), timing (``timing``), the
rewritten graph (``rewrite``), skeletons and their materialization (``skeleton``), the
result object and its JSON (``result``), and the run-time side of per-bucket plans
(``breakpoints``). This module gathers their public names.

A **remat plan** is an event list in program order. Each event is ``(kind, name)``:

- ``("compute", op)``: run ``op`` (the first time: the op itself; again: a clone that
  recreates its output buffers). Every buffer the op uses must be on the device;
- ``("free", buf)``: release the device copy of buffer ``buf``. After an ``evict`` this is
  also the point where the device->host copy must have finished;
- ``("evict", buf)``: start an asynchronous device->host copy of ``buf`` (on a copy
  stream); the device copy stays until the matching ``free``;
- ``("prefetch", buf)``: allocate ``buf`` on the device again and start the host->device
  copy; its next user waits for the copy to finish.

Buffers are named like the graph's buffers; for an op that defines one buffer (every
Checkmate/Moccasin node) that is the op's own name. Memory: bytes of device-resident
buffers, measured after each allocation (compute, prefetch), plus the running op's
transient bytes. With frees placed right after each buffer's last use (every plan cpsched
makes), this is exactly the simulator's rule for the rewritten graph (``plan_to_graph``).

**Compile-time / run-time split.** A ``Skeleton`` is one main op order plus a list of
candidate points shared by every shape bucket: ``Regen`` (clone op ``v`` just before main
step ``t``) and ``Evict`` (copy buffer ``b`` out before step ``out_step``, free its device
copy before ``free_step``, copy it back before ``in_step``). A plan table says which
candidates are active in which bucket; ``materialize`` turns a skeleton plus an active set
into the event list (what the compiled program does once its run-time guards have been
evaluated). ``pick_plan`` is that run-time choice for concrete dim values, verified by the
replay; ``plan_limits`` / ``breakpoints`` give the exact dim values at which a plan stops
fitting the budget (integer arithmetic on the size polynomials, no sampling).
"""

from __future__ import annotations

from cpsched.remat.breakpoints import (  # noqa: F401
    Pick,
    PlanLimit,
    breakpoints,
    pick_plan,
    plan_limit,
    single_dim,
    usage_polynomials,
)
from cpsched.remat.events import (  # noqa: F401
    COMPUTE,
    EVICT,
    FREE,
    KIND_NAMES,
    PREFETCH,
    Event,
    events_from_names,
    events_to_names,
)
from cpsched.remat.policy import (  # noqa: F401
    evictable_buffers,
    inplace_writers,
    recomputable_ops,
)
from cpsched.remat.replay import (  # noqa: F401
    Replay,
    _budget_array,
    check_plan,
    replay,
)
from cpsched.remat.result import (  # noqa: F401
    RematResult,
    finish_result,
    remat_result_to_dict,
)
from cpsched.remat.rewrite import (  # noqa: F401
    plan_to_graph,
)
from cpsched.remat.skeleton import (  # noqa: F401
    Candidate,
    Evict,
    PlanError,
    Regen,
    Skeleton,
    materialize,
    materialize_tagged,
)
from cpsched.remat.timing import (  # noqa: F401
    PlanTime,
    TransferModel,
    host_link,
    op_durations,
    plan_time,
    transfer_from_device,
)

__all__ = [
    "COMPUTE",
    "FREE",
    "EVICT",
    "PREFETCH",
    "KIND_NAMES",
    "Event",
    "events_to_names",
    "events_from_names",
    "inplace_writers",
    "recomputable_ops",
    "evictable_buffers",
    "Replay",
    "replay",
    "check_plan",
    "TransferModel",
    "transfer_from_device",
    "host_link",
    "op_durations",
    "PlanTime",
    "plan_time",
    "plan_to_graph",
    "Regen",
    "Evict",
    "Candidate",
    "Skeleton",
    "PlanError",
    "materialize",
    "materialize_tagged",
    "RematResult",
    "finish_result",
    "remat_result_to_dict",
    "usage_polynomials",
    "PlanLimit",
    "plan_limit",
    "single_dim",
    "breakpoints",
    "Pick",
    "pick_plan",
]
