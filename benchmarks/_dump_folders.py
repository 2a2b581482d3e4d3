"""The dump folders a report or a pass pipeline leaves, where they make them.

A dumped compile writes into a private folder (``olympus-passes-*``) made in
``/dev/shm`` where it has room, else in the temporary folder
(:func:`olympus.passes.dump_parent`), and removes it once read. A benchmark counts
the folders there before and after its runs, without choosing a temporary folder
of its own: that would keep the dumps on disk, which users' do not.

>>> isinstance(dump_folders(), set)
True
"""

import os
import tempfile


def dump_folders() -> set[str]:
    """The dump folders in memory (``/dev/shm``) and in the temporary folder now."""
    places = {tempfile.gettempdir(), "/dev/shm"}
    return {
        os.path.join(place, name)
        for place in places
        if os.path.isdir(place)
        for name in os.listdir(place)
        if name.startswith("olympus-passes-")
    }
