"""Tests that need the built view (``olympus_jupyter/static/viewer.js``, which
``jlpm build:standalone`` and the package build make) mark themselves
:data:`needs_view`: a source checkout without Node.js has none.
"""

import pytest

from olympus_jupyter.report import interactive

#: Skips a test (or, as ``pytestmark``, a module) where the view was not built.
needs_view = pytest.mark.skipif(
    interactive.viewer() is None,
    reason="the view is not built (jlpm build:standalone; the package build makes it)",
)
