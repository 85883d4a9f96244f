"""A pytest plugin that runs scipy.ndimage's own test suite with cliper's functions in place of scipy's.

Every function of ``cliper.ndimage`` that computes on a device replaces the function of the same name in
``scipy.ndimage`` (the namespace scipy's tests call through); each test records which of them it called. At the
end, the plugin writes per function how many of the tests that called it passed, failed or were skipped, and the
failures with their first line, to the JSON file ``--cliper-report`` names (docs/python.md lists them).

Tests are named ``FILE::CLASS::TEST[PARAMS]`` (``test_filters.py::TestNdimageFilters::test_correlate01``), the
same wherever scipy is installed. ``known_failures.txt`` (in this folder) lists the tests that are known to fail,
one a line with `` # reason``: they run as ``xfail(strict=True)``, so one that passes turns the run red until the
list is updated. ``--cliper-quick`` runs only the tests ``quick.txt`` names (a name without ``[PARAMS]`` takes
every parametrisation of that test).

Run: ``python -m pytest --pyargs scipy.ndimage -p cliper_scipy --cliper-report out.json`` with this folder on
``PYTHONPATH`` (docs/python.md says how).
"""

import collections
import functools
import json
import os

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
    parser.addoption("--cliper-quick", action="store_true", help="run only the tests quick.txt names")


_HERE = os.path.dirname(os.path.abspath(__file__))


def _listed(filename):
    """The lines of one of this folder's lists: ``{name: reason}`` (the text after `` # ``; blank lines and lines
    starting with ``#`` skipped)."""
    entries = {}
    with open(os.path.join(_HERE, filename)) as f:
        for line in f:
            name, _, reason = line.partition(" # ")
            name = name.strip()
            if name and not name.startswith("#"):
                entries[name] = reason.strip()
    return entries


def test_name(item):
    """``FILE::CLASS::TEST[PARAMS]``: pytest's node id with the test file's own name in front (with --pyargs the
    node id's path depends on where scipy is installed and where pytest runs)."""
    return f"{item.path.name}::{item.nodeid.split('::', 1)[1]}"


def pytest_collection_modifyitems(session, config, items):
    known = _listed("known_failures.txt")
    for item in items:
        reason = known.get(test_name(item))
        if reason is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"cliper: {reason}"))
    if config.getoption("--cliper-quick"):
        quick = set(_listed("quick.txt"))
        selected = [item for item in items if test_name(item) in quick or test_name(item).split("[")[0] in quick]
        config.hook.pytest_deselected(items=[item for item in items if item not in selected])
        items[:] = selected


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
        _results[test_name(item)] = ("skipped", [], "")
    elif report.when == "call":
        state = "passed" if report.passed else ("skipped" if report.skipped else "failed")
        if hasattr(report, "wasxfail"):
            state = "xfail" if report.skipped else "xpass"
        _results[test_name(item)] = (state, sorted(_called), _first_line(report, call)[:300])


def _first_line(report, call):
    """What went wrong, in one line: the exception's type and first line, or pytest's word for a strict xfail
    that passed."""
    if call.excinfo is not None and not report.passed:
        text = str(call.excinfo.value).strip()
        return f"{call.excinfo.typename}: {text.splitlines()[0] if text else ''}"
    return str(report.longrepr) if report.failed else ""


def pytest_sessionfinish(session, exitstatus):
    per_function = collections.defaultdict(collections.Counter)
    exercised = collections.Counter()
    failures = []
    for nodeid, (state, called, message) in _results.items():
        for name in called:
            per_function[name][state] += 1
        if called:
            exercised[state] += 1
            if state in ("failed", "xpass"):
                failures.append({"test": nodeid, "calls": called, "error": message or state})
    summary = {
        "exercised": dict(exercised),
        "per_function": {name: dict(counts) for name, counts in sorted(per_function.items())},
        "failures": failures,
    }
    path = session.config.getoption("--cliper-report")
    if path:
        with open(path, "w") as f:
            json.dump(summary, f, indent=1)
    passed, failed, known = exercised["passed"], exercised["failed"], exercised["xfail"]
    if passed + failed + known:
        print(f"\ncliper: {passed} of {passed + failed + known} scipy.ndimage tests that call cliper's functions "
              f"pass ({100 * passed / (passed + failed + known):.1f} %); {known} known failures, {failed} others")
