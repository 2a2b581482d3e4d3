"""Python kernels for the tests, each in a private folder: its sockets (the ``ipc``
transport, not TCP ports another process could take) and its connection file live
there, and go with it.

- :func:`kernel_manager`: a ``KernelManager`` for such a kernel, not started (for
  nbclient, which starts it);
- :func:`started_kernel`: a kernel started and ready, with its client's channels
  open; shut down at the end.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator

from jupyter_client.manager import KernelManager

from deadlines import deadline


@contextlib.contextmanager
def kernel_manager() -> Iterator[KernelManager]:
    """A manager of a python3 kernel whose sockets are in a private folder."""
    with tempfile.TemporaryDirectory(prefix="olympus-kernel-") as sockets:
        yield KernelManager(
            kernel_name="python3",
            transport="ipc",
            ip=f"{sockets}/kernel",
            connection_file=f"{sockets}/kernel.json",
        )


@contextlib.contextmanager
def started_kernel(timeout: float = 120) -> Iterator[tuple[KernelManager, object]]:
    """``(manager, client)`` of a kernel started and ready (waited for up to
    ``timeout`` seconds, scaled to the machine: :func:`deadlines.deadline`)."""
    with kernel_manager() as km:
        km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=deadline(timeout))
            yield km, kc
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
