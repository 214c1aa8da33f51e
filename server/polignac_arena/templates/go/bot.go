// {{name}}: a Polignac bot in Go, made by `polignac bot new`.
//
// It speaks the stdio transport (docs/stdio-protocol.md of Polignac Arena): the arena
// writes one JSON object per line on stdin, and the bot answers each "decision_request"
// with one line on stdout.  Only the standard library: encoding/json reads the lines.
//
// The strategy, the same in every starter kit, reads the game from the ruleset alone: pass
// in the auction; lead the weakest card; take a trick only when it is worth taking (where
// tricks score for their taker, as in Knaves: then lead the strongest), with the weakest
// card that takes it; otherwise duck under the winning card, shedding the most dangerous
// card that does not take the trick (the most points, then the highest).  Trumps (the suit
// of the view's turned card) beat every other suit.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const name = "{{name}}"

// Ruleset holds the fields of the welcome's ruleset that this bot reads.
type Ruleset struct {
	TrickOrder   string         `json:"trick_order"`   // ranks, highest first: "KQJAT987"
	PenaltyCards map[string]int `json:"penalty_cards"` // points against whoever takes the card
	TrickPoints  int            `json:"trick_points"`  // points for each trick taken
	Direction    string         `json:"direction"`     // "lower" or "higher" totals are better
}

// Play is one card played to a trick.
type Play struct {
	Seat int    `json:"seat"`
	Card string `json:"card"`
}

// View is what the seat may know; this bot reads the current trick and the turned card.
type View struct {
	CurrentTrick []Play `json:"current_trick"`
	Turned       string `json:"turned"` // the card turned for trumps, "" in a game without trumps
}

// Message is any line from the arena; each type fills the fields it has.
type Message struct {
	Type       string   `json:"type"`
	Ruleset    Ruleset  `json:"ruleset"`
	RequestID  uint64   `json:"request_id"`
	Kind       string   `json:"kind"`
	LegalCards []string `json:"legal_cards"`
	View       View     `json:"view"`
	Fault      string   `json:"fault"`
	Detail     string   `json:"detail"`
}

// Game is what the bot needs from the ruleset to judge cards and tricks.
type Game struct {
	rules Ruleset
	gain  int // what taking a trick is worth before the points of its cards
}

func newGame(rules Ruleset) Game {
	gain := -rules.TrickPoints // trick points count against you where lower totals are better
	if rules.Direction == "higher" {
		gain = rules.TrickPoints
	}
	return Game{rules, gain}
}

func suit(card string) byte { return card[len(card)-1] }

// strength ranks a card within its suit: higher takes the trick.
func (g Game) strength(card string) int {
	return len(g.rules.TrickOrder) - strings.IndexByte(g.rules.TrickOrder, card[0])
}

func (g Game) chooseCard(legal []string, view View) string {
	var trump byte // 0: no trumps
	if view.Turned != "" {
		trump = suit(view.Turned)
	}
	power := func(c string) int { // trumps above the plain suits, then trick order
		if suit(c) == trump {
			return 100 + g.strength(c)
		}
		return g.strength(c)
	}
	weakest, strongest := legal[0], legal[0]
	for _, c := range legal {
		if power(c) < power(weakest) {
			weakest = c
		}
		if power(c) > power(strongest) {
			strongest = c
		}
	}
	if len(view.CurrentTrick) == 0 { // leading
		if g.gain > 0 {
			return strongest
		}
		return weakest
	}
	led := suit(view.CurrentTrick[0].Card)
	standing := func(c string) int { // the highest trump takes the trick, else the highest of the suit led
		switch suit(c) {
		case trump:
			return 200 + g.strength(c)
		case led:
			return 100 + g.strength(c)
		}
		return 0
	}
	best, worth := 0, g.gain
	for _, p := range view.CurrentTrick {
		if standing(p.Card) > best {
			best = standing(p.Card)
		}
		worth -= g.rules.PenaltyCards[p.Card]
	}
	pick := ""
	for _, c := range legal {
		takes := standing(c) > best
		if worth > 0 { // worth taking: the weakest card that takes it and keeps it worth taking
			if takes && worth-g.rules.PenaltyCards[c] > 0 && (pick == "" || power(c) < power(pick)) {
				pick = c
			}
		} else if !takes && (pick == "" || g.danger(c) > g.danger(pick)) { // duck, shedding the worst card
			pick = c
		}
	}
	if pick == "" {
		return weakest
	}
	return pick
}

// danger orders the cards to shed: the most points first, then the highest.
func (g Game) danger(card string) int { return 100*g.rules.PenaltyCards[card] + g.strength(card) }

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20) // a line of the arena is a few KiB
	out := bufio.NewWriter(os.Stdout)
	game := newGame(Ruleset{TrickOrder: "KQJAT987"})
	for in.Scan() {
		var m Message
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			fmt.Fprintf(os.Stderr, "%s: cannot read a line: %v\n", name, err)
			continue
		}
		switch m.Type {
		case "welcome":
			game = newGame(m.Ruleset)
		case "decision_request":
			answer := map[string]any{"request_id": m.RequestID}
			if m.Kind == "contract" {
				answer["contract"] = "pass"
			} else {
				answer["card"] = game.chooseCard(m.LegalCards, m.View)
				answer["debug"] = fmt.Sprintf("legal cards: %d", len(m.LegalCards)) // your notes: beside the step in replays, for you alone
			}
			line, _ := json.Marshal(answer)
			out.Write(append(line, '\n'))
			out.Flush() // the arena reads an answer only once it arrives
		case "fault_notice":
			fmt.Fprintf(os.Stderr, "%s: fault %s: %s\n", name, m.Fault, m.Detail)
		case "match_ended":
			return
		}
	}
}
