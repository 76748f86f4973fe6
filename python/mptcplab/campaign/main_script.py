"""The script that calls run_campaign, as the local workers see it: each spawned worker runs the
parent's main script again (multiprocessing's ``spawn``, as ``__mp_main__``), so a call outside
``if __name__ == "__main__":`` would start a campaign in every worker, and a script with no file
(``python -`` reads ``<stdin>``) cannot be run again at all."""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path
from typing import Any

from mptcplab.errors import UserError

#: Names in a test that keeps a script's statement out of the workers that import it. Not
#: ``parent_process()`` or ``current_process().name``: a spawned worker runs the script before
#: either is set, so both still say "main process" there.
_GUARD_NAMES = frozenset({"__name__", "__spec__"})


def called_from_unguarded_script() -> bool:
    """Whether this call is reached from the top level of a script a spawned worker is
    importing, directly or through functions."""
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__mp_main__":
            return True
        frame = frame.f_back
    return False


def check_main_script() -> None:
    """Refuse, before the store is touched, a main script the local workers would fail on: one
    with no file, or one calling run_campaign at its top level without the main guard."""
    from multiprocessing import spawn

    prepared = spawn.get_preparation_data("mptcplab")
    by_path = prepared.get("init_main_from_path")
    if by_path is not None and not Path(by_path).is_file():
        raise UserError(
            "the local workers start by running the main script again, and there is no "
            f"file at {by_path} (a script read from standard input?); save the script to "
            "a file and run that, or use `mptcplab run`"
        )
    call = _unguarded_call_site(prepared)
    if call is not None:
        raise UserError(
            "run_campaign is called at the top level of the script, which each local "
            "worker runs again as it starts; put the call in the script under "
            '`if __name__ == "__main__":`',
            file=call[0],
            line=call[1],
        )


def _unguarded_call_site(prepared: dict[str, Any]) -> tuple[str, int] | None:
    """The script file and line calling run_campaign at its top level without the main guard,
    from multiprocessing's ``prepared`` data for the workers. None when workers do not run it
    (a notebook, ``python -m pkg``), when the call is guarded, or when the script cannot be
    read (the worker's own check then stops it)."""
    main = sys.modules.get("__main__")
    by_name = prepared.get("init_main_from_name")
    by_path = prepared.get("init_main_from_path")
    if main is None or (by_name is None and by_path is None):
        return None
    if by_name is not None and (by_name == "__main__" or by_name.endswith(".__main__")):
        return None  # multiprocessing leaves a package's __main__ alone
    frame = inspect.currentframe()
    while frame is not None and not (
        frame.f_code.co_name == "<module>" and frame.f_globals is vars(main)
    ):
        frame = frame.f_back
    if frame is None:
        return None
    path, line = frame.f_code.co_filename, frame.f_lineno
    try:
        tree = ast.parse(Path(path).read_bytes(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return None
    # Any test before the call that names the process counts as a guard, wherever it is: a
    # script wrongly let through meets the worker's own check, one wrongly refused could not run.
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if test is None or node.lineno > line:
            continue
        names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute)}
        if names & _GUARD_NAMES:
            return None
    return path, line
