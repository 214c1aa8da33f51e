// {{name}}: a Polignac bot in C++, made by `polignac bot new`.
//
// It speaks gRPC to the referee (docs/protocol.md of Polignac Arena) with the gRPC C++
// library; the protocol's classes are generated at build time from
// proto/polignac/v1/referee.proto (see the Makefile).
//
// The strategy, the same in every starter kit, reads the game from the ruleset alone: pass
// in the auction; lead the weakest card; take a trick only when it is worth taking (where
// tricks score for their taker, as in Knaves: then lead the strongest), with the weakest
// card that takes it; otherwise duck under the winning card, shedding the most dangerous
// card that does not take the trick (the most points, then the highest).  Trumps (the suit
// of the view's turned card) beat every other suit.
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "polignac/v1/referee.grpc.pb.h"

namespace pb = polignac::v1;

static const char* const kName = "{{name}}";
static const char* const kVersion = "0.1";  // as bot.toml's version

// What the bot needs from the welcome's ruleset to judge cards and tricks.
class Game {
 public:
  explicit Game(const pb::Ruleset& rules)
      : order_(rules.trick_order()), points_(rules.penalty_cards().begin(), rules.penalty_cards().end()) {
    // Trick points count against you where lower totals are better.
    gain_ = rules.direction() == "higher" ? rules.trick_points() : -rules.trick_points();
  }

  std::string ChooseCard(const pb::DecisionRequest& request) const {
    const auto& view = request.view();
    std::vector<std::string> legal(request.legal_cards().begin(), request.legal_cards().end());
    const char trump = view.turned().empty() ? 0 : Suit(view.turned());  // 0: no trumps
    auto power = [&](const std::string& c) { return Strength(c) + (Suit(c) == trump ? 100 : 0); };
    auto by_power = [&](const std::string& a, const std::string& b) { return power(a) < power(b); };
    const std::string weakest = *std::min_element(legal.begin(), legal.end(), by_power);
    if (view.current_trick().empty()) {  // leading
      return gain_ > 0 ? *std::max_element(legal.begin(), legal.end(), by_power) : weakest;
    }
    const char led = Suit(view.current_trick(0).card());
    // The highest trump takes the trick, else the highest card of the suit led.
    auto standing = [&](const std::string& c) {
      return Suit(c) == trump ? 200 + Strength(c) : Suit(c) == led ? 100 + Strength(c) : 0;
    };
    int best = 0, worth = gain_;
    for (const auto& play : view.current_trick()) {
      best = std::max(best, standing(play.card()));
      worth -= Points(play.card());
    }
    const std::string* pick = nullptr;
    for (const auto& c : legal) {
      const bool takes = standing(c) > best;
      if (worth > 0) {  // worth taking: the weakest card that takes it and keeps it worth taking
        if (takes && worth - Points(c) > 0 && (pick == nullptr || power(c) < power(*pick))) pick = &c;
      } else if (!takes && (pick == nullptr || Danger(c) > Danger(*pick))) {  // duck, shedding the worst card
        pick = &c;
      }
    }
    return pick != nullptr ? *pick : weakest;
  }

 private:
  static char Suit(const std::string& card) { return card.back(); }
  // How high a card ranks within its suit: higher takes the trick.
  int Strength(const std::string& card) const { return static_cast<int>(order_.size() - order_.find(card[0])); }
  int Points(const std::string& card) const {
    auto found = points_.find(card);
    return found == points_.end() ? 0 : found->second;
  }
  // The cards to shed first: the most points, then the highest.
  int Danger(const std::string& card) const { return 100 * Points(card) + Strength(card); }

  std::string order_;                   // ranks, highest first: "KQJAT987"
  std::map<std::string, int> points_;   // points against whoever takes the card
  int gain_ = 0;                        // what taking a trick is worth before the points of its cards
};

int main() {
  const char* address = std::getenv("POLIGNAC_ADDRESS");
  const char* token = std::getenv("POLIGNAC_TOKEN");
  if (address == nullptr || token == nullptr) {
    std::cerr << kName << ": POLIGNAC_ADDRESS and POLIGNAC_TOKEN must be set (the arena sets them)\n";
    return 1;
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(1 << 20);
  auto stub = pb::RefereeService::NewStub(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext context;
  context.AddMetadata("authorization", std::string("Bearer ") + token);
  auto stream = stub->Play(&context);

  pb::PlayRequest hello;
  hello.mutable_hello()->set_protocol_version("1.3");  // the arena's protocol version: docs/protocol.md, "Versions"
  hello.mutable_hello()->set_bot_name(kName);
  hello.mutable_hello()->set_bot_version(kVersion);
  stream->Write(hello);

  Game game{pb::Ruleset()};
  pb::PlayResponse response;
  while (stream->Read(&response)) {
    switch (response.payload_case()) {
      case pb::PlayResponse::kWelcome:
        game = Game(response.welcome().ruleset());
        break;
      case pb::PlayResponse::kDecisionRequest: {
        const auto& request = response.decision_request();
        pb::PlayRequest answer;
        answer.mutable_decision()->set_request_id(request.request_id());
        if (request.kind() == pb::DECISION_KIND_CONTRACT) {
          answer.mutable_decision()->set_contract(pb::CONTRACT_PASS);
        } else {
          answer.mutable_decision()->set_card(game.ChooseCard(request));
          // Your notes on this decision: beside the step in replays, for you alone (protocol 1.3).
          answer.mutable_decision()->set_debug("legal cards: " + std::to_string(request.legal_cards_size()));
        }
        stream->Write(answer);
        break;
      }
      case pb::PlayResponse::kFaultNotice:
        std::cerr << kName << ": fault " << pb::Fault_Name(response.fault_notice().fault()) << ": "
                  << response.fault_notice().detail() << "\n";
        break;
      default:  // match_ended is the last message: the referee then ends the stream
        break;
    }
  }
  stream->WritesDone();  // only now: closing our side before the end of the match is a forfeit
  grpc::Status status = stream->Finish();
  if (!status.ok()) {
    std::cerr << kName << ": the referee ended the stream: " << status.error_message() << "\n";
    return 1;
  }
  return 0;
}
