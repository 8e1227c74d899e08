"""Model providers: the normalized stream vocabulary, the `ModelProvider` seam, and adapters.

Layer contract: providers know nothing of ACP, sessions or retries. They turn one model call
into `StreamEvent`s or raise a classified `ModelStreamError`.
"""

from typing import TYPE_CHECKING

from acp_bridge._exports import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from acp_bridge.providers._base import ModelProvider
    from acp_bridge.providers._conversation import (
        AssistantTurn,
        AudioPart,
        ImagePart,
        MediaPart,
        Message,
        ModelRequest,
        Thought,
        ToolCall,
        ToolResult,
        ToolResults,
        ToolSpec,
        UserTurn,
    )
    from acp_bridge.providers._errors import FaultKind, ModelStreamError, Phase
    from acp_bridge.providers._events import (
        Finish,
        FinishReason,
        StreamEvent,
        StreamStart,
        TextDelta,
        ThoughtDelta,
        ToolCallComplete,
        ToolCallDelta,
        ToolCallStart,
        Usage,
    )
    from acp_bridge.providers._modalities import (
        AUDIO_TYPES,
        INPUT_KINDS,
        ModelInfo,
        audio_format,
        declared_info,
        normalized_audio_type,
        prompt_media,
        provider_takes_audio,
        takes_audio,
        takes_images,
    )
    from acp_bridge.providers._reasoning import DEFAULT_LEVEL, REASONING_LEVELS
    from acp_bridge.providers._text import (
        SurrogateJoiner,
        clean_json,
        has_non_json,
        repair_surrogates,
    )
    from acp_bridge.providers._text_parts import TextParts
    from acp_bridge.providers._vision import text_only_model
    from acp_bridge.providers._windows import DEFAULT_CONTEXT_WINDOW, known_context_window

__all__ = [
    "AUDIO_TYPES",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_LEVEL",
    "INPUT_KINDS",
    "REASONING_LEVELS",
    "AssistantTurn",
    "AudioPart",
    "FaultKind",
    "Finish",
    "FinishReason",
    "ImagePart",
    "MediaPart",
    "Message",
    "ModelInfo",
    "ModelProvider",
    "ModelRequest",
    "ModelStreamError",
    "Phase",
    "StreamEvent",
    "StreamStart",
    "SurrogateJoiner",
    "TextDelta",
    "TextParts",
    "Thought",
    "ThoughtDelta",
    "ToolCall",
    "ToolCallComplete",
    "ToolCallDelta",
    "ToolCallStart",
    "ToolResult",
    "ToolResults",
    "ToolSpec",
    "Usage",
    "UserTurn",
    "audio_format",
    "clean_json",
    "declared_info",
    "has_non_json",
    "known_context_window",
    "normalized_audio_type",
    "prompt_media",
    "provider_takes_audio",
    "repair_surrogates",
    "takes_audio",
    "takes_images",
    "text_only_model",
]

__getattr__, __dir__ = _lazy_exports(__name__)
