/*
 * {{name}}: a Polignac bot in C, started by `polignac bot new`.  It speaks the stdio
 * JSON-lines protocol (docs/stdio-protocol.md of Polignac Arena).
 *
 * The arena writes one JSON object per line on stdin; the bot answers each
 * "decision_request" with one line on stdout and flushes it.  The JSON is scanned by
 * hand (the arena writes compact JSON, keys in a fixed order): enough for this bot,
 * not a general parser.
 *
 * Strategy: pass in the auction; play the highest legal card that does not take the
 * trick, or the lowest card when every legal card would take it (or when leading).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CARDS 32

static char trick_order[16] = "KQJAT987"; /* ranks from highest to lowest; the welcome says */

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
    char trick[8][4];
    int n = read_cards(value_of(line, "legal_cards"), legal, MAX_CARDS);
    int played = current_trick(line, trick, 8);
    if (n == 0) return "??"; /* cannot happen: the referee always offers a legal card */
    int best = -1;
    if (played > 0) {
        char led = suit(trick[0]);
        int winner = 0;
        for (int i = 0; i < played; i++)
            if (suit(trick[i]) == led && strength(trick[i]) > winner) winner = strength(trick[i]);
        for (int i = 0; i < n; i++) { /* the highest card that ducks under the winner */
            int ducks = suit(legal[i]) != led || strength(legal[i]) < winner;
            if (ducks && (best < 0 || strength(legal[i]) > strength(legal[best]))) best = i;
        }
    }
    if (best < 0) { /* leading, or every card takes the trick: the lowest */
        best = 0;
        for (int i = 1; i < n; i++)
            if (strength(legal[i]) < strength(legal[best])) best = i;
    }
    return legal[best];
}

int main(void) {
    char *line = NULL;
    size_t capacity = 0;
    char type[32];
    while (getline(&line, &capacity, stdin) > 0) {
        const char *p = value_of(line, "type");
        if (p == NULL || read_string(p, type, sizeof type) == NULL) continue;
        if (strcmp(type, "welcome") == 0) {
            p = value_of(line, "trick_order");
            if (p != NULL) read_string(p, trick_order, sizeof trick_order);
        } else if (strcmp(type, "decision_request") == 0) {
            unsigned long long request_id = strtoull(value_of(line, "request_id"), NULL, 10);
            char kind[16] = "";
            p = value_of(line, "kind");
            if (p != NULL) read_string(p, kind, sizeof kind);
            if (strcmp(kind, "contract") == 0)
                printf("{\"request_id\":%llu,\"contract\":\"pass\"}\n", request_id);
            else
                printf("{\"request_id\":%llu,\"card\":\"%s\"}\n", request_id, choose_card(line));
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
