//! {{name}}: a Polignac bot in Rust, made by `polignac bot new`.
//!
//! It speaks the stdio transport (docs/stdio-protocol.md of Polignac Arena): the arena
//! writes one JSON object per line on stdin, and the bot answers each "decision_request"
//! with one line on stdout.  `serde_json` reads and writes the lines.
//!
//! The strategy, the same in every starter kit, reads the game from the ruleset alone: pass
//! in the auction; lead the weakest card; take a trick only when it is worth taking (where
//! tricks score for their taker, as in Knaves: then lead the strongest), with the weakest
//! card that takes it; otherwise duck under the winning card, shedding the most dangerous
//! card that does not take the trick (the most points, then the highest).  Trumps (the suit
//! of the view's turned card) beat every other suit.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{self, BufRead, Write};

const NAME: &str = "{{name}}";

/// What the bot needs from the welcome's ruleset to judge cards and tricks.
struct Game {
    trick_order: String,         // ranks, highest first: "KQJAT987"
    points: HashMap<String, i64>, // points against whoever takes the card
    gain: i64,                   // what taking a trick is worth before the points of its cards
}

impl Game {
    fn from_ruleset(ruleset: &Value) -> Game {
        let points = ruleset["penalty_cards"].as_object().map_or_else(HashMap::new, |cards| {
            cards.iter().map(|(card, p)| (card.clone(), p.as_i64().unwrap_or(0))).collect()
        });
        let trick_points = ruleset["trick_points"].as_i64().unwrap_or(0);
        // Trick points count against you where lower totals are better.
        let gain = if ruleset["direction"] == "higher" { trick_points } else { -trick_points };
        let trick_order = ruleset["trick_order"].as_str().unwrap_or("KQJAT987").to_string();
        Game { trick_order, points, gain }
    }

    /// How high a card ranks within its suit: higher takes the trick.
    fn strength(&self, card: &str) -> i64 {
        let rank = card.chars().next().unwrap_or(' ');
        self.trick_order.find(rank).map_or(0, |i| (self.trick_order.len() - i) as i64)
    }

    fn points(&self, card: &str) -> i64 {
        self.points.get(card).copied().unwrap_or(0)
    }

    fn choose_card<'a>(&self, legal: &[&'a str], trick: &[&str], trump: Option<char>) -> &'a str {
        // Trumps above the plain suits, then trick order.
        let power = |c: &str| self.strength(c) + if Some(suit(c)) == trump { 100 } else { 0 };
        // Of equal cards, the first in legal order (max_by_key keeps the last: so it looks from the end).
        let weakest = *legal.iter().min_by_key(|c| power(c)).expect("the referee always offers a card");
        let strongest = *legal.iter().rev().max_by_key(|c| power(c)).expect("the referee always offers a card");
        if trick.is_empty() {
            return if self.gain > 0 { strongest } else { weakest }; // leading
        }
        let led = suit(trick[0]);
        // The highest trump takes the trick, else the highest card of the suit led.
        let standing = |c: &str| match suit(c) {
            s if Some(s) == trump => 200 + self.strength(c),
            s if s == led => 100 + self.strength(c),
            _ => 0,
        };
        let best = trick.iter().map(|c| standing(c)).max().unwrap_or(0);
        let worth = self.gain - trick.iter().map(|c| self.points(c)).sum::<i64>();
        if worth > 0 {
            // Worth taking: the weakest card that takes it and keeps it worth taking.
            let takers = legal.iter().filter(|c| standing(c) > best && worth - self.points(c) > 0);
            return takers.min_by_key(|c| power(c)).copied().unwrap_or(weakest);
        }
        // Duck under the winning card, shedding the most points, then the highest card.
        let ducks = legal.iter().rev().filter(|c| standing(c) < best);
        ducks.max_by_key(|c| (self.points(c), self.strength(c))).copied().unwrap_or(weakest)
    }
}

fn suit(card: &str) -> char {
    card.chars().last().unwrap_or(' ')
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().map_or_else(Vec::new, |items| items.iter().filter_map(Value::as_str).collect())
}

fn main() {
    let mut game = Game::from_ruleset(&Value::Null);
    let stdout = io::stdout();
    for line in io::stdin().lock().lines().map_while(Result::ok) {
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(error) => {
                eprintln!("{NAME}: cannot read a line: {error}");
                continue;
            }
        };
        match message["type"].as_str().unwrap_or("") {
            "welcome" => game = Game::from_ruleset(&message["ruleset"]),
            "decision_request" => {
                let id = &message["request_id"];
                let answer = if message["kind"] == "contract" {
                    json!({"request_id": id, "contract": "pass"})
                } else {
                    let view = &message["view"];
                    let trick: Vec<&str> = view["current_trick"].as_array().map_or_else(Vec::new, |plays| {
                        plays.iter().filter_map(|p| p["card"].as_str()).collect()
                    });
                    let trump = view["turned"].as_str().filter(|t| !t.is_empty()).map(suit);
                    let legal = strings(&message["legal_cards"]);
                    let debug = format!("legal cards: {}", legal.len()); // your notes: beside the step in replays, for you alone
                    json!({"request_id": id, "card": game.choose_card(&legal, &trick, trump), "debug": debug})
                };
                let mut out = stdout.lock();
                // One line per answer, flushed: the arena reads an answer only once it arrives.
                if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
                    break;
                }
            }
            "fault_notice" => eprintln!("{NAME}: fault {}: {}", message["fault"], message["detail"]),
            "match_ended" => break,
            _ => {} // events, and message types of later protocol versions
        }
    }
}
