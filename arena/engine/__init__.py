"""The rules engine of Cool am Pool: pure, deterministic, standard library only.

Typical use::

    from arena.engine import new_game, legal_actions, apply, apply_throw, stream_faces
    s = new_game(2)
    s = apply(s, "place green-4a")

See ``docs/rules.md`` for the rules (R1-R28) that the tests pin.  The rules are a value
(:class:`Rules`, carried by every state): ``new_game(2, by_name("sprint"))`` plays a variant, and
records replay under the released version their header names (:mod:`arena.engine.variants`).
"""

from .actions import Action, ActionKind, format_action, parse_action
from .board import COLOURS, FACES, LIFEGUARD, LOUNGERS, TRACK, Lounger
from .chance import DiceStream, stream_faces, throw_distribution, throw_distribution_float
from .errors import (
    EngineError,
    IllegalActionError,
    IllegalThrowError,
    InvalidActionError,
    NotationError,
    ReplayError,
)
from .game import PlayedGame, play_game, play_out
from .notation import format_throw, parse_throw
from .policies import GreedyPolicy, Policy, RandomPolicy, make_policy
from .record import RecordWriter, Replay, replay
from .render import render
from .rules import apply, apply_throw, apply_throw_counts, legal_actions, reachable
from .scoring import Outcome, outcome, placings, scores
from .snapshot import from_snapshot, to_snapshot
from .state import Phase, State, Termination, new_game
from .variants import RELEASED, Rules, UnknownRulesError, by_name, by_version, variants

__all__ = [
    "COLOURS",
    "FACES",
    "LIFEGUARD",
    "LOUNGERS",
    "RELEASED",
    "TRACK",
    "Action",
    "ActionKind",
    "DiceStream",
    "EngineError",
    "GreedyPolicy",
    "IllegalActionError",
    "IllegalThrowError",
    "InvalidActionError",
    "Lounger",
    "NotationError",
    "Outcome",
    "Phase",
    "PlayedGame",
    "Policy",
    "RandomPolicy",
    "RecordWriter",
    "Replay",
    "ReplayError",
    "Rules",
    "State",
    "Termination",
    "UnknownRulesError",
    "apply",
    "apply_throw",
    "apply_throw_counts",
    "by_name",
    "by_version",
    "format_action",
    "format_throw",
    "from_snapshot",
    "legal_actions",
    "make_policy",
    "new_game",
    "outcome",
    "parse_action",
    "parse_throw",
    "placings",
    "play_game",
    "play_out",
    "reachable",
    "render",
    "replay",
    "scores",
    "stream_faces",
    "throw_distribution",
    "throw_distribution_float",
    "to_snapshot",
    "variants",
]
