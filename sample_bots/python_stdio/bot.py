"""A Polignac bot speaking the stdio JSON-lines protocol (docs/stdio-protocol.md): no SDK, no gRPC.

The arena writes one JSON object per line on stdin; this bot answers each
``decision_request`` with one line on stdout and flushes it.  Strategy: pass in the
auction; play the highest legal card that does not take the trick, or the lowest
card when every legal card would take it (or when leading).  Where a trick scores for
its taker (the ruleset's ``direction`` is ``higher``: Knaves) it takes the trick with its
lowest card that does.  A card of the trump suit (the suit of the view's ``turned`` card,
where the protocol carries one) beats any card of another suit.
"""

import json
import sys

NAME = "python-stdio"


def strength(card: str, order: str) -> int:
    """How high a card ranks in trick order (``order`` lists ranks from highest to lowest)."""
    return len(order) - order.index(card[0])


def beats(card: str, best: str, order: str, trump: str) -> bool:
    """True when ``card`` takes a trick whose winning card so far is ``best``."""
    if card[-1] == best[-1]:
        return strength(card, order) > strength(best, order)
    return card[-1] == trump


def choose_card(request: dict, order: str, takes_tricks: bool) -> str:
    legal = request["legal_cards"]
    view = request["view"]
    trump = (view.get("turned") or "")[-1:]  # "" when no card is turned for trumps
    trick = [p["card"] for p in view["current_trick"]]

    def low_first(card: str) -> tuple:
        return card[-1] == trump, strength(card, order)

    if trick:
        best = trick[0]
        for card in trick[1:]:
            if beats(card, best, order, trump):
                best = card
        winners = [c for c in legal if beats(c, best, order, trump)]
        if takes_tricks and winners:
            return min(winners, key=low_first)
        ducks = [c for c in legal if c not in winners]
        if ducks:
            return max(ducks, key=lambda c: strength(c, order))
    return min(legal, key=low_first)


def main() -> None:
    order = "KQJAT987"
    takes_tricks = False
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "welcome":
            order = message["ruleset"]["trick_order"]
            takes_tricks = message["ruleset"].get("direction") == "higher"
        elif kind == "decision_request":
            answer = {"request_id": message["request_id"]}
            if message["kind"] == "contract":
                answer["contract"] = "pass"
            else:
                answer["card"] = choose_card(message, order, takes_tricks)
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()  # the arena reads a line only once it arrives
        elif kind == "fault_notice":
            print(f"{NAME}: fault {message['fault']}: {message['detail']}", file=sys.stderr)
        elif kind == "match_ended":
            print(f"{NAME}: match {message['status']}, places {message['places']}", file=sys.stderr)
            break


if __name__ == "__main__":
    main()
