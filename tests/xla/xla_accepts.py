"""Does XLA accept these HLO modules? Runs XLA's own parser (through jaxlib) on each file.

    python tests/xla/xla_accepts.py FILE...      # one JSON line per file, exit 1 if any fails

Needs jax/jaxlib (``make jax-env``). What it checks, per file:

1. XLA's HLO parser (``jaxlib._hlo.hlo_module_from_text``, which is XLA's
   ``ParseAndReturnUnverifiedModule``) reads the text: syntax, opcodes, attributes, operand
   names, each computation's declared shape against its root, async ops against their
   wrapped computations.
2. The schedule: a module marked ``is_scheduled=true`` gets a schedule from its text order,
   checked by XLA's ``HloSchedule::Verify`` (a sequence for every non-fusion computation,
   holding each of its instructions once, every operand and control predecessor before its
   user). The parser does that check with ``CHECK_OK``, which aborts the process on a bad
   order, so every file runs in a child process and an abort is reported as a rejection
   with XLA's message. The check is then run again, explicitly, through
   ``HloSchedule.verify``.
3. Async pairs, as XLA's verifier requires them: every ``*-start`` / ``async-start`` has
   exactly one user, its ``*-done`` / ``async-done`` (or an ``async-update``), which reads
   nothing else, and the start's and done's shapes follow XLA's shape rules (all-reduce-start:
   its operands'; all-gather-start: (operands, result); collective-permute-start: (operand,
   result, contexts); copy-start: (destination, source, u32[]); async-start: ((operands),
   result, contexts); the done: the result), layouts aside. (jaxlib 0.10.2 offers no call
   that runs XLA's ``HloVerifier`` on a given module: the parser is the unverified one, and
   its compile entry points take StableHLO only, so a module would reach the compiler's
   verifier only after a conversion that rebuilds it; this check is the part of the
   verifier that concerns what cpsched adds.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

_STARTS = {"all-reduce-start", "all-gather-start", "collective-permute-start", "copy-start",
           "async-start", "send", "recv"}
_DONES = {"all-reduce-done", "all-gather-done", "collective-permute-done", "copy-done",
          "async-done", "async-update", "send-done", "recv-done"}


def _opcode(ins) -> str:
    return str(ins.opcode).split(".")[-1]


def _kebab(name: str) -> str:
    # HloOpcode enum names (kAllReduceStart) -> XLA's opcode strings (all-reduce-start)
    name = name[1:] if name.startswith("k") and name[1:2].isupper() else name
    return re.sub(r"(?<!^)([A-Z])", r"-\1", name).lower()


def _shape(ins) -> str:
    """An instruction's result shape as XLA prints it, layouts left out."""
    text = ins.to_string()
    i = text.index(" = ") + 3
    if text[i] == "(":
        depth, j = 0, i
        while True:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
    else:
        j = text.index(" ", i)
    return re.sub(r"\{[^{}]*\}|/\*.*?\*/", "", text[i:j])


def _elements(shape: str) -> list[str]:
    """The top-level elements of a tuple shape (the shape itself if it is no tuple)."""
    if not shape.startswith("("):
        return [shape]
    out, depth, cur = [], 0, ""
    for c in shape[1:-1]:
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(c, 0)
        cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def _pack(shapes: list[str]) -> str:
    return shapes[0] if len(shapes) == 1 else "(" + ", ".join(shapes) + ")"


def _pair_shapes(start, done, op: str) -> str | None:
    """XLA's shape rules for an async pair (ShapeInference / ShapeVerifier), layouts
    aside; returns what is wrong, or None."""
    s, d = _shape(start), _shape(done)
    ops = [_shape(o) for o in start.operands()]
    el = _elements(s)
    if op == "all-reduce-start":
        want = {"start": _pack(ops), "done": s}
    elif op == "all-gather-start":
        if len(el) != 2 or el[0] != _pack(ops):
            return f"{start.name}: all-gather-start shape {s} is not (operands, result)"
        want = {"done": el[1]}
    elif op == "collective-permute-start":
        if len(el) < 2 or (len(ops) == 1 and el[0] != ops[0]):
            return f"{start.name}: collective-permute-start shape {s} is not (operand, result, ...)"
        want = {"done": el[1]}
    elif op == "copy-start":
        if len(el) != 3 or el[1] != ops[0]:
            return f"{start.name}: copy-start shape {s} is not (destination, source, u32[])"
        want = {"done": el[0]}
    else:   # async-start: ((operands), result, context...)
        if len(el) < 2 or el[0] != "(" + ", ".join(ops) + ")":
            return f"{start.name}: async-start shape {s} is not ((operands), result, ...)"
        want = {"done": el[1]}
    if "start" in want and s != want["start"]:
        return f"{start.name}: shape {s}, but its operands give {want['start']}"
    if d != want["done"]:
        return f"{done.name}: shape {d}, but its start {start.name} gives {want['done']}"
    return None


def check_text(text: str) -> dict:
    """Check one module in this process (an invalid schedule aborts it: see the module
    docstring). Returns ``{"ok": bool, "error": str, ...}``."""
    from jaxlib import _hlo
    try:
        module = _hlo.hlo_module_from_text(text)
    except Exception as e:  # XLA's parser error, one message
        return {"ok": False, "stage": "parse", "error": str(e).strip().splitlines()[0:3]}
    header = text.split("\n", 1)[0] if text.lstrip().startswith("HloModule") else ""
    scheduled = "is_scheduled=true" in header
    info = {"ok": True, "scheduled": scheduled, "name": module.name,
            "computations": len(module.computations())}
    if scheduled:
        try:
            module.schedule().verify()
        except Exception as e:
            return {**info, "ok": False, "stage": "schedule", "error": str(e).strip()}
    pairs = 0
    for comp in module.computations():
        for ins in comp.instructions():
            op = _kebab(_opcode(ins))
            if op not in _STARTS or op in ("send", "recv"):
                continue
            users = list(ins.users())
            if len(users) != 1 or _kebab(_opcode(users[0])) not in _DONES:
                return {**info, "ok": False, "stage": "async",
                        "error": f"{ins.name}: {op} must have exactly one user, its done; "
                                 f"has {[u.name for u in users]}"}
            if [o.name for o in users[0].operands()] != [ins.name]:
                return {**info, "ok": False, "stage": "async",
                        "error": f"{users[0].name} must read only {ins.name}"}
            if _kebab(_opcode(users[0])) != "async-update":
                wrong = _pair_shapes(ins, users[0], op)
                if wrong:
                    return {**info, "ok": False, "stage": "async", "error": wrong}
            pairs += 1
    info["async_pairs"] = pairs
    return info


def _worker(paths: list[str]) -> None:
    for path in paths:
        print(json.dumps({"file": path, "started": True}), flush=True)
        with open(path) as f:
            text = f.read()
        print(json.dumps({"file": path, **check_text(text)}), flush=True)


def check_files(paths: list[str], python: str | None = None) -> list[dict]:
    """Check each file in child processes; a child that dies (XLA's ``CHECK`` failed) marks
    the file it was on as rejected with the last lines it wrote, and the rest go on."""
    results: dict[str, dict] = {}
    todo = list(paths)
    env = dict(os.environ, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="1")
    while todo:
        proc = subprocess.run([python or sys.executable, __file__, "--worker", *todo],
                              capture_output=True, text=True, env=env)
        current = None
        for line in proc.stdout.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.pop("started", False):
                current = rec["file"]
            else:
                results[rec["file"]] = rec
                current = None
        if proc.returncode == 0 and current is None:
            break
        if current is None:     # died before the first file
            current = todo[0]
        tail = [ln for ln in proc.stderr.splitlines()
                if "Check failed" in ln or "RET_CHECK" in ln or "error" in ln.lower()]
        results[current] = {"file": current, "ok": False, "stage": "abort",
                            "error": (tail[-1] if tail else proc.stderr.strip()[-400:])
                            + f" (XLA aborted the process, exit {proc.returncode})"}
        todo = todo[todo.index(current) + 1:]
    return [results[p] for p in paths if p in results]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--worker"]:
        _worker(argv[1:])
        return 0
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    bad = 0
    for rec in check_files(argv):
        print(json.dumps(rec))
        bad += not rec["ok"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
