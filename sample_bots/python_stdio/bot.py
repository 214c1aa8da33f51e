"""A Polignac bot speaking the stdio JSON-lines protocol (docs/stdio-protocol.md): no SDK, no gRPC.

The arena writes one JSON object per line on stdin; this bot answers each
``decision_request`` with one line on stdout and flushes it.

The strategy, the same as the starter kits' (docs/languages.md), reads the game from the
ruleset alone: pass in the auction; lead the weakest card; take a trick only when it is
worth taking (where tricks score for their taker, as in Knaves: then lead the strongest),
with the weakest card that takes it; otherwise duck under the winning card, shedding the
most dangerous card that does not take the trick (the most points, then the highest).
Trumps (the suit of the view's turned card) beat every other suit.
"""

import json
import sys

NAME = "python-stdio"


def strength(card: str, order: str) -> int:
    """How high a card ranks in trick order (``order`` lists ranks from highest to lowest)."""
    return len(order) - order.index(card[0])


def game_of(ruleset: dict) -> dict:
    """What the welcome's ruleset says a trick is worth."""
    # Points for a trick are added to the score as they are: good when higher is better,
    # bad when lower is (a referee older than protocol 1.1 sends no direction: lower).
    sign = 1 if ruleset.get("direction") == "higher" else -1
    return {"order": ruleset["trick_order"], "points": ruleset["penalty_cards"], "gain": sign * ruleset.get("trick_points", 0)}


def choose_card(request: dict, game: dict) -> str:
    order, points, gain = game["order"], game["points"], game["gain"]
    turned = request["view"].get("turned") or ""
    trump = turned[-1:]  # the trump suit's letter, empty when the game has no trumps
    legal = request["legal_cards"]

    def power(card: str) -> int:  # trumps above the plain suits, then trick order
        return strength(card, order) + (100 if card[-1] == trump else 0)

    weakest_first = sorted(legal, key=power)  # stable: of equal cards, the first in legal order
    trick = [p["card"] for p in request["view"]["current_trick"]]
    if not trick:
        return max(legal, key=power) if gain > 0 else weakest_first[0]
    led = trick[0][-1]

    def standing(card: str) -> int:  # the highest trump takes the trick, else the highest of the suit led
        return (200 if card[-1] == trump else 100 if card[-1] == led else 0) + strength(card, order)

    best = max(map(standing, trick))
    worth = gain - sum(points.get(c, 0) for c in trick)
    if worth > 0:
        takers = [c for c in weakest_first if standing(c) > best and worth - points.get(c, 0) > 0]
        return takers[0] if takers else weakest_first[0]
    ducks = [c for c in legal if standing(c) < best]  # shed the most points, then the highest card
    return max(ducks, key=lambda c: (points.get(c, 0), strength(c, order))) if ducks else weakest_first[0]


def main() -> None:
    game = game_of({"trick_order": "KQJAT987", "penalty_cards": {}})
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "welcome":
            game = game_of(message["ruleset"])
        elif kind == "decision_request":
            answer = {"request_id": message["request_id"]}
            if message["kind"] == "contract":
                answer["contract"] = "pass"
            else:
                answer["card"] = choose_card(message, game)
                answer["debug"] = f"legal cards: {len(message['legal_cards'])}"  # its notes: beside the step in replays
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()  # the arena reads a line only once it arrives
        elif kind == "fault_notice":
            print(f"{NAME}: fault {message['fault']}: {message['detail']}", file=sys.stderr)
        elif kind == "match_ended":
            print(f"{NAME}: match {message['status']}, places {message['places']}", file=sys.stderr)
            break


if __name__ == "__main__":
    main()
