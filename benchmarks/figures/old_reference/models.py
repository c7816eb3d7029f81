"""The reference's ``trusted`` and ``trusted_all`` as they were at git 02ce19c, before issue 25.

The old version, frozen for comparison only (see :mod:`benchmarks.figures.old_reference`): copied
unchanged but for the imports. Nothing of the reference imports it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["trusted", "trusted_all"]

_M = TypeVar("_M", bound=BaseModel)

# What pydantic keeps on every model instance (pydantic 2's BaseModel slots). Where a pydantic release
# keeps something else, trusted() validates instead: slower, the same values.
_STATE = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
_CAN_SET_STATE = tuple(BaseModel.__slots__) == _STATE and all(name in vars(BaseModel) for name in _STATE)
if _CAN_SET_STATE:  # the slots' own setters: a third faster than object.__setattr__ by name
    _set_dict, _set_fields, _set_extra, _set_private = (vars(BaseModel)[name].__set__ for name in _STATE)


@functools.cache
def _field_names(cls: type[BaseModel]) -> frozenset[str]:
    return frozenset(cls.model_fields)


def trusted(cls: type[_M], values: dict[str, Any], *, unset: frozenset[str] = frozenset()) -> _M:
    """A ``cls`` instance holding ``values``, which the caller has made valid for it: no validation.

    ``values`` has every field of ``cls``, by attribute name, in declaration order, each already of its
    field's type and meeting every check of the model (validators included); ``unset`` names fields
    that hold their default and were not given. The instance is what ``cls.model_validate`` returns for
    the given fields, equal, with the same fields set, the same repr and dumps, for a fraction of the
    time. The hot paths of a search use it for values they build from validated input;
    ``tests/reference/test_trusted.py`` holds it to that.
    """
    if not _CAN_SET_STATE:
        given = {name: value for name, value in values.items() if name not in unset}
        return cls.model_validate(given, by_name=True)
    instance = cls.__new__(cls)
    _set_dict(instance, values)
    _set_fields(instance, set(values).difference(unset) if unset else set(_field_names(cls)))
    _set_extra(instance, None)
    _set_private(instance, None)
    return instance


def trusted_all(cls: type[_M], rows: Iterable[dict[str, Any]]) -> list[_M]:
    """:func:`trusted` for each row, every row giving every field: one call for a whole reply."""
    if not _CAN_SET_STATE:
        return [cls.model_validate(values, by_name=True) for values in rows]
    new, names = cls.__new__, _field_names(cls)
    out: list[_M] = []
    append = out.append
    for values in rows:
        instance = new(cls)
        _set_dict(instance, values)
        _set_fields(instance, set(names))
        _set_extra(instance, None)
        _set_private(instance, None)
        append(instance)
    return out
