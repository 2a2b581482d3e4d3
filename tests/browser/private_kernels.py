"""The kernels of a test Jupyter server, each on Unix sockets in a folder of its own.

Kernels on IPC sockets cannot be handed a TCP port another test's server took (see
notebook_runner). One socket prefix for all of a server's kernels is not enough,
though: jupyter_client numbers a kernel's sockets after those that exist, so two
kernels started at the same moment take the same numbers and one of them never
connects. Each kernel gets a private folder here, removed when the kernel goes.
The server loads this class by name (``labserver.Server`` puts this folder on its
``PYTHONPATH``).
"""

import shutil
import tempfile

from jupyter_client.ioloop import AsyncIOLoopKernelManager


class PrivateIpcKernelManager(AsyncIOLoopKernelManager):
    """A kernel manager whose kernel's sockets are in a folder of its own."""

    def __init__(self, **kwargs):
        self._folder = tempfile.mkdtemp(prefix="olympus-kernel-")
        kwargs.update(transport="ipc", ip=f"{self._folder}/kernel")
        super().__init__(**kwargs)

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._folder, ignore_errors=True)
