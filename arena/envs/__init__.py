"""Cool am Pool for reinforcement learning and game-theory tools.

* :mod:`arena.envs.actions`: every action of the notation with a stable index (the fixed
  ``Discrete(376)`` action space) and the chance outcomes of a throw;
* :mod:`arena.envs.observation`: the numpy observation with a documented layout, and the mask;
* :mod:`arena.envs.episode`: one game driven by action indices, chance resolved from the §5 dice
  stream of a seed, rewards at the end, the game record;
* :mod:`arena.envs.pettingzoo`: a PettingZoo AEC environment (needs the ``rl`` extra);
* :mod:`arena.envs.openspiel`: the game registered with OpenSpiel as ``python_cool_am_pool``
  (needs the ``rl`` extra);
* :mod:`arena.envs.adapter`: a trained policy or an OpenSpiel bot as an arena bot.

The core modules (actions, observation, episode, render) need only numpy; importing the
PettingZoo or OpenSpiel module without its package raises :class:`MissingExtraError` naming the
extra to install.  See ``docs/envs.md``.
"""

from __future__ import annotations


class MissingExtraError(ImportError):
    """An optional package of the ``rl`` extra is not installed."""


def require(module: str, package: str) -> None:
    """Raise :class:`MissingExtraError` unless ``module`` can be imported."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise MissingExtraError(
            f"{package} is not installed: arena.envs needs the 'rl' extra for it "
            f"(pip install 'pool-arena[rl]', or ./dev test, which installs it)"
        )
