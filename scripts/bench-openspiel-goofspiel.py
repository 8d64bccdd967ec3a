#!/usr/bin/env python3
"""Baseline: random Goofspiel games per second in OpenSpiel, driven from Python.

What it measures
    How many complete, uniformly random games of Goofspiel OpenSpiel plays per
    second when every step goes through its Python API (pyspiel), so the figure
    can be set beside the `goofspiel-13` line of `croupier bench` from the same
    run on the same machine.  Rules: 13 cards, 2 players, prize cards in random
    order (explicit chance nodes), simultaneous sealed bids, a tie discards the
    prize.  The game is loaded as

        pyspiel.load_game("goofspiel", {"num_cards": 13, "players": 2,
                                         "points_order": "random",
                                         "imp_info": True,
                                         "returns_type": "point_difference"})

    Each game: `game.new_initial_state()`, then until terminal: a chance node
    samples an outcome by its probabilities; a simultaneous node picks one
    random legal action per player and calls `apply_actions`; any other node
    applies one random legal action.  Game creation, the Python loop and the
    random choices are all inside the timed region, as they are in
    `croupier bench`.

Output
    One JSON line, e.g.
    {"bench":"rules","game":"goofspiel-13","impl":"openspiel-python","games_per_sec":12345.0}

Install OpenSpiel (in a virtualenv outside the repository)
    python3 -m venv /tmp/ospvenv
    /tmp/ospvenv/bin/pip install open_spiel      # PyPI package, version 2.x
    /tmp/ospvenv/bin/python scripts/bench-openspiel-goofspiel.py --seconds 3

Only pyspiel and the standard library are used.
"""

import argparse
import json
import random
import sys
import time

GAME_PARAMS = {
    "num_cards": 13,
    "players": 2,
    "points_order": "random",
    "imp_info": True,
    "returns_type": "point_difference",
}


def play_random_game(game, rng):
    """Plays one uniformly random game to the end."""
    state = game.new_initial_state()
    num_players = game.num_players()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, weights=probs)[0])
        elif state.is_simultaneous_node():
            state.apply_actions(
                [rng.choice(state.legal_actions(p)) for p in range(num_players)]
            )
        else:
            state.apply_action(rng.choice(state.legal_actions()))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=(
            "Random Goofspiel-13 games per second in OpenSpiel's Python API "
            "(baseline for `croupier bench`). Needs open_spiel: "
            "python3 -m venv /tmp/ospvenv && /tmp/ospvenv/bin/pip install open_spiel"
        )
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=2.0,
        help="seconds to measure for (default: 2.0)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0xBE7C4,
        help="seed of the random generator (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    if not 0.0 < args.seconds <= 600.0:
        parser.error("--seconds must be between 0 and 600")

    try:
        import pyspiel
    except ImportError as e:
        sys.exit(
            f"cannot import pyspiel ({e}); install it in a venv: "
            "python3 -m venv /tmp/ospvenv && /tmp/ospvenv/bin/pip install open_spiel"
        )

    game = pyspiel.load_game("goofspiel", GAME_PARAMS)
    rng = random.Random(args.seed)

    games = 0
    start = time.perf_counter()
    deadline = start + args.seconds
    while True:
        play_random_game(game, rng)
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            break
    elapsed = now - start

    line = {
        "bench": "rules",
        "game": "goofspiel-13",
        "impl": "openspiel-python",
        "games_per_sec": float(round(games / elapsed)),
    }
    print(json.dumps(line, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
