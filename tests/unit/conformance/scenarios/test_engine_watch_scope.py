"""The kit's plugin loads in every pytest session of a venv that has the kit: its engine watch turns a
kit scenario stopped by a lost engine into NOT JUDGED, and leaves every other test's failure alone."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


def test_a_test_that_is_not_a_kit_scenario_fails_on_an_engine_error(pytester: pytest.Pytester) -> None:
    # A team's own tests (and the kit's) that use its engines: their failure is theirs, even when an
    # EngineUnavailableError is what broke them, or hides in the chain of what did.
    pytester.makepyfile(
        """
        import pytest
        from conformance.engines import EngineUnavailableError

        def test_raises_it():
            raise EngineUnavailableError("the test's own engine did not start")

        def test_an_assertion_chained_to_it():
            with pytest.raises(EngineUnavailableError, match="another message"):
                raise EngineUnavailableError("the message it gave")
        """
    )
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=2)
    assert "NOT JUDGED" not in result.stdout.str()
