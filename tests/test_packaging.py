"""A wheel of Olympus holds the built JupyterLab extension and the standalone viewer,
so that installing it needs no Node.js (only building from source does)."""

import os
import pathlib
import subprocess
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_a_wheel_holds_the_built_views_and_installs_where_there_is_no_node(tmp_path):
    # A clone: what the build sees is the committed tree, with nothing built yet.
    src = tmp_path / "olympus"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(src)], check=True)
    assert not (src / "olympus_jupyter" / "labextension").exists()
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("olympus-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    ext = "olympus-0.1.0.data/data/share/jupyter/labextensions/olympus-jupyter/"
    assert ext + "package.json" in names and ext + "install.json" in names
    assert any(n.startswith(ext + "static/remoteEntry.") for n in names)
    assert "olympus_jupyter/static/viewer.js" in names
    # Installing it runs no build: a PATH without node (nor npm, nor jlpm) will do.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    install = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **{k: v for k, v in os.environ.items() if k.startswith("PIP_")},
            "PATH": str(bin_dir),
            "HOME": str(tmp_path),
        },
    )
    assert install.returncode == 0, install.stdout + install.stderr
    shared = venv / "share" / "jupyter" / "labextensions" / "olympus-jupyter"
    assert (shared / "package.json").is_file()
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert (site / "olympus_jupyter" / "static" / "viewer.js").stat().st_size > 100_000
