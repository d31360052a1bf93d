"""Ratings for Pool Arena: Elo, OpenSkill (Weng-Lin Plackett-Luce) and a batch Plackett-Luce fit.

Pure functions of a list of :class:`GameResult` (bot ids by seat, placings, scores): nothing here
reads a database, the engine or a clock. Most callers want :func:`rate`, which returns one
:class:`Rating` row per bot, best first, with an interval, in any system of the registry
(:mod:`arena.ratings.systems`: :data:`RATING_SYSTEMS`, one :class:`RatingSystem` each). The
system modules expose more (:func:`fit_plackett_luce` gives seat advantages;
:func:`elo_diff_from_share` reports a candidate against a baseline).
"""

from __future__ import annotations

from arena.ratings.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    percentile_interval,
    replicate_order,
    resample_counts,
)
from arena.ratings.elo import (
    ELO_INITIAL,
    ELO_K,
    ELO_SCALE,
    EloRatings,
    elo_diff_from_share,
    elo_game_deltas,
    elo_ratings,
    elo_replicates,
    expected_score,
    share_from_elo_diff,
)
from arena.ratings.errors import (
    DuplicateRatingSystemError,
    RatingConvergenceError,
    RatingError,
    RatingInputError,
    UnknownRatingSystemError,
)
from arena.ratings.openskill import (
    OpenSkillParams,
    OpenSkillRatings,
    Skill,
    openskill_ratings,
    plackett_luce_update,
)
from arena.ratings.plackett_luce import (
    PL_INITIAL,
    PL_RIDGE,
    PL_SCALE,
    Estimate,
    PLFit,
    SeatKey,
    fit_plackett_luce,
    log_strength_to_rating,
    pl_log_likelihood,
)
from arena.ratings.rating import Rating
from arena.ratings.results import GameResult, placings_from_scores
from arena.ratings.systems import (
    DEFAULT_SYSTEM,
    RATING_SYSTEMS,
    RateSettings,
    RatingSystem,
    get_system,
    register,
    system_names,
    unregister,
)
from arena.ratings.table import rate

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "DEFAULT_SYSTEM",
    "ELO_INITIAL",
    "ELO_K",
    "ELO_SCALE",
    "PL_INITIAL",
    "PL_RIDGE",
    "PL_SCALE",
    "RATING_SYSTEMS",
    "DuplicateRatingSystemError",
    "EloRatings",
    "Estimate",
    "GameResult",
    "OpenSkillParams",
    "OpenSkillRatings",
    "PLFit",
    "RateSettings",
    "Rating",
    "RatingConvergenceError",
    "RatingError",
    "RatingInputError",
    "RatingSystem",
    "SeatKey",
    "Skill",
    "UnknownRatingSystemError",
    "elo_diff_from_share",
    "elo_game_deltas",
    "elo_ratings",
    "elo_replicates",
    "expected_score",
    "fit_plackett_luce",
    "get_system",
    "log_strength_to_rating",
    "openskill_ratings",
    "percentile_interval",
    "pl_log_likelihood",
    "placings_from_scores",
    "plackett_luce_update",
    "rate",
    "register",
    "replicate_order",
    "resample_counts",
    "share_from_elo_diff",
    "system_names",
    "unregister",
]
