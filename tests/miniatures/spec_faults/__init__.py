"""Broken miniatures written from the spec's sentences: each breaks ONE rule the way a real team might.

Every class is :class:`~tests.miniatures.spec_freedoms.FromTheSpec` (which the kit passes) with one step
replaced. The docstring quotes the sentence it breaks and tells how a team would have got there.
``matrix.toml`` lists each with the requirement it violates. One module per reason a kit might let
them through: inputs it never varies, outputs it never reads, engine calls it never inspects.
"""

from .engine_calls import *  # noqa: F403
from .engine_calls import __all__ as _engine_calls
from .inputs import *  # noqa: F403
from .inputs import __all__ as _inputs
from .outputs import *  # noqa: F403
from .outputs import __all__ as _outputs

__all__ = sorted([*_inputs, *_outputs, *_engine_calls])
