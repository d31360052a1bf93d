"""The compiled parts, both optional accelerators of Python code that stays the definition:
the engine's state copy (``arena/engine/_statecopy.c``) and the environments' observation encoder
(``arena/envs/_obsfast.c``).

Everything else about the package is in ``pyproject.toml``.  ``optional=True``: without a C
compiler the install still succeeds and the pure-Python code runs (``ARENA_PURE_PYTHON=1``
selects it anyway).
"""

from setuptools import Extension, setup

FLAGS = ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]

setup(
    ext_modules=[
        Extension(
            "arena.engine._statecopy", ["arena/engine/_statecopy.c"], extra_compile_args=FLAGS, optional=True
        ),
        Extension("arena.envs._obsfast", ["arena/envs/_obsfast.c"], extra_compile_args=FLAGS, optional=True),
    ]
)
