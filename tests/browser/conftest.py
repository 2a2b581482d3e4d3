"""Fixtures of the browser tests: a JupyterLab server, Chromium, a page that fails on console errors."""

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # tests/: deadlines
from deadlines import deadline
from labserver import CHROMIUM, CHROMIUM_ARGS, ConsoleLog, Server, artifacts_dir


@pytest.fixture(scope="session")
def notebooks_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("notebooks")


@pytest.fixture(scope="session")
def lab(notebooks_dir, tmp_path_factory):
    server = Server("lab", notebooks_dir, tmp_path_factory.mktemp("lab"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def lab_without_kernels(notebooks_dir, tmp_path_factory):
    """A JupyterLab that can start no kernel at all: saved notebooks are all it can show."""
    server = Server(
        "lab",
        notebooks_dir,
        tmp_path_factory.mktemp("nokernels"),
        extra_args=["--KernelSpecManager.allowed_kernelspecs=no-kernel-is-allowed"],
    )
    yield server
    server.stop()


@pytest.fixture(scope="session")
def notebook7(notebooks_dir, tmp_path_factory):
    server = Server("notebook", notebooks_dir, tmp_path_factory.mktemp("notebook7"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(deadline(30) * 1000)  # scaled to the machine
    log = ConsoleLog(page)
    page.console_log = log
    yield page
    try:
        page.screenshot(path=str(artifacts_dir() / f"{request.node.name}.png"), full_page=False)
    finally:
        context.close()
    assert log.errors == [], "console errors:\n" + "\n".join(log.errors)
