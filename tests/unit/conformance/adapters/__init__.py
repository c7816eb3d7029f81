"""Tests of the folder of the same name (the tests mirror the code)."""
