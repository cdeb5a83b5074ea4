"""Build hook: records where this package was installed from.

`pip install ./python` from a clone of the repository builds in place, so
this file knows the repository; the package then looks for the shared
library in the repository's build tree (build/libminitriton.so) when
MINITRITON_LIBRARY is not set. The path is written into
minitriton/_install_info.py in the built package (never into the sources).
MINITRITON_BUILD_DIR at install time overrides the build tree recorded.
"""
import os

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def build_dir():
    explicit = os.environ.get("MINITRITON_BUILD_DIR")
    if explicit:
        return os.path.abspath(explicit)
    repo = os.path.dirname(HERE)
    if os.path.isfile(os.path.join(repo, "include", "minitriton.h")):
        return os.path.join(repo, "build")
    return None  # built from a copy outside the repository: nothing to record


class BuildPy(build_py):
    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "minitriton", "_install_info.py")
        with open(target, "w", encoding="utf-8") as f:
            f.write("# Written by setup.py when the package was built.\n")
            f.write("BUILD_DIR = %r\n" % build_dir())


setup(cmdclass={"build_py": BuildPy})
