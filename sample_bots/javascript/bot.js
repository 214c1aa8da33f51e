'use strict';
// A Polignac bot in JavaScript (Node): speaks gRPC to the referee directly, loading the
// protocol from the .proto at run time (a copy of proto/polignac/v1/referee.proto, so
// this folder is self-contained).  See docs/protocol.md.
//
// Strategy: pass in the auction; play the highest legal card that does not take the
// trick, or the lowest card when every legal card would take it (or when leading).

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const NAME = 'javascript';
const VERSION = '1.0';

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

function chooseCard(request, order) {
  const legal = request.legal_cards;
  const trick = request.view.current_trick;
  const byStrength = (a, b) => strength(a, order) - strength(b, order);
  if (trick.length > 0) {
    const led = trick[0].card.slice(-1);
    const best = Math.max(...trick.filter((p) => p.card.slice(-1) === led).map((p) => strength(p.card, order)));
    const ducks = legal.filter((c) => c.slice(-1) !== led || strength(c, order) < best);
    if (ducks.length > 0) return ducks.sort(byStrength)[ducks.length - 1];
  }
  return [...legal].sort(byStrength)[0];
}

function decide(request, order) {
  if (request.kind === 'DECISION_KIND_CONTRACT') {
    return { request_id: request.request_id, contract: 'CONTRACT_PASS' };
  }
  return { request_id: request.request_id, card: chooseCard(request, order) };
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
  let order = 'KQJAT987';

  call.on('data', (response) => {
    switch (response.payload) {
      case 'welcome':
        order = response.welcome.ruleset.trick_order;
        break;
      case 'decision_request':
        call.write({ decision: decide(response.decision_request, order) });
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
  call.write({ hello: { protocol_version: '1', bot_name: NAME, bot_version: VERSION } });
}

main();
