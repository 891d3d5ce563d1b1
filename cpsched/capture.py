"""``cpsched capture SCRIPT.py:FUNCTION``: write a JAX program's modules as files (with
``--torch``, the graphs Inductor schedules for a PyTorch program, see the end).

For users who would rather not write Python against cpsched: ``FUNCTION`` in ``SCRIPT.py``
is called and returns ``(fn, example_args)`` or ``(fn, example_args, options)``, where
``options`` are ``from_jax`` keywords (``dims``, ``constraints``, ``jax.jit`` options such as
``donate_argnums``). The command writes

- ``OUT/NAME.hlo``: XLA's optimized HLO module (when the shapes are concrete);
- ``OUT/NAME.mlir``: the ``jax.export`` StableHLO module (symbolic where ``dims`` say).

With ``--dim s=128,512,2048`` it calls ``FUNCTION(s=128)``, ``FUNCTION(s=512)``, ... and
writes one optimized module per bucket (``NAME.s128.hlo``, ...): the input of
``cpsched info NAME.s128.hlo NAME.s512.hlo ...``, which fits one symbolic graph to them.

``--torch``: ``FUNCTION()`` returns ``(module_or_fn, example_inputs)`` or with a third item
of ``from_torch`` options (``training``, ``dynamic_shapes``); every graph Inductor schedules
is written as ``OUT/NAME.PART.torch.json.gz`` (``forward``, ``backward``), which every
command reads without torch.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from cpsched.core.errors import InputError
from cpsched.core.scenarios import from_dim_specs
from cpsched.readers import jax_frontend as jf
from cpsched.readers.hlo.buckets import fit_buckets
from cpsched.readers.torch_frontend import capture_records, write_records
from cpsched.writers import write_text


def add_parser(sub) -> None:
    q = sub.add_parser("capture", help="write a JAX function's optimized HLO / StableHLO files")
    q.add_argument(
        "target",
        metavar="SCRIPT.py:FUNCTION",
        help="FUNCTION() returns (fn, example_args[, from_jax options])",
    )
    q.add_argument(
        "-o",
        "--output",
        default=".",
        metavar="DIR",
        help="output folder (default: the current one)",
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
        "write every graph Inductor schedules as NAME.PART.torch.json.gz (default: a JAX program)",
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


def _write(path: str, text: str, inputs: set[str]) -> None:
    # atomic, never over an input, a link or a device; with the command's other files
    write_text(path, text, tuple(inputs))


def cmd_capture_torch(args) -> int:
    """``cpsched capture --torch``: Inductor's scheduled graphs of a PyTorch program."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise InputError("capture --torch needs torch: pip install 'cpsched[torch]'") from None
    if args.dim or args.stage != "both":
        raise InputError("capture --torch: give symbolic dims as dynamic_shapes in the options")
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
    for rec in records:
        rec["name"] = f"{stem}.{rec['part']}"
    out = os.path.abspath(args.output)
    if os.path.abspath(script) in {
        os.path.join(out, f"{stem}.{r['part']}.torch.json.gz") for r in records
    }:
        raise InputError("refusing to overwrite an input", path=script)
    for path in write_records(records, args.output, stem):
        print(path)
    return 0


def cmd_capture(args) -> int:
    if getattr(args, "torch", False):
        return cmd_capture_torch(args)
    try:
        import jax  # noqa: F401
    except ImportError:
        raise InputError("capture needs jax: pip install 'cpsched[jax]'") from None
    make, script = load_function(args.target)
    stem = args.name or args.target.rsplit(":", 1)[1]
    os.makedirs(args.output, exist_ok=True)
    inputs = {os.path.abspath(script)}
    written: list[str] = []

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
            out = os.path.join(args.output, f"{stem}.{tag}.hlo")
            _write(out, compile_(fn, fargs, opts, f"{stem} at {row}"), inputs)
            written.append(out)
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
            out = os.path.join(args.output, f"{stem}.mlir")
            _write(out, text, inputs)
            written.append(out)
        if args.stage == "optimized" or (args.stage == "both" and not symbolic):
            out = os.path.join(args.output, f"{stem}.hlo")
            _write(out, compile_(fn, fargs, opts, stem), inputs)
            written.append(out)
    for w in written:
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
        lines = [head + f"{len(res.differences)} instruction(s) differ, no common graph:"]
        lines += [f"  {d}" for d in res.differences[:40]]
        if len(res.differences) > 40:
            lines.append(f"  ... and {len(res.differences) - 40} more")
        if args.json:
            import json

            print(
                json.dumps(
                    {
                        "inputs": paths,
                        "dim": res.dim,
                        "values": res.values,
                        "differences": res.differences,
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
