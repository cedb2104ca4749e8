"""Finding the team a command works on: `path/to/file.py:team` or `package.module:team`.

The same resolution serves every command that takes a TEAM (`run`, `chat`, `check`,
`graph`, and `serve`): the object named may be a `Team`, a `Runner`, or a function of no
arguments that returns one.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..core.team import Team
from ..errors import HandoffsError

if TYPE_CHECKING:
    from ..runtime.runner import Runner

BUILTIN = "handoffs.examples.support:build_team"
"""The team commands use when none is given: the support team of `handoffs demo`."""

DEFAULT_NAMES = ("team", "runner", "build_team", "create_team")
"""Attributes looked for, in this order, when a spec names no object (`app.py`)."""


def load_target(spec: str | None) -> Team | Runner:
    """The `Team` or `Runner` that `spec` names; None means the built-in support team.

    `spec` is `FILE.py[:NAME]` or `MODULE[:NAME]`; `NAME` may be dotted (`app:teams.support`).
    Without `NAME`, the first of `team`, `runner`, `build_team`, `create_team` the module
    defines is used. A function of no arguments is called. A file's folder is put first on
    `sys.path` while it loads (as `python FILE.py` does), so it can import its neighbours;
    modules are looked up from the working directory too.

    Raises `HandoffsError` (code `invalid_target`) with what to fix when the spec names no
    module, no object, or an object that is not a team; `load_failed` when the module (or
    the function) raised, with the file and line where it did (the exception is the
    error's `__cause__`). A `HandoffsError` the team raised itself (a `TeamError` from
    `Team(...)`) passes through with that line added.
    """
    spec = spec or BUILTIN
    where, name = _split(spec)
    module = _load_file(where) if _is_file(where) else _load_module(where)
    value = _attribute(module, name, spec)
    if callable(value) and not isinstance(value, Team) and not _is_runner(value):
        import inspect

        try:
            inspect.signature(value).bind()
        except TypeError as exc:
            raise HandoffsError(
                f"{spec}: {name or 'it'}() cannot be called with no arguments ({exc}). A "
                "TEAM that is a function must take no arguments and return a Team or a "
                "Runner.", code="invalid_target") from exc
        except ValueError:
            pass  # no signature to read (a builtin): just call it
        try:
            value = value()
        except Exception as exc:
            raise failed(f"{spec}: calling {name or 'it'}()", exc) from exc
    if isinstance(value, Team) or _is_runner(value):
        result: Team | Runner = value
        return result
    raise HandoffsError(
        f"{spec} names a value of type {type(value).__name__}, not a Team or a Runner. "
        "Point TEAM at a "
        "Team, a Runner, or a function of no arguments that returns one.",
        code="invalid_target")


def team_of(target: Team | Runner) -> Team:
    """The team itself, whether a `Team` or a `Runner` was loaded."""
    return target if isinstance(target, Team) else target.team


def _split(spec: str) -> tuple[str, str | None]:
    where, sep, name = spec.rpartition(":")
    # "C:\teams\app.py" or a bare "app.py": the colon (if any) is not a NAME separator.
    if not sep or not name or any(c in name for c in "/\\") or name.endswith(".py"):
        return spec, None
    return where, name


def _is_file(where: str) -> bool:
    return where.endswith(".py") or os.sep in where or "/" in where


def _load_file(where: str) -> ModuleType:
    path = Path(where).expanduser().resolve()
    if not path.is_file():
        raise HandoffsError(f"No file {where!r} (looked at {path}). TEAM is FILE.py:NAME "
                            "or package.module:NAME.", code="invalid_target")
    module_name = f"_handoffs_team_{abs(hash(str(path)))}"
    loaded = sys.modules.get(module_name)
    if loaded is not None:
        return loaded
    import_spec = importlib.util.spec_from_file_location(module_name, path)
    if import_spec is None or import_spec.loader is None:
        raise HandoffsError(f"Cannot load {where!r} as Python.", code="invalid_target")
    module = importlib.util.module_from_spec(import_spec)
    sys.modules[module_name] = module
    folder = str(path.parent)
    sys.path.insert(0, folder)
    try:
        import_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise failed(f"Loading {where}", exc) from exc
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return module


def _load_module(where: str) -> ModuleType:
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as exc:
        if exc.name is not None and where.startswith(exc.name):
            raise HandoffsError(
                f"No module {where!r} (from the working directory {os.getcwd()}). TEAM is "
                "FILE.py:NAME or package.module:NAME.", code="invalid_target") from exc
        raise failed(f"Importing {where}", exc) from exc
    except Exception as exc:
        raise failed(f"Importing {where}", exc) from exc


def _attribute(module: ModuleType, name: str | None, spec: str) -> Any:
    if name is None:
        for candidate in DEFAULT_NAMES:
            if hasattr(module, candidate):
                return getattr(module, candidate)
        raise HandoffsError(
            f"{spec} defines none of {', '.join(DEFAULT_NAMES)}; name the object: "
            f"{spec}:NAME{_candidates(module)}.", code="invalid_target")
    value: Any = module
    for part in name.split("."):
        if not hasattr(value, part):
            raise HandoffsError(f"{spec}: there is no {name!r} in {_shown(module)}"
                                f"{_candidates(module)}.", code="invalid_target")
        value = getattr(value, part)
    return value


def failed(what: str, exc: BaseException) -> HandoffsError:
    """The error for a user's module or function that raised while loading: what failed,
    the exception, and the line of the user's code it came from (`load_failed`); a
    `HandoffsError` keeps its own code and gets the line added."""
    where = _user_frame(exc)
    at = f" (at {where})" if where else ""
    if isinstance(exc, HandoffsError):
        return HandoffsError(f"{exc}{at}", code=exc.code)
    said = exc.msg if isinstance(exc, SyntaxError) else exc  # its str() has the line
    return HandoffsError(f"{what} failed: {type(exc).__name__}: {said}{at}. Run with "
                         "--traceback for the whole traceback.", code="load_failed")


def _user_frame(exc: BaseException) -> str:
    """`file.py, line N: the line` of the deepest frame of the traceback that is the
    user's code: not the standard library, an installed package, or handoffs itself."""
    import linecache
    import sysconfig
    import traceback

    skip = tuple({os.path.realpath(sysconfig.get_path(k))
                  for k in ("stdlib", "platstdlib", "purelib", "platlib")}
                 | {os.path.realpath(os.path.dirname(os.path.dirname(__file__)))})
    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        line = (exc.text or linecache.getline(exc.filename, exc.lineno)).strip()
        return f"{_relative(exc.filename)}, line {exc.lineno}: {line}"
    for frame in reversed(frames):
        name = frame.filename
        if name.startswith("<") or os.path.realpath(name).startswith(skip):
            continue
        return f"{_relative(name)}, line {frame.lineno}: {(frame.line or '').strip()}"
    return ""


def _relative(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith("..") else rel


def _shown(module: ModuleType) -> str:
    """A module as the user named it: its file for one loaded by path."""
    file = getattr(module, "__file__", None)
    if module.__name__.startswith("_handoffs_team_") and file:
        return _relative(file)
    return module.__name__


def _candidates(module: ModuleType) -> str:
    names = [k for k, v in vars(module).items()
             if not k.startswith("_") and (isinstance(v, Team) or _is_runner(v))]
    return f" (teams and runners there: {', '.join(names)})" if names else ""


def _is_runner(value: Any) -> bool:
    # Runner's module pulls in asyncio; a check by name keeps loading light and exact.
    runner_type = sys.modules.get("handoffs.runtime.runner")
    return runner_type is not None and isinstance(value, runner_type.Runner)
