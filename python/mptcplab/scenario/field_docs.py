"""A scenario field's docstring (the string literal under its annotation), read from the
model's source when a message needs it.

pydantic's ``use_attribute_docstrings`` reads the source of every model while the module is
imported: a seventh of a second that every command line paid, for the one message that uses
the docstrings (a missing field's).
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap

__all__ = ["field_doc"]


@functools.cache
def _docstrings(cls: type) -> dict[str, str]:
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):  # no source (a frozen or compiled install)
        return {}
    node = ast.parse(textwrap.dedent(source)).body[0]
    if not isinstance(node, ast.ClassDef):
        return {}
    docs: dict[str, str] = {}
    for stmt, after in zip(node.body, node.body[1:], strict=False):
        if (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


def field_doc(model: type, name: str) -> str | None:
    """The docstring of field ``name`` of ``model``, from the class that declares it."""
    for cls in model.__mro__:
        if name in vars(cls).get("__annotations__", {}):
            return _docstrings(cls).get(name)
    return None
