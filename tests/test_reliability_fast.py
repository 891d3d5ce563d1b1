"""A fast subset of the hostile corpus (``benchmarks/reliability.py``) in the test suite:
every bad call into the Python API (in-process), and one case of each command-line class
that runs in a second or two (a fresh ``python -m cpsched`` per case, checked the way the
harness checks it: exit code, one line on stderr, inputs and older outputs unchanged, no
partial output, the written output's figures against ``simulate``)."""

from __future__ import annotations

import functools
import importlib.util
import signal
import sys
from pathlib import Path

import pytest

from cpsched.errors import InputError, InputTypeError

REPO = Path(__file__).resolve().parents[1]


def _harness():
    spec = importlib.util.spec_from_file_location(
        "cpsched_reliability", REPO / "benchmarks" / "reliability.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


harness = _harness()
CALLS = harness.api_bad_calls()


@pytest.mark.parametrize("call", list(CALLS))
def test_api_bad_call_raises_the_package_error(call, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a call that wrongly writes, writes here
    fn, kind = CALLS[call]
    with pytest.raises(kind) as e:
        fn()
    # old callers that caught the built-in types keep working
    if kind is InputTypeError:
        assert isinstance(e.value, TypeError)
    elif issubclass(kind, InputError):
        assert isinstance(e.value, ValueError)
    assert list(tmp_path.iterdir()) == []


def test_api_catalog_covers_the_issue():
    # issue 28 named 27 bad calls; the catalog holds them and more
    assert len(CALLS) >= 27
    for name in ("read(nx.Graph())", "from_networkx(None)", "time_limit='5'",
                 "time_limit=10**400", "seed=2**64", "slack=nan"):
        assert name in CALLS


# one case per class, each a second or two; (group, name) as the harness names them
FAST = [
    ("bad input", "StableHLO truncated at 200 (schedule)"),
    ("bad input", "duration \"abc\" (compare)"),
    ("more input", "HLO while without body (schedule)"),
    ("more input", "--device nope"),
    ("more input", "-o spelled sub/../g.json"),
    ("bad option", "pipeline --costs 1e308,1e308,1e308"),
    ("bad option", "unknown option (argparse)"),
    ("limit", "frontier --points 1000000"),
    ("all-or-nothing", "full disk: -o and --trace (trace too big)"),
    ("disk", "--trace in a read-only folder"),
    ("disk", "report on stdout to a full disk"),
    ("disk", "stdout closed (files still written)"),
    ("budget", "--budget '0.9'"),
    ("budget", "remat-span --budget 50%"),
    ("figure", "xla-dfs on while loop HLO"),
    ("signal", "SIGTERM at 0.3 s: schedule (cp)"),
]


@functools.cache
def _cases() -> dict:
    return {(c.group, c.name): c for c in harness.cases(quick=True)}


def test_fast_cases_exist():
    assert [f for f in FAST if f not in _cases()] == []


@pytest.mark.parametrize("group,name", FAST, ids=[n for _, n in FAST])
def test_hostile_case(group, name, tmp_path):
    case = _cases()[(group, name)]
    if "rodir:" in case.setup and harness.read_only_skipped():
        pytest.skip("no way to make a folder read-only for this user (root without setpriv)")
    row = harness.run_case(case, tmp_path)
    assert row["ok"], row["problems"]
    if case.signal is not None:
        assert row["exit"] == 128 + int(signal.SIGTERM)
