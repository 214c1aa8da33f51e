// {{name}}: a Polignac bot in TypeScript (Node), made by `polignac bot new`.
//
// It speaks gRPC to the referee (docs/protocol.md of Polignac Arena) with @grpc/grpc-js.
// The protocol is loaded at run time from proto/polignac/v1/referee.proto, and its types
// are generated from the same file at build time (`npm run build`: src/generated/).
//
// The strategy, the same in every starter kit, reads the game from the ruleset alone: pass
// in the auction; lead the weakest card; take a trick only when it is worth taking (where
// tricks score for their taker, as in Knaves: then lead the strongest), with the weakest
// card that takes it; otherwise duck under the winning card, shedding the most dangerous
// card that does not take the trick (the most points, then the highest).  Trumps (the suit
// of the view's turned card) beat every other suit.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { ProtoGrpcType } from './generated/referee';
import type { DecisionRequest__Output as DecisionRequest } from './generated/polignac/v1/DecisionRequest';
import type { PlayRequest } from './generated/polignac/v1/PlayRequest';
import type { PlayResponse__Output as PlayResponse } from './generated/polignac/v1/PlayResponse';
import type { Ruleset__Output as Ruleset } from './generated/polignac/v1/Ruleset';

const NAME = '{{name}}';
const VERSION = '0.1';

// The same options as the generated types were made with (package.json's build script).
const PROTO = path.join(__dirname, '..', 'proto', 'polignac', 'v1', 'referee.proto');
if (!fs.existsSync(PROTO)) throw new Error(`${PROTO} is missing: run \`polignac bot proto .\` in this folder`);
const definition = protoLoader.loadSync(PROTO, {
  keepCase: true,
  longs: String, // uint64 request_id as text, echoed back exactly
  enums: String,
  defaults: true,
  oneofs: true, // response.payload names the payload that is set
});
const proto = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;

const suit = (card: string): string => card.slice(-1);

/** What the bot needs from the welcome's ruleset to judge cards and tricks. */
export class Game {
  private readonly gain: number; // what taking a trick is worth before the points of its cards

  constructor(private readonly rules: Ruleset) {
    // Trick points count against you where lower totals are better.
    this.gain = rules.direction === 'higher' ? rules.trick_points : -rules.trick_points;
  }

  /** How high a card ranks within its suit: higher takes the trick. */
  strength(card: string): number {
    return this.rules.trick_order.length - this.rules.trick_order.indexOf(card[0]);
  }

  points(card: string): number {
    return this.rules.penalty_cards[card] ?? 0;
  }

  chooseCard(request: DecisionRequest): string {
    const view = request.view!;
    const trick = view.current_trick.map((play) => play.card);
    const trump = view.turned ? suit(view.turned) : ''; // empty: no trumps
    const power = (c: string): number => this.strength(c) + (suit(c) === trump ? 100 : 0);
    const weakestFirst = [...request.legal_cards].sort((a, b) => power(a) - power(b)); // stable: equals keep their order
    const weakest = weakestFirst[0];
    const strongest = request.legal_cards.reduce((a, c) => (power(c) > power(a) ? c : a)); // the first of equals
    if (trick.length === 0) return this.gain > 0 ? strongest : weakest; // leading
    const led = suit(trick[0]);
    // The highest trump takes the trick, else the highest card of the suit led.
    const standing = (c: string): number =>
      (suit(c) === trump ? 200 : suit(c) === led ? 100 : -1000) + this.strength(c);
    const best = Math.max(...trick.map(standing));
    const worth = this.gain - trick.reduce((sum, c) => sum + this.points(c), 0);
    if (worth > 0) {
      // Worth taking: the weakest card that takes it and keeps it worth taking.
      return weakestFirst.find((c) => standing(c) > best && worth - this.points(c) > 0) ?? weakest;
    }
    // Duck under the winning card, shedding the most points, then the highest card.
    const danger = (c: string): number => 100 * this.points(c) + this.strength(c);
    const ducks = request.legal_cards.filter((c) => standing(c) < best).sort((a, b) => danger(b) - danger(a));
    return ducks[0] ?? weakest;
  }
}

function decide(request: DecisionRequest, game: Game): PlayRequest {
  if (request.kind === 'DECISION_KIND_CONTRACT') {
    return { decision: { request_id: request.request_id, contract: 'CONTRACT_PASS' } };
  }
  // debug: your notes on this decision, beside the step in replays, for you alone (protocol 1.3).
  const debug = `legal cards: ${request.legal_cards!.length}`;
  return { decision: { request_id: request.request_id, card: game.chooseCard(request), debug } };
}

function main(): void {
  const address = process.env.POLIGNAC_ADDRESS;
  const token = process.env.POLIGNAC_TOKEN;
  if (!address || !token) {
    console.error(`${NAME}: POLIGNAC_ADDRESS and POLIGNAC_TOKEN must be set (the arena sets them when it starts the bot)`);
    process.exit(1);
  }
  const client = new proto.polignac.v1.RefereeService(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 1 << 20,
  });
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  const call = client.Play(metadata);
  let game: Game | null = null;
  call.on('data', (response: PlayResponse) => {
    switch (response.payload) {
      case 'welcome':
        game = new Game(response.welcome!.ruleset!);
        break;
      case 'decision_request':
        call.write(decide(response.decision_request!, game!));
        break;
      case 'fault_notice':
        console.error(`${NAME}: fault ${response.fault_notice!.fault}: ${response.fault_notice!.detail}`);
        break;
      default: // events, match_ended, and payloads of later protocol versions
        break;
    }
  });
  // Our side closes only once the referee has ended the stream: closing it earlier is a forfeit.
  call.on('end', () => {
    call.end();
    client.close();
  });
  call.on('error', (err: grpc.ServiceError) => {
    console.error(`${NAME}: the referee ended the stream: ${err.code} ${err.details}`);
    client.close();
    process.exitCode = 1;
  });
  call.write({ hello: { protocol_version: '1.3', bot_name: NAME, bot_version: VERSION } });
}

if (require.main === module) main();
