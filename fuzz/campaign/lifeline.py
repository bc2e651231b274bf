"""A child process that ends with its parent: a sandbox worker, a follow-up
runner or job, a drawing process. Nothing of a campaign outlives its driver,
even a SIGKILLed one."""

from __future__ import annotations

import os
import signal
import threading
import time


def exit_with_parent(every: float = 1.0, name: str = "shapefuzz-watch-parent") -> None:
    """Watch (every `every` seconds, in a daemon thread) for the parent's death;
    then kill this process's group when it leads one (its compiler
    subprocesses, its sandbox workers), and exit."""
    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(every)
        if os.getpgrp() == os.getpid():
            os.killpg(0, signal.SIGKILL)
        os._exit(3)

    threading.Thread(target=watch, name=name, daemon=True).start()
