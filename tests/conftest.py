"""Shared test settings: Hypothesis profiles (CI is the default and is reproducible), how the suite
splits over pytest-xdist workers, and the property profile of the kit runs the tests start."""

import os

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
# ~100 miniatures with it. The README quick-start test takes it out again: a newcomer runs the default.
os.environ.setdefault("RQS_PROFILE", "selftest")


# With `pytest -n auto` (the README's test command), a module's tests stay on one worker, so module
# fixtures (the mutation matrix, the built wheel) run once; the modules that start Milvus 2.3.5 share a
# worker, because that server always binds the same etcd port and a second one is refused.
_SHARED_WORKER = dict.fromkeys(
    ("test_engines_local", "test_store_engines", "test_engines_matrix"), "milvus-2.3.5"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        module = item.nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
        item.add_marker(pytest.mark.xdist_group(_SHARED_WORKER.get(module, module)))
