"""Shared test settings: Hypothesis profiles (CI is the default and is reproducible), and the property
profile of the kit runs the tests start."""

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("thorough", max_examples=2000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Every kit run these tests start (in process or as a subprocess) uses the selftest property profile:
# the tests judge the kit's behaviour, not a property's power, and the mutation matrix runs each of its
# ~100 miniatures with it.
os.environ.setdefault("RQS_PROFILE", "selftest")

# The tests start about a hundred Python processes (kit runs, stdio programs, engines). With
# PYTHONDONTWRITEBYTECODE set (some machines set it), each one compiles the kit's modules and rewrites
# the plugin's asserts again: about 1.8 s of CPU per kit run. Bytecode caches are written for these
# processes (and this one) whatever the caller's environment says; they are ignored by git.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.fixture(autouse=True)
def _secrets_registered_by_a_test_stay_in_it() -> Iterator[None]:
    """The redaction's registry is process-wide, as a run needs it; a test that registers a password
    (``milvus``, say) must not hide that word from every later test in its worker."""
    from conformance.boundary import _redact

    before = set(_redact._secrets)
    yield
    with _redact._lock:
        _redact._secrets.intersection_update(before)


def pytest_collection_modifyitems(items: list) -> None:
    """The mutation matrix first. It is the suite's longest module by far (one kit run per miniature, one
    process per core), and with ``-n auto --dist loadfile`` a module goes to a worker in collection order:
    collected last, as its name sorts, it started after most other modules had run and ended the suite
    alone. Started first, it runs beside all of them. The order of everything else is kept."""
    items.sort(key=lambda item: item.nodeid.partition("::")[0] != "tests/integration/test_mutation_matrix.py")


UNIT_TIER = Path(__file__).parent / "unit"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` starts one worker more than there are cores, unless only the unit tier runs.

    Integration tests wait as well as compute: a Milvus server starting, a container, a deadline. With
    one worker per core the machine idled for about a quarter of the integration tier (1.5 of 2 cores
    busy on average); a third worker fills those waits: 779 s became 665 s on two idle cores. The unit
    tier only computes, so it keeps one worker per core. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` (xdist's
    own setting) still decides when set.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    paths = [Path(arg.partition("::")[0]).resolve() for arg in config.args] or [Path.cwd()]
    if all(path.is_relative_to(UNIT_TIER) for path in paths):
        return None
    return len(os.sched_getaffinity(0)) + 1
