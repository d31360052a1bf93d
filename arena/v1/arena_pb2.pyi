from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_SETUP: _ClassVar[Phase]
    PHASE_THROW: _ClassVar[Phase]
    PHASE_ROLL: _ClassVar[Phase]
    PHASE_ACTION: _ClassVar[Phase]
    PHASE_OVER: _ClassVar[Phase]
PHASE_UNSPECIFIED: Phase
PHASE_SETUP: Phase
PHASE_THROW: Phase
PHASE_ROLL: Phase
PHASE_ACTION: Phase
PHASE_OVER: Phase

class BotMessage(_message.Message):
    __slots__ = ("hello", "action", "ready")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: ActionReply
    ready: Ready
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[ActionReply, _Mapping]] = ..., ready: _Optional[_Union[Ready, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("name", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class Ready(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ActionReply(_message.Message):
    __slots__ = ("request_id", "action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action: str
    def __init__(self, request_id: _Optional[int] = ..., action: _Optional[str] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "request", "result", "goodbye")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    request: DecisionRequest
    result: MatchResult
    goodbye: Goodbye
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., result: _Optional[_Union[MatchResult, _Mapping]] = ..., goodbye: _Optional[_Union[Goodbye, _Mapping]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("move_time_ms", "bank_ms", "unlimited")
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    UNLIMITED_FIELD_NUMBER: _ClassVar[int]
    move_time_ms: int
    bank_ms: int
    unlimited: bool
    def __init__(self, move_time_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., unlimited: _Optional[bool] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "seat", "players", "rules_version", "time_control", "protocol", "lounger_names", "track", "seating", "bot_seed", "setup_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    LOUNGER_NAMES_FIELD_NUMBER: _ClassVar[int]
    TRACK_FIELD_NUMBER: _ClassVar[int]
    SEATING_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    SETUP_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    players: int
    rules_version: str
    time_control: TimeControl
    protocol: str
    lounger_names: _containers.RepeatedScalarFieldContainer[str]
    track: _containers.RepeatedScalarFieldContainer[str]
    seating: _containers.RepeatedScalarFieldContainer[str]
    bot_seed: int
    setup_ms: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[int] = ..., rules_version: _Optional[str] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., protocol: _Optional[str] = ..., lounger_names: _Optional[_Iterable[str]] = ..., track: _Optional[_Iterable[str]] = ..., seating: _Optional[_Iterable[str]] = ..., bot_seed: _Optional[int] = ..., setup_ms: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "state", "legal_actions", "move_time_ms", "bank_ms", "events")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    state: GameState
    legal_actions: _containers.RepeatedScalarFieldContainer[str]
    move_time_ms: int
    bank_ms: int
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, request_id: _Optional[int] = ..., state: _Optional[_Union[GameState, _Mapping]] = ..., legal_actions: _Optional[_Iterable[str]] = ..., move_time_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("throw", "action")
    THROW_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    throw: str
    action: SeatAction
    def __init__(self, throw: _Optional[str] = ..., action: _Optional[_Union[SeatAction, _Mapping]] = ...) -> None: ...

class SeatAction(_message.Message):
    __slots__ = ("seat", "action", "forced", "automatic")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    FORCED_FIELD_NUMBER: _ClassVar[int]
    AUTOMATIC_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: str
    forced: bool
    automatic: bool
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[str] = ..., forced: _Optional[bool] = ..., automatic: _Optional[bool] = ...) -> None: ...

class GameState(_message.Message):
    __slots__ = ("players", "phase", "seat", "round", "turn", "throw_no", "dice_to_throw", "kept", "last_throw", "result", "lifeguard", "towel", "secured", "figure", "towels", "figures", "chips", "scores", "pool", "final_round")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    THROW_NO_FIELD_NUMBER: _ClassVar[int]
    DICE_TO_THROW_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    LAST_THROW_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    LIFEGUARD_FIELD_NUMBER: _ClassVar[int]
    TOWEL_FIELD_NUMBER: _ClassVar[int]
    SECURED_FIELD_NUMBER: _ClassVar[int]
    FIGURE_FIELD_NUMBER: _ClassVar[int]
    TOWELS_FIELD_NUMBER: _ClassVar[int]
    FIGURES_FIELD_NUMBER: _ClassVar[int]
    CHIPS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    POOL_FIELD_NUMBER: _ClassVar[int]
    FINAL_ROUND_FIELD_NUMBER: _ClassVar[int]
    players: int
    phase: Phase
    seat: int
    round: int
    turn: int
    throw_no: int
    dice_to_throw: int
    kept: _containers.RepeatedScalarFieldContainer[int]
    last_throw: _containers.RepeatedScalarFieldContainer[int]
    result: _containers.RepeatedScalarFieldContainer[int]
    lifeguard: str
    towel: _containers.RepeatedScalarFieldContainer[int]
    secured: _containers.RepeatedScalarFieldContainer[bool]
    figure: _containers.RepeatedScalarFieldContainer[int]
    towels: _containers.RepeatedScalarFieldContainer[int]
    figures: _containers.RepeatedScalarFieldContainer[int]
    chips: _containers.RepeatedScalarFieldContainer[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    pool: int
    final_round: bool
    def __init__(self, players: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., seat: _Optional[int] = ..., round: _Optional[int] = ..., turn: _Optional[int] = ..., throw_no: _Optional[int] = ..., dice_to_throw: _Optional[int] = ..., kept: _Optional[_Iterable[int]] = ..., last_throw: _Optional[_Iterable[int]] = ..., result: _Optional[_Iterable[int]] = ..., lifeguard: _Optional[str] = ..., towel: _Optional[_Iterable[int]] = ..., secured: _Optional[_Iterable[bool]] = ..., figure: _Optional[_Iterable[int]] = ..., towels: _Optional[_Iterable[int]] = ..., figures: _Optional[_Iterable[int]] = ..., chips: _Optional[_Iterable[int]] = ..., scores: _Optional[_Iterable[int]] = ..., pool: _Optional[int] = ..., final_round: _Optional[bool] = ...) -> None: ...

class SeatResult(_message.Message):
    __slots__ = ("seat", "score", "placing", "termination", "detail")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    PLACING_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    score: int
    placing: int
    termination: str
    detail: str
    def __init__(self, seat: _Optional[int] = ..., score: _Optional[int] = ..., placing: _Optional[int] = ..., termination: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("match_id", "seats")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seats: _containers.RepeatedCompositeFieldContainer[SeatResult]
    def __init__(self, match_id: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[SeatResult, _Mapping]]] = ...) -> None: ...

class Goodbye(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...
