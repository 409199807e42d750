"""pytest plugin of `run.sh pycuda-tests` and `pycuda-control` (both runs load it).

PyCUDA's two cuRAND tests on 8 and 16 GB arrays take minutes each; every other test takes
seconds. Collected in file order they start wherever the scheduler happens to put them,
often late, and the suite's wall time then measures the queue, not the library. This
plugin moves them to the front of the first two workers' shares (pytest-xdist's
`worksteal` scheduling, which run.sh uses, first hands each worker a contiguous share of
the collection, in order), so that both start at once. It changes no test and no result,
only the order.
"""

import os

LONG_TESTS = ("test_curand_wrappers_16gb", "test_curand_wrappers_8gb")


def shares_start(total, workers):
    """Where each of `workers` contiguous shares of `total` tests starts, as worksteal
    splits them: each worker in turn takes the remaining tests divided by the workers
    still to serve (rounded down)."""
    starts, at = [], 0
    for i in range(workers):
        starts.append(at)
        at += (total - at) // (workers - i)
    return starts


def pytest_collection_modifyitems(session, config, items):
    long_items = [it for name in LONG_TESTS for it in items if it.name == name]
    if not long_items:
        return
    rest = [it for it in items if it not in long_items]
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    starts = shares_start(len(items), max(workers, 1))
    ordered = list(rest)
    for slot, item in zip(starts, long_items):
        ordered.insert(min(slot, len(ordered)), item)
    # More long tests than workers: they queue after the first one.
    for n, item in enumerate(long_items[len(starts):]):
        ordered.insert(1 + n, item)
    items[:] = ordered
