"""Before the first scenario: load the implementation and reach the engine, or say why nothing can be judged.

A run whose adapter cannot be loaded, or whose Milvus cannot be started or reached, says nothing about
the implementation. Instead of one ERRORED scenario per question, such a run ends before its first
scenario with one usage error naming the cause and what to do, and a NOT JUDGED report:
``rag-conformance run`` exits 2, pytest with its own usage-error code.

The run resources also answer, during the run, whether the kit itself still reaches the engine (see
:mod:`conformance.scenarios._engine_watch`), and close what they made without hanging on an engine that
is gone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from ..adapters._loading import CMD_PREFIX, load_adapter
from ..boundary._errors import AdapterLoadError, ConformanceError, EngineError
from ..boundary._protocol import ImplementationInfo
from ..boundary._redact import redact, register_environment_secrets, register_uri_secrets
from ..boundary._visible import visible_text
from ..options import RunOptions
from ..reporting._outcomes import OutcomeCollector

__all__ = ["MILVUS_CAPABILITIES", "RunResources", "one_line"]

MILVUS_CAPABILITIES = ("search", "lookup")
_LINE_CHARS = 300


class RunResources:
    """The run's implementation and engine: made once, on first need, closed adapter first."""

    key = pytest.StashKey["RunResources"]()

    def __init__(
        self, config: pytest.Config, options: RunOptions, *, on_warning: Callable[[str], None]
    ) -> None:
        self.adapter_address = options.adapter_address
        self.milvus = options.milvus
        # Whatever the run writes from now on hides these: the address's password, the token.
        register_uri_secrets(options.milvus)
        register_environment_secrets()  # MILVUS_TOKEN, and MILVUS_URI's password
        self._stdio_options = {
            "timeout": options.adapter_timeout,
            "validate": options.validate_wire,
            "strict_stdout": options.strict_stdout,
            "on_warning": on_warning,
        }
        self._outcomes: OutcomeCollector = config.stash[OutcomeCollector.key]
        self._loaded: tuple[Any, ImplementationInfo] | None = None
        self._engine: Any = None
        self._engine_failed: str | None = None  # why the engine could not be started or reached
        self.recorder: Any = None  # the recording proxy in front of the engine, once a scenario needs it
        self.kit_collections: set[str] = set()  # the kit's own collections on the engine (the oracle's)
        config.stash[self.key] = self

    # -- on first need ------------------------------------------------------------------------------

    def adapter(self) -> tuple[Any, ImplementationInfo]:
        """The loaded implementation and what it says about itself."""
        if self._loaded is None:
            self._loaded = load_adapter(self.adapter_address, stdio_options=self._stdio_options)
            self._outcomes.adapter = self._loaded[1]
        return self._loaded

    def engine(self) -> Any:
        """The Milvus engine of this run, started or reached once (not tried again once that failed, nor
        after the engine was lost: the scenario that asks is then NOT JUDGED at once)."""
        if self._engine is None:
            from ..engines import EngineUnavailableError, start_engine  # lazy: the plugin starts nothing

            if self._engine_failed is not None:
                raise EngineUnavailableError(self._engine_failed)
            if self._outcomes.lost_engine is not None:
                raise EngineUnavailableError(self._outcomes.lost_engine)
            try:
                self._engine = start_engine(self.milvus)
            except EngineUnavailableError as exc:
                self._engine_failed = str(exc)
                raise
            self._outcomes.milvus = self._engine.describe()
            self._mention_leftovers(self._engine)
        return self._engine

    def _mention_leftovers(self, engine: Any) -> None:
        """On an engine that outlives the run, say when other kit runs' collections are there too."""
        if engine.disposable:
            return
        from ..engines._engine import PROBE_SECONDS
        from ..engines._sweep import describe_leftovers, kit_leftovers, list_names

        try:
            runs = kit_leftovers(list_names(engine.client(), PROBE_SECONDS), except_prefix=engine.prefix)
        except Exception:  # a listing that fails here fails again, with a clearer message, at first use
            return
        if runs:
            self._outcomes.warn(
                f"this engine holds {describe_leftovers(runs)}: left by runs that were killed, or in use "
                f"by runs still going; when none is, remove them with `rag-conformance clean --milvus "
                f"{redact(self.milvus)} --yes`"
            )

    @property
    def engine_started(self) -> bool:
        """Whether the run's engine was started or reached (and not closed yet)."""
        return self._engine is not None

    @property
    def info(self) -> ImplementationInfo | None:
        """What the implementation says about itself, once loaded; None before."""
        return self._loaded[1] if self._loaded is not None else None

    def engine_unreachable(self, timeout: float | None = None) -> str | None:
        """Whether the kit itself still reaches the run's engine: None if it answers a short call through
        the kit's own client (or no engine was started), else what that call got."""
        if self._engine is None:
            return None
        try:
            if timeout is None:
                self._engine.check_reachable()
            else:
                self._engine.check_reachable(timeout=timeout)
        except EngineError as exc:
            return str(exc)
        return None

    def abandon_engine(self, why: str = "it stopped answering") -> None:
        """Give up on the run's engine (lost, or silent after a signal): every later call to it, the
        kit's own and the implementation's through the recording proxy, fails at once instead of waiting
        its deadline, so the run ends in bounded time; its collections stay for ``rag-conformance clean``."""
        if self._engine is not None:
            self._engine.abandon(why)
        if self.recorder is not None:
            self.recorder.abandon()

    def vanished_collections(self) -> list[str]:
        """The collections of this run that are no longer on the engine although the run never dropped
        them: the kit's own, and those the implementation created through the recording proxy and did
        not drop. Empty when none is missing (or the engine cannot be listed)."""
        if self._engine is None:
            return []
        made = set(self.kit_collections)
        for call in self.recorder.calls_since(0) if self.recorder is not None else ():
            if call.method == "CreateCollection" and call.succeeded and call.collection:
                made.add(call.collection)
            elif call.method == "DropCollection" and call.collection:
                made.discard(call.collection)
        if not made:
            return []
        from ..engines._engine import PROBE_SECONDS
        from ..engines._sweep import list_names

        try:
            present = set(list_names(self._engine.client(), PROBE_SECONDS))
        except Exception:  # the engine check that follows says what is wrong with the engine
            return []
        return sorted(made - present)

    def close_adapter(self) -> None:
        """Close the implementation (it drops what it made); after the engine was lost, a failure of that
        is a warning: the implementation could not have reached the engine. After an interrupt, a stdio
        program is killed at once (``abort``): asking it to stop could wait the whole call timeout."""
        loaded, self._loaded = self._loaded, None
        if loaded is None:
            return
        abort = getattr(loaded[0], "abort", None)
        if self._outcomes.interruption is not None and callable(abort):
            abort()
            return
        if self._outcomes.lost_engine is None and self._outcomes.interruption is None:
            loaded[0].close()
            return
        try:
            loaded[0].close()
        except Exception as exc:
            after = "the interrupt" if self._outcomes.interruption is not None else "the engine was lost"
            self._outcomes.warn(f"after {after}, closing the implementation failed: {one_line(exc)}")

    def close_engine(self) -> None:
        """Drop the run's collections and stop what was started; after the engine was lost, each call of
        the cleanup is bounded and a failure of it is a warning naming what may remain."""
        engine, self._engine = self._engine, None
        if engine is None:
            return
        if self._outcomes.lost_engine is None and self._outcomes.interruption is None:
            engine.close()
            return
        from ..engines._engine import PROBE_SECONDS

        after = "the engine was lost" if self._outcomes.lost_engine is not None else "the interrupt"
        left = engine.abandoned and not engine.disposable
        if self._outcomes.lost_engine is not None and (tail := engine.server_log_tail()):
            # Closing removes a server the kit started with its work dir, log included: keep its end.
            self._outcomes.warn(f"the engine's server log ended (before the kit stopped it) with:\n{tail}")
        try:
            engine.close(timeout=PROBE_SECONDS)
        except ConformanceError as exc:
            self._outcomes.warn(f"after {after}: {one_line(exc)}")
        if left:  # the kit gave up on it: nothing was asked of it, so nothing was dropped
            self._outcomes.warn(
                f"after {after}: the engine stopped answering, so the run's collections (starting with "
                f"{engine.prefix!r}) may remain: drop them by hand or with `rag-conformance clean "
                f"--milvus {redact(self.milvus)} --yes` once it answers again"
            )

    def close(self) -> None:
        """Adapter first: it drops its collections from the engine, which must still be there."""
        try:
            self.close_adapter()
        finally:
            self.close_engine()

    # -- before the first scenario ----------------------------------------------------------------

    def preflight(self, items: Sequence[pytest.Item]) -> None:
        """Load what the selected kit scenarios will need; :class:`pytest.UsageError` if that fails."""
        kit = [item for item in items if item.get_closest_marker("rqs_id") is not None]
        needs = {str(m.args[0]) for item in kit for m in item.iter_markers("rqs_needs") if m.args}
        info = None
        if needs:
            try:
                info = self.adapter()[1]
            except ConformanceError as exc:
                self._not_judged(_adapter_problem(self.adapter_address, exc))
        wants_engine = any(item.get_closest_marker("rqs_engine_check") is not None for item in kit)
        if info is not None:
            wants_engine |= any(
                need.partition(":")[0] in MILVUS_CAPABILITIES and info.supports(need) for need in needs
            )
        if wants_engine:
            try:
                self.engine()
            except ConformanceError as exc:
                self.close_adapter()
                self._not_judged(_engine_problem(self.milvus, exc))

    def _not_judged(self, problem: tuple[str, str, str]) -> None:
        cause, detail, advice = problem
        self._outcomes.not_judged(redact(f"{cause}: {detail}"))
        raise pytest.UsageError(
            visible_text(  # the detail quotes the program's words: its control characters are shown
                redact(
                    f"rag-conformance could not judge the implementation: {cause}.\n"
                    f"  {detail}\n"
                    f"  What to do: {advice}\n"
                    "  (verdict NOT JUDGED: rag-conformance run exits 2; no scenario ran)"
                )
            )
        )


def one_line(exc: BaseException) -> str:
    """An error on one line, for a warning or a message: its type, its first line, shortened."""
    text = redact(str(getattr(exc, "message", None) or exc).strip())  # pymilvus's str() is its repr
    first = text.splitlines()[0] if text else type(exc).__name__
    if type(exc).__name__ not in first:
        first = f"{type(exc).__name__}: {first}"
    return first if len(first) <= _LINE_CHARS else first[: _LINE_CHARS - 1] + "…"


def _detail(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if not isinstance(exc, AdapterLoadError) and type(exc).__name__ not in text:
        text = f"{type(exc).__name__}: {text}"
    return text.replace("\n", "\n  ")


def _adapter_problem(spec: str, exc: BaseException) -> tuple[str, str, str]:
    if spec.startswith(CMD_PREFIX):
        command = spec[len(CMD_PREFIX) :]
        return (
            "the stdio program did not complete the start handshake",
            _detail(exc),
            f"run `rag-conformance smoke --adapter-cmd {_quote(command)}` for step-by-step advice; the "
            "program must answer the start line with one JSON line on stdout and log to stderr",
        )
    return (
        "the adapter could not be loaded",
        _detail(exc),
        "fix what the line above names. The adapter address (--adapter, or --rqs-adapter in pytest) is "
        "'reference', an entry-point name, or module:attr importable from here; the guide "
        "docs/writing-an-adapter.md shows a complete adapter",
    )


def _engine_problem(milvus: str, exc: BaseException) -> tuple[str, str, str]:
    from ..engines._option import engine_option  # the option of the tool printing this

    where = "`rag-conformance run --help`" if engine_option() == "--milvus" else "`pytest --help`"
    return (
        f"Milvus ({redact(milvus)}) could not be started or reached",
        _detail(exc),
        f"check the engine address ({engine_option()}; {where} lists every name); for a uri, that the "
        "server is up and reachable from here; for a container, what the message above says",
    )


def _quote(command: str) -> str:
    import shlex

    return shlex.quote(command)
