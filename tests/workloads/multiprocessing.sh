# multiprocessing with fork, spawn and forkserver, and shared_memory.
. "$(dirname "$0")/lib.sh"
cat >"$WS/mp.py" <<'PYM'
import multiprocessing as mp
from multiprocessing import shared_memory

def square(x):
    return x * x

def fill(name):
    shm = shared_memory.SharedMemory(name=name)
    shm.buf[:5] = b"hello"
    shm.close()

if __name__ == "__main__":
    for method in ("fork", "spawn", "forkserver"):
        ctx = mp.get_context(method)
        with ctx.Pool(2) as pool:
            print(method, sum(pool.map(square, range(10))))
    shm = shared_memory.SharedMemory(create=True, size=16)
    p = mp.get_context("spawn").Process(target=fill, args=(shm.name,))
    p.start(); p.join()
    print("shared_memory", bytes(shm.buf[:5]).decode())
    shm.close(); shm.unlink()
PYM
run_in --timeout 120 -- "$PY" mp.py
expect_eq "$RC" 0 "multiprocessing: $ERR"
expect_eq "$OUT" "fork 285
spawn 285
forkserver 285
shared_memory hello" "the results of every start method"
expect_eq "$(report_get 'r["violations"]')" "[]" "violations"
