"""Several devices from Python (cliper.map_devices), on PoCL's two CPU devices (POCL_DEVICES="pthread pthread",
set in a child interpreter because the OpenCL platform reads it once): every item's result equals scipy's
(float64, 1e-12: the same sums), both devices take items, and a failing call raises its exception."""

import os
import subprocess
import sys
import textwrap


def test_items_spread_over_two_devices_give_scipys_results():
    script = textwrap.dedent("""
        import numpy as np, scipy.ndimage, cliper
        from cliper import ndimage
        ids = [d["id"] for d in cliper.devices() if d["platform"].startswith("Portable")]
        assert len(ids) == 2, ids
        rng = np.random.default_rng(3)
        images = [rng.random((33, 41)) for _ in range(12)]
        used = cliper.map_devices(lambda x: (ndimage.gaussian_filter(cliper.asarray(x), 2.0).get(), cliper.get_device().id), images, ids)
        for image, (result, _) in zip(images, used):
            np.testing.assert_allclose(result, scipy.ndimage.gaussian_filter(image, 2.0), rtol=1e-12, atol=1e-12)
        assert {device for _, device in used} == set(ids), [device for _, device in used]
        try:
            cliper.map_devices(lambda x: ndimage.median_filter(x, size=0), images, ids)
        except RuntimeError as error:
            print("refused:", error)
        else:
            raise AssertionError("size 0 was not refused")
    """)
    env = dict(os.environ, POCL_DEVICES="pthread pthread", CLIPER_DEVICE="cpu")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused:" in done.stdout
