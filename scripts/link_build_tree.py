"""Puts the build tree's `mpmd` package on the venv's import path with a .pth
file, so that `.venv/bin/python -c "import mpmd"` works without PYTHONPATH.
Rewrites the file only when the path changes."""

import pathlib
import sys
import sysconfig

target = pathlib.Path(sys.argv[1]).resolve()
pth = pathlib.Path(sysconfig.get_paths()["purelib"]) / "mpmd-build-tree.pth"
text = f"{target}\n"
if not pth.exists() or pth.read_text() != text:
    pth.write_text(text)
