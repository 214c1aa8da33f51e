'use strict';
// A Polignac bot in JavaScript (Node): speaks gRPC to the referee directly, loading the
// protocol from the .proto at run time (a copy of proto/polignac/v1/referee.proto, so
// this folder is self-contained).  See docs/protocol.md.
//
// Strategy, read from the ruleset and the view alone (no game is known by its name): pass
// in the auction; take a trick when it is worth taking (Knaves: a trick is worth a point,
// a Jack costs some), with the weakest card that takes it; otherwise play the strongest
// card that does not take it, or the weakest card when every card would.  Trumps (the
// suit of the view's turned card) beat every other suit.

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const NAME = 'javascript';
const VERSION = '1.1';

const definition = protoLoader.loadSync(path.join(__dirname, 'proto', 'polignac', 'v1', 'referee.proto'), {
  keepCase: true, // field names as in the .proto: request_id, legal_cards
  longs: String, // uint64 request_id as text, echoed back exactly
  enums: String, // 'CONTRACT_PASS'
  defaults: true,
  oneofs: true, // response.payload names the payload that is set
});
const { RefereeService } = grpc.loadPackageDefinition(definition).polignac.v1;

// How high a card ranks in trick order ("KQJAT987" lists ranks from highest to lowest).
function strength(card, order) {
  return order.length - order.indexOf(card[0]);
}

function suit(card) {
  return card.slice(-1);
}

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
  const weakestFirst = [...request.legal_cards].sort((a, b) => power(a) - power(b));
  const weakest = weakestFirst[0];
  if (trick.length === 0) return game.trickGain > 0 ? weakestFirst[weakestFirst.length - 1] : weakest;
  const led = suit(trick[0]);
  // The card taking the trick is the highest trump, or the highest card of the suit led.
  const standing = (c) => (suit(c) === trump ? 200 : suit(c) === led ? 100 : 0) + strength(c, game.order);
  const best = Math.max(...trick.map(standing));
  const worth = (cards) => game.trickGain - cards.reduce((sum, c) => sum + (game.points[c] || 0), 0);
  if (worth(trick) > 0) {
    const takers = weakestFirst.filter((c) => standing(c) > best && worth([...trick, c]) > 0);
    return takers.length > 0 ? takers[0] : weakest;
  }
  const ducks = weakestFirst.filter((c) => standing(c) < best);
  return ducks.length > 0 ? ducks[ducks.length - 1] : weakest;
}

function decide(request, game) {
  if (request.kind === 'DECISION_KIND_CONTRACT') {
    return { request_id: request.request_id, contract: 'CONTRACT_PASS' };
  }
  return { request_id: request.request_id, card: chooseCard(request, game) };
}

function main() {
  const address = process.env.POLIGNAC_ADDRESS;
  const token = process.env.POLIGNAC_TOKEN;
  if (!address || !token) {
    console.error(`${NAME}: POLIGNAC_ADDRESS and POLIGNAC_TOKEN must be set (the arena sets them when it starts the bot)`);
    process.exit(1);
  }
  const client = new RefereeService(address, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  const call = client.Play(metadata);
  let game = null;

  call.on('data', (response) => {
    switch (response.payload) {
      case 'welcome':
        game = gameOf(response.welcome.ruleset);
        break;
      case 'decision_request':
        call.write({ decision: decide(response.decision_request, game) });
        break;
      case 'fault_notice':
        console.error(`${NAME}: fault ${response.fault_notice.fault}: ${response.fault_notice.detail}`);
        break;
      case 'match_ended':
        console.error(`${NAME}: match ${response.match_ended.status}, places ${response.match_ended.places.join(' ')}`);
        break;
      default:
        break;
    }
  });
  call.on('end', () => {
    call.end();
    client.close();
  });
  call.on('error', (err) => {
    console.error(`${NAME}: the referee ended the stream: ${err.code} ${err.details}`);
    client.close();
    process.exitCode = 1;
  });
  // Protocol 1.1: the ruleset's pack, trumps, trick points and direction, the turned card.
  call.write({ hello: { protocol_version: '1.1', bot_name: NAME, bot_version: VERSION } });
}

if (require.main === module) {
  main();
} else {
  module.exports = { chooseCard, gameOf }; // for trying the strategy without a referee
}
