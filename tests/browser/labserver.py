"""A real Jupyter server on loopback and Debian's Chromium, driven by Playwright.

Notebooks are executed with nbclient and saved before the browser opens them, so
what the browser renders is what a saved notebook holds. Screenshots go to
``test-artifacts/browser/`` (ignored by git), or ``$OLYMPUS_ARTIFACTS``.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import nbformat

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from deadlines import deadline  # tests/, beside this folder
from notebook_runner import run_notebook

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "olympus-test"
#: JupyterLab extensions the test servers turn off: Voilà's "preview" button, which
#: comes with voila (installed for the Voilà test, which needs only its server
#: extension) and reads a notebook's cells while JupyterLab is still filling them
#: in (once: "Cannot read properties of undefined (reading 'type')" in a test's
#: console). The JupyterLab the other tests drive is the one they drove before.
DISABLED_LAB_EXTENSIONS = ("@voila-dashboards/jupyterlab-preview",)
#: The media type of a report's data (the extension renders it).
STAGES_MIME = "application/vnd.olympus.stages+json"


def artifacts_dir() -> pathlib.Path:
    path = pathlib.Path(os.environ.get("OLYMPUS_ARTIFACTS", ROOT / "test-artifacts" / "browser"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_notebook(path: pathlib.Path, sources, *, execute=True, kernel="python3"):
    """Writes a notebook of code cells; executes it first (outputs saved) unless told not to."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": "Python 3", "language": "python"}
    if execute:
        run_notebook(nb, path.parent)
        nb.metadata["kernelspec"]["name"] = kernel
    nbformat.write(nb, path)
    return path


def _config_dir(given: str | None, tmp: pathlib.Path) -> pathlib.Path:
    """The Jupyter config folder a test server runs with, new in ``tmp``: its
    JupyterLab page config is that of the folder ``given`` (``JUPYTER_CONFIG_DIR``
    where a test set one, read only), with :data:`DISABLED_LAB_EXTENSIONS` turned
    off. Nothing is written anywhere else."""
    config = tmp / "jupyter-config"
    page_config = config / "labconfig" / "page_config.json"
    page_config.parent.mkdir(parents=True, exist_ok=True)
    source = pathlib.Path(given) / "labconfig" / "page_config.json" if given else None
    held = json.loads(source.read_text()) if source is not None and source.exists() else {}
    held.setdefault("disabledExtensions", {}).update(dict.fromkeys(DISABLED_LAB_EXTENSIONS, True))
    page_config.write_text(json.dumps(held, indent=2))
    return config


def own_dirs(tmp: pathlib.Path, *names: str) -> dict[str, str]:
    """This process's environment, with each of the variables ``names`` set to a
    folder of its own in ``tmp``: what a test server writes goes there, never to
    the user's home."""
    env = dict(os.environ)
    for name in names:
        d = tmp / name.lower()
        d.mkdir(exist_ok=True)
        env[name] = str(d)
    return env


def wait_serving(server, url: str, what: str) -> None:
    """Waits (up to ``deadline(90)``) for ``url`` to answer, from ``server`` (its
    ``proc``, ``log`` and ``stop()``), started just before; a server that exits, or
    does not answer in time, is an error (and is not left running)."""
    end = time.time() + deadline(90)
    while time.time() < end:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{what} exited: see {server.log.name}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"{what} did not start in {deadline(90):.0f} s")


class Server:
    """A Jupyter server process serving ``root``."""

    def __init__(self, app: str, root: pathlib.Path, tmp: pathlib.Path, extra_args=()):
        self.port = free_port()
        self.root = root
        self.url = f"http://127.0.0.1:{self.port}"
        env = own_dirs(
            tmp,
            "JUPYTERLAB_SETTINGS_DIR",
            "JUPYTERLAB_WORKSPACES_DIR",
            "JUPYTER_RUNTIME_DIR",
            "IPYTHONDIR",
        )
        env["JUPYTER_CONFIG_DIR"] = str(_config_dir(env.get("JUPYTER_CONFIG_DIR"), tmp))
        here = str(pathlib.Path(__file__).resolve().parent)  # private_kernels.py
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
        # Notebook trust of its own: signing a test notebook never touches the user's
        # signature database (nbformat.sign.NotebookNotary(**server.notary) signs).
        self.notary = {
            "db_file": str(tmp / "nbsignatures.db"),
            "secret_file": str(tmp / "notebook_secret"),
        }
        self.log = open(tmp / f"{app}-server.log", "w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter",
                app,
                "--no-browser",
                "--allow-root",
                f"--ServerApp.port={self.port}",
                "--ServerApp.ip=127.0.0.1",
                f"--IdentityProvider.token={TOKEN}",
                f"--ServerApp.root_dir={root}",
                "--LabApp.expose_app_in_browser=True",
                "--JupyterNotebookApp.expose_app_in_browser=True",
                "--ServerApp.port_retries=0",
                # Kernels on Unix sockets, as in notebook_runner: no port races; each in a
                # folder of its own (private_kernels.py).
                "--MappingKernelManager.kernel_manager_class="
                "private_kernels.PrivateIpcKernelManager",
                *(f"--NotebookNotary.{k}={v}" for k, v in self.notary.items()),
                *extra_args,
            ],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_serving(self, f"{self.url}/api/status?token={TOKEN}", "jupyter server")

    def page_url(self, path: str) -> str:
        return f"{self.url}/{path}{'&' if '?' in path else '?'}token={TOKEN}"

    def end_sessions(self):
        """Ends every notebook session and its kernel (each test's notebook starts its
        own kernel: left running, they would slow the tests that follow)."""
        with urllib.request.urlopen(f"{self.url}/api/sessions?token={TOKEN}", timeout=10) as r:
            sessions = json.load(r)
        for session in sessions:
            req = urllib.request.Request(
                f"{self.url}/api/sessions/{session['id']}?token={TOKEN}", method="DELETE"
            )
            urllib.request.urlopen(req, timeout=30).close()

    def stop(self):
        try:
            req = urllib.request.Request(f"{self.url}/api/shutdown?token={TOKEN}", method="POST")
            urllib.request.urlopen(req, timeout=10)
            self.proc.wait(timeout=20)
        except Exception:  # noqa: BLE001 - make sure it ends
            self.proc.kill()
            self.proc.wait()
        self.log.close()


class MarimoApp:
    """``marimo run APP --headless`` on loopback: the marimo notebook ``app`` served as
    an app, its cells run by marimo's own kernel. marimo's configuration, cache and
    state go to folders in ``tmp`` (XDG_*): nothing is written to the user's home."""

    def __init__(self, app: pathlib.Path, tmp: pathlib.Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = own_dirs(tmp, "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")
        self.log = open(tmp / "marimo-server.log", "w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "marimo",
                "run",
                str(app),
                "--headless",
                "--no-token",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
            ],
            cwd=app.parent,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # stopped with its kernel (a process of its own)
        )
        wait_serving(self, self.url, "marimo")

    def stop(self):
        """Ends the server and its kernel (its process group), kindly first."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:  # all gone
                break
            try:
                self.proc.wait(timeout=20)
                break
            except subprocess.TimeoutExpired:
                continue
        self.log.close()


class ConsoleLog:
    """Console errors and uncaught page errors seen while a test ran."""

    IGNORED = (
        "favicon",  # no favicon on a test server
    )

    def __init__(self, page):
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

    def _console(self, msg):
        if msg.type == "error" and not any(s in msg.text for s in self.IGNORED):
            self.errors.append(msg.text)


def saved_outputs_notebook(path, bundles, mime=STAGES_MIME, source="report"):
    """A saved notebook (at ``path``, returned) whose cells hold the given bundles
    (reports, or diffs) as their outputs, as a kernel left them; ``source`` is each
    cell's code."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for i, data in enumerate(bundles):
        cell = nbformat.v4.new_code_cell(source, execution_count=i + 1)
        cell.outputs = [
            nbformat.v4.new_output(
                "execute_result",
                data={mime: data, "text/plain": "<olympus report>"},
                execution_count=i + 1,
            )
        ]
        nb.cells.append(cell)
    nbformat.write(nb, path)
    return path


def open_notebook(page, server: Server, name: str, app: str = "lab", timeout_ms: int = 60_000):
    """Opens a notebook and waits (up to ``timeout_ms``; a benchmark's notebook of tens
    of megabytes takes longer) for the first Olympus view to paint."""
    path = f"lab/tree/{name}?reset" if app == "lab" else f"notebooks/{name}"
    page.goto(server.page_url(path))
    page.wait_for_selector("[data-olympus-viewer][data-olympus-rendered]", timeout=timeout_ms)
    return page


def set_layout(view, layout: str):
    """Puts an Olympus view (the locator of its root) in ``layout``, ``"tabs"`` or
    ``"side-by-side"``, with its toolbar's layout button (which switches between them)."""
    if view.get_attribute("data-layout") != layout:
        view.locator('button[data-olympus-action="layout"]').click()
    assert view.get_attribute("data-layout") == layout


def dismiss_kernel_dialog(page):
    """Chooses "No Kernel" when JupyterLab asks which kernel a notebook should use."""
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        buttons = dialog.locator("button")
        for label in ("No Kernel", "Cancel"):
            b = buttons.filter(has_text=label)
            if b.count():
                b.first.click()
                return


def open_offline(page, path, root_selector: str):
    """Opens a saved page from file://, with every request other than the file refused;
    returns the element ``root_selector`` finds (once it is there), the requests made
    and the page's URL."""
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort(),
    )
    url = pathlib.Path(path).as_uri()
    page.goto(url)
    root = page.locator(root_selector)
    root.wait_for()
    return root, requests, url


def run_all_cells(page, server: Server, path: str):
    """Opens a notebook (``lab/tree/NB?reset`` or ``notebooks/NB``), waits for its kernel
    to be connected and idle, and runs every cell in it."""
    page.goto(server.page_url(path))
    page.wait_for_selector(".jp-Notebook")
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel; return k && k.connectionStatus === 'connected'"
        " && w.sessionContext.kernelDisplayStatus === 'idle'; }",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
