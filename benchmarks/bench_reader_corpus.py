"""How much real HLO text the reader takes: modules found, read, rejected by design, failed.

    python benchmarks/bench_reader_corpus.py PATH [PATH ...] [--rev REV]
        [--oracle-python .venv-jax/bin/python] [--dump DIR] [--out FILE.md] [--show N]

Each PATH is one of
- a folder: every ``*.hlo`` / ``*.hlo.gz`` / ``*.hlo.txt`` under it (a file holding several
  ``HloModule`` texts counts each), and, when it is an XLA checkout, the modules below;
- an XLA checkout (a work tree with ``xla/``, or a bare git directory, read at ``--rev``):
  every ``*.hlo`` file, and every module written in a C++ raw string (``R"(...)"``,
  ``R"hlo(...)hlo"``) in ``xla/service/**/*_test.cc`` and ``xla/hlo/**/*_test.cc`` (other
  folders with ``--tests-under``);
- a single file.

A module starts at ``HloModule`` and runs to the next one (or the end of its file/string).
Each is read twice by cpsched: the parser alone (``parse_hlo_text``), then the conversion of
every computation into a graph (``module_graphs``). A module is *rejected by design* when
- it is a template, not HLO: ``$0`` / ``$name`` (absl::Substitute), ``%s`` / ``%d``
  (StrFormat), ``{{...}}``, ``<<F8E4M3>>`` or upper-case element types (``TYPE[2]``)
  outside strings;
- it is a FileCheck pattern (``CHECK`` lines, ``[[...]]`` captures) rather than a module;
- XLA's own parser rejects it: with ``--oracle-python`` (an interpreter with jaxlib), each
  module goes through ``jaxlib._hlo.hlo_module_from_text``, and its error is the reason.
Every other module that cpsched does not read is a *failure*, listed with its first error.
Modules XLA rejects but cpsched reads are counted too (cpsched is more lenient by design:
unknown attributes are skipped).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cpsched.core.errors import CpschedError, InputError  # noqa: E402
from cpsched.readers.hlo.convert import module_graphs  # noqa: E402
from cpsched.readers.hlo.parser import gc_paused, parse_hlo_text  # noqa: E402

TEST_DIRS = ("xla/service/", "xla/hlo/")
NOTES_MARKER = "<!-- notes: kept when the table above is regenerated -->"
RAW_STRING_RE = re.compile(r'R"([A-Za-z0-9_]{0,16})\((.*?)\)\1"', re.S)
MODULE_START_RE = re.compile(r"^[ \t]*HloModule\b", re.M)
HLO_SUFFIXES = (".hlo", ".hlo.gz", ".hlo.txt")
# placeholders of absl::Substitute / StrFormat / hand-rolled templates, outside strings
_STRINGS_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"' + r"|'(?:[^'\\\n]|\\.)*'")
_TEMPLATE_RE = re.compile(r"\$[A-Za-z0-9_{]|%[sdu]\b|%\{|\{\{\s*[A-Za-z_]|<<[A-Za-z0-9_]+>>"
                          r"|(?<![\w.%-])[A-Z][A-Z0-9_]*\[")   # the last: ``TYPE[2,3]``
_FILECHECK_RE = re.compile(r"^\s*(?://\s*)?(?:CHECK|[A-Z]+-(?:CHECK|NEXT|SAME|DAG|NOT))"
                           r"|\[\[[A-Za-z_]", re.M)


# ---------------------------------------------------------------------------------------------
# Finding modules

class Source:
    """Lists and reads files of a folder, a work tree or a bare git directory."""

    def __init__(self, root: Path, rev: str):
        self.root = root
        self.git = (root / "objects").is_dir() and (root / "HEAD").is_file()
        self.rev = rev

    def files(self) -> list[str]:
        if self.git:
            out = subprocess.run(["git", f"--git-dir={self.root}", "ls-tree", "-r", "--name-only",
                                  self.rev], check=True, capture_output=True, text=True).stdout
            return out.splitlines()
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file())

    def read_many(self, paths: list[str]) -> dict[str, str]:
        if not self.git:
            return {p: _read_text(self.root / p) for p in paths}
        spec = "".join(f"{self.rev}:{p}\n" for p in paths)
        proc = subprocess.run(["git", f"--git-dir={self.root}", "cat-file", "--batch"],
                              input=spec.encode(), capture_output=True, check=True)
        data = proc.stdout
        out = {}
        pos = 0
        for p in paths:
            nl = data.index(b"\n", pos)
            header = data[pos:nl].split()
            pos = nl + 1
            if len(header) < 3 or header[1] == b"missing":
                continue
            size = int(header[2])
            blob = data[pos:pos + size]
            pos += size + 1
            if p.endswith(".gz"):
                blob = gzip.decompress(blob)
            out[p] = blob.decode("utf-8", errors="replace")
        return out


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", errors="replace")


def split_modules(text: str) -> list[tuple[int, str]]:
    """(line offset, text) of each ``HloModule ...`` in ``text`` (one written inside a string,
    as in ``origin_recovery_table``, belongs to the module around it)."""
    strings = [m.span() for m in re.finditer(r'"(?:[^"\\]|\\.)*"', text)] \
        if text.count("HloModule") > 1 else []
    starts = [m.start() for m in MODULE_START_RE.finditer(text)
              if not any(a < m.start() < b for a, b in strings)]
    out = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(text)
        out.append((text.count("\n", 0, s), text[s:e]))
    return out


def display(path: str) -> str:
    """A path as the results file shows it: repo-relative, ``../shared/...``, or a name."""
    p = Path(path).resolve()
    if p == REPO or REPO in p.parents:
        return str(p.relative_to(REPO)) or "."
    if "shared" in p.parts:
        return "../shared/" + "/".join(p.parts[p.parts.index("shared") + 1:])
    return "XLA_CHECKOUT" if (p / "xla").is_dir() or (p / "objects").is_dir() else p.name


def find_modules(path: Path, rev: str, test_dirs: tuple[str, ...] = TEST_DIRS
                 ) -> list[tuple[str, str, str]]:
    """(kind, where, module text) for every module under ``path``; kind is ``*.hlo files``
    or ``*_test.cc raw strings``."""
    files_kind = "*.hlo files"
    tests_kind = "*_test.cc raw strings"
    if path.is_file():
        return [(files_kind, f"{path.name}:{line + 1}", t)
                for line, t in split_modules(_read_text(path))]
    src = Source(path, rev)
    files = src.files()
    is_xla = any(f.startswith("xla/") for f in files[:5000])
    hlo = [f for f in files if f.endswith(HLO_SUFFIXES)]
    tests = [f for f in files if is_xla and f.endswith("_test.cc") and f.startswith(test_dirs)]
    out = []
    texts = src.read_many(hlo + tests)
    for f in hlo:
        for line, t in split_modules(texts.get(f, "")):
            out.append((files_kind, f"{f}:{line + 1}", t))
    for f in tests:
        text = texts.get(f)
        if text is None:
            continue
        for m in RAW_STRING_RE.finditer(text):
            body = m.group(2)
            if "HloModule" not in body:
                continue
            base = text.count("\n", 0, m.start(2))
            for line, t in split_modules(body):
                out.append((tests_kind, f"{f}:{base + line + 1}", t))
    return out


def design_reason(text: str) -> str | None:
    """Why a text is not an HLO module at all (a template or a FileCheck pattern), or None."""
    bare = _STRINGS_RE.sub('""', text)
    bare = re.sub(r"/\*.*?\*/|//[^\n]*", " ", bare, flags=re.S)
    if _FILECHECK_RE.search(text) and not _FILECHECK_RE.search(bare):
        pass  # CHECK lines only in comments: a module with FileCheck notes, still a module
    elif _FILECHECK_RE.search(bare):
        return "FileCheck pattern"
    m = _TEMPLATE_RE.search(bare)
    if m:
        return f"template placeholder {m.group()!r}"
    return None


# ---------------------------------------------------------------------------------------------
# XLA's own parser, in another interpreter

_ORACLE = r"""
import json, sys
import jaxlib._hlo as h
for line in sys.stdin:
    text = json.loads(line)
    try:
        h.hlo_module_from_text(text)
        print(json.dumps(None), flush=True)
    except Exception as e:
        msg = str(e)
        err = [l for l in msg.splitlines() if "error:" in l]
        print(json.dumps((err[0] if err else msg.splitlines()[-1] if msg else "?")[:300]),
              flush=True)
"""


def oracle(python: str, texts: list[str]) -> list[str | None]:
    """XLA's parser verdict per text: None (accepted) or its first error line. Some texts make
    XLA's parser crash (a CHECK failure, a segfault); they count as rejected, and the run
    resumes after them."""
    verdicts: list[str | None] = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "oracle.py"
        script.write_text(_ORACLE)
        while len(verdicts) < len(texts):
            rest = texts[len(verdicts):]
            inp = "".join(json.dumps(t) + "\n" for t in rest)
            proc = subprocess.run([python, str(script)], input=inp, capture_output=True,
                                  text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
            verdicts += [json.loads(x) for x in proc.stdout.splitlines()]
            if len(verdicts) < len(texts):
                if proc.returncode == 0:
                    sys.exit(f"XLA parser run failed ({len(verdicts)} of {len(texts)} read): "
                             f"{proc.stderr[-2000:]}")
                check = re.search(r"Check failed: ([^\n]*)", proc.stderr)
                verdicts.append("error: XLA's parser crashes: " + (
                    check.group(1)[:200] if check else f"exit status {proc.returncode}"))
    return verdicts


def _xla_reason(err: str) -> str:
    """An XLA error line without its position and names, to group modules by reason."""
    err = re.sub(r"^.*?error:\s*", "", err)
    err = re.sub(r'"[^"]*"', '"..."', err)
    err = re.sub(r"\d+", "N", err)
    return err[:90]


# ---------------------------------------------------------------------------------------------

def read_one(text: str) -> tuple[str, str | None]:
    """('ok' | 'parse' | 'convert', first error)."""
    try:
        with gc_paused():
            m = parse_hlo_text(text, "module")
    except InputError as e:
        return "parse", str(e)
    except Exception as e:  # a crash is a failure too, never a rejection
        return "parse", f"crash: {type(e).__name__}: {e}"
    try:
        with gc_paused():
            module_graphs(m)
    except CpschedError as e:
        return "convert", str(e)
    except Exception as e:
        return "convert", f"crash: {type(e).__name__}: {e}"
    return "ok", None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--rev", default="HEAD", help="revision of a bare git directory")
    ap.add_argument("--tests-under", default=",".join(TEST_DIRS),
                    help="comma-separated folders of an XLA checkout whose *_test.cc files "
                         "are searched (default: %(default)s; 'xla/' for all)")
    ap.add_argument("--oracle-python", help="an interpreter with jaxlib: XLA's parser decides "
                                            "which modules XLA itself rejects")
    ap.add_argument("--dump", help="write every module found to this folder (for inspection)")
    ap.add_argument("--out", help="write the results table (markdown) here")
    ap.add_argument("--show", type=int, default=40, help="failures listed in full")
    args = ap.parse_args()

    found: list[tuple[str, str, str]] = []   # (path argument, where, text)
    for p in args.paths:
        for kind, where, text in find_modules(Path(p), args.rev,
                                              tuple(args.tests_under.split(","))):
            found.append((f"{display(p)}: {kind}", where, text))
    if args.dump:
        d = Path(args.dump)
        d.mkdir(parents=True, exist_ok=True)
        for k, (_, where, text) in enumerate(found):
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", where)[-120:]
            (d / f"{k:05d}_{safe}.hlo").write_text(text)
    t0 = time.perf_counter()
    results = [read_one(text) for _, _, text in found]
    t_read = time.perf_counter() - t0
    xla = oracle(args.oracle_python, [t for _, _, t in found]) if args.oracle_python else None

    rows = []           # (where, stage, error)
    design = Counter()
    xla_rejects = Counter()
    lenient = 0
    ok = 0
    per_source = Counter()
    for k, ((src, where, text), (stage, err)) in enumerate(zip(found, results)):
        per_source[src, "found"] += 1
        reason = design_reason(text)
        xerr = xla[k] if xla is not None else None
        if stage == "ok":
            ok += 1
            per_source[src, "ok"] += 1
            if reason is None and xerr is not None:
                lenient += 1
            continue
        if reason is not None:
            design[reason.split(" '")[0]] += 1
            per_source[src, "design"] += 1
        elif xerr is not None:
            xla_rejects[_xla_reason(xerr)] += 1
            per_source[src, "design"] += 1
        else:
            rows.append((where, stage, err))
            per_source[src, "fail"] += 1
    n = len(found)
    lines = ["# Reader coverage on real HLO text", "",
             "Command: `python benchmarks/bench_reader_corpus.py " + " ".join(
                 display(a) if Path(a).exists() and not a.startswith("-") and "python" not in a
                 else a for a in sys.argv[1:]) + "`", "",
             f"Python {platform.python_version()}; cpsched parser + conversion of every "
             f"computation; {t_read:.1f} s to read all modules.", "",
             "| source | modules | read | rejected by design | failures |", "|---|---|---|---|---|"]
    for src in dict.fromkeys(s for s, _, _ in found):
        lines.append(f"| {src} | {per_source[src, 'found']} | {per_source[src, 'ok']} | "
                     f"{per_source[src, 'design']} | {per_source[src, 'fail']} |")
    lines.append(f"| **all** | {n} | {ok} | {n - ok - len(rows)} | {len(rows)} |")
    lines += ["", "Rejected by design (not HLO modules, or text XLA's own parser rejects):", ""]
    for r, c in design.most_common():
        lines.append(f"- {c}: {r}")
    if xla is None:
        lines.append("- (XLA's parser not run: pass --oracle-python to tell XLA-rejected text "
                     "from failures)")
    for r, c in xla_rejects.most_common():
        lines.append(f"- {c}: XLA rejects too: {r}")
    if xla is not None:
        lines += ["", f"Read by cpsched although XLA's parser rejects them (unknown attributes "
                      f"and other leniency): {lenient}."]
    lines += ["", f"Failures ({len(rows)}), first error each:", ""]
    for where, stage, err in rows[:args.show]:
        lines.append(f"- `{where}` ({stage}): {err}")
    if len(rows) > args.show:
        lines.append(f"- ... {len(rows) - args.show} more")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        out = Path(args.out)
        notes = ""    # hand-written notes below the marker survive a re-run
        if out.exists() and NOTES_MARKER in out.read_text():
            notes = out.read_text().split(NOTES_MARKER, 1)[1]
        out.write_text(text + "\n" + NOTES_MARKER + notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
