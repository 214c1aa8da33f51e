// {{name}}: a Polignac bot in Java, made by `polignac bot new`.
//
// It speaks the stdio transport (docs/stdio-protocol.md of Polignac Arena): the arena
// writes one JSON object per line on stdin, and the bot answers each "decision_request"
// with one line on stdout.  Gson (com.google.gson) reads and writes the lines.
//
// The strategy, the same in every starter kit, reads the game from the ruleset alone: pass
// in the auction; lead the weakest card; take a trick only when it is worth taking (where
// tricks score for their taker, as in Knaves: then lead the strongest), with the weakest
// card that takes it; otherwise duck under the winning card, shedding the most dangerous
// card that does not take the trick (the most points, then the highest).  Trumps (the suit
// of the view's turned card) beat every other suit.

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToIntFunction;

public final class Bot {
    static final String NAME = "{{name}}";

    /** What the bot needs from the welcome's ruleset to judge cards and tricks. */
    record Game(String trickOrder, Map<String, Integer> points, int gain) {
        static Game of(JsonObject ruleset) {
            Map<String, Integer> points = new HashMap<>(); // points against whoever takes the card
            for (var entry : ruleset.getAsJsonObject("penalty_cards").entrySet()) {
                points.put(entry.getKey(), entry.getValue().getAsInt());
            }
            int trickPoints = ruleset.get("trick_points").getAsInt();
            // Trick points count against you where lower totals are better.
            int gain = "higher".equals(ruleset.get("direction").getAsString()) ? trickPoints : -trickPoints;
            return new Game(ruleset.get("trick_order").getAsString(), points, gain);
        }

        /** How high a card ranks within its suit: higher takes the trick. */
        int strength(String card) {
            return trickOrder.length() - trickOrder.indexOf(card.charAt(0));
        }

        int points(String card) {
            return points.getOrDefault(card, 0);
        }

        String chooseCard(List<String> legal, List<String> trick, char trump) {
            // Trumps above the plain suits, then trick order.
            Comparator<String> power = Comparator.comparingInt(c -> strength(c) + (suit(c) == trump ? 100 : 0));
            String weakest = legal.stream().min(power).orElseThrow();
            if (trick.isEmpty()) { // leading
                return gain > 0 ? legal.stream().max(power).orElseThrow() : weakest;
            }
            char led = suit(trick.get(0));
            // The highest trump takes the trick, else the highest card of the suit led.
            ToIntFunction<String> standing =
                    c -> suit(c) == trump ? 200 + strength(c) : suit(c) == led ? 100 + strength(c) : 0;
            int best = trick.stream().mapToInt(standing).max().orElse(0);
            int worth = gain - trick.stream().mapToInt(this::points).sum();
            if (worth > 0) { // worth taking: the weakest card that takes it and keeps it worth taking
                return legal.stream()
                        .filter(c -> standing.applyAsInt(c) > best && worth - points(c) > 0)
                        .min(power)
                        .orElse(weakest);
            }
            // Duck under the winning card, shedding the most points, then the highest card.
            return legal.stream()
                    .filter(c -> standing.applyAsInt(c) < best)
                    .max(Comparator.<String>comparingInt(this::points).thenComparingInt(this::strength))
                    .orElse(weakest);
        }
    }

    static char suit(String card) {
        return card.charAt(card.length() - 1);
    }

    static List<String> strings(JsonElement array) {
        List<String> out = new ArrayList<>();
        array.getAsJsonArray().forEach(item -> out.add(item.getAsString()));
        return out;
    }

    public static void main(String[] args) throws Exception {
        var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Game game = null;
        for (String line; (line = in.readLine()) != null; ) {
            JsonObject message = JsonParser.parseString(line).getAsJsonObject();
            switch (message.get("type").getAsString()) {
                case "welcome" -> game = Game.of(message.getAsJsonObject("ruleset"));
                case "decision_request" -> {
                    JsonObject answer = new JsonObject();
                    answer.add("request_id", message.get("request_id"));
                    if (message.get("kind").getAsString().equals("contract")) {
                        answer.addProperty("contract", "pass");
                    } else {
                        JsonObject view = message.getAsJsonObject("view");
                        List<String> trick = new ArrayList<>();
                        view.getAsJsonArray("current_trick").forEach(p -> trick.add(p.getAsJsonObject().get("card").getAsString()));
                        String turned = view.get("turned").getAsString();
                        char trump = turned.isEmpty() ? ' ' : suit(turned); // ' ': no trumps
                        List<String> legal = strings(message.get("legal_cards"));
                        answer.addProperty("card", game.chooseCard(legal, trick, trump));
                        answer.addProperty("debug", "legal cards: " + legal.size()); // your notes: beside the step in replays, for you alone
                    }
                    System.out.println(answer); // one line per answer; System.out flushes at each line end
                    System.out.flush();
                }
                case "fault_notice" -> System.err.println(NAME + ": fault " + message.get("fault") + ": " + message.get("detail"));
                case "match_ended" -> { return; }
                default -> { } // events, and message types of later protocol versions
            }
        }
    }
}
