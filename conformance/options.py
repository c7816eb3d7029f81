"""The run's options: one value, defined once, from which both command lines are made.

:class:`RunOptions` is every option of a judging run (the adapter, the engine address, the report
directory, the checks, the seed, the profile, the stdio settings, the expectation files). Each field
says its help text and flag; from the fields come

- the pytest options (:func:`add_pytest_options`: ``--rqs-<flag>``, registered by the plugin),
- the ``rag-conformance run`` options (:func:`add_cli_options`: ``--<flag>``),
- and the pytest arguments the runner hands pytest (:meth:`RunOptions.pytest_args`).

The plugin builds the value once, from pytest's options, with the seed drawn when none was given, and
stashes it on the config (:meth:`RunOptions.of` reads it back, wherever it is needed); the report
records it (``environment.options``). A new option is one field here, plus the code that uses it.
It is a layer of its own, just above the boundary, where the commands, the plugin, the scenarios and
the report (which records it) all find it; it imports nothing of the kit.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shlex
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "CHECKS",
    "PROFILES",
    "PROFILE_ENV",
    "RunOptions",
    "add_cli_options",
    "add_pytest_options",
    "command_line",
    "count_at_least_one",
    "seconds_above_zero",
    "seed_value",
]

Checks = Literal["implementation", "engine", "all"]
Profile = Literal["ci", "selftest", "thorough"]
CHECKS: tuple[str, ...] = get_args(Checks)
PROFILES: tuple[str, ...] = get_args(Profile)
"""The property profiles (their example counts are :mod:`conformance.scenarios._profiles`')."""
PROFILE_ENV = "RQS_PROFILE"
"""A default profile for every run of a CI job (the kit's own tests set it)."""
PYTEST_PREFIX = "--rqs-"
_KEY = pytest.StashKey["RunOptions"]()


# -- the checks every command's options share (argparse types; the model's validators call them too) --
# Each takes the text of the command line (or the value already parsed) and gives the value, or raises
# argparse.ArgumentTypeError naming what is wrong and what to give instead: exit 2, in one line, before
# anything runs.


def seconds_above_zero(value: str | float) -> float:
    """A finite number of seconds above 0 (``nan``, ``inf``, 0 and negatives are refused)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a number of seconds; give one such as 30"
        ) from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(
            f"{value!r} is no time limit: give a finite number of seconds above 0, such as 30"
        )
    return seconds


def seed_value(value: str | int) -> int:
    """A seed: a whole number from 0 (every seed the kit draws and records is one)."""
    try:
        seed = int(value)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{value!r} is not a seed: give a whole number from 0") from None
    if seed < 0 or isinstance(value, float):
        raise argparse.ArgumentTypeError(f"{value!r} is not a seed: give a whole number from 0, such as 7")
    return seed


def count_at_least_one(value: str | int) -> int:
    """A count of 1 or more (parallel jobs, queries)."""
    try:
        count = int(value)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number: give 1 or more") from None
    if count < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is too few: give 1 or more")
    return count


def command_line(value: str) -> str:
    """A program's command line, split as a shell line is (``shlex``) but run without a shell: not
    empty (a CI variable that expands to nothing must not judge the reference instead), its quotes
    balanced."""
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"the command {value!r} cannot be split into words ({exc}): balance its quotes"
        ) from None
    if not words:
        raise argparse.ArgumentTypeError(
            f"the command {value!r} is empty: give the program to judge, such as 'node impl.js' (an "
            "empty CI variable?)"
        )
    return value


def _not_empty(value: str) -> str:
    if value.startswith("cmd:"):  # a stdio program by its address: the same checks as --adapter-cmd
        command_line(value.removeprefix("cmd:"))
    elif not value.strip():
        raise argparse.ArgumentTypeError(
            f"{value!r} names no adapter: give 'reference', an entry-point name or 'module:attr'"
        )
    return value


def _checked(check: Any, value: Any) -> Any:
    """``check`` as a pydantic validator: its refusal a ValueError, so the model says it too."""
    try:
        return check(value)
    except argparse.ArgumentTypeError as exc:
        raise ValueError(str(exc)) from None


def _option(
    help: str, *, flag: str | None = None, cli: bool = True, metavar: str | None = None, check: Any = None
) -> Any:
    """A field's command-line facts: ``flag`` (default: the field's name with dashes), whether
    ``rag-conformance run`` has it too, a metavar, and the check its text passes (an argparse type)."""
    return {"help": help, "flag": flag, "cli": cli, "metavar": metavar, "check": check}


class RunOptions(BaseModel):
    """Every option of a judging run, with its default; see the module's docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    adapter: str | None = Field(
        None,
        json_schema_extra=_option(
            "the implementation: 'reference' (default), an entry-point name, or 'module:attr' "
            "(importable from here); giving it (in pytest) selects the kit's scenarios",
            check=_not_empty,
        ),
    )
    adapter_cmd: str | None = Field(
        None,
        json_schema_extra=_option(
            "judge a program in any language speaking the stdio protocol, e.g. 'node impl.js' "
            "(the same as --adapter 'cmd:<command>'); split into words as a shell line is, but run "
            "without a shell ('cd x && ...' does not work: wrap such a line in sh -c '...')",
            metavar="CMD",
            check=command_line,
        ),
    )
    milvus: str = Field(
        "lite",
        # The names are the engines layer's (its ENGINE_HELP, filled in by whoever adds the options):
        # one vocabulary, listed once, for the command line and pytest alike.
        json_schema_extra=_option("the engine (default lite): {engines}"),
    )
    report: str | None = Field(
        None,
        json_schema_extra=_option(
            "directory for report.json and junit.xml (rag-conformance run: rqs-report)"
        ),
    )
    checks: Checks = Field(
        "implementation",
        json_schema_extra=_option(
            "which scenarios run: 'implementation' (default: the spec's, judging the adapter), "
            "'engine' (Milvus behaviour checks), or 'all'"
        ),
    )
    seed: int | None = Field(
        None,
        json_schema_extra=_option(
            "the seed of the property scenarios and the generated knowledge base: the one a report or a "
            "failure shows replays that run (default: random, recorded in report.json)",
            check=seed_value,
        ),
    )
    profile: Profile | None = Field(
        None,
        json_schema_extra=_option(
            f"examples per property scenario: ci (default, 100) or thorough (1000); selftest (10, no "
            f"shrinking) is the mutation matrix's (default: ${PROFILE_ENV} if set, else ci)"
        ),
    )
    adapter_timeout: float = Field(
        30.0,
        json_schema_extra=_option(
            "seconds each call to a stdio program may take before it is killed (30)", check=seconds_above_zero
        ),
    )
    validate_wire: bool = Field(
        False,
        json_schema_extra=_option(
            "also check every line the kit writes to a stdio program against the protocol models",
            flag="validate",
        ),
    )
    strict_stdout: bool = Field(
        False,
        json_schema_extra=_option(
            "a stdio program's stdout line that is not a reply errors the call that waited for it "
            "(default: skipped, and listed once as a warning in the report)"
        ),
    )
    expectations: tuple[str, ...] = Field(
        (),
        json_schema_extra=_option(
            "TOML file of known divergences ([[expected_failure]] scenario, reason, adapter and/or "
            "engine): each runs as a strict expected failure; repeatable. The kit's engine ones always apply",
            cli=False,
            metavar="FILE",
        ),
    )

    @field_validator("adapter", "adapter_cmd", "seed", "adapter_timeout", mode="before")
    @classmethod
    def _check(cls, value: Any, info: Any) -> Any:
        check = _facts(info.field_name)["check"]
        return value if value is None or check is None else _checked(check, value)

    # -- where the value comes from ------------------------------------------------------------------

    @classmethod
    def from_pytest(cls, config: pytest.Config) -> RunOptions:
        """The value of pytest's ``--rqs-*`` options, the seed drawn once when none was given; stashed
        on ``config`` for :meth:`of`."""
        values = {name: config.getoption(_dest(name)) for name in cls.model_fields}
        values["expectations"] = tuple(values["expectations"] or ())
        values["profile"] = values["profile"] or os.environ.get(PROFILE_ENV) or "ci"
        if values["profile"] not in PROFILES:  # a bad $RQS_PROFILE passes argparse
            raise pytest.UsageError(
                f"{PROFILE_ENV}={os.environ.get(PROFILE_ENV)!r} is not a property profile; use one of "
                f"{', '.join(PROFILES)}"
            )
        if values["seed"] is None:  # one seed per run, chosen before any scenario, so it can be replayed
            values["seed"] = random.getrandbits(32)
        options = cls.model_validate(values)
        config.stash[_KEY] = options
        return options

    @classmethod
    def from_namespace(cls, args: argparse.Namespace) -> RunOptions:
        """The value of ``rag-conformance run``'s parsed options (those it has)."""
        return cls.model_validate({name: getattr(args, name) for name in cls.model_fields if _cli(name)})

    @staticmethod
    def of(config: pytest.Config) -> RunOptions:
        """The run's options, as the plugin built them."""
        return config.stash[_KEY]

    # -- what it gives -------------------------------------------------------------------------------

    @property
    def adapter_address(self) -> str:
        """The adapter to load: ``cmd:<command>`` for a stdio program, else the adapter (``reference``)."""
        return f"cmd:{self.adapter_cmd}" if self.adapter_cmd else self.adapter or "reference"

    @property
    def judging(self) -> bool:
        """Whether an implementation was named: the session judges one (not a suite that loads the kit)."""
        return bool(self.adapter or self.adapter_cmd)

    def pytest_args(self) -> list[str]:
        """The ``--rqs-*`` arguments that give pytest these options (defaults left out)."""
        args: list[str] = []
        for name, field in type(self).model_fields.items():
            value = getattr(self, name)
            if value == field.default:
                continue
            flag = PYTEST_PREFIX + _flag(name)
            if isinstance(value, bool):
                args.append(flag)
            elif isinstance(value, tuple):
                for item in value:
                    args += [flag, str(item)]
            else:
                args += [flag, str(value)]
        return args


def _facts(name: str) -> dict[str, Any]:
    extra = RunOptions.model_fields[name].json_schema_extra
    assert isinstance(extra, dict)
    return extra


def _flag(name: str) -> str:
    return _facts(name)["flag"] or name.replace("_", "-")


def _dest(name: str) -> str:
    return "rqs_" + _flag(name).replace("-", "_")


def _cli(name: str) -> bool:
    return bool(_facts(name)["cli"])


def _add(add: Any, name: str, flag: str, *, cli: bool, engines: str) -> None:
    """One option, its action, type and choices read off the field's annotation."""
    field = RunOptions.model_fields[name]
    facts = _facts(name)
    kwargs: dict[str, Any] = {"help": facts["help"].replace("{engines}", engines), "default": field.default}
    kwargs["dest"] = name if cli else _dest(name)
    if facts["metavar"]:
        kwargs["metavar"] = facts["metavar"]
    annotation = field.annotation
    optional = get_origin(annotation) in (Union, UnionType)
    kind = next(k for k in get_args(annotation) if k is not type(None)) if optional else annotation
    if kind is bool:
        kwargs["action"] = "store_true"
    elif get_origin(kind) is Literal:
        kwargs["choices"] = get_args(kind)
    elif get_origin(annotation) is tuple:
        kwargs.update(action="append", default=[])
    elif kind in (int, float):
        kwargs["type"] = kind
    if facts["check"] is not None:
        kwargs["type"] = facts["check"]
    add(flag, **kwargs)


def add_pytest_options(group: Any, *, engines: str) -> None:
    """Register every option as ``--rqs-<flag>`` in pytest's option ``group``; ``engines`` is the help
    text listing the engine names (``conformance.engines``' ``ENGINE_HELP``)."""
    for name in RunOptions.model_fields:
        _add(group.addoption, name, PYTEST_PREFIX + _flag(name), cli=False, engines=engines)


def add_cli_options(parser: argparse.ArgumentParser, *, engines: str) -> None:
    """Add the options ``rag-conformance run`` has (``--<flag>``): the adapter and its command exclude
    each other, and the report directory defaults to ``rqs-report``; ``engines`` as for
    :func:`add_pytest_options`."""
    target = parser.add_mutually_exclusive_group()
    for name in RunOptions.model_fields:
        if not _cli(name):
            continue
        add = target.add_argument if name in ("adapter", "adapter_cmd") else parser.add_argument
        _add(add, name, "--" + _flag(name), cli=True, engines=engines)
    parser.set_defaults(report="rqs-report")
