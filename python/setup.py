"""Builds gramask._core, the C extension, against the gramask C library.

Two ways to find the library (the README's "Python" section):
  - installed (`make install`): pkg-config finds gramask.pc (set PKG_CONFIG_PATH for a
    prefix pkg-config does not search);
  - a build tree: GRAMASK_BUILD_DIR=/path/to/build (where `make` ran), the sources in
    this file's parent directory or GRAMASK_SRC_DIR.
The extension is linked with an rpath to the library's directory, so no
LD_LIBRARY_PATH or ldconfig is needed. GRAMASK_WERROR=1 adds -Werror (make does).
"""

import json
import os
import re
import shlex
import subprocess
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    sys.exit(f"gramask setup.py: {msg}")


def version(src):
    try:
        with open(os.path.join(src, "configure.ac"), encoding="utf-8") as f:
            m = re.search(r"AC_INIT\(\[gramask\],\s*\[([^\]]+)\]", f.read())
        return m.group(1) if m else "0.0.0"
    except OSError:
        return "0.0.0"


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args, "gramask"], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        fail("the gramask C library was not found: run `make install` first (pkg-config must "
             "find gramask.pc: set PKG_CONFIG_PATH=PREFIX/lib/pkgconfig for another prefix), or "
             "build against a build tree with GRAMASK_BUILD_DIR=/path/to/build")
    return shlex.split(out)


def library():
    """(include dirs, library dir, data dirs, the library's version)."""
    build = os.environ.get("GRAMASK_BUILD_DIR")
    if build:
        src = os.path.abspath(os.environ.get("GRAMASK_SRC_DIR") or os.path.dirname(HERE))
        build = os.path.abspath(build)
        libdir = os.path.join(build, ".libs")
        if not os.path.exists(os.path.join(src, "include", "gramask.h")):
            fail(f"no include/gramask.h under {src}: set GRAMASK_SRC_DIR to the source tree")
        if not any(n.startswith("libgramask.so") for n in os.listdir(libdir) if os.path.isdir(libdir)):
            fail(f"no libgramask.so in {libdir}: run `make` in {build} first")
        return [os.path.join(src, "include")], libdir, [os.path.join(src, "tests", "data")], version(src)
    incs = [f[2:] for f in pkg_config("--cflags-only-I") if f.startswith("-I")]
    libdir = pkg_config("--variable=libdir")[0]
    prefix = pkg_config("--variable=prefix")[0]
    return incs, libdir, [os.path.join(prefix, "share", "gramask")], pkg_config("--modversion")[0]


incs, libdir, data_dirs, ver = library()
cflags = ["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter",
          "-Wno-missing-field-initializers", "-fvisibility=hidden"]
if os.environ.get("GRAMASK_WERROR") == "1":
    cflags.append("-Werror")

setup(
    version=ver,
    ext_modules=[Extension(
        "gramask._core",
        sources=["src/module.c", "src/core.c", "src/matcher.c", "src/arrays.c", "src/bench.c"],
        depends=["src/core.h"],
        include_dirs=incs,
        library_dirs=[libdir],
        runtime_library_dirs=[libdir],
        libraries=["gramask"],
        # a C string literal (JSON's escapes are C's, \uXXXX included)
        define_macros=[("GMPY_DATA_DIRS", json.dumps(os.pathsep.join(data_dirs)))],
        extra_compile_args=cflags,
    )],
)
