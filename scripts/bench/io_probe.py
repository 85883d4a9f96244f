# I/O probe for issue 50 item 8: how fast one process writes and reads one file on tmpfs and ext4 (pwrite or a
# memory map, 1/4/16 threads; preads into fresh or reused memory). Usage: python3 scripts/bench/io_probe.py GIB
import os, mmap, time, sys, threading
import numpy as np
from concurrent.futures import ThreadPoolExecutor
GiB = 1 << 30
size = int(float(sys.argv[1]) * GiB) if len(sys.argv) > 1 else 4 * GiB
chunk = 64 << 20
src = np.random.default_rng(0).integers(0, 255, size, dtype=np.uint8)
pool = ThreadPoolExecutor(16)
def fresh(path):
    if os.path.exists(path): os.remove(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644); os.ftruncate(fd, size); return fd
def pwrite_threads(path, threads):
    fd = fresh(path); t = time.perf_counter()
    offs = range(0, size, chunk)
    if threads == 1:
        for o in offs: os.pwrite(fd, memoryview(src)[o:o+chunk], o)
    else:
        list(ThreadPoolExecutor(threads).map(lambda o: os.pwrite(fd, memoryview(src)[o:o+chunk], o), offs))
    w = time.perf_counter() - t; os.fsync(fd); s = time.perf_counter() - t; os.close(fd); return w, s
def mmap_threads(path, threads):
    fd = fresh(path); t = time.perf_counter()
    m = mmap.mmap(fd, size); dst = np.frombuffer(m, dtype=np.uint8)
    def cp(o): dst[o:o+chunk] = src[o:o+chunk]
    list(ThreadPoolExecutor(threads).map(cp, range(0, size, chunk)))
    w = time.perf_counter() - t
    del dst; m.flush(); m.close(); os.fsync(fd); s = time.perf_counter() - t; os.close(fd); return w, s
def pread_threads(path, threads, buf):
    fd = os.open(path, os.O_RDONLY); t = time.perf_counter()
    b = buf if buf is not None else np.empty(size, np.uint8)
    mv = memoryview(b)
    list(ThreadPoolExecutor(threads).map(lambda o: os.preadv(fd, [mv[o:o+chunk]], o), range(0, size, chunk)))
    r = time.perf_counter() - t; os.close(fd); return r
print("uname", os.uname().release, "size GiB", size / GiB)
os.system("df -T /tmp /dev/shm | cat")
for d in ["/dev/shm", "/tmp"]:
    p = os.path.join(d, "ioprobe.bin")
    for name, f in [("pwrite x1", lambda: pwrite_threads(p, 1)), ("pwrite x16", lambda: pwrite_threads(p, 16)),
                    ("mmap   x1", lambda: mmap_threads(p, 1)), ("mmap   x4", lambda: mmap_threads(p, 4)),
                    ("mmap   x16", lambda: mmap_threads(p, 16))]:
        w, s = f(); print(f"{d} {name}: write {w:.3f} s ({size/w/1e9:.2f} GB/s), with fsync {s:.3f} s ({size/s/1e9:.2f} GB/s)", flush=True)
    reuse = np.empty(size, np.uint8); reuse[:] = 1
    for th in [1, 16]:
        r = pread_threads(p, th, None); r2 = pread_threads(p, th, reuse)
        print(f"{d} pread x{th}: fresh buffer {r:.3f} s ({size/r/1e9:.2f} GB/s), reused {r2:.3f} s ({size/r2/1e9:.2f} GB/s)", flush=True)
    os.remove(p)
