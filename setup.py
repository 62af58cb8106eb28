"""Builds the matmulviz extension (matmulviz._C) with the project's own CMake, for the Python that
runs pip: `pip install .` (in a virtual environment: pybind11 comes from the package index, as
pyproject.toml pins it) or `python3 -m pip install --no-build-isolation .` (Debian's pybind11-dev).
pyproject.toml holds the metadata.

The CMake build lives in build/pip-<python version>/ inside the source tree, builds only the
module's target (no app, tests or benchmarks) and is reused by the next install. Errors from
CMake are shown as they come; a failed configure or build fails the install.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def finalize_options(self):
        super().finalize_options()
        # An extension without sources looks up to date to setuptools once built; CMake decides.
        self.force = True

    def build_extension(self, ext):
        build_dir = ROOT / "build" / f"pip-{sys.version_info.major}.{sys.version_info.minor}"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        configure = ["cmake", "-S", str(ROOT), "-B", str(build_dir), *generator,
                     "-DCMAKE_BUILD_TYPE=Release", "-DMATMULVIZ_PYTHON=ON",
                     f"-DPython3_EXECUTABLE={sys.executable}",
                     "-DMATMULVIZ_BUILD_GUI=OFF", "-DMATMULVIZ_BUILD_TESTS=OFF",
                     "-DMATMULVIZ_BUILD_BENCH=OFF"]
        try:  # pybind11 from the package index (an isolated build): its CMake package
            import pybind11
            configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:  # --no-build-isolation: Debian's pybind11-dev, found by CMake
            pass
        jobs = str(os.cpu_count() or 2)
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "matmulviz_python",
                        "--parallel", jobs], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "matmulviz" / f"_C{suffix}"
        if not built.exists():
            raise RuntimeError(f"CMake built no {built.name} in {built.parent}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)


setup(ext_modules=[CMakeExtension("matmulviz._C")], cmdclass={"build_ext": CMakeBuild})
