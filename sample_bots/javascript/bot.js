'use strict';
// A Polignac bot in JavaScript (Node): speaks gRPC to the referee directly, loading the
// protocol at run time from proto/polignac/v1/referee.proto, which `polignac bot proto .`
// copies from the arena's proto/ (it is not committed here).  See docs/protocol.md.
//
// The strategy, the same in every starter kit (docs/languages.md), reads the game from the
// ruleset alone: pass in the auction; lead the weakest card (the strongest where tricks score
// for their taker); take a trick only when it is worth taking, with the weakest card that
// takes it; otherwise duck, shedding the most dangerous card (most points, then highest).

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const NAME = 'javascript';
const VERSION = '1.1';

const PROTO = path.join(__dirname, 'proto', 'polignac', 'v1', 'referee.proto');
if (!fs.existsSync(PROTO)) throw new Error(`${PROTO} is missing: run \`polignac bot proto .\` in this folder`);
const definition = protoLoader.loadSync(PROTO, {
  keepCase: true, // field names as in the .proto: request_id, legal_cards
  longs: String, // uint64 request_id as text, echoed back exactly
  enums: String, // 'CONTRACT_PASS'
  defaults: true,
  oneofs: true, // response.payload names the payload that is set
});
const { RefereeService } = grpc.loadPackageDefinition(definition).polignac.v1;

// How high a card ranks in trick order ("KQJAT987" lists ranks from highest to lowest).
const strength = (card, order) => order.length - order.indexOf(card[0]);
const suit = (card) => card.slice(-1);

// What the welcome's ruleset says a trick is worth.
function gameOf(ruleset) {
  return {
    order: ruleset.trick_order,
    points: ruleset.penalty_cards, // card text -> points counted against the taker
    // Points for taking a trick are added to the score as they are: good when higher is
    // better, bad when lower is (direction is empty from a referee older than 1.1: lower).
    trickGain: (ruleset.direction === 'higher' ? 1 : -1) * ruleset.trick_points,
  };
}

function chooseCard(request, game) {
  const trick = request.view.current_trick.map((p) => p.card);
  const trump = request.view.turned ? suit(request.view.turned) : ''; // empty: no trumps
  const power = (c) => strength(c, game.order) + (suit(c) === trump ? 100 : 0);
  const weakestFirst = [...request.legal_cards].sort((a, b) => power(a) - power(b)); // stable: equals keep their order
  const weakest = weakestFirst[0];
  const strongest = request.legal_cards.reduce((a, c) => (power(c) > power(a) ? c : a)); // the first of equals
  if (trick.length === 0) return game.trickGain > 0 ? strongest : weakest; // leading
  const led = suit(trick[0]);
  // The card taking the trick is the highest trump, or the highest card of the suit led.
  const standing = (c) => (suit(c) === trump ? 200 : suit(c) === led ? 100 : 0) + strength(c, game.order);
  const best = Math.max(...trick.map(standing));
  const worth = (cards) => game.trickGain - cards.reduce((sum, c) => sum + (game.points[c] || 0), 0);
  if (worth(trick) > 0) {
    const takers = weakestFirst.filter((c) => standing(c) > best && worth([...trick, c]) > 0);
    return takers.length > 0 ? takers[0] : weakest;
  }
  // Duck under the winning card, shedding the most points, then the highest card.
  const danger = (c) => 100 * (game.points[c] || 0) + strength(c, game.order);
  const ducks = request.legal_cards.filter((c) => standing(c) < best).sort((a, b) => danger(b) - danger(a));
  return ducks[0] ?? weakest;
}

function decide(request, game) {
  if (request.kind === 'DECISION_KIND_CONTRACT') return { request_id: request.request_id, contract: 'CONTRACT_PASS' };
  const debug = `legal cards: ${request.legal_cards.length}`; // your notes: beside the step in replays, for you alone
  return { request_id: request.request_id, card: chooseCard(request, game), debug };
}

// Codes after which a broken stream is opened again: a lost connection, or a referee not yet
// done with the broken stream (ALREADY_EXISTS).
const REATTACH = new Set([grpc.status.UNAVAILABLE, grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.CANCELLED, grpc.status.ALREADY_EXISTS]);
// Codes after which the lobby is not joined again: trying again will not change them.
const FINAL = new Set([grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.FAILED_PRECONDITION,
  grpc.status.INVALID_ARGUMENT, grpc.status.ABORTED, grpc.status.UNIMPLEMENTED]);

// A league's connections ping as docs/protocol.md ("Timings") says, so that a connection
// that dies without a word is found within seconds; the receive limit is the referee's.
const LEAGUE_CHANNEL = { 'grpc.keepalive_time_ms': 2000, 'grpc.keepalive_timeout_ms': 3000,
  'grpc.keepalive_permit_without_calls': 1, 'grpc.max_receive_message_length': 1 << 20 };

function bearer(token) {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

// Play one seat on a Play stream.  With graceMs > 0 (a league's seat), a stream that breaks is
// opened again with the same token and a Hello until graceMs (plus the 5 s the league may take
// to notice the break) after it broke; the repeated Welcome is ignored and a repeated request
// answered again.  Resolves true when the stream ended well (status OK), false when it failed.
// seat.cancel(), when given, stops it (a league withdrew the match).
function playSeat(address, token, credentials, graceMs, seat = {}) {
  return new Promise((resolve) => {
    let game = null;
    let brokeAt = null;
    let delay = 50;
    let withdrawn = false;
    let current = null;
    seat.cancel = () => { withdrawn = true; current?.cancel(); };
    const open = () => {
      const client = new RefereeService(address, credentials, graceMs > 0 ? LEAGUE_CHANNEL : {});
      const call = client.Play(bearer(token));
      current = call;
      let ended = false;
      call.on('data', (response) => {
        switch (response.payload) {
          case 'welcome':
            brokeAt = null;
            if (game === null) game = gameOf(response.welcome.ruleset);
            break;
          case 'decision_request':
            call.write({ decision: decide(response.decision_request, game) });
            break;
          case 'fault_notice':
            console.error(`${NAME}: fault ${response.fault_notice.fault}: ${response.fault_notice.detail}`);
            break;
          case 'match_ended':
            ended = true;
            console.error(`${NAME}: match ${response.match_ended.status}, places ${response.match_ended.places.join(' ')}`);
            break;
        }
      });
      call.on('end', () => { call.end(); client.close(); });
      call.on('status', (status) => {
        if (status.code === grpc.status.OK) resolve(true);
      });
      call.on('error', (err) => {
        client.close();
        const now = Date.now();
        if (brokeAt === null) brokeAt = now;
        if (!ended && !withdrawn && graceMs > 0 && REATTACH.has(err.code) && now - brokeAt <= graceMs + 65000) {
          console.error(`${NAME}: the match stream broke (${err.code}); opening it again`);
          setTimeout(open, delay);
          delay = Math.min(1000, delay * 2);
          return;
        }
        console.error(`${NAME}: the referee ended the stream: ${err.code} ${err.details}`);
        resolve(false);
      });
      // Protocol 1.3: the ruleset's pack, trumps, trick points, direction and general points, the turned card; debug text.
      call.write({ hello: { protocol_version: '1.3', bot_name: NAME, bot_version: VERSION } });
    };
    open();
  });
}

function isLoopback(address) {
  if (address.startsWith('unix:')) return true;
  const host = address.startsWith('[') ? address.slice(1, address.indexOf(']')) : address.replace(/:\d+$/, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

// TLS off this machine (the system's roots, or the PEM file POLIGNAC_TLS_CA names); plaintext
// on loopback unless certificates are given.
function credentialsFor(address) {
  const ca = process.env.POLIGNAC_TLS_CA;
  if (isLoopback(address) && !ca) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(ca ? fs.readFileSync(ca) : null);
}

// Stay online in a league's lobby and play each assigned match (the league offers one at a
// time), until interrupted.
function joinLeague(server, apiToken) {
  const { LobbyService } = grpc.loadPackageDefinition(definition).polignac.v1;
  let delay = 500;
  const seats = new Map(); // match_id -> the seat being played, to stop on a Withdrawn
  const join = () => {
    const credentials = credentialsFor(server);
    const client = new LobbyService(server, credentials, LEAGUE_CHANNEL);
    const call = client.Lobby(bearer(apiToken));
    let graceMs = 0;
    let over = false; // 'error' and 'end' may both come: join again once
    const again = (why) => {
      if (over) return;
      over = true;
      client.close();
      console.error(`${NAME}: offline (${why}); joining again in ${(delay / 1000).toFixed(1)} s`);
      setTimeout(join, delay);
      delay = Math.min(15000, delay * 2);
    };
    call.on('data', (event) => {
      if (event.event === 'joined') {
        graceMs = event.joined.reattach_grace_ms;
        delay = 500;
        console.error(`${NAME}: online as ${event.joined.label} at ${server}`);
      } else if (event.event === 'assignment') {
        // Accepted even when the match before has not quite closed here: a declined match is
        // called off for the whole table, and the league pauses the bot that declined it.
        const a = event.assignment;
        call.write({ reply: { match_id: a.match_id, accept: true } });
        const address = a.address || server;
        console.error(`${NAME}: playing match ${a.match_id} (seat ${a.seat})`);
        const seat = {};
        seats.set(a.match_id, seat);
        playSeat(address, a.seat_token, credentialsFor(address), graceMs, seat).then(() => seats.delete(a.match_id));
      } else if (event.event === 'withdrawn') {
        console.error(`${NAME}: match ${event.withdrawn.match_id} withdrawn before it began: ${event.withdrawn.reason}`);
        seats.get(event.withdrawn.match_id)?.cancel?.();
      } else if (event.event === 'paused') {
        console.error(`${NAME}: paused for ${event.paused.pause_ms / 1000} s: ${event.paused.reason}`);
      }
    });
    call.on('error', (err) => {
      if (FINAL.has(err.code)) {
        console.error(`${NAME}: the league refused the bot: ${err.code} ${err.details}`);
        client.close();
        process.exit(1);
      }
      again(`${err.code} ${err.details}`);
    });
    call.on('end', () => again('the league closed the lobby stream'));
    call.write({ join: { protocol_version: '1.3', bot_name: NAME, bot_version: VERSION } });
  };
  join();
}

function main() {
  // League mode: --league HOST:PORT (or POLIGNAC_LEAGUE) with the author's API token in
  // POLIGNAC_LEAGUE_TOKEN (never POLIGNAC_TOKEN: that is a seat's token, for its referee only).
  const flag = process.argv.indexOf('--league');
  const league = flag >= 0 ? process.argv[flag + 1] : process.env.POLIGNAC_LEAGUE;
  if (league) {
    const apiToken = process.env.POLIGNAC_LEAGUE_TOKEN;
    if (!apiToken) {
      console.error(`${NAME}: set POLIGNAC_LEAGUE_TOKEN to your league API token`);
      process.exit(1);
    }
    joinLeague(league, apiToken);
    return;
  }
  const address = process.env.POLIGNAC_ADDRESS;
  const token = process.env.POLIGNAC_TOKEN;
  if (!address || !token) {
    console.error(`${NAME}: POLIGNAC_ADDRESS and POLIGNAC_TOKEN must be set (the arena sets them when it starts the bot)`);
    process.exit(1);
  }
  playSeat(address, token, grpc.credentials.createInsecure(), 0).then((ok) => {
    if (!ok) process.exitCode = 1;
  });
}

if (require.main === module) main();
else module.exports = { chooseCard, gameOf }; // for trying the strategy without a referee
