"""A Polignac bot speaking the stdio JSON-lines protocol (docs/stdio-protocol.md): no SDK, no gRPC.

The arena writes one JSON object per line on stdin; this bot answers each
``decision_request`` with one line on stdout and flushes it.  Strategy: pass in the
auction; play the highest legal card that does not take the trick, or the lowest
card when every legal card would take it (or when leading).
"""

import json
import sys

NAME = "python-stdio"


def strength(card: str, order: str) -> int:
    """How high a card ranks in trick order (``order`` lists ranks from highest to lowest)."""
    return len(order) - order.index(card[0])


def choose_card(request: dict, order: str) -> str:
    legal = request["legal_cards"]
    trick = request["view"]["current_trick"]
    if trick:
        led = trick[0]["card"][-1]
        best = max(strength(p["card"], order) for p in trick if p["card"][-1] == led)
        ducks = [c for c in legal if c[-1] != led or strength(c, order) < best]
        if ducks:
            return max(ducks, key=lambda c: strength(c, order))
    return min(legal, key=lambda c: strength(c, order))


def main() -> None:
    order = "KQJAT987"
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"]
        if kind == "welcome":
            order = message["ruleset"]["trick_order"]
        elif kind == "decision_request":
            answer = {"request_id": message["request_id"]}
            if message["kind"] == "contract":
                answer["contract"] = "pass"
            else:
                answer["card"] = choose_card(message, order)
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()  # the arena reads a line only once it arrives
        elif kind == "fault_notice":
            print(f"{NAME}: fault {message['fault']}: {message['detail']}", file=sys.stderr)
        elif kind == "match_ended":
            print(f"{NAME}: match {message['status']}, places {message['places']}", file=sys.stderr)
            break


if __name__ == "__main__":
    main()
