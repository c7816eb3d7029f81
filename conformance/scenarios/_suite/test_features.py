"""Binds every feature file of the kit. Step definitions come from the plugin's step modules."""

from pytest_bdd import scenarios

from conformance.spec._paths import features_dir

scenarios(str(features_dir()))
