"""A sweep specification (TOML, or YAML where PyYAML is installed) and its task list.

A spec names graphs, methods, scenarios, time limits, seeds, workers per solve and budgets;
the task list is their cross product, one task per solve. Settings a method does not use
are left out of its tasks (a heuristic ignores time limits, seeds and workers, so it runs
once per graph and scenario set; only the remat family and ``objective = "budget"`` take
a budget), so no solve is repeated for nothing.

Every task has a key: a content hash of the graph (the file's bytes, or the generator and
its parameters), the method, the options that reach it and the cpsched version. The
results table is keyed by it, which is what lets an interrupted sweep resume.

Errors are one line that names the spec file, the line where it can be found, and the key
(``sweep.toml:4: methods[1]: unknown method 'cq'``).
"""

from __future__ import annotations

import glob
import hashlib
import inspect
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from cpsched import api, generators
from cpsched.core.errors import InputError, LimitError
from cpsched.core.inputs import loads_json
from cpsched.core.scenarios import from_dim_specs, from_json
from cpsched.methods import check_options, load_all
from cpsched.version import __version__

# Short names for the generator families (``layered:n=1000,seed=1``).
GENERATOR_ALIASES = {
    "layered": "random_layered",
    "rlg": "random_layered",
    "transformer": "transformer_train",
    "mlp": "mlp_train",
    "parallel": "transformer_parallel",
}
KEYS = {
    "name": "a name for the sweep (shown in the summary)",
    "description": "free text, shown in the summary",
    "graphs": "paths, globs or generator specs such as layered:n=100,seed=0..9",
    "methods": "method names, or tables {method, label, objective, other options}",
    "scenarios": 'dims of each scenario set: {b = [1, 8]}, "b=1,8 s=128", or a scenarios JSON file',
    "time_limits": "solver seconds per solve",
    "seeds": "solver seeds, a list or a range such as '0..4'",
    "workers": "CP-SAT threads per solve (the CPUs one task takes)",
    "budgets": "memory budgets for methods that take one (bytes, 8GiB, 90%)",
    "deterministic": "count solver limits in work units",
    "options": "method options given to every method (slack, device, ...)",
    "output": "the results table, relative to the spec (default: the spec's name with .csv)",
}
METHOD_KEYS = ("method", "label", "objective")
# Settings that are axes of the sweep, not method options.
SET_BY_SPEC = {
    "time_limit": "time_limits",
    "seed": "seeds",
    "workers": "workers",
    "budget": "budgets",
    "scenarios": "scenarios",
    "deterministic": "deterministic key",
    "log": "runs (no solver log in a sweep)",
    "progress": "runs (no progress in a sweep)",
}
# A sweep of more solves than this is refused when its spec is read (a typo such as
# seeds = "0..100000000" would otherwise build its task list for minutes, then run for years).
MAX_TASKS = 100_000
# Where a sweep does not say: one CP-SAT thread per solve (solves run side by side).
DEFAULT_WORKERS = 1
DEFAULT_SEED = api.DEFAULT_SEED


# -- problem data ----------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphSource:
    """One graph of the sweep: a file or a generator call."""

    label: str  # as shown in the table: the path as given, or the generator spec
    digest: str  # content hash: the file's bytes, or the generator's canonical call
    path: str | None = None
    family: str | None = None
    params: tuple[tuple[str, Any], ...] = ()

    def payload(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "path": self.path,
            "family": self.family,
            "params": dict(self.params),
        }


@dataclass(frozen=True)
class MethodEntry:
    label: str
    name: str  # the registered method
    family: str
    objective: str | None = None
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def takes_budget(self) -> bool:
        return self.family == "remat" or self.objective == "budget"

    @property
    def uses_solver(self) -> bool:
        # remat methods run cp for percentage budgets and cp-remat itself
        return api.is_solver(self.name) or self.family == "remat"


@dataclass(frozen=True)
class ScenarioSet:
    label: str  # "" for the graph's own scenarios
    dims: tuple[str, ...] = ()  # --dim specs
    file: str | None = None
    content: Mapping[str, Any] | None = None  # a scenarios JSON file's content
    digest: str = ""

    def key(self) -> Any:
        if self.file is not None:
            return {"file": self.digest}
        return list(self.dims) or None

    def value(self) -> Any:
        """What ``api.schedule(scenarios=...)`` takes."""
        if self.content is not None:
            return dict(self.content)
        return list(self.dims) or None


@dataclass(frozen=True)
class Task:
    """One solve."""

    key: str
    graph: GraphSource
    method: MethodEntry
    scenarios: ScenarioSet
    time_limit: float | None
    seed: int | None
    workers: int
    budget: Any
    deterministic: bool
    options: Mapping[str, Any]  # everything in the key but the graph: the table's options

    def payload(self) -> dict[str, Any]:
        """What a worker needs (plain data: it travels to other processes and machines)."""
        return {
            "key": self.key,
            "graph": self.graph.payload(),
            "label": self.method.label,
            "method": self.method.name,
            "objective": self.method.objective,
            "method_options": dict(self.method.options),
            "scenarios": self.scenarios.value(),
            "time_limit": self.time_limit,
            "seed": self.seed,
            "workers": self.workers,
            "budget": self.budget,
            "deterministic": self.deterministic,
            "options_text": options_text(self.options),
        }


@dataclass
class Spec:
    path: str
    name: str
    description: str
    graphs: list[GraphSource]
    methods: list[MethodEntry]
    scenarios: list[ScenarioSet]
    time_limits: list[float]
    seeds: list[int]
    workers: list[int]
    budgets: list[Any]
    deterministic: bool
    output: str | None
    inputs: list[str] = field(default_factory=list)  # files the sweep reads (never written)

    def tasks(self) -> list[Task]:
        """The cross product, without repeats (settings a method ignores are dropped)."""
        out: dict[str, Task] = {}
        for g, m, sc in itertools.product(self.graphs, self.methods, self.scenarios):
            limits: list[float | None] = list(self.time_limits) if m.uses_solver else [None]
            seeds: list[int | None] = list(self.seeds) if m.uses_solver else [None]
            workers = self.workers if api.is_solver(m.name) else [1]
            budgets = self.budgets if m.takes_budget else [None]
            for tl, seed, w, b in itertools.product(limits, seeds, workers, budgets):
                opts: dict[str, Any] = {"method": m.name}
                if m.objective:
                    opts["objective"] = m.objective
                opts.update(dict(m.options))
                if sc.key() is not None:
                    opts["scenarios"] = sc.key()
                if tl is not None:
                    opts["time_limit"] = tl
                    opts["seed"] = seed
                    opts["deterministic"] = self.deterministic
                if api.is_solver(m.name):
                    opts["workers"] = w
                if b is not None:
                    opts["budget"] = b
                key = task_key(g.digest, m.name, opts)
                out.setdefault(
                    key,
                    Task(key, g, m, sc, tl, seed, w, b, self.deterministic, opts),
                )
        return list(out.values())


def task_key(graph_digest: str, method: str, options: Mapping[str, Any]) -> str:
    """Content hash of (graph, method, options, cpsched version)."""
    blob = json.dumps(
        {"graph": graph_digest, "method": method, "options": options, "version": __version__},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def options_text(options: Mapping[str, Any]) -> str:
    return json.dumps(dict(options), sort_keys=True, separators=(",", ":"))


# -- reading ---------------------------------------------------------------------------------


class _Where:
    """Turns a key path into an ``InputError`` naming the spec and, where found, the line."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.lines = text.splitlines()

    def line_of(self, key: str, value: Any = None) -> int | None:
        top = key.split("[", 1)[0].split(".", 1)[0]
        pat = re.compile(rf"^\s*(\[\s*)?{re.escape(top)}\s*[=:\]]")
        start = next((i for i, ln in enumerate(self.lines) if pat.match(ln)), None)
        if start is None:
            return None
        if value is not None and not isinstance(value, (Mapping, list)):
            needle = str(value)
            for i in range(start, len(self.lines)):
                if needle in self.lines[i]:
                    return i + 1
        return start + 1

    def error(self, key: str, reason: str, value: Any = None) -> InputError:
        return InputError(f"{key}: {reason}", path=self.path, line=self.line_of(key, value))


def load_spec(path: str) -> Spec:
    """Read and check a sweep spec; every problem is an ``InputError`` naming its place."""
    data, text = _parse_file(path)
    where = _Where(path, text)
    if not isinstance(data, Mapping):
        raise InputError("a sweep spec is a table of keys (graphs, methods, ...)", path=path)
    for k in data:
        if k not in KEYS:
            raise where.error(str(k), f"unknown key; the keys are {', '.join(KEYS)}")
    base = os.path.dirname(os.path.abspath(path))
    inputs = [path]
    graphs = _graphs(data, where, base, inputs)
    methods = _methods(data, where)
    scenarios = _scenarios(data, where, base, inputs)
    time_limits = [
        _number(where, f"time_limits[{i}]", v, positive=True)
        for i, v in enumerate(_list(data, "time_limits", where, [api.DEFAULT_TIME_LIMIT]))
    ]
    seeds = _seeds(data, where)
    workers = []
    for i, v in enumerate(_list(data, "workers", where, [DEFAULT_WORKERS])):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise where.error(f"workers[{i}]", f"must be an integer of at least 1 (got {v!r})", v)
        workers.append(v)
    budgets = _list(data, "budgets", where, [])
    for i, b in enumerate(budgets):
        if isinstance(b, bool) or not isinstance(b, (int, str)):
            raise where.error(f"budgets[{i}]", f"bytes, '8GiB' or '90%' (got {b!r})", b)
        try:
            api.parse_budget(b)
        except InputError as e:
            raise where.error(f"budgets[{i}]", e.reason, b) from None
    takers = [m.label for m in methods if m.takes_budget]
    if takers and not budgets:
        raise where.error(
            "methods", f"{takers[0]} needs a budget: add budgets = ['90%'] (or bytes, 8GiB)"
        )
    if budgets and not takers:
        raise where.error(
            "budgets", 'no method takes a budget (the remat family or objective = "budget")'
        )
    deterministic = data.get("deterministic", False)
    if not isinstance(deterministic, bool):
        raise where.error("deterministic", f"true or false (got {deterministic!r})")
    output = data.get("output")
    if output is not None:
        if not isinstance(output, str) or not output.strip():
            raise where.error("output", f"a file name (got {output!r})")
        output = os.path.normpath(os.path.join(base, os.path.expanduser(output)))
    for k in ("name", "description"):
        if not isinstance(data.get(k, ""), str):
            raise where.error(k, "must be a string")
    name = data.get("name") or os.path.splitext(os.path.basename(path))[0]
    per_graph = len(scenarios) * sum(
        (len(time_limits) * len(seeds) if m.uses_solver else 1)
        * (len(workers) if api.is_solver(m.name) else 1)
        * (len(budgets) if m.takes_budget else 1)
        for m in methods
    )
    if per_graph * len(graphs) > MAX_TASKS:
        raise LimitError(
            f"{per_graph * len(graphs):,} solves, over the {MAX_TASKS:,} a sweep may hold; "
            "split it into several specs",
            path=path,
        )
    return Spec(
        path=path,
        name=name,
        description=data.get("description", ""),
        graphs=graphs,
        methods=methods,
        scenarios=scenarios,
        time_limits=time_limits,
        seeds=seeds,
        workers=workers,
        budgets=budgets or [None],
        deterministic=deterministic,
        output=output,
        inputs=inputs,
    )


def _parse_file(path: str) -> tuple[Any, str]:
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(f"cannot read the sweep spec: {e.strerror}", path=path) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", path=path) from None
    lower = path.lower()
    if lower.endswith((".yaml", ".yml")):
        return _parse_yaml(text, path), text
    if lower.endswith(".toml"):
        return _parse_toml(text, path), text
    raise InputError("a sweep spec is a .toml file (or .yaml / .yml with PyYAML)", path=path)


def _parse_toml(text: str, path: str) -> Any:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the tomli backport, where installed
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise InputError(
                "TOML specs need Python 3.11 or the tomli package (pip install tomli)", path=path
            ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg) or "bad TOML"
        where = (int(m.group(1)), int(m.group(2))) if m else None
        raise _syntax_error("TOML", reason, path, where) from None


def _parse_yaml(text: str, path: str) -> Any:
    try:
        import yaml
    except ModuleNotFoundError:
        raise InputError(
            "YAML specs need PyYAML (pip install pyyaml); or write the spec as TOML", path=path
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        reason = " ".join(str(getattr(e, "problem", None) or e).split())
        where = (mark.line + 1, mark.column + 1) if mark is not None else None
        raise _syntax_error("YAML", reason, path, where) from None


def _syntax_error(
    language: str, reason: str, path: str, where: tuple[int, int] | None
) -> InputError:
    """``bad TOML: reason`` at ``path`` (line and column where the parser gave them)."""
    if where is None:
        return InputError(f"bad {language}: {reason}", path=path)
    return InputError(f"bad {language}: {reason}", path=path, line=where[0], column=where[1])


def _list(data: Mapping[str, Any], key: str, where: _Where, default: list) -> list:
    if key not in data:
        return list(default)
    v = data[key]
    if isinstance(v, (list, tuple)):
        if not v:
            raise where.error(key, "is empty")
        return list(v)
    if isinstance(v, Mapping):
        raise where.error(key, "a value or a list of values, not a table")
    return [v]


def _number(where: _Where, key: str, v: Any, positive: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise where.error(key, f"must be a number (got {v!r})", v)
    if not math.isfinite(v) or (positive and v <= 0):
        raise where.error(key, f"must be a finite number above 0 (got {v!r})", v)
    return float(v)


def _int_range(text: str) -> list[int] | None:
    """``'0..4'`` -> [0, 1, 2, 3, 4]; None if ``text`` is not a range. A range of more
    than ``MAX_TASKS`` values is a ``LimitError`` (it could never run)."""
    m = re.fullmatch(r"\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*", text)
    if not m:
        return None
    lo, hi = int(m.group(1)), int(m.group(2))
    if hi - lo + 1 > MAX_TASKS:
        raise LimitError(
            f"{text.strip()}: {hi - lo + 1:,} values, over the {MAX_TASKS:,} solves a sweep may hold"
        )
    return list(range(lo, hi + 1)) if hi >= lo else []


def _seeds(data: Mapping[str, Any], where: _Where) -> list[int]:
    out: list[int] = []
    for i, v in enumerate(_list(data, "seeds", where, [DEFAULT_SEED])):
        try:
            rng = _int_range(v) if isinstance(v, str) else None
        except LimitError as e:
            raise where.error(f"seeds[{i}]", e.reason, v) from None
        if rng and 0 <= rng[0] and rng[-1] < 2**31:
            out += rng
        elif isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**31:
            out.append(v)
        else:
            raise where.error(
                f"seeds[{i}]", f"an integer 0..2^31-1 or a range 'A..B' (got {v!r})", v
            )
    return list(dict.fromkeys(out))


def _file_digest(path: str, label: str, where: _Where, key: str) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    except OSError as e:
        raise where.error(key, f"cannot read {label}: {e.strerror}", label) from None
    return h.hexdigest()


def _graphs(
    data: Mapping[str, Any], where: _Where, base: str, inputs: list[str]
) -> list[GraphSource]:
    if "graphs" not in data:
        raise where.error("graphs", "required: paths, globs or generator specs")
    out: dict[str, GraphSource] = {}
    for i, item in enumerate(_list(data, "graphs", where, [])):
        key = f"graphs[{i}]"
        if not isinstance(item, str) or not item.strip():
            raise where.error(key, f"a path, glob or generator spec (got {item!r})", item)
        head = item.split(":", 1)[0].strip()
        if ":" in item and (head in GENERATOR_ALIASES or head in generators.FAMILIES):
            for g in _generated(item, where, key):
                out.setdefault(g.digest + g.label, g)
            continue
        full = os.path.normpath(os.path.join(base, os.path.expandvars(os.path.expanduser(item))))
        matches = sorted(glob.glob(full, recursive=True)) if glob.has_magic(full) else [full]
        matches = [m for m in matches if os.path.isfile(m)]
        if not matches:
            hint = (
                f"; generators: {', '.join(sorted(set(GENERATOR_ALIASES) | set(generators.FAMILIES)))}"
                if ":" in item
                else ""
            )
            raise where.error(key, f"{item!r} matches no file{hint}", item)
        for m in matches:
            # a glob's files are named relative to the spec's folder, like the glob
            label = os.path.relpath(m, base) if glob.has_magic(full) else item
            digest = _file_digest(m, label, where, key)
            inputs.append(m)
            out.setdefault(digest + label, GraphSource(label=label, digest=digest, path=m))
    return list(out.values())


def _scalar(text: str) -> Any:
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def _generated(item: str, where: _Where, key: str) -> list[GraphSource]:
    head, _, rest = item.partition(":")
    family = GENERATOR_ALIASES.get(head.strip(), head.strip())
    fn = cast(Callable[..., Any], generators.FAMILIES[family])
    params: dict[str, list[Any]] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        if "=" not in part:
            raise where.error(key, f"{part!r}: expected NAME=VALUE in {item!r}", item)
        name, value = (s.strip() for s in part.split("=", 1))
        if name in params:
            raise where.error(key, f"{name} given twice in {item!r}", item)
        try:
            rng = _int_range(value)
        except LimitError as e:
            raise where.error(key, e.reason, item) from None
        if rng is not None:
            if not rng:
                raise where.error(key, f"{name}={value}: an empty range", item)
            params[name] = list(rng)
        else:
            params[name] = [_scalar(value)]
    sig = inspect.signature(fn)
    for name in params:
        if name not in sig.parameters:
            raise where.error(
                key,
                f"{family} has no parameter {name!r} (it takes {', '.join(sig.parameters)})",
                item,
            )
    out = []
    names = list(params)
    count = math.prod(len(v) for v in params.values())
    if count > MAX_TASKS:
        raise where.error(
            key, f"{count:,} graphs, over the {MAX_TASKS:,} solves a sweep may hold", item
        )
    for values in itertools.product(*(params[n] for n in names)):
        call = dict(zip(names, values))
        try:
            generators.check_params(family, call)
        except InputError as e:
            raise where.error(key, e.reason, item) from None
        canon = json.dumps({"family": family, "params": call}, sort_keys=True)
        label = f"{head.strip()}:" + ",".join(f"{k}={v}" for k, v in call.items())
        out.append(
            GraphSource(
                label=label,
                digest=hashlib.sha256(canon.encode()).hexdigest(),
                family=family,
                params=tuple(call.items()),
            )
        )
    return out


def _methods(data: Mapping[str, Any], where: _Where) -> list[MethodEntry]:
    if "methods" not in data:
        raise where.error("methods", "required: method names (see `cpsched methods`)")
    registry = load_all()
    common = data.get("options", {})
    if not isinstance(common, Mapping):
        raise where.error("options", "a table of method options (slack = 0.1, ...)")
    out: list[MethodEntry] = []
    seen: set[str] = set()
    for i, item in enumerate(_list(data, "methods", where, [])):
        key = f"methods[{i}]"
        if isinstance(item, str):
            item = {"method": item}
        if (
            not isinstance(item, Mapping)
            or not isinstance(item.get("method"), str)
            or not item["method"].strip()
        ):
            raise where.error(key, f"a method name or a table with method = NAME (got {item!r})")
        name = api.resolve_method(item["method"].strip())
        if name not in registry:
            raise where.error(
                key,
                f"unknown method {item['method']!r}; `cpsched methods` lists them",
                item["method"],
            )
        objective = item.get("objective")
        if objective is not None:
            if objective not in api.PROBLEMS:
                raise where.error(
                    key,
                    f"unknown objective {objective!r}; one of {', '.join(api.PROBLEMS)}",
                    objective,
                )
            try:
                name = api.resolve_method(name, objective)
            except InputError as e:
                raise where.error(key, e.reason, objective) from None
        opts = {**dict(common), **{k: v for k, v in item.items() if k not in METHOD_KEYS}}
        for k, v in opts.items():
            if k in SET_BY_SPEC:
                raise where.error(
                    key if k in item else "options", f"{k} is set by the spec's {SET_BY_SPEC[k]}", k
                )
            if not isinstance(v, (str, int, float, bool)):
                raise where.error(key, f"option {k}: a number, string or boolean (got {v!r})")
            try:
                check_options([k], "method option")
            except InputError as e:
                raise where.error(key if k in item else "options", e.reason, k) from None
        label = item.get("label")
        if label is None:
            extra = ([f"objective={objective}"] if objective else []) + [
                f"{k}={v}" for k, v in sorted(item.items()) if k not in METHOD_KEYS
            ]
            label = name + (f"[{','.join(extra)}]" if extra else "")
        if not isinstance(label, str) or not label.strip():
            raise where.error(key, f"label: a non-empty string (got {label!r})")
        if label in seen:
            raise where.error(
                key, f"{label} is listed twice (give a label to tell them apart)", label
            )
        seen.add(label)
        out.append(
            MethodEntry(label, name, registry[name].family, objective, tuple(sorted(opts.items())))
        )
    return out


def _scenarios(
    data: Mapping[str, Any], where: _Where, base: str, inputs: list[str]
) -> list[ScenarioSet]:
    if "scenarios" not in data:
        return [ScenarioSet("")]
    out = []
    for i, item in enumerate(_list(data, "scenarios", where, [])):
        key = f"scenarios[{i}]"
        if isinstance(item, Mapping):
            dims = []
            for d, vals in item.items():
                vals = vals if isinstance(vals, list) else [vals]
                if not vals or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in vals
                ):
                    raise where.error(key, f"{d}: integer values (got {vals!r})")
                dims.append(f"{d}={','.join(str(v) for v in vals)}")
        elif isinstance(item, str) and "=" in item:
            dims = item.replace(";", " ").split()
        elif isinstance(item, str):
            full = os.path.normpath(os.path.join(base, os.path.expanduser(item)))
            digest = _file_digest(full, item, where, key)
            try:
                with open(full, encoding="utf-8") as f:
                    content = loads_json(f.read(), full)
            except InputError as e:
                raise where.error(key, str(e), item) from None
            except (OSError, UnicodeDecodeError) as e:
                raise where.error(key, f"cannot read {item}: {e}", item) from None
            if not isinstance(content, Mapping) or "scenarios" not in content:
                raise where.error(key, f"{item} is not a scenarios JSON file", item)
            try:
                from_json(dict(content))
            except InputError as e:
                raise where.error(key, f"{item}: {e.reason}", item) from None
            inputs.append(full)
            out.append(ScenarioSet(item, file=full, content=content, digest=digest))
            continue
        else:
            raise where.error(
                key, f"a table of dims, 'b=1,8 s=128' or a scenarios file (got {item!r})"
            )
        try:
            from_dim_specs(dims)
        except InputError as e:
            raise where.error(key, e.reason, item if isinstance(item, str) else None) from None
        out.append(ScenarioSet(" ".join(dims), dims=tuple(sorted(dims))))
    return out
