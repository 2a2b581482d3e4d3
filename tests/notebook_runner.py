"""Runs notebooks in real kernels for the tests, safely in parallel.

Each kernel talks over Unix sockets in a private folder (IPC transport), not TCP
ports: kernels started at the same moment by parallel test workers (and the Jupyter
servers of the browser tests) cannot then be handed the same port, which loses
messages and leaves a client waiting forever.
"""

from nbclient import NotebookClient

from deadlines import deadline
from ipc_kernel import kernel_manager


def run_notebook(nb, cwd, *, allow_errors: bool = False, timeout: int = 300):
    """Executes ``nb`` (outputs written into it) in a fresh python3 kernel started in ``cwd``."""
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    with kernel_manager() as km:  # its sockets in a private folder, gone with it
        NotebookClient(
            nb,
            km=km,
            timeout=round(deadline(timeout)),
            kernel_name="python3",
            allow_errors=allow_errors,
            resources={"metadata": {"path": str(cwd)}},
        ).execute()
    return nb
