"""The build step of `pip install .` (pyproject.toml): CMake builds the extension lockstep._lockstep
(target _lockstep, python/CMakeLists.txt) in build/pip and setuptools installs it with the package
python/lockstep. CMAKE_ARGS adds CMake options (e.g. -DLOCKSTEP_WERROR=ON); ccache is used when
installed, as scripts/build.sh does."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = ROOT / "build" / "pip"
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DLOCKSTEP_TESTS=OFF", "-DLOCKSTEP_BENCH=OFF",
                "-DLOCKSTEP_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
        env = dict(os.environ)
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        if shutil.which("ccache"):
            args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            env.setdefault("CCACHE_BASEDIR", str(ROOT.parent))
        args += env.get("CMAKE_ARGS", "").split()
        subprocess.check_call(["cmake", "-S", str(ROOT), "-B", str(build), *args], env=env)
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_lockstep", "-j",
                               str(os.cpu_count() or 1)], env=env)
        built = next((build / "python" / "lockstep").glob("_lockstep*.so"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(ext_modules=[Extension("lockstep._lockstep", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
