"""Work spread over several devices from Python: a thread per device takes the next item from one shared queue
(what the library's DevicePool does for files), so a faster device takes more items. Device work runs without
the GIL, so the threads' devices work at the same time."""

import queue
import threading

from ._array import Device, devices


def map_devices(function, items, devices_=None):
    """``[function(item) for item in items]``, the calls spread over ``devices_`` (ids or indices; default every
    device), each call made inside ``with cliper.Device(d)`` so that the arrays it makes are on its device.
    Results come back in the items' order; the first exception raised by a call is raised here, after every
    thread has stopped.

    >>> import cliper, numpy as np
    >>> from cliper import ndimage
    >>> images = [np.full((8, 8), float(i)) for i in range(5)]
    >>> results = cliper.map_devices(lambda x: ndimage.uniform_filter(x, 3), images)
    >>> [float(r[4, 4]) for r in results]
    [0.0, 1.0, 2.0, 3.0, 4.0]
    """
    chosen = [d["id"] for d in devices()] if devices_ is None else list(devices_)
    if not chosen:
        raise ValueError("map_devices: no device to run on")
    items = list(items)
    todo = queue.Queue()
    for index in range(len(items)):
        todo.put(index)
    results = [None] * len(items)
    failures = []

    def worker(device):
        with Device(device):
            while not failures:
                try:
                    index = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    results[index] = function(items[index])
                except BaseException as error:  # noqa: BLE001 - handed to the caller
                    failures.append(error)

    threads = [threading.Thread(target=worker, args=(d,)) for d in chosen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return results
