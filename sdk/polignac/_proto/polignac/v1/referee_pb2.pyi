from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Contract(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTRACT_UNSPECIFIED: _ClassVar[Contract]
    CONTRACT_PASS: _ClassVar[Contract]
    CONTRACT_CAPOT: _ClassVar[Contract]
    CONTRACT_GENERAL: _ClassVar[Contract]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_CONTRACT: _ClassVar[DecisionKind]
    DECISION_KIND_CARD: _ClassVar[DecisionKind]

class ScoreException(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORE_EXCEPTION_UNSPECIFIED: _ClassVar[ScoreException]
    SCORE_EXCEPTION_NONE: _ClassVar[ScoreException]
    SCORE_EXCEPTION_EVERY_TRICK: _ClassVar[ScoreException]
    SCORE_EXCEPTION_BIG_TAKE: _ClassVar[ScoreException]

class Fault(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_UNSPECIFIED: _ClassVar[Fault]
    FAULT_TIMEOUT: _ClassVar[Fault]
    FAULT_ILLEGAL: _ClassVar[Fault]
    FAULT_MALFORMED: _ClassVar[Fault]
    FAULT_STALE: _ClassVar[Fault]
    FAULT_DISCONNECTED: _ClassVar[Fault]
    FAULT_CRASHED: _ClassVar[Fault]

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
    MATCH_STATUS_ABORTED: _ClassVar[MatchStatus]
    MATCH_STATUS_ERROR: _ClassVar[MatchStatus]
CONTRACT_UNSPECIFIED: Contract
CONTRACT_PASS: Contract
CONTRACT_CAPOT: Contract
CONTRACT_GENERAL: Contract
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_CONTRACT: DecisionKind
DECISION_KIND_CARD: DecisionKind
SCORE_EXCEPTION_UNSPECIFIED: ScoreException
SCORE_EXCEPTION_NONE: ScoreException
SCORE_EXCEPTION_EVERY_TRICK: ScoreException
SCORE_EXCEPTION_BIG_TAKE: ScoreException
FAULT_UNSPECIFIED: Fault
FAULT_TIMEOUT: Fault
FAULT_ILLEGAL: Fault
FAULT_MALFORMED: Fault
FAULT_STALE: Fault
FAULT_DISCONNECTED: Fault
FAULT_CRASHED: Fault
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus
MATCH_STATUS_ABORTED: MatchStatus
MATCH_STATUS_ERROR: MatchStatus

class LobbyRequest(_message.Message):
    __slots__ = ("join", "reply")
    JOIN_FIELD_NUMBER: _ClassVar[int]
    REPLY_FIELD_NUMBER: _ClassVar[int]
    join: Join
    reply: AssignmentReply
    def __init__(self, join: _Optional[_Union[Join, _Mapping]] = ..., reply: _Optional[_Union[AssignmentReply, _Mapping]] = ...) -> None: ...

class Join(_message.Message):
    __slots__ = ("protocol_version", "bot_name", "bot_version")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    protocol_version: str
    bot_name: str
    bot_version: str
    def __init__(self, protocol_version: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ...) -> None: ...

class AssignmentReply(_message.Message):
    __slots__ = ("match_id", "accept", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ACCEPT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    accept: bool
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., accept: _Optional[bool] = ..., reason: _Optional[str] = ...) -> None: ...

class LobbyEvent(_message.Message):
    __slots__ = ("joined", "assignment", "withdrawn", "paused")
    JOINED_FIELD_NUMBER: _ClassVar[int]
    ASSIGNMENT_FIELD_NUMBER: _ClassVar[int]
    WITHDRAWN_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    joined: Joined
    assignment: Assignment
    withdrawn: Withdrawn
    paused: Paused
    def __init__(self, joined: _Optional[_Union[Joined, _Mapping]] = ..., assignment: _Optional[_Union[Assignment, _Mapping]] = ..., withdrawn: _Optional[_Union[Withdrawn, _Mapping]] = ..., paused: _Optional[_Union[Paused, _Mapping]] = ...) -> None: ...

class Withdrawn(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Paused(_message.Message):
    __slots__ = ("pause_ms", "reason")
    PAUSE_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    pause_ms: int
    reason: str
    def __init__(self, pause_ms: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Joined(_message.Message):
    __slots__ = ("label", "reattach_grace_ms")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    REATTACH_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    label: str
    reattach_grace_ms: int
    def __init__(self, label: _Optional[str] = ..., reattach_grace_ms: _Optional[int] = ...) -> None: ...

class Assignment(_message.Message):
    __slots__ = ("match_id", "seat", "seat_token", "address", "rules", "time_control", "reply_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    REPLY_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    seat_token: str
    address: str
    rules: Ruleset
    time_control: TimeControl
    reply_ms: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., address: _Optional[str] = ..., rules: _Optional[_Union[Ruleset, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., reply_ms: _Optional[int] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("hello", "decision")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    decision: Decision
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("protocol_version", "bot_name", "bot_version")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    protocol_version: str
    bot_name: str
    bot_version: str
    def __init__(self, protocol_version: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("request_id", "card", "contract", "debug")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    DEBUG_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    card: str
    contract: Contract
    debug: str
    def __init__(self, request_id: _Optional[int] = ..., card: _Optional[str] = ..., contract: _Optional[_Union[Contract, str]] = ..., debug: _Optional[str] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("events", "welcome", "decision_request", "fault_notice", "match_ended")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    FAULT_NOTICE_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    welcome: Welcome
    decision_request: DecisionRequest
    fault_notice: FaultNotice
    match_ended: MatchEnded
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., welcome: _Optional[_Union[Welcome, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., fault_notice: _Optional[_Union[FaultNotice, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "seat", "ruleset", "time_control", "seat_names")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    ruleset: Ruleset
    time_control: TimeControl
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., ruleset: _Optional[_Union[Ruleset, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., seat_names: _Optional[_Iterable[str]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("move_ms", "bank_ms", "startup_ms")
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    STARTUP_MS_FIELD_NUMBER: _ClassVar[int]
    move_ms: int
    bank_ms: int
    startup_ms: int
    def __init__(self, move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., startup_ms: _Optional[int] = ...) -> None: ...

class Ruleset(_message.Message):
    __slots__ = ("name", "players", "removed_sevens", "trick_order", "penalty_cards", "first_trick_points", "last_trick_points", "capot", "general", "contract_points", "limit", "tiebreak_hands", "fault_policy", "revoke_points", "timeout_points", "max_faults", "pack", "trumps", "trick_points", "hand_score", "place_scores", "every_trick_scores", "big_take_points", "big_take_scores", "direction", "tiebreak", "faces", "general_points")
    class PenaltyCardsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    REMOVED_SEVENS_FIELD_NUMBER: _ClassVar[int]
    TRICK_ORDER_FIELD_NUMBER: _ClassVar[int]
    PENALTY_CARDS_FIELD_NUMBER: _ClassVar[int]
    FIRST_TRICK_POINTS_FIELD_NUMBER: _ClassVar[int]
    LAST_TRICK_POINTS_FIELD_NUMBER: _ClassVar[int]
    CAPOT_FIELD_NUMBER: _ClassVar[int]
    GENERAL_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_POINTS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    TIEBREAK_HANDS_FIELD_NUMBER: _ClassVar[int]
    FAULT_POLICY_FIELD_NUMBER: _ClassVar[int]
    REVOKE_POINTS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_POINTS_FIELD_NUMBER: _ClassVar[int]
    MAX_FAULTS_FIELD_NUMBER: _ClassVar[int]
    PACK_FIELD_NUMBER: _ClassVar[int]
    TRUMPS_FIELD_NUMBER: _ClassVar[int]
    TRICK_POINTS_FIELD_NUMBER: _ClassVar[int]
    HAND_SCORE_FIELD_NUMBER: _ClassVar[int]
    PLACE_SCORES_FIELD_NUMBER: _ClassVar[int]
    EVERY_TRICK_SCORES_FIELD_NUMBER: _ClassVar[int]
    BIG_TAKE_POINTS_FIELD_NUMBER: _ClassVar[int]
    BIG_TAKE_SCORES_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    TIEBREAK_FIELD_NUMBER: _ClassVar[int]
    FACES_FIELD_NUMBER: _ClassVar[int]
    GENERAL_POINTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    players: int
    removed_sevens: str
    trick_order: str
    penalty_cards: _containers.ScalarMap[str, int]
    first_trick_points: int
    last_trick_points: int
    capot: bool
    general: bool
    contract_points: int
    limit: int
    tiebreak_hands: int
    fault_policy: str
    revoke_points: int
    timeout_points: int
    max_faults: int
    pack: int
    trumps: str
    trick_points: int
    hand_score: str
    place_scores: _containers.RepeatedScalarFieldContainer[int]
    every_trick_scores: _containers.RepeatedScalarFieldContainer[int]
    big_take_points: int
    big_take_scores: _containers.RepeatedScalarFieldContainer[int]
    direction: str
    tiebreak: str
    faces: str
    general_points: int
    def __init__(self, name: _Optional[str] = ..., players: _Optional[int] = ..., removed_sevens: _Optional[str] = ..., trick_order: _Optional[str] = ..., penalty_cards: _Optional[_Mapping[str, int]] = ..., first_trick_points: _Optional[int] = ..., last_trick_points: _Optional[int] = ..., capot: _Optional[bool] = ..., general: _Optional[bool] = ..., contract_points: _Optional[int] = ..., limit: _Optional[int] = ..., tiebreak_hands: _Optional[int] = ..., fault_policy: _Optional[str] = ..., revoke_points: _Optional[int] = ..., timeout_points: _Optional[int] = ..., max_faults: _Optional[int] = ..., pack: _Optional[int] = ..., trumps: _Optional[str] = ..., trick_points: _Optional[int] = ..., hand_score: _Optional[str] = ..., place_scores: _Optional[_Iterable[int]] = ..., every_trick_scores: _Optional[_Iterable[int]] = ..., big_take_points: _Optional[int] = ..., big_take_scores: _Optional[_Iterable[int]] = ..., direction: _Optional[str] = ..., tiebreak: _Optional[str] = ..., faces: _Optional[str] = ..., general_points: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "kind", "legal_cards", "legal_contracts", "move_ms", "bank_ms", "view")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CARDS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CONTRACTS_FIELD_NUMBER: _ClassVar[int]
    MOVE_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    kind: DecisionKind
    legal_cards: _containers.RepeatedScalarFieldContainer[str]
    legal_contracts: _containers.RepeatedScalarFieldContainer[Contract]
    move_ms: int
    bank_ms: int
    view: PlayerView
    def __init__(self, request_id: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., legal_cards: _Optional[_Iterable[str]] = ..., legal_contracts: _Optional[_Iterable[_Union[Contract, str]]] = ..., move_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., view: _Optional[_Union[PlayerView, _Mapping]] = ...) -> None: ...

class PlayerView(_message.Message):
    __slots__ = ("seat", "hand_number", "dealer", "seats", "tiebreak", "hand", "auction", "contract", "declarer", "tricks", "current_trick", "totals", "penalties", "forfeited", "turned")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TIEBREAK_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    AUCTION_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    DECLARER_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TRICK_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PENALTIES_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    TURNED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand_number: int
    dealer: int
    seats: _containers.RepeatedScalarFieldContainer[int]
    tiebreak: bool
    hand: _containers.RepeatedScalarFieldContainer[str]
    auction: _containers.RepeatedCompositeFieldContainer[Declaration]
    contract: Contract
    declarer: int
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    current_trick: _containers.RepeatedCompositeFieldContainer[Play]
    totals: _containers.RepeatedScalarFieldContainer[int]
    penalties: _containers.RepeatedScalarFieldContainer[int]
    forfeited: _containers.RepeatedScalarFieldContainer[int]
    turned: str
    def __init__(self, seat: _Optional[int] = ..., hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., seats: _Optional[_Iterable[int]] = ..., tiebreak: _Optional[bool] = ..., hand: _Optional[_Iterable[str]] = ..., auction: _Optional[_Iterable[_Union[Declaration, _Mapping]]] = ..., contract: _Optional[_Union[Contract, str]] = ..., declarer: _Optional[int] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., current_trick: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., totals: _Optional[_Iterable[int]] = ..., penalties: _Optional[_Iterable[int]] = ..., forfeited: _Optional[_Iterable[int]] = ..., turned: _Optional[str] = ...) -> None: ...

class Declaration(_message.Message):
    __slots__ = ("seat", "contract")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    contract: Contract
    def __init__(self, seat: _Optional[int] = ..., contract: _Optional[_Union[Contract, str]] = ...) -> None: ...

class Play(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("plays", "winner")
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    plays: _containers.RepeatedCompositeFieldContainer[Play]
    winner: int
    def __init__(self, plays: _Optional[_Iterable[_Union[Play, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("hand_started", "declared", "card_played", "trick_won", "penalty_added", "hand_ended", "forfeited", "tiebreak_started")
    HAND_STARTED_FIELD_NUMBER: _ClassVar[int]
    DECLARED_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    PENALTY_ADDED_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    TIEBREAK_STARTED_FIELD_NUMBER: _ClassVar[int]
    hand_started: HandStarted
    declared: Declaration
    card_played: Play
    trick_won: TrickWon
    penalty_added: PenaltyAdded
    hand_ended: HandEnded
    forfeited: Forfeited
    tiebreak_started: TiebreakStarted
    def __init__(self, hand_started: _Optional[_Union[HandStarted, _Mapping]] = ..., declared: _Optional[_Union[Declaration, _Mapping]] = ..., card_played: _Optional[_Union[Play, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., penalty_added: _Optional[_Union[PenaltyAdded, _Mapping]] = ..., hand_ended: _Optional[_Union[HandEnded, _Mapping]] = ..., forfeited: _Optional[_Union[Forfeited, _Mapping]] = ..., tiebreak_started: _Optional[_Union[TiebreakStarted, _Mapping]] = ...) -> None: ...

class HandStarted(_message.Message):
    __slots__ = ("hand_number", "dealer", "seats", "hand", "tiebreak", "turned")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TIEBREAK_FIELD_NUMBER: _ClassVar[int]
    TURNED_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    dealer: int
    seats: _containers.RepeatedScalarFieldContainer[int]
    hand: _containers.RepeatedScalarFieldContainer[str]
    tiebreak: bool
    turned: str
    def __init__(self, hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., seats: _Optional[_Iterable[int]] = ..., hand: _Optional[_Iterable[str]] = ..., tiebreak: _Optional[bool] = ..., turned: _Optional[str] = ...) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("trick_number", "winner", "plays")
    TRICK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    PLAYS_FIELD_NUMBER: _ClassVar[int]
    trick_number: int
    winner: int
    plays: _containers.RepeatedCompositeFieldContainer[Play]
    def __init__(self, trick_number: _Optional[int] = ..., winner: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[Play, _Mapping]]] = ...) -> None: ...

class PenaltyAdded(_message.Message):
    __slots__ = ("seat", "points", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    points: int
    reason: str
    def __init__(self, seat: _Optional[int] = ..., points: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class HandEnded(_message.Message):
    __slots__ = ("hand_number", "contract", "declarer", "contract_made", "scores", "totals", "tiebreak", "result")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_FIELD_NUMBER: _ClassVar[int]
    DECLARER_FIELD_NUMBER: _ClassVar[int]
    CONTRACT_MADE_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    TIEBREAK_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    contract: Contract
    declarer: int
    contract_made: bool
    scores: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    tiebreak: bool
    result: HandResult
    def __init__(self, hand_number: _Optional[int] = ..., contract: _Optional[_Union[Contract, str]] = ..., declarer: _Optional[int] = ..., contract_made: _Optional[bool] = ..., scores: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., tiebreak: _Optional[bool] = ..., result: _Optional[_Union[HandResult, _Mapping]] = ...) -> None: ...

class HandResult(_message.Message):
    __slots__ = ("seats", "tricks", "card_points", "trick_points", "first_last_points", "fault_points", "exception")
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    CARD_POINTS_FIELD_NUMBER: _ClassVar[int]
    TRICK_POINTS_FIELD_NUMBER: _ClassVar[int]
    FIRST_LAST_POINTS_FIELD_NUMBER: _ClassVar[int]
    FAULT_POINTS_FIELD_NUMBER: _ClassVar[int]
    EXCEPTION_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedScalarFieldContainer[int]
    tricks: _containers.RepeatedScalarFieldContainer[int]
    card_points: _containers.RepeatedScalarFieldContainer[int]
    trick_points: _containers.RepeatedScalarFieldContainer[int]
    first_last_points: _containers.RepeatedScalarFieldContainer[int]
    fault_points: _containers.RepeatedScalarFieldContainer[int]
    exception: ScoreException
    def __init__(self, seats: _Optional[_Iterable[int]] = ..., tricks: _Optional[_Iterable[int]] = ..., card_points: _Optional[_Iterable[int]] = ..., trick_points: _Optional[_Iterable[int]] = ..., first_last_points: _Optional[_Iterable[int]] = ..., fault_points: _Optional[_Iterable[int]] = ..., exception: _Optional[_Union[ScoreException, str]] = ...) -> None: ...

class Forfeited(_message.Message):
    __slots__ = ("seat", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    reason: str
    def __init__(self, seat: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class TiebreakStarted(_message.Message):
    __slots__ = ("seats", "round")
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedScalarFieldContainer[int]
    round: int
    def __init__(self, seats: _Optional[_Iterable[int]] = ..., round: _Optional[int] = ...) -> None: ...

class FaultNotice(_message.Message):
    __slots__ = ("request_id", "fault", "detail", "fallback", "points", "faults", "forfeited")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    fault: Fault
    detail: str
    fallback: str
    points: int
    faults: int
    forfeited: bool
    def __init__(self, request_id: _Optional[int] = ..., fault: _Optional[_Union[Fault, str]] = ..., detail: _Optional[str] = ..., fallback: _Optional[str] = ..., points: _Optional[int] = ..., faults: _Optional[int] = ..., forfeited: _Optional[bool] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("places", "totals", "status", "status_code")
    PLACES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    status: str
    status_code: MatchStatus
    def __init__(self, places: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., status: _Optional[str] = ..., status_code: _Optional[_Union[MatchStatus, str]] = ...) -> None: ...
