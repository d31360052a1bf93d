"""Playing strength: the exact one-ply greedy, the turn expectimax search and their evaluations.

* :mod:`arena.strength.dice` -- dice multisets as ints and the exact throw outcomes (R1, R11-R13);
* :mod:`arena.strength.worth` -- what a lounger action is worth to the seat to act (points now,
  or points with the future folded in), and the leaf table the rolling planners read;
* :mod:`arena.strength.rolling` -- the exact expectimax over a turn's rolling and the one-ply
  look-ahead of the greedy;
* :mod:`arena.strength.greedy` -- the sample ``greedy`` (one-ply, exact throw distribution);
* :mod:`arena.strength.search` -- the sample ``search`` (turn expectimax, future-aware worths,
  a pluggable leaf evaluation);
* :mod:`arena.strength.decisions` -- :func:`decision_values`, every legal decision's expected worth;
* :mod:`arena.strength.duel` -- fast in-process duplicate-dice games, for tuning.
"""
