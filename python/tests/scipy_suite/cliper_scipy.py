"""A pytest plugin that runs scipy.ndimage's own test suite with cliper's functions in place of scipy's.

Every function of ``cliper.ndimage`` that computes on a device replaces the function of the same name in
``scipy.ndimage`` (the namespace scipy's tests call through); each test records which of them it called. At the
end, the plugin writes per function how many of the tests that called it passed, failed or were skipped, and the
failures with their first line, to the JSON file ``--cliper-report`` names (docs/python.md lists them).

Run: ``python -m pytest --pyargs scipy.ndimage -p cliper_scipy --cliper-report out.json`` with this folder on
``PYTHONPATH`` (``make python-scipy-suite`` does).
"""

import collections
import functools
import json

import pytest

import cliper.ndimage

# Functions cliper exports but computes with numpy on the host, as scipy does: substituting them would count
# numpy's work as cliper's.
HOST_ONLY = {"generate_binary_structure", "iterate_structure"}
SUBSTITUTED = [name for name in cliper.ndimage.__all__ if name not in HOST_ONLY]

_called = set()
_results = {}


def pytest_addoption(parser):
    parser.addoption("--cliper-report", default=None, help="where to write the per-function counts (JSON)")
    parser.addoption("--cliper-only", action="store_true", help="deselect tests that call no substituted function")


def _recording(name, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        _called.add(name)
        return function(*args, **kwargs)

    return wrapper


def pytest_configure(config):
    import scipy.ndimage
    from scipy._lib._array_api import xp_capabilities_table

    for name in SUBSTITUTED:
        original = getattr(scipy.ndimage, name)
        replacement = _recording(name, getattr(cliper.ndimage, name))
        setattr(scipy.ndimage, name, replacement)
        # scipy's tests look up each function's array-API capabilities by the function object.
        if original in xp_capabilities_table:
            xp_capabilities_table[replacement] = xp_capabilities_table[original]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _called.clear()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "setup" and report.skipped:
        _results[item.nodeid] = ("skipped", [], "")
    elif report.when == "call":
        state = "passed" if report.passed else ("skipped" if report.skipped else "failed")
        if hasattr(report, "wasxfail"):
            state = "xfail" if report.skipped else "xpass"
        message = ""
        if report.failed and call.excinfo is not None:
            message = f"{call.excinfo.typename}: {str(call.excinfo.value).strip().splitlines()[0] if str(call.excinfo.value).strip() else ''}"
        _results[item.nodeid] = (state, sorted(_called), message[:300])


def pytest_sessionfinish(session, exitstatus):
    per_function = collections.defaultdict(collections.Counter)
    exercised = collections.Counter()
    failures = []
    for nodeid, (state, called, message) in _results.items():
        for name in called:
            per_function[name][state] += 1
        if called:
            exercised[state] += 1
            if state == "failed":
                failures.append({"test": nodeid, "calls": called, "error": message})
    summary = {
        "exercised": dict(exercised),
        "per_function": {name: dict(counts) for name, counts in sorted(per_function.items())},
        "failures": failures,
    }
    path = session.config.getoption("--cliper-report")
    if path:
        with open(path, "w") as f:
            json.dump(summary, f, indent=1)
    passed, failed = exercised["passed"], exercised["failed"]
    if passed + failed:
        print(f"\ncliper: {passed} of {passed + failed} scipy.ndimage tests that call cliper's functions pass "
              f"({100 * passed / (passed + failed):.1f} %)")
