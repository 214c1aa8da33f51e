'use strict';
// A remote Polignac bot for Node, written from docs/protocol.md alone ("Remote bots", "How a
// stream ends", "Timings", "Writing a client"): the tests play it through a proxy that
// breaks its connections, to check that the page is enough to build a client from.
//
//   POLIGNAC_LEAGUE_TOKEN=... node client.js --league HOST:PORT --name NAME [--version V]
//       [--decline] [--ignore-assignments] [--half-close-at N] [--proto FILE]
//
// It plays the first legal option of every request.  --decline declines every assignment,
// --ignore-assignments answers none, --half-close-at N half-closes its Play stream after
// answering the Nth request of each match (then comes back, as the page says).  It prints
// one JSON object a line on stdout for each thing that happens, for the tests to read.

const fs = require('node:fs');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
}
const flag = (name) => process.argv.includes(name);

const LEAGUE = option('--league', process.env.POLIGNAC_LEAGUE);
const NAME = option('--name', 'doc-client');
const VERSION = option('--version', '1.0');
const DECLINE = flag('--decline');
const IGNORE = flag('--ignore-assignments');
const HALF_CLOSE_AT = Number(option('--half-close-at', '0'));
const PROTO = option('--proto', path.join(__dirname, '..', '..', 'proto', 'polignac', 'v1', 'referee.proto'));

// "Writing a client", Node: each loader option matters.
const definition = protoLoader.loadSync(PROTO, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
const { LobbyService, RefereeService } = grpc.loadPackageDefinition(definition).polignac.v1;

// "Writing a client", Node: keepalive at the rate the league permits, and the receive limit.
const CHANNEL = {
  'grpc.keepalive_time_ms': 2000,
  'grpc.keepalive_timeout_ms': 3000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': 1 << 20,
};

// "When the lobby ends a stream": after these, trying again will not help.
const LOBBY_FINAL = new Set([
  grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED, grpc.status.FAILED_PRECONDITION,
  grpc.status.INVALID_ARGUMENT, grpc.status.ABORTED, grpc.status.UNIMPLEMENTED,
]);
// "Reattaching to a match": FAILED_PRECONDITION or UNAUTHENTICATED mean stop; ABORTED means
// another stream has the seat.  Anything else (UNAVAILABLE above all) is a break: come back.
const PLAY_FINAL = new Set([grpc.status.FAILED_PRECONDITION, grpc.status.UNAUTHENTICATED, grpc.status.ABORTED]);

function say(event, fields) {
  process.stdout.write(`${JSON.stringify({ event, t: Date.now() / 1000, ...fields })}\n`);
}

function bearer(token) {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

function isLoopback(address) {
  const host = address.startsWith('[') ? address.slice(1, address.indexOf(']')) : address.replace(/:\d+$/, '');
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

// "TLS": plaintext only to a loopback league without [tls]; POLIGNAC_TLS_CA names the league's CA.
function credentials(address) {
  const ca = process.env.POLIGNAC_TLS_CA;
  if (isLoopback(address) && !ca) return grpc.credentials.createInsecure();
  return grpc.credentials.createSsl(ca ? fs.readFileSync(ca) : null);
}

function decide(request) {
  if (request.kind === 'DECISION_KIND_CONTRACT') return { request_id: request.request_id, contract: request.legal_contracts[0] };
  return { request_id: request.request_id, card: request.legal_cards[0] };
}

// One seat of one match: a Play stream with the seat token, opened again after a break until
// the grace (counted from the break) runs out.  Resolves when the match is over for the seat.
function playSeat(assignment, address, graceMs) {
  const matchId = assignment.match_id;
  let current = null; // the call that holds the seat now
  let brokeAt = null;
  let delay = 50;
  let answered = 0;
  let withdrawn = false;
  const client = new RefereeService(address, credentials(address), CHANNEL);
  const done = new Promise((resolve) => {
    const open = () => {
      const call = client.Play(bearer(assignment.seat_token));
      current = call;
      let ended = false;
      call.on('data', (response) => {
        switch (response.payload) {
          case 'welcome':
            say('welcome', { match_id: matchId, seat: response.welcome.seat, again: brokeAt !== null || answered > 0 });
            brokeAt = null;
            delay = 50;
            break;
          case 'decision_request':
            call.write({ decision: decide(response.decision_request) });
            answered += 1;
            say('decision', { match_id: matchId, request_id: response.decision_request.request_id, n: answered });
            if (answered === HALF_CLOSE_AT) {
              say('half_close', { match_id: matchId });
              call.end(); // a half-close: the referee ends the stream with UNAVAILABLE, the seat is away
            }
            break;
          case 'fault_notice':
            say('fault', { match_id: matchId, fault: response.fault_notice.fault, detail: response.fault_notice.detail });
            break;
          case 'match_ended':
            ended = true;
            say('match_ended', { match_id: matchId, status: response.match_ended.status_code, places: response.match_ended.places });
            break;
          default:
            break;
        }
      });
      call.on('status', (status) => {
        if (call !== current) return; // a stream that lost the seat to a newer one
        say('stream_end', { match_id: matchId, code: grpc.status[status.code], details: status.details });
        if (status.code === grpc.status.OK || ended) {
          resolve(true);
          return;
        }
        const now = Date.now();
        if (brokeAt === null) brokeAt = now;
        // "Reattaching to a match": keep trying until the grace plus 65 s after the break was noticed here.
        if (withdrawn || PLAY_FINAL.has(status.code) || now - brokeAt > graceMs + 65000) {
          say('gave_up', { match_id: matchId, code: grpc.status[status.code], details: status.details });
          resolve(false);
          return;
        }
        setTimeout(open, delay);
        delay = Math.min(1000, delay * 2);
      });
      call.on('error', () => {}); // the 'status' event says it all
      call.write({ hello: { protocol_version: '1.2', bot_name: NAME, bot_version: VERSION } });
    };
    open();
  });
  return {
    done: done.finally(() => client.close()),
    withdraw() {
      withdrawn = true;
      if (current !== null) current.cancel();
    },
  };
}

// "The lobby, message by message": stay online, answer every assignment, one match at a time.
function stayOnline(server, apiToken) {
  const matches = new Map(); // match_id -> the seat being played
  let delay = 500;
  const join = () => {
    const client = new LobbyService(server, credentials(server), CHANNEL);
    const call = client.Lobby(bearer(apiToken));
    let graceMs = 10000;
    let over = false;
    const again = (why) => {
      if (over) return;
      over = true;
      client.close();
      say('offline', { why, retry_ms: delay });
      setTimeout(join, delay);
      delay = Math.min(15000, delay * 2);
    };
    call.on('data', (event) => {
      if (event.event === 'joined') {
        graceMs = event.joined.reattach_grace_ms;
        delay = 500;
        say('online', { label: event.joined.label, grace_ms: graceMs });
      } else if (event.event === 'assignment') {
        const a = event.assignment;
        say('assignment', { match_id: a.match_id, seat: a.seat });
        if (IGNORE) return;
        if (DECLINE) {
          call.write({ reply: { match_id: a.match_id, accept: false, reason: 'this client declines on purpose' } });
          return;
        }
        call.write({ reply: { match_id: a.match_id, accept: true } });
        const seat = playSeat(a, a.address || server, graceMs);
        matches.set(a.match_id, seat);
        seat.done.then((ok) => {
          matches.delete(a.match_id);
          say('match_over', { match_id: a.match_id, ok });
        });
      } else if (event.event === 'withdrawn') {
        say('withdrawn', { match_id: event.withdrawn.match_id, reason: event.withdrawn.reason });
        const seat = matches.get(event.withdrawn.match_id);
        if (seat !== undefined) seat.withdraw();
      } else if (event.event === 'paused') {
        say('paused', { pause_ms: event.paused.pause_ms, reason: event.paused.reason });
      }
    });
    call.on('status', (status) => {
      say('lobby_end', { code: grpc.status[status.code], details: status.details });
      if (LOBBY_FINAL.has(status.code)) {
        client.close();
        process.exit(1);
      }
      again(`${grpc.status[status.code]}: ${status.details}`);
    });
    call.on('error', () => {});
    call.write({ join: { protocol_version: '1.2', bot_name: NAME, bot_version: VERSION } });
  };
  join();
}

const token = process.env.POLIGNAC_LEAGUE_TOKEN;
if (!LEAGUE || !token) {
  process.stderr.write('usage: POLIGNAC_LEAGUE_TOKEN=... node client.js --league HOST:PORT [--name NAME] [...]\n');
  process.exit(2);
}
stayOnline(LEAGUE, token);
