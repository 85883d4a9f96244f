"""Shared fixtures of the package's tests: the repository root (for committed fixtures) and a seeded generator."""

import pathlib

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def rng():
    return np.random.default_rng(20261128)


@pytest.fixture
def root():
    return ROOT
