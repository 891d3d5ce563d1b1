"""``cpsched capture SCRIPT.py:FUNCTION``: write a JAX program's modules as files (with
``--torch``, the graphs Inductor schedules for a PyTorch program, see below).

For users who would rather not write Python against cpsched: ``FUNCTION`` in ``SCRIPT.py``
is called and returns ``(fn, example_args)`` or ``(fn, example_args, options)``, where
``options`` are ``from_jax`` keywords (``dims``, ``constraints``, ``jax.jit`` options such as
``donate_argnums``). The command writes

- ``OUT/NAME.hlo``: XLA's optimized HLO module (when the shapes are concrete);
- ``OUT/NAME.mlir``: the ``jax.export`` StableHLO module (symbolic where ``dims`` say).

With ``--dim s=128,512,2048`` it calls ``FUNCTION(s=128)``, ``FUNCTION(s=512)``, ... and
writes one optimized module per bucket (``NAME.s128.hlo``, ...): the input of
``cpsched info NAME.s128.hlo NAME.s512.hlo ...``, which fits one symbolic graph to them.

``OUT`` (default: the current folder) may exist and hold other files: the command keeps a
record of what it wrote there (``OUT/.cpsched-capture.json``, each file's SHA-256), so that
running it again replaces its own files, while a file it did not write, or one changed since
it wrote it, is never overwritten (exit 2 before anything is written).

``--torch``: ``FUNCTION()`` returns ``(module_or_fn, example_inputs)`` or with a third item
of ``from_torch`` options (``training``, ``dynamic_shapes``); every graph Inductor schedules
is written as ``OUT/NAME.PART.torch.json`` (``forward``, ``backward``), which every command
reads without torch.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys

from cpsched.core.errors import InputError
from cpsched.core.scenarios import from_dim_specs
from cpsched.readers import jax_frontend as jf
from cpsched.readers.hlo.buckets import fit_buckets
from cpsched.readers.torch_frontend import capture_records
from cpsched.writers import all_or_nothing, check_target, write_text

RECORD = ".cpsched-capture.json"


def add_parser(sub) -> None:
    q = sub.add_parser(
        "capture",
        help="write a JAX function's HLO / StableHLO files, or a torch program's graphs (--torch)",
    )
    q.add_argument(
        "target",
        metavar="SCRIPT.py:FUNCTION",
        help="FUNCTION() returns (fn, example_args[, from_jax options])",
    )
    q.add_argument(
        "-o",
        "--output",
        dest="output_dir",  # a folder: not one of the file outputs the common checks look at
        default=".",
        metavar="DIR",
        help="output folder, created if missing; files it wrote before are replaced, "
        "others never (default: the current one)",
    )
    q.add_argument(
        "--stage",
        choices=("both", "optimized", "stablehlo"),
        default="both",
        help="which module(s) to write (default: both where possible)",
    )
    q.add_argument(
        "--dim",
        action="append",
        default=[],
        metavar="NAME=V1,V2",
        help="call FUNCTION(NAME=V) per value and write one optimized module each (default: one call)",
    )
    q.add_argument("--name", help="file name stem (default: FUNCTION)")
    q.add_argument(
        "--torch",
        action="store_true",
        help="FUNCTION returns (module or function, example_inputs[, from_torch options]): "
        "write every graph Inductor schedules as NAME.PART.torch.json (default: a JAX program)",
    )
    q.set_defaults(fn=cmd_capture)


def load_function(target: str):
    if ":" not in target:
        raise InputError(f"{target}: expected SCRIPT.py:FUNCTION")
    path, func = target.rsplit(":", 1)
    if not os.path.isfile(path):
        raise InputError("no such file", path=path)
    spec = importlib.util.spec_from_file_location("_cpsched_capture_" + func, path)
    if spec is None or spec.loader is None:  # not a Python source file (no .py suffix)
        raise InputError("not a Python script: expected SCRIPT.py:FUNCTION", path=path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise InputError(
            f"syntax error: {e.msg}", path=path, line=e.lineno, column=e.offset
        ) from None
    except Exception as e:  # the user's script: report it in one line
        raise InputError(f"running the script failed: {type(e).__name__}: {e}", path=path) from None
    finally:
        sys.path.pop(0)
    fn = getattr(module, func, None)
    if not callable(fn):
        raise InputError(f"no function {func!r} in the script", path=path)
    return fn, path


def _unpack(result, where: str):
    if not isinstance(result, tuple) or len(result) not in (2, 3):
        raise InputError(f"{where} must return (fn, example_args) or (fn, example_args, options)")
    fn, args = result[0], result[1]
    opts = dict(result[2]) if len(result) == 3 else {}
    if not isinstance(args, (tuple, list)):
        args = (args,)
    return fn, tuple(args), opts


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_record(folder: str) -> dict[str, str]:
    """File name -> SHA-256 of what capture last wrote into ``folder`` (empty if none)."""
    try:
        with open(os.path.join(folder, RECORD)) as f:
            files = json.load(f).get("files", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


def check_folder(folder: str) -> None:
    """``-o DIR``: a folder (or a path where one can be made), never a file."""
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise InputError(
            "-o: not a directory (capture writes several files into a folder)", path=folder
        )


def write_outputs(folder: str, texts: dict[str, str], inputs: set[str]) -> list[str]:
    """Write ``texts`` (file name -> text) into ``folder``, all or none: every target is
    checked first. A file that exists is replaced only if capture wrote it there (it is in
    the folder's record, with the same SHA-256); the record is updated last."""
    record = _read_record(folder)
    data = {name: text.encode("utf-8") for name, text in texts.items()}
    paths = {name: os.path.join(folder, name) for name in texts}
    if os.path.isdir(folder):
        for name, path in paths.items():
            if os.path.abspath(path) in inputs:
                raise InputError("refusing to overwrite an input", path=path)
            if os.path.lexists(path):
                try:
                    with open(path, "rb") as f:
                        ours = record.get(name) == _sha256(f.read())
                except OSError:
                    ours = False
                if not ours:
                    raise InputError(
                        "exists and was not written by cpsched capture (or was changed "
                        "since); remove it or choose another -o",
                        path=path,
                    )
            check_target(path, inputs, "-o")
        check_target(os.path.join(folder, RECORD), inputs, "-o")
    else:
        try:
            os.makedirs(folder)
        except OSError as e:
            raise InputError(f"-o: cannot create the folder: {e.strerror}", path=folder) from None
    # the modules and the record appear together, or none of them
    with all_or_nothing():
        for name, path in paths.items():
            write_text(path, texts[name], inputs)
            record[name] = _sha256(data[name])
        write_text(
            os.path.join(folder, RECORD),
            json.dumps(
                {
                    "about": "files written here by cpsched capture (name: SHA-256); "
                    "it replaces only these",
                    "files": dict(sorted(record.items())),
                },
                indent=1,
            )
            + "\n",
            inputs,
        )
    return list(paths.values())


def cmd_capture_torch(args) -> int:
    """``cpsched capture --torch``: Inductor's scheduled graphs of a PyTorch program."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise InputError("capture --torch needs torch: pip install 'cpsched[torch]'") from None
    if args.dim or args.stage != "both":
        raise InputError("capture --torch: give symbolic dims as dynamic_shapes in the options")
    check_folder(args.output_dir)
    make, script = load_function(args.target)
    stem = args.name or args.target.rsplit(":", 1)[1]
    try:
        fn, fargs, opts = _unpack(make(), args.target)
    except InputError:
        raise
    except Exception as e:
        raise InputError(f"{args.target}() failed: {type(e).__name__}: {e}") from None
    known = {"training", "dynamic_shapes", "full_compile", "compile_options"}
    if set(opts) - known:
        raise InputError(
            f"{args.target}: unknown from_torch options {sorted(set(opts) - known)} "
            f"(known: {', '.join(sorted(known))})"
        )
    try:
        records = capture_records(fn, *fargs, **opts)
    except InputError:
        raise
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise InputError(f"torch.compile of {stem} failed: {type(e).__name__}: {first}") from None
    texts = {}
    for rec in records:
        rec["name"] = f"{stem}.{rec['part']}"
        texts[f"{rec['name']}.torch.json"] = json.dumps(rec, sort_keys=True) + "\n"
    for w in write_outputs(args.output_dir, texts, {os.path.abspath(script)}):
        print(w)
    return 0


def cmd_capture(args) -> int:
    if args.torch:
        return cmd_capture_torch(args)
    try:
        import jax  # noqa: F401
    except ImportError:
        raise InputError("capture needs jax: pip install 'cpsched[jax]'") from None
    check_folder(args.output_dir)
    make, script = load_function(args.target)
    stem = args.name or args.target.rsplit(":", 1)[1]
    inputs = {os.path.abspath(script)}
    texts: dict[str, str] = {}  # file name -> text, written together at the end

    def call(**kw):
        try:
            return make(**kw)
        except Exception as e:
            raise InputError(
                f"{args.target}({', '.join(f'{k}={v}' for k, v in kw.items())}) "
                f"failed: {type(e).__name__}: {e}"
            ) from None

    def compile_(fn, fargs, opts, what):
        try:
            return jf.optimized_hlo_text(
                fn, *fargs, **{k: v for k, v in opts.items() if k not in ("dims", "constraints")}
            )
        except InputError:
            raise
        except Exception as e:
            raise InputError(
                f"jax could not compile {what}: {type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else ''}"
            ) from None

    if args.dim:
        sc = from_dim_specs(args.dim)
        for row in sc.as_dicts():
            fn, fargs, opts = _unpack(call(**row), args.target)
            tag = ".".join(f"{k}{v}" for k, v in row.items())
            texts[f"{stem}.{tag}.hlo"] = compile_(fn, fargs, opts, f"{stem} at {row}")
    else:
        fn, fargs, opts = _unpack(call(), args.target)
        symbolic = bool(opts.get("dims")) or jf._is_symbolic(fargs)
        if args.stage in ("both", "stablehlo"):
            try:
                text = jf.stablehlo_text(fn, *fargs, **opts)
            except InputError:
                raise
            except Exception as e:
                raise InputError(
                    f"jax could not export {stem}: {type(e).__name__}: "
                    f"{str(e).splitlines()[0] if str(e) else ''}"
                ) from None
            texts[f"{stem}.mlir"] = text
        if args.stage == "optimized" or (args.stage == "both" and not symbolic):
            texts[f"{stem}.hlo"] = compile_(fn, fargs, opts, stem)
    for w in write_outputs(args.output_dir, texts, inputs):
        print(w)
    return 0


def info_buckets(args, cmd_info) -> int:
    """``cpsched info a.s128.hlo a.s512.hlo ...``: fit one symbolic graph to the modules and
    show it (or the instructions that differ, exit 2)."""
    paths = [args.input] + list(args.more)
    dim = values = None
    if args.dim and len(args.dim) == 1:
        name, _, vals = args.dim[0].partition("=")
        vs = [v for v in vals.split(",") if v.strip()]
        if len(vs) == len(paths):
            dim, values = name.strip(), [int(v) for v in vs]
    res = fit_buckets(paths, dim, values)
    head = f"{len(paths)} modules, {res.dim} = {', '.join(map(str, res.values))}: "
    if not res.ok:
        lines = [head + f"{len(res.differences)} difference(s), no common graph:"]
        lines += [f"  {ln}" for ln in res.summary()]
        if len(res.differences) > 5:
            lines.append("  (--json lists them all)")
        if args.json:
            import json

            print(
                json.dumps(
                    {
                        "inputs": paths,
                        "dim": res.dim,
                        "values": res.values,
                        "differences": res.differences,
                        "renamed_constants": res.renamed,
                    },
                    indent=1,
                )
            )
        else:
            print("\n".join(lines))
        return 2
    print(
        head + f"one symbolic graph; {res.fitted} sizes fitted as polynomials in {res.dim} "
        f"({res.checked} checked on a module not used to fit them), {res.constant} constant"
        + (
            f"; {len(res.renamed)} constant(s) that differ in value matched by shape and users "
            f"({'; '.join(res.renamed[:3])}{'; ...' if len(res.renamed) > 3 else ''})"
            if res.renamed
            else ""
        )
        + (
            ""
            if res.orders_agree
            else "; the modules' schedules differ (the first one's order is kept)"
        ),
        file=sys.stderr if args.json else sys.stdout,
    )
    args.graph = res.graph
    args.more = []
    if not args.dim and not args.scenarios:
        args.dim = [f"{res.dim}=" + ",".join(map(str, res.values))]
    return cmd_info(args)


__all__ = ["add_parser", "cmd_capture", "load_function", "info_buckets"]
