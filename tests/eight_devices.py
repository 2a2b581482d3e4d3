"""A child process that sees 8 CPU devices: XLA reads
``--xla_force_host_platform_device_count=8`` when JAX starts, so sharded programs
are staged in a process of their own, which prints its findings as JSON."""

import json
import os
import subprocess
import sys

from deadlines import deadline


def run_on_8_devices(script: str, timeout: float = 240) -> dict:
    """Runs ``script`` (Python source) with 8 CPU devices and returns the JSON object
    its last line of output prints; fails the test with the child's error if it
    failed. The caller's ``XLA_FLAGS`` are kept, the device count added."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    ).strip()
    proc = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(timeout),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
