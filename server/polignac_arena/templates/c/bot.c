/*
 * {{name}}: a Polignac bot in C, started by `polignac bot new`.  It speaks the stdio
 * JSON-lines protocol (docs/stdio-protocol.md of Polignac Arena).
 *
 * The arena writes one JSON object per line on stdin; the bot answers each
 * "decision_request" with one line on stdout and flushes it.  The JSON is scanned by
 * hand (the arena writes compact JSON, keys in a fixed order): enough for this bot,
 * not a general parser.
 *
 * The strategy, the same in every starter kit, reads the game from the ruleset alone:
 * pass in the auction; lead the weakest card; take a trick only when it is worth taking
 * (where tricks score for their taker, as in Knaves: then lead the strongest), with the
 * weakest card that takes it; otherwise duck under the winning card, shedding the most
 * dangerous card that does not take the trick (the most points, then the highest).
 * Trumps (the suit of the view's turned card) beat every other suit.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CARDS 52

/* What the welcome's ruleset says (these defaults are the classic game's). */
static char trick_order[16] = "KQJAT987"; /* ranks from highest to lowest */
static char point_cards[MAX_CARDS][4];     /* the cards with points, counted against the taker */
static int point_values[MAX_CARDS];
static int point_count = 0;
static int trick_gain = 0; /* what taking a trick is worth, before the points of its cards */
static int legal_count = 0; /* the last request's legal cards, for the debug text */

/* The value after "key": in text (at or after from), or NULL. */
static const char *value_of(const char *from, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    const char *p = strstr(from, pattern);
    if (p == NULL) return NULL;
    p += strlen(pattern);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

/* Copy the JSON string at p (no escapes expected) into out; returns the text after it or NULL. */
static const char *read_string(const char *p, char *out, size_t size) {
    if (*p != '"') return NULL;
    p++;
    size_t n = 0;
    while (*p != '\0' && *p != '"') {
        if (n + 1 < size) out[n++] = *p;
        p++;
    }
    out[n] = '\0';
    return *p == '"' ? p + 1 : NULL;
}

/* The cards of the JSON array of strings at p, such as ["7S","JH"]; returns how many. */
static int read_cards(const char *p, char cards[][4], int max) {
    int n = 0;
    if (p == NULL || *p != '[') return 0;
    p++;
    while (*p != '\0' && *p != ']' && n < max) {
        if (*p == '"') {
            p = read_string(p, cards[n], sizeof cards[n]);
            if (p == NULL) break;
            n++;
        } else {
            p++;
        }
    }
    return n;
}

/* How high a card ranks in trick order: larger is higher. */
static int strength(const char *card) {
    const char *r = strchr(trick_order, card[0]);
    return r == NULL ? 0 : (int)(strlen(trick_order) - (size_t)(r - trick_order));
}

static char suit(const char *card) { return card[strlen(card) - 1]; }

/* Trumps above the other cards, then trick order: to find the weakest or strongest card. */
static int power(const char *card, char trump) { return (suit(card) == trump ? 100 : 0) + strength(card); }

/* How a card stands in a trick: the highest trump takes it, or the highest card of the suit led. */
static int standing(const char *card, char led, char trump) {
    return (suit(card) == trump ? 200 : suit(card) == led ? 100 : 0) + strength(card);
}

/* The points of a card, counted against whoever takes it. */
static int points_of(const char *card) {
    for (int i = 0; i < point_count; i++)
        if (strcmp(point_cards[i], card) == 0) return point_values[i];
    return 0;
}

/* The cards to shed first when ducking: the most points, then the highest. */
static int danger(const char *card) { return 100 * points_of(card) + strength(card); }

/* The welcome line: trick order, the cards with points, and what a trick is worth. */
static void read_ruleset(const char *line) {
    const char *p = value_of(line, "trick_order");
    if (p != NULL) read_string(p, trick_order, sizeof trick_order);
    p = value_of(line, "penalty_cards"); /* {"JC":1,"JD":1,"JH":1,"JS":2} */
    point_count = 0;
    if (p != NULL && *p == '{') {
        p++;
        while (*p == '"' && point_count < MAX_CARDS) {
            p = read_string(p, point_cards[point_count], sizeof point_cards[point_count]);
            if (p == NULL || *p != ':') break;
            char *end;
            point_values[point_count++] = (int)strtol(p + 1, &end, 10);
            p = *end == ',' ? end + 1 : end;
        }
    }
    /* Points for a trick are added to the score as they are: good when higher is better,
       bad when lower is (a referee older than protocol 1.1 sends neither key: lower). */
    char direction[16] = "lower";
    p = value_of(line, "direction");
    if (p != NULL) read_string(p, direction, sizeof direction);
    p = value_of(line, "trick_points");
    int trick_points = p != NULL ? atoi(p) : 0;
    trick_gain = strcmp(direction, "higher") == 0 ? trick_points : -trick_points;
}

/* The cards played so far to the current trick, in play order (the leader first). */
static int current_trick(const char *line, char cards[][4], int max) {
    const char *p = value_of(line, "current_trick");
    if (p == NULL || *p != '[') return 0;
    const char *end = strchr(p, ']'); /* plays are flat objects: the first ']' closes the array */
    int n = 0;
    while (n < max && (p = value_of(p, "card")) != NULL && p < end) {
        p = read_string(p, cards[n], sizeof cards[n]);
        if (p == NULL) break;
        n++;
    }
    return n;
}

static const char *choose_card(const char *line) {
    static char legal[MAX_CARDS][4];
    char trick[8][4], turned[4] = "";
    int n = read_cards(value_of(line, "legal_cards"), legal, MAX_CARDS);
    legal_count = n;
    int played = current_trick(line, trick, 8);
    const char *p = value_of(line, "turned"); /* "" when the game has no trumps */
    if (p != NULL) read_string(p, turned, sizeof turned);
    char trump = turned[0] != '\0' ? suit(turned) : '\0';
    if (n == 0) return "??"; /* cannot happen: the referee always offers a legal card */
    int weakest = 0, strongest = 0;
    for (int i = 1; i < n; i++) {
        if (power(legal[i], trump) < power(legal[weakest], trump)) weakest = i;
        if (power(legal[i], trump) > power(legal[strongest], trump)) strongest = i;
    }
    if (played == 0) return legal[trick_gain > 0 ? strongest : weakest]; /* leading */
    char led = suit(trick[0]);
    int best = 0, taken = 0;
    for (int i = 0; i < played; i++) {
        if (standing(trick[i], led, trump) > best) best = standing(trick[i], led, trump);
        taken += points_of(trick[i]);
    }
    int pick = -1;
    for (int i = 0; i < n; i++) {
        int takes = standing(legal[i], led, trump) > best;
        if (trick_gain - taken > 0) { /* worth taking: the weakest card that takes it and keeps it worth it */
            if (takes && trick_gain - taken - points_of(legal[i]) > 0 && (pick < 0 || power(legal[i], trump) < power(legal[pick], trump)))
                pick = i;
        } else if (!takes && (pick < 0 || danger(legal[i]) > danger(legal[pick]))) { /* duck, shedding the worst card */
            pick = i;
        }
    }
    return legal[pick >= 0 ? pick : weakest];
}

int main(void) {
    char *line = NULL;
    size_t capacity = 0;
    char type[32];
    while (getline(&line, &capacity, stdin) > 0) {
        const char *p = value_of(line, "type");
        if (p == NULL || read_string(p, type, sizeof type) == NULL) continue;
        if (strcmp(type, "welcome") == 0) {
            read_ruleset(line);
        } else if (strcmp(type, "decision_request") == 0) {
            unsigned long long request_id = strtoull(value_of(line, "request_id"), NULL, 10);
            char kind[16] = "";
            p = value_of(line, "kind");
            if (p != NULL) read_string(p, kind, sizeof kind);
            if (strcmp(kind, "contract") == 0)
                printf("{\"request_id\":%llu,\"contract\":\"pass\"}\n", request_id);
            else { /* debug: your notes on this decision, beside the step in replays, for you alone */
                const char *card = choose_card(line);
                printf("{\"request_id\":%llu,\"card\":\"%s\",\"debug\":\"legal cards: %d\"}\n", request_id, card, legal_count);
            }
            fflush(stdout); /* the arena reads a line only once it arrives */
        } else if (strcmp(type, "fault_notice") == 0) {
            fprintf(stderr, "{{name}}: fault: %s", line);
        } else if (strcmp(type, "match_ended") == 0) {
            break;
        }
    }
    free(line);
    return 0;
}
