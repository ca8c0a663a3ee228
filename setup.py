"""Builds torch_accel._C (and the CUDA driver plugin when nvcc is found) with CMake, against
the torch installed in this environment. Install with `pip install --no-build-isolation -e .`:
an isolated build would fetch a different torch than the one the extension must match."""

import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        # Building must not load a previously installed torch_accel through torch's autoload.
        os.environ["TORCH_DEVICE_BACKEND_AUTOLOAD"] = "0"
        import torch

        build_dir = os.environ.get("TORCH_ACCEL_BUILD_DIR", os.path.join(ROOT, "build", "cmake"))
        os.makedirs(build_dir, exist_ok=True)
        torch_dir = os.path.dirname(torch.__file__)
        config = [
            "cmake",
            "-S",
            ROOT,
            "-B",
            build_dir,
            f"-DCMAKE_BUILD_TYPE={os.environ.get('TORCH_ACCEL_BUILD_TYPE', 'Release')}",
            f"-DTORCH_INCLUDE_DIRS={torch_dir}/include;{torch_dir}/include/torch/csrc/api/include",
            f"-DTORCH_LIBRARY_DIR={torch_dir}/lib",
            f"-DTORCH_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-DPython_INCLUDE_DIRS={sysconfig.get_paths()['include']}",
            f"-DACCEL_SANITIZE={os.environ.get('TORCH_ACCEL_SANITIZE', '')}",
        ]
        if shutil.which("ninja"):
            config += ["-G", "Ninja"]
        if os.environ.get("TORCH_ACCEL_CMAKE_ARGS"):
            config += os.environ["TORCH_ACCEL_CMAKE_ARGS"].split()
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")) or os.environ.get(
            "TORCH_ACCEL_RECONFIGURE"
        ):
            subprocess.check_call(config)
        jobs = os.environ.get("MAX_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs])

        # The extension and the plugin sit side by side; the runtime finds the plugin there.
        # An editable install imports the package from the source tree, so they go there too.
        out_dirs = {os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))}
        if self.inplace or getattr(self, "editable_mode", False):
            out_dirs.add(os.path.join(ROOT, "torch_accel"))
        ext_file = os.path.basename(self.get_ext_filename(ext.name))
        plugins = [os.path.join(build_dir, f) for f in ("libaccel_cuda.so", "libaccel_nccl.so")]
        for out_dir in out_dirs:
            os.makedirs(out_dir, exist_ok=True)
            shutil.copy2(os.path.join(build_dir, "_C.so"), os.path.join(out_dir, ext_file))
            for plugin in plugins:
                if os.path.exists(plugin):
                    shutil.copy2(plugin, os.path.join(out_dir, os.path.basename(plugin)))


setup(
    name="torch_accel",
    version="0.1.0",
    description="An out-of-tree PyTorch device backend (PrivateUse1) named accel",
    packages=find_packages(include=["torch_accel", "torch_accel.*"]),
    ext_modules=[CMakeExtension("torch_accel._C")],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.10",
    install_requires=["torch>=2.11,<2.15"],
    entry_points={"torch.backends": ["torch_accel = torch_accel._autoload:load"]},
)
