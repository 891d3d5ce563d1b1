"""The package version (one place; ``cpsched.__version__`` re-exports it), and the line
``cpsched --version`` prints. Standard library only: the command line answers
``--version`` before importing anything else."""

__version__ = "0.1.0"


def ortools_version() -> str:
    """The installed OR-Tools release, read from its metadata (no import of OR-Tools)."""
    try:
        from importlib.metadata import version

        return version("ortools")
    except Exception:  # not installed as a distribution (vendored builds)
        return "unknown"


def version_line() -> str:
    return f"cpsched {__version__} (ortools {ortools_version()})"
