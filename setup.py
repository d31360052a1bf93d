"""The one compiled part: the optional observation encoder of ``arena.envs`` (see its C file).

Everything else about the package is in ``pyproject.toml``.  ``optional=True``: without a C
compiler the install still succeeds and ``arena.envs.observation`` uses its pure-Python encoder.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "arena.envs._obsfast",
            ["arena/envs/_obsfast.c"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)
