# Shared by the pyverbs scripts of the integration tests (uverbs_limits.py,
# uverbs_srq.py): failures are reported and remembered, a run is bounded.
import signal


class Checks:
    def __init__(self, name, seconds=300):
        self.name, self.ok = name, True
        # A lost event would block get_async_event(): SIGALRM ends the run.
        signal.alarm(seconds)

    def bad(self, *a):
        print(self.name + ":", *a)
        self.ok = False


def poll_one(cq):
    """The next completion of @cq, or None after a generous number of polls."""
    for _ in range(200000):
        n, wcs = cq.poll(num_entries=1)
        if n:
            return wcs[0]
    return None
